"""Where ``cockpit analyze``'s time goes on a distant Prometheus: each query's send and
answer times from the start of the analysis, in waves.

Not part of ``make bench`` (it measures no ratio); run it by hand when
``bench_analyze`` moves::

    .venv-test/bin/python bench/analyze_waves.py [SCENARIO] [--delay 0.25] [--all]

Against the scenario's real Prometheus behind the same TCP relay as ``bench_analyze``
(one-way latency on the bytes the client sends), one analysis is traced through a
delegating source: when each query was sent and answered, how long it waited for a slot
under the runner's limit, how many were in flight at once, when the client's connections
were opened, and the CPU seconds the client and the Prometheus process spent. Queries
sent after the first answer came back are marked: they waited for a slot, or for an
answer they need (a dependent round).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


class _Traced:
    """A metrics source noting ``(sent, answered, kind, query)`` of every query, in
    seconds since :attr:`t0`."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.t0 = time.perf_counter()
        self.log: list[tuple[float, float, str, str]] = []

    async def _traced(self, kind: str, *args: Any) -> Any:
        sent = time.perf_counter() - self.t0
        try:
            return await getattr(self.inner, kind)(*args)
        finally:
            self.log.append((sent, time.perf_counter() - self.t0, kind, str(args[0])))

    async def range(self, *args: Any) -> Any:
        return await self._traced("range", *args)

    async def instant(self, *args: Any) -> Any:
        return await self._traced("instant", *args)

    async def samples(self, *args: Any) -> Any:
        return await self._traced("samples", *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _trace(url: str, scenario: Any, prom_pid: int) -> dict[str, Any]:
    import aiohttp

    from bench.bench_analyze import _context
    from cockpit.collect.analyze import run_analysis
    from cockpit.collect.base import detection_for
    from cockpit.collect.cache import screen_window

    ctx = _context(url, scenario.now, scenario.scope)
    inner = ctx.sources.metrics
    window = screen_window(ctx)
    await detection_for(ctx, window.end)
    traced = _Traced(inner)
    ctx.sources.metrics = traced  # the runner is made on first use, on this source
    connects: list[float] = []

    async def on_connect(*_: Any) -> None:
        connects.append(time.perf_counter() - traced.t0)

    session = inner._session_now()  # a bench-only look at the pool
    trace = aiohttp.TraceConfig()
    trace.on_connection_create_end.append(on_connect)
    trace.freeze()
    session._trace_configs.append(trace)
    cpu0, prom0 = time.process_time(), _cpu_s(prom_pid)
    traced.t0 = time.perf_counter()
    report = await run_analysis(ctx, window)
    wall = time.perf_counter() - traced.t0
    out = {
        "wall": wall,
        "client_cpu": time.process_time() - cpu0,
        "prom_cpu": _cpu_s(prom_pid) - prom0,
        "log": sorted(traced.log),
        "connects": connects,
        "peak": report.timing.peak_concurrency,
        "waits": [w for *_, w, _ok in report.timing.stats.log],
        "cause": report.conclusion.cause,
    }
    await inner.close()
    return out


def _print(t: dict[str, Any], show_all: bool) -> None:
    log = t["log"]
    first_answer = min(a for _, a, *_ in log)
    late = [x for x in log if x[0] >= first_answer]
    print(
        f"wall {t['wall']:.3f} s; {len(log)} queries; peak in flight {t['peak']}; "
        f"client CPU {t['client_cpu']:.2f} s, Prometheus CPU {t['prom_cpu']:.2f} s; "
        f"conclusion {t['cause']}"
    )
    waited = [w for w in t["waits"] if w > 0.01]
    print(
        f"sent before the first answer ({first_answer:.3f} s): {len(log) - len(late)}; after it: "
        f"{len(late)} ({len(waited)} waited > 10 ms for a slot, longest {max(t['waits']):.3f} s)"
    )
    c = t["connects"]
    if c:
        print(f"connections opened: {len(c)}, from {min(c):.3f} s to {max(c):.3f} s")
    # answers per 50 ms: how the server's work spreads after the latency
    buckets: dict[int, int] = {}
    for _, answered, *_ in log:
        buckets[int(answered / 0.05)] = buckets.get(int(answered / 0.05), 0) + 1
    print("answers per 50 ms: " + ", ".join(f"{k * 50}ms:{n}" for k, n in sorted(buckets.items())))
    gaps = sorted(a for _, a, *_ in log)
    print(f"after the last answer ({gaps[-1]:.3f} s) the client works {t['wall'] - gaps[-1]:.3f} s")
    rows = log if show_all else sorted(log, key=lambda x: x[1] - x[0], reverse=True)[:15]
    print("   sent answered  own kind query" + ("" if show_all else " (the 15 longest)"))
    for sent, answered, kind, query in rows:
        mark = "*" if sent >= first_answer else " "
        print(
            f"{mark}{sent:6.3f} {answered:8.3f} {answered - sent:5.3f} {kind[0]}    {query[:100]}"
        )


def main() -> None:
    from cockpit.scenarios import get_scenario
    from cockpit.scenarios.promserver import start
    from tests.backends.tcpdelay import TcpDelayProcess

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenario", nargs="?", default="gpu_lost")
    ap.add_argument("--delay", type=float, default=0.25, help="one-way latency (s)")
    ap.add_argument("--all", action="store_true", help="every query, not the 15 longest")
    args = ap.parse_args()
    scenario = get_scenario(args.scenario)
    with tempfile.TemporaryDirectory() as tmp, start(scenario, Path(tmp)) as srv:
        u = urllib.parse.urlsplit(srv.url)
        assert u.hostname and u.port
        with TcpDelayProcess(u.hostname, u.port, args.delay) as url:
            asyncio.run(_trace(url, scenario, srv.process.pid))  # warm the server's caches
            _print(asyncio.run(_trace(url, scenario, srv.process.pid)), args.all)


if __name__ == "__main__":
    main()
