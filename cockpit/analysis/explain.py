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
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import IO, Any, Protocol

from pydantic import BaseModel, Field

from cockpit.analysis import (
    cascade,
    cuda_errors,
    device_plugin,
    engine_logs,
    metric_artifacts,
    nccl,
    oom,
    pod_events,
    rollout,
    serving,
    utilization,
)
from cockpit.redact import hinted_lines, redact_text

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
        keywords: Lower-case substrings; only lines containing one are fed to the
            analyzer (found block-wise with ``str.find``, which keeps a 100 MB log fast).
            ``None``: every line is fed (streaming) or tested with ``detect`` (text).
        takes_lang: ``text`` is called as ``text(text, lang)`` (its result carries words).
    """

    name: str
    category: str
    detect: Callable[[str], bool]
    stream: Callable[[], LineAnalyzer] | None = None
    text: Callable[..., Any] | None = None
    priority: int = 50
    keywords: tuple[str, ...] | None = None
    takes_lang: bool = False


_XID_LINE = re.compile(
    r"NVRM: Xid|NVRM: GPU at PCI|fallen off the bus|XidCriticalError|device marked unhealthy|"
    r"NVRM: The NVIDIA GPU|NVRM: \(PCI ID|RmInitAdapter failed|NVRM: GPU \S+: GPU is lost",
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


XID_KEYWORDS = ("nvrm", "xid", "fallen off the bus", "unhealthy", "rminitadapter")
PENDING_KEYWORDS = (
    "failedscheduling",
    "nodes are available",
    "unschedulable",
    "exceeded quota",
    "assign flavors",
    "unused quota",
    "no devices found",
    "device-plugin",
    "insufficient",
    "podscheduled",
    "gang",
)


def _always(_line: str) -> bool:
    return True


def _explain_xid(text: str, lang: str) -> dict[str, Any] | None:
    """Kernel-log Xid parser (:mod:`cockpit.analysis.xid`) as a finding's fields."""
    from cockpit.analysis.xid import explain_xid_text

    r = explain_xid_text(text, lang)
    if not r.found:
        return None
    data: dict[str, Any] = r.model_dump(mode="json")
    data.pop("lang", None)  # the language of the texts, not something the log said
    top = r.gpus[0] if r.gpus else None
    group = top.groups[0] if top and top.groups else None
    # Every GPU the log names, worst first: the first one is not the only one to act on.
    others = [f"{g.pci}: {g.verdict_text}" for g in r.gpus[1:] if g.verdict_text]
    data.update(
        category="xid_hw",
        cause=(top.verdict if top else None) or "xid",
        likely=group.likely if group else None,
        xid=group.xid if group else (r.root_xids[0] if r.root_xids else None),
        xids=r.root_xids,
        gpu=top.pci if top else None,
        gpus_affected=[g.pci for g in r.gpus],
        xid_inferred=bool(group and group.inferred),
        distinct_pids=len(group.pids) if group else 0,
        first_line=min((o.line for o in r.occurrences), default=0),
        meaning=_sentences(
            dict.fromkeys(
                x
                for x in (
                    (f"{top.pci}: " if others and top else "") + (top.verdict_text if top else ""),
                    *others,
                    r.node_effect_text,
                    r.node_action,
                )
                if x
            ),
            lang,
        ),
        severity=group.info.severity or None if group else None,
        check=group.info.check or None if group else None,
        escalate_if=group.info.escalate_if or None if group else None,
        node_effect=r.node_effect or None,
        next_checks_text=[
            *(group.actions if group else []),
            *([_xid_words(lang, "check", group.info.check)] if group and group.info.check else []),
            *(
                [_xid_words(lang, "escalate", group.info.escalate_if)]
                if group and group.info.escalate_if
                else []
            ),
            *r.findings,
        ],
    )
    return data


def _xid_words(lang: str, key: str, what: str) -> str:
    from cockpit.analysis.xid import _tx

    return str(_tx(lang)[key]).format(what=what)


