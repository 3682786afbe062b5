"""node-exporter CPU and PSI series and cAdvisor CPU-throttling counters of GPU nodes
(prometheus/node_exporter cpu/pressure/netdev collectors; cAdvisor; metrics_kb.md §4.3)."""

from __future__ import annotations

from cockpit.scenarios.metricset import MetricSet
from cockpit.scenarios.signals import Signal
from cockpit.scenarios.topology import Node

CPUS = 8
"""CPUs modelled per node (each exports its own node_cpu_seconds_total)."""


def emit(ms: MetricSet, node: Node, busy: Signal, mem_stall: Signal) -> None:
    """CPU seconds by mode (``busy`` 0–1), memory PSI (``mem_stall`` 0–1), NIC errors."""
    base = {"job": "node-exporter", "instance": f"{node.ip}:9100", "node": node.name}
    for cpu in range(CPUS):
        lab = {**base, "cpu": str(cpu)}
        ms.counter(
            "node_cpu_seconds_total",
            {**lab, "mode": "idle"},
            [1 - b for b in busy],
            start=1e6,
            integer=False,
        )
        ms.counter(
            "node_cpu_seconds_total", {**lab, "mode": "user"}, busy, start=1e6, integer=False
        )
    ms.counter(
        "node_pressure_memory_waiting_seconds_total", base, mem_stall, start=100.0, integer=False
    )
    zero = [0.0] * len(busy)
    ms.counter("node_network_receive_errs_total", {**base, "device": "eth0"}, zero)
    ms.counter("node_network_transmit_errs_total", {**base, "device": "eth0"}, zero)
