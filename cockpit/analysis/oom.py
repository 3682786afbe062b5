"""CUDA out-of-memory messages: PyTorch's caching allocator and the engines' own checks.

Pure analysis over text lines (no I/O). Formats (``../shared/cases/formats.md`` §A1):

* PyTorch ≥ 2.2 (``c10/cuda/CUDACachingAllocator.cpp``)::

    CUDA out of memory. Tried to allocate {alloc}. GPU {dev} has a total capacity of
    {total} of which {free} is free. [Process {pid} has {X} memory in use. ]
    [Including non-PyTorch memory, this process has {X} memory in use. ][{X} allowed; ]
    Of the allocated memory {allocated} is allocated by PyTorch, [with {X} allocated in
    private pools (e.g., CUDA Graphs), ]and {reserved-allocated} is reserved by PyTorch
    but unallocated. ...

* torch 2.1: same, spelled ``total capacty``.
* torch ≤ 2.0: ``Tried to allocate 1.69 GiB (GPU 0; 14.56 GiB total capacity; 649.97 MiB
  already allocated; 1.31 GiB free; 1.01 GiB reserved in total by PyTorch)`` — here
  "reserved in total" is the whole reserved amount.
* ``Tried to allocate more than 1EB memory`` — a garbage size: the OOM is a symptom of an
  earlier bug (bogus shape), not a memory problem.
* Not caching-allocator OOMs, classified apart: raw ``CUDA error: out of memory``
  (cuBLAS/NCCL/context), vLLM sampler warm-up, vLLM KV-cache capacity check, TGI
  ``Not enough memory to handle N prefill tokens``, SGLang ``Not enough memory. Please
  try to increase --mem-fraction-static``.

Derived fields and the class ladder follow formats.md §C2:
``reserved_total = allocated + reserved_unallocated``; ``non_pytorch = process_in_use −
reserved_total``; fragmentation when ``free < requested ≤ reserved_unallocated``; too big
for the GPU when ``requested > total − non_pytorch``. A runtime OOM in a request's prefill
on an engine that pre-allocates its KV cache to a fixed share of the GPU (vLLM
``--gpu-memory-utilization``, SGLang ``--mem-fraction-static``) is *activation headroom
exhausted* (:func:`activation_headroom_exhausted`): the memory left outside the engine's
budget could not hold the prefill's activations; fragmentation and non-PyTorch memory
stay listed as contributing (formats.md §C1–C2, case oom-02). Mitigations and long-term fixes are
the handbook's (seed 000, 场景一: 降低 batch/并发/序列上限、回滚配置、清理异常进程；
checkpointing、sharding、量化、KV 管理或内存泄漏修复), matched to the class.
"""

from __future__ import annotations

import re
from collections import deque

from pydantic import BaseModel, Field

from cockpit.analysis import engine_args
from cockpit.analysis.context_facts import MEMORY_PROFILE_KEYWORDS, Fact, MemoryProfile
from cockpit.analysis.engine_args import EngineArgs, flags_for_engine, update_engine_args
from cockpit.analysis.logtext import (
    GIB,
    SIZE_RE,
    Gated,
    clip,
    gib,
    has_keyword,
    line_rank,
    size_to_bytes,
    snippet,
)

CATEGORY = "cuda_oom"
MAX_EVENTS = 32

# Fraction of the card held by non-PyTorch memory above which it is called out. CUDA
# context + cuBLAS workspaces are typically well under 1 GiB; oom-02 shows ~10 GiB of
# 79 GiB (NCCL/MoE workspaces) being the difference between fitting and not.
NON_PYTORCH_SHARE = 0.10
NON_PYTORCH_MIN_BYTES = 1 * GIB
# Memory held by other processes that is worth naming (CUDA context alone is ~0.3–0.5 GiB).
OTHER_PROCESS_MIN_BYTES = 512 * 1024**2
# Memory of the card held outside this process (total − free − this process) above which
# another tenant is named: this process's own CUDA context and workspaces stay well under
# 2 GiB (formats.md §A1; oom-10 shows 10.3 GiB of a 14.76 GiB T4 held by a co-tenant on a
# time-sliced GPU, k8s-device-plugin#323).
OUTSIDE_PROCESS_MIN_BYTES = 2 * GIB
OUTSIDE_PROCESS_SHARE = 0.10
# "If reserved but unallocated memory is large" (PyTorch's own hint): a reserved-unallocated
# pool below both figures cannot be what stands between the request and success (oom-10:
# 60 MiB; oom-02: 1.47 GiB of 79 GiB is).
FRAGMENTATION_MIN_BYTES = 256 * 1024**2
FRAGMENTATION_MIN_SHARE = 0.01

# Lower-case substrings of every line the analyzer needs to see (explain feeds only
# lines containing one of them): OOM wordings, message continuations, phase markers.
KEYWORDS = (
    "out of memory",
    "outofmemoryerror",
    "not enough memory",
    "kv cache",
    "cache blocks",
    "capacity",
    "allocated",
    "reserved",
    "pytorch",
    "profile_run",
    "dummy",
    "determine_",
    "capture",
    "graph",
    "warm",
    "load_model",
    "loading",
    "initializ",
    "init_device",
    "added request",
    "post /",
    "get /",
    "received request",
    "generate",
    "dead",
    "fatal",
    "terminat",
    "shutting down",
    "# gpu blocks",
    *engine_args.KEYWORDS,
    "mqllmengine",
    "core.py",
    "text_generation",
    "tp0]",
    "cudagraph",
    *MEMORY_PROFILE_KEYWORDS,
    "slic",
    "shared gpu",
    "replicas",
)


