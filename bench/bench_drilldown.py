"""Full SLI drilldown (step C) wall time against the slowest single query, with latency
injected in front of a real Prometheus (the fault proxy of the test suite), as ratios
measured in the same run; and against running the same queries one by one.

Target (issue 3): drilldown wall / slowest single query ≤ 1.3× — reachable when every
query of the screen can be in flight at once, i.e. ``prometheus.max_concurrency`` at least
the number of queries; reported for the default (8) and for 64.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DELAY_S = 0.25
"""Latency added to every query by the proxy (a distant Prometheus/Thanos)."""


async def _drilldown(url: str, concurrency: int, now: float) -> tuple[float, float, int]:
    from cockpit.clock import Clock
    from cockpit.collect.base import make_window
    from cockpit.collect.drilldown import collect_drilldown
    from cockpit.config import PrometheusSettings, ServiceSettings, Settings
    from cockpit.context import AppContext, Sources
    from cockpit.models import from_epoch
    from cockpit.sources.prometheus import PrometheusSource

    settings = Settings(
        prometheus=PrometheusSettings(url=url, max_concurrency=concurrency, timeout_s=60),
        service=ServiceSettings(namespace="llm"),
    )
    src = PrometheusSource(settings.prometheus)
    ctx = AppContext(
        settings=settings,
        sources=Sources(metrics=src),
        clock=Clock(frozen_at=from_epoch(now)),
        lang="en",
    )
    window = make_window(ctx.clock.now(), __import__("datetime").timedelta(hours=1), "quiet")
    # Detection (metric names) is shared by every screen: do it first, outside the timing.
    from cockpit.collect.base import detection_for

    await detection_for(ctx, window.end)
    t0 = time.perf_counter()
    rep = await collect_drilldown(ctx, window)
    wall = time.perf_counter() - t0
    await src.close()
    return wall, rep.slowest_s, rep.queries


async def _one_by_one(url: str, now: float) -> tuple[float, float]:
    from cockpit.analysis.profiles import SIGNALS
    from cockpit.clock import Clock
    from cockpit.collect.base import detection_for, make_window
    from cockpit.collect.signals import plan, range_specs
    from cockpit.config import PrometheusSettings, ServiceSettings, Settings
    from cockpit.context import AppContext, Sources
    from cockpit.models import from_epoch
    from cockpit.sources.prometheus import PrometheusSource

    settings = Settings(
        prometheus=PrometheusSettings(url=url, timeout_s=60),
        service=ServiceSettings(namespace="llm"),
    )
    src = PrometheusSource(settings.prometheus)
    ctx = AppContext(
        settings=settings,
        sources=Sources(metrics=src),
        clock=Clock(frozen_at=from_epoch(now)),
        lang="en",
    )
    window = make_window(ctx.clock.now(), __import__("datetime").timedelta(hours=1), "quiet")
    det = await detection_for(ctx, window.end)
    specs = range_specs(plan(det, {"namespace": "llm"}, window, SIGNALS), window)
    t0 = time.perf_counter()
    slowest = 0.0
    for s in specs:
        t1 = time.perf_counter()
        await src.range(s.query, s.start or s.end, s.end, s.step_s)
        slowest = max(slowest, time.perf_counter() - t1)
    wall = time.perf_counter() - t0
    await src.close()
    return wall, slowest


def main() -> list[str]:
    from cockpit.scenarios import get_scenario
    from cockpit.scenarios.promserver import start
    from tests.backends.faultproxy import Fault, FaultProxy

    scenario = get_scenario("thermal_replica")
    with tempfile.TemporaryDirectory() as tmp, start(scenario, Path(tmp)) as srv:
        proxy = FaultProxy(srv.url).start()
        try:
            proxy.add(Fault(path="/api/v1/query", delay_s=DELAY_S, times=None))
            lines = []
            # Baseline in the same run: the same queries one by one; the slowest of them
            # alone is the "slowest single query".
            seq, slowest = asyncio.run(_one_by_one(proxy.url, scenario.now))
            walls = {}
            for conc in (64, 8):
                wall, _, n = asyncio.run(_drilldown(proxy.url, conc, scenario.now))
                walls[conc] = wall
                lines.append(
                    f"drilldown wall / slowest single query alone (max_concurrency={conc}, {n} queries, "
                    f"+{DELAY_S * 1000:.0f} ms each): {wall:.2f} s / {slowest:.2f} s = {wall / slowest:.2f}x"
                    + ("  (target <= 1.3x)" if conc == 64 else "")
                )
            lines.append(
                f"one by one: {seq:.2f} s; concurrent is {seq / walls[64]:.1f}x (64) and "
                f"{seq / walls[8]:.1f}x (8) faster"
            )
            return lines
        finally:
            proxy.stop()


if __name__ == "__main__":
    for line in main():
        print(line)