def _sentences(parts: Iterable[str], lang: str) -> str:
    """Join findings into readable sentences (each ends with a full stop)."""
    stop = "。" if lang == "zh" else "."
    out = []
    for part in parts:
        part = part.strip()
        if part and part[-1] not in ".。!！?？:：":
            part += stop
        if part:
            out.append(part)
    return ("" if lang == "zh" else " ").join(out)


def _explain_pending(text: str, lang: str) -> dict[str, Any] | None:
    """FailedScheduling parser (:mod:`cockpit.analysis.scheduling`) as a finding's fields."""
    from cockpit.analysis.scheduling import explain_failed_scheduling

    r = explain_failed_scheduling(text)
    if not r.message.recognised:
        return None
    data: dict[str, Any] = r.model_dump(mode="json")
    data.update(
        category=r.category,
        cause=r.likely,
        nodes_total=r.message.nodes_total,
        meaning=_sentences((f.text(lang) for f in r.findings), lang),
        next_checks_text=r.commands,
    )
    return data


REGISTRY: list[ArtifactKind] = [
    ArtifactKind(
        "cuda_oom",
        oom.CATEGORY,
        oom.detect_line,
        stream=oom.OomAnalyzer,
        priority=90,
        keywords=oom.KEYWORDS,
    ),
    ArtifactKind(
        "nccl",
        nccl.CATEGORY,
        nccl.detect_line,
        stream=nccl.NcclAnalyzer,
        priority=90,
        keywords=nccl.KEYWORDS,
    ),
    ArtifactKind(
        "cuda_error",
        "xid_hw",
        cuda_errors.detect_line,
        stream=cuda_errors.CudaErrorAnalyzer,
        priority=80,
        keywords=cuda_errors.KEYWORDS,
    ),
    ArtifactKind(
        "device_plugin",
        "pod_pending",
        device_plugin.detect_plugin_line,
        stream=device_plugin.DevicePluginAnalyzer,
        priority=86,
        keywords=device_plugin.PLUGIN_KEYWORDS,
    ),
    ArtifactKind(
        "admission",
        "pod_pending",
        device_plugin.detect_admission_line,
        stream=device_plugin.AdmissionAnalyzer,
        priority=84,
        keywords=device_plugin.ADMISSION_KEYWORDS,
    ),
    ArtifactKind(
        "crash_loop",
        "other",
        pod_events.detect_line,
        stream=pod_events.CrashLoopAnalyzer,
        priority=40,
        keywords=pod_events.KEYWORDS,
    ),
    ArtifactKind(
        "serving",
        "other",
        serving.detect_line,
        stream=serving.ServingAnalyzer,
        priority=75,
        keywords=serving.KEYWORDS,
    ),
    ArtifactKind(
        "metric_artifact",
        "other",
        metric_artifacts.detect_line,
        stream=metric_artifacts.MetricArtifactAnalyzer,
        priority=65,
        keywords=metric_artifacts.KEYWORDS,
    ),
    ArtifactKind(
        "rollout",
        rollout.CATEGORY,
        _always,
        stream=rollout.RolloutAnalyzer,
        priority=70,
        keywords=rollout.KEYWORDS,
    ),
    ArtifactKind(
        "engine_log",
        engine_logs.CATEGORY,
        engine_logs.detect_line,
        stream=engine_logs.EngineLogAnalyzer,
        priority=60,
        keywords=engine_logs.KEYWORDS,
    ),
    ArtifactKind(
        "utilization",
        utilization.CATEGORY,
        _always,
        stream=utilization.UtilAnalyzer,
        priority=50,
        keywords=utilization.KEYWORDS,
    ),
    ArtifactKind(
        "xid",
        "xid_hw",
        _detect_xid,
        text=_explain_xid,
        priority=85,
        keywords=XID_KEYWORDS,
        takes_lang=True,
    ),
    ArtifactKind(
        "failed_scheduling",
        "pod_pending",
        _detect_pending,
        text=_explain_pending,
        priority=85,
        keywords=PENDING_KEYWORDS,
        takes_lang=True,
    ),
]
"""The kinds ``explain`` runs; a new parser plugs in with one :class:`ArtifactKind` line."""

