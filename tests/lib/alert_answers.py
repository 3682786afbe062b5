"""Alertmanager API v2 answers as a real Alertmanager gives them (shape recorded from
Debian's 0.25 in ``tests/backends/alertmanager.py``): a latency page of the service, a
silenced TTFT warning, a GPU warning inhibited by its node's ``NodeDown``, and another
team's alert; times fixed around :data:`testkit.FROZEN`."""

from __future__ import annotations

import urllib.parse
from datetime import timedelta
from typing import Any

from cockpit.analysis.paged import finish, from_alertmanager
from cockpit.collect.paged import AlertList, signal_metrics
from testkit import FROZEN

P99_EXPR = (
    "histogram_quantile(0.99, sum by (le) (rate(vllm:e2e_request_latency_seconds_bucket"
    '{namespace="llm"}[5m]))) > 0.4'
)
TTFT_EXPR = (
    "histogram_quantile(0.95, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket[5m]))) > 2"
)
SILENCE_ID = "8d3857c4-789b-48b8-a246-c9f628d692c1"


def _at(minutes: int) -> str:
    return (FROZEN + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _gen(expr: str) -> str:
    return "http://prometheus:9090/graph?" + urllib.parse.urlencode({"g0.expr": expr})


def _alert(labels: dict[str, str], starts: int, **extra: Any) -> dict[str, Any]:
    status = {"state": "active", "silencedBy": [], "inhibitedBy": []}
    status.update(extra.pop("status", {}))
    return {
        "labels": labels,
        "annotations": extra.pop("annotations", {}),
        "startsAt": _at(starts),
        "endsAt": _at(60),
        "updatedAt": _at(0),
        "generatorURL": extra.pop("generatorURL", ""),
        "receivers": [{"name": "oncall"}],
        "status": status,
        **extra,
    }


ALERTS: list[dict[str, Any]] = [
    _alert(
        {
            "alertname": "VLLMHighP99Latency",
            "namespace": "llm",
            "pod": "vllm-qwen-7d9f8c6b5-x2kq9",
            "severity": "critical",
        },
        -14,
        annotations={"summary": "P99 latency above 400 ms for 3 minutes"},
        generatorURL=_gen(P99_EXPR),
    ),
    _alert(
        {"alertname": "VLLMSlowFirstToken", "namespace": "llm", "severity": "warning"},
        -20,
        annotations={"summary": "TTFT P95 above 2 s"},
        generatorURL=_gen(TTFT_EXPR),
        status={"state": "suppressed", "silencedBy": [SILENCE_ID]},
    ),
    _alert(
        {"alertname": "NodeDown", "node": "gpu-node-7", "severity": "critical"},
        -6,
    ),
    _alert(
        {"alertname": "GPUThermalThrottling", "node": "gpu-node-7", "severity": "warning"},
        -5,
        status={"state": "suppressed", "inhibitedBy": ["467bfbf98847ef0b"]},
    ),
    _alert(
        {"alertname": "BatchJobFailed", "namespace": "batch", "severity": "critical"},
        -2,
        annotations={"summary": "nightly eval failed"},
    ),
]
SILENCES: list[dict[str, Any]] = [
    {
        "id": SILENCE_ID,
        "status": {"state": "active"},
        "matchers": [{"name": "alertname", "value": "VLLMSlowFirstToken", "isRegex": False}],
        "createdBy": "oncall",
        "comment": "known: canary rollback running",
        "startsAt": _at(-15),
        "endsAt": _at(45),
    }
]


def alert_list(namespace: str = "llm", deployment: str = "vllm-qwen") -> AlertList:
    """The answers above as ``collect_paged`` returns them for the scope."""
    alerts = finish(from_alertmanager(ALERTS, SILENCES), namespace, deployment, signal_metrics())
    return AlertList(
        source="alertmanager",
        since=FROZEN - timedelta(hours=1),
        until=FROZEN,
        alerts=alerts,
    )
