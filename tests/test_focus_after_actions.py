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
from demo_ctx import demo_ctx

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


@pytest.mark.parametrize("step", list(STEP_SCREENS))
async def test_after_every_button_the_next_keys_have_a_visible_place(tmp_path, step):
    ctx = demo_ctx(tmp_path, "en")
    app = CockpitApp(ctx=ctx, start_step=step)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
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