_DETECT = Gated(
    re.compile(
        r"out of memory|OutOfMemoryError|Not enough memory|"
        r"maximum number of tokens that can be stored in KV cache|"
        r"KV cache is needed, which is larger than the available KV cache memory|"
        r"No available memory for the cache blocks",
        re.IGNORECASE,
    ),
    ("memory", "maximum number of tokens"),
)
_ALLOC_START = re.compile(r"CUDA out of memory\. Tried to allocate", re.IGNORECASE)
_GARBAGE = re.compile(r"Tried to allocate more than 1EB memory", re.IGNORECASE)
_REQ = re.compile(r"Tried to allocate " + SIZE_RE)
_NEW_TOTAL = re.compile(
    r"GPU (\d+) has a total capac(i?)ty of " + SIZE_RE + r" of which " + SIZE_RE + r" is free"
)
_PROC = re.compile(r"Process (\d+) has " + SIZE_RE + r" memory in use")
_THIS_PROC = re.compile(r"this process has " + SIZE_RE + r" memory in use")
_ALLOWED = re.compile(SIZE_RE + r" allowed;")
_OF_ALLOC = re.compile(r"Of the allocated memory " + SIZE_RE + r" is allocated by PyTorch")
_PRIVATE = re.compile(r"with " + SIZE_RE + r" allocated in private pools")
_RES_UNALLOC = re.compile(SIZE_RE + r" is reserved by PyTorch but unallocated")
_OLD_GPU = re.compile(r"\(GPU (\d+); " + SIZE_RE + r" total capacity")
_OLD_ALLOC = re.compile(SIZE_RE + r" already allocated")
_OLD_FREE = re.compile(SIZE_RE + r" free;")
_OLD_RESERVED = re.compile(SIZE_RE + r" reserved in total by PyTorch")
_MSG_END = re.compile(
    r"reserved by PyTorch but unallocated|reserved in total by PyTorch|1EB memory"
)

_SAMPLER = re.compile(r"warming up (?:the )?sampler with (\d+) dummy requests", re.IGNORECASE)
_KV_CAP = re.compile(
    r"max seq len \((\d+)\) is larger than the maximum number of tokens that can be stored "
    r"in KV cache \((\d+)\)"
)
_KV_CAP_V1 = re.compile(
    r"max seq len \((\d+)\), \(?(\d+(?:\.\d+)?) GiB KV cache is needed, which is larger than "
    r"the available KV cache memory \((\d+(?:\.\d+)?) GiB\)(?:.*?estimated maximum model "
    r"length is (\d+))?"
)
_NO_KV_MEM = re.compile(r"No available memory for the cache blocks")
_TGI_PREFILL = re.compile(r"Not enough memory to handle (\d+) prefill tokens")
_SGLANG = re.compile(r"Not enough memory\. Please try to increase --mem-fraction-static")
_CUDA_API = re.compile(
    r"CUDA error: out of memory|CUDA_ERROR_OUT_OF_MEMORY|cudaErrorMemoryAllocation"
)
_GPU_BLOCKS = re.compile(r"# GPU blocks: (\d+)")
# A GPU shared by time-slicing (no memory isolation between its tenants): the device
# plugin's sharing config, a pasted comment, or the renamed resource.
_SHARED_GPU = Gated(
    re.compile(
        r"time[- ]?slic|sharing\.timeSlicing|nvidia\.com/gpu\.shared|shared GPU|"
        r"second pod on (?:the )?same GPU",
        re.IGNORECASE,
    ),
    ("time", "shared", "second pod on"),
)


# Where in the engine's life the text is (formats.md §C1).
_STARTUP = Gated(
    re.compile(
        r"profile_run|_dummy_sampler_run|_dummy_run|determine_available_memory|"
        r"determine_num_available_blocks|capture_model|Capturing (?:CUDA ?)?graph|CUDA graph|"
        r"warm ?up|Warmup|load_model|Loading model|Loading weights|Initializing an? |"
        r"init_device|initialize_kv_cache",
        re.IGNORECASE,
    ),
    (
        "profile_run",
        "_dummy_",
        "determine_",
        "captur",
        "cuda graph",
        "warm",
        "load",
        "initiali",
        "init_device",
    ),
)
_REQUEST = Gated(
    re.compile(
        r"Added request|\"(?:POST|GET) /v1/|Received request|generate_stream|/generate\b",
        re.IGNORECASE,
    ),
    ("request", "/v1/", "generate"),
)
_FATAL = Gated(
    re.compile(
        r"EngineDeadError|is already dead|Got fatal signal|EngineCore encountered a fatal error|"
        r"terminating server process|shutting down",
        re.IGNORECASE,
    ),
    ("dead", "fatal", "terminating server process", "shutting down"),
)
_ENGINE = (
    (
        Gated(
            re.compile(
                r"vllm|MQLLMEngine|\[core\.py|llm_engine\.py|Engine 000|APIServer pid", re.I
            ),
            ("vllm", "mqllmengine", "[core.py", "llm_engine.py", "engine 000", "apiserver pid"),
        ),
        "vllm",
    ),
    (
        Gated(
            re.compile(r"text_generation|text-generation", re.I),
            ("text_generation", "text-generation"),
        ),
        "tgi",
    ),
    (
        Gated(
            re.compile(r"sglang|\bTP\d+\]|scheduler\.py.*Scheduler hit an exception", re.I),
            ("sglang", "tp", "scheduler.py"),
        ),
        "sglang",
    ),
)
_STAGES = (
    (
        "cuda_graph_capture",
        re.compile(r"capture_model|Capturing (?:CUDA ?)?graph|CUDA graph", re.I),
    ),
    (
        "profile_run",
        re.compile(r"profile_run|determine_available_memory|determine_num_available", re.I),
    ),
    ("warmup", re.compile(r"warm ?up", re.I)),
    ("model_load", re.compile(r"load_model|Loading model|Loading weights", re.I)),
)

# Next checks: the handbook's five OOM checks (seed 000, 场景一 检查 1–5).
_SEED_CHECKS = [
    "oom.budget",
    "oom.allocated_vs_reserved",
    "oom.config_change",
    "oom.other_process",
    "oom.limits",
]


class OtherProcess(BaseModel):
    """Another process holding memory on the same GPU (``Process {pid} has {X} memory in use``)."""

    pid: int
    in_use_bytes: int
    in_use_gib: float | None = None


