"""A playbook on a replayed bundle (no fixture data): in ``cockpit --demo``, the TTFT P99
playbook's automated checks read the recorded metrics and find the worked example's cause
— queue time up with the arrival rate down (queueing, not load) — and TTFT and TPOT both
worse (the seed's "二者都变差" branch), with every replica even (a shared cause)."""

from __future__ import annotations

from cockpit.app import CockpitApp
from cockpit.incident import ItemStatus
from cockpit.screens.playbook import PlaybookScreen
from demo_ctx import demo_ctx


async def test_ttft_playbook_on_the_demo_bundle(tmp_path):
    ctx = demo_ctx(tmp_path, "en")
    app = CockpitApp(ctx=ctx, start_step="C")
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        app.open_playbook("ttft_spike")
        for _ in range(4):
            await app.workers.wait_for_complete()
            await pilot.pause()
        screen = app.screen
        assert isinstance(screen, PlaybookScreen)
        queue = screen.results["queue"]
        assert queue.status is ItemStatus.PROBLEM
        text = " ".join(str(e) for e in queue.evidence) + " " + str(queue.finding_args)
        assert "480" in text or "0.48" in text, text  # queue time P99 480 ms, measured
        tpot = screen.results["tpot_rule"]
        assert tpot.status is ItemStatus.PROBLEM, tpot
        assert "no_signal" not in tpot.finding_key
        # Every replica degraded together in the worked example: no single slow replica.
        slow = screen.results["slow_replica"]
        assert slow.status is ItemStatus.OK and slow.finding_key.endswith("replicas_even")
