"""Step I on a frozen clock (a replay, an ``--at`` investigation): a recovery check that ran
before the mitigation says that this data cannot show the state after it."""

from __future__ import annotations

from datetime import timedelta

from cockpit.app import CockpitApp
from cockpit.clock import Clock
from cockpit.i18n import t
from testkit import FROZEN, make_ctx


async def test_a_check_before_the_mitigation_on_frozen_data_says_where_the_data_ends(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    inc = ctx.session.incident
    inc.times.mitigate = FROZEN + timedelta(minutes=6)
    inc.recovery.checked_at, inc.recovery.recovered = FROZEN, False
    app = CockpitApp(ctx=ctx, start_step="I")
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        text = app.screen._recovery_text()
    ends = t("verify.data_ends", "en", at="2026-11-29 21:00:00Z")
    assert ends in text, text
    assert t("export.recovery.before_mitigate", "en", checked="X", at="Y").split("X")[0] in text
    # live data goes on: nothing said about where it ends
    live = make_ctx(tmp_path / "live", lang="en")
    live.clock = Clock()
    live.session.incident.times.mitigate = live.clock.now() + timedelta(minutes=6)
    live.session.incident.recovery.checked_at = live.clock.now()
    app = CockpitApp(ctx=live, start_step="I")
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        assert "The data here ends" not in app.screen._recovery_text()
