"""Edits are recoverable in the UI: Ctrl+Z undoes a field's edit, F8's history restores a
wiped field or a deleted row."""

from __future__ import annotations

from textual.widgets import Input, TextArea
from textual.widgets.input import Selection

from cockpit.app import CockpitApp
from cockpit.store import IncidentStore
from testkit import make_ctx


def stored(ctx):
    ctx.session.flush()
    return IncidentStore(ctx.session.store.root).load(ctx.session.incident.id)


async def test_ctrl_z_undoes_a_wiped_one_line_field(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        title = app.screen.query_one("#input-title", Input)
        title.focus()
        await pilot.press(*"P99 up")
        await pilot.pause()
        assert ctx.session.incident.title == "P99 up"
        # Everything selected, then one stray key: the title is gone...
        title.selection = Selection(0, len(title.value))
        await pilot.press("n")
        await pilot.pause()
        assert ctx.session.incident.title == "n"
        # ...and one Ctrl+Z brings it back, in the field and in the store.
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert title.value == "P99 up"
        assert stored(ctx).title == "P99 up"
        await pilot.press("ctrl+y")
        await pilot.pause()
        assert title.value == "n"
        # Typing in one run is one step: undo removes the whole word typed.
        await pilot.press("ctrl+z", "end", *" now")
        await pilot.pause()
        assert title.value == "P99 up now"
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert title.value == "P99 up"


async def test_ctrl_z_undoes_an_edit_of_a_text_area(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        area = app.screen.query_one("#input-impact", TextArea)
        area.focus()
        await pilot.press(*"all tenants")
        await pilot.pause()
        area.select_all()
        await pilot.press("x")
        await pilot.pause()
        assert ctx.session.incident.impact == "x"
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert area.text == "all tenants"
        assert stored(ctx).impact == "all tenants"


async def test_f8_restores_a_wiped_field_and_a_deleted_row(tmp_path):
    ctx = make_ctx(tmp_path, lang="zh")
    ctx.session.set_text("title", "P99 上涨")
    ctx.session.set_text("title", "")
    hyp = ctx.session.add_hypothesis("KV 碎片化", "重启后 P99 不降")
    ctx.session.delete_row("hypotheses", hyp.id)
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.screen.set_focus(None)
        await pilot.press("f8")
        await pilot.pause()
        screen = app.screen
        assert type(screen).__name__ == "HistoryScreen"
        table = screen.query_one("#history-table")
        lines = [str(table.get_row_at(i)[1]) for i in range(table.row_count)]
        # Newest first, in words: the deleted hypothesis, its addition, the wiped title.
        assert lines[0] == "删除 假设 1「KV 碎片化」"
        assert lines[1] == "新增 假设 1「KV 碎片化」"
        assert lines[2] == "标题：P99 上涨 → （空）"
        screen.query_one("#history-restore").press()
        await pilot.pause()
        assert [h.statement for h in ctx.session.incident.hypotheses] == ["KV 碎片化"]
        assert "已恢复" in str(screen.query_one("#history-status").render())
        table.move_cursor(row=3)  # the restore is now on top: the title is fourth
        screen.query_one("#history-restore").press()
        await pilot.pause()
        # the notice reads the way the restore went: from empty back to the title
        assert (
            str(screen.query_one("#history-status").render()) == "已恢复：标题：（空） → P99 上涨"
        )
        await pilot.press("escape")
        await pilot.pause()
        assert app.current_step() == "A"
        # The field on A shows the restored title, and the store has it.
        assert app.screen.query_one("#input-title", Input).value == "P99 上涨"
    assert stored(ctx).title == "P99 上涨"
    assert [h.id for h in stored(ctx).hypotheses] == [hyp.id]


async def test_a_row_restored_with_f8_is_listed_on_its_step_when_f8_closes(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    hyp = ctx.session.add_hypothesis("KV cache fragmentation", "a restart leaves P99 high")
    app = CockpitApp(ctx=ctx, start_step="G")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        table = app.screen.query_one("#hyp-table")
        assert table.row_count == 1
        app.screen.query_one("#hyp-delete").press()
        await pilot.pause(0.3)
        assert table.row_count == 0
        notice = app.screen.query_one("#hyp-error")
        assert "Deleted" in str(notice.render())
        app.screen.set_focus(None)
        await pilot.press("f8")
        await pilot.pause()
        assert type(app.screen).__name__ == "HistoryScreen"
        app.screen.query_one("#history-restore").press()
        await pilot.pause(0.3)
        await pilot.press("escape")
        await pilot.pause()
        assert app.current_step() == "G"
        assert [h.id for h in ctx.session.incident.hypotheses] == [hyp.id]
        assert table.row_count == 1
        # The notice about the deletion is gone with it: the row is back.
        assert str(notice.render()).strip() == ""


async def test_ctrl_z_undoes_the_whole_edit_of_a_visit_to_the_field(tmp_path):
    """What is typed during one visit to a field is one step, however slow the typing:
    one Ctrl+Z puts back the text the field held when it was entered."""
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="H")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        field = app.screen.query_one("#exp-variable", Input)
        field.focus()
        await pilot.press(*"max_num")
        await pilot.pause(1.3)  # a pause in the middle of the word
        await pilot.press(*"_seqs", "backspace", "s")
        await pilot.pause()
        assert field.value == "max_num_seqs"
        app.screen.query_one("#exp-from", Input).focus()
        await pilot.pause()
        field.focus()
        await pilot.pause()
        await pilot.press("end", *" 256")
        await pilot.pause()
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert field.value == "max_num_seqs"  # this visit's typing only
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert field.value == ""  # the whole first visit at once
        await pilot.press("ctrl+y")
        await pilot.pause()
        assert field.value == "max_num_seqs"


async def test_logging_an_experiment_empties_the_form_for_the_next(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    hyp = ctx.session.add_hypothesis("the batch is too large", "P99 stays at 620 ms")
    app = CockpitApp(ctx=ctx, start_step="H")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        values = {
            "exp-variable": "max_num_seqs",
            "exp-from": "256",
            "exp-to": "128",
            "exp-scope": "pod a",
            "exp-sli": "gateway P99",
            "exp-before": "620 ms",
        }
        for field_id, value in values.items():
            screen.query_one(f"#{field_id}", Input).value = value
        screen.query_one("#exp-hypothesis").value = hyp.id
        await pilot.pause()
        screen.query_one("#exp-add").press()
        await pilot.pause()
        [exp] = ctx.session.incident.experiments
        assert (exp.sli, exp.hypothesis_id) == ("gateway P99", hyp.id)
        assert {f: screen.query_one(f"#{f}", Input).value for f in values} == dict.fromkeys(
            values, ""
        )
        from textual.widgets import Select

        assert screen.query_one("#exp-hypothesis").value is Select.NULL


async def test_f8_lists_pins_and_evidence_links_and_restores_them(tmp_path):
    """F8 lists a pin (F6, C, E) and a link of evidence to a hypothesis (G) as it lists
    every other row added, by their names in both languages; restoring the link takes
    it back, and a pin unpinned comes back with its link."""
    from cockpit.incident import Evidence

    ctx = make_ctx(tmp_path, lang="en")
    hyp = ctx.session.add_hypothesis("KV fragmentation", "P99 stays after a restart")
    ev = ctx.session.pin(Evidence(label="P99 latency", value="620", unit="ms", step="C"))
    ctx.session.link_evidence(hyp.id, ev.id)
    app = CockpitApp(ctx=ctx, start_step="G")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.screen.set_focus(None)
        await pilot.press("f8")
        await pilot.pause()
        screen = app.screen
        assert type(screen).__name__ == "HistoryScreen"
        table = screen.query_one("#history-table")
        lines = [str(table.get_row_at(i)[1]) for i in range(table.row_count)]
        assert lines[:2] == [
            "Hypothesis 1 “KV fragmentation” · Evidence: (empty) → “P99 latency”",
            "Added Evidence “P99 latency”",
        ]
        table.move_cursor(row=0)
        screen.query_one("#history-restore").press()
        await pilot.pause()
        assert ctx.session.incident.hypotheses[0].evidence_ids == []
        assert "Restored" in str(screen.query_one("#history-status").render())
        await pilot.press("escape")
        await pilot.pause()
    # unpinned, the pin comes back from F8 with its link
    ctx.session.link_evidence(hyp.id, ev.id)
    ctx.session.unpin(ev.id)
    [deleted] = [h for h in ctx.session.incident.history if h.target == f"evidence/{ev.id}"][-1:]
    ctx.session.restore(deleted.id)
    assert [e.id for e in ctx.session.incident.evidence] == [ev.id]
    assert ctx.session.incident.hypotheses[0].evidence_ids == [ev.id]
    from cockpit.history import entry_line

    zh = [entry_line(ctx.session.incident, h, "zh") for h in ctx.session.incident.history]
    assert "新增 证据「P99 latency」" in zh
    assert "假设 1「KV fragmentation」 · 证据：（空） → 「P99 latency」" in zh
    assert stored(ctx).hypotheses[0].evidence_ids == [ev.id]


async def test_bs_edit_selected_goes_through_the_ledger_editor(tmp_path):
    """B's "Edit selected" on a change: the form says which change it holds (by its text)
    and that Enter saves and Esc cancels; Esc leaves it as it was, Enter saves the edit
    (the history keeps the summary it replaced)."""
    from textual.widgets import Button, DataTable, Input, Static

    from cockpit.incident import Change
    from demo_ctx import demo_ctx, opened_demo

    ctx = demo_ctx(tmp_path, "en")
    change = ctx.session.add_change(Change(kind="config", summary="raised max_num_seqs"))
    async with opened_demo(ctx, "B", (160, 48)) as (app, pilot):
        screen = app.screen
        table = screen.query_one("#chg-table", DataTable)
        rows = [str(k.value) for k in table.rows]
        table.focus()
        table.move_cursor(row=rows.index(change.id))
        await pilot.pause()
        screen.query_one("#chg-edit", Button).press()
        await pilot.pause()
        said = str(screen.query_one("#chg-error", Static).render())
        assert "Editing change “raised max_num_seqs”" in said, said
        assert "Enter saves, Esc cancels" in said, said
        field = screen.query_one("#chg-summary", Input)
        assert screen.focused is field and field.cursor_position == len(field.value)
        await pilot.press(*" to 512", "escape")
        await pilot.pause()
        assert change.summary == "raised max_num_seqs" and field.value == ""
        assert "cancelled" in str(screen.query_one("#chg-error", Static).render())
        table.focus()
        table.move_cursor(row=[str(k.value) for k in table.rows].index(change.id))
        screen.query_one("#chg-edit", Button).press()
        await pilot.pause()
        await pilot.press(*" to 512", "enter")
        await pilot.pause()
        assert change.summary == "raised max_num_seqs to 512"
        assert len(ctx.session.incident.changes) == len(
            {c.id for c in ctx.session.incident.changes}
        )
        assert any(e.target.endswith(".summary") for e in ctx.session.incident.history)
        assert str(screen.query_one("#chg-add", Button).label) == "Add"
