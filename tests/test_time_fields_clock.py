"""A time of day typed into the incident's times is read on the incident clock: with
``--at`` that clock runs on from the instant investigated, so a time typed a few minutes
after that instant (a mitigation just done) is that day's, never the day before."""

from __future__ import annotations

from datetime import timedelta

from textual.widgets import Input

from cockpit.app import CockpitApp
from testkit import FROZEN, make_ctx


async def test_a_time_after_the_instant_investigated_is_that_days(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    # twelve minutes of the incident have gone by since the instant investigated
    ctx.clock.continue_after(FROZEN + timedelta(minutes=12))
    assert ctx.clock.logged() > FROZEN + timedelta(minutes=11)
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        field = app.screen.query_one("#time-mitigate", Input)
        field.focus()
        await pilot.pause()
        typed = (FROZEN + timedelta(minutes=11)).strftime("%H:%M")
        await pilot.press(*typed, "tab")
        await pilot.pause()
        got = ctx.session.incident.times.mitigate
        assert got is not None and got.date() == FROZEN.date(), got
        assert got.strftime("%H:%M") == typed
        # a time later than the incident clock is still the day before (not the future)
        field.focus()
        await pilot.pause()
        later = (FROZEN + timedelta(minutes=30)).strftime("%H:%M")
        await pilot.press(*later, "tab")
        await pilot.pause()
        got = ctx.session.incident.times.mitigate
        assert got is not None and got.date() == (FROZEN - timedelta(days=1)).date(), got
