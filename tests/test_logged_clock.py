"""One clock per kind of timestamp: with the clock frozen (``--at``, replay, demo) what the
responder logs (an experiment, an F2 action, a timeline note) is stamped on the incident
clock running on with the wall time elapsed, so entries logged minutes apart get
different, ordered times, and the export names the clock of each kind."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import cockpit.clock
from cockpit.app import CockpitApp
from cockpit.export import build_document, render_markdown
from testkit import make_ctx


class Elapsed:
    """The wall time elapsed, moved by the test (the responder working for minutes)."""

    def __init__(self) -> None:
        self.s = 1000.0

    def __call__(self) -> float:
        return self.s


@pytest.fixture
def elapsed(monkeypatch: pytest.MonkeyPatch) -> Elapsed:
    e = Elapsed()
    monkeypatch.setattr(cockpit.clock, "monotonic", e)
    return e


async def _press(pilot, screen, button_id: str) -> None:
    screen.query_one(f"#{button_id}").press()
    await pilot.pause()


async def test_experiments_logged_minutes_apart_are_minutes_apart(
    tmp_path: Path, elapsed: Elapsed
) -> None:
    ctx = make_ctx(tmp_path, lang="en")
    frozen = ctx.clock.now()
    app = CockpitApp(ctx=ctx, start_step="H")
    async with app.run_test(size=(120, 48)) as pilot:
        await pilot.pause()
        screen = app.screen
        elapsed.s += 60
        screen.query_one("#exp-variable").value = "max_num_seqs: 256 → 128"
        screen.query_one("#exp-sli").value = "P99 latency"
        screen.query_one("#exp-before").value = "620 ms"
        await _press(pilot, screen, "exp-add")
        screen.query_one("#exp-after").value = "400 ms"
        await _press(pilot, screen, "exp-record")
        elapsed.s += 7 * 60  # seven minutes later, the next experiment
        screen.query_one("#exp-variable").value = "max_num_batched_tokens: 8192 → 4096"
        screen.query_one("#exp-sli").value = "P99 latency"
        screen.query_one("#exp-before").value = "400 ms"
        await _press(pilot, screen, "exp-add")
    first, second = ctx.session.incident.experiments
    assert first.at == frozen + timedelta(minutes=1)
    assert second.at - first.at == timedelta(minutes=7)
    # evidence read meanwhile stays on the frozen incident clock
    assert ctx.clock.now() == frozen
    rows = [e for e in ctx.session.incident.timeline if e.kind == "experiment"]
    assert [e.at for e in rows] == [first.at, second.at]


async def test_timeline_notes_logged_minutes_apart_are_in_order(
    tmp_path: Path, elapsed: Elapsed
) -> None:
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(120, 48)) as pilot:
        await pilot.pause()
        screen = app.screen
        for text in ("paged by on-call", "rolled back vllm-qwen"):
            elapsed.s += 3 * 60
            screen.query_one("#tl-text").value = text
            await _press(pilot, screen, "tl-add")
    notes = [e for e in ctx.session.incident.timeline if e.kind == "note"]
    assert [e.text for e in notes] == ["paged by on-call", "rolled back vllm-qwen"]
    assert notes[1].at - notes[0].at == timedelta(minutes=3)


def test_the_export_names_the_clock_of_each_kind_of_timestamp(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path, lang="en")
    at = datetime(2026, 11, 29, 15, 0, tzinfo=UTC)
    ctx.session.incident.opened_with.at = at
    doc = build_document(ctx.session.incident, "en")
    assert doc.record.clocks == {
        "evidence": "incident",
        "logged": "incident_running",
        "record": "wall",
    }
    for lang in ("en", "zh"):
        md = render_markdown(ctx.session.incident, lang)
        assert "2026-11-29T15:00:00Z" in md
    md = render_markdown(ctx.session.incident, "en")
    assert "Clock of experiments, F2 actions and timeline notes" in md
    assert "the incident clock running on from 2026-11-29T15:00:00Z" in md
    assert "Clock of created, updated and corrections: the wall clock" in md
    ctx.session.incident.opened_with.at = None
    live = build_document(ctx.session.incident, "en")
    assert set(live.record.clocks.values()) == {"wall"}


def test_entries_logged_after_resume_come_after_the_earlier_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, elapsed: Elapsed
) -> None:
    from cockpit.wiring import build_context

    for key in list(__import__("os").environ):
        if key.startswith("COCKPIT_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("COCKPIT_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("COCKPIT_STATE_DIR", str(tmp_path / "state"))
    first = build_context(argparse.Namespace(lang="en", at="2026-11-29T15:00"))
    elapsed.s += 20 * 60
    first.session.add_timeline(first.clock.logged(), "scaled out")
    first.session.flush()
    first.session.store.release_all()
    resumed = build_context(argparse.Namespace(resume="latest"))
    assert resumed.clock.now() == datetime(2026, 11, 29, 15, 0, tzinfo=UTC)
    resumed.session.add_timeline(resumed.clock.logged(), "P99 back under the SLO")
    a, b = [e for e in resumed.session.incident.timeline if e.kind == "note"]
    assert (a.text, b.text) == ("scaled out", "P99 back under the SLO")
    assert b.at > a.at
