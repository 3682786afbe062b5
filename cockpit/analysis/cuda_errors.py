"""CUDA runtime errors the application prints, and engine start-up errors of the GPU's
architecture (pure, no I/O).

The error names and wordings are CUDA's own (``cudaGetErrorString`` of the CUDA runtime
API, "Error Handling" in the CUDA Runtime API reference) as PyTorch prints them
(``RuntimeError: CUDA error: <string>``), plus the engines' capability checks:

* ``uncorrectable ECC error encountered`` (``cudaErrorECCUncorrectable``): a device memory
  fault — the process-side view of Xid 48/63/64/94/95 (formats.md §A3; vllm#5222, case
  xid-10). Hardware: it recurs on that GPU, the same workload runs elsewhere.
* ``an illegal memory access was encountered`` (``cudaErrorIllegalAddress``), ``unspecified
  launch failure``: the process-side view of Xid 31/13 — an application or kernel bug
  unless it repeats on one GPU across processes (formats.md §A3, xid-04 vs xid-05).
* ``GPU is lost`` (nvidia-smi), ``all CUDA-capable devices are busy or unavailable``: the
  GPU is gone (Xid 79 class) or held exclusively.
* ``CUDA driver version is insufficient for CUDA runtime version``, ``The NVIDIA driver on
  your system is too old (found version N)`` (PyTorch), ``Error 803: system has unsupported
  display driver / cuda driver combination``, ``Error 804: forward compatibility was
  attempted on non supported HW``: the image's CUDA runtime does not match the node's
  driver.
* ``no kernel image is available for execution on the device``
  (``cudaErrorNoKernelImageForDevice``): the build carries no kernel for this GPU's
  compute capability.
* ``Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla
  T4 GPU has compute capability 7.5`` (vLLM ``_check_if_gpu_supports_dtype``), ``The
  quantization method fp8 is not supported for the current GPU. Minimum capability: 89.
  Current capability: 80.`` (vLLM ``_verify_quantization``), ``FlashAttention only supports
  Ampere GPUs or newer`` (flash-attn): a start-up configuration the GPU cannot run.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from cockpit.analysis.context_facts import Fact
from cockpit.analysis.engine_args import EngineArgs, update_engine_args
from cockpit.analysis.logtext import clip, has_keyword, line_rank, snippet

MAX_ERRORS = 32

# (family, category, pattern), most specific and most hardware-like first.
FAMILIES: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    (
        "uncorrectable_ecc",
        "xid_hw",
        re.compile(
            r"uncorrectable ECC error encountered|cudaErrorECCUncorrectable|"
            r"CUDA_ERROR_ECC_UNCORRECTABLE",
            re.I,
        ),
    ),
    (
        "gpu_lost",
        "xid_hw",
        re.compile(
            r"GPU is lost|cudaErrorDevicesUnavailable|"
            r"all CUDA-capable devices are busy or unavailable",
            re.I,
        ),
    ),
    (
        "illegal_memory_access",
        "xid_hw",
        re.compile(
            r"an illegal memory access was encountered|cudaErrorIllegalAddress|"
            r"CUDA_ERROR_ILLEGAL_ADDRESS|an illegal instruction was encountered|"
            r"unspecified launch failure|cudaErrorLaunchFailure|CUDA_ERROR_LAUNCH_FAILED",
            re.I,
        ),
    ),
    (
        "driver_runtime_mismatch",
        "other",
        re.compile(
            r"CUDA driver version is insufficient for CUDA runtime version|"
            r"cudaErrorInsufficientDriver|NVIDIA driver on your system is too old|"
            r"unsupported display driver / cuda driver combination|"
            r"forward compatibility was attempted on non supported HW|"
            r"CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE|Error 80[34]",
            re.I,
        ),
    ),
    (
        "no_kernel_image",
        "other",
        re.compile(
            r"no kernel image is available for execution on the device|"
            r"cudaErrorNoKernelImageForDevice|"
            r"is not compatible with the current PyTorch installation",
            re.I,
        ),
    ),
    (
        "unsupported_on_compute_capability",
        "other",
        re.compile(
            r"only supported on GPUs with compute capability|Minimum capability: \d+|"
            r"not supported for the current GPU|only supports Ampere GPUs or newer|"
            r"requires (?:a )?(?:GPU with )?compute capability",
            re.I,
        ),
    ),
)

KEYWORDS = (
    "ecc error",
    "eccuncorrectable",
    "ecc_uncorrectable",
    "gpu is lost",
    "devicesunavailable",
    "busy or unavailable",
    "illegal",
    "launch failure",
    "launchfailure",
    "launch_failed",
    "driver version",
    "insufficientdriver",
    "driver on your system",
    "driver combination",
    "forward compatibility",
    "compat_not",
    "error 80",
    "kernel image",
    "nokernelimage",
    "not compatible with the current pytorch",
    "capability",
    "only supports ampere",
    "vllm",
    "text-generation",
    "text_generation",
    "sglang",
)

_CC_HAVE = re.compile(
    r"(?:has|with) compute capability (?:of )?(\d+\.\d+)|Current capability: (\d+)", re.I
)
_CC_NEED = re.compile(r"at least (\d+\.\d+)|Minimum capability: (\d+)", re.I)
_GPU_NAME = re.compile(r"Your (.{2,40}?) GPU has compute capability")
_WHAT = re.compile(
    r"^\W*(?:ValueError: )?(Bfloat16|FP8|fp8|The quantization method (\w+)|FlashAttention)"
)
_DRIVER_FOUND = re.compile(r"found version (\d{4,6})")
_CUDA_SM = re.compile(r"sm_(\d{2,3})")
_KERNEL_LINE = re.compile(r"\bNVRM: GPU [0-9a-fA-Fx]{1,8}:[0-9a-fA-Fx]{1,2}:[0-9a-fA-Fx.]{2,4}: ")
"""The NVIDIA kernel driver's word about one GPU in its log (dmesg): what it says
(``NVRM: GPU 0000:18:00.0: GPU is lost``) is the node's hardware speaking, read by the Xid analyzer
(:mod:`cockpit.analysis.xid`), never an error the application's CUDA runtime printed."""
_PCI = re.compile(r"\b([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})(?:\.\d)?\b")


