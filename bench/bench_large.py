"""The 200-replica service (``large_throttled_gpu``: 200 vLLM replicas on 48 nodes, about
38 k series, a one-hour window) against a real Prometheus on this machine, as ratios and
times measured in the same run.

- ``cockpit analyze`` against the sum of its distinct queries run one by one against the
  same Prometheus (each from a new client, none in parallel). Target: ≤ 1.5×. The queries
  are those one analysis sends (recorded below the query runner, which sends each once);
  the analysis is timed in process, after profile detection (every screen shares it).
- TUI step C: from the key that opens C (on a step that queries nothing) until C's
  signal table is on screen with every row's value and verdict, in a headless app of
  170×50. Target: ≤ 1.5 s. Each run uses a new context, so nothing is answered from an
  earlier run's cache. Reported beside it: until the hardware layer's verdict also covers
  the window's GPU history (C shows that layer as pending until then).
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


async def _step_c(url: str, scenario: Any, state: Path) -> tuple[float, float]:
    """Seconds from asking for step C (the app idle on step H) to C's table showing every
    row with its value and verdict, and to the hardware verdict covering the window."""
    from textual.widgets import DataTable

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

    def rows_shown() -> bool:
        views = app.screen.query(DrilldownView)
        if not views or views.first().displayed is None:
            return False
        summaries = views.first().displayed.drilldown.summaries
        table = app.screen.query_one("#dd-table", DataTable)
        if not summaries or table.row_count != len(summaries):
            return False
        return all(table.get_row_at(i)[7] for i in range(table.row_count))

    def window_checked() -> bool:
        view = app.screen.query_one(DrilldownView)
        return bool(view.data is not None and view.data.window_checked)

    async with app.run_test(size=(170, 50)) as pilot:
        await pilot.pause()
        t0 = time.perf_counter()
        app.goto("C")
        times = []
        for done in (rows_shown, window_checked):
            while not done():
                await pilot.pause(0.01)
                if time.perf_counter() - t0 > 120:
                    raise TimeoutError(f"step C never got to {done.__name__}")
            times.append(time.perf_counter() - t0)
        await pilot.pause()
    await ctx.sources.close()
    return times[0], times[1]


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
    rows, checked = [r for r, _ in step_c], [c for _, c in step_c]
    one_by_one = sum(alone)
    wall = statistics.median(walls)
    return [
        f"{SCENARIO}: 200 replicas on 48 nodes, --window {WINDOW}; medians of {REPEATS} runs",
        f"analyze wall / its {len(calls)} distinct queries one by one (target <= 1.5x): "
        f"{wall:.2f} s / {one_by_one:.2f} s = {wall / one_by_one:.2f}x "
        f"(slowest alone {max(alone):.2f} s; runs {', '.join(f'{w:.2f}' for w in walls)} s)",
        f"TUI step C until every row shows its value and verdict (target <= 1.5 s): "
        f"{statistics.median(rows):.2f} s (runs {', '.join(f'{w:.2f}' for w in rows)} s)",
        f"TUI step C until the hardware verdict also covers the window's GPU history: "
        f"{statistics.median(checked):.2f} s (runs {', '.join(f'{w:.2f}' for w in checked)} s)",
    ]


if __name__ == "__main__":
    for line in main():
        print(line)
