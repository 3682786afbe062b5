"""``cockpit analyze --json`` against a real Prometheus backfilled with upstream-faithful
exposition (``tests/lib/upstream_om.py``): what each profile maps, read the way the
engines export it — SGLang's priority totals counted once and its aborts read as client
aborts, and a demand surge at TGI reported as one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from upstream_om import (
    AT,
    SECONDS_BUCKETS,
    TGI_DURATION_BUCKETS,
    TGI_LENGTH_BUCKETS,
    TOKEN_BUCKETS,
    Exposition,
    between,
    pod_labels,
)

from om_prometheus import serve_openmetrics

COCKPIT = str(Path(sys.executable).with_name("cockpit"))


def analyze(url: str, namespace: str, *extra: str) -> dict[str, Any]:
    """``cockpit analyze --json`` over the last 40 min (a quiet 40 min baseline before)."""
    proc = subprocess.run(
        [
            COCKPIT,
            "--lang",
            "en",
            "analyze",
            "--prometheus-url",
            url,
            "-n",
            namespace,
            "--at",
            AT,
            "--window",
            "40m",
            "--json",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "COCKPIT_CONFIG": "/nonexistent", "LANG": "C.UTF-8"},
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def served_analysis(text: str, namespace: str, factory: pytest.TempPathFactory) -> dict[str, Any]:
    """:func:`analyze` of ``namespace`` on a Prometheus serving ``text``, stopped after."""
    with serve_openmetrics(text, factory.mktemp(namespace)) as url:
        return analyze(url, namespace)


def sig(d: dict[str, Any], key: str) -> dict[str, Any]:
    return next(s for s in d["signals"] if s["key"] == key)


def finding(d: dict[str, Any], fid: str) -> dict[str, Any]:
    return next(f for f in d["load"] if f["id"] == fid)


# -- SGLang with --enable-priority-scheduling, clients aborting on a long queue ------------


def sglang_priority() -> str:
    """One SGLang replica in ``llm-prio`` with priority scheduling: the scheduler gauges
    carry the total under ``priority=""`` (no label) and again per priority; the queue
    builds 1 → 120 and clients abort 0.1 % → 8 % of the finished requests."""
    ex = Exposition()
    scrape = pod_labels("llm-prio", "sglang-qwen-5b7d9c-x2x4z", "sglang", 30000, "10.0.3.7")
    tok = {**scrape, "model_name": "Qwen/Qwen3-32B", "engine_type": "unified"}
    sched = {**tok, "tp_rank": "0", "pp_rank": "0", "moe_ep_rank": "0"}
    for name, total in (
        ("sglang:num_queue_reqs", between(1.0, 120.0)),
        ("sglang:num_running_reqs", between(15.0, 24.0)),
    ):
        ex.gauge(name, sched, total)
        ex.gauge(name, {**sched, "priority": "0"}, lambda x, f=total: 0.3 * f(x))
        ex.gauge(name, {**sched, "priority": "1"}, lambda x, f=total: 0.7 * f(x))
    ex.gauge("sglang:token_usage", sched, between(0.55, 0.8))
    ex.gauge("sglang:num_retracted_reqs", sched, between(0.0, 0.0))
    ex.counter("sglang:num_requests_total", tok, between(10.0, 10.0), start=5e4)
    ex.counter("sglang:num_aborted_requests_total", tok, between(0.01, 0.8))
    ex.counter("sglang:prompt_tokens_total", tok, between(8000.0, 8000.0))
    ex.counter("sglang:generation_tokens_total", tok, between(2500.0, 2500.0))
    rate = between(10.0, 10.0)
    ex.histogram(
        "sglang:time_to_first_token_seconds", tok, rate, between(0.15, 8.0), SECONDS_BUCKETS
    )
    ex.histogram("sglang:queue_time_seconds", sched, rate, between(0.01, 7.0), SECONDS_BUCKETS)
    ex.histogram(
        "sglang:e2e_request_latency_seconds", tok, rate, between(4.0, 14.0), SECONDS_BUCKETS
    )
    ex.histogram(
        "sglang:inter_token_latency_seconds",
        tok,
        between(2500.0, 2500.0),
        between(0.03, 0.03),
        SECONDS_BUCKETS,
    )
    ex.histogram("sglang:prompt_tokens_histogram", tok, rate, between(800.0, 800.0), TOKEN_BUCKETS)
    ex.histogram(
        "sglang:generation_tokens_histogram", tok, rate, between(250.0, 250.0), TOKEN_BUCKETS
    )
    return ex.text()


@pytest.fixture(scope="module")
def sglang_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return served_analysis(sglang_priority(), "llm-prio", tmp_path_factory)


def test_sglang_priority_totals_are_counted_once(sglang_report: dict[str, Any]) -> None:
    queue = sig(sglang_report, "serving.queue:value")
    running = sig(sglang_report, "serving.running:value")
    assert 'priority=""' in queue["query"] and 'priority=""' in running["query"]
    # Summed with the per-priority series they would read 240 and 48.
    assert queue["now"] == pytest.approx(120.0, rel=0.02)
    assert queue["baseline"] == pytest.approx(1.0, rel=0.05)
    assert running["now"] == pytest.approx(24.0, rel=0.02)
    batch = sig(sglang_report, "serving.batch_size:value")
    assert batch["now"] == pytest.approx(24.0, rel=0.02)


def test_sglang_aborts_are_client_aborts_not_server_errors(
    sglang_report: dict[str, Any],
) -> None:
    aborts = sig(sglang_report, "serving.client_aborts:value")
    assert aborts["now"] == pytest.approx(8.0, rel=0.05)
    assert aborts["verdict"] == "anomalous"
    assert "num_aborted_requests_total" in aborts["query"]
    errors = sig(sglang_report, "serving.error_ratio:value")
    assert errors["verdict"] == "no_data" and errors["now"] is None
    assert "client" in errors["reason_text"]
    assert finding(sglang_report, "server_errors")["status"] == "no_data"
    serving = next(v for v in sglang_report["layers"] if v["layer"] == "serving")
    assert any("client aborts" in line for line in serving["evidence_text"])
    assert not any("error ratio" in line for line in serving["evidence_text"])


# -- TGI: a demand surge, 8.0 → 13.7 req/s --------------------------------------------------


def tgi_surge() -> str:
    """Two TGI replicas in ``tgi``: arrivals (``tgi_request_count`` counts on arrival)
    8.0 → 13.7 req/s, the queue 4 → 243, 25 % of requests refused as ``overloaded``."""
    ex = Exposition()
    for i, (pod, ip) in enumerate(
        (("tgi-llama-6f9c7d-k2v9x", "10.0.4.11"), ("tgi-llama-6f9c7d-p8r4t", "10.0.4.12"))
    ):
        lab = pod_labels("tgi", pod, "tgi", 80, ip)
        arrive = between(4.0, 6.85)
        refuse = between(0.02, 1.7)
        ex.counter("tgi_request_count", lab, arrive, start=3e5 + i)
        ex.counter("tgi_request_success", lab, lambda x, a=arrive, r=refuse: a(x) - r(x), 3e5)
        ex.counter("tgi_request_failure", {**lab, "err": "overloaded"}, refuse)
        ex.counter("tgi_request_failure", {**lab, "err": "validation"}, between(0.004, 0.004))
        ok = lambda x, a=arrive, r=refuse: a(x) - r(x)  # noqa: E731
        ex.histogram("tgi_request_duration", lab, ok, between(5.3, 15.8), TGI_DURATION_BUCKETS)
        ex.histogram(
            "tgi_request_queue_duration", lab, ok, between(0.02, 6.1), TGI_DURATION_BUCKETS
        )
        ex.histogram(
            "tgi_request_mean_time_per_token_duration",
            lab,
            ok,
            between(0.024, 0.038),
            TGI_DURATION_BUCKETS,
        )
        ex.histogram("tgi_request_input_length", lab, ok, between(900, 900), TGI_LENGTH_BUCKETS)
        ex.histogram("tgi_request_generated_tokens", lab, ok, between(220, 220), TGI_LENGTH_BUCKETS)
        ex.gauge("tgi_queue_size", lab, between(2.0, 121.5))
        ex.gauge("tgi_batch_current_size", lab, between(24.0, 53.7))
        ex.gauge("tgi_batch_current_max_tokens", lab, between(60000.0, 150000.0))
        ex.gauge("tgi_batch_max_total_tokens", lab, between(200000.0, 200000.0))
        for method, med in (("prefill", between(0.09, 0.16)), ("decode", between(0.02, 0.03))):
            steps = between(30.0, 40.0)
            for name in ("tgi_batch_inference_duration", "tgi_batch_forward_duration"):
                ex.histogram(name, {**lab, "method": method}, steps, med, TGI_DURATION_BUCKETS)
    return ex.text()


@pytest.fixture(scope="module")
def tgi_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return served_analysis(tgi_surge(), "tgi", tmp_path_factory)


def test_a_demand_surge_is_reported_as_load(tgi_report: dict[str, Any]) -> None:
    qps = sig(tgi_report, "serving.qps:value")
    assert qps["baseline"] == pytest.approx(8.0, rel=0.02)
    assert qps["now"] == pytest.approx(13.7, rel=0.02)
    assert qps["verdict"] == "anomalous"
    rate = finding(tgi_report, "arrival_rate")
    assert rate["status"] == "fired"
    assert rate["numbers"]["ratio"] == pytest.approx(13.7 / 8.0, rel=0.03)
    assert any("more requests than in the baseline" in line for line in rate["text"])
    c = tgi_report["conclusion"]
    assert c["cause"] == "demand_surge", c
    assert c["primary_layer"] == "serving" and c["suspect"]["kind"] == "service"
    assert "demand surge" in c["text"]
    assert any("×1.7" in line for line in c["evidence"]["suspect"]["text"])
