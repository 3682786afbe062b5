"""The OOM analyzer over every wording of formats.md §A1 (not only the shared cases)."""

from __future__ import annotations

import pytest

from cockpit.analysis.oom import explain_oom_text, parse_allocator_message

CURRENT_OTHER = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total "
    "capacity of 23.65 GiB of which 3.06 MiB is free. Process 12345 has 6.50 GiB memory in use. "
    "Including non-PyTorch memory, this process has 17.11 GiB memory in use. Of the allocated "
    "memory 16.62 GiB is allocated by PyTorch, and 40.10 MiB is reserved by PyTorch but "
    "unallocated. If reserved but unallocated memory is large try setting "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation "
    "for Memory Management  (https://docs.pytorch.org/docs/stable/notes/cuda.html)"
)
TORCH_21 = (
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB. GPU 0 has a "
    "total capacty of 14.75 GiB of which 3.94 GiB is free. Including non-PyTorch memory, this "
    "process has 10.80 GiB memory in use. Of the allocated memory 2.51 GiB is allocated by "
    "PyTorch, and 8.16 GiB is reserved by PyTorch but unallocated. If reserved but unallocated "
    "memory is large try setting max_split_size_mb to avoid fragmentation.  See documentation "
    "for Memory Management and PYTORCH_CUDA_ALLOC_CONF"
)
PRE_21 = (
    "RuntimeError: CUDA out of memory. Tried to allocate 1.69 GiB (GPU 0; 14.56 GiB total "
    "capacity; 649.97 MiB already allocated; 1.31 GiB free; 1.01 GiB reserved in total by "
    "PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid "
    "fragmentation."
)


def test_current_format_with_another_process() -> None:
    r = explain_oom_text(CURRENT_OTHER)
    assert r is not None
    ev = r.events[0]
    assert ev.format == "current"
    assert ev.requested_bytes == 20 * 1024**2
    assert [p.pid for p in r.other_processes] == [12345]
    assert r.non_pytorch_gib == pytest.approx(17.11 - 16.62 - 40.10 / 1024, abs=0.002)
    # free 3.06 MiB < requested 20 MiB <= reserved-unallocated 40.10 MiB: 40 MiB of slack is
    # not "large" (PyTorch's own hint), the 6.5 GiB held by the other process is the cause
    assert r.classes == ["other_process"]
    assert "kill_stray_process" in r.mitigation_ids


def test_torch_21_typo_is_fragmentation() -> None:
    r = explain_oom_text(TORCH_21)
    assert r is not None
    assert r.events[0].format == "torch_2_1"
    # free 3.94 < requested 8.00 <= reserved-unallocated 8.16
    assert r.likely == "fragmentation"
    assert r.reserved_total_gib == pytest.approx(10.67, abs=0.01)
    assert "expandable_segments" in r.mitigation_ids


def test_pre_21_reserved_in_total_is_total() -> None:
    r = explain_oom_text(PRE_21)
    assert r is not None
    ev = r.events[0]
    assert ev.format == "pre_2_1"
    assert r.total_gib == pytest.approx(14.56)
    assert r.reserved_total_gib == pytest.approx(1.01)
    # reserved − allocated = 1.01 GiB − 649.97 MiB
    assert r.reserved_unallocated_gib == pytest.approx(1.01 - 649.97 / 1024, abs=0.002)
    # 14.56 total − 1.01 reserved − 1.31 free: 12.24 GiB is held outside this process, so
    # the workload of this process (1 GiB) is not what filled the card
    assert r.outside_process_gib == pytest.approx(12.24, abs=0.01)
    assert r.likely == "other_tenant_on_shared_gpu"


def test_more_than_1eb_is_a_secondary_error() -> None:
    r = explain_oom_text(
        "RuntimeError: CUDA out of memory. Tried to allocate more than 1EB memory."
    )
    assert r is not None
    assert r.likely == "garbage_size"
    assert r.secondary_error is True
    assert r.mitigation_ids == ["find_first_error"]
    assert "oom.first_error" in r.next_check_ids


def test_huge_request_is_too_big_for_the_gpu() -> None:
    text = (
        "CUDA out of memory. Tried to allocate 130206.04 GiB. GPU 0 has a total capacity of "
        "79.10 GiB of which 70.00 GiB is free. Including non-PyTorch memory, this process has "
        "9.00 GiB memory in use. Of the allocated memory 8.00 GiB is allocated by PyTorch, and "
        "512 bytes is reserved by PyTorch but unallocated."
    )
    r = explain_oom_text(text)
    assert r is not None and r.likely == "too_big_for_gpu"
    assert r.reserved_unallocated_gib == 0.0
    assert "sharding" in r.long_term_ids