class OomEvent(BaseModel):
    """One OOM message, with every size the message states (bytes) and the derived ones.

    ``subtype`` is one of ``allocator`` (caching allocator), ``cuda_api`` (raw CUDA error),
    ``sampler_warmup`` (vLLM V1), ``kv_cache_capacity`` (vLLM), ``no_kv_memory`` (vLLM),
    ``tgi_prefill`` (TGI warm-up), ``sglang_mem_fraction`` (SGLang KV pool).
    ``format`` is ``current``, ``torch_2_1`` or ``pre_2_1`` for allocator messages.
    """

    line: int
    subtype: str
    format: str | None = None
    rank: int | None = None
    device: int | None = None
    garbage_size: bool = False
    requested_bytes: int | None = None
    total_bytes: int | None = None
    free_bytes: int | None = None
    process_in_use_bytes: int | None = None
    own_pid: int | None = None
    own_process_inferred: bool = False
    other_processes: list[OtherProcess] = Field(default_factory=list)
    allowed_bytes: int | None = None
    allocated_bytes: int | None = None
    private_pools_bytes: int | None = None
    reserved_unallocated_bytes: int | None = None
    reserved_total_bytes: int | None = None
    non_pytorch_bytes: int | None = None
    outside_process_bytes: int | None = None
    dummy_requests: int | None = None
    prefill_tokens: int | None = None
    max_model_len: int | None = None
    kv_capacity_tokens: int | None = None
    kv_needed_gib: float | None = None
    kv_available_gib: float | None = None
    text: str = ""


class OomReport(BaseModel):
    """What the OOM analyzer concluded from the whole text.

    Sizes are in GiB (3 decimals) for the primary event, the first one seen. ``classes``
    lists every rule of the ladder that holds, most specific first; ``likely`` is the first.
    Class codes: ``garbage_size``, ``too_big_for_gpu``, ``fragmentation``,
    ``other_process``, ``non_pytorch_memory``, ``allowed_fraction_cap``,
    ``headroom_exhausted``, ``activation_headroom_exhausted``, ``max_num_seqs_too_high``,
    ``max_model_len_exceeds_kv_capacity``, ``weights_leave_no_prefill_headroom``,
    ``kv_pool_too_small``, ``cuda_api_oom``, ``other_tenant_on_shared_gpu`` (memory held
    outside this process, :func:`outside_tenant`), ``kv_budget_negative`` (vLLM's profiled
    KV remainder ≤ 0), ``startup_cuda_graph_capture_oom`` (an allocator OOM while capturing
    CUDA graphs at start-up). ``contributing`` is ``classes`` after the first.
    ``outside_process_gib`` is ``total − free − this process`` (``reserved`` when the
    message gives no per-process figure); ``memory_profile`` vLLM's profiling figures;
    ``facts`` the statements the conclusion rests on (catalogue ``explain.fact.*``). ``headroom_outside_budget_gib`` is ``total × (1 − gpu_memory_utilization) −
    non_pytorch`` (GiB; the engine's own share given, else ``None``): what the share left
    outside the engine's budget keeps for activations once non-PyTorch memory is paid;
    negative when non-PyTorch memory alone exceeds it.
    """

    category: str = CATEGORY
    subtype: str
    likely: str
    classes: list[str] = Field(default_factory=list)
    contributing: list[str] = Field(default_factory=list)
    headroom_outside_budget_gib: float | None = None
    engine: str | None = None
    phase: str = "unknown"  # startup | runtime | unknown
    stage: str | None = None
    trigger: str | None = None
    engine_fatal: bool = False
    secondary_error: bool = False
    rank: int | None = None
    device: int | None = None
    requested_gib: float | None = None
    total_gib: float | None = None
    free_gib: float | None = None
    process_in_use_gib: float | None = None
    allowed_gib: float | None = None
    allocated_by_pytorch_gib: float | None = None
    private_pools_gib: float | None = None
    reserved_unallocated_gib: float | None = None
    reserved_minus_allocated_gib: float | None = None
    reserved_total_gib: float | None = None
    non_pytorch_gib: float | None = None
    outside_process_gib: float | None = None
    shared_gpu_line: int | None = None
    memory_profile: MemoryProfile | None = None
    kv_gib_if_activation_halved: float | None = None
    kv_gib_at_utilization: dict[str, float] = Field(default_factory=dict)
    facts: list[Fact] = Field(default_factory=list)
    other_processes: list[OtherProcess] = Field(default_factory=list)
    dummy_requests: int | None = None
    prefill_tokens: int | None = None
    max_model_len: int | None = None
    kv_capacity_tokens: int | None = None
    gpu_blocks: int | None = None
    block_size_inferred: int | None = None
    shortfall_tokens: int | None = None
    tp: int | None = None
    gpu_memory_utilization: float | None = None
    max_num_seqs: int | None = None
    engine_args: EngineArgs = Field(default_factory=EngineArgs)
    event_count: int = 0
    events: list[OomEvent] = Field(default_factory=list)
    first_line: int = 0
    mitigation_ids: list[str] = Field(default_factory=list)
    long_term_ids: list[str] = Field(default_factory=list)
    next_check_ids: list[str] = Field(default_factory=list)


def detect_line(line: str) -> bool:
    """Cheap test: may ``line`` belong to an OOM message?"""
    return bool(_DETECT.search(line))


def _size(m: re.Match[str] | None, start: int = 1) -> int | None:
    if m is None:
        return None
    return size_to_bytes(m.group(start), m.group(start + 1))