# Kinds the registry may not carry yet, named so "not recognised" can say it looked.
KNOWN_KIND_NAMES = (
    "cuda_oom",
    "nccl",
    "cuda_error",
    "serving",
    "metric_artifact",
    "device_plugin",
    "admission",
    "crash_loop",
    "xid",
    "failed_scheduling",
    "engine_log",
    "utilization",
    "rollout",
)


class EvidenceItem(BaseModel):
    """One recognised line (or the first line of a block) a finding rests on.

    Attributes:
        line: 1-based line number in the input.
        text: The line, cut to 300 characters.
        time: ``MM-DD HH:MM:SS`` when the line carries a timestamp (any format of
            formats.md: ISO, glog, vLLM, syslog), else ``None``.
        rank: Distributed rank the line belongs to, when it names one.
        gpu: PCI address or GPU index the line names, when it names one.
        node / pod: Kubernetes node or pod the line names, when it names one.
        source: Who printed it: ``kernel``, ``nccl``, ``pytorch``, ``vllm``, ``tgi``,
            ``sglang``, ``kubernetes``, ``device_plugin``, ``dcgm``, ``http`` or ``log``.
    """

    line: int
    text: str
    time: str | None = None
    rank: int | None = None
    gpu: str | None = None
    node: str | None = None
    pod: str | None = None
    source: str = "log"


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
        role: ``primary`` (a cause) or ``consequence`` (it follows from another finding:
            a known cascade, or a later error than the one that started it).
        consequence_of: Kinds of the findings this one follows from.
        evidence: The recognised lines it rests on (at most :data:`MAX_EVIDENCE`).
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
    role: str = "primary"
    consequence_of: list[str] = Field(default_factory=list)
    evidence: list[EvidenceItem] = Field(default_factory=list)


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
            (str(result[k]) for k in ("cause", "likely", "pattern") if result.get(k)), None
        )
        category = str(result.get("category") or kind.category)
        first_line = int(result.get("first_line") or 0)
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

    def add_whole(self, lines: list[str]) -> None:
        if self.whole is not None:
            self.whole.extend(lines)
            self.whole_size += sum(map(len, lines)) + len(lines)
            if self.whole_size > WHOLE_TEXT_LIMIT:
                self.whole = None

    def add_selected(self, line: str) -> None:
        self.matched = True
        if self.selected_size + len(line) < SELECTED_TEXT_LIMIT:
            self.selected.append(line)
            self.selected_size += len(line) + 1

    def text(self) -> str:
        return "\n".join(self.whole if self.whole is not None else self.selected)


def _clean(text: str) -> str:
    # CRLF was folded into LF on the bytes; a CR left inside a line (progress bars)
    # separates records too. NUL bytes become U+FFFD.
    if "\r" in text:
        text = text.replace("\r", "\n")
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    return text