def test_allowed_and_private_pools_and_kib() -> None:
    ev = parse_allocator_message(
        "CUDA out of memory. Tried to allocate 512.00 KiB. GPU 1 has a total capacity of 39.39 GiB "
        "of which 20.00 GiB is free. Including non-PyTorch memory, this process has 19.00 GiB "
        "memory in use. 18.05 GiB allowed; Of the allocated memory 18.00 GiB is allocated by "
        "PyTorch, with 2.00 GiB allocated in private pools (e.g., CUDA Graphs), and 100.00 MiB is "
        "reserved by PyTorch but unallocated."
    )
    assert ev.device == 1
    assert ev.requested_bytes == 512 * 1024
    assert ev.allowed_bytes == round(18.05 * 1024**3)
    assert ev.private_pools_bytes == 2 * 1024**3
    r = explain_oom_text(ev.text)
    assert r is not None and "allowed_fraction_cap" in r.classes


def test_message_split_over_lines_is_joined() -> None:
    text = (
        "Traceback (most recent call last):\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a\n"
        "total capacity of 79.15 GiB of which 1.00 GiB is free. Including non-PyTorch memory,\n"
        "this process has 78.00 GiB memory in use. Of the allocated memory 70.00 GiB is allocated\n"
        "by PyTorch, and 6.00 GiB is reserved by PyTorch but unallocated.\n"
    )
    r = explain_oom_text(text)
    assert r is not None
    assert r.requested_gib == 2.0 and r.reserved_unallocated_gib == 6.0
    assert r.likely == "fragmentation"


def test_engine_level_messages() -> None:
    sg = explain_oom_text(
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."
    )
    assert sg is not None and sg.engine == "sglang" and sg.likely == "kv_pool_too_small"
    assert sg.phase == "startup"
    raw = explain_oom_text("RuntimeError: CUDA error: out of memory")
    assert raw is not None and raw.subtype == "cuda_api" and raw.likely == "cuda_api_oom"
    v1 = explain_oom_text(
        "ValueError: To serve at least one request with the models's max seq len (131072), "
        "(16.00 GiB KV cache is needed, which is larger than the available KV cache memory "
        "(9.50 GiB). Based on the available memory, the estimated maximum model length is 77824. "
        "Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing "
        "the engine."
    )
    assert v1 is not None and v1.subtype == "kv_cache_capacity"
    assert v1.max_model_len == 131072 and v1.kv_capacity_tokens == 77824


def test_startup_phase_from_profile_run() -> None:
    text = (
        "INFO 01-01 00:00:00 model_runner.py:1] Loading model weights took 14.9 GiB\n"
        'File ".../worker.py", line 200, in determine_num_available_blocks\n'
        "    self.model_runner.profile_run()\n" + CURRENT_OTHER
    )
    r = explain_oom_text(text)
    assert r is not None and r.phase == "startup" and r.stage == "profile_run"


def test_repeated_message_counted_once() -> None:
    r = explain_oom_text(TORCH_21 + "\n" + TORCH_21)
    assert r is not None and r.event_count == 1


def test_no_oom_no_report() -> None:
    assert explain_oom_text("everything is fine\nloss=0.1") is None


def test_runtime_prefill_on_a_preallocating_engine_is_activation_headroom() -> None:
    """The same allocator numbers: fragmentation alone in a plain PyTorch process; on a
    vLLM server at runtime, right after a request, the prefill outgrew the headroom."""
    plain = explain_oom_text(TORCH_21)
    assert plain is not None and plain.likely == "fragmentation"
    served = "\n".join(
        [
            "$ vllm serve m --gpu-memory-utilization 0.5",
            "INFO 02-10 18:06:30 engine.py:275] Added request cmpl-1-0.",
            "ERROR 02-10 18:06:30 engine.py:139] " + TORCH_21,
        ]
    )
    r = explain_oom_text(served)
    assert r is not None and r.phase == "runtime" and r.trigger == "long_prompt_prefill"
    assert r.classes[:2] == ["activation_headroom_exhausted", "fragmentation"]
    assert r.contributing[0] == "fragmentation"
    # 14.75 x 0.5 - non-PyTorch (10.80 - 2.51 - 8.16)
    assert r.headroom_outside_budget_gib == pytest.approx(14.75 * 0.5 - 0.13, abs=0.01)
    assert r.mitigation_ids[:2] == ["lower_gpu_mem_util", "cap_prefill"]
    # A start-up OOM on the same engine is not a request's prefill.
    startup = served.replace("Added request cmpl-1-0.", "Loading model weights took 5 GiB")
    s = explain_oom_text(startup)
    assert s is not None and s.likely != "activation_headroom_exhausted"