def parse_allocator_message(text: str, line: int = 0) -> OomEvent:
    """Parse one caching-allocator OOM message (any of the three wordings).

    Args:
        text: The message, possibly with surrounding log text.
        line: 1-based line number of its start (kept for reference).

    Returns:
        The event; sizes the message does not state stay ``None``.
    """
    ev = OomEvent(line=line, subtype="allocator", text=snippet(text, 600), rank=line_rank(text))
    ev.garbage_size = bool(_GARBAGE.search(text))
    ev.requested_bytes = _size(_REQ.search(text))
    m = _NEW_TOTAL.search(text)
    if m:
        ev.format = "current" if m.group(2) == "i" else "torch_2_1"
        ev.device = int(m.group(1))
        ev.total_bytes = size_to_bytes(m.group(3), m.group(4))
        ev.free_bytes = size_to_bytes(m.group(5), m.group(6))
        procs = [
            (int(p.group(1)), size_to_bytes(p.group(2), p.group(3))) for p in _PROC.finditer(text)
        ]
        ev.process_in_use_bytes = _size(_THIS_PROC.search(text))
        ev.allowed_bytes = _size(_ALLOWED.search(text))
        ev.allocated_bytes = _size(_OF_ALLOC.search(text))
        ev.private_pools_bytes = _size(_PRIVATE.search(text))
        ev.reserved_unallocated_bytes = _size(_RES_UNALLOC.search(text))
        if ev.allocated_bytes is not None and ev.reserved_unallocated_bytes is not None:
            ev.reserved_total_bytes = ev.allocated_bytes + ev.reserved_unallocated_bytes
        others = [(pid, b) for pid, b in procs if b is not None]
        if ev.process_in_use_bytes is None and others:
            # In a container the reporting process prints as "Process <host-pid> has"
            # (PID namespaces, formats.md §A1): take the one that covers our reserved
            # memory most tightly as our own.
            floor = ev.reserved_total_bytes or 0
            candidates = [(b, pid) for pid, b in others if b >= floor]
            if candidates:
                b, pid = min(candidates)
                ev.process_in_use_bytes = b
                ev.own_pid = pid
                ev.own_process_inferred = True
                others = [(p, x) for p, x in others if p != pid]
        ev.other_processes = [
            OtherProcess(pid=pid, in_use_bytes=b, in_use_gib=gib(b)) for pid, b in others
        ]
    else:
        m = _OLD_GPU.search(text)
        if m:
            ev.format = "pre_2_1"
            ev.device = int(m.group(1))
            ev.total_bytes = size_to_bytes(m.group(2), m.group(3))
        elif ev.requested_bytes is not None or ev.garbage_size:
            ev.format = "pre_2_1" if "already allocated" in text else None
        ev.allocated_bytes = _size(_OLD_ALLOC.search(text))
        ev.free_bytes = (
            ev.free_bytes if ev.free_bytes is not None else _size(_OLD_FREE.search(text))
        )
        ev.reserved_total_bytes = _size(_OLD_RESERVED.search(text))
        ev.allowed_bytes = _size(_ALLOWED.search(text))
        if ev.reserved_total_bytes is not None and ev.allocated_bytes is not None:
            ev.reserved_unallocated_bytes = max(0, ev.reserved_total_bytes - ev.allocated_bytes)
    if ev.process_in_use_bytes is not None and ev.reserved_total_bytes is not None:
        ev.non_pytorch_bytes = max(0, ev.process_in_use_bytes - ev.reserved_total_bytes)
    own = (
        ev.process_in_use_bytes if ev.process_in_use_bytes is not None else ev.reserved_total_bytes
    )
    if ev.total_bytes is not None and ev.free_bytes is not None and own is not None:
        # What neither this process nor the free pool accounts for: another process (a
        # co-tenant of a time-sliced GPU), or — when only "reserved" is known — this
        # process's own CUDA context and workspaces too (formats.md §A1, oom-10).
        ev.outside_process_bytes = max(0, ev.total_bytes - ev.free_bytes - own)
    return ev


def classify_allocator(ev: OomEvent) -> list[str]:
    """The class ladder of formats.md §C2 for one allocator event (most specific first)."""
    if ev.garbage_size:
        return ["garbage_size"]
    out: list[str] = []
    req, total = ev.requested_bytes, ev.total_bytes
    non_pt = ev.non_pytorch_bytes or 0
    if req is not None and total is not None and req > total - non_pt:
        out.append("too_big_for_gpu")
    other = sum(p.in_use_bytes for p in ev.other_processes)
    if outside_tenant(ev):
        out.append("other_tenant_on_shared_gpu")
    if fragmented(ev):
        out.append("fragmentation")
    if other >= OTHER_PROCESS_MIN_BYTES:
        out.append("other_process")
    if ev.non_pytorch_bytes is not None and total:
        threshold = max(NON_PYTORCH_MIN_BYTES, NON_PYTORCH_SHARE * total)
        if ev.non_pytorch_bytes >= threshold:
            out.append("non_pytorch_memory")
    if (
        ev.allowed_bytes is not None
        and total is not None
        and ev.allowed_bytes < total
        and req is not None
        and (ev.reserved_total_bytes or 0) + req > ev.allowed_bytes
    ):
        out.append("allowed_fraction_cap")
    if not out:
        out.append("headroom_exhausted")
    return out


def fragmented(ev: OomEvent) -> bool:
    """``free < requested ≤ reserved − allocated`` with a reserved-unallocated pool that is
    large (≥ :data:`FRAGMENTATION_MIN_BYTES` and ≥ :data:`FRAGMENTATION_MIN_SHARE` of the
    card): a few MiB of slack cannot be why a request failed (formats.md §C2)."""
    req, free, unalloc, total = (
        ev.requested_bytes,
        ev.free_bytes,
        ev.reserved_unallocated_bytes,
        ev.total_bytes,
    )
    if req is None or free is None or unalloc is None or not free < req <= unalloc:
        return False
    floor = max(FRAGMENTATION_MIN_BYTES, FRAGMENTATION_MIN_SHARE * (total or 0))
    return unalloc >= floor


def outside_tenant(ev: OomEvent) -> bool:
    """Memory held outside this process that no listed process accounts for is at least
    :data:`OUTSIDE_PROCESS_MIN_BYTES` and :data:`OUTSIDE_PROCESS_SHARE` of the card."""
    outside, total = ev.outside_process_bytes, ev.total_bytes
    if outside is None or not total:
        return False
    listed = sum(p.in_use_bytes for p in ev.other_processes)
    if listed >= OTHER_PROCESS_MIN_BYTES:
        return False  # the message names who holds it: other_process says it
    return outside >= max(OUTSIDE_PROCESS_MIN_BYTES, OUTSIDE_PROCESS_SHARE * total)


_ENGINE_LIKELY = {
    "sampler_warmup": "max_num_seqs_too_high",
    "kv_cache_capacity": "max_model_len_exceeds_kv_capacity",
    "no_kv_memory": "max_model_len_exceeds_kv_capacity",
    "tgi_prefill": "weights_leave_no_prefill_headroom",
    "sglang_mem_fraction": "kv_pool_too_small",
    "cuda_api": "cuda_api_oom",
}
_ENGINE_STAGE = {
    "sampler_warmup": "sampler_warmup",
    "kv_cache_capacity": "kv_cache_init",
    "no_kv_memory": "kv_cache_init",
    "tgi_prefill": "warmup",
    "sglang_mem_fraction": "kv_cache_init",
}

