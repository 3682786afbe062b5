"""Evidence items of a finding, and which findings of one paste are consequences of others.

Pure analysis over findings (no I/O). A paste often holds a cause and what it caused; the
cause leads and the rest are listed as consequences (formats.md §C3–C4, §A3):

* NCCL: the first failing rank's own error (OOM, device-side assert…) → the other ranks'
  watchdog timeouts; a collective timeout → abort → an impossible (``more than 1EB``)
  allocation, a secondary OOM.
* GPU: a lost GPU / ECC Xid (79, 48, 63/64, 94/95, 119…) → CUDA errors in the application
  (``uncorrectable ECC error encountered``, ``unspecified launch failure``) → the pod's
  crash loop; the device plugin marking it unhealthy → allocatable drops → admission
  errors and Pending pods on that node.
* A container's crash loop (``CrashLoopBackOff``) after the error that made it exit.
* Device plugin: not reporting devices (no devices found, container runtime not set up
  for GPUs) → ``Insufficient nvidia.com/gpu`` → Pending.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from cockpit.analysis.logtext import clock_text, line_rank, line_time, snippet

if TYPE_CHECKING:
    from cockpit.analysis.explain import EvidenceItem, Finding

MAX_EVIDENCE = 12

_SOURCES = (
    ("kernel", re.compile(r"NVRM:|kernel:|\[\s*\d+\.\d+\]")),
    ("device_plugin", re.compile(r"device[- ]plugin|XidCriticalError|nvidia-device-plugin", re.I)),
    (
        "kubernetes",
        re.compile(
            # an event's type then its CamelCase reason (``Warning  FailedScheduling``),
            # never a log level (vLLM's ``WARNING 11-29 14:06:13 scheduler.py``)
            r"(?i:FailedScheduling|UnexpectedAdmissionError|kubelet|nodes are available)|"
            r"\b(?:Warning|Normal)\s+[A-Z][a-z]+[A-Za-z]*",
        ),
    ),
    ("nccl", re.compile(r"NCCL|ProcessGroupNCCL|WorkNCCL")),
    ("dcgm", re.compile(r"DCGM_FI_")),
    (
        "vllm",
        re.compile(
            r"vllm|vLLM|Engine 000|APIServer pid|worker\.py|model_runner\.py|"
            r"PreemptionMode\.|Avg prompt throughput"
        ),
    ),
    ("tgi", re.compile(r"text_generation|text-generation")),
    ("sglang", re.compile(r"sglang|\bTP\d+\]")),
    ("http", re.compile(r"HTTP/\d|\"(?:POST|GET) /")),
    ("pytorch", re.compile(r"torch\.|CUDA error|OutOfMemoryError|RuntimeError")),
)
_PCI = re.compile(r"\b(?:PCI:)?([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.\d)?)\b")
_GPU_IDX = re.compile(r"\bGPU (\d{1,2})\b")
_POD = re.compile(r"\bpod[/ =:\"]+([a-z0-9][a-z0-9.-]{0,62})", re.I)
_NODE = re.compile(r"\bnode[/ =:\"]+([a-z0-9][a-z0-9.-]{0,62})", re.I)


def source_of(text: str) -> str:
    """Who printed a line (see :class:`~cockpit.analysis.explain.EvidenceItem`)."""
    for name, rx in _SOURCES:
        if rx.search(text):
            return name
    return "log"


def _walk(value: Any, depth: int = 0) -> Iterable[dict[str, Any]]:
    if depth > 3:
        return
    if isinstance(value, dict):
        if isinstance(value.get("line"), int) and isinstance(value.get("text"), str):
            yield value
        for v in value.values():
            if isinstance(v, dict | list):
                yield from _walk(v, depth + 1)
    elif isinstance(value, list):
        for v in value[:64]:
            yield from _walk(v, depth + 1)


def evidence_of(fields: dict[str, Any]) -> list[EvidenceItem]:
    """The recognised lines a finding's fields carry (any object with ``line`` and
    ``text``), earliest first, one per line, at most :data:`MAX_EVIDENCE`."""
    from cockpit.analysis.explain import EvidenceItem

    firsts: dict[int, dict[str, Any]] = {}
    for d in _walk(fields):
        line = int(d["line"])
        if line > 0 and line not in firsts and str(d["text"]).strip():
            firsts[line] = d
    # Only the lines kept are read (a finding may carry hundreds).
    seen: dict[int, EvidenceItem] = {}
    for line in sorted(firsts)[:MAX_EVIDENCE]:
        d = firsts[line]
        text = str(d["text"])
        rank = d.get("rank") if isinstance(d.get("rank"), int) else line_rank(text, loose=False)
        pci = _PCI.search(text)
        idx = _GPU_IDX.search(text)
        pod = _POD.search(text)
        node = _NODE.search(text)
        seen[line] = EvidenceItem(
            line=line,
            text=snippet(text, 300),
            time=clock_text(line_time(text)),
            rank=rank,
            gpu=pci.group(1) if pci else (idx.group(1) if idx else None),
            pod=pod.group(1) if pod else None,
            node=node.group(1) if node else None,
            source=source_of(text),
        )
    return list(seen.values())


# -- cascades --------------------------------------------------------------------------

# Xids that take a GPU (or its memory) away from the application: lost GPU, ECC, row-remap
# failure, GSP timeouts, NVLink (formats.md §A3 triage table).
HARDWARE_XIDS = frozenset({48, 63, 64, 74, 79, 92, 94, 95, 119, 120, *range(144, 151)})


def _is_hw_xid(f: Finding) -> bool:
    if f.kind != "xid":
        return False
    xids = f.fields.get("xids") or []
    return any(isinstance(x, int) and x in HARDWARE_XIDS for x in xids)


def _causes(cause: Finding, effect: Finding) -> bool:
    """Whether ``effect`` is a known consequence of ``cause`` (both in one paste)."""
    ck, ek = cause.kind, effect.kind
    if ek == "nccl" and effect.fields.get("primary") == ck:
        return True
    if ck == "nccl" and ek == "cuda_oom" and effect.fields.get("secondary_error"):
        # timeout → abort → garbage-size allocation
        return True
    if ck == "nccl" and ek == "cuda_oom" and cause.fields.get("primary") != "cuda_oom":
        first = (cause.fields.get("first_timeout") or {}).get("line") or 0
        return bool(first) and effect.first_line > first
    if _is_hw_xid(cause) and ek in ("cuda_error", "nccl", "admission"):
        return True
    if ck == "xid" and ek == "cuda_error" and effect.fields.get("cause") == "illegal_memory_access":
        # Xid 31/13 in the kernel log and the application's illegal access: one event
        return True
    if _is_hw_xid(cause) and ek == "failed_scheduling":
        return True
    if ck == "cuda_error" and ek == "nccl" and cause.category == "xid_hw":
        return True
    if ek == "crash_loop" and effect.fields.get("cause") == "crash_loop_undetermined":
        # what made the container exit, when the paste shows it
        return ck in ("cuda_error", "cuda_oom", "nccl") or _is_hw_xid(cause)
    return ck == "device_plugin" and ek in ("failed_scheduling", "admission")


def prune(findings: list[Finding]) -> list[Finding]:
    """Drop conclusions the paste itself contradicts.

    A low-utilization reading next to MIG ``GPU_UTIL`` series that read 0 by construction
    (``metric_artifact``) rests on the artifact: the GPUs are not shown idle, so the
    low-utilization finding is not shown (the artifact finding says why, with a fact).
    """
    from cockpit.analysis.context_facts import Fact

    artifact = next((f for f in findings if f.kind == "metric_artifact"), None)
    if artifact is None:
        return findings
    out = []
    for f in findings:
        if f.kind == "utilization" and f.category == "low_util":
            facts = artifact.fields.setdefault("facts", [])
            facts.append(Fact(id="metric.low_util_not_shown").model_dump(mode="json"))
            continue
        out.append(f)
    return out


def link(findings: list[Finding]) -> list[Finding]:
    """Mark consequences and order the findings: each cause before what it caused.

    A finding that some other finding causes gets ``role = "consequence"`` and the causes'
    kinds in ``consequence_of``; primaries keep their order (priority, then first line)
    and each is followed by its consequences.
    """
    n = len(findings)
    for i in range(n):
        for j in range(n):
            if i != j and _causes(findings[i], findings[j]):
                eff = findings[j]
                if findings[i].kind not in eff.consequence_of:
                    eff.consequence_of.append(findings[i].kind)
    for f in findings:
        # A cycle (each names the other) leaves both primary: the paste does not decide.
        f.role = "consequence" if f.consequence_of else "primary"
    for f in findings:
        if f.role == "consequence" and all(
            any(
                g.kind == k and g.role == "consequence" and f.kind in g.consequence_of
                for g in findings
            )
            for k in f.consequence_of
        ):
            f.role = "primary"
            f.consequence_of = []
    out: list[Finding] = []
    placed: set[int] = set()

    def place(f: Finding) -> None:
        if id(f) in placed:
            return
        placed.add(id(f))
        out.append(f)
        # consequences in the order they happened (line order of the paste)
        for g in sorted(findings, key=lambda x: x.first_line or 10**12):
            if f.kind in g.consequence_of:
                place(g)

    for f in findings:
        if f.role == "primary":
            place(f)
    for f in findings:
        place(f)
    return out
