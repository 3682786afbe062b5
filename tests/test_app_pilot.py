"""The app driven by Pilot: navigation, the stepper's path, protect-first, the G/H rules."""

from __future__ import annotations

import pytest

from cockpit.app import CockpitApp
from cockpit.incident import Mode, TimelineKind
from cockpit.store import IncidentStore
from testkit import make_ctx


async def test_keys_walk_and_record_the_path(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.current_step() == "A"
        app.screen.set_focus(None)
        await pilot.press("alt+right")
        await pilot.pause()
        assert app.current_step() == "B"
        await pilot.press("ctrl+g", "7", "enter")
        await pilot.pause()
        assert app.current_step() == "G"
        await pilot.press("f3")  # G's predecessor depends on the branch; none chosen -> E
        await pilot.pause()
        assert app.current_step() == "E"
    ctx.session.flush()
    stored = IncidentStore(tmp_path).load(ctx.session.incident.id)
    assert stored.path == ["A", "B", "G", "E"]


async def test_protect_first_lands_on_the_timeline(tmp_path):
    ctx = make_ctx(tmp_path, lang="zh")
    app = CockpitApp(ctx=ctx)
    async with app.run_test(size=(120, 48)) as pilot:
        await pilot.pause()
        await pilot.press("f2")
        await pilot.pause()
        assert type(app.screen).__name__ == "ProtectScreen"
        app.screen.query_one("#copy-rollback").press()
        await pilot.pause()
        assert "kubectl -n llm rollout undo deployment/vllm-qwen" in app.clipboard
        app.screen.query_one("#chosen-rollback").press()
        await pilot.pause()
    kinds = [e.kind for e in ctx.session.incident.timeline]
    assert TimelineKind.MITIGATION in kinds
    entry = next(e for e in ctx.session.incident.timeline if e.kind is TimelineKind.MITIGATION)
    assert "rollout undo" in entry.text and "回滚" in entry.text
    assert ctx.session.incident.mitigation == "回滚"
    # the Mitigate time is the moment the timeline says, set once
    assert ctx.session.incident.times.mitigate == entry.at
    # The option taken is cockpit's words: each export says it in its own language.
    from cockpit.export import render

    en = render(ctx.session.incident, lang="en", fmt="md")
    zh = render(ctx.session.incident, lang="zh", fmt="md")
    assert "回滚" not in en and "Mitigation: Roll back" in en, en
    assert "缓解：回滚" in zh
    # Each command on a line of its own, in a code block, never run into the option.
    commands = en.split("rollout undo", 1)[0].rsplit("\n", 1)[1]
    assert commands.strip() == "kubectl -n llm", en
    ctx.session.set_text("mitigation", "回滚到 v41")  # typed: it stays as typed
    assert "回滚到 v41" in render(ctx.session.incident, lang="en", fmt="md")


async def test_hypothesis_and_experiment_rules_in_the_ui(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="G")
    async with app.run_test(size=(120, 48)) as pilot:
        await pilot.pause()
        screen = app.screen
        screen.query_one("#hyp-statement").value = "KV cache fragmentation"
        screen.query_one("#hyp-add").press()
        await pilot.pause()
        assert "refute" in str(screen.query_one("#hyp-error").render())
        assert ctx.session.incident.hypotheses == []
        screen.query_one("#hyp-falsifier").value = "fragmentation falls but P99 stays"
        screen.query_one("#hyp-add").press()
        await pilot.pause()
        assert len(ctx.session.incident.hypotheses) == 1

        app.goto("H")
        await pilot.pause()
        screen = app.screen
        screen.query_one("#exp-variable").value = "max_num_seqs and gpu_memory_utilization"
        screen.query_one("#exp-add").press()
        await pilot.pause()
        assert "one variable" in str(screen.query_one("#exp-error").render())
        assert ctx.session.incident.experiments == []
        screen.query_one("#exp-variable").value = "max_num_seqs"
        screen.query_one("#exp-before").value = "620 ms"
        screen.query_one("#exp-add").press()
        await pilot.pause()
        screen.query_one("#exp-after").value = "190 ms"
        screen.query_one("#exp-record").press()
        await pilot.pause()
    exp = ctx.session.incident.experiments[0]
    assert (exp.variable, exp.before, exp.after) == ("max_num_seqs", "620 ms", "190 ms")


async def test_times_are_validated_in_place(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx)
    async with app.run_test(size=(120, 48)) as pilot:
        await pilot.pause()
        screen = app.screen
        start = screen.query_one("#time-start")
        start.value = "20:40"
        await start.action_submit()
        detect = screen.query_one("#time-detect")
        detect.value = "20:30"
        await detect.action_submit()
        await pilot.pause()
        text = str(screen.query_one("#times-problems").render())
        assert "Detect is before Start" in text
        detect.value = "nonsense"
        await detect.action_submit()
        await pilot.pause()
        problems = str(screen.query_one("#times-problems").render())
        assert "Detect: cannot read the time “nonsense”, not saved" in problems
        assert detect.has_class("-invalid")
        # Leaving the field keeps the error on screen (it is not saved).
        start.focus()
        await pilot.pause()
        assert "nonsense" in str(screen.query_one("#times-problems").render())
    times = ctx.session.incident.times
    assert times.start.hour == 20 and times.start.minute == 40
    assert times.detect.minute == 30  # kept, so the user can fix the other one


async def test_a_recovery_time_the_recovery_check_contradicts_is_kept_with_a_warning(tmp_path):
    """Recover entered although I's recovery check (run after it) says not recovered: the
    time is kept (a warning, not a block), the field says why, and the export says
    "recovered at … (recovery check: not recovered)"."""
    from datetime import UTC, datetime

    from cockpit.export import render
    from cockpit.incident import RecoveryCheck

    ctx = make_ctx(tmp_path, lang="en")
    ctx.session.incident.recovery = RecoveryCheck(
        checked_at=datetime(2026, 11, 29, 20, 55, tzinfo=UTC), recovered=False
    )
    app = CockpitApp(ctx=ctx)
    async with app.run_test(size=(120, 48)) as pilot:
        await pilot.pause()
        screen = app.screen
        recover = screen.query_one("#time-recover")
        recover.value = "20:40"
        await recover.action_submit()
        await pilot.pause()
        text = str(screen.query_one("#times-problems").render())
        assert "recovery check (2026-11-29 20:55:00Z) says not recovered yet" in text
    assert ctx.session.incident.times.recover == datetime(2026, 11, 29, 20, 40, tzinfo=UTC)
    md = render(ctx.session.incident, lang="en", fmt="md")
    line = next(x for x in md.splitlines() if "2026-11-29T20:40:00Z" in x and "Recover" in x)
    assert "(recovery check: not recovered)" in line
    assert "恢复检查：未恢复" in render(ctx.session.incident, lang="zh", fmt="md")
    # A check that found it recovered, or one run before that time, is no contradiction.
    ctx.session.incident.recovery = RecoveryCheck(
        checked_at=datetime(2026, 11, 29, 20, 30, tzinfo=UTC), recovered=False
    )
    assert "recovery check:" not in render(ctx.session.incident, lang="en", fmt="md")


async def test_language_switch_keeps_the_incident(tmp_path):
    ctx = make_ctx(tmp_path, lang="zh")
    ctx.session.set_text("impact", "全部租户")
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        # Typed but not added yet: it survives the rebuild of the screens.
        app.screen.query_one("#err-text").value = "draft error not added"
        app.action_switch_language()
        await pilot.pause()
        assert ctx.lang == "en" and app.current_step() == "A"
        assert "Impact" in str(app.screen.query_one("#step-title").render())
        assert app.screen.query_one("#err-text").value == "draft error not added"
    assert ctx.session.incident.impact == "全部租户"


OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
    "capacity of 79.15 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this process "
    "has 78.12 GiB memory in use. Of the allocated memory 60.10 GiB is allocated by PyTorch, and "
    "17.50 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large "
    "try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation."
)


