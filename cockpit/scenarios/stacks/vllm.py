"""vLLM (V1 engine, 0.11+) serving metrics, plus the scrape labels a PodMonitor adds.

Names, types and buckets follow ``vllm/v1/metrics/loggers.py`` as summarised in
``shared/reference/metrics_kb.md`` §2.1: labels ``model_name`` and ``engine``; counters
``vllm:request_success_total{finished_reason}``, ``vllm:prompt_tokens_total``,
``vllm:generation_tokens_total``, ``vllm:num_preemptions_total``; gauges
``vllm:num_requests_running`` (requests in the running batch of the engine step — the
"batch size" of the methodology seed), ``vllm:num_requests_waiting`` (the request queue),
``vllm:kv_cache_usage_perc`` (ratio 0–1); histograms ``vllm:e2e_request_latency_seconds``,
``vllm:time_to_first_token_seconds``, ``vllm:inter_token_latency_seconds``,
``vllm:request_queue_time_seconds``.
"""

from __future__ import annotations

from dataclasses import dataclass

from cockpit.scenarios.histogram import Shape
from cockpit.scenarios.metricset import MetricSet
from cockpit.scenarios.signals import Signal, mul
from cockpit.scenarios.topology import Pod

E2E_BUCKETS = (
    0.3,
    0.5,
    0.8,
    1.0,
    1.5,
    2.0,
    2.5,
    5.0,
    10.0,
    15.0,
    20.0,
    30.0,
    40.0,
    50.0,
    60.0,
    120.0,
    240.0,
    480.0,
    960.0,
    1920.0,
    7680.0,
)
TTFT_BUCKETS = (
    0.001,
    0.005,
    0.01,
    0.02,
    0.04,
    0.06,
    0.08,
    0.1,
    0.25,
    0.5,
    0.75,
    1.0,
    2.5,
    5.0,
    7.5,
    10.0,
    20.0,
    40.0,
    80.0,
    160.0,
    640.0,
    2560.0,
)
ITL_BUCKETS = (
    0.01,
    0.025,
    0.05,
    0.075,
    0.1,
    0.15,
    0.2,
    0.3,
    0.4,
    0.5,
    0.75,
    1.0,
    2.5,
    5.0,
    7.5,
    10.0,
    20.0,
    40.0,
    80.0,
)
QUEUE_BUCKETS = E2E_BUCKETS
METRICS_PORT = 8000

Mix = list[tuple[Shape, Signal]]


@dataclass
class VllmSignals:
    """What one vLLM replica does over time (per-second rates, levels, latency mixes).

    Attributes:
        finished: Requests finished per second, by ``finished_reason``
            (``stop``, ``length``, ``abort``, ``error``).
        prompt_tokens_per_req: Mean prompt length (tokens).
        gen_tokens_per_req: Mean output length (tokens).
        running: ``vllm:num_requests_running``.
        waiting: ``vllm:num_requests_waiting``.
        kv_cache_usage: ``vllm:kv_cache_usage_perc`` (0–1).
        preemptions: Preemptions per second.
        e2e, ttft, itl, queue: Latency shape mixes (seconds).
        tokens_per_itl: Inter-token observations per finished request (≈ output tokens − 1).
    """

    finished: dict[str, Signal]
    prompt_tokens_per_req: Signal
    gen_tokens_per_req: Signal
    running: Signal
    waiting: Signal
    kv_cache_usage: Signal
    preemptions: Signal
    e2e: Mix
    ttft: Mix
    itl: Mix
    queue: Mix


def scrape_labels(pod: Pod, job: str, port: int) -> dict[str, str]:
    """Target labels a PodMonitor/ServiceMonitor adds to every series of ``pod``."""
    return {
        "namespace": pod.namespace,
        "pod": pod.name,
        "container": pod.container,
        "instance": f"{pod.ip}:{port}",
        "job": job,
    }


def emit(ms: MetricSet, pod: Pod, model_name: str, sig: VllmSignals, *, job: str = "vllm") -> None:
    """Every vLLM series of one replica."""
    lab = {**scrape_labels(pod, job, METRICS_PORT), "model_name": model_name, "engine": "0"}
    total: Signal = [0.0] * len(ms.axis)
    for reason, rate in sig.finished.items():
        ms.counter(
            "vllm:request_success_total",
            {**lab, "finished_reason": reason},
            rate,
            start=1000.0,
            help_="Count of successfully processed requests.",
        )
        total = [a + b for a, b in zip(total, rate, strict=True)]
    ms.counter(
        "vllm:prompt_tokens_total",
        lab,
        mul(total, sig.prompt_tokens_per_req),
        start=4.0e5,
        help_="Number of prefill tokens processed.",
    )
    ms.counter(
        "vllm:generation_tokens_total",
        lab,
        mul(total, sig.gen_tokens_per_req),
        start=6.0e4,
        help_="Number of generation tokens processed.",
    )
    ms.counter(
        "vllm:num_preemptions_total",
        lab,
        sig.preemptions,
        help_="Cumulative number of preemption from the engine.",
    )
    ms.gauge(
        "vllm:num_requests_running",
        lab,
        sig.running,
        "Number of requests in model execution batches.",
    )
    ms.gauge(
        "vllm:num_requests_waiting", lab, sig.waiting, "Number of requests waiting to be processed."
    )
    ms.gauge(
        "vllm:kv_cache_usage_perc",
        lab,
        sig.kv_cache_usage,
        "KV-cache usage. 1 means 100 percent usage.",
    )
    ms.histogram(
        "vllm:e2e_request_latency_seconds",
        lab,
        total,
        sig.e2e,
        help_="Histogram of e2e request latency in seconds.",
    )
    ms.histogram(
        "vllm:time_to_first_token_seconds",
        lab,
        total,
        sig.ttft,
        help_="Histogram of time to first token in seconds.",
    )
    itl_rate = mul(total, [max(0.0, g - 1) for g in sig.gen_tokens_per_req])
    ms.histogram(
        "vllm:inter_token_latency_seconds",
        lab,
        itl_rate,
        sig.itl,
        help_="Histogram of inter-token latency in seconds.",
    )
    ms.histogram(
        "vllm:request_queue_time_seconds",
        lab,
        total,
        sig.queue,
        help_="Histogram of time spent in WAITING phase for request.",
    )