class CudaErrorLine(BaseModel):
    """One recognised error line."""

    line: int
    family: str
    text: str
    rank: int | None = None
    gpu: str | None = None


class CudaErrorReport(BaseModel):
    """What the CUDA-error analyzer concluded.

    ``cause`` is the leading family (``uncorrectable_ecc``, ``gpu_lost``,
    ``illegal_memory_access``, ``driver_runtime_mismatch``, ``no_kernel_image``,
    ``unsupported_on_compute_capability``); ``families`` every family seen, in that order.
    ``category`` is ``xid_hw`` for the first three (a GPU fault seen from the process),
    ``other`` for start-up mismatches of software and hardware. ``side`` says which
    side: ``hardware`` (ECC, lost GPU), ``application_bug`` (an illegal access seen on one
    GPU only — no evidence of a bad GPU), ``suspect_hardware`` (the same fault on one GPU
    from several ranks/processes), ``configuration`` (driver, build or dtype/quantization
    against this GPU). Capabilities are ``major.minor``; ``driver_found`` is the driver's
    CUDA version as PyTorch prints it (``11040`` → ``11.4``).
    """

    category: str
    cause: str
    side: str
    families: list[str] = Field(default_factory=list)
    count: int = 0
    errors: list[CudaErrorLine] = Field(default_factory=list)
    ranks: list[int] = Field(default_factory=list)
    gpus: list[str] = Field(default_factory=list)
    engine: str | None = None
    compute_capability: str | None = None
    required_capability: str | None = None
    gpu_name: str | None = None
    unsupported: str | None = None
    driver_found: str | None = None
    facts: list[Fact] = Field(default_factory=list)
    first_line: int = 0
    next_check_ids: list[str] = Field(default_factory=list)
    mitigation_ids: list[str] = Field(default_factory=list)
    long_term_ids: list[str] = Field(default_factory=list)


