"""Alerts that fired in the window (the ``ALERTS`` series) as timeline entries.

Prometheus writes ``ALERTS{alertname, alertstate="pending"|"firing", …} 1`` for every
active alert (Prometheus docs, "Alerting rules: inspecting alerts during runtime"). The
first firing alert in the window is offered as the detection time (seed 000 step A:
开始 / 检测 / 缓解 / 恢复).
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from cockpit.models import Series, from_epoch


class FiredAlert(BaseModel):
    """One alert's firing interval inside the window.

    Attributes:
        name: ``alertname``.
        labels: The alert's other labels (``severity``, ``pod``…).
        first, last: First and last sample time with the alert firing (UTC).
    """

    name: str
    labels: dict[str, str] = Field(default_factory=dict)
    first: datetime
    last: datetime

    def text(self) -> str:
        """One-line description for the timeline."""
        extra = ", ".join(
            f"{k}={v}"
            for k, v in sorted(self.labels.items())
            if k in ("severity", "pod", "node", "service", "namespace")
        )
        return f"ALERT {self.name}" + (f" ({extra})" if extra else "")


def fired_alerts(series: list[Series]) -> list[FiredAlert]:
    """Firing alerts from a range query of ``ALERTS{alertstate="firing"}``, earliest first.

    Each series yields one entry spanning its first to last sample with value 1 (gaps in
    a flapping alert are kept within the one entry: the timeline needs its onset).
    """
    out: list[FiredAlert] = []
    for s in series:
        if s.labels.get("alertstate", "firing") != "firing":
            continue
        times = [p.t for p in s.samples if p.v == p.v and p.v > 0]
        if not times:
            continue
        labels = {
            k: v for k, v in s.labels.items() if k not in ("__name__", "alertname", "alertstate")
        }
        out.append(
            FiredAlert(
                name=s.labels.get("alertname", "?"),
                labels=labels,
                first=from_epoch(min(times)),
                last=from_epoch(max(times)),
            )
        )
    out.sort(key=lambda a: (a.first, a.name))
    return out
