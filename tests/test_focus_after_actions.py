"""After every action and on every arrival, the next keys have a visible place: focus is on
a widget the eye can see and that shows its focus, or, with nothing focused, a key typed
says where typing goes (never text lost without a sign)."""

from __future__ import annotations

from typing import Any

import pytest
from focus_look import strong_look
from textual.widgets import Button

from cockpit.app import STEP_SCREENS, CockpitApp
from cockpit.screens.base import StepScreen
from demo_ctx import demo_ctx, opened_demo

NOWHERE = "Nothing has focus"


async def _focus_visible(app: CockpitApp, pilot: Any, where: str) -> None:
    """The focused widget is on screen and looks focused (it looks different unfocused)."""
    screen = app.screen
    focused = screen.focused
    assert focused is not None
    region = focused.region
    assert region.area > 0 and screen.region.contains_region(region), (where, focused, region)
    if isinstance(screen, StepScreen):
        body = screen.query_one("#step-body")
        await pilot.pause(0.1)
        assert body.content_region.overlaps(region), (where, focused, region)
    seen = strong_look(focused)
    screen.set_focus(None, scroll_visible=False)
    await pilot.pause()
    assert strong_look(focused) != seen, (where, focused)
    focused.focus(scroll_visible=False)
    await pilot.pause()


async def _typing_says_where(app: CockpitApp, pilot: Any, where: str) -> None:
    """With nothing focused, a letter typed is not lost silently: a notice says so."""
    app.clear_notifications()
    path = list(app.ctx.session.incident.path)
    await pilot.press("x")
    await pilot.pause()
    said = [str(n.message) for n in app._notifications]
    assert any(NOWHERE in s for s in said), (where, said)
    assert app.ctx.session.incident.path == path


async def _after(app: CockpitApp, pilot: Any, where: str) -> None:
    await app.workers.wait_for_complete()
    await pilot.pause()
    if app.screen.focused is None:
        await _typing_says_where(app, pilot, where)
    else:
        await _focus_visible(app, pilot, where)


@pytest.mark.parametrize(
    ("step", "size"),
    [(step, (160, 48)) for step in STEP_SCREENS] + [(step, (80, 24)) for step in "ADGHI"],
)
async def test_after_every_button_the_next_keys_have_a_visible_place(tmp_path, step, size):
    async with opened_demo(demo_ctx(tmp_path, "en"), step, size) as (app, pilot):
        await _after(app, pilot, f"{step} arrival")
        ids = [w.id for w in app.screen.focus_chain if isinstance(w, Button) and w.id]
        for bid in ids:
            if app.current_step() != step:
                app.goto(step)
                await app.workers.wait_for_complete()
                await pilot.pause()
            while not isinstance(app.screen, StepScreen):
                await pilot.press("escape")  # a dialog the button opened
                await pilot.pause()
            buttons = app.screen.query(f"#{bid}")
            if not buttons or not buttons.first().display or buttons.first().disabled:
                continue
            button = buttons.first()
            button.focus()
            await pilot.pause()
            await pilot.press("enter")
            await _after(app, pilot, f"{step} after {bid}")


async def test_the_first_screen_and_a_resumed_one_say_where_typing_goes(tmp_path):
    ctx = demo_ctx(tmp_path, "en")
    app = CockpitApp(ctx=ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen.focused is None
        # A burst of keys says it once, not once per key.
        app.clear_notifications()
        await pilot.press(*"Xid 79 on node 3")
        await pilot.pause()
        assert sum(NOWHERE in str(n.message) for n in app._notifications) == 1


async def test_tab_into_a_filled_field_types_at_its_end_one_undo_and_in_the_history(tmp_path):
    """A, Escape then Tab lands on the filled Start time: the cursor is after its text
    (never inside it); a time holds one value, so what is typed replaces it, and one
    Ctrl+Z puts it back. A filled title reached by Tab after its cursor was left in its
    middle: typed at its end, and the edit is in the history with the title it
    replaced."""
    from datetime import timedelta

    from textual.widgets import Input

    ctx = demo_ctx(tmp_path, "en")
    ctx.session.set_time("start", ctx.clock.now() - timedelta(minutes=30))
    ctx.session.set_text("title", "P99 high")
    async with opened_demo(ctx, "A") as (app, pilot):
        screen = app.screen
        chain = screen.focus_chain
        start = screen.query_one("#time-start", Input)
        assert start.value
        before_start = chain[chain.index(start) - 1]
        before_start.focus()
        start.cursor_position = 3
        await pilot.press("escape", "tab")
        await pilot.pause()
        assert screen.focused is start
        good = start.value
        assert start.cursor_position == len(good)
        await pilot.press(*"13:04")
        await pilot.pause()
        assert start.value == "13:04"
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert start.value == good
        title = screen.query_one("#input-title", Input)
        assert title.value == "P99 high"
        title.focus()
        await pilot.pause()
        title.cursor_position = 2
        await pilot.press("tab", "shift+tab")
        await pilot.pause()
        assert screen.focused is title and title.cursor_position == len("P99 high")
        await pilot.press(*" on node 3", "tab")
        await pilot.pause()
        assert ctx.session.incident.title == "P99 high on node 3"
        *_, last = [h for h in ctx.session.incident.history if h.target == "title"]
        assert last.new == "P99 high on node 3" and last.old


@pytest.mark.parametrize("size", [(160, 48), (80, 24)])
async def test_h_after_logging_an_experiment_focus_waits_in_its_result(tmp_path, size):
    """H's "Log experiment": the new row is selected and its empty "after" field takes
    focus (what comes next is its result), not the first field of a new draft."""
    from textual.widgets import DataTable, Input

    ctx = demo_ctx(tmp_path, "en")
    async with opened_demo(ctx, "H", size) as (app, pilot):
        screen = app.screen
        screen.query_one("#exp-variable", Input).focus()
        await pilot.press(*"max_num_seqs", "tab", *"256", "tab", *"128", "enter")
        await pilot.pause()
        await pilot.pause()
        assert len(ctx.session.incident.experiments) == 1
        after = screen.query_one("#exp-after", Input)
        assert screen.focused is after and after.value == ""
        table = screen.query_one("#exp-table", DataTable)
        assert table.cursor_row == table.row_count - 1
        # Where typing goes is in sight, named with the experiment, and said.
        body = screen.query_one("#step-body")
        await pilot.pause(0.1)
        assert body.content_region.contains_region(after.region)
        label = str(screen.query_one("#exp-after-label").render())
        assert "result of experiment 1 (max_num_seqs" in label, label
        said = [str(n.message) for n in app._notifications]
        assert any("result of experiment 1" in s and "goes to" in s for s in said), said
        await pilot.press(*"190 ms", "enter")
        await pilot.pause()
        assert ctx.session.incident.experiments[0].after == "190 ms"
        assert screen.query_one("#exp-variable", Input).value == ""


async def test_a_resumed_incident_says_where_typing_goes(tmp_path):
    """``--resume`` opens the step the incident was left on with nothing focused: a key
    typed there says, in the incident's language, that it went nowhere."""
    from testkit import make_ctx

    first = make_ctx(tmp_path / "left", lang="zh")
    first.session.visit("E")
    left = first.session.incident.model_copy(deep=True)
    again = make_ctx(tmp_path / "resumed", lang="zh", incident=left)
    app = CockpitApp(ctx=again)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.current_step() == "E" and app.screen.focused is None
        await pilot.press("x")
        await pilot.pause()
        assert any("没有焦点" in str(n.message) for n in app._notifications)
        assert again.session.incident.path == left.path
