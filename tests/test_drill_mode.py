"""``cockpit drill NAME`` opens the drill's bundle as a replay marked as a drill: the
clock frozen at the incident's "now", the mode in the title bar, in ``cockpit list`` and in
both exports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from drill_ctx import drill_ctx

from cockpit.app import CockpitApp
from cockpit.cli import main
from cockpit.drills.catalogue import catalogue, get_drill
from cockpit.export import render
from cockpit.incident import Mode
from cockpit.sources.bundle import open_replay


@pytest.mark.parametrize("name", list(catalogue()))
def test_a_drill_opens_as_a_replay_frozen_at_its_now(tmp_path: Path, name: str) -> None:
    ctx = drill_ctx(tmp_path, name, "en")
    inc = ctx.session.incident
    assert inc.drill is not None and inc.drill.id == name
    assert inc.mode is Mode.REPLAY and inc.bundle == str(get_drill(name).bundle.resolve())
    assert ctx.clock.now() == open_replay(get_drill(name).bundle).meta.recorded_at
    assert inc.title == get_drill(name).key.title.en


@pytest.mark.parametrize(("lang", "mark"), [("en", "[drill]"), ("zh", "[演练]")])
async def test_the_title_bar_says_drill(tmp_path: Path, lang: str, mark: str) -> None:
    ctx = drill_ctx(tmp_path, "worked_example", lang)
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        bar = str(app.screen.query_one("#title-bar").render())
        assert bar.startswith(mark), bar


def test_list_and_exports_mark_the_drill(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ctx = drill_ctx(tmp_path, "worked_example", "en")
    ctx.session.flush()
    ctx.session.store.release_all()
    assert main(["list", "--json", "--state-dir", str(tmp_path)]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["drill"] for r in rows] == ["worked_example"]
    for lang, mark in (("en", "[drill]"), ("zh", "[演练]")):
        assert main(["list", "--lang", lang, "--state-dir", str(tmp_path)]) == 0
        assert mark in capsys.readouterr().out
    inc = ctx.session.incident
    assert json.loads(render(inc, "en", "json"))["record"]["drill"] == "worked_example"
    assert "Drill (worked_example)" in render(inc, "en", "md")
    assert "演练（worked_example）" in render(inc, "zh", "md")
    inc.drill = None
    assert json.loads(render(inc, "en", "json"))["record"]["drill"] is None
    assert "worked_example" not in render(inc, "en", "md")


def test_an_unknown_drill_or_no_terminal_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["drill", "nope", "--lang", "en"]) == 2
    assert "worked_example" in capsys.readouterr().err
    assert main(["drill", "worked_example", "--lang", "en"]) == 2  # no terminal under pytest
    assert "terminal" in capsys.readouterr().err


def test_the_answer_is_kept_in_the_record_and_refused_outside_a_drill(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from cockpit.session import RuleViolation

    ctx = drill_ctx(tmp_path, "worked_example", "en")
    s = ctx.session
    with pytest.raises(RuleViolation, match="no part"):
        s.submit_drill_answer("G")
    s.set_drill_answer("G", layer="runtime", scope="shared")
    s.set_drill_answer("I", impact_start=datetime(2026, 11, 27, 12, 10, tzinfo=UTC))
    with pytest.raises(KeyError):
        s.set_drill_answer("G", confidence="high")
    with pytest.raises(ValueError):
        s.set_drill_answer("G", scope="everywhere")
    s.submit_drill_answer("I")
    s.flush()
    stored = s.store.load(s.incident.id).drill
    assert stored is not None and stored.answer.layer == "runtime"
    assert stored.answer.scope == "shared" and stored.answer.step == "I"
    assert stored.answer.submitted_at is not None
    s.incident.drill = None
    with pytest.raises(RuleViolation):
        s.set_drill_answer("G", layer="runtime")


def test_drill_name_hands_the_tui_the_drills_bundle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    import cockpit.tui

    seen: list[object] = []
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setattr(cockpit.tui, "run_tui", lambda args: seen.append(args) or 0)
    assert main(["drill", "worked_example", "--state-dir", str(tmp_path)]) == 0
    (args,) = seen
    assert args.replay == str(get_drill("worked_example").bundle)  # type: ignore[attr-defined]
    assert args.drill == "worked_example"  # type: ignore[attr-defined]
    assert not args.demo and args.resume is None and args.at is None  # type: ignore[attr-defined]


async def test_f2_states_no_conclusion_in_a_drill(tmp_path: Path) -> None:
    from cockpit.collect import steps
    from cockpit.collect.cache import screen_window
    from cockpit.ui.protect import current_cause, current_suspect
    from demo_ctx import demo_ctx

    demo = demo_ctx(tmp_path / "demo", "en")
    likely = await steps.likely(demo, screen_window(demo))
    assert current_cause(demo) == likely.cause != "unknown"
    drill = drill_ctx(tmp_path / "drill", "worked_example", "en")
    await steps.likely(drill, screen_window(drill))
    assert current_cause(drill) == "" and current_suspect(drill) is None


def test_resume_reopens_a_drill_on_the_bundle_the_package_ships(tmp_path: Path) -> None:
    import argparse

    from cockpit.wiring import build_context

    ctx = drill_ctx(tmp_path, "worked_example", "en")
    ctx.session.set_drill_answer("G", layer="runtime")
    ctx.session.incident.bundle = "/gone/bundle.jsonl.gz"  # the package moved since
    ctx.session.save()
    ctx.session.store.release_all()
    args = argparse.Namespace(resume=ctx.session.incident.id, state_dir=str(tmp_path), lang="en")
    again = build_context(args)
    assert again.drill and again.session.incident.drill.answer.layer == "runtime"
    assert again.bundle_meta is not None
    assert again.clock.now() == open_replay(get_drill("worked_example").bundle).meta.recorded_at
