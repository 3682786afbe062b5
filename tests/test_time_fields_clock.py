"""A time of day typed into the incident's times is read on the incident clock: with
``--at`` that clock runs on from the instant investigated, so a time typed a few minutes
after that instant (a mitigation just done) is that day's, never the day before."""

from __future__ import annotations

from datetime import datetime, timedelta

from textual.widgets import Input, Static

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

        async def typed_at(minutes: int) -> tuple[str, datetime | None]:
            """The time of day ``minutes`` after the instant investigated, typed in."""
            field.focus()
            await pilot.pause()
            typed = (FROZEN + timedelta(minutes=minutes)).strftime("%H:%M")
            await pilot.press(*typed, "tab")
            await pilot.pause()
            return typed, ctx.session.incident.times.mitigate

        typed, got = await typed_at(11)
        assert got is not None and got.date() == FROZEN.date(), got
        assert got.strftime("%H:%M") == typed
        # a time later than the incident clock is still the day before (not the future)
        _, got = await typed_at(30)
        assert got is not None and got.date() == (FROZEN - timedelta(days=1)).date(), got
        # …and the screen says so under the fields, with the full time it was read as
        problems = str(app.screen.query_one("#times-problems", Static).render())
        assert "read as the day before" in problems, problems
        assert got.strftime("%Y-%m-%d %H:%M") in problems
        # a time that is today's says nothing of the kind
        await typed_at(11)
        problems = str(app.screen.query_one("#times-problems", Static).render())
        assert "day before" not in problems, problems
