"""Engine-log, utilization and rollout analyzers beyond the shared cases."""

from __future__ import annotations

from cockpit.analysis.engine_args import EngineArgs, params_from_name, update_engine_args
from cockpit.analysis.engine_logs import explain_engine_log_text
from cockpit.analysis.rollout import explain_rollout_text
from cockpit.analysis.utilization import explain_util_text

V0 = (
    "INFO 07-24 09:55:30 metrics.py:334] Avg prompt throughput: 0.0 tokens/s, Avg generation "
    "throughput: 2136.3 tokens/s, Running: 247 reqs, Swapped: 0 reqs, Pending: {p} reqs, GPU KV "
    "cache usage: {kv}%, CPU KV cache usage: 0.0%"
)


def test_vllm_v0_pending_and_kv() -> None:
    r = explain_engine_log_text("\n".join([V0.format(p=300, kv=97.0), V0.format(p=740, kv=99.7)]))
    assert r is not None
    assert r.engine == "vllm" and r.cause == "kv_cache_saturation"
    assert r.waiting == 740 and r.waiting_trend == "rising" and r.kv_usage == 0.997


def test_sglang_prefill_long_batch_head_of_line() -> None:
    line = (
        "[2025-06-05 15:08:56 TP0] Prefill batch. #new-seq: 1, #new-token: {n}, #cached-token: 0, "
        "token usage: 0.06, #running-req: 7, #queue-req: {q}"
    )
    r = explain_engine_log_text("\n".join([line.format(n=16384, q=10), line.format(n=16384, q=40)]))
    assert r is not None and r.engine == "sglang"
    assert r.cause == "long_prompt_head_of_line" and r.prefill_tokens_max == 16384


def test_no_server_queue_and_idle() -> None:
    busy = (
        "Engine 000: Avg prompt throughput: 900.0 tokens/s, Avg generation throughput: 800.0 "
        "tokens/s, Running: 12 reqs, Waiting: 0 reqs, GPU KV cache usage: 20.0%"
    )
    r = explain_engine_log_text(busy)
    assert r is not None and r.cause == "no_server_queue" and r.category == "ttft_spike"
    idle = busy.replace("Running: 12", "Running: 0")
    r2 = explain_engine_log_text(idle)
    assert r2 is not None and r2.cause == "few_requests_idle" and r2.category == "low_util"


def test_a_stats_line_without_the_queue_field_says_nothing_about_the_queue() -> None:
    """No ``Waiting``/``Running`` field and no preemption warning: neither "Waiting always
    0" nor "0 preemptions" nor idle — the text cannot tell, and says so."""
    from cockpit.analysis.explain import explain_text
    from cockpit.analysis.explain_report import to_text

    line = (
        "INFO 12-01 03:12:07 metrics.py:455] Avg prompt throughput: 2100.4 tokens/s, "
        "Avg generation throughput: 310.2 tokens/s, GPU KV cache usage: 97.5%"
    )
    r = explain_engine_log_text("\n".join([line] * 3))
    assert r is not None and r.causes == ["queue_not_reported"]
    assert r.preemptions is None and r.waiting_max is None
    assert "ttft.queue_metric" in r.next_check_ids
    for lang in ("en", "zh"):
        text = to_text(explain_text(line), lang)
        assert "Waiting" in text and "0" not in text.split("Waiting")[1][:12], text
        assert "preemptions" not in text and "抢占" not in text, text
    # the field in some samples only: the queue is not "always 0" either
    mixed = explain_engine_log_text(
        line + "\n" + line.replace("GPU KV", "Running: 3 reqs, Waiting: 0 reqs, GPU KV")
    )
    assert mixed is not None and mixed.causes == ["queue_not_reported"]


def test_tgi_queue_time() -> None:
    r = explain_engine_log_text(
        'INFO text_generation_router::server: Success total_time="2.1s" validation_time="1ms" '
        'queue_time="1.5s" inference_time="600ms" time_per_token="30ms"'
    )
    assert r is not None and r.engine == "tgi"
    assert r.queue_time_ms_max == 1500.0 and r.time_per_token_ms_max == 30.0


def test_engine_args_spellings() -> None:
    a = EngineArgs()
    update_engine_args(
        a,
        "$ vllm serve /m/Qwen2.5-0.5B --enable-prefix-caching -tp 4 --max_model_len=8192 "
        "--gpu-memory-utilization 0.8",
    )
    assert a.engine == "vllm" and a.tensor_parallel_size == 4 and a.max_model_len == 8192
    assert a.gpu_memory_utilization == 0.8 and a.model_params_b == 0.5
    b = EngineArgs()
    update_engine_args(b, "python -m sglang.launch_server --model-path x/Llama-70B --tp-size 8")
    assert b.engine == "sglang" and b.tensor_parallel_size == 8 and b.model_params_b == 70
    assert params_from_name("/models/no-size-here") is None


