"""SGLang server metrics (``--enable-metrics``; sgl-project/sglang
``python/sglang/srt/metrics/collector.py``, metrics_kb.md §2.2). Labels ``model_name`` plus
the scrape's ``namespace``/``pod``/``instance``."""

from __future__ import annotations

from cockpit.scenarios.metricset import MetricSet
from cockpit.scenarios.signals import mul
from cockpit.scenarios.stacks.replica import ReplicaLoad
from cockpit.scenarios.stacks.vllm import E2E_BUCKETS, ITL_BUCKETS, TTFT_BUCKETS, scrape_labels
from cockpit.scenarios.topology import Pod

PORT = 30000

TOKEN_BUCKETS = (
    100,
    300,
    500,
    700,
    1000,
    1500,
    2000,
    3000,
    4000,
    5000,
    6000,
    7000,
    8000,
    9000,
    10000,
    12000,
    15000,
    20000,
    22000,
    25000,
    30000,
    35000,
    40000,
)
"""Default buckets of ``sglang:prompt_tokens_histogram`` and
``sglang:generation_tokens_histogram`` (``metrics_collector.py``; exporters.md §SGLang)."""


def emit_lengths(ms: MetricSet, pod: Pod, model_name: str, r: ReplicaLoad) -> None:
    """SGLang's request-length histograms ``sglang:prompt_tokens_histogram`` and
    ``sglang:generation_tokens_histogram`` (always on in the newest collector; older ones
    behind ``--collect-tokens-histogram``). ``r.prompt_len``/``r.gen_len`` must use
    :data:`TOKEN_BUCKETS`."""
    lab = {**scrape_labels(pod, "sglang", PORT), "model_name": model_name, "tp_rank": "0"}
    total = r.total()
    if r.prompt_len:
        ms.histogram(
            "sglang:prompt_tokens_histogram",
            lab,
            total,
            r.prompt_len,
            help_="Histogram of prompt token length.",
        )
    if r.gen_len:
        ms.histogram(
            "sglang:generation_tokens_histogram",
            lab,
            total,
            r.gen_len,
            help_="Histogram of generation token length.",
        )


def emit(ms: MetricSet, pod: Pod, model_name: str, r: ReplicaLoad) -> None:
    """Every SGLang series of one replica."""
    lab = {**scrape_labels(pod, "sglang", PORT), "model_name": model_name, "tp_rank": "0"}
    total = r.total()
    ms.counter(
        "sglang:num_requests_total", lab, total, start=2.0e5, help_="Number of requests processed."
    )
    ms.counter(
        "sglang:num_aborted_requests_total", lab, r.failed, help_="Number of requests aborted."
    )
    ms.counter(
        "sglang:prompt_tokens_total",
        lab,
        mul(total, r.prompt_tokens),
        start=8e7,
        help_="Number of prefill tokens processed.",
    )
    ms.counter(
        "sglang:generation_tokens_total",
        lab,
        mul(total, r.gen_tokens),
        start=1e7,
        help_="Number of generation tokens processed.",
    )
    ms.gauge("sglang:num_running_reqs", lab, r.running, "The number of running requests.")
    ms.gauge(
        "sglang:num_queue_reqs", lab, r.waiting, "The number of requests in the waiting queue."
    )
    ms.gauge("sglang:token_usage", lab, r.kv_usage, "The token usage.")
    ms.gauge(
        "sglang:num_retracted_reqs", lab, [0.0] * len(total), "The number of retracted requests."
    )
    assert E2E_BUCKETS and TTFT_BUCKETS and ITL_BUCKETS
    ms.histogram(
        "sglang:e2e_request_latency_seconds",
        lab,
        total,
        r.e2e,
        help_="Histogram of End-to-end request latency in seconds.",
    )
    ms.histogram(
        "sglang:time_to_first_token_seconds",
        lab,
        total,
        r.ttft,
        help_="Histogram of time to first token in seconds.",
    )
    ms.histogram(
        "sglang:inter_token_latency_seconds",
        lab,
        mul(total, r.gen_tokens),
        r.itl,
        help_="Histogram of inter-token latency in seconds.",
    )
    ms.histogram(
        "sglang:queue_time_seconds",
        lab,
        total,
        r.queue,
        help_="Histogram of queueing time in seconds.",
    )
