"""PyTorch caching-allocator gauges exported by the serving process's own instrumentation.

Neither vLLM, SGLang nor TGI exports allocator state (``shared/reference/metrics_kb.md``
§1.3: "Fragmentation ≈ reserved − allocated must come from app instrumentation"). The
scenarios model the common fix: a small exporter in the serving container publishing
``torch.cuda.memory_reserved(dev)`` and ``torch.cuda.memory_allocated(dev)`` per device:

- ``pytorch_cuda_memory_reserved_bytes{gpu,UUID}`` — bytes held by the caching allocator;
- ``pytorch_cuda_memory_allocated_bytes{gpu,UUID}`` — bytes in live tensors.

Fragmentation (the methodology seed's "显存碎片率") is then
``1 - allocated / reserved`` — reserved-but-unallocated over reserved — computed in PromQL.
"""

from __future__ import annotations

from cockpit.scenarios.metricset import MetricSet
from cockpit.scenarios.signals import Signal
from cockpit.scenarios.stacks.vllm import METRICS_PORT, scrape_labels
from cockpit.scenarios.topology import Pod

FRAGMENTATION_QUERY = (
    "1 - sum by (namespace, pod) (pytorch_cuda_memory_allocated_bytes{{{sel}}})"
    " / sum by (namespace, pod) (pytorch_cuda_memory_reserved_bytes{{{sel}}})"
)
"""Per-pod fragmentation ratio; format with ``sel`` (a label matcher list)."""


def emit(
    ms: MetricSet,
    pod: Pod,
    model_name: str,
    reserved_bytes: Signal,
    fragmentation: Signal,
    *,
    job: str = "vllm",
) -> None:
    """Reserved and allocated bytes of every GPU of ``pod``; allocated = reserved × (1 − f)."""
    base = {**scrape_labels(pod, job, METRICS_PORT), "model_name": model_name}
    allocated = [r * (1 - f) for r, f in zip(reserved_bytes, fragmentation, strict=True)]
    for local_index, gpu in enumerate(pod.gpus):
        lab = {**base, "gpu": str(local_index), "UUID": gpu.uuid}
        ms.gauge(
            "pytorch_cuda_memory_reserved_bytes",
            lab,
            reserved_bytes,
            "torch.cuda.memory_reserved() of the device.",
        )
        ms.gauge(
            "pytorch_cuda_memory_allocated_bytes",
            lab,
            [round(a) for a in allocated],
            "torch.cuda.memory_allocated() of the device.",
        )