def test_util_collectives_and_unclassified() -> None:
    prof = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL   0.000us  0.00%  1.2s  45.20%  3.1ms  400"
    r = explain_util_text(prof)
    assert r is not None and r.cause == "collectives_dominate"
    r2 = explain_util_text("DCGM_FI_DEV_GPU_UTIL = 22% for the last hour")
    assert r2 is not None and r2.cause == "unclassified" and r2.gpu_util_pct == 22
    assert explain_util_text("GPU util 97%") is None


def test_util_cfs_throttling() -> None:
    r = explain_util_text("rate(container_cpu_cfs_throttled_periods_total[5m]) is 0.8")
    assert r is not None and r.cause == "host_cpu_bound" and r.cpu_throttling_mentioned


def test_rollout_http_share_and_compute_capability() -> None:
    lines = [
        f'INFO:     10.0.0.{i}:1 - "POST /v1/chat/completions HTTP/1.1" 400 Bad Request'
        for i in range(3)
    ]
    lines.append('INFO:     10.0.0.9:1 - "POST /v1/completions HTTP/1.1" 200 OK')
    lines.append(
        "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0."
    )
    r = explain_rollout_text("\n".join(lines))
    assert r is not None and r.cause == "gpu_arch_incompatible"
    assert r.http_400_share == 0.75
    assert r.endpoints["/v1/chat/completions"] == {"400": 3}


def test_rollout_plain_500_is_not_a_rollout_finding() -> None:
    assert explain_rollout_text('"POST /v1/completions HTTP/1.1" 500 Internal Server Error') is None


def test_sawtooth_without_step_timing_has_no_single_level() -> None:
    from cockpit.analysis.utilization import explain_util_text

    r = explain_util_text("nvidia-smi: GPU-Util oscillates 5% <-> 95% during training")
    assert r is not None and r.util_pattern == "sawtooth"
    assert (r.gpu_util_trough_pct, r.gpu_util_peak_pct) == (5, 95)
    assert r.gpu_util_pct is None  # a swing has no single level without the duty cycle
    steady = explain_util_text("GPU-Util 22% on all ranks")
    assert steady is not None and steady.gpu_util_pct == 22 and steady.util_pattern is None


def test_the_ttft_playbook_names_the_engine_log_cause_in_words() -> None:
    """The TTFT playbook's engine-log check: a human sentence in each language, never the
    analyzer's class name; stats lines without the queue field leave the item open."""
    from cockpit.analysis.playbooks.data import PlaybookData
    from cockpit.analysis.playbooks.render import finding_text
    from cockpit.analysis.playbooks.result import ItemStatus
    from cockpit.analysis.playbooks.ttft_checks import ttft_prefill

    line = (
        "INFO 12-01 03:12:07 metrics.py:455] Avg prompt throughput: 2100.4 tokens/s, "
        "Avg generation throughput: 310.2 tokens/s, GPU KV cache usage: 97.5%"
    )
    r = ttft_prefill(PlaybookData(logs={"vllm-0": line}))
    assert r.status is ItemStatus.OPEN
    for lang in ("en", "zh"):
        text = finding_text(r, lang)
        assert "queue_not_reported" not in text and "Waiting/Pending" in text, text
    assert r.evidence[0].value == "Waiting max —; KV cache max 97.5 %"
    queued = line.replace("GPU KV", "Running: 40 reqs, Waiting: 12 reqs, GPU KV").replace(
        "97.5%", "40.0%"
    )
    # one line of a few waiting cannot tell a queue from a moment: still open
    assert ttft_prefill(PlaybookData(logs={"vllm-0": queued})).status is ItemStatus.OPEN
    lines = "\n".join([queued, queued.replace("Waiting: 12", "Waiting: 30")])
    r2 = ttft_prefill(PlaybookData(logs={"vllm-0": lines}))
    assert r2.status is ItemStatus.OK and "Waiting > 0" in finding_text(r2, "en")


def test_one_line_with_a_few_waiting_is_not_called_an_overload() -> None:
    """One stats line with fewer requests waiting than running is a moment of a busy engine
    or the start of a queue: it says it cannot tell, and asks for more lines; a queue longer
    than the running batch, or waiting in several lines, is still a queue."""
    one = V0.format(p=1, kv=71.1).replace("Running: 247", "Running: 12")
    r = explain_engine_log_text(one)
    assert r is not None and r.cause == "queue_one_line" and r.mitigation_ids == []
    assert "ttft.more_lines" in r.next_check_ids
    long_queue = V0.format(p=300, kv=71.1)  # 300 waiting behind 247 running
    assert explain_engine_log_text(long_queue).cause == "queueing_overload"  # type: ignore[union-attr]
    two = "\n".join([one, one.replace("Pending: 1", "Pending: 2")])
    assert explain_engine_log_text(two).cause == "queueing_overload"  # type: ignore[union-attr]
