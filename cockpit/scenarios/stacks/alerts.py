"""The ``ALERTS`` series Prometheus writes for alerting rules.

While a rule's expression holds, ``ALERTS{alertname, alertstate="pending", <labels>}`` is 1;
after its ``for:`` duration the ``pending`` series ends and ``alertstate="firing"`` starts
(https://prometheus.io/docs/prometheus/latest/configuration/alerting_rules/). Series are
absent (not 0) when the alert is inactive: samples are written only while active.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cockpit.scenarios.metricset import MetricSet


@dataclass(frozen=True)
class Alert:
    """One alert episode (times in Unix seconds; ``resolved_at`` None = still firing)."""

    name: str
    pending_at: int
    firing_at: int
    resolved_at: int | None = None
    labels: dict[str, str] = field(default_factory=dict, hash=False)
    severity: str = "warning"
    summary: str = ""


def emit(ms: MetricSet, alert: Alert) -> None:
    """``ALERTS`` (pending, then firing) and ``ALERTS_FOR_STATE`` for one episode.

    Samples exist only while the alert is active, so queries outside return nothing.
    """
    end = alert.resolved_at if alert.resolved_at is not None else ms.axis.end + 1
    lab = {"alertname": alert.name, "severity": alert.severity, **alert.labels}
    for state, lo, hi in (
        ("pending", alert.pending_at, alert.firing_at),
        ("firing", alert.firing_at, end),
    ):
        ms.sparse_gauge("ALERTS", {**lab, "alertstate": state}, lo, hi, 1.0, "Alert state.")
    ms.sparse_gauge(
        "ALERTS_FOR_STATE",
        lab,
        alert.pending_at,
        end,
        float(alert.pending_at),
        "Alert activation time.",
    )
