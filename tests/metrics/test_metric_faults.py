"""Failures in front of a real Prometheus (fault proxy): one slow query times out alone
while the rest of the drilldown arrives; a server error stays on its signal; Prometheus
down is a classified error, never empty data."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from cockpit.collect.base import make_window
from cockpit.collect.drilldown import collect_drilldown
from cockpit.config import PrometheusSettings, ServiceSettings, Settings
from cockpit.context import AppContext
from cockpit.models import from_epoch
from cockpit.sources.base import ErrorKind, SourceError, Sources
from cockpit.sources.prometheus import PrometheusSource
from testkit import make_ctx
from tests.backends.faultproxy import Fault


def _ctx(url: str, now: int, tmp_path: Path, timeout_s: float = 10.0) -> AppContext:
    settings = Settings(
        prometheus=PrometheusSettings(url=url, timeout_s=timeout_s, max_concurrency=8),
        service=ServiceSettings(namespace="llm-serving"),
    )
    return make_ctx(
        tmp_path,
        lang="en",
        sources=Sources(metrics=PrometheusSource(settings.prometheus)),
        frozen_at=from_epoch(now),
        settings=settings,
    )


async def test_one_slow_query_times_out_alone(
    prom_fault_proxy: Any, worked_example_prom: Any, tmp_path: Path
) -> None:
    ctx = _ctx(prom_fault_proxy.url, worked_example_prom.scenario.now, tmp_path, timeout_s=1.0)
    window = make_window(ctx.clock.now(), timedelta(hours=1), "quiet")
    from cockpit.collect.base import detection_for

    await detection_for(ctx, window.end)
    # a signal's query (the window's history, collected beside them, has no histogram)
    prom_fault_proxy.add(Fault(path="/api/v1/query_range", query="_bucket", delay_s=6.0, times=1))
    t0 = time.perf_counter()
    rep = await collect_drilldown(ctx, window)
    wall = time.perf_counter() - t0
    assert wall < 6.0  # the slow query did not hold the screen for its full delay
    timed_out = [
        s
        for s in rep.drilldown.summaries
        if "timeout" in (s.now.reason or "") or "timeout" in (s.baseline.reason or "")
    ]
    known = [s for s in rep.drilldown.summaries if s.now.ok]
    assert 1 <= len(timed_out) <= 4  # one query (a histogram's buckets feed up to 4 stats)
    assert len(known) > 30
    assert all(s.now.value is None for s in timed_out if "timeout" in (s.now.reason or ""))
    await ctx.sources.close()


async def test_server_error_stays_on_its_signal(
    prom_fault_proxy: Any, worked_example_prom: Any, tmp_path: Path
) -> None:
    ctx = _ctx(prom_fault_proxy.url, worked_example_prom.scenario.now, tmp_path)
    window = make_window(ctx.clock.now(), timedelta(hours=1), "quiet")
    from cockpit.collect.base import detection_for

    await detection_for(ctx, window.end)
    prom_fault_proxy.add(Fault(path="/api/v1/query_range", query="_bucket", status=503, times=1))
    rep = await collect_drilldown(ctx, window)
    failed = [
        s
        for s in rep.drilldown.summaries
        if "unavailable" in (s.now.reason or "") + (s.baseline.reason or "")
    ]
    assert 1 <= len(failed) <= 4
    assert sum(1 for s in rep.drilldown.summaries if s.now.ok) > 30
    await ctx.sources.close()


async def test_prometheus_down_is_a_classified_error(tmp_path: Path) -> None:
    from cockpit.scenarios.promserver import free_port

    ctx = _ctx(f"http://127.0.0.1:{free_port()}", 1_795_896_000, tmp_path, timeout_s=2.0)
    window = make_window(ctx.clock.now(), timedelta(hours=1), "quiet")
    try:
        await collect_drilldown(ctx, window)
    except SourceError as exc:
        assert exc.kind in (ErrorKind.UNAVAILABLE, ErrorKind.TIMEOUT)
    else:
        raise AssertionError("a drilldown against a dead Prometheus must fail loudly")
    finally:
        await ctx.sources.close()
