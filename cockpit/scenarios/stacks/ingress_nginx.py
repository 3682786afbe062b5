"""ingress-nginx controller metrics for one Ingress (``shared/reference/metrics_kb.md`` §4.1).

Constant labels ``controller_namespace``, ``controller_class``, ``controller_pod``; request
labels ``status``, ``method``, ``path``, ``namespace``, ``ingress``, ``service``, ``canary``.
``nginx_ingress_controller_requests`` is a counter (exposed without ``_total``);
``nginx_ingress_controller_request_duration_seconds`` (time at the proxy) and
``nginx_ingress_controller_response_duration_seconds`` (upstream response time) are
histograms in **seconds** with the client library's default buckets.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from cockpit.scenarios.histogram import Shape
from cockpit.scenarios.metricset import MetricSet
from cockpit.scenarios.signals import Signal

DEFAULT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Prometheus client default buckets, used by ingress-nginx's duration histograms."""

LLM_BUCKETS: tuple[float, ...] = (
    *(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0),
    *(10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0),
)
"""The controller's ``--time-buckets`` in front of an LLM service: the default buckets
stop at 10 s, below most generations, so they are extended up to 120 s with vLLM's
end-to-end bounds (a gateway quantile then lands in the buckets the servers' does)."""


@dataclass
class IngressSignals:
    """Responses per second by HTTP status, and the latency mix of each status.

    Attributes:
        by_status: Responses per second by status code.
        latency: Request-duration mix (time at the proxy) by status.
        upstream: Upstream response-time mix by status (default: the request duration,
            i.e. negligible time in the proxy itself).
    """

    by_status: Mapping[str, Signal]
    latency: Mapping[str, list[tuple[Shape, Signal]]]
    upstream: Mapping[str, list[tuple[Shape, Signal]]] | None = None


@dataclass(frozen=True)
class Ingress:
    """Where the requests enter: the Ingress object and its controller pod."""

    namespace: str
    name: str
    service: str
    host: str
    path: str = "/"
    controller_pod: str = "ingress-nginx-controller-5c8d66c76d-q4t7x"
    controller_ip: str = "10.244.0.9"


def emit(ms: MetricSet, ing: Ingress, sig: IngressSignals) -> None:
    """Requests and request-duration series by status."""
    base = {
        "controller_namespace": "ingress-nginx",
        "controller_class": "k8s.io/ingress-nginx",
        "controller_pod": ing.controller_pod,
        "namespace": ing.namespace,
        "ingress": ing.name,
        "service": ing.service,
        "host": ing.host,
        "path": ing.path,
        "method": "POST",
        "canary": "",
        "job": "ingress-nginx",
        "instance": f"{ing.controller_ip}:10254",
    }
    for status, rate in sig.by_status.items():
        lab = {**base, "status": status}
        ms.cumulative(
            "nginx_ingress_controller_requests",
            lab,
            rate,
            start=5.0e6,
            help_="The total number of client requests",
        )
        ms.histogram(
            "nginx_ingress_controller_request_duration_seconds",
            lab,
            rate,
            sig.latency[status],
            help_="The request processing time in seconds",
        )
        ms.histogram(
            "nginx_ingress_controller_response_duration_seconds",
            lab,
            rate,
            sig.upstream.get(status, sig.latency[status]) if sig.upstream else sig.latency[status],
            help_="The time spent on receiving the response from the upstream server",
        )
