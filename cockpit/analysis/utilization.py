"""Low GPU utilization: the signals a pasted note, profiler table or launch line carries.

Pure and streaming. Classifies by the handbook's categories (seed 000, 场景三): long gaps
(data / CPU / scheduling / sync / storage waits), many small kernels (launch overhead),
collectives dominating, and few requests (normal idle — do not invent work), plus the
serving-specific patterns of formats.md §C7: over-sharded tensor parallelism for a small
model (vllm#6131), a host-CPU-bound engine process or CFS throttling (vllm#4806), a
dataloader-starved training loop (pytorch/examples#387).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from cockpit.analysis import engine_args
from cockpit.analysis.engine_args import EngineArgs, update_engine_args
from cockpit.analysis.logtext import Gated, clip, has_keyword, to_float

CATEGORY = "low_util"

# fp16/bf16 weights per tensor-parallel shard below this (GiB) leave each GPU mostly idle
# while paying all-reduce on every layer: vllm#6131 (8B on TP=8, ~2 GiB/shard) — the
# maintainer advised data-parallel replicas instead.
MIN_WEIGHTS_PER_SHARD_GIB = 4.0
# Data-loading time above this share of the step time means the GPU waits for input
# (pytorch/examples#387 shows ~0.93).
DATA_TIME_SHARE = 0.5
# Profiler share above which communication or kernel launches dominate (%).
DOMINANT_PCT = 30.0

KEYWORDS = (
    *engine_args.KEYWORDS,
    "tensor-parallel",
    "num-shard",
    "util",
    "sm_active",
    "sm active",
    "cpu",
    " data ",
    "workers",
    "ncclkernel",
    "nccldevkernel",
    "cudalaunchkernel",
    "throttl",
    "oscillat",
    "sawtooth",
    "spiky",
)
_GPU_UTIL = Gated(
    re.compile(
        r"(?:DCGM_FI_DEV_GPU_UTIL|GPU[- _]?[Uu]til(?:ization)?|gpu_util)[^\d%\n]{0,40}?(\d{1,3}(?:\.\d+)?)\s?%"
    ),
    ("gpu_util", "gpu-util", "gpu util", "gpuutil"),
)
_SM_ACTIVE = Gated(
    re.compile(
        r"(?:DCGM_FI_PROF_SM_ACTIVE|SM[ _]active)[^\d\n]{0,20}(\d?\.\d+)(?:\s*-\s*(\d?\.\d+))?",
        re.I,
    ),
    ("sm_active", "sm active"),
)
_CPU_PEGGED = re.compile(
    r"\bCPU\s*(?:usage|util(?:ization)?)?[:=]?\s*(?:~\s*)?(9\d|100)(?:\.\d+)?\s?%"
)
_THROTTLE = Gated(
    re.compile(r"container_cpu_cfs_throttled|CFS throttl|cpu throttl|throttled_periods", re.I),
    ("throttl",),
)
_TIME_DATA = Gated(
    re.compile(r"\bTime\s+([\d.]+)\s+\(\s*([\d.]+)\)\s+Data\s+([\d.]+)\s+\(\s*([\d.]+)\)"),
    ("data",),
)
_FEW_WORKERS = Gated(re.compile(r"does not have many workers|num_workers", re.I), ("workers",))
_SAWTOOTH = Gated(
    re.compile(r"oscillat|sawtooth|0%\s*<->\s*100%|spiky|bursts? of 100%", re.I),
    ("oscillat", "sawtooth", "<->", "spiky", "of 100%"),
)
_NCCL_KERNEL = re.compile(r"nccl(?:Dev)?Kernel")
_LAUNCH = re.compile(r"cudaLaunchKernel")
_PCT = re.compile(r"(\d{1,3}(?:\.\d+)?)\s?%")


def _max_pct(line: str) -> float | None:
    values = [v for v in (to_float(m.group(1)) for m in _PCT.finditer(line)) if v is not None]
    values = [v for v in values if v <= 100]
    return max(values) if values else None


class UtilReport(BaseModel):
    """Low-utilization finding.

    ``cause``: ``dataloader_cpu_starved``, ``host_cpu_bound``,
    ``over_sharded_tensor_parallel``, ``collectives_dominate``,
    ``kernel_launch_overhead`` or ``unclassified`` (a low-utilization reading with no
    pattern: walk the seed's categories).

    Utilization fields (percent of time a kernel ran, as nvidia-smi ``GPU-Util`` /
    ``DCGM_FI_DEV_GPU_UTIL`` report it): ``gpu_util_trough_pct`` and ``gpu_util_peak_pct``
    are the lowest and highest readings. A steady reading gives ``gpu_util_pct`` = the
    lowest. A sawtooth (``util_pattern``) has no single level: ``gpu_util_pct`` is then
    its time-weighted mean when the step timing gives the duty cycle — peak ×
    ``gpu_busy_share_est`` — else ``None``. ``gpu_busy_share_est`` = 1 − data-time share of
    the step (an upper bound: the GPU can only compute while the loop is not waiting for
    data; pytorch/examples ``AverageMeter`` ``Time``/``Data`` columns).
    """

    category: str = CATEGORY
    cause: str
    causes: list[str] = Field(default_factory=list)
    tp: int | None = None
    model_params_b: float | None = None
    weights_per_shard_gib: float | None = None
    gpu_util_pct: float | None = None
    gpu_util_trough_pct: float | None = None
    gpu_util_peak_pct: float | None = None
    gpu_busy_share_est: float | None = None
    sm_active: float | None = None
    host_cpu_pct: float | None = None
    cpu_throttling_mentioned: bool = False
    data_time_fraction: float | None = None
    few_workers_warning: bool = False
    util_pattern: str | None = None
    nccl_kernel_pct: float | None = None
    launch_pct: float | None = None
    engine_args: EngineArgs = Field(default_factory=EngineArgs)
    first_line: int = 0
    next_check_ids: list[str] = Field(default_factory=list)
    mitigation_ids: list[str] = Field(default_factory=list)


class UtilAnalyzer:
    """Streaming low-utilization analyzer (constant memory)."""

    def __init__(self) -> None:
        self._args = EngineArgs()
        self._first_line = 0
        self._util: float | None = None
        self._util_max: float | None = None
        self._sm: float | None = None
        self._cpu: float | None = None
        self._throttle = False
        self._time_sum = 0.0
        self._data_sum = 0.0
        self._few_workers = False
        self._sawtooth = False
        self._nccl: float | None = None
        self._launch: float | None = None

    def _mark(self, line_no: int) -> None:
        self._first_line = self._first_line or line_no

    def feed(self, line_no: int, raw: str) -> None:
        """Consume one line. Never raises on odd input."""
        if not has_keyword(raw, KEYWORDS):
            return
        line = clip(raw)
        update_engine_args(self._args, line)
        if m := _GPU_UTIL.search(line):
            v = to_float(m.group(1))
            if v is not None and v <= 100:
                self._reading(v)
                self._mark(line_no)
        if m := _SM_ACTIVE.search(line):
            lo, hi = to_float(m.group(1)), to_float(m.group(2) or m.group(1))
            if lo is not None and hi is not None and 0 <= lo <= 1:
                self._sm = max(self._sm or 0.0, hi)
                self._mark(line_no)
        if m := _CPU_PEGGED.search(line):
            self._cpu = to_float(m.group(1))
            self._mark(line_no)
        if _THROTTLE.search(line):
            self._throttle = True
            self._mark(line_no)
        if m := _TIME_DATA.search(line):
            t, d = to_float(m.group(2)), to_float(m.group(4))
            if t and d is not None and t > 0:
                self._time_sum += t
                self._data_sum += d
                self._mark(line_no)
        if _FEW_WORKERS.search(line) and ("worker" in line.lower()):
            self._few_workers = True
            self._mark(line_no)
        if _SAWTOOTH.search(line) and ("util" in line.lower() or "%" in line):
            self._sawtooth = True
            # "0% <-> 100%": both ends of the swing are readings.
            for pm in _PCT.finditer(line):
                v = to_float(pm.group(1))
                if v is not None and v <= 100:
                    self._reading(v)
            self._mark(line_no)
        # Profiler tables (torch.profiler key_averages, nsys stats) carry several
        # percentage columns; the largest is the kernel's share of its own device.
        if _NCCL_KERNEL.search(line) and (pct := _max_pct(line)) is not None:
            self._nccl = max(self._nccl or 0.0, pct)
            self._mark(line_no)
        if _LAUNCH.search(line) and (pct := _max_pct(line)) is not None:
            self._launch = max(self._launch or 0.0, pct)
            self._mark(line_no)

    def _reading(self, v: float) -> None:
        self._util = v if self._util is None else min(self._util, v)
        self._util_max = v if self._util_max is None else max(self._util_max, v)

    def finish(self) -> UtilReport | None:
        """The report, or ``None`` when the text carries no utilization signal."""
        args = self._args
        r = UtilReport(cause="unclassified", engine_args=args, first_line=self._first_line)
        r.tp = args.tensor_parallel_size
        r.model_params_b = args.model_params_b
        r.gpu_util_pct = self._util
        r.sm_active = self._sm
        r.host_cpu_pct = self._cpu
        r.cpu_throttling_mentioned = self._throttle
        r.few_workers_warning = self._few_workers
        r.util_pattern = "sawtooth" if self._sawtooth else None
        r.nccl_kernel_pct = self._nccl
        r.launch_pct = self._launch
        if self._time_sum > 0:
            r.data_time_fraction = round(self._data_sum / self._time_sum, 3)
            r.gpu_busy_share_est = round(max(0.0, 1 - r.data_time_fraction), 3)
        r.gpu_util_trough_pct, r.gpu_util_peak_pct = self._util, self._util_max
        if self._sawtooth:
            r.gpu_util_pct = None
            if self._util_max is not None and r.gpu_busy_share_est is not None:
                r.gpu_util_pct = round(self._util_max * r.gpu_busy_share_est, 1)
        causes: list[str] = []
        if (r.data_time_fraction is not None and r.data_time_fraction >= DATA_TIME_SHARE) or (
            self._few_workers and (self._sawtooth or r.data_time_fraction is not None)
        ):
            causes.append("dataloader_cpu_starved")
        if self._cpu is not None or self._throttle:
            causes.append("host_cpu_bound")
        if r.tp and r.tp > 1 and r.model_params_b:
            r.weights_per_shard_gib = round(r.model_params_b * 1e9 * 2 / r.tp / 1024**3, 2)
            if r.weights_per_shard_gib < MIN_WEIGHTS_PER_SHARD_GIB:
                causes.append("over_sharded_tensor_parallel")
        if self._nccl is not None and self._nccl >= DOMINANT_PCT:
            causes.append("collectives_dominate")
        if self._launch is not None and self._launch >= DOMINANT_PCT:
            causes.append("kernel_launch_overhead")
        low_reading = (
            (self._util is not None and self._util < 60)
            or (self._sm is not None and self._sm < 0.75)
            or self._sawtooth
        )
        if not causes:
            if not low_reading:
                return None
            causes.append("unclassified")
        r.causes = causes
        r.cause = causes[0]
        r.next_check_ids = [f"util.{c}" for c in causes] + [
            "util.timeline_gaps",
            "util.small_kernels",
            "util.sm_bandwidth",
            "util.collectives",
            "util.idle_capacity",
        ]
        r.mitigation_ids = [f"util.{c}" for c in causes]
        return r


def explain_util_text(text: str) -> UtilReport | None:
    """Analyse a whole text at once (convenience over :class:`UtilAnalyzer`)."""
    a = UtilAnalyzer()
    for i, line in enumerate(text.splitlines(), 1):
        a.feed(i, line)
    return a.finish()