async def test_paste_evidence_explains_and_pins(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="B")
    async with app.run_test(size=(140, 48)) as pilot:
        await pilot.pause()
        await pilot.press("f6")
        await pilot.pause()
        screen = app.screen
        assert type(screen).__name__ == "PasteScreen"
        screen.query_one("#paste-text").text = OOM
        screen.query_one("#paste-explain").press()
        await app.workers.wait_for_complete()
        await pilot.pause()
        out = str(screen.query_one("#paste-output").render())
        assert "fragmentation" in out.lower()
        screen.query_one("#paste-pin").press()
        await pilot.pause()
    pinned = [e for e in ctx.session.incident.evidence if e.source == "explain"]
    assert pinned and pinned[0].step == "B"
    assert "fragmentation" in pinned[0].value.lower()
    # The log line itself goes with the verdict: the postmortem needs the numbers in it.
    assert pinned[0].query.startswith("torch.OutOfMemoryError: CUDA out of memory. Tried to")
    assert "requested (GiB): 2" in pinned[0].note and "from line 1" in pinned[0].note


async def test_command_palette_lists_steps_and_actions(tmp_path):
    ctx = make_ctx(tmp_path, lang="zh")
    app = CockpitApp(ctx=ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for st in ("A · 确认影响与时间线", "D · 单实例 / 单节点?", "I · 验证恢复并记录"):
            assert st in titles
        assert "先保护（F2）" in titles and "粘贴证据（F6）" in titles
        # Textual's own commands speak the UI language too.
        assert {"主题", "退出", "按键", "截图"} <= set(titles)
        assert not {"Theme", "Quit", "Keys", "Screenshot"} & set(titles)
        jump = next(c for c in app.get_system_commands(app.screen) if c.title.startswith("H ·"))
        jump.callback()
        await pilot.pause()
        assert app.current_step() == "H"
        await pilot.press("f1")
        await pilot.pause()
        assert type(app.screen).__name__ == "HelpScreen"


async def test_typing_notes_on_every_step_is_saved(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        for step in "ABEGH":
            app.goto(step)
            await pilot.pause()
            area = app.screen.query_one(f"#input-notes-{step}")
            area.focus()
            await pilot.press("o", "k")
            await pilot.pause()
            await pilot.press("escape")
            await pilot.pause()
            assert app.screen.focused is None
    assert ctx.session.incident.step_notes == {s: "ok" for s in "ABEGH"}


async def test_a_failing_save_is_shown_and_quit_asks_twice(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    ctx.session.start_background()
    app = CockpitApp(ctx=ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        (tmp_path / "a-file").write_text("not a directory")
        ctx.session.store.root = tmp_path / "a-file" / "state"  # even root cannot write here
        ctx.session.set_text("impact", "typed while the disk is gone")
        ctx.session.flush(timeout=5)
        await pilot.pause(1.2)
        assert ctx.session.last_save_error is not None
        shown = [n.message for n in app._notifications]
        assert any("Write failed" in m for m in shown)
        await app.action_quit()
        await pilot.pause()
        assert app.is_running  # first Ctrl+Q only warns
        assert any("not saved" in n.message for n in app._notifications)


async def test_rapid_refreshes_of_the_golden_panel_do_not_collide(tmp_path):
    from demo_ctx import demo_ctx

    ctx = demo_ctx(tmp_path / "demo", "en")
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(160, 50)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        panel = app.screen.query_one("#panel-golden_signals")
        for _ in range(15):
            panel.render_data(panel.data)
        for _ in range(3):
            await app.workers.wait_for_complete()
            await pilot.pause()
        rows = app.screen.query("#golden-rows > *")
        assert len(rows) == len(panel.data.rows)


async def test_export_file_button_writes_through_the_session(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    ctx.session.set_text("impact", "all tenants")
    app = CockpitApp(ctx=ctx, start_step="I")
    async with app.run_test(size=(140, 60)) as pilot:
        await pilot.pause()
        app.screen.query_one("#export-file").press()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "Written to" in str(app.screen.query_one("#export-status").render())
    text = (tmp_path / "exports" / "inc-0000test.en.md").read_text(encoding="utf-8")
    assert "all tenants" in text


async def test_bad_or_empty_input_is_said_not_swallowed(tmp_path):
    """A hold period out of range is refused, the stored one shown again and the range
    said; empty "add" forms say what is missing instead of doing nothing."""
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="I")
    async with app.run_test(size=(140, 60)) as pilot:
        await pilot.pause()
        screen = app.screen
        screen.query_one("#hold").value = "-5"
        assert screen._hold() is None and screen.query_one("#hold").value == "15"
        screen.query_one("#act-add").press()
        await pilot.pause()
        said = [n.message for n in app._notifications]
        assert any("takes 1–1440 minutes: “-5”" in m and "stays 15" in m for m in said)
        assert any("Write what is to be done first" in m for m in said)
    assert ctx.session.incident.actions == []


async def test_a_long_title_leaves_the_service_in_the_title_bar(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    ctx.session.set_text("title", "x" * 300)
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(200, 40)) as pilot:
        await pilot.pause()
        bar = str(app.screen.query_one("#title-bar").render())
        assert "x" * 59 + "…" in bar and "x" * 61 not in bar and bar.endswith("cockpit")
    assert ctx.session.incident.title == "x" * 300


async def test_error_samples_carry_the_incident_clock(tmp_path):
    """In replay and demo the clock is the recording's: an error sample typed now belongs
    to that incident's time, not to the day it is reviewed."""
    from testkit import FROZEN

    ctx = make_ctx(tmp_path, lang="en", mode=Mode.REPLAY)
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(120, 48)) as pilot:
        await pilot.pause()
        screen = app.screen
        screen.query_one("#err-text").value = "HTTP 504 upstream timed out"
        screen.query_one("#err-request").value = "req-9f2"
        screen.query_one("#err-add").press()
        await pilot.pause()
    [sample] = ctx.session.incident.collect.error_samples
    assert sample.request_id == "req-9f2"
    assert sample.at == FROZEN


async def test_markup_in_a_hypothesis_is_shown_as_typed(tmp_path):
    """Brackets in what the user typed (a hypothesis, pinned evidence) are text: opening
    the drop-downs that list them must not parse them as markup (it crashed the app)."""
    from cockpit.incident import Evidence

    ctx = make_ctx(tmp_path, lang="zh")
    ctx.session.pin(Evidence(label="[/red] p99", value="[bold]620", unit="ms"))
    app = CockpitApp(ctx=ctx, start_step="G")
    async with app.run_test(size=(120, 48)) as pilot:
        await pilot.pause()
        screen = app.screen
        screen.query_one("#hyp-statement").value = "[/] 网关问题 [bold"
        screen.query_one("#hyp-falsifier").value = "[/red] x"
        screen.query_one("#hyp-add").press()
        await pilot.pause()
        await pilot.click("#hyp-evidence")
        await pilot.pause()
        await pilot.press("escape")
        app.goto("H")
        await pilot.pause()
        await pilot.click("#exp-hypothesis")
        await pilot.pause()
        overlay = app.screen.query_one("#exp-hypothesis SelectOverlay")
        assert "[/] 网关问题 [bold" in str(overlay.get_option_at_index(1).prompt)
        await pilot.press("escape")
        await pilot.pause()
    assert app.return_code in (None, 0)
    assert ctx.session.incident.hypotheses[0].statement == "[/] 网关问题 [bold"


async def test_a_field_written_elsewhere_shows_what_is_stored(tmp_path):
    """A panel's "use this" button writes a template field (the back-test writes "which
    monitor could have caught it earlier"): the field on screen shows it, and typing
    into it edits that text instead of replacing it with what was typed."""
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="I")
    async with app.run_test(size=(120, 48)) as pilot:
        await pilot.pause()
        ctx.session.set_text("earlier_detection", "queue growth alert, 6 min earlier")
        await pilot.pause(0.4)
        area = app.screen.query_one("#input-earlier_detection")
        assert area.text == "queue growth alert, 6 min earlier"
        area.focus()
        area.move_cursor(area.document.end)
        await pilot.press(*" (P1)")
        await pilot.pause()
    assert ctx.session.incident.earlier_detection == "queue growth alert, 6 min earlier (P1)"


async def test_textual_own_texts_in_chinese(tmp_path):
    """Texts Textual itself would show in English: the Ctrl+C notice, the palette's "no
    matches" line and an open drop-down's key."""
    from textual.command import CommandList
    from textual.widgets._select import SelectOverlay

    ctx = make_ctx(tmp_path, lang="zh")
    app = CockpitApp(ctx=ctx, start_step="H")
    async with app.run_test(size=(120, 48)) as pilot:
        await pilot.pause()
        app.screen.set_focus(None)
        await pilot.press("ctrl+c")
        await pilot.pause()
        notes = [str(n.message) for n in app._notifications]
        assert any(m.startswith("按 ") and "退出" in m for m in notes), notes
        overlay = app.screen.query_one("#exp-hypothesis").query_one(SelectOverlay)
        descriptions = [
            b.description for bs in overlay._bindings.key_to_bindings.values() for b in bs
        ]
        assert "关闭菜单" in descriptions
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"zzqqxx")
        await pilot.pause(1.5)
        prompts = [str(o.prompt.renderable) for o in app.screen.query_one(CommandList).options]
        assert any("没有匹配的命令" in p for p in prompts), prompts


async def test_f5_on_a_panel_without_its_source_still_says_why(tmp_path):
    """F5 refreshes every panel of the step; one whose source is missing (no Kubernetes,
    no Prometheus) says so again instead of fetching from ``None``."""
    from cockpit.sources.base import Sources
    from cockpit.ui.panel import Panel
    from cockpit.ui.plugins import load_panels

    missing = {
        "kube": "no kubeconfig in this test",
        "metrics": "no Prometheus URL in this test",
        "gpu": "no NVML library in this test",
    }
    ctx = make_ctx(tmp_path, lang="en", sources=Sources(missing=missing), panels=load_panels())
    app = CockpitApp(ctx=ctx)
    checked = set()
    async with app.run_test(size=(140, 50)) as pilot:
        for key in "123456789":
            await pilot.press("ctrl+g", key, "enter")
            await pilot.pause()
            await pilot.press("f5")
            await app.workers.wait_for_complete()
            await pilot.pause()
            for panel in app.screen.query(Panel):
                if not panel.missing_sources():
                    continue
                status = str(panel.query_one(".panel--status").render())
                assert status.startswith("not available:"), (panel.PANEL_ID, status)
                assert "Error" not in status and panel.failure is None
                checked.add(panel.PANEL_ID)
    assert {"k8s_timeline", "golden_signals", "backtest"} <= checked


async def test_a_burst_of_step_keys_keeps_its_order(tmp_path):
    """Steps typed faster than screens come up are recorded in the order asked for."""
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.screen.set_focus(None)
        await pilot.press(*[k for d in "9153278" for k in ("ctrl+g", d, "enter")])
        await pilot.pause(0.5)
        assert app.current_step() == "H"
    assert ctx.session.incident.path == ["A", "I", "A", "E", "C", "B", "G", "H"]


async def test_times_changed_on_a_show_on_i(tmp_path):
    """A and I both show the four incident times: a time corrected on A is what I shows."""
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="I")
    async with app.run_test(size=(120, 48)) as pilot:
        await pilot.pause()
        app.goto("A")
        await pilot.pause()
        field = app.screen.query_one("#time-detect")
        field.focus()
        field.value = "2026-11-29 19:42"
        await pilot.press("enter")
        await pilot.pause()
        app.goto("I")
        await pilot.pause(0.4)
        assert app.screen.query_one("#time-detect").value == "2026-11-29 19:42:00Z"