# Mitigations (临时缓解) and long-term fixes (长期修复) per class; i18n keys under
# ``explain.oom.mitigate.*`` / ``explain.oom.longterm.*``.
_MITIGATE = {
    "garbage_size": ["find_first_error"],
    "too_big_for_gpu": ["lower_limits", "rollback_config"],
    "fragmentation": ["expandable_segments", "lower_gpu_mem_util", "lower_limits"],
    "other_process": ["kill_stray_process", "check_device_isolation"],
    "non_pytorch_memory": ["lower_gpu_mem_util", "lower_limits"],
    "allowed_fraction_cap": ["raise_memory_fraction", "lower_limits"],
    "headroom_exhausted": ["lower_limits", "rollback_config"],
    "activation_headroom_exhausted": ["lower_gpu_mem_util", "cap_prefill", "expandable_segments"],
    "max_num_seqs_too_high": ["lower_max_num_seqs", "lower_gpu_mem_util"],
    "max_model_len_exceeds_kv_capacity": ["lower_max_model_len", "raise_gpu_mem_util"],
    "weights_leave_no_prefill_headroom": ["lower_prefill_tokens", "more_shards"],
    "kv_pool_too_small": ["raise_mem_fraction_static", "lower_limits"],
    "cuda_api_oom": ["kill_stray_process", "lower_gpu_mem_util"],
    "other_tenant_on_shared_gpu": ["find_cotenant", "separate_tenants", "cap_process_memory"],
    "kv_budget_negative": ["raise_gpu_mem_util", "lower_batched_tokens", "smaller_weights"],
    "startup_cuda_graph_capture_oom": [
        "lower_gpu_mem_util",
        "enforce_eager",
        "lower_max_num_seqs",
    ],
}
_LONG_TERM = {
    "garbage_size": ["fix_shape_bug"],
    "too_big_for_gpu": ["sharding", "quantization", "checkpointing"],
    "fragmentation": ["kv_management", "leak_fix"],
    "other_process": ["device_isolation"],
    "non_pytorch_memory": ["sharding", "workspace_budget"],
    "allowed_fraction_cap": ["capacity_plan"],
    "headroom_exhausted": ["admission_limits", "kv_management", "leak_fix", "checkpointing"],
    "activation_headroom_exhausted": ["admission_limits", "workspace_budget"],
    "max_num_seqs_too_high": ["admission_limits"],
    "max_model_len_exceeds_kv_capacity": ["sharding", "kv_fp8", "quantization"],
    "weights_leave_no_prefill_headroom": ["sharding", "quantization"],
    "kv_pool_too_small": ["sharding", "kv_management"],
    "cuda_api_oom": ["workspace_budget", "device_isolation"],
    "other_tenant_on_shared_gpu": ["device_isolation", "capacity_plan"],
    "kv_budget_negative": ["quantization", "capacity_plan"],
    "startup_cuda_graph_capture_oom": ["workspace_budget"],
}
_CHECKS = {
    "garbage_size": ["oom.first_error", "oom.shapes"],
    "fragmentation": ["oom.allocated_vs_reserved", "oom.cache_growth"],
    "other_process": ["oom.other_process", "oom.device_isolation"],
    "non_pytorch_memory": ["oom.non_pytorch", "oom.other_process"],
    "activation_headroom_exhausted": ["oom.non_pytorch", "oom.budget"],
    "max_num_seqs_too_high": ["oom.max_num_seqs_default"],
    "max_model_len_exceeds_kv_capacity": ["oom.kv_budget"],
    "weights_leave_no_prefill_headroom": ["oom.budget"],
    "kv_pool_too_small": ["oom.kv_budget"],
    "cuda_api_oom": ["oom.other_process", "oom.non_pytorch"],
    "other_tenant_on_shared_gpu": ["oom.cotenant", "oom.device_isolation"],
    "kv_budget_negative": ["oom.kv_budget"],
    "startup_cuda_graph_capture_oom": ["oom.graph_capture", "oom.budget"],
}


