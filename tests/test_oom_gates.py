"""The analyzers' gated expressions (a literal word test before a long case-insensitive
alternation: OOM, serving, rollout, utilization) answer exactly what the expressions alone
answer."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from cockpit.analysis import rollout, serving, utilization
from cockpit.analysis.logtext import Gated
from cockpit.analysis.oom import _DETECT, _ENGINE, _FATAL, _REQUEST, _SHARED_GPU, _STARTUP

GATED: list[Gated] = [
    *(_STARTUP, _DETECT, _SHARED_GPU, _REQUEST, _FATAL, *(g for g, _ in _ENGINE)),
    *(g for g in vars(serving).values() if isinstance(g, Gated)),
    *(g for g, _ in serving._ENGINES),
    *(g for g in vars(utilization).values() if isinstance(g, Gated)),
    *(g for g in vars(rollout).values() if isinstance(g, Gated)),
]
PIECES = [
    "profile_run", "_dummy_sampler_run", "_DUMMY_RUN", "determine_available_memory",
    "Determine_Num_Available_Blocks", "capture_model", "Capturing CUDA graph", "capturing graph",
    "CUDA graph", "cuda  graph", "warm up", "WarmUp", "warmup", "load_model", "Loading model",
    "LOADING WEIGHTS", "Initializing an ", "initializing a ", "init_device",
    "initialize_kv_cache", "vllm", "MQLLMEngine", "[core.py", "llm_engine.py", "Engine 000",
    "APIServer pid", "text_generation", "Text-Generation", "sglang", "TP3]", "tp12]",
    "scheduler.py: Scheduler hit an exception", "xTP1]", " ", "INFO ", "12", "ſ", "K", "İ",
    "é", "pid", "graph", "warm", "load", "_", "-", ".", "CUDA out of memory", "OutOfMemoryError",
    "Not Enough Memory", "maximum number of tokens that can be stored in KV cache", "memory",
    "KV cache is needed, which is larger than the available KV cache memory",
    "No available memory for the cache blocks", "time-slicing", "timeslic", "Time Slic",
    "sharing.timeSlicing", "nvidia.com/gpu.shared", "Shared GPU", "second pod on the same GPU",
    "second pod on same GPU", "Added request", '"POST /v1/', '"get /v1/', "Received Request",
    "generate_stream", "/generate", "/generated", "EngineDeadError", "is already dead",
    "Got fatal signal", "EngineCore encountered a fatal error", "terminating server process",
    "Shutting down", "dead", "fatal",
    "Model is overloaded", '"error_type": "overloaded"', "429 Too Many Requests",
    "Exceeds maximum queue size", "request queue is full", "Queue Is Full", "BackPressureError",
    "backpressure", " 429 ", "503", "HTTP/1.1", "64 concurrent users", "8 Concurrent Clients",
    "--concurrency=32", "num_clients: 4", "num-clients 9", "users=12",
    "Maximum request concurrency: 16", "--max-concurrency 8", "Mean TTFT (ms): 812.5",
    "P99 TTFT (ms): 90", "time to first token: 1.2 s", "Time-To-First-Token 300ms",
    "text_generation_router", "Text-Generation", "tritonserver", "TRITON", "sglang",
    "#queue-req: 3", "vLLM", "Engine 000", "DCGM_FI_DEV_GPU_UTIL 35%", "GPU-Util 12 %",
    "GPU util: 40%", "GPUUtilization 7%", "gpu_util=3%", "DCGM_FI_PROF_SM_ACTIVE 0.12",
    "SM active 0.3 - 0.5", "sm_active", "container_cpu_cfs_throttled_periods_total",
    "CFS throttling", "CPU Throttled", "Time  0.512 ( 0.498)  Data  0.480 ( 0.470)",
    "does not have many workers", "num_workers=2", "oscillating", "Sawtooth", "0% <-> 100%",
    "spiky", "bursts of 100%", "tokenizer_config.json", "chat_template.jinja",
    "special_tokens_map", "eos_token_id", "stop_token_ids", "generation_config",
    "ChatTemplateResolutionError", "default chat template is no longer allowed",
    "chat_template is not set", "chat template is missing", "Cannot use chat template",
    "ſ", "K", "İ", "é", " ", "_", "-", ":", "=", "%", "1", "0.5", "Data", "first", "users",
]  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=8))
def test_a_gate_answers_what_its_expression_answers(parts: list[str]) -> None:
    line = "".join(parts)
    for g in GATED:
        got, want = g.search(line), g.rx.search(line)
        assert (got and got.span()) == (want and want.span()), (line, g.rx.pattern)


def test_every_gated_expression_is_listed() -> None:
    assert len(GATED) >= 26


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("aeiloprstuyACGLPTU:=%_- 0159ſKİ"), max_size=40))
def test_a_gate_answers_what_its_expression_answers_on_any_text(line: str) -> None:
    for g in GATED:
        got, want = g.search(line), g.rx.search(line)
        assert (got and got.span()) == (want and want.span()), (line, g.rx.pattern)
