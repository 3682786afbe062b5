"""``cockpit explain``: detect the kind(s) of any pasted artifact and run every analyzer.

A registry of artifact kinds — each a name, a line detector and an analyzer — drives the
dispatch, so a new parser plugs in with one :class:`ArtifactKind` line in
:data:`REGISTRY`. Two analyzer styles are supported:

* *streaming* (``stream``): a factory of objects with ``feed(line_no, line)`` and
  ``finish() -> BaseModel | None``; they see every line and keep bounded state.
* *whole text* (``text``): a function ``f(text) -> BaseModel | list | None``. It receives
  the whole input when the input is at most :data:`WHOLE_TEXT_LIMIT` characters, else
  only the lines its detector selected (at most :data:`SELECTED_TEXT_LIMIT` characters).

Input is read line by line (bytes decoded as UTF-8 with ``errors="replace"`` at this
boundary, lines longer than :data:`MAX_LINE_BYTES` cut), so memory stays bounded on
inputs of any size. No exception escapes: an analyzer that raises is dropped from the
result and named in ``errors``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any, Protocol

from pydantic import BaseModel, Field

from cockpit.analysis import engine_logs, nccl, oom, rollout, utilization

WHOLE_TEXT_LIMIT = 4 * 1024 * 1024
SELECTED_TEXT_LIMIT = 4 * 1024 * 1024
MAX_LINE_BYTES = 64 * 1024


class LineAnalyzer(Protocol):
    """A streaming analyzer."""

    def feed(self, line_no: int, raw: str) -> None:
        """Consume one line (1-based number)."""

    def finish(self) -> BaseModel | None:
        """The result, or ``None`` when nothing was recognised."""


@dataclass(frozen=True)
class ArtifactKind:
    """One kind of artifact ``explain`` recognises.

    Attributes:
        name: Kind name (``cuda_oom``, ``nccl``, ``xid``…); i18n keys hang off it.
        category: The troubleshooting scenario it belongs to (``cuda_oom``,
            ``nccl_hang``, ``xid_hw``, ``pod_pending``, ``ttft_spike``, ``low_util``,
            ``bad_rollout``) unless the result names its own ``category``.
        detect: Cheap per-line test; a kind is "looked at" only if some line matches.
        stream: Factory of a streaming analyzer (see module docstring).
        text: Whole-text analyzer (see module docstring).
        priority: Orders findings of mixed input (higher first, then by first line).
    """

    name: str
    category: str
    detect: Callable[[str], bool]
    stream: Callable[[], LineAnalyzer] | None = None
    text: Callable[[str], Any] | None = None
    priority: int = 50


_XID_LINE = re.compile(
    r"NVRM: Xid|NVRM: GPU at PCI|fallen off the bus|XidCriticalError|device marked unhealthy|"
    r"NVRM: The NVIDIA GPU|NVRM: \(PCI ID|RmInitAdapter failed",
)
_PENDING_LINE = re.compile(
    r"FailedScheduling|nodes are available|tasks in gang unschedulable|exceeded quota|"
    r"couldn't assign flavors|insufficient unused quota|No devices found|nvidia-device-plugin|"
    r"Insufficient nvidia\.com/gpu|Unschedulable|PodScheduled\s+False",
)


def _detect_xid(line: str) -> bool:
    return bool(_XID_LINE.search(line))


def _detect_pending(line: str) -> bool:
    return bool(_PENDING_LINE.search(line))


REGISTRY: list[ArtifactKind] = [
    ArtifactKind("cuda_oom", oom.CATEGORY, oom.detect_line, stream=oom.OomAnalyzer, priority=90),
    ArtifactKind("nccl", nccl.CATEGORY, nccl.detect_line, stream=nccl.NcclAnalyzer, priority=90),
    ArtifactKind(
        "rollout", rollout.CATEGORY, lambda _l: True, stream=rollout.RolloutAnalyzer, priority=70
    ),
    ArtifactKind(
        "engine_log",
        engine_logs.CATEGORY,
        engine_logs.detect_line,
        stream=engine_logs.EngineLogAnalyzer,
        priority=60,
    ),
    ArtifactKind(
        "utilization",
        utilization.CATEGORY,
        lambda _l: True,
        stream=utilization.UtilAnalyzer,
        priority=50,
    ),
]
"""The kinds ``explain`` runs. Parsers owned elsewhere plug in here, e.g.::

    ArtifactKind("xid", "xid_hw", _detect_xid, text=explain_xid_text, priority=85),
    ArtifactKind("failed_scheduling", "pod_pending", _detect_pending,
                 text=explain_failed_scheduling, priority=85),