def iter_blocks(
    stream: IO[bytes], max_line: int = MAX_LINE_BYTES, chunk_size: int = 1 << 20
) -> Iterator[tuple[list[str], int]]:
    """Blocks of lines of a byte stream as ``(lines, cut_count)``, read in chunks.

    Lines end at LF (a CR right before it is dropped); a line longer than ``max_line``
    bytes is cut to its first ``max_line`` bytes and the rest skipped; a CR left inside a
    line splits it; lines are UTF-8 decoded with replacement (whole lines only, so a
    character is never split). Memory stays at about two chunks whatever the input.
    """
    carry = b""
    skipping = False
    while True:
        chunk = stream.read(chunk_size)
        if not chunk:
            break
        if skipping:
            nl = chunk.find(b"\n")
            if nl < 0:
                continue
            chunk = chunk[nl + 1 :]
            skipping = False
        buf = carry + chunk
        cut = 0
        end = buf.rfind(b"\n")
        if end < 0:
            carry = buf
            # A trailing CR may be the first half of a CRLF: it does not count yet.
            if len(carry) - carry.endswith(b"\r") > max_line:
                yield _clean(carry[:max_line].decode("utf-8", errors="replace")).split("\n"), 1
                carry = b""
                skipping = True
            continue
        body, carry = buf[:end], buf[end + 1 :]
        # CRLF ends a line like LF (a CR elsewhere is a line break of its own, see _clean).
        if body.endswith(b"\r"):
            body = body[:-1]
        body = body.replace(b"\r\n", b"\n")
        parts = body.split(b"\n")
        if max(map(len, parts)) > max_line:
            cut = sum(1 for p in parts if len(p) > max_line)
            parts = [p[:max_line] for p in parts]
        text = _clean(b"\n".join(parts).decode("utf-8", errors="replace"))
        yield text.split("\n"), cut
        if len(carry) - carry.endswith(b"\r") > max_line:
            yield _clean(carry[:max_line].decode("utf-8", errors="replace")).split("\n"), 1
            carry = b""
            skipping = True
    if carry:
        # The last line has no LF, so a trailing CR is its own (it counts for the cut).
        cut_last = int(len(carry) > max_line)
        yield _clean(carry[:max_line].decode("utf-8", errors="replace")).split("\n"), cut_last


BLOCK_LINES = 4096
FED_MEMORY = 256

# Every ASCII non-letter → space: a block's vocabulary is then ``set(text.split())``.
_NON_ALPHA = {i: 32 for i in range(128) if not chr(i).isalpha()}
_ALPHA_RUN = re.compile(r"[a-z]+")


@cache
def _anchor(keyword: str) -> str | None:
    """The longest run of letters in ``keyword`` (``None`` when it has none)."""
    runs = _ALPHA_RUN.findall(keyword)
    return max(runs, key=len) if runs else None


def _present(keywords: tuple[str, ...], vocab: str) -> tuple[str, ...]:
    """Keywords that may occur in a block whose letter-runs are in ``vocab``.

    A keyword whose longest letter run is not part of any word of the block cannot occur
    in it, so its (costly) ``str.find`` over the block is skipped.
    """
    out = []
    for kw in keywords:
        a = _anchor(kw)
        if a is None or a in vocab:
            out.append(kw)
    return tuple(out)


def _hit_lines(joined: str, starts: list[int], keywords: tuple[str, ...]) -> list[int]:
    """Indices of the lines of a block (``joined`` with ``\n``) containing a keyword."""
    hits: set[int] = set()
    n = len(starts)
    end = len(joined)
    for kw in keywords:
        pos = joined.find(kw)
        while pos != -1:
            idx = bisect_right(starts, pos) - 1
            hits.add(idx)
            nxt = starts[idx + 1] if idx + 1 < n else end
            pos = joined.find(kw, nxt)
    return sorted(hits)


# ANSI colour / cursor sequences (CSI) and OSC titles that terminals paste along.
_ANSI = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")


def strip_ansi(lines: list[str]) -> list[str]:
    """``lines`` without ANSI escape sequences (the list itself when none has one)."""
    if not any("\x1b" in ln for ln in lines):
        return lines
    return [_ANSI.sub("", ln) if "\x1b" in ln else ln for ln in lines]


