"""The shipped demo bundle answers every query the screens make: walking every step in
``cockpit --demo`` (in Chinese and in English) leaves no panel or view with a "not in this
bundle" failure, and no text on screen says a source or a call was not recorded in the
evidence bundle (Kubernetes, the GPU view, the metrics history are all in it).

When this fails after a change to a screen's queries, rebuild the bundle with
``make demo-bundle``."""

from __future__ import annotations

import json

import pytest
from textual.widgets import DataTable, Static

from cockpit.app import CockpitApp
from cockpit.cli import main
from cockpit.i18n import t
from cockpit.ui.metrics_common import MetricsView
from cockpit.ui.panel import Panel
from demo_ctx import demo_ctx


def not_recorded_phrases(lang: str) -> list[str]:
    """The fixed parts of the catalogue's "not recorded in the evidence bundle {bundle}"
    in ``lang``, and the replay's own "not in this bundle" (what a missing call says)."""
    marker = "\x00"
    parts = t("source.missing.bundle", lang, bundle=marker).split(marker)
    return [p.strip() for p in parts if len(p.strip()) >= 3] + ["not in this bundle"]


def screen_text(screen) -> str:  # type: ignore[no-untyped-def]
    """Every text the screen shows: static texts and every cell of every table."""
    parts: list[str] = []
    for widget in screen.query("*"):
        if isinstance(widget, DataTable):
            for row in range(widget.row_count):
                parts.append(" ".join(str(c) for c in widget.get_row_at(row)))
        elif isinstance(widget, Static):
            parts.append(str(widget.content))
    return "\n".join(parts)


def test_the_phrases_are_those_a_missing_source_shows():
    assert not_recorded_phrases("en")[0] == "not recorded in the evidence bundle"
    assert not_recorded_phrases("zh")[0].startswith("证据包")
    assert "没有记录" in not_recorded_phrases("zh")[1]


async def unanswered(app: CockpitApp, lang: str) -> list[str]:
    """Walk steps A to I of ``app``; every panel or view that failed and every line on
    screen that says something was not recorded, as ``"<step> …"``."""
    phrases = not_recorded_phrases(lang)
    failures: list[str] = []
    async with app.run_test(size=(160, 60)) as pilot:
        for step in "ABCDEFGHI":
            app.goto(step)
            for _ in range(4):
                await app.workers.wait_for_complete()
                await pilot.pause()
            for widget in [*app.screen.query(Panel), *app.screen.query(MetricsView)]:
                failure = getattr(widget, "failure", None)
                if failure is not None:
                    failures.append(
                        f"{step} {type(widget).__name__}: {failure.kind.value}: {failure.message[:200]}"
                    )
            for line in screen_text(app.screen).splitlines():
                if any(p in line for p in phrases):
                    failures.append(f"{step} says: {line.strip()[:200]}")
    return failures


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_every_step_of_the_demo_is_answered_by_the_bundle(tmp_path, lang):
    ctx = demo_ctx(tmp_path, lang=lang)
    assert await unanswered(CockpitApp(ctx=ctx, start_step="A"), lang) == []


def test_changes_and_pending_of_the_demo_answer_from_the_bundle(capsys):
    assert main(["--demo", "--lang", "en", "changes", "--json"]) == 0
    out = capsys.readouterr().out
    changes = json.loads(out)
    assert changes["sources"] == ["kubernetes", "metrics"] and changes["notes"] == []
    kinds = {(i["kind"], i["in_window"]) for i in changes["items"]}
    # the release of the day before (with its ConfigMap), the alerts and the probe warnings
    assert {("rollout", False), ("config", False), ("alert", True), ("event", True)} <= kinds
    assert main(["--demo", "--lang", "en", "pending", "--json"]) == 0
    pending_out = capsys.readouterr().out
    pending = json.loads(pending_out)
    # the story's pods are all scheduled: nothing Pending, and nothing failed to read
    assert pending == {"scope": "llm-serving", "analyses": [], "failures": []}
    assert not any(p in out + pending_out for p in not_recorded_phrases("en"))
