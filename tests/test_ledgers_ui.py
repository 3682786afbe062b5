"""Ledgers on screen: hypotheses (G), experiments (H), action items (I) and timeline notes
(A) are edited and deleted from their screens; G's and H's highlighted row is shown whole
at 80×24; H reads one variable from its fields."""

from __future__ import annotations

from datetime import timedelta

from cockpit.app import CockpitApp
from cockpit.incident import Experiment, HistoryOp
from cockpit.store import IncidentStore
from testkit import make_ctx


def stored(ctx):
    ctx.session.flush()
    return IncidentStore(ctx.session.store.root).load(ctx.session.incident.id)


def rendered(widget) -> str:
    return str(widget.render())


async def press(pilot, screen, button_id):
    screen.query_one(f"#{button_id}").press()
    await pilot.pause()


async def test_hypotheses_are_edited_deleted_and_shown_whole_at_80x24(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    long_falsifier = "P99 stays above 300 ms for 15 minutes after gpu-node-7 is cordoned " * 2
    ctx.session.add_hypothesis("gpu-node-7 throttles thermally", long_falsifier)
    second = ctx.session.add_hypothesis("KV cache fragmentation", "restart does not lower P99")
    app = CockpitApp(ctx=ctx, start_step="G")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        table = screen.query_one("#hyp-table")
        # The table fits the screen; the falsifier is read in the pane, whole, not
        # 140 presses of Right away.
        assert table.virtual_size.width <= 80
        table.move_cursor(row=0)
        await pilot.pause()
        detail = rendered(screen.query_one("#hyp-detail"))
        assert long_falsifier.strip() in detail.replace("\n", " ")
        table.move_cursor(row=1)
        await pilot.pause()
        await press(pilot, screen, "hyp-edit")
        statement = screen.query_one("#hyp-statement")
        assert statement.value == "KV cache fragmentation"
        # The cursor is after the text: typing adds to it.
        assert statement.has_focus and statement.cursor_position == len(statement.value)
        screen.query_one("#hyp-falsifier").value = "defrag leaves P99 at 620 ms"
        await press(pilot, screen, "hyp-add")
        assert [h.falsifier for h in ctx.session.incident.hypotheses][1] == (
            "defrag leaves P99 at 620 ms"
        )
        assert len(ctx.session.incident.hypotheses) == 2
        assert screen.query_one("#hyp-statement").value == ""
        # An edit that breaks the rule is refused and said.
        table.move_cursor(row=1)
        await press(pilot, screen, "hyp-edit")
        screen.query_one("#hyp-falsifier").value = ""
        await press(pilot, screen, "hyp-add")
        assert "refute" in rendered(screen.query_one("#hyp-error"))
        await press(pilot, screen, "hyp-cancel")
        table.move_cursor(row=1)
        screen.query_one("#hyp-delete").focus()
        await pilot.press("enter")
        await pilot.pause()
        # Focus is on the table now: another Enter deletes nothing.
        assert screen.focused is table
        await pilot.press("enter")
        await pilot.pause()
        assert len(ctx.session.incident.hypotheses) == 1
        assert [h.id for h in ctx.session.incident.hypotheses] != [] and second.id not in [
            h.id for h in ctx.session.incident.hypotheses
        ]
        assert "F8" in rendered(screen.query_one("#hyp-error"))
    inc = stored(ctx)
    assert len(inc.hypotheses) == 1
    assert inc.history[-1].op is HistoryOp.DELETE
    assert inc.history[-1].target == f"hypotheses/{second.id}"


async def test_h_takes_one_variable_as_a_sentence_and_edits_and_deletes(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    hyp = ctx.session.add_hypothesis("too many sequences", "P99 stays at 128")
    app = CockpitApp(ctx=ctx, start_step="H")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        screen.query_one("#exp-variable").value = "max_num_seqs: 256 → 128, on pod a, b"
        screen.query_one("#exp-sli").value = "P99 latency"
        screen.query_one("#exp-before").value = "620 ms"
        await press(pilot, screen, "exp-add")
        assert rendered(screen.query_one("#exp-error")) == ""
        (exp,) = ctx.session.incident.experiments
        assert (exp.variable, exp.from_value, exp.to_value, exp.scope) == (
            "max_num_seqs",
            "256",
            "128",
            "pod a, b",
        )
        assert "pod a, b" in rendered(screen.query_one("#exp-detail"))
        # Two variables in the name are still refused.
        screen.query_one("#exp-after").value = "190 ms"
        await press(pilot, screen, "exp-record")
        screen.query_one("#exp-variable").value = "max_num_seqs and gpu_memory_utilization"
        await press(pilot, screen, "exp-add")
        assert "one variable" in rendered(screen.query_one("#exp-error"))
        assert len(ctx.session.incident.experiments) == 1
        # Edit: the form holds the row's fields; the change is saved in place, and the
        # hypothesis it tests stays linked.
        ctx.session.edit_row("experiments", exp.id, hypothesis_id=hyp.id)
        screen.query_one("#exp-table").move_cursor(row=0)
        await press(pilot, screen, "exp-edit")
        assert screen.query_one("#exp-from").value == "256"
        assert screen.query_one("#exp-hypothesis").value == hyp.id
        screen.query_one("#exp-to").value = "96"
        await press(pilot, screen, "exp-add")
        assert ctx.session.incident.experiments[0].to_value == "96"
        assert ctx.session.incident.experiments[0].after == "190 ms"
        assert ctx.session.incident.experiments[0].hypothesis_id == hyp.id
        await press(pilot, screen, "exp-delete")
        assert ctx.session.incident.experiments == []
    assert stored(ctx).experiments == []


async def test_action_items_are_edited_and_deleted_on_i(tmp_path):
    ctx = make_ctx(tmp_path, lang="zh")
    ctx.session.add_action("队列时间告警", "li", "2026-12-05", "演练")
    ctx.session.add_action("每晚整理碎片", "wang", "", "")
    app = CockpitApp(ctx=ctx, start_step="I")
    async with app.run_test(size=(120, 48)) as pilot:
        await pilot.pause()
        screen = app.screen
        screen.query_one("#act-table").move_cursor(row=1)
        await press(pilot, screen, "act-edit")
        assert screen.query_one("#act-what").value == "每晚整理碎片"
        screen.query_one("#act-owner").value = "zhao"
        await press(pilot, screen, "act-add")
        assert [a.owner for a in ctx.session.incident.actions] == ["li", "zhao"]
        screen.query_one("#act-table").move_cursor(row=0)
        await press(pilot, screen, "act-delete")
        assert [a.what for a in ctx.session.incident.actions] == ["每晚整理碎片"]
        assert "F8" in rendered(screen.query_one("#act-error"))
    assert [a.owner for a in stored(ctx).actions] == ["zhao"]


async def test_timeline_notes_are_added_edited_and_deleted_on_a(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(120, 48)) as pilot:
        await pilot.pause()
        screen = app.screen
        screen.query_one("#tl-text").value = "paged by on-call"
        await press(pilot, screen, "tl-add")
        (note,) = [e for e in ctx.session.incident.timeline if e.text == "paged by on-call"]
        # logged now: on the incident clock running on from its frozen instant
        assert ctx.clock.now() <= note.at < ctx.clock.now() + timedelta(minutes=1)
        table = screen.query_one("#timeline")
        table.move_cursor(row=table.get_row_index(note.id))
        await press(pilot, screen, "tl-edit")
        screen.query_one("#tl-text").value = "paged by on-call (SMS)"
        await press(pilot, screen, "tl-add")
        assert [e.text for e in ctx.session.incident.timeline] == ["paged by on-call (SMS)"]
        table.move_cursor(row=0)
        await press(pilot, screen, "tl-delete")
        assert ctx.session.incident.timeline == []
    assert stored(ctx).timeline == []


async def test_an_old_style_experiment_shows_its_change(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    ctx.session.add_experiment(Experiment(variable="node gpu-7", change="cordoned"))
    app = CockpitApp(ctx=ctx, start_step="H")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert "cordoned" in rendered(app.screen.query_one("#exp-detail"))


async def test_row_buttons_without_a_row_say_so(tmp_path):
    ctx = make_ctx(tmp_path, lang="zh")
    app = CockpitApp(ctx=ctx, start_step="G")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        for button in ("hyp-supported", "hyp-edit", "hyp-delete"):
            screen.query_one("#hyp-error").update("")
            await press(pilot, screen, button)
            assert rendered(screen.query_one("#hyp-error")) == "先在表中选中一行。"


async def test_hs_hypothesis_choice_names_each_by_its_number_and_keeps_a_long_one(tmp_path):
    """H's "hypothesis tested" drop-down names each hypothesis by the number G's ledger
    gives it, and a statement longer than 60 characters is not cut there (only one past
    140 is, with "…")."""
    ctx = make_ctx(tmp_path, lang="en")
    long = "KV cache fragmentation after the 14:05 rollout starves the batch on every replica"
    ctx.session.add_hypothesis("throttling on gpu-node-7", "P99 stays after cordon")
    ctx.session.add_hypothesis(long, "a restart leaves P99 high")
    ctx.session.add_hypothesis("x" * 200, "never")
    app = CockpitApp(ctx=ctx, start_step="H")
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        prompts = [str(p) for p, _ in app.screen.query_one("#exp-hypothesis")._options]
    assert prompts[-3:-1] == ["1. throttling on gpu-node-7", f"2. {long}"]
    assert prompts[-1].startswith("3. xxx") and prompts[-1].endswith("…")


async def test_bs_notice_names_the_change_saved_as_its_table_row_does(tmp_path):
    """B's table is ordered by time, not by when a change was added: the notice after
    saving an edit names the change the table shows (by its text, as "Editing" does),
    never a number of the incident's own order."""
    from datetime import UTC, datetime

    from textual.widgets import DataTable, Static

    from cockpit.incident import Change

    ctx = make_ctx(tmp_path, lang="en")
    t0 = datetime(2026, 11, 29, 13, 0, tzinfo=UTC)
    late = ctx.session.add_change(Change(at=t0 + timedelta(minutes=30), summary="late one"))
    for minutes, text in ((10, "early one"), (20, "middle one")):
        ctx.session.add_change(Change(at=t0 + timedelta(minutes=minutes), summary=text))
    app = CockpitApp(ctx=ctx, start_step="B")
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        screen = app.screen
        table = screen.query_one("#chg-table", DataTable)
        table.move_cursor(row=table.get_row_index(late.id))
        assert table.get_row_index(late.id) == 2  # the third row, the incident's first
        await press(pilot, screen, "chg-edit")
        await pilot.press(*" (v2)", "enter")
        await pilot.pause()
        said = rendered(screen.query_one("#chg-error", Static))
        assert "Saved change “late one (v2)”" in said, said
        assert "change 1" not in said and "change 3" not in said
