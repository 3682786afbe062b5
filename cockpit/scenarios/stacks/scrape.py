"""The series Prometheus itself writes for every scrape target: ``up`` (1 when the last
scrape succeeded, 0 when it failed), with the target's ``job``/``instance`` and the labels
its PodMonitor adds (https://prometheus.io/docs/concepts/jobs_instances/)."""

from __future__ import annotations

from collections.abc import Mapping

from cockpit.scenarios.metricset import MetricSet
from cockpit.scenarios.signals import Signal


def emit_up(ms: MetricSet, target: Mapping[str, str], values: Signal) -> None:
    """``up`` of one target (``values``: 1 scraped, 0 failed)."""
    ms.gauge("up", target, values, "Whether the last scrape of the target succeeded.")