class OomAnalyzer:
    """Streaming OOM analyzer: call :meth:`feed` per line, then :meth:`finish`.

    Memory is bounded: at most :data:`MAX_EVENTS` events are kept (the count goes on),
    a pending multi-line message is capped at 8 lines.
    """

    def __init__(self) -> None:
        self._events: list[OomEvent] = []
        self._count = 0
        self._args = EngineArgs()
        self._engine: str | None = None
        self._first_request: int | None = None
        self._last_startup: int | None = None
        self._startup_stage: str | None = None
        self._recent: deque[str] = deque(maxlen=30)
        self._fatal_after = False
        self._gpu_blocks: int | None = None
        self._pending: list[str] = []
        self._pending_line = 0
        self._phase_by_event: list[str] = []
        self._stage_by_event: list[str | None] = []
        self._profile = MemoryProfile()
        self._shared_gpu: int | None = None

    # -- streaming ------------------------------------------------------------------
    @property
    def follow(self) -> int:
        """Lines wanted after the last one fed, whatever they contain (a split message)."""
        return 8 - len(self._pending) if self._pending else 0

    def feed(self, line_no: int, raw: str) -> None:
        """Consume one line (1-based ``line_no``). Never raises on odd input."""
        if not self._pending and not has_keyword(raw, KEYWORDS):
            return
        line = clip(raw)
        update_engine_args(self._args, line)
        if self._engine is None:
            for gate, name in _ENGINE:
                if gate.search(line):
                    self._engine = name
                    break
        if self._pending:
            self._pending.append(line)
            if _MSG_END.search(line) or len(self._pending) >= 8:
                self._flush_pending()
            return
        if _REQUEST.search(line) and self._first_request is None:
            self._first_request = line_no
        if _STARTUP.search(line):
            self._last_startup = line_no
            for name, rx in _STAGES:
                if rx.search(line):
                    self._startup_stage = name
                    break
        m = _GPU_BLOCKS.search(line)
        if m:
            self._gpu_blocks = int(m.group(1))
        self._profile.feed(line_no, line)
        if self._shared_gpu is None and _SHARED_GPU.search(line):
            self._shared_gpu = line_no
        if _FATAL.search(line):
            self._fatal_after = True
        if detect_line(line):
            self._on_detect(line_no, line)
        self._recent.append(line)

    def _on_detect(self, line_no: int, line: str) -> None:
        if _ALLOC_START.search(line):
            if _MSG_END.search(line) or "Tried to allocate more" in line:
                self._add(parse_allocator_message(line, line_no))
            else:
                self._pending = [line]
                self._pending_line = line_no
            return
        ev: OomEvent | None = None
        m = _SAMPLER.search(line)
        if m:
            ev = OomEvent(line=line_no, subtype="sampler_warmup", dummy_requests=int(m.group(1)))
        elif m2 := _KV_CAP.search(line):
            ev = OomEvent(
                line=line_no,
                subtype="kv_cache_capacity",
                max_model_len=int(m2.group(1)),
                kv_capacity_tokens=int(m2.group(2)),
            )
        elif m3 := _KV_CAP_V1.search(line):
            ev = OomEvent(
                line=line_no,
                subtype="kv_cache_capacity",
                max_model_len=int(m3.group(1)),
                kv_needed_gib=float(m3.group(2)),
                kv_available_gib=float(m3.group(3)),
                kv_capacity_tokens=int(m3.group(4)) if m3.group(4) else None,
            )
        elif _NO_KV_MEM.search(line):
            ev = OomEvent(line=line_no, subtype="no_kv_memory")
        elif m4 := _TGI_PREFILL.search(line):
            ev = OomEvent(line=line_no, subtype="tgi_prefill", prefill_tokens=int(m4.group(1)))
            self._engine = self._engine or "tgi"
        elif _SGLANG.search(line):
            ev = OomEvent(line=line_no, subtype="sglang_mem_fraction")
            self._engine = self._engine or "sglang"
        elif _CUDA_API.search(line):
            ev = OomEvent(line=line_no, subtype="cuda_api")
        if ev is not None:
            ev.rank = line_rank(line)
            ev.text = snippet(line, 600)
            self._add(ev)

    def _flush_pending(self) -> None:
        text = " ".join(s.strip() for s in self._pending)
        line_no = self._pending_line
        self._pending = []
        self._add(parse_allocator_message(text, line_no))

    def _add(self, ev: OomEvent) -> None:
        # The same message is often printed twice (exception + traceback summary, or the
        # engine's wrapper): drop exact repeats of the previous event.
        if self._events:
            prev = self._events[-1]
            if prev.model_dump(exclude={"line", "text"}) == ev.model_dump(exclude={"line", "text"}):
                return
        self._count += 1
        if len(self._events) >= MAX_EVENTS:
            return
        self._events.append(ev)
        self._phase_by_event.append(self._phase_now(ev))
        self._stage_by_event.append(self._stage_now(ev))

    def _phase_now(self, ev: OomEvent) -> str:
        if ev.subtype in _ENGINE_STAGE:
            return "startup"
        if self._first_request is not None and self._first_request < ev.line:
            return "runtime"
        if self._last_startup is not None and ev.line - self._last_startup <= 30:
            return "startup"
        if any(_STARTUP.search(r) for r in self._recent):
            return "startup"
        return "unknown"

    def _stage_now(self, ev: OomEvent) -> str | None:
        if ev.subtype in _ENGINE_STAGE:
            return _ENGINE_STAGE[ev.subtype]
        if self._first_request is not None and self._first_request < ev.line:
            return None
        return self._startup_stage

    def finish(self) -> OomReport | None:
        """The report, or ``None`` when the text held no OOM message."""
        if self._pending:
            self._flush_pending()
        if not self._events:
            return None
        # An allocator OOM says more than an engine wrapper around it: prefer the first
        # engine-level event (it names the knob), else the first allocator event.
        idx = 0
        for i, ev in enumerate(self._events):
            if ev.subtype not in ("allocator", "cuda_api"):
                idx = i
                break
        ev = self._events[idx]
        phase = self._phase_by_event[idx]
        if phase == "unknown" and self._fatal_after and self._first_request is not None:
            phase = "runtime"
        classes = (
            classify_allocator(ev) if ev.subtype == "allocator" else [_ENGINE_LIKELY[ev.subtype]]
        )
        args = self._args
        trigger: str | None = None
        if phase == "runtime" and ev.subtype == "allocator":
            # A runtime allocator OOM right after a request was added is that request's
            # prefill (activations scale with prompt length), formats.md §C1.
            trigger = "long_prompt_prefill"
        engine = self._engine or args.engine
        share = args.gpu_memory_utilization or args.mem_fraction_static
        if ev.subtype == "allocator" and activation_headroom_exhausted(ev, trigger, engine, share):
            at = 1 if classes and classes[0] == "too_big_for_gpu" else 0
            classes.insert(at, "activation_headroom_exhausted")
        prof = self._profile if self._profile.seen() else None
        stage = self._stage_by_event[idx]
        if prof is not None and (
            (prof.kv_gib is not None and prof.kv_gib <= 0) or prof.gpu_blocks == 0
        ):
            # The profiled remainder is what the KV cache gets: ≤ 0 means weights,
            # non-torch memory and the activation peak already exceed the budget, whatever
            # max_model_len is (vLLM worker.py; oom-12).
            classes = ["kv_budget_negative"] + [
                c for c in classes if c not in ("max_model_len_exceeds_kv_capacity",)
            ]
            phase = "startup"
            stage = stage or "kv_cache_init"
        elif (
            ev.subtype == "allocator"
            and phase == "startup"
            and stage == "cuda_graph_capture"
            and classes[0] != "garbage_size"
        ):
            classes.insert(0, "startup_cuda_graph_capture_oom")
        likely = classes[0]
        report = OomReport(
            subtype=ev.subtype,
            likely=likely,
            classes=classes,
            contributing=classes[1:],
            headroom_outside_budget_gib=_outside_budget_gib(ev, share)
            if ev.non_pytorch_bytes is not None or prof is None
            else prof.outside_budget_gib(),
            engine=engine,
            phase=phase,
            stage=stage,
            trigger=trigger,
            engine_fatal=self._fatal_after,
            secondary_error=likely == "garbage_size",
            rank=ev.rank,
            device=ev.device,
            requested_gib=gib(ev.requested_bytes),
            total_gib=gib(ev.total_bytes),
            free_gib=gib(ev.free_bytes),
            process_in_use_gib=gib(ev.process_in_use_bytes),
            allowed_gib=gib(ev.allowed_bytes),
            allocated_by_pytorch_gib=gib(ev.allocated_bytes),
            private_pools_gib=gib(ev.private_pools_bytes),
            reserved_unallocated_gib=gib(ev.reserved_unallocated_bytes),
            reserved_minus_allocated_gib=gib(ev.reserved_unallocated_bytes),
            reserved_total_gib=gib(ev.reserved_total_bytes),
            non_pytorch_gib=gib(ev.non_pytorch_bytes),
            outside_process_gib=gib(ev.outside_process_bytes),
            shared_gpu_line=self._shared_gpu,
            memory_profile=prof,
            other_processes=ev.other_processes,
            dummy_requests=ev.dummy_requests,
            prefill_tokens=ev.prefill_tokens,
            max_model_len=ev.max_model_len
            or args.max_model_len
            or (prof.max_model_len if prof else None),
            kv_capacity_tokens=ev.kv_capacity_tokens,
            gpu_blocks=self._gpu_blocks
            if self._gpu_blocks is not None
            else (prof.gpu_blocks if prof else None),
            tp=args.tensor_parallel_size,
            gpu_memory_utilization=args.gpu_memory_utilization
            or (prof.gpu_memory_utilization if prof else None),
            max_num_seqs=args.max_num_seqs,
            engine_args=args,
            event_count=self._count,
            events=self._events,
            first_line=self._events[0].line,
        )
        if report.kv_capacity_tokens is not None and ev.max_model_len is not None:
            report.shortfall_tokens = ev.max_model_len - report.kv_capacity_tokens
            if self._gpu_blocks:
                report.block_size_inferred = round(report.kv_capacity_tokens / self._gpu_blocks)
        if prof is not None and likely == "kv_budget_negative":
            report.kv_gib_if_activation_halved = prof.kv_if_activation_halved()
            report.kv_gib_at_utilization = {
                f"{u:.2f}": v
                for u in (0.9, 0.95)
                if (v := prof.kv_at(u)) is not None and u > (prof.gpu_memory_utilization or 0)
            }
        report.facts = oom_facts(report, ev)
        mit: list[str] = []
        lt: list[str] = []
        checks: list[str] = []
        for cls in classes:
            mit += [m for m in _MITIGATE.get(cls, []) if m not in mit]
            lt += [x for x in _LONG_TERM.get(cls, []) if x not in lt]
            checks += [c for c in _CHECKS.get(cls, []) if c not in checks]
        checks += [c for c in _SEED_CHECKS if c not in checks]
        report.mitigation_ids = for_engine(mit, engine)
        report.long_term_ids = lt
        report.next_check_ids = checks
        return report