class _Dispatcher:
    """Feeds blocks of lines to every analyzer; isolates analyzer failures."""

    def __init__(self, kinds: list[ArtifactKind], world_size: int | None, lang: str) -> None:
        self.lang = lang
        self.kinds = {k.name: k for k in kinds}
        self.streams: dict[str, LineAnalyzer] = {}
        self.texts: dict[str, _TextCollector] = {}
        self.errors: list[str] = []
        self.carry: dict[str, int] = {}
        # The first lines each analyzer was fed (bounded): evidence for the analyzers
        # whose results carry only line numbers.
        self.fed: dict[str, dict[int, str]] = {}
        self._vocab = ""
        for k in kinds:
            try:
                if k.stream is not None:
                    if k.stream is nccl.NcclAnalyzer:
                        self.streams[k.name] = nccl.NcclAnalyzer(world_size=world_size)
                    else:
                        self.streams[k.name] = k.stream()
                elif k.text is not None:
                    self.texts[k.name] = _TextCollector()
            except Exception as exc:
                self._fail(k.name, exc)

    def _fail(self, name: str, exc: BaseException) -> None:
        self.errors.append(f"{name}: {type(exc).__name__}")
        self.streams.pop(name, None)
        self.texts.pop(name, None)

    def block(self, first_no: int, lines: list[str]) -> None:
        lines = strip_ansi(lines)
        lows, joined, starts = self._index(lines)
        # Credentials in a pasted log never reach a finding, the record or an export: the
        # lines that may hold one are redacted before any analyzer sees them.
        hits = hinted_lines(joined, starts, self._vocab)
        if hits:
            lines = list(lines)
            for i in hits:
                lines[i] = redact_text(lines[i])
            lows, joined, starts = self._index(lines)
        for name in list(self.streams):
            try:
                self._feed_stream(name, first_no, lines, lows, joined, starts)
            except Exception as exc:
                self._fail(name, exc)
        for name in list(self.texts):
            try:
                self._feed_text(name, first_no, lines, joined, starts)
            except Exception as exc:
                self._fail(name, exc)

    def _index(self, lines: list[str]) -> tuple[list[str], str, list[int]]:
        """Lower-cased lines, their join, each line's offset in it; sets the vocabulary."""
        lows = [ln.lower() for ln in lines]
        joined = "\n".join(lows)
        starts = [0]
        for ln in lows[:-1]:
            starts.append(starts[-1] + len(ln) + 1)
        self._vocab = " ".join(set(joined.translate(_NON_ALPHA).split()))
        return lows, joined, starts

    def _feed_stream(
        self,
        name: str,
        first_no: int,
        lines: list[str],
        lows: list[str],
        joined: str,
        starts: list[int],
    ) -> None:
        an = self.streams[name]
        kind = self.kinds[name]
        scan = getattr(an, "scan_block", None)
        if scan is not None:
            scan(first_no, lines)
        n = len(lines)
        hits = (
            list(range(n))
            if kind.keywords is None
            else _hit_lines(joined, starts, _present(kind.keywords, self._vocab))
        )
        force_until = self.carry.get(name, 0)
        pos = 0
        k = 0
        while True:
            while k < len(hits) and hits[k] < pos:
                k += 1
            if pos < force_until:
                idx = pos
            elif k < len(hits):
                idx = hits[k]
            else:
                break
            if idx >= n:
                break
            an.feed(first_no + idx, lines[idx])
            fed = self.fed.setdefault(name, {})
            if len(fed) < FED_MEMORY:
                fed[first_no + idx] = lines[idx][:400]
            pos = idx + 1
            follow = int(getattr(an, "follow", 0) or 0)
            if follow > 0:
                force_until = max(force_until, pos + follow)
        self.carry[name] = max(0, force_until - n)

    def _feed_text(
        self, name: str, first_no: int, lines: list[str], joined: str, starts: list[int]
    ) -> None:
        collector = self.texts[name]
        kind = self.kinds[name]
        collector.add_whole(lines)
        if kind.keywords is not None:
            idx = _hit_lines(joined, starts, _present(kind.keywords, self._vocab))
        else:
            idx = list(range(len(lines)))
        fed = self.fed.setdefault(name, {})
        for i in idx:
            if kind.detect(lines[i]):
                collector.add_selected(lines[i])
                if len(fed) < FED_MEMORY:
                    fed[first_no + i] = lines[i][:400]

    def _fed_evidence(self, f: Finding) -> list[EvidenceItem]:
        """Evidence from the lines the analyzer was fed: its first line, and the lines its
        kind's detector recognises (not for kinds that take every line)."""
        fed = self.fed.get(f.kind, {})
        kind = self.kinds[f.kind]
        picked = {
            n: t
            for n, t in fed.items()
            if n == f.first_line or (kind.detect is not _always and kind.detect(t))
        }
        return cascade.evidence_of(
            {"lines": [{"line": n, "text": t} for n, t in sorted(picked.items())]}
        )

    def finish(self) -> list[Finding]:
        findings: list[Finding] = []
        for name, analyzer in list(self.streams.items()):
            try:
                f = _to_finding(self.kinds[name], analyzer.finish())
            except Exception as exc:
                self._fail(name, exc)
                continue
            if f is not None:
                findings.append(f)
        for name, collector in list(self.texts.items()):
            if not collector.matched:
                continue
            kind = self.kinds[name]
            fn = kind.text
            try:
                if fn is None:
                    result = None
                elif kind.takes_lang:
                    result = fn(collector.text(), self.lang)
                else:
                    result = fn(collector.text())
                f = _to_finding(kind, result)
            except Exception as exc:
                self._fail(name, exc)
                continue
            if f is not None:
                findings.append(f)
        findings.sort(key=lambda f: (-f.priority, f.first_line or 10**12))
        findings = cascade.prune(findings)
        for f in findings:
            f.evidence = cascade.evidence_of(f.fields) or self._fed_evidence(f)
        return cascade.link(findings)


