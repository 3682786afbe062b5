"""``cockpit analyze`` (steps C–F, the window's history and the conclusion) on the lost-GPU
incident against the slowest single query it sends, with network latency injected in front
of a real Prometheus, as a ratio measured in the same run.

Target: analyze wall / its slowest single query ≤ 1.5×.

The same queries fired at once by one source without any analysis (:func:`_one_wave`)
are timed in every repeat too: the floor an analysis that sends everything in one wave
meets on this machine, where the server's and the client's CPU work (not the rounds of
latency) bounds the wall. The analysis is also compared with its slowest query as it ran
inside it (``timing.stats.slowest_s``, the query's own duration under the load of the
others): what the analysis adds to its longest round trip (dependent rounds, the work
after the last answer).

Prometheus here runs on the client's own cores: the ~150 queries' server work and the
client's decoding share them, so the wall is at least the latency plus their CPU time
over the cores, however cheap the slowest query is.

The queries are those one analysis sends (recorded through a delegating source); each is
then timed alone, one by one, and the slowest of them is timed alone again in every repeat,
back to back with an analysis, so that drift of the machine between repeats cancels out of
the paired ratio. Latency is added at the TCP level as in ``bench_drilldown`` (a separate
relay process that only delays the bytes a client sends).

The server holds the history as a Prometheus in production does: one block with every
series, no query log (:func:`cockpit.scenarios.promserver.start` ``single_block``,
``query_log``). The tests' servers hold one overlapping block per part of the backfill
and log every query; Prometheus compacts those blocks about a minute after it starts,
which would land in the middle of the repeats here.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DELAY_S = 0.25
"""One-way latency added to every request (a distant Prometheus/Thanos)."""
REPEATS = 11
SCENARIO = "gpu_lost"


class _Recorder:
    """A metrics source that records every query it forwards (range, instant, raw samples)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    async def range(self, *args: Any, **kw: Any) -> Any:
        self.calls.append(("range", args))
        return await self.inner.range(*args, **kw)

    async def instant(self, *args: Any, **kw: Any) -> Any:
        self.calls.append(("instant", args))
        return await self.inner.instant(*args, **kw)

    async def samples(self, *args: Any, **kw: Any) -> Any:
        self.calls.append(("samples", args))
        return await self.inner.samples(*args, **kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _context(
    url: str, now: float, scope: dict[str, str], record: bool = False, span: str = "2h"
) -> Any:
    from cockpit.clock import Clock
    from cockpit.config import PrometheusSettings, ServiceSettings, Settings
    from cockpit.context import AppContext
    from cockpit.models import from_epoch
    from cockpit.sources.base import Sources
    from cockpit.sources.prometheus import PrometheusSource

    settings = Settings(
        prometheus=PrometheusSettings(url=url, timeout_s=60),
        service=ServiceSettings(namespace=scope["namespace"], deployment=scope["deployment"]),
    )
    src: Any = PrometheusSource(settings.prometheus)
    if record:
        src = _Recorder(src)
    ctx = AppContext(
        settings=settings,
        sources=Sources(metrics=src),
        clock=Clock(frozen_at=from_epoch(now)),
        lang="en",
    )
    ctx.metrics.window_span = span
    return ctx


async def _analysis(
    url: str,
    now: float,
    scope: dict[str, str],
    record: bool = False,
    cause: str = "gpu_lost",
    span: str = "2h",
) -> Any:
    """One analysis (detection first, outside the timing, as every screen shares it) that
    must conclude ``cause``: ``(wall s, recorded calls or None, its slowest query's own
    duration s)``."""
    from cockpit.collect.analyze import run_analysis
    from cockpit.collect.base import detection_for
    from cockpit.collect.cache import screen_window

    ctx = _context(url, now, scope, record, span)
    window = screen_window(ctx)
    await detection_for(ctx, window.end)
    src = ctx.sources.metrics
    if record:
        src.calls.clear()
    t0 = time.perf_counter()
    report = await run_analysis(ctx, window)
    wall = time.perf_counter() - t0
    await src.close()
    assert report.conclusion.cause == cause, report.conclusion.cause
    return wall, (list(src.calls) if record else None), report.timing.stats.slowest_s


async def _alone(url: str, now: float, scope: dict[str, str], call: Any) -> float:
    """One recorded query alone, from a new source."""
    ctx = _context(url, now, scope)
    src = ctx.sources.metrics
    kind, args = call
    t0 = time.perf_counter()
    await getattr(src, kind)(*args)
    wall = time.perf_counter() - t0
    await src.close()
    return wall


async def _one_wave(url: str, now: float, scope: dict[str, str], calls: list[Any]) -> float:
    """Every recorded query fired at once from a new source, no analysis: the floor an
    analysis sending them in one wave meets on this machine (the server's and the
    client's work on its CPUs, after one latency)."""
    ctx = _context(url, now, scope)
    src = ctx.sources.metrics
    t0 = time.perf_counter()
    await asyncio.gather(*(getattr(src, kind)(*args) for kind, args in calls))
    wall = time.perf_counter() - t0
    await src.close()
    return wall


def main() -> list[str]:
    from cockpit.scenarios import get_scenario
    from cockpit.scenarios.promserver import start
    from tests.backends.tcpdelay import TcpDelayProcess

    scenario = get_scenario(SCENARIO)
    scope = scenario.scope
    with (
        tempfile.TemporaryDirectory() as tmp,
        start(scenario, Path(tmp), single_block=True, query_log=False) as srv,
    ):
        u = urllib.parse.urlsplit(srv.url)
        assert u.hostname and u.port
        relay = TcpDelayProcess(u.hostname, u.port, DELAY_S)
        with relay as url:
            _, calls, _ = asyncio.run(_analysis(url, scenario.now, scope, record=True))
            timed = [(asyncio.run(_alone(url, scenario.now, scope, c)), c) for c in calls]
            _, slowest_call = max(timed, key=lambda x: x[0])
            alone: list[float] = []
            walls: list[float] = []
            waves: list[float] = []
            inside: list[float] = []
            for _ in range(REPEATS):
                alone.append(asyncio.run(_alone(url, scenario.now, scope, slowest_call)))
                wall, _, slowest_inside = asyncio.run(_analysis(url, scenario.now, scope))
                walls.append(wall)
                inside.append(slowest_inside)
                waves.append(asyncio.run(_one_wave(url, scenario.now, scope, calls)))
    paired = statistics.median(w / a for w, a in zip(walls, alone, strict=True))
    floor = statistics.median(w / a for w, a in zip(waves, alone, strict=True))
    own = statistics.median(w / a for w, a in zip(walls, inside, strict=True))
    return [
        f"analyze on the {SCENARIO} incident: {len(calls)} queries, "
        f"+{DELAY_S * 1000:.0f} ms one-way latency each ({relay.implementation} relay); "
        f"medians of {REPEATS} runs",
        f"analyze wall / its slowest single query alone (target <= 1.5x): "
        f"{statistics.median(walls):.3f} s / {statistics.median(alone):.3f} s; "
        f"median of the paired ratios {paired:.2f}x",
        f"one by one the same queries take {sum(t for t, _ in timed):.2f} s",
        f"the same queries fired at once, without analysis (the floor of one wave here): "
        f"{statistics.median(waves):.3f} s; median of the paired ratios {floor:.2f}x",
        f"analyze wall / its slowest query as it ran inside the analysis: "
        f"{statistics.median(walls):.3f} s / {statistics.median(inside):.3f} s; "
        f"median of the paired ratios {own:.2f}x",
    ]


if __name__ == "__main__":
    for line in main():
        print(line)