async def test_the_header_says_the_time_under_investigation(tmp_path):
    """With ``--at`` the title bar names the time being looked at, never ``[live]``."""
    import argparse

    from cockpit.wiring import build_context

    args = argparse.Namespace(
        demo=False, lang="en", state_dir=str(tmp_path), at="2026-11-29 20:40", namespace="llm"
    )
    built = build_context(args, with_session=False, background=True)
    assert built.at is not None and built.at.strftime("%Y-%m-%d %H:%M") == "2026-11-29 20:40"
    for lang, words in (
        ("en", "[as of 2026-11-29 20:40 UTC]"),
        ("zh", "[回看 2026-11-29 20:40 UTC 时的情况]"),
    ):
        ctx = make_ctx(tmp_path / lang, lang=lang)
        ctx.at = built.at
        app = CockpitApp(ctx=ctx)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            bar = str(app.screen.query_one("#title-bar").render())
            assert bar.startswith(words) and "live" not in bar and "实时" not in bar
            # Time examples are in the incident's clock and read as examples.
            hint = app.screen.query_one("#time-start").placeholder
            assert hint.startswith(("e.g. ", "例如 ")) and "20:45" in hint


def _looks_like_a_field(widget) -> bool:
    return all(edge[0] not in ("", "none", "hidden", "blank") for edge in widget.styles.border)