"""

# Kinds the registry may not carry yet, named so "not recognised" can say it looked.
KNOWN_KIND_NAMES = (
    "cuda_oom",
    "nccl",
    "xid",
    "failed_scheduling",
    "engine_log",
    "utilization",
    "rollout",
)


class Finding(BaseModel):
    """One analyzer's conclusion.

    Attributes:
        kind: Registry name of the analyzer.
        category: Scenario (see :class:`ArtifactKind`).
        cause: The analyzer's most specific class (``fragmentation``,
            ``collective_mismatch``, ``kv_cache_saturation``…), ``None`` if it has none.
        first_line: 1-based line where the evidence starts (0 when unknown).
        fields: The analyzer's full result (JSON-ready).
        next_check_ids / mitigation_ids / long_term_ids: i18n ids (``explain.check.<id>``,
            ``explain.mitigate.<kind>.<id>``, ``explain.longterm.<id>``).
    """

    kind: str
    category: str
    cause: str | None = None
    first_line: int = 0
    priority: int = 50
    fields: dict[str, Any] = Field(default_factory=dict)
    next_check_ids: list[str] = Field(default_factory=list)
    mitigation_ids: list[str] = Field(default_factory=list)
    long_term_ids: list[str] = Field(default_factory=list)


class Explanation(BaseModel):
    """Everything ``explain`` found in one input.

    Attributes:
        recognised: True when at least one analyzer produced a finding.
        category: Category of the first finding (highest priority, then earliest line).
        kinds: Kind names of the findings, in order.
        findings: The findings, ordered as ``kinds``.
        looked_for: Every kind name the registry knows (what "not recognised" means).
        lines / bytes / cut_lines: Input size; lines longer than the limit were cut.
        errors: ``"<kind>: <ExceptionType>"`` for analyzers that failed (and were dropped).
    """

    recognised: bool
    category: str | None = None
    kinds: list[str] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    looked_for: list[str] = Field(default_factory=list)
    lines: int = 0
    bytes: int = 0
    cut_lines: int = 0
    errors: list[str] = Field(default_factory=list)


def _cause_of(result: Any) -> str | None:
    for attr in ("likely", "pattern", "cause", "verdict", "severity", "subtype", "kind"):
        value = getattr(result, attr, None)
        if isinstance(value, str) and value:
            return value
    return None


def _to_finding(kind: ArtifactKind, result: Any) -> Finding | None:
    if result is None:
        return None
    if isinstance(result, list | tuple):
        if not result:
            return None
        items = [r.model_dump(mode="json") if isinstance(r, BaseModel) else r for r in result]
        first = result[0]
        cause = _cause_of(first)
        category = getattr(first, "category", None) or kind.category
        fields: dict[str, Any] = {"items": items}
        first_line = int(getattr(first, "line", 0) or getattr(first, "first_line", 0) or 0)
    elif isinstance(result, BaseModel):
        fields = result.model_dump(mode="json")
        cause = _cause_of(result)
        category = getattr(result, "category", None) or kind.category
        first_line = int(getattr(result, "first_line", 0) or 0)
    elif isinstance(result, dict):
        fields = result
        cause = next(
            (str(result[k]) for k in ("likely", "pattern", "cause") if result.get(k)), None
        )
        category = str(result.get("category") or kind.category)
        first_line = 0
    else:
        return None
    if isinstance(result, BaseModel) and getattr(result, "recognised", True) is False:
        return None
    return Finding(
        kind=kind.name,
        category=str(category),
        cause=cause,
        first_line=first_line,
        priority=kind.priority,
        fields=fields,
        next_check_ids=list(getattr(result, "next_check_ids", []) or []),
        mitigation_ids=list(getattr(result, "mitigation_ids", []) or []),
        long_term_ids=list(getattr(result, "long_term_ids", []) or []),
    )


class _TextCollector:
    """Bounded text buffer for a whole-text analyzer."""

    def __init__(self) -> None:
        self.whole: list[str] | None = []
        self.whole_size = 0
        self.selected: list[str] = []
        self.selected_size = 0
        self.matched = False

    def add(self, line: str, matched: bool) -> None:
        if self.whole is not None:
            self.whole.append(line)
            self.whole_size += len(line) + 1
            if self.whole_size > WHOLE_TEXT_LIMIT:
                self.whole = None
        if matched:
            self.matched = True
            if self.selected_size + len(line) < SELECTED_TEXT_LIMIT:
                self.selected.append(line)
                self.selected_size += len(line) + 1

    def text(self) -> str:
        return "\n".join(self.whole if self.whole is not None else self.selected)


def iter_lines(stream: IO[bytes], max_line: int = MAX_LINE_BYTES) -> Iterator[tuple[str, bool]]:
    """Lines of a byte stream as ``(text, was_cut)``; UTF-8 decoded with replacement.

    A line longer than ``max_line`` bytes is cut to its first ``max_line`` bytes and the
    rest skipped, so no line ever needs more than ``max_line`` bytes of memory.
    """
    while True:
        chunk = stream.readline(max_line)
        if not chunk:
            return
        cut = False
        if not chunk.endswith(b"\n") and len(chunk) >= max_line:
            cut = True
            while True:
                rest = stream.readline(max_line)
                if not rest or rest.endswith(b"\n"):
                    break
        text = chunk.decode("utf-8", errors="replace").rstrip("\r\n")
        # A lone CR inside a line (progress bars) separates records too.
        if "\r" in text:
            for part in text.split("\r"):
                yield part, cut
        else:
            yield text, cut


def explain_lines(
    lines: Iterable[str | tuple[str, bool]],
    *,
    world_size: int | None = None,
    registry: list[ArtifactKind] | None = None,
) -> Explanation:
    """Run every registered analyzer over ``lines`` (strings or ``(text, was_cut)``).

    Args:
        lines: The input, one line per item, without line ends.
        world_size: Number of distributed ranks when known (NCCL analyzer).
        registry: Kinds to run (default :data:`REGISTRY`).

    Returns:
        The :class:`Explanation`; never raises for any input.
    """
    kinds = list(REGISTRY if registry is None else registry)
    streams: dict[str, LineAnalyzer] = {}
    texts: dict[str, _TextCollector] = {}
    errors: list[str] = []
    for k in kinds:
        try:
            if k.stream is not None:
                if k.name == "nccl":
                    streams[k.name] = nccl.NcclAnalyzer(world_size=world_size)
                else:
                    streams[k.name] = k.stream()
            elif k.text is not None:
                texts[k.name] = _TextCollector()
        except Exception as exc:
            errors.append(f"{k.name}: {type(exc).__name__}")
    n = 0
    size = 0
    cut_lines = 0
    by_name = {k.name: k for k in kinds}
    for item in lines:
        if isinstance(item, tuple):
            line, cut = item
        else:
            line, cut = item, False
        if not isinstance(line, str):
            continue
        n += 1
        size += len(line) + 1
        cut_lines += int(cut)
        if "\x00" in line:
            line = line.replace("\x00", "\ufffd")
        for name in list(streams):
            try:
                streams[name].feed(n, line)
            except Exception as exc:
                errors.append(f"{name}: {type(exc).__name__}")
                del streams[name]
        for name in list(texts):
            try:
                texts[name].add(line, by_name[name].detect(line))
            except Exception as exc:
                errors.append(f"{name}: {type(exc).__name__}")
                del texts[name]
    findings: list[Finding] = []
    for name, analyzer in streams.items():
        try:
            f = _to_finding(by_name[name], analyzer.finish())
        except Exception as exc:
            errors.append(f"{name}: {type(exc).__name__}")
            continue
        if f is not None:
            findings.append(f)
    for name, collector in texts.items():
        if not collector.matched:
            continue
        fn = by_name[name].text
        try:
            f = _to_finding(by_name[name], fn(collector.text()) if fn else None)
        except Exception as exc:
            errors.append(f"{name}: {type(exc).__name__}")
            continue
        if f is not None:
            findings.append(f)
    findings.sort(key=lambda f: (-f.priority, f.first_line or 10**12))
    looked = list(dict.fromkeys([*(k.name for k in kinds), *KNOWN_KIND_NAMES]))
    return Explanation(
        recognised=bool(findings),
        category=findings[0].category if findings else None,
        kinds=[f.kind for f in findings],
        findings=findings,
        looked_for=looked,
        lines=n,
        bytes=size,
        cut_lines=cut_lines,
        errors=errors,
    )


def explain_text(text: str | bytes, *, world_size: int | None = None) -> Explanation:
    """:func:`explain_lines` over a string (or bytes, decoded with replacement)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    return explain_lines(text.splitlines(), world_size=world_size)


def explain_stream(stream: IO[bytes], *, world_size: int | None = None) -> Explanation:
    """:func:`explain_lines` over a binary stream, read line by line (bounded memory)."""
    return explain_lines(iter_lines(stream), world_size=world_size)
