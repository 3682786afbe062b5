"""Hugging Face TGI router metrics (huggingface/text-generation-inference
``docs/source/reference/metrics.md``; metrics_kb.md §2.3). TGI has no TTFT histogram."""

from __future__ import annotations

from cockpit.scenarios.metricset import MetricSet
from cockpit.scenarios.stacks.replica import ReplicaLoad
from cockpit.scenarios.stacks.vllm import scrape_labels
from cockpit.scenarios.topology import Pod

PORT = 80


def emit(ms: MetricSet, pod: Pod, r: ReplicaLoad, *, err: str = "generation") -> None:
    """Every TGI series of one replica; its failures carry ``err`` (``overloaded``,
    ``validation``, ``template``, ``incomplete``, ``generation`` or ``dropped``:
    ``router/src/infer/mod.rs`` @ v3.3.7)."""
    lab = scrape_labels(pod, "tgi", PORT)
    total = r.total()
    ms.cumulative("tgi_request_count", lab, total, start=3.0e5, help_="Total number of requests.")
    ms.cumulative("tgi_request_success", lab, r.ok, start=3.0e5, help_="Successful requests.")
    ms.cumulative("tgi_request_failure", {**lab, "err": err}, r.failed, help_="Failed requests.")
    ms.histogram("tgi_request_duration", lab, total, r.e2e, help_="Request duration (s).")
    ms.histogram("tgi_request_queue_duration", lab, total, r.queue, help_="Queue duration (s).")
    ms.histogram(
        "tgi_request_mean_time_per_token_duration",
        lab,
        total,
        r.itl,
        help_="Mean time per token (s).",
    )
    if r.prompt_len:
        ms.histogram(
            "tgi_request_input_length", lab, total, r.prompt_len, help_="Input length (tokens)."
        )
    if r.gen_len:
        ms.histogram(
            "tgi_request_generated_tokens", lab, total, r.gen_len, help_="Generated tokens."
        )
    ms.gauge("tgi_queue_size", lab, r.waiting, "Current queue size.")
    ms.gauge("tgi_batch_current_size", lab, r.running, "Current batch size.")
