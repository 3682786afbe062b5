"""vLLM's request-length histograms ``vllm:request_prompt_tokens`` and
``vllm:request_generation_tokens`` (V1 engine, ``vllm/v1/metrics/loggers.py``; metrics_kb.md
§2.1), which :mod:`.vllm` does not emit."""

from __future__ import annotations

from cockpit.scenarios.metricset import MetricSet
from cockpit.scenarios.stacks.replica import ReplicaLoad
from cockpit.scenarios.stacks.vllm import METRICS_PORT, scrape_labels
from cockpit.scenarios.topology import Pod

LENGTH_BUCKETS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000)
"""vLLM's 1-2-5 length buckets up to the model's context length."""


def emit(ms: MetricSet, pod: Pod, model_name: str, r: ReplicaLoad, *, job: str = "vllm") -> None:
    """Prompt and output length histograms of one replica."""
    lab = {**scrape_labels(pod, job, METRICS_PORT), "model_name": model_name, "engine": "0"}
    total = r.total()
    if r.prompt_len:
        ms.histogram(
            "vllm:request_prompt_tokens",
            lab,
            total,
            r.prompt_len,
            help_="Number of prefill tokens processed.",
        )
    if r.gen_len:
        ms.histogram(
            "vllm:request_generation_tokens",
            lab,
            total,
            r.gen_len,
            help_="Number of generation tokens processed.",
        )