def detect_line(line: str) -> bool:
    """Cheap test: is ``line`` one of the recognised CUDA errors?"""
    return any(rx.search(line) for _, _, rx in FAMILIES)


def _cap(major_minor: str | None, compact: str | None) -> str | None:
    if major_minor:
        return major_minor
    if compact and compact.isdigit() and len(compact) >= 2:
        return f"{compact[:-1]}.{compact[-1]}"
    return None


class CudaErrorAnalyzer:
    """Streaming analyzer: :meth:`feed` per line, then :meth:`finish` (bounded state)."""

    def __init__(self) -> None:
        self._errors: list[CudaErrorLine] = []
        self._count = 0
        self._families: dict[str, str] = {}
        self._ranks: set[int] = set()
        self._gpus: set[str] = set()
        self._args = EngineArgs()
        self._cc: str | None = None
        self._need: str | None = None
        self._gpu_name: str | None = None
        self._what: str | None = None
        self._driver: str | None = None

    def feed(self, line_no: int, raw: str) -> None:
        """Consume one line (1-based). Never raises on odd input."""
        if not has_keyword(raw, KEYWORDS) or _KERNEL_LINE.search(raw):
            return
        line = clip(raw)
        update_engine_args(self._args, line)
        for family, category, rx in FAMILIES:
            if rx.search(line):
                self._on_error(line_no, line, family, category)
                break

    def _on_error(self, line_no: int, line: str, family: str, category: str) -> None:
        self._count += 1
        self._families.setdefault(family, category)
        rank = line_rank(line, loose=False)
        if rank is not None and len(self._ranks) < 1024:
            self._ranks.add(rank)
        pci = _PCI.search(line)
        if pci and len(self._gpus) < 64:
            self._gpus.add(pci.group(1).lower())
        if m := _CC_HAVE.search(line):
            self._cc = self._cc or _cap(m.group(1), m.group(2))
        if m2 := _CC_NEED.search(line):
            self._need = self._need or _cap(m2.group(1), m2.group(2))
        if m3 := _GPU_NAME.search(line):
            self._gpu_name = self._gpu_name or m3.group(1)
        if self._what is None and (m4 := _WHAT.search(line.split("]", 1)[-1])):
            self._what = m4.group(2) or m4.group(1)
        if m5 := _DRIVER_FOUND.search(line):
            v = int(m5.group(1))
            self._driver = f"{v // 1000}.{(v % 1000) // 10}"
        if len(self._errors) < MAX_ERRORS:
            self._errors.append(
                CudaErrorLine(
                    line=line_no,
                    family=family,
                    text=snippet(line, 300),
                    rank=rank,
                    gpu=pci.group(1).lower() if pci else None,
                )
            )

    def finish(self) -> CudaErrorReport | None:
        """The report, or ``None`` when no recognised CUDA error was seen."""
        if not self._errors:
            return None
        order = [f for f, _, _ in FAMILIES if f in self._families]
        cause = order[0]
        category = self._families[cause]
        side = _side(cause, self._errors, self._ranks)
        r = CudaErrorReport(
            category=category,
            cause=cause,
            side=side,
            families=order,
            count=self._count,
            errors=self._errors,
            ranks=sorted(self._ranks),
            gpus=sorted(self._gpus),
            engine=self._args.engine,
            compute_capability=self._cc,
            required_capability=self._need,
            gpu_name=self._gpu_name,
            unsupported=self._what,
            driver_found=self._driver,
            first_line=min(e.line for e in self._errors if e.family == cause),
        )
        r.facts = _facts(r)
        r.next_check_ids = [f"cuda.{c}" for c in _CHECKS[cause]]
        r.mitigation_ids = _mitigations(r)
        r.long_term_ids = _LONG_TERM[cause]
        return r


