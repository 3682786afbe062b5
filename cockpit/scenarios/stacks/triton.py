"""NVIDIA Triton metrics (port 8002; triton-inference-server/server
``docs/user_guide/metrics.md``; metrics_kb.md §2.4). Latencies are cumulative counters in
microseconds (no percentiles by default); labels ``model`` and ``version``."""

from __future__ import annotations

from collections.abc import Sequence

from cockpit.scenarios.histogram import Shape
from cockpit.scenarios.metricset import MetricSet
from cockpit.scenarios.signals import Signal, mul
from cockpit.scenarios.stacks.replica import ReplicaLoad
from cockpit.scenarios.stacks.vllm import scrape_labels
from cockpit.scenarios.topology import Pod

PORT = 8002


def _mean(mix: Sequence[tuple[Shape, Signal]], i: int) -> float:
    """Mean of the weighted shape mix at sample ``i`` (seconds)."""
    ws = [w[i] for _, w in mix]
    tot = sum(ws) or 1.0
    return sum(s.mean * w for (s, _), w in zip(mix, ws, strict=True)) / tot


def emit(ms: MetricSet, pod: Pod, model: str, r: ReplicaLoad, gpu_util: Signal) -> None:
    """Every Triton series of one replica (one GPU)."""
    lab = {**scrape_labels(pod, "triton", PORT), "model": model, "version": "1"}
    total = r.total()
    n = len(total)
    ms.cumulative(
        "nv_inference_request_success",
        lab,
        r.ok,
        start=1e6,
        help_="Number of successful inference requests.",
    )
    ms.cumulative(
        "nv_inference_request_failure", lab, r.failed, help_="Number of failed inference requests."
    )
    batch = [max(1.0, b) for b in r.running]
    ms.cumulative(
        "nv_inference_count", lab, total, start=4e6, help_="Number of inferences performed."
    )
    ms.cumulative(
        "nv_inference_exec_count",
        lab,
        [t / b for t, b in zip(total, batch, strict=True)],
        start=1e6,
        help_="Number of model executions.",
    )
    e2e_us = [_mean(r.e2e, i) * 1e6 for i in range(n)]
    q_us = [_mean(r.queue, i) * 1e6 for i in range(n)]
    ms.cumulative(
        "nv_inference_request_duration_us",
        lab,
        mul(total, e2e_us),
        start=1e11,
        integer=False,
        help_="Cumulative inference request duration in microseconds.",
    )
    ms.cumulative(
        "nv_inference_queue_duration_us",
        lab,
        mul(total, q_us),
        start=1e9,
        integer=False,
        help_="Cumulative inference queuing duration in microseconds.",
    )
    ms.gauge(
        "nv_inference_pending_request_count",
        lab,
        r.waiting,
        "Instantaneous number of pending requests awaiting execution.",
    )
    for g in pod.gpus:
        glab = {**scrape_labels(pod, "triton", PORT), "gpu_uuid": g.uuid}
        ms.gauge(
            "nv_gpu_utilization",
            glab,
            [u / 100 for u in gpu_util],
            "GPU utilization rate [0.0 - 1.0).",
        )
