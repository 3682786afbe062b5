"""The OOM analyzer's gated expressions (a literal word test before a long
case-insensitive alternation) answer exactly what the expressions alone answer."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from cockpit.analysis.oom import _DETECT, _ENGINE, _FATAL, _REQUEST, _SHARED_GPU, _STARTUP, _Gated

GATED: list[_Gated] = [_STARTUP, _DETECT, _SHARED_GPU, _REQUEST, _FATAL, *(g for g, _ in _ENGINE)]
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
]  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=8))
def test_a_gate_answers_what_its_expression_answers(parts: list[str]) -> None:
    line = "".join(parts)
    for g in GATED:
        got, want = g.search(line), g.rx.search(line)
        assert (got and got.span()) == (want and want.span()), (line, g.rx.pattern)