def _side(cause: str, errors: list[CudaErrorLine], ranks: set[int]) -> str:
    if cause in ("uncorrectable_ecc", "gpu_lost"):
        return "hardware"
    if cause == "illegal_memory_access":
        gpus = {e.gpu for e in errors if e.family == cause and e.gpu}
        # The same fault from several ranks/processes on one GPU points at the GPU; on
        # one process (or across GPUs) it is the application's (formats.md §A3, §C4).
        if len(gpus) == 1 and len(ranks) > 1:
            return "suspect_hardware"
        return "application_bug"
    return "configuration"


_CHECKS = {
    "uncorrectable_ecc": ["ecc_counters", "dmesg_xid", "same_gpu"],
    "gpu_lost": ["dmesg_xid", "nvidia_smi", "same_gpu"],
    "illegal_memory_access": ["launch_blocking", "ab_other_gpu", "dmesg_xid"],
    "driver_runtime_mismatch": ["driver_versions"],
    "no_kernel_image": ["arch_list"],
    "unsupported_on_compute_capability": ["gpu_capability"],
}
_LONG_TERM = {
    "uncorrectable_ecc": ["gpu_health_gate"],
    "gpu_lost": ["gpu_health_gate"],
    "illegal_memory_access": ["pin_versions"],
    "driver_runtime_mismatch": ["pin_versions"],
    "no_kernel_image": ["pin_versions"],
    "unsupported_on_compute_capability": ["node_selector_gpu"],
}


def _mitigations(r: CudaErrorReport) -> list[str]:
    ids = {
        "uncorrectable_ecc": ["cordon_reset", "rma_if_recurs"],
        "gpu_lost": ["cordon_reset", "rma_if_recurs"],
        "illegal_memory_access": ["rollback_or_workaround"],
        "driver_runtime_mismatch": ["match_driver"],
        "no_kernel_image": ["build_for_arch"],
        "unsupported_on_compute_capability": [],
    }[r.cause]
    if r.cause == "illegal_memory_access" and r.side == "suspect_hardware":
        ids = ["cordon_reset", *ids]
    if r.cause == "unsupported_on_compute_capability":
        what = (r.unsupported or "").lower()
        if what in ("bfloat16",):
            # vLLM, TGI and SGLang all take --dtype; other programs set torch_dtype.
            ids.append("dtype_half" if r.engine else "dtype_half_generic")
        elif what and what not in ("flashattention",):
            ids.append("other_quantization")
        else:
            ids.append("other_attention_backend" if r.engine == "vllm" else "newer_gpu")
        ids.append("newer_gpu")
    return list(dict.fromkeys(ids))


def _facts(r: CudaErrorReport) -> list[Fact]:
    out: list[Fact] = []
    first = next(e for e in r.errors if e.family == r.cause)
    if r.cause == "uncorrectable_ecc":
        out += [Fact(id="cuda.ecc_is_hardware", line=first.line), Fact(id="cuda.ecc_recurs")]
    elif r.cause == "gpu_lost":
        out.append(Fact(id="cuda.gpu_lost", line=first.line))
    elif r.cause == "illegal_memory_access":
        out.append(Fact(id=f"cuda.illegal_{r.side}", line=first.line))
        out.append(Fact(id="cuda.async_report"))
    elif r.cause == "driver_runtime_mismatch":
        out.append(
            Fact(id="cuda.driver_mismatch", args={"found": r.driver_found or "?"}, line=first.line)
        )
    elif r.cause == "no_kernel_image":
        out.append(Fact(id="cuda.no_kernel_image", line=first.line))
    else:
        out.append(
            Fact(
                id="cuda.capability",
                args={
                    "what": r.unsupported or "?",
                    "have": r.compute_capability or "?",
                    "need": r.required_capability or "?",
                    "gpu": r.gpu_name or "GPU",
                },
                line=first.line,
            )
        )
    if len(r.families) > 1:
        out.append(Fact(id="cuda.also_seen", args={"families": r.families[1:]}))
    return out


def explain_cuda_error_text(text: str) -> CudaErrorReport | None:
    """Analyse a whole text at once (convenience over :class:`CudaErrorAnalyzer`)."""
    a = CudaErrorAnalyzer()
    for i, line in enumerate(text.splitlines(), 1):
        a.feed(i, line)
    return a.finish()
