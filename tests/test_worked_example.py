"""The worked example's numbers, measured by PromQL against a real Prometheus."""

from __future__ import annotations

from datetime import timedelta

import pytest

from cockpit.config import PrometheusSettings
from cockpit.models import from_epoch
from cockpit.scenarios import Target, get_scenario, scenario_registry
from cockpit.scenarios.promserver import PromServer
from cockpit.sources.prometheus import PrometheusSource

SCENARIO = get_scenario("worked_example")


def test_registry_and_ground_truth() -> None:
    assert "worked_example" in scenario_registry()
    sc = SCENARIO
    assert sc.now - sc.start >= 26 * 3600
    assert sc.start < sc.incident_start < (sc.detected_at or 0) < sc.now
    assert 60 <= (sc.detected_at or 0) - sc.incident_start <= 600
    names = {t.name for t in sc.targets}
    for seed_number in (
        "p99_latency",
        "qps",
        "error_ratio",
        "gpu_util",
        "batch_size",
        "queue_length",
        "fragmentation",
        "gpu_temp",
    ):
        assert {seed_number} <= names
    assert sc.target("p99_latency", "baseline").expected == 0.18
    assert sc.target("p99_latency").expected == 0.62


@pytest.mark.parametrize("target", SCENARIO.targets, ids=lambda t: f"{t.phase}-{t.name}")
async def test_target_measured_by_promql(worked_example_prom: PromServer, target: Target) -> None:
    src = PrometheusSource(PrometheusSettings(url=worked_example_prom.url))
    try:
        result = await src.instant(target.query, from_epoch(target.at))
    finally:
        await src.close()
    assert len(result) == 1, target.query
    assert result[0].v == pytest.approx(target.expected, rel=target.rel_tol), target.query


async def test_alert_fires_minutes_after_impact(worked_example_prom: PromServer) -> None:
    sc = worked_example_prom.scenario
    src = PrometheusSource(PrometheusSettings(url=worked_example_prom.url))
    try:
        firing = await src.range(
            'ALERTS{alertstate="firing"}', sc.now_dt - timedelta(hours=2), sc.now_dt, 15
        )
        yesterday = await src.range(
            "ALERTS", sc.now_dt - timedelta(days=1, hours=2), sc.now_dt - timedelta(days=1), 60
        )
    finally:
        await src.close()
    first = {s.labels["alertname"]: s.samples[0].t for s in firing}
    assert first["VLLMHighP99Latency"] == sc.detected_at
    assert first["VLLMHighP99Latency"] > sc.incident_start
    assert yesterday == []


async def test_throttling_visible_in_dcgm(worked_example_prom: PromServer) -> None:
    sc = worked_example_prom.scenario
    src = PrometheusSource(PrometheusSettings(url=worked_example_prom.url))
    try:
        reasons = await src.instant(
            'DCGM_FI_DEV_CLOCKS_EVENT_REASONS{namespace="llm-serving"}', sc.now_dt
        )
        calm = await src.instant(
            'DCGM_FI_DEV_CLOCKS_EVENT_REASONS{namespace="llm-serving"}',
            sc.now_dt - timedelta(days=1),
        )
        violation = await src.instant(
            "sum(rate(DCGM_FI_DEV_THERMAL_VIOLATION[5m])) / 1e9", sc.now_dt
        )
    finally:
        await src.close()
    assert len(reasons) == 8
    assert all(int(v.v) & 0x20 for v in reasons)  # SW thermal slowdown (clock_reasons.json)
    assert all(v.v == 0 for v in calm)
    assert violation[0].v > 0


@pytest.mark.parametrize("hours", [2, 72])
async def test_alerts_read_over_long_windows(worked_example_prom: PromServer, hours: int) -> None:
    """A window longer than 11,000 × 15 s (Prometheus's per-series limit) still reads the
    alerts, at a coarser step, instead of failing."""
    from cockpit.clock import Clock
    from cockpit.collect.alerts import MAX_POINTS, alerts_step_s, collect_alerts
    from cockpit.collect.base import make_window
    from cockpit.config import ServiceSettings, Settings
    from cockpit.context import AppContext
    from cockpit.sources.base import Sources

    sc = worked_example_prom.scenario
    settings = Settings(
        prometheus=PrometheusSettings(url=worked_example_prom.url),
        service=ServiceSettings(namespace="llm-serving"),
    )
    ctx = AppContext(
        settings=settings,
        sources=Sources(metrics=PrometheusSource(settings.prometheus)),
        clock=Clock(frozen_at=sc.now_dt),
        lang="en",
    )
    window = make_window(sc.now_dt, timedelta(hours=hours), "quiet")
    step = alerts_step_s(window)
    assert (window.end - window.start).total_seconds() / step <= MAX_POINTS
    try:
        alerts = await collect_alerts(ctx, window)
    finally:
        await ctx.sources.close()
    first = {a.name: a.first for a in alerts}
    assert "VLLMHighP99Latency" in first
    # read to within one step of when it fired
    at = first["VLLMHighP99Latency"].timestamp()
    assert sc.detected_at <= at < sc.detected_at + step + 1