async def test_times_look_like_fields_and_a_refused_time_says_so_by_its_field(tmp_path):
    """A and I show the four times as bordered, labelled fields; text that is not a time
    stays in its field, unsaved, with the refusal right under it."""
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx)
    async with app.run_test(size=(120, 48)) as pilot:
        for step in ("A", "I"):
            app.goto(step)
            await pilot.pause()
            for name, label in (
                ("start", "Start"),
                ("detect", "Detect"),
                ("mitigate", "Mitigate"),
                ("recover", "Recover"),
            ):
                field = app.screen.query_one(f"#time-{name}")
                assert _looks_like_a_field(field), (step, name)
                assert field.outer_size.height >= 3, (step, name)
                cell_label = field.parent.query_one("Label")
                assert str(cell_label.render()) == label
        detect = app.screen.query_one("#time-detect")
        detect.value = "bad rollout of the driver"
        await detect.action_submit()
        await pilot.pause()
        refused = app.screen.query_one("#time-detect-refused")
        assert refused.display and refused.parent is detect.parent
        assert "cannot read “bad rollout of the driver”, not saved" in str(refused.render())
        assert detect.value == "bad rollout of the driver"
        assert not app.screen.query_one("#time-start-refused").display
        detect.value = "20:30"
        await detect.action_submit()
        await pilot.pause()
        assert not refused.display
    assert ctx.session.incident.times.detect.minute == 30


