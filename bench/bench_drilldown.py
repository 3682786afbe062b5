"""Full SLI drilldown (step C) wall time against the slowest single query, with network
latency injected in front of a real Prometheus, as ratios measured in the same run; and
against running the same queries one by one.

Target: drilldown wall / slowest single query ≤ 1.3×.

Latency is added at the TCP level by a separate process that only delays the bytes a
client sends (``tests/backends/tcpdelay.c``, an epoll relay, like ``tc netem``; the asyncio
relay of ``tcpdelay.py`` without gcc), so the injector takes next to no CPU from the
client and server it measures, as latency on a real link does not. Prometheus itself still runs on this machine and
shares its cores with the client, which a remote server would not; the bench therefore
also measures, in the same run, the *server floor*: the same queries fired at once over plain
sockets, with no HTTP library, reading the answers without parsing them.
``drilldown / floor`` is what cockpit adds on top of what this server and link allow.

Every figure is the median of :data:`REPEATS` runs; the slowest single query is the one
that took longest when the queries ran one by one, timed alone in each repeat, and each
ratio is the median over repeats of a drilldown against the slowest query alone of the
same repeat (back to back, so that drift of the machine between repeats cancels).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
import urllib.parse
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DELAY_S = 0.25
"""One-way latency added to every request (a distant Prometheus/Thanos)."""
REPEATS = 15
REPEATS_OTHER = 3


def _context(url: str, concurrency: int | None, now: float) -> Any:
    from cockpit.clock import Clock
    from cockpit.config import PrometheusSettings, ServiceSettings, Settings
    from cockpit.context import AppContext
    from cockpit.models import from_epoch
    from cockpit.sources.base import Sources
    from cockpit.sources.prometheus import PrometheusSource

    prom = PrometheusSettings(url=url, timeout_s=60)
    if concurrency is not None:
        prom = prom.model_copy(update={"max_concurrency": concurrency})
    settings = Settings(prometheus=prom, service=ServiceSettings(namespace="llm"))
    return AppContext(
        settings=settings,
        sources=Sources(metrics=PrometheusSource(settings.prometheus)),
        clock=Clock(frozen_at=from_epoch(now)),
        lang="en",
    )


def _window(ctx: Any) -> Any:
    from cockpit.collect.base import make_window

    return make_window(ctx.clock.now(), timedelta(hours=1), "quiet")


async def _drilldown(url: str, concurrency: int | None, now: float) -> tuple[float, int, float]:
    from cockpit.collect.base import detection_for
    from cockpit.collect.drilldown import collect_drilldown

    ctx = _context(url, concurrency, now)
    window = _window(ctx)
    # Detection (metric names) is shared by every screen: do it first, outside the timing.
    await detection_for(ctx, window.end)
    t0 = time.perf_counter()
    rep = await collect_drilldown(ctx, window)
    wall = time.perf_counter() - t0
    await ctx.sources.metrics.close()
    return wall, rep.queries, rep.slowest_s


async def _specs(url: str, now: float) -> list[Any]:
    from cockpit.collect.base import detection_for
    from cockpit.collect.signals import plan, range_specs
    from cockpit.models.signals import SIGNALS

    ctx = _context(url, None, now)
    window = _window(ctx)
    det = await detection_for(ctx, window.end)
    await ctx.sources.metrics.close()
    return range_specs(plan(det, {"namespace": "llm"}, window, SIGNALS), window)


async def _one_by_one(url: str, now: float) -> tuple[float, Any]:
    """Sequential total, and the query that took longest (through cockpit's source)."""
    ctx = _context(url, None, now)
    src = ctx.sources.metrics
    specs = await _specs(url, now)
    t0 = time.perf_counter()
    slowest, which = 0.0, specs[0]
    for s in specs:
        t1 = time.perf_counter()
        await src.range(s.query, s.start or s.end, s.end, s.step_s)
        if time.perf_counter() - t1 > slowest:
            slowest, which = time.perf_counter() - t1, s
    wall = time.perf_counter() - t0
    await src.close()
    return wall, which


async def _alone(url: str, now: float, spec: Any) -> float:
    """One query alone, from a new source (as a drilldown starts from one)."""
    ctx = _context(url, None, now)
    src = ctx.sources.metrics
    t0 = time.perf_counter()
    await src.range(spec.query, spec.start or spec.end, spec.end, spec.step_s)
    wall = time.perf_counter() - t0
    await src.close()
    return wall


async def _bare_burst(url: str, now: float) -> float:
    """The same range requests all at once over plain sockets, one HTTP/1.1 connection
    each, no HTTP library: answers read to the end, not parsed."""
    from cockpit.models import to_epoch

    specs = await _specs(url, now)
    u = urllib.parse.urlsplit(url)
    assert u.hostname and u.port

    async def one(s: Any) -> None:
        params = {
            "query": s.query,
            "start": f"{to_epoch(s.start or s.end):.3f}",
            "end": f"{to_epoch(s.end):.3f}",
            "step": f"{s.step_s:g}",
        }
        reader, writer = await asyncio.open_connection(u.hostname, u.port)
        target = f"/api/v1/query_range?{urllib.parse.urlencode(params)}"
        writer.write(
            f"GET {target} HTTP/1.1\r\nHost: {u.netloc}\r\nConnection: close\r\n\r\n".encode()
        )
        answer = await reader.read()
        writer.close()
        if not answer.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(f"floor request failed: {answer[:200]!r}")

    t0 = time.perf_counter()
    await asyncio.gather(*(one(s) for s in specs))
    return time.perf_counter() - t0


def main() -> list[str]:
    from cockpit.config import PrometheusSettings
    from cockpit.scenarios import get_scenario
    from cockpit.scenarios.promserver import start
    from tests.backends.tcpdelay import TcpDelayProcess

    default = PrometheusSettings().max_concurrency
    scenario = get_scenario("thermal_replica")
    with tempfile.TemporaryDirectory() as tmp, start(scenario, Path(tmp)) as srv:
        u = urllib.parse.urlsplit(srv.url)
        assert u.hostname and u.port
        relay = TcpDelayProcess(u.hostname, u.port, DELAY_S)
        with relay as url:
            seq, which = asyncio.run(_one_by_one(url, scenario.now))
            # Each repeat runs the slowest query alone, the floor and the drilldowns back
            # to back, so that a noisy moment of the machine weighs on all of them.
            alone: list[float] = []
            floors: list[float] = []
            runs: dict[int, list[tuple[float, int, float]]] = {default: [], 32: [], 8: []}
            for i in range(REPEATS):
                alone.append(asyncio.run(_alone(url, scenario.now, which)))
                floors.append(asyncio.run(_bare_burst(url, scenario.now)))
                for conc, got in runs.items():
                    if conc == default or i < REPEATS_OTHER:
                        got.append(asyncio.run(_drilldown(url, conc, scenario.now)))
            slowest = statistics.median(alone)
            floor = statistics.median(floors)
            walls = {c: statistics.median(w for w, _, _ in r) for c, r in runs.items()}
            in_run = {c: statistics.median(w / s for w, _, s in r) for c, r in runs.items()}
            # Each repeat's drilldown against the slowest query alone of the same repeat:
            # pairs measured back to back share the machine's state, so drift between
            # repeats cancels out of the ratio.
            paired = {
                c: statistics.median(w / a for (w, _, _), a in zip(r, alone, strict=False))
                for c, r in runs.items()
            }
            paired_floor = statistics.median(f / a for f, a in zip(floors, alone, strict=True))
            n = runs[default][0][1]
    lines = [
        f"{n} queries of the C screen, +{DELAY_S * 1000:.0f} ms one-way latency each "
        f"({relay.implementation} relay); "
        f"slowest single query alone {slowest:.3f} s; medians of {REPEATS} runs "
        f"({REPEATS_OTHER} for the lower concurrencies)"
    ]
    for conc, wall in walls.items():
        note = " (default; target <= 1.3x)" if conc == default else ""
        lines.append(
            f"drilldown wall / slowest single query, max_concurrency={conc}{note}: "
            f"{wall:.3f} s / {slowest:.3f} s; median of the paired ratios {paired[conc]:.2f}x"
        )
    lines.append(
        f"floor (same queries at once over plain sockets, no HTTP library, no parsing): {floor:.3f} s = "
        f"{paired_floor:.2f}x the slowest query; drilldown (default) / floor = "
        f"{walls[default] / floor:.2f}x"
    )
    lines.append(
        f"drilldown wall / slowest query of the same run (default): {in_run[default]:.2f}x "
        "(what the screen adds beyond its slowest query under the burst)"
    )
    lines.append(
        f"one by one: {seq:.2f} s; concurrent (default) is {seq / walls[default]:.1f}x faster"
    )
    return lines


if __name__ == "__main__":
    for line in main():
        print(line)
