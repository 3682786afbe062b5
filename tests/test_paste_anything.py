"""F6 pins anything: cockpit's own outputs (gpus, analyze, changes, pending) are read into
their facts, in both languages; text nothing recognises is pinned as a note with the time;
every press says what it did."""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime
from pathlib import Path

import pytest
from textual.worker import WorkerCancelled

from cockpit.analysis.cockpit_output import read_cockpit_output
from cockpit.app import CockpitApp
from cockpit.cli import main
from cockpit.incident import TimelineKind
from testkit import make_ctx


def output_of(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    main(list(argv))
    return capsys.readouterr().out


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_gpus_and_analyze_output_are_read(capsys, lang):
    gpus = read_cockpit_output(output_of(capsys, "--demo", "--lang", lang, "gpus", "--once"))
    assert gpus is not None and gpus.command == "gpus"
    warn = {"en": "WARN", "zh": "注意"}[lang]
    assert [(f.subject, f.value) for f in gpus.facts] == [
        (f"GPU {i} (gpu-node-a1)", warn) for i in range(4)
    ]
    analyze = read_cockpit_output(output_of(capsys, "--demo", "--lang", lang, "analyze"))
    assert analyze is not None and analyze.command == "analyze"
    layers = {f.subject: f.value for f in analyze.facts}
    serving = {"en": "Serving", "zh": "服务层"}[lang]
    assert layers[serving] == {"en": "anomalous", "zh": "异常"}[lang]
    assert len(layers) == 5


def test_pending_and_changes_output_are_read(kubeconfig: Path, capsys, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    pending = read_cockpit_output(
        output_of(capsys, "pending", "gpu-test", "--context", "pend-01", "--lang", "zh")
    )
    assert pending is not None and pending.command == "pending"
    assert pending.facts[0].subject == "llm/gpu-test"
    assert pending.facts[0].value == "1 个节点 GPU 不足（nvidia.com/gpu）"
    changes = read_cockpit_output(
        output_of(
            capsys,
            "changes",
            "--context",
            "rollout",
            "--until",
            "2026-03-10T12:30:00Z",
            "--lang",
            "en",
        )
    )
    assert changes is not None and changes.command == "changes"
    assert any("[rollout]" in f.subject for f in changes.facts)


def test_other_text_is_not_taken_for_cockpit_output():
    assert read_cockpit_output("GPU 0 looks hot, util 98%\nnode gpu-7") is None
    assert read_cockpit_output("") is None


async def paste(pilot, app, text, button):
    screen = app.screen
    screen.query_one("#paste-text").text = text
    screen.query_one(f"#{button}").press()
    await pilot.pause()
    # A press starts the explain worker (one per group: a newer one cancels an older one
    # still running on a slow machine); wait for what is running, cancelled ones included.
    for worker in list(app.workers):
        with contextlib.suppress(WorkerCancelled):
            await worker.wait()
    await pilot.pause()
    return str(screen.query_one("#paste-status").render())


@pytest.fixture
def gpus_text(capsys: pytest.CaptureFixture[str]) -> str:
    """What ``cockpit gpus --once`` prints on the demo (run outside the test's loop)."""
    return output_of(capsys, "--demo", "--lang", "en", "gpus", "--once")


async def test_f6_pins_a_note_cockpit_output_and_says_so(tmp_path, gpus_text):
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="C")
    async with app.run_test(size=(140, 48)) as pilot:
        await pilot.pause()
        app.screen.set_focus(None)
        await pilot.press("f6")
        await pilot.pause()
        # Pin on nothing says so instead of doing nothing.
        assert "Paste some text" in await paste(pilot, app, "  ", "paste-pin")
        assert ctx.session.incident.evidence == []
        # Text nothing recognises: pinned as a note, stamped, on the timeline. Pin
        # explains it first when it was not explained.
        said = await paste(
            pilot, app, "checked the LB dashboard: nothing odd\nsecond line", "paste-pin"
        )
        assert "Pinned as a note" in said
        (note,) = ctx.session.incident.evidence
        assert note.label == "Pasted note" and note.value == "checked the LB dashboard: nothing odd"
        # stamped when logged: the incident clock running on from the instant
        # investigated, so it sorts after what was logged before it
        assert note.note.endswith("second line")
        assert ctx.clock.now() <= note.at <= ctx.clock.logged()
        assert note.step == "C"
        assert any(e.kind is TimelineKind.EVIDENCE for e in ctx.session.incident.timeline)
        # A text carrying its own time is placed at that time, the pin time kept apart.
        said = await paste(
            pilot, app, "2026-11-29T13:20:11Z tenant acme says answers are slow", "paste-pin"
        )
        own_time = datetime(2026, 11, 29, 13, 20, 11, tzinfo=UTC)
        assert "at the time the text carries (2026-11-29 13:20:11Z)" in said
        stamped = ctx.session.incident.evidence[-1]
        assert stamped.source == "user" and stamped.at == own_time != ctx.clock.now()
        assert stamped.pinned_at != own_time
        assert any(
            e.at == own_time and "tenant acme" in e.text
            for e in ctx.session.incident.timeline
            if e.kind is TimelineKind.EVIDENCE
        )
        # cockpit's own output: explained as such, each fact pinned.
        await paste(pilot, app, gpus_text, "paste-explain")
        assert "output of cockpit gpus" in str(app.screen.query_one("#paste-output").render())
        said = await paste(pilot, app, gpus_text, "paste-pin")
        assert said == "Pinned 4 facts of cockpit gpus."
    facts = [e for e in ctx.session.incident.evidence if e.source == "cockpit gpus"]
    assert [(e.label, e.value) for e in facts] == [
        (f"cockpit gpus: GPU {i} (gpu-node-a1)", "WARN") for i in range(4)
    ]
    assert facts[0].note.startswith("«0    H100")


async def test_f6_pins_a_finding_at_its_line_time_labelled_in_both_languages(tmp_path):
    """A pasted Xid line written at 20:15:02 is evidence of 20:15:02, not of the moment it
    was pinned; its label follows the language the incident is read in; and step G offers
    it for linking as soon as F6 closes."""
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="G")
    line = "2026-11-29T20:15:02Z gpu-node-b kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."
    async with app.run_test(size=(140, 48)) as pilot:
        await pilot.pause()
        app.screen.set_focus(None)
        await pilot.press("f6")
        await pilot.pause()
        await paste(pilot, app, line, "paste-pin")
        await pilot.press("escape")
        await pilot.pause()
        (pinned,) = ctx.session.incident.evidence
        assert pinned.at == datetime(2026, 11, 29, 20, 15, 2, tzinfo=UTC) != ctx.clock.now()
        assert pinned.label.startswith("Pasted evidence: ")
        assert pinned.label_i18n["zh"].startswith("粘贴的证据")
        assert pinned.label_i18n["en"] == pinned.label
        offered = app.screen.query_one("#hyp-evidence")._options
        assert any(value == pinned.id for _, value in offered)


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_f6_pins_the_lines_no_finding_rests_on_as_a_note_beside_the_findings(tmp_path, lang):
    """A dmesg excerpt with the responder's own line at its end: the Xid is pinned as a
    finding and the own line as a note (nothing pasted is dropped), and the notice says
    both; a paste every line of which a finding rests on pins no note."""
    from cockpit.i18n import t
    from cockpit.timeparse import fmt_time

    ctx = make_ctx(tmp_path, lang=lang)
    app = CockpitApp(ctx=ctx, start_step="G")
    xid = "2026-11-29T13:40:00Z gpu-node-b kernel: NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus."
    own = "node b GPU 0 gone at 13:40, pod lfdea crashloop"
    async with app.run_test(size=(140, 48)) as pilot:
        await pilot.pause()
        app.screen.set_focus(None)
        await pilot.press("f6")
        await pilot.pause()
        said = await paste(pilot, app, f"{xid}\n{own}", "paste-pin")
        notes = [e for e in ctx.session.incident.evidence if e.source == "user"]
        findings = [e for e in ctx.session.incident.evidence if e.source == "explain"]
        assert len(findings) == 1 and len(notes) == 1
        assert notes[0].note == own and notes[0].value == own
        at = fmt_time(notes[0].at)
        assert said == t("paste.pinned_and_note", lang, n=1, lines=1, at=at), said
        await pilot.press("escape")
        await pilot.pause()
    ctx2 = make_ctx(tmp_path / "two", lang=lang)
    app2 = CockpitApp(ctx=ctx2, start_step="G")
    async with app2.run_test(size=(140, 48)) as pilot:
        await pilot.pause()
        app2.screen.set_focus(None)
        await pilot.press("f6")
        await pilot.pause()
        await paste(pilot, app2, xid, "paste-pin")
        assert [e.source for e in ctx2.session.incident.evidence] == ["explain"]