async def test_tab_on_i_reaches_the_record_fields_in_the_order_shown(tmp_path):
    """From "Check recovery", Tab walks the fields top to bottom, left to right: the four
    times, then root cause, systemic cause and mitigation."""
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="I")
    async with app.run_test(size=(120, 60)) as pilot:
        await pilot.pause()
        app.screen.query_one("#verify-check").focus()
        await pilot.pause()
        order = []
        for _ in range(12):
            await pilot.press("tab")
            await pilot.pause()
            focused = app.focused
            order.append(focused)
            if focused.id == "input-mitigation":
                break
        ids = [w.id for w in order]
        assert ids[-7:] == [
            "time-start",
            "time-detect",
            "time-mitigate",
            "time-recover",
            "input-root_cause_technical",
            "input-root_cause_systemic",
            "input-mitigation",
        ]
        places = [(w.region.y, w.region.x) for w in order]
        assert places == sorted(places)
        assert all(_looks_like_a_field(w) for w in order[-7:])


async def test_the_startup_heap_is_out_of_full_collections_while_the_app_runs(tmp_path):
    import gc
    import weakref

    class Node:
        pass

    gc.unfreeze()  # nothing left frozen by an earlier test
    app = CockpitApp(ctx=make_ctx(tmp_path, lang="en"), start_step="H")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        # the app and its first step's screen are frozen: no generation lists them
        assert gc.get_freeze_count() > 20_000
        tracked = gc.get_objects()
        assert all(o is not app and o is not app.screen for o in tracked)
        # what is made later is collected as usual: a cycle made now is freed
        node = Node()
        node.self = node  # type: ignore[attr-defined]
        gone = weakref.ref(node)
        del node, tracked
        gc.collect()
        assert gone() is None
    assert gc.get_freeze_count() == 0  # handed back to the collector as the app ends