def explain_lines(
    lines: Iterable[str | tuple[str, bool]],
    *,
    world_size: int | None = None,
    registry: list[ArtifactKind] | None = None,
    lang: str = "en",
) -> Explanation:
    """Run every registered analyzer over ``lines`` (strings or ``(text, was_cut)``).

    Lines are processed in blocks of :data:`BLOCK_LINES`; an analyzer with ``keywords``
    is fed only the lines containing one (plus the lines it asks to ``follow``).

    Args:
        lines: The input, one line per item, without line ends.
        world_size: Number of distributed ranks when known (NCCL analyzer).
        registry: Kinds to run (default :data:`REGISTRY`).
        lang: Language for analyzers whose results carry words (``zh``/``en``).

    Returns:
        The :class:`Explanation`; never raises for any input.
    """
    return _explain_blocks(_blocks_of(lines), world_size=world_size, registry=registry, lang=lang)


def _blocks_of(lines: Iterable[str | tuple[str, bool]]) -> Iterator[tuple[list[str], int]]:
    block: list[str] = []
    cut = 0
    for item in lines:
        if isinstance(item, tuple):
            line, was_cut = item
            cut += int(bool(was_cut))
        else:
            line = item
        if not isinstance(line, str):
            continue
        block.append(line.replace("\x00", "\ufffd") if "\x00" in line else line)
        if len(block) >= BLOCK_LINES:
            yield block, cut
            block, cut = [], 0
    if block or cut:
        yield block, cut


def _explain_blocks(
    blocks: Iterable[tuple[list[str], int]],
    *,
    world_size: int | None,
    registry: list[ArtifactKind] | None,
    lang: str,
) -> Explanation:
    kinds = list(REGISTRY if registry is None else registry)
    disp = _Dispatcher(kinds, world_size, lang)
    n = 0
    size = 0
    cut_lines = 0
    for block, cut in blocks:
        cut_lines += cut
        for start in range(0, len(block), BLOCK_LINES):
            part = block[start : start + BLOCK_LINES]
            if not part:
                continue
            n_part = len(part)
            size += sum(map(len, part)) + n_part
            disp.block(n + 1, part)
            n += n_part
    findings = disp.finish()
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
        errors=disp.errors,
    )


def explain_text(
    text: str | bytes, *, world_size: int | None = None, lang: str = "en"
) -> Explanation:
    """:func:`explain_lines` over a string (or bytes, decoded with replacement)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    return explain_lines(text.splitlines(), world_size=world_size, lang=lang)


def explain_stream(
    stream: IO[bytes], *, world_size: int | None = None, lang: str = "en"
) -> Explanation:
    """:func:`explain_lines` over a binary stream, read line by line (bounded memory)."""
    return _explain_blocks(iter_blocks(stream), world_size=world_size, registry=None, lang=lang)