# Mitigations that name one engine's flags, per engine (vLLM "Engine Arguments", SGLang
# "Server Arguments", TGI launcher docs); ``None``: a process of no known serving engine
# (training, notebooks), where no serving flag applies. A missing entry drops the advice.
_ENGINE_FLAGS: dict[str, dict[str | None, str]] = {
    "lower_gpu_mem_util": {
        "vllm": "lower_gpu_mem_util",
        "sglang": "lower_mem_fraction_static",
        "tgi": "lower_cuda_memory_fraction",
    },
    "raise_gpu_mem_util": {
        "vllm": "raise_gpu_mem_util",
        "sglang": "raise_mem_fraction_static",
        "tgi": "raise_cuda_memory_fraction",
    },
    "lower_limits": {
        "vllm": "lower_limits",
        "sglang": "lower_limits_sglang",
        "tgi": "lower_limits_tgi",
        None: "lower_batch",
    },
    "lower_max_num_seqs": {"vllm": "lower_max_num_seqs", "sglang": "lower_limits_sglang"},
    "cap_prefill": {"vllm": "cap_prefill", "sglang": "lower_limits_sglang"},
    "enforce_eager": {"vllm": "enforce_eager", "sglang": "disable_cuda_graph"},
    "lower_batched_tokens": {"vllm": "lower_batched_tokens", "sglang": "lower_limits_sglang"},
    "lower_max_model_len": {"vllm": "lower_max_model_len"},
}


def for_engine(ids: list[str], engine: str | None) -> list[str]:
    """Mitigation ids with engine flags only for the engine that printed the text: each
    flag-bound id becomes that engine's own (:data:`_ENGINE_FLAGS`) or is dropped."""
    return flags_for_engine(ids, (engine or "").lower() or None, _ENGINE_FLAGS)


def size_text(value_gib: float | None) -> str:
    """GiB → ``"4.43 GiB"``, below 1 GiB ``"14.75 MiB"`` / ``"448 KiB"`` (``?`` unknown)."""
    if value_gib is None:
        return "?"
    if abs(value_gib) >= 1 or value_gib == 0:
        return f"{value_gib:.2f} GiB"
    mib = value_gib * 1024
    if abs(mib) >= 1:
        return f"{mib:.2f} MiB"
    return f"{mib * 1024:.0f} KiB"


def _gib_exact(n: int | None) -> float | None:
    return None if n is None else n / GIB


def _outside_of(prof: MemoryProfile, r: OomReport) -> float | None:
    """``total × (1 − gpu_memory_utilization)`` (GiB) from the profiling lines, else from
    the OOM message's total and the launch arguments (vLLM V1 prints no budget line)."""
    outside = prof.outside_budget_gib()
    if outside is None and r.total_gib is not None and r.gpu_memory_utilization is not None:
        outside = round(r.total_gib * (1 - r.gpu_memory_utilization), 2)
    return outside