@pytest.mark.parametrize("step", ["C", "I"])
@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_the_title_bar_keeps_the_mode_and_the_service_in_sight(tmp_path, size, step):
    from datetime import UTC, datetime

    ctx = make_ctx(tmp_path, lang="en")
    ctx.at = datetime(2026, 11, 27, 12, 55, tzinfo=UTC)
    ctx.session.set_text("title", "GPU throttled on gpu-node-b: TTFT P99 over its SLO " * 2)
    svc = ctx.session.incident.service.describe()
    assert svc
    app = CockpitApp(ctx=ctx, start_step=step)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        bar = app.screen.query_one("#title-bar")
        text = str(bar.render())
        assert text.startswith("[as of 2026-11-27 12:55 UTC] GPU throttled"), text
        ns_dep = " / ".join(svc.split(" / ")[:2])
        assert ns_dep in text and "…" in text, text
        assert len(text) <= bar.content_region.width, (len(text), bar.content_region.width)


async def test_step_i_shows_its_recovery_lines_in_the_language_switched_to(tmp_path):
    """A recovery check run in Chinese, the screens switched to English: I shows its lines
    in English at once (they were kept in both), not the old language until it is run again."""
    from datetime import UTC, datetime

    from textual.widgets import Static

    ctx = make_ctx(tmp_path, lang="zh")
    ctx.session.record_recovery(
        False,
        ["首 token 时延 P99：仍高于基线"],
        15,
        datetime(2026, 12, 1, 3, 0, tzinfo=UTC),
        lines_i18n={
            "zh": ["首 token 时延 P99：仍高于基线"],
            "en": ["TTFT P99: still above baseline"],
        },
    )
    app = CockpitApp(ctx=ctx, start_step="I")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert "仍高于基线" in str(app.screen.query_one("#recovery-lines", Static).render())
        app.action_switch_language()
        await pilot.pause()
        shown = str(app.screen.query_one("#recovery-lines", Static).render())
        assert "TTFT P99: still above baseline" in shown and "仍高于基线" not in shown, shown
