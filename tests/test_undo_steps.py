"""Ctrl+Z undoes only the user's own typing in the field, one burst at a time: a dialog
opened and closed between two bursts (F8) ends the first, and text the program loaded
into a form (a row to edit, the form emptied after a save) is never brought back."""

from __future__ import annotations

import pytest
from textual.widgets import Input, TextArea

from cockpit.app import CockpitApp
from cockpit.incident import Experiment
from testkit import make_ctx
from tests.test_typed_after_enter import _burst, _type


async def _f8_and_back(app, pilot) -> None:
    await pilot.press("f8")
    await pilot.pause()
    assert type(app.screen).__name__ == "HistoryScreen"
    await pilot.press("escape")
    await pilot.pause()


async def test_f8_between_two_bursts_in_a_one_line_field_ends_the_first(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="H")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        field = app.screen.query_one("#exp-variable", Input)
        field.focus()
        await pilot.pause()
        await pilot.press(*"max_num_seqs")
        await _f8_and_back(app, pilot)
        assert app.screen.focused is field
        await pilot.press(*"_x")
        await pilot.pause()
        assert field.value == "max_num_seqs_x"
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert field.value == "max_num_seqs"
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert field.value == ""


async def test_f8_between_two_bursts_in_a_text_area_ends_the_first(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        area = app.screen.query_one("#input-impact", TextArea)
        area.focus()
        await pilot.pause()
        await pilot.press(*"all tenants")
        await _f8_and_back(app, pilot)
        assert app.screen.focused is area
        await pilot.press(*" in eu")
        await pilot.pause()
        assert area.text == "all tenants in eu"
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert area.text == "all tenants"


async def test_a_row_loaded_into_gs_form_is_not_undone_into_another_field(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    ctx.session.add_hypothesis("KV cache fragmentation", "a restart leaves P99 high")
    ctx.session.add_hypothesis("gpu-node-7 throttles", "P99 stays high after cordon")
    app = CockpitApp(ctx=ctx, start_step="G")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        table = screen.query_one("#hyp-table")
        falsifier = screen.query_one("#hyp-falsifier", Input)
        statement = screen.query_one("#hyp-statement", Input)
        # Edit row 1, then switch to row 2 and edit it: Ctrl+Z in its falsifier has
        # nothing of row 1 to bring back.
        table.move_cursor(row=0)
        screen.query_one("#hyp-edit").press()
        await pilot.pause()
        table.move_cursor(row=1)
        screen.query_one("#hyp-edit").press()
        await pilot.pause()
        assert falsifier.value == "P99 stays high after cordon"
        falsifier.focus()
        await pilot.pause()
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert falsifier.value == "P99 stays high after cordon"
        await pilot.press(*" too")
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert falsifier.value == "P99 stays high after cordon"
        # Saved: the form is empty, and Ctrl+Z brings back no row's text.
        await pilot.press("enter")
        await pilot.pause()
        assert falsifier.value == "" and statement.value == ""
        for field in (statement, falsifier):
            field.focus()
            await pilot.pause()
            await pilot.press("ctrl+z", "ctrl+z")
            await pilot.pause()
            assert field.value == ""
        # Edit then Cancel: the same.
        screen.query_one("#hyp-edit").press()
        await pilot.pause()
        screen.query_one("#hyp-cancel").press()
        await pilot.pause()
        falsifier.focus()
        await pilot.pause()
        await pilot.press(*"x", "ctrl+z", "ctrl+z")
        await pilot.pause()
        assert falsifier.value == ""


async def test_gs_form_refused_for_want_of_a_refutation_shows_that_field(tmp_path):
    """The refutation is required: the form refused takes focus to it, scrolled into
    sight even when the page was scrolled away from it, and a notice names it."""
    ctx = make_ctx(tmp_path, lang="en")
    for n in range(8):
        ctx.session.add_hypothesis(f"cause {n}", f"refuted by {n}")
    app = CockpitApp(ctx=ctx, start_step="G")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        statement = screen.query_one("#hyp-statement", Input)
        statement.focus()
        await pilot.pause()
        await pilot.press(*"gpu-node-7")
        body = screen.query_one("#step-body")
        body.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        falsifier = screen.query_one("#hyp-falsifier", Input)
        assert not body.content_region.overlaps(falsifier.region)
        await pilot.press("enter")
        await pilot.pause(0.3)
        assert ctx.session.incident.hypotheses[-1].statement == "cause 7"
        assert screen.focused is falsifier
        assert body.content_region.contains_region(falsifier.region)
        said = [str(n.message) for n in app._notifications]
        assert any("refute it" in m and "missing" in m for m in said), said


async def test_enter_in_the_title_ends_the_step_before_the_next_key_however_fast(tmp_path):
    """Enter and the next keys sent at once: Ctrl+Z takes away exactly what followed the
    Enter, not one character more or less."""
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        title = app.screen.query_one("#input-title", Input)
        title.focus()
        await pilot.pause()
        await _type(pilot, "TTFT P99 x2")
        await _burst(app, pilot, " on node b")
        assert title.value == "TTFT P99 x2 on node b"
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert title.value == "TTFT P99 x2"


@pytest.mark.parametrize("fast", [False, True])
async def test_hs_result_saved_then_typed_on_is_one_ctrl_z_from_the_saved_result(tmp_path, fast):
    ctx = make_ctx(tmp_path, lang="en")
    ctx.session.add_experiment(
        Experiment(at=ctx.clock.logged(), variable="max_num_seqs", from_value="256", to_value="128")
    )
    app = CockpitApp(ctx=ctx, start_step="H")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        after = app.screen.query_one("#exp-after", Input)
        after.focus()
        await pilot.pause()
        await _type(pilot, "P99 down to 300 ms")
        if fast:
            await _burst(app, pilot, ", queue empty")
        else:
            await pilot.press("enter")
            await pilot.pause()
            await _type(pilot, ", queue empty")
        assert ctx.session.incident.experiments[0].after == "P99 down to 300 ms"
        assert after.value == "P99 down to 300 ms, queue empty"
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert after.value == "P99 down to 300 ms"
