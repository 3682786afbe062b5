"""``cockpit analyze --json`` against a real Prometheus backfilled with upstream-faithful
exposition (``tests/lib/upstream_om.py``): what each profile maps, read the way the
engines export it — SGLang's priority totals counted once and its aborts read as client
aborts, and a demand surge at TGI reported as one."""

from __future__ import annotations

import json
import math
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

MAX_TOKENS_BUCKETS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000)
"""vLLM's build_1_2_5 buckets up to its max_model_len (loggers.py)."""
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
    carry the total under ``priority=""`` (no label) and again per priority; a client
    sends long prompts (median 800 → 6,000 tokens), the queue builds 1 → 120 and clients
    abort 0.1 % → 8 % of the finished requests."""
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
    ex.histogram("sglang:prompt_tokens_histogram", tok, rate, between(800.0, 6000.0), TOKEN_BUCKETS)
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


def test_sglang_prompt_lengths_come_from_its_token_histogram(
    sglang_report: dict[str, Any],
) -> None:
    p95 = sig(sglang_report, "serving.prompt_len:p95")
    assert "sglang:prompt_tokens_histogram_bucket" in p95["query"]
    assert p95["verdict"] == "anomalous" and p95["now"] > 4 * p95["baseline"]
    long = finding(sglang_report, "long_prompts")
    assert long["status"] == "fired"
    assert long["numbers"]["p95_now"] > 4 * long["numbers"]["p95_base"]


def test_tgi_runtime_running_and_ttft_proxy_have_data(tgi_report: dict[str, Any]) -> None:
    running = sig(tgi_report, "serving.running:value")
    assert running["now"] == pytest.approx(2 * 53.7, rel=0.02)
    kv = sig(tgi_report, "runtime.kv_cache:value")
    assert "tgi_batch_current_max_tokens" in kv["query"]
    assert kv["now"] == pytest.approx(75.0, rel=0.02)
    assert kv["baseline"] == pytest.approx(30.0, rel=0.02)
    runtime = next(v for v in tgi_report["layers"] if v["layer"] == "runtime")
    assert runtime["verdict"] != "no_data"
    ttft = sig(tgi_report, "serving.ttft:avg")
    # Mean of a log-normal (sigma 0.5) is median × e^(1/8): queue 6.1 s, prefill 0.16 s.
    assert ttft["now"] == pytest.approx((6.1 + 0.16) * 1000 * math.exp(0.125), rel=0.05)
    assert ttft["verdict"] == "anomalous"
    rule = next(r for r in tgi_report["rules"] if r["id"] == "ttft_and_tpot")
    assert rule["status"] != "no_data"


# -- vLLM: failures before the engine and a max_tokens shift -------------------------------


def vllm_frontend() -> str:
    """Two vLLM replicas in ``vllm-ns`` whose API server starts refusing requests (400 and
    503 before the engine, 0 → ~9 %, and 5xx answers 0 → 6 %) while the engine's own
    ``finished_reason=error`` stays at 0.1 %; clients raise max_tokens 512 → 4,096."""
    ex = Exposition()
    for pod, ip in (
        ("vllm-llama-7c9d8f-a1b2c", "10.0.5.21"),
        ("vllm-llama-7c9d8f-d3e4f", "10.0.5.22"),
    ):
        scrape = pod_labels("vllm-ns", pod, "vllm", 8000, ip)
        lab = {**scrape, "model_name": "meta-llama/Llama-3.1-8B-Instruct", "engine": "0"}
        ex.gauge("vllm:num_requests_running", lab, between(20.0, 22.0))
        ex.gauge("vllm:num_requests_waiting", lab, between(0.0, 1.0))
        ex.gauge("vllm:kv_cache_usage_perc", lab, between(0.5, 0.55))
        for reason, share in (("stop", 0.9), ("length", 0.099), ("error", 0.001)):
            ex.counter(
                "vllm:request_success_total",
                {**lab, "finished_reason": reason},
                between(5.0 * share, 5.0 * share),
            )
        fail = {**scrape, "model_name": lab["model_name"], "stage": "input_processing"}
        ex.counter("vllm:request_failure_total", {**fail, "code": "400"}, between(0.002, 0.2))
        ex.counter("vllm:request_failure_total", {**fail, "code": "503"}, between(0.0, 0.3))
        http = {**scrape, "handler": "/v1/chat/completions", "method": "POST"}
        ex.counter("http_requests_total", {**http, "status": "2xx"}, between(5.0, 5.0), 1e5)
        ex.counter("http_requests_total", {**http, "status": "4xx"}, between(0.002, 0.2))
        ex.counter("http_requests_total", {**http, "status": "5xx"}, between(0.0, 0.35))
        rate = between(5.0, 5.0)
        ex.histogram(
            "vllm:e2e_request_latency_seconds", lab, rate, between(3.0, 3.1), SECONDS_BUCKETS
        )
        ex.histogram(
            "vllm:time_to_first_token_seconds", lab, rate, between(0.1, 0.1), SECONDS_BUCKETS
        )
        ex.histogram(
            "vllm:request_params_max_tokens", lab, rate, between(512.0, 4096.0), MAX_TOKENS_BUCKETS
        )
    return ex.text()


@pytest.fixture(scope="module")
def vllm_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return served_analysis(vllm_frontend(), "vllm-ns", tmp_path_factory)


def test_vllm_failures_before_the_engine_are_server_errors(vllm_report: dict[str, Any]) -> None:
    engine = sig(vllm_report, "serving.error_ratio:value")
    assert engine["verdict"] == "normal"
    rejected = sig(vllm_report, "serving.rejected_ratio:value")
    assert "vllm:request_failure_total" in rejected["query"]
    # (0.2 + 0.3) / (0.5 + 5) per replica.
    assert rejected["now"] == pytest.approx(100 * 0.5 / 5.5, rel=0.03)
    assert rejected["verdict"] == "anomalous"
    api = sig(vllm_report, "serving.api_error_ratio:value")
    assert api["now"] == pytest.approx(100 * 0.35 / 5.55, rel=0.03)
    assert api["verdict"] == "anomalous"
    servers = finding(vllm_report, "server_errors")
    assert servers["status"] == "fired"
    assert {"serving.rejected_ratio:value", "serving.api_error_ratio:value"} <= set(
        servers["evidence"]
    )
    assert any("before the engine" in line for line in servers["text"])


def test_vllm_max_tokens_shift_is_read(vllm_report: dict[str, Any]) -> None:
    p50 = sig(vllm_report, "serving.max_tokens:p50")
    assert "vllm:request_params_max_tokens_bucket" in p50["query"]
    assert p50["verdict"] == "anomalous" and p50["ratio"] > 4


# -- Triton with the TensorRT-LLM backend: a KV-cache overload -----------------------------


def triton_trtllm() -> str:
    """One Triton pod in ``triton`` serving a TensorRT-LLM model: KV-cache blocks 60 % →
    97 % in use and 2 → 60 requests waiting in the backend's scheduler, while Triton's own
    pending count stays at 0 (in-flight batching hands requests over at once)."""
    ex = Exposition()
    scrape = pod_labels("triton", "triton-trtllm-5d8f7b-q7w2e", "triton", 8002, "10.0.6.5")
    lab = {**scrape, "model": "tensorrt_llm", "version": "1"}
    ok = between(6.0, 6.0)
    ex.counter("nv_inference_request_success", lab, ok, 1e5)
    ex.counter("nv_inference_request_failure", {**lab, "reason": "BACKEND"}, between(0.003, 0.003))
    ex.counter("nv_inference_count", lab, ok, 1e5)
    ex.counter("nv_inference_exec_count", lab, ok, 1e5)
    ex.counter("nv_inference_request_duration_us", lab, between(6.0 * 2.5e6, 6.0 * 9e6))
    ex.counter("nv_inference_queue_duration_us", lab, between(6.0 * 200.0, 6.0 * 300.0))
    ex.gauge("nv_inference_pending_request_count", lab, between(0.0, 0.0))
    for kind, level in (
        ("waiting", between(2.0, 60.0)),
        ("scheduled", between(40.0, 64.0)),
        ("context", between(4.0, 6.0)),
        ("generation", between(36.0, 58.0)),
    ):
        ex.gauge("nv_trt_llm_request_metrics", {**lab, "request_type": kind}, level)
    for kind, level in (
        ("fraction", between(0.6, 0.97)),
        ("used", between(6000.0, 9700.0)),
        ("free", between(4000.0, 300.0)),
        ("max", between(10000.0, 10000.0)),
    ):
        ex.gauge("nv_trt_llm_kv_cache_block_metrics", {**lab, "kv_cache_block_type": kind}, level)
    return ex.text()


def test_triton_trtllm_kv_cache_and_waiting_requests(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    d = served_analysis(triton_trtllm(), "triton", tmp_path_factory)
    queue = sig(d, "serving.queue:value")
    assert 'request_type="waiting"' in queue["query"]
    assert queue["now"] == pytest.approx(60.0, rel=0.02) and queue["verdict"] == "anomalous"
    assert sig(d, "serving.running:value")["now"] == pytest.approx(64.0, rel=0.02)
    kv = sig(d, "runtime.kv_cache:value")
    assert kv["now"] == pytest.approx(97.0, rel=0.01) and kv["verdict"] == "anomalous"
    assert d["conclusion"]["cause"] == "kv_cache_overload"


# -- dcgm-exporter: the counters it synthesizes, and GR engine activity --------------------


def dcgm_counters() -> str:
    """One GPU of a workload in ``llm`` scraped from a dcgm-exporter whose CSV turns on
    ``DCGM_EXP_XID_ERRORS_COUNT`` and ``DCGM_EXP_CLOCK_EVENTS_COUNT`` and, as both shipped
    CSVs, leaves SM activity off: graphics-engine activity drops 0.9 → 0.3 as the GPU
    throttles (hw_thermal events) and reports Xid 79."""
    ex = Exposition()
    scrape = pod_labels("llm", "vllm-qwen-6b8c9d-z9x8c", "vllm", 9400, "10.0.7.3")
    lab = {
        **scrape,
        "gpu": "0",
        "UUID": "GPU-5568d2b1-3c1e-4f7a-9a61-0c2f7e9b1d44",
        "pci_bus_id": "00000000:17:00.0",
        "device": "nvidia0",
        "modelName": "NVIDIA H100 80GB HBM3",
        "Hostname": "gpu-node-c",
        "DCGM_FI_DRIVER_VERSION": "570.124.06",
    }
    ex.gauge("DCGM_FI_DEV_GPU_UTIL", lab, between(95.0, 99.0))
    ex.gauge("DCGM_FI_DEV_GPU_TEMP", lab, between(66.0, 71.0))
    ex.gauge("DCGM_FI_DEV_SM_CLOCK", lab, between(1980.0, 1965.0))
    ex.gauge("DCGM_FI_DEV_FB_USED", lab, between(70000.0, 70000.0))
    ex.gauge("DCGM_FI_DEV_POWER_USAGE", lab, between(600.0, 610.0))
    ex.gauge("DCGM_FI_DEV_XID_ERRORS", lab, between(0.0, 0.0))
    ex.gauge("DCGM_FI_PROF_GR_ENGINE_ACTIVE", lab, between(0.9, 0.3))
    window = {"window_size_in_ms": "300000"}
    ex.windowed("DCGM_EXP_XID_ERRORS_COUNT", {**lab, **window, "xid": "79"}, lambda x: 2.0, 0.5)
    ex.windowed(
        "DCGM_EXP_CLOCK_EVENTS_COUNT",
        {**lab, **window, "clock_event": "hw_thermal"},
        lambda x: 12.0,
        0.5,
    )
    ex.windowed(
        "DCGM_EXP_CLOCK_EVENTS_COUNT",
        {**lab, **window, "clock_event": "gpu_idle"},
        lambda x: 3.0,
    )
    return ex.text()


def test_dcgm_counters_and_gr_engine_activity(tmp_path_factory: pytest.TempPathFactory) -> None:
    d = served_analysis(dcgm_counters(), "llm", tmp_path_factory)
    sm = sig(d, "hardware.sm_active:value")
    assert "DCGM_FI_PROF_GR_ENGINE_ACTIVE" in sm["query"]
    assert sm["now"] == pytest.approx(30.0, rel=0.02) and sm["verdict"] == "anomalous"
    throttle = sig(d, "hardware.throttle:value")
    assert "DCGM_EXP_CLOCK_EVENTS_COUNT" in throttle["query"]
    # gpu_idle events all along leave the baseline unflagged; hw_thermal sets the flag.
    assert throttle["baseline"] == 0 and throttle["now"] == 1
    assert throttle["verdict"] == "anomalous"
    xid = sig(d, "hardware.xid:value")
    assert "DCGM_EXP_XID_ERRORS_COUNT" in xid["query"] and xid["verdict"] == "anomalous"
    # The Xid's code comes from the counter's xid label: 79, a GPU fallen off the bus.
    assert d["conclusion"]["cause"] == "gpu_lost", d["conclusion"]
    assert any("79" in line for line in d["conclusion"]["evidence"]["cause"]["text"])


# -- an inference gateway: the Gateway API Inference Extension's endpoint picker ----------


def inference_gateway() -> str:
    """An endpoint picker in ``llm-gw`` routing one model (v1 API names): its request
    latency rises 0.8 → 4 s while the request rate holds at 12 req/s."""
    ex = Exposition()
    scrape = pod_labels("llm-gw", "vllm-llama-epp-6c8d7f-m4n5p", "epp", 9090, "10.0.8.4")
    lab = {**scrape, "model_name": "food-review", "target_model_name": "food-review-1"}
    rate = between(12.0, 12.0)
    ex.counter("inference_objective_request_total", lab, rate, 1e4)
    ex.counter(
        "inference_objective_request_error_total",
        {**lab, "error_code": "ServiceUnavailable"},
        between(0.01, 0.01),
    )
    ex.histogram(
        "inference_objective_request_duration_seconds",
        lab,
        rate,
        between(0.8, 4.0),
        GIE_DURATION_BUCKETS,
    )
    ex.gauge("inference_pool_ready_pods", {**scrape, "name": "vllm-llama-pool"}, between(4, 4))
    return ex.text()


GIE_DURATION_BUCKETS = (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5)
GIE_DURATION_BUCKETS += (6, 8, 10, 15, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600)
"""The endpoint picker's request-duration buckets (metrics.go @ 8c7067f, up to 600 s)."""


def test_inference_gateway_fills_the_access_layer(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    d = served_analysis(inference_gateway(), "llm-gw", tmp_path_factory)
    assert "inference_gateway" in d["profiles"]
    p50 = sig(d, "access.latency:p50")
    assert "inference_objective_request_duration_seconds_bucket" in p50["query"]
    assert p50["verdict"] == "anomalous" and p50["ratio"] > 3
    qps = sig(d, "access.qps:value")
    assert qps["now"] == pytest.approx(12.0, rel=0.02) and qps["verdict"] == "normal"
    access = next(v for v in d["layers"] if v["layer"] == "access")
    assert access["verdict"] == "anomalous"
