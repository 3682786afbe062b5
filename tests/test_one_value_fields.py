"""A field that holds one value (minutes, a time, a date, an experiment's value) takes
the first key typed after focus arrives as a new value: it replaces the value, never
adds to it, one Ctrl+Z puts the old value back, and the change history keeps it. Moving
the cursor or Backspace first edits the value in place."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

import pytest
from textual.widgets import Input

from cockpit.app import CockpitApp
from cockpit.session import HOLD_TARGET
from cockpit.ui.fields import ValueInput
from testkit import make_ctx


@asynccontextmanager
async def on_hold_field(tmp_path, lang: str = "en") -> AsyncIterator[tuple]:
    """Step I open at 120×40 with focus Tabbed into its hold minutes:
    ``(ctx, app, pilot, hold)``."""
    ctx = make_ctx(tmp_path, lang=lang)
    app = CockpitApp(ctx=ctx, start_step="I")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        hold = app.screen.query_one("#hold", Input)
        await _tab_into(app, pilot, hold)
        yield ctx, app, pilot, hold


async def _tab_into(app, pilot, field: Input) -> None:
    """Focus the stop before ``field``, then Tab: focus arrives as a user's Tab does."""
    chain = app.screen.focus_chain
    chain[chain.index(field) - 1].focus()
    await pilot.pause()
    await pilot.press("tab")
    await pilot.pause()
    assert app.screen.focused is field


async def test_typing_into_is_hold_minutes_replaces_them_and_ctrl_z_puts_them_back(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="I")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        hold = app.screen.query_one("#hold", Input)
        assert hold.value == "15"
        await _tab_into(app, pilot, hold)
        await pilot.press("1", "0")
        await pilot.pause()
        assert hold.value == "10"
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert hold.value == "15"
        await pilot.press("ctrl+y")
        await pilot.pause()
        assert hold.value == "10"
        await pilot.press("tab")
        await pilot.pause()
        assert ctx.session.incident.recovery.hold_minutes == 10
        [entry] = [h for h in ctx.session.incident.history if h.target == HOLD_TARGET]
        assert (entry.old, entry.new) == (15, 10)


@pytest.mark.parametrize("keys", [["end"], ["left", "right"], ["home", "end"], ["backspace"]])
async def test_moving_the_cursor_or_backspace_first_edits_the_value_in_place(tmp_path, keys):
    async with on_hold_field(tmp_path) as (_ctx, _app, pilot, hold):
        await pilot.press(*keys, "0")
        await pilot.pause()
        assert hold.value == ("10" if keys == ["backspace"] else "150")


async def test_a_time_reached_by_tab_is_replaced_by_the_time_typed(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    ctx.session.set_time("start", ctx.clock.now() - timedelta(minutes=30))
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        start = app.screen.query_one("#time-start", Input)
        good = start.value
        await _tab_into(app, pilot, start)
        await pilot.press(*"13:04")
        await pilot.pause()
        assert start.value == "13:04"
        # One step back: the time as it was when Tab arrived.
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert start.value == good
        await pilot.press("ctrl+y", "enter")
        await pilot.pause()
        assert start.value.endswith("13:04:00Z")
        assert ctx.session.incident.times.start is not None
        assert ctx.session.incident.times.start.strftime("%H:%M") == "13:04"


# Every field holding one value, on the step that shows it: (step, field id, value put in).
ONE_VALUE = [
    ("A", "time-detect", "2026-11-29 12:40:00Z"),
    ("B", "chg-when", "12:30"),
    ("H", "exp-from", "256"),
    ("H", "exp-to", "128"),
    ("H", "exp-before", "620 ms"),
    ("I", "hold", "15"),
    ("I", "act-deadline", "2026-12-15"),
    ("I", "time-recover", "2026-11-29 13:40:00Z"),
]


@pytest.mark.parametrize(("step", "field_id", "value"), ONE_VALUE)
async def test_every_one_value_field_replaces_its_value_when_typed_into(
    tmp_path, step, field_id, value
):
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step=step)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        field = app.screen.query_one(f"#{field_id}", Input)
        assert isinstance(field, ValueInput)
        field.value = value
        await _tab_into(app, pilot, field)
        await pilot.press("9")
        await pilot.pause()
        assert field.value == "9"
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert field.value == value


async def test_a_prose_field_reached_by_tab_still_takes_typing_at_its_end(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    ctx.session.set_text("title", "P99 high")
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        title = app.screen.query_one("#input-title", Input)
        assert not isinstance(title, ValueInput)
        await _tab_into(app, pilot, title)
        await pilot.press(*" on pod a")
        await pilot.pause()
        assert title.value == "P99 high on pod a"


async def test_a_click_in_a_one_value_field_edits_the_value_where_clicked(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="I")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        hold = app.screen.query_one("#hold", Input)
        await pilot.click("#hold", offset=(1, 0))
        await pilot.pause()
        assert app.screen.focused is hold
        await pilot.press("0")
        await pilot.pause()
        assert hold.value == "105"