def oom_facts(r: OomReport, ev: OomEvent) -> list[Fact]:
    """The statements the report rests on, each with the numbers it uses."""
    out: list[Fact] = []
    if ev.format == "pre_2_1" and r.total_gib is not None:
        out.append(
            Fact(
                id="oom.pre_2_1_wording",
                args={
                    "total": size_text(r.total_gib),
                    "reserved": size_text(r.reserved_total_gib),
                    "free": size_text(_gib_exact(ev.free_bytes)),
                },
                line=ev.line,
            )
        )
    if "other_tenant_on_shared_gpu" in r.classes:
        out.append(
            Fact(
                id="oom.outside_process",
                args={
                    "outside": size_text(r.outside_process_gib),
                    "total": size_text(r.total_gib),
                },
                line=ev.line,
            )
        )
        if r.shared_gpu_line:
            out.append(Fact(id="oom.shared_gpu_hint", line=r.shared_gpu_line))
        if ev.process_in_use_bytes is None:
            out.append(Fact(id="oom.outside_includes_context"))
        out.append(Fact(id="oom.cotenant_recurs"))
    unalloc = ev.reserved_unallocated_bytes
    if (
        ev.subtype == "allocator"
        and unalloc is not None
        and "fragmentation" not in r.classes
        and ev.requested_bytes is not None
        and ev.free_bytes is not None
        and ev.free_bytes < ev.requested_bytes
    ):
        out.append(
            Fact(
                id="oom.not_fragmentation",
                args={"unalloc": size_text(_gib_exact(unalloc))},
                line=ev.line,
            )
        )
    prof = r.memory_profile
    if r.likely == "startup_cuda_graph_capture_oom":
        out.append(Fact(id="oom.graph_capture_phase"))
    if prof is not None and prof.budget_gib is not None:
        out.append(
            Fact(
                id="oom.budget",
                args={
                    "total": prof.total_gib,
                    "util": prof.gpu_memory_utilization,
                    "budget": prof.budget_gib,
                },
                line=prof.line,
            )
        )
    if (
        r.likely == "startup_cuda_graph_capture_oom"
        and prof is not None
        and prof.kv_gib is not None
    ):
        out.append(
            Fact(
                id="oom.kv_pool",
                args={"kv": prof.kv_gib, "outside": _outside_of(prof, r)},
                line=prof.line,
            )
        )
    if (
        r.likely == "startup_cuda_graph_capture_oom"
        and ev.requested_bytes is not None
        and ev.free_bytes is not None
    ):
        out.append(
            Fact(
                id="oom.full_by_design",
                args={
                    "requested": size_text(_gib_exact(ev.requested_bytes)),
                    "free": size_text(_gib_exact(ev.free_bytes)),
                },
                line=ev.line,
            )
        )
    if r.likely == "kv_budget_negative" and prof is not None:
        out.append(
            Fact(
                id="oom.kv_negative",
                args={
                    "weights": prof.weights_gib,
                    "non_torch": prof.non_torch_gib,
                    "activation": prof.activation_peak_gib,
                    "used": prof.used_gib(),
                    "total": prof.total_gib,
                    "util": prof.gpu_memory_utilization,
                    "budget": prof.budget_gib,
                    "kv": prof.kv_gib,
                },
                line=prof.line,
            )
        )
        if prof.gpu_blocks == 0:
            out.append(Fact(id="oom.no_blocks"))
        if r.kv_gib_if_activation_halved is not None and r.kv_gib_if_activation_halved <= 0:
            out.append(
                Fact(
                    id="oom.len_not_binding",
                    args={
                        "activation": prof.activation_peak_gib,
                        "kv": r.kv_gib_if_activation_halved,
                        "util": prof.gpu_memory_utilization,
                    },
                )
            )
        for util, kv in r.kv_gib_at_utilization.items():
            out.append(Fact(id="oom.kv_at_util", args={"util": util, "kv": kv}))
        if prof.weights_gib and prof.total_gib and prof.weights_gib / prof.total_gib >= 0.5:
            out.append(
                Fact(
                    id="oom.weights_share",
                    args={
                        "weights": prof.weights_gib,
                        "total": prof.total_gib,
                        "pct": round(100 * prof.weights_gib / prof.total_gib),
                    },
                )
            )
    return out


PREALLOCATING_ENGINES = ("vllm", "sglang")
"""Engines that size their KV cache to a fixed share of the GPU at start-up (vLLM
``--gpu-memory-utilization``, default 0.9; SGLang ``--mem-fraction-static``): at runtime the
rest of the card is all that activations can use (vLLM docs, "Engine Arguments"; SGLang
docs, "Server Arguments")."""


def activation_headroom_exhausted(
    ev: OomEvent, trigger: str | None, engine: str | None, share: float | None
) -> bool:
    """Whether an allocator OOM is a prefill that outgrew the memory left outside a
    pre-allocating engine's budget.

    Holds when the OOM is triggered by a request's prefill at runtime
    (``trigger == "long_prompt_prefill"``), the engine pre-allocates its KV cache
    (:data:`PREALLOCATING_ENGINES`, or its share flag is in the log), and the card's free
    memory is below the request (``free < requested``, bytes) — the KV pool is full by
    design, so the prefill's activations had only the rest. Fragmentation
    (``requested ≤ reserved − allocated``) then contributes but is not the cause: the
    reserved pool is part of the same budget (formats.md §C2, case oom-02).
    """
    if trigger != "long_prompt_prefill":
        return False
    if (engine or "").lower() not in PREALLOCATING_ENGINES and share is None:
        return False
    req, free = ev.requested_bytes, ev.free_bytes
    return req is not None and free is not None and free < req


def _outside_budget_gib(ev: OomEvent, share: float | None) -> float | None:
    if share is None or ev.total_bytes is None or ev.non_pytorch_bytes is None:
        return None
    return round((ev.total_bytes * (1 - share) - ev.non_pytorch_bytes) / GIB, 3)


def explain_oom_text(text: str) -> OomReport | None:
    """Analyse a whole text at once (convenience over :class:`OomAnalyzer`)."""
    a = OomAnalyzer()
    for i, line in enumerate(text.splitlines(), 1):
        a.feed(i, line)
    return a.finish()
