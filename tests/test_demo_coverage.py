"""The shipped demo bundle answers every query the screens make: walking every step in
``cockpit --demo`` leaves no panel or view with a "not in this bundle" failure.

When this fails after a change to a screen's queries, rebuild the bundle with
``make demo-bundle``."""

from __future__ import annotations

from cockpit.app import CockpitApp
from cockpit.ui.metrics_common import MetricsView
from cockpit.ui.panel import Panel
from demo_ctx import demo_ctx


async def test_every_step_of_the_demo_is_answered_by_the_bundle(tmp_path):
    ctx = demo_ctx(tmp_path)
    app = CockpitApp(ctx=ctx, start_step="A")
    failures: list[str] = []
    async with app.run_test(size=(160, 60)) as pilot:
        for step in "ABCDEFGHI":
            app.goto(step)
            for _ in range(4):
                await app.workers.wait_for_complete()
                await pilot.pause()
            for widget in [*app.screen.query(Panel), *app.screen.query(MetricsView)]:
                failure = getattr(widget, "failure", None)
                if failure is not None:
                    failures.append(
                        f"{step} {type(widget).__name__}: {failure.kind.value}: {failure.message[:200]}"
                    )
    assert failures == []
