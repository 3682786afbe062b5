"""Envoy upstream cluster statistics as exported to Prometheus (envoyproxy.io cluster_stats;
metrics_kb.md §4.2). ``envoy_cluster_upstream_rq_time`` is a histogram in **milliseconds**;
response classes are counted in ``envoy_cluster_upstream_rq_xx{envoy_response_code_class}``."""

from __future__ import annotations

from collections.abc import Mapping

from cockpit.scenarios.histogram import Shape
from cockpit.scenarios.metricset import MetricSet
from cockpit.scenarios.signals import Signal

RQ_TIME_BUCKETS = (
    0.5,
    1,
    5,
    10,
    25,
    50,
    100,
    250,
    500,
    1000,
    2500,
    5000,
    10000,
    30000,
    60000,
    300000,
    600000,
    1800000,
    3600000,
)
"""Envoy's default histogram buckets (ms)."""


def emit(
    ms: MetricSet,
    cluster: str,
    by_class: Mapping[str, Signal],
    latency_ms: list[tuple[Shape, Signal]],
    *,
    envoy_pod: str = "envoy-gateway-7d9c5b7f6d-x2k9p",
) -> None:
    """Upstream request counters by class, total and the request-time histogram."""
    base = {
        "envoy_cluster_name": cluster,
        "job": "envoy",
        "instance": "10.244.0.12:19001",
        "pod": envoy_pod,
        "namespace": "envoy-gateway-system",
    }
    total = [sum(v[i] for v in by_class.values()) for i in range(len(ms.axis))]
    for cls, rate in by_class.items():
        ms.cumulative(
            "envoy_cluster_upstream_rq_xx",
            {**base, "envoy_response_code_class": cls},
            rate,
            start=1e6,
            help_="",
        )
    ms.cumulative("envoy_cluster_upstream_rq_total", base, total, start=1e6, help_="")
    ms.cumulative("envoy_cluster_upstream_rq_timeout", base, [0.0] * len(total), help_="")
    ms.histogram("envoy_cluster_upstream_rq_time", base, total, latency_ms, help_="")
