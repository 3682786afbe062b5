"""The 200-replica service (``large_throttled_gpu``: 200 vLLM replicas on 48 nodes, about
38 k series, a one-hour window) against a real Prometheus on this machine, as ratios and
times measured in the same run.

- ``cockpit analyze`` against the sum of its distinct queries run one by one against the
  same Prometheus (each from a new client, none in parallel). Target: ≤ 1.5×. The queries
  are those one analysis sends (recorded below the query runner, which sends each once);
  the analysis is timed in process, after profile detection (every screen shares it).
- TUI step C: from the key that opens C (on a step that queries nothing) until C's
  signal table is on screen, in a headless app of 170×50. Target: ≤ 1.5 s. Each run uses
  a new context, so nothing is answered from an earlier run's cache.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
for p in (HERE.parent, HERE):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import bench_analyze as ba  # noqa: E402

SCENARIO = "large_throttled_gpu"
REPEATS = 3


async def _step_c(url: str, scenario: Any, state: Path) -> float:
    """Seconds from asking for step C (the app idle on step H) to C's table being shown."""
    from cockpit.app import CockpitApp
    from cockpit.scenarios.large import WINDOW
    from cockpit.ui.drilldown_view import DrilldownView
    from tests.lib.testkit import make_ctx

    base = ba._context(url, scenario.now, scenario.scope, span=WINDOW)
    ctx = make_ctx(
        state,
        lang="en",
        sources=base.sources,
        settings=base.settings,
        frozen_at=base.clock.now(),
    )
    ctx.metrics.window_span = WINDOW
    ctx.panels = []
    app = CockpitApp(ctx=ctx, start_step="H")
    async with app.run_test(size=(170, 50)) as pilot:
        await pilot.pause()
        t0 = time.perf_counter()
        app.goto("C")
        while True:
            await pilot.pause(0.01)
            views = app.screen.query(DrilldownView)
            if views and views.first().data is not None:
                break
            if time.perf_counter() - t0 > 120:
                raise TimeoutError("step C never showed its table")
        await pilot.pause()
        wall = time.perf_counter() - t0
    await ctx.sources.close()
    return wall


def main() -> list[str]:
    from cockpit.scenarios import get_scenario
    from cockpit.scenarios.large import WINDOW
    from cockpit.scenarios.promserver import start

    sc = get_scenario(SCENARIO)
    cause = sc.ground_truth.cause if sc.ground_truth else ""
    with tempfile.TemporaryDirectory() as tmp, start(sc, Path(tmp)) as srv:
        url = srv.url
        _, calls = asyncio.run(ba._analysis(url, sc.now, sc.scope, True, cause, WINDOW))
        alone = [asyncio.run(ba._alone(url, sc.now, sc.scope, c)) for c in calls]
        walls = [
            asyncio.run(ba._analysis(url, sc.now, sc.scope, False, cause, WINDOW))[0]
            for _ in range(REPEATS)
        ]
        step_c = [asyncio.run(_step_c(url, sc, Path(tmp) / f"state{i}")) for i in range(REPEATS)]
    one_by_one = sum(alone)
    wall = statistics.median(walls)
    return [
        f"{SCENARIO}: 200 replicas on 48 nodes, --window {WINDOW}; medians of {REPEATS} runs",
        f"analyze wall / its {len(calls)} distinct queries one by one (target <= 1.5x): "
        f"{wall:.2f} s / {one_by_one:.2f} s = {wall / one_by_one:.2f}x "
        f"(slowest alone {max(alone):.2f} s; runs {', '.join(f'{w:.2f}' for w in walls)} s)",
        f"TUI step C until its table is shown (target <= 1.5 s): "
        f"{statistics.median(step_c):.2f} s (runs {', '.join(f'{w:.2f}' for w in step_c)} s)",
    ]


if __name__ == "__main__":
    for line in main():
        print(line)
