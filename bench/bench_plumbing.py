"""Metrics plumbing: backfill, query latency, evidence bundles (ratios vs same-run baselines).

- backfill: the scenario generator's parallel one-block backfill vs promtool on the same
  OpenMetrics as one file with default 2 h blocks (the straightforward way);
- query: ``PrometheusSource.instant`` vs a bare ``httpx`` GET of the same query;
- concurrency: 16 queries through a fault proxy adding 50 ms each, the source's bounded
  concurrency vs one at a time;
- replay: opening the shipped demo bundle vs only decompressing and splitting it, and a
  replayed instant (derived from a recorded range) vs the live query.
"""

from __future__ import annotations

import asyncio
import gzip
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx

from cockpit.config import PrometheusSettings
from cockpit.models import from_epoch
from cockpit.scenarios import get_scenario, promserver
from cockpit.scenarios.build_demo import DEMO_BUNDLE
from cockpit.sources.bundle import open_replay
from cockpit.sources.prometheus import PrometheusSource
from tests.backends.faultproxy import Fault, FaultProxy


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def bench_backfill(lines: list[str]) -> None:
    sc = get_scenario("worked_example")
    with tempfile.TemporaryDirectory() as tmp:
        stats = promserver.backfill(sc, Path(tmp) / "ours")
        ours = stats.generate_s + stats.promtool_s
        ms = sc.build()
        om = Path(tmp) / "all.om"
        with om.open("w") as f:
            ms.write_openmetrics(f)
        t0 = time.perf_counter()
        subprocess.run(
            [
                promserver.tool("promtool"),
                "tsdb",
                "create-blocks-from",
                "openmetrics",
                str(om),
                str(Path(tmp) / "naive"),
            ],
            check=True,
            capture_output=True,
        )
        naive = time.perf_counter() - t0
        t0 = time.perf_counter()
        with promserver.start(sc, Path(tmp) / "srv", blocks=Path(tmp) / "ours") as srv:
            ready = srv.ready_s
        start_s = time.perf_counter() - t0
    lines.append(
        f"worked example: {stats.series} series, {stats.samples} samples; generate {stats.generate_s:.1f} s + "
        f"promtool {stats.promtool_s:.1f} s = {ours:.1f} s vs naive promtool alone {naive:.1f} s "
        f"(ratio {ours / naive:.2f}); start {start_s:.2f} s, ready {ready:.2f} s after exec"
    )


async def bench_queries(url: str, lines: list[str]) -> None:
    sc = get_scenario("worked_example")
    target = sc.target("p99_latency")
    at = from_epoch(target.at)
    src = PrometheusSource(PrometheusSettings(url=url))
    raw: list[float] = []
    ours: list[float] = []
    async with httpx.AsyncClient(base_url=url) as client:
        for _ in range(3):  # warm up
            await src.instant(target.query, at)
            await client.get(
                "/api/v1/query", params={"query": target.query, "time": str(target.at)}
            )
        for _ in range(30):
            t0 = time.perf_counter()
            r = await client.get(
                "/api/v1/query", params={"query": target.query, "time": str(target.at)}
            )
            r.json()
            raw.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            await src.instant(target.query, at)
            ours.append(time.perf_counter() - t0)
        rng: list[float] = []
        for _ in range(10):
            t0 = time.perf_counter()
            await src.range(target.query, from_epoch(sc.now - 7200), from_epoch(sc.now), 15)
            rng.append(time.perf_counter() - t0)
    await src.close()
    lines.append(
        f"instant P99 query: source {_median_ms(ours):.1f} ms vs bare httpx {_median_ms(raw):.1f} ms "
        f"(ratio {statistics.median(ours) / statistics.median(raw):.2f}); 2 h range @15 s: {_median_ms(rng):.1f} ms"
    )
    with FaultProxy(url) as proxy:
        proxy.add(Fault(path="/api/v1/query", delay_s=0.05))
        src = PrometheusSource(PrometheusSettings(url=proxy.url, max_concurrency=8))
        t0 = time.perf_counter()
        await asyncio.gather(*(src.instant(f"vector({i})", at) for i in range(16)))
        par = time.perf_counter() - t0
        t0 = time.perf_counter()
        for i in range(16):
            await src.instant(f"vector({i})", at)
        seq = time.perf_counter() - t0
        await src.close()
    lines.append(
        f"16 queries with +50 ms each: concurrent (max 8) {par * 1000:.0f} ms vs one at a time "
        f"{seq * 1000:.0f} ms (ratio {par / seq:.2f})"
    )


async def bench_replay(url: str, lines: list[str]) -> None:
    data = DEMO_BUNDLE.read_bytes()
    base: list[float] = []
    ours: list[float] = []
    for _ in range(5):
        t0 = time.perf_counter()
        gzip.decompress(data).decode().split("\n")
        base.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        replay = open_replay(DEMO_BUNDLE)
        ours.append(time.perf_counter() - t0)
    lines.append(
        f"demo bundle: {len(data)} bytes, {replay.call_count} calls; open {_median_ms(ours):.1f} ms vs "
        f"decompress+split {_median_ms(base):.1f} ms (ratio {statistics.median(ours) / statistics.median(base):.2f})"
    )
    sc = get_scenario("worked_example")
    target = sc.target("p99_latency")
    at = from_epoch(target.at)
    live = PrometheusSource(PrometheusSettings(url=url))
    rep: list[float] = []
    liv: list[float] = []
    for _ in range(10):
        src = open_replay(DEMO_BUNDLE).source("metrics")
        t0 = time.perf_counter()
        await src.instant(target.query, at)
        rep.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        await live.instant(target.query, at)
        liv.append(time.perf_counter() - t0)
    await live.close()
    lines.append(
        f"first replayed instant (derived from a recorded range, cold): {_median_ms(rep):.2f} ms vs live "
        f"{_median_ms(liv):.2f} ms (ratio {statistics.median(rep) / statistics.median(liv):.2f})"
    )


def main() -> list[str]:
    lines: list[str] = []
    os.environ.setdefault("COCKPIT_CONFIG", os.devnull)
    bench_backfill(lines)
    sc = get_scenario("worked_example")
    with tempfile.TemporaryDirectory() as tmp, promserver.start(sc, Path(tmp)) as srv:
        asyncio.run(bench_queries(srv.url, lines))
        asyncio.run(bench_replay(srv.url, lines))
    return lines


if __name__ == "__main__":
    for line in main():
        print(line)
