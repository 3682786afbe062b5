"""Every key a step binds either acts (the incident, the screen, the step or focus
changes) or says why it cannot, in the incident's language: pressed on each step with no
data source (nothing to pin, mark, copy or compare), with focus in the widget that binds
it, and with nothing focused."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widget import Widget

from cockpit.app import STEP_SCREENS, CockpitApp
from cockpit.screens.base import StepScreen
from testkit import make_ctx

SKIP = {"tab", "shift+tab", "ctrl+c", "super+c", "ctrl+q", "escape"}
"""Focus moves and copying the selection (Textual's own), quitting, leaving a field."""


def own_keys(app: CockpitApp) -> list[tuple[Widget | None, str]]:
    """The keys cockpit binds on this step: the app's F-keys and chords (pressed with
    nothing focused) and each chord of a widget of the step (pressed inside it)."""
    keys: list[tuple[Widget | None, str]] = []
    for key in app._bindings.key_to_bindings:
        if key not in SKIP:
            keys.append((None, key))
    for widget in [app.screen, *app.screen.query("*")]:
        declared = {
            key
            for cls in type(widget).__mro__
            if cls.__module__.startswith("cockpit") and "BINDINGS" in cls.__dict__
            for binding in cls.__dict__["BINDINGS"]
            for key in getattr(binding, "key", "").split(",")
        }
        for key in sorted(declared):
            if key in SKIP or not key.startswith(("alt+", "ctrl+", "f")):
                continue
            keys.append((None if widget is app.screen else widget, key))
    return list(dict.fromkeys(keys))


def state(app: CockpitApp) -> tuple[Any, ...]:
    incident = app.ctx.session.incident.model_dump(mode="json")
    incident.pop("updated_at")
    return (incident, app.screen, app.current_step(), app.screen.focused)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("step", list(STEP_SCREENS))
async def test_every_bound_key_of_a_step_acts_or_says_why_not(tmp_path, step, lang):
    ctx = make_ctx(tmp_path, lang=lang)
    ctx.panels = None  # every panel, each without its source
    app = CockpitApp(ctx=ctx, start_step=step)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        home = app.screen
        assert isinstance(home, StepScreen)
        keys = own_keys(app)
        assert keys
        for owner, key in keys:
            while app.screen is not home and len(app.screen_stack) > 1:
                app.pop_screen()
                await pilot.pause()
            if app.current_step() != step:
                app.goto(step)
                await pilot.pause()
                home = app.screen
            if owner is not None:
                inside = [w for w in home.focus_chain if w is owner or owner in w.ancestors]
                if not inside:
                    continue  # nothing to focus in it: the app's notice covers the chord
                home.set_focus(inside[0], scroll_visible=False)
            else:
                home.set_focus(None, scroll_visible=False)
            await pilot.pause()
            app.clear_notifications()
            before = state(app)
            await pilot.press(key)
            await app.workers.wait_for_complete()
            await pilot.pause()
            said = [str(n.message) for n in app._notifications]
            where = (step, key, owner)
            assert said or state(app) != before, where
