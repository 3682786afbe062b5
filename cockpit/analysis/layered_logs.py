"""Layered logs as evidence (seed 003 §三 "日志与监控体系搭建").

The seed names four kinds of log — access (request ID, path, status, latency), service
(batch size, queue length, inference time, memory allocation), runtime (CUDA errors, NCCL
warnings, OOM stacks) and system (driver, Xid, temperature, power) — each carrying a
request or batch ID so that a user's request can be followed down to the GPU. This module
reads pod log texts into those layers, with the same engine as ``cockpit explain``
(:func:`cockpit.analysis.explain.explain_lines`): per layer the first error, counts, the
lines and their time, and a request ID of an access line followed into the serving pods'
logs.

Pure: texts in, models out. Texts come with the kubelet's RFC 3339 timestamp on every line
(``timestamps=true``); a line's time is that stamp. A serving text may come unmasked (read
with ``redact=False``): every line a report keeps is masked here
(:func:`cockpit.redact.redact_text`, in :func:`_line`), and the engine masks the lines it
is given itself, so no finding, field or line holds a credential.

Layers:
- ``access``: the gateway controller's log (ingress-nginx's default ``upstreaminfo``
  format, its JSON variant, Envoy's default format): status, upstream, duration, request
  ID.
- ``service``: the serving pods' log (engine stats lines, HTTP errors, engine errors):
  every explain finding that is not a runtime one.
- ``runtime``: the CUDA / NCCL / OOM lines inside the serving pods' log (explain kinds
  :data:`RUNTIME_KINDS`).
- ``system``: driver and Xid messages are kernel messages, not pod logs; they come from
  NVML events and DCGM (the GPU panel, ``cockpit gpus``). The report says where they can
  or cannot be read (:func:`system_layer`).
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, Field

from cockpit.analysis.explain import explain_lines
from cockpit.redact import redact_text

LAYERS = ("access", "service", "runtime", "system")
"""The seed's four kinds of log, in the order they are shown."""
Layer = Literal["access", "service", "runtime", "system"]

RUNTIME_KINDS = frozenset({"cuda_oom", "nccl", "cuda_error", "xid"})
"""Explain kinds that are runtime lines (CUDA errors, NCCL, OOM; seed 003 §三)."""

MAX_FINDING_LINES = 8
"""Lines kept per finding (the first ones; ``count`` says how many there were)."""
MAX_FOLLOW = 10
"""Request IDs of access lines looked for in the serving logs (error answers first, then
the slowest): each is one search of every serving log."""
MAX_TRACES = 10
"""Followed requests kept in the report."""
MAX_HOPS = 5
"""Serving lines kept per followed request."""
SHAPE_KEEP = 20
"""Lines of one shape given to the engine from the start, and as many from the end."""

_KUBELET_TS = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z ")
_ERROR_LINE = re.compile(
    r"^(?:\S+Z )?(?:\[rank\d+\]:)?(?:"
    r"(?:ERROR|CRITICAL|FATAL)\b|\[?E\d{4} \d\d:|Traceback \(most recent call last\)|"
    r"[\w.]*(?:Error|Exception): |"
    r"\{.*\"(?:level|severity)\"\s*:\s*\"(?:error|ERROR|fatal|FATAL|critical|CRITICAL)\")",
    re.MULTILINE,
)
RUNTIME_WORDS = (
    "cuda",
    "nccl",
    "out of memory",
    "outofmemory",
    "cublas",
    "cudnn",
    "illegal memory",
    "processgroup",
    "watchdog",
    "nvrm",
    "xid",
)
"""Words (lower case) that make a serving line a runtime line (seed 003: CUDA errors,
NCCL warnings, OOM stacks)."""


def is_runtime(line: str) -> bool:
    """The line names a runtime word (:data:`RUNTIME_WORDS`)."""
    low = line.lower()
    for w in RUNTIME_WORDS:  # noqa: SIM110 (a loop: any() over a generator is 2x slower)
        if w in low:
            return True
    return False


# ingress-nginx's default log-format-upstream ("upstreaminfo"), $req_id last.
_NGINX = re.compile(
    r'(?P<addr>\S+) - \S+ \[[^\]]+\] "(?P<method>[A-Z]+) (?P<path>\S+)[^"]*" '
    r'(?P<status>\d{3}) \d+ "[^"]*" "[^"]*" \d+ (?P<duration>[\d.]+) '
    r"\[(?P<upstream_name>[^\]]*)\] \[[^\]]*\] (?P<upstream>\S+(?:, \S+)*) \S+(?:, \S+)* "
    r"\S+(?:, \S+)* (?P<upstream_status>\S+(?:, \S+)*)(?: (?P<req_id>[0-9a-fA-F-]{8,64}))?"
)
# Envoy's default access log format (duration in ms, x-request-id quoted).
_ENVOY = re.compile(
    r'\[[^\]]+\] "(?P<method>[A-Z]+) (?P<path>\S+) [^"]*" (?P<status>\d{3}) \S+ \d+ \d+ '
    r'(?P<duration_ms>\d+) \S+ "[^"]*" "[^"]*" "(?P<req_id>[^"]*)" "[^"]*" "(?P<upstream>[^"]*)"'
)
_SHAPE = re.compile(r"[0-9a-fA-F]*\d[0-9a-fA-F]*(?:\.\d+)?")
# The same matches in ASCII text, found faster: a match starts at a hex digit (the engine
# skips to one), so the positions in words without a digit are not tried one by one.
_SHAPE_ASCII = re.compile(
    r"[0-9a-fA-F](?:(?<=[0-9])|(?=[0-9a-fA-F]*[0-9]))[0-9a-fA-F]*(?:\.[0-9]+)?"
)


def line_shape(text: str) -> str:
    """``text`` with its numbers and hex IDs (runs of hex digits holding a decimal digit,
    with a decimal fraction) blanked to ``#``: lines that differ only in them have one
    shape."""
    return (_SHAPE_ASCII if text.isascii() else _SHAPE).sub("#", text)


class LogLine(BaseModel):
    """One log line a finding rests on.

    Attributes:
        pod / container: Where it was read.
        previous: From the previous (terminated) instance of the container.
        at: The kubelet's timestamp of the line (UTC), ``None`` when it has none.
        text: The line without that timestamp, redacted, then cut to 400 characters
            (already neutralised by the source).
    """

    pod: str
    container: str = ""
    previous: bool = False
    at: datetime | None = None
    text: str


class LogFinding(BaseModel):
    """What the engine found in one layer (merged across pods).

    Attributes:
        key: Stable identifier ``<layer>/<kind>/<cause>``.
        layer: ``access``, ``service`` or ``runtime``.
        kind / cause / category: The explain finding's (``access_errors`` for 5xx and 499
            answers of the gateway).
        first_at: Time of the earliest line it rests on (UTC), ``None`` when unknown.
        offset_s: ``first_at`` minus the incident start in seconds (``None`` without a
            start or a time): its place on the incident timeline.
        count: Lines it rests on, over every pod.
        pods: Pods it was found in, first seen first.
        lines: The first :data:`MAX_FINDING_LINES` of those lines, in time order.
        fields: The engine's extracted fields of the first pod it was found in.
    """

    key: str
    layer: str
    kind: str
    cause: str | None = None
    category: str = ""
    first_at: datetime | None = None
    offset_s: float | None = None
    count: int = 0
    pods: list[str] = Field(default_factory=list)
    lines: list[LogLine] = Field(default_factory=list)
    fields: dict[str, object] = Field(default_factory=dict)


class AccessSummary(BaseModel):
    """The gateway's access lines of the window.

    Attributes:
        requests: Access lines recognised.
        with_request_id: Of those, lines that carry a request ID.
        status: Count per status class (``2xx``, ``4xx``, ``499``, ``5xx``…).
        upstreams: Count per upstream (service name or address).
        slowest_s: The longest duration of a request, in seconds (``None`` when no line
            carries one).
    """

    requests: int = 0
    with_request_id: int = 0
    status: dict[str, int] = Field(default_factory=dict)
    upstreams: dict[str, int] = Field(default_factory=dict)
    slowest_s: float | None = None


class LayerReport(BaseModel):
    """One layer.

    Attributes:
        layer: ``access``, ``service``, ``runtime`` or ``system``.
        read: Some log of this layer was read (``False``: see ``not_read``).
        lines: Lines of this layer read (runtime: serving lines naming CUDA, NCCL, OOM,
            a watchdog or the driver).
        error_lines: Lines at error level (ERROR, CRITICAL, FATAL, glog ``E``, a
            traceback or exception line, a JSON error) in this layer.
        first_error: The earliest of those.
        findings: The engine's findings, the earliest first.
        access: The access summary (access layer only).
        not_read: Why nothing of this layer was read, as an i18n key under
            ``logs.not_read.`` (with ``not_read_args``), empty when read.
    """

    layer: str
    read: bool = False
    lines: int = 0
    error_lines: int = 0
    first_error: LogLine | None = None
    findings: list[LogFinding] = Field(default_factory=list)
    access: AccessSummary | None = None
    not_read: str = ""
    not_read_args: dict[str, str] = Field(default_factory=dict)


class TracedRequest(BaseModel):
    """A request followed from the gateway into the serving pods.

    Attributes:
        request_id: The ID both logs carry.
        status: The gateway's status code for it.
        access: The access line.
        serving: Serving lines carrying the ID (at most :data:`MAX_HOPS`).
    """

    request_id: str
    status: int | None = None
    access: LogLine
    serving: list[LogLine] = Field(default_factory=list)


class RequestIdReport(BaseModel):
    """Whether a request can be followed across layers (seed 003: unified request_id).

    Attributes:
        status: ``followed`` (some access line's ID is in a serving log),
            ``not_in_serving`` (access lines carry IDs, the serving logs read do not),
            ``no_ids`` (access lines carry no request ID), ``no_access`` (no access line
            was read).
        access_ids: Distinct request IDs of the access lines looked for.
        followed: Requests found on both sides, errors first.
    """

    status: Literal["followed", "not_in_serving", "no_ids", "no_access"] = "no_access"
    access_ids: int = 0
    followed: list[TracedRequest] = Field(default_factory=list)


def split_stamp(line: str) -> tuple[datetime | None, str]:
    """The kubelet timestamp of ``line`` (``2026-12-01T00:10:05.123456789Z ``) and the
    rest; ``(None, line)`` without one."""
    m = _KUBELET_TS.match(line)
    if m is None:
        return None, line
    frac = (m.group(2) or "").ljust(6, "0")[:6]
    try:
        at = datetime.fromisoformat(m.group(1)).replace(microsecond=int(frac), tzinfo=UTC)
    except ValueError:
        return None, line
    return at, line[m.end() :]


def _stamp_rest(line: str) -> str:
    """``split_stamp(line)[1]`` without building the time (called per access line)."""
    m = _KUBELET_TS.match(line)
    if m is None:
        return line
    try:
        datetime.fromisoformat(m.group(1))
    except ValueError:
        return line
    return line[m.end() :]


def _line(pod: str, container: str, previous: bool, raw: str) -> LogLine:
    """A kept line: masked whole (a secret cut at 400 characters would show its start),
    then cut."""
    at, text = split_stamp(raw)
    return LogLine(
        pod=pod, container=container, previous=previous, at=at, text=redact_text(text)[:400]
    )


class PodPart(BaseModel):
    """What one log read contributed (merged into the report by :func:`merge`)."""

    layer_lines: dict[str, int] = Field(default_factory=dict)
    error_lines: dict[str, int] = Field(default_factory=dict)
    first_error: dict[str, LogLine] = Field(default_factory=dict)
    findings: list[LogFinding] = Field(default_factory=list)
    access: AccessSummary | None = None
    access_ids: dict[str, tuple[int | None, LogLine]] = Field(default_factory=dict)
    serving_hits: dict[str, list[LogLine]] = Field(default_factory=dict)


def select_lines(lines: list[str]) -> tuple[list[str], list[str], dict[str, int], list[int]]:
    """The lines given to the engine, their shapes, how many lines have each shape, and
    the indices of every line that is not bookkeeping.

    A pod's log is mostly bookkeeping (a request added or finished, a 2xx answer) and
    lines that repeat with other numbers (stats every few seconds, the same warning):
    bookkeeping lines are left out (:func:`_bookkeeping`; their request IDs are still
    followed over the whole text), and of each shape (the line with its numbers and hex
    IDs blanked) the first and the last :data:`SHAPE_KEEP` lines are kept in their order,
    so a trend keeps its start and end. ``counts`` says how many lines each shape had.
    """
    kept: dict[str, list[int]] = {}
    tails: dict[str, deque[int]] = {}
    counts: dict[str, int] = {}
    shape_of: dict[int, str] = {}
    candidates = [i for i, raw in enumerate(lines) if not _bookkeeping(raw)]
    for i in candidates:
        raw = lines[i]
        end = _stamp_end(raw)
        shape = shape_of[i] = line_shape(raw[end : end + 240])
        n = counts.get(shape, 0)
        counts[shape] = n + 1
        if n < SHAPE_KEEP:
            kept.setdefault(shape, []).append(i)
            continue
        tail = tails.get(shape)
        if tail is None:
            tail = tails[shape] = deque(maxlen=SHAPE_KEEP)
        tail.append(i)
    index = sorted(i for group in (*kept.values(), *tails.values()) for i in group)
    return [lines[i] for i in index], [shape_of[i] for i in index], counts, candidates


def _bookkeeping(line: str) -> bool:
    """A request added, received or finished (``Added request chatcmpl-….``, vLLM and
    SGLang) or a 2xx/3xx answer of an HTTP access line: no evidence in itself. String
    operations only (faster than a regular expression): most lines of a serving log are
    these."""
    at = line.rfind(" request ")
    if at >= 0 and " " not in line[at + 9 :].rstrip():
        return True
    at = line.find(" HTTP/")
    if at < 0:
        return False
    q = line.find('" ', at)
    code = line[q + 2 : q + 5] if q >= 0 else ""
    return len(code) == 3 and code[0] in "23" and code.isdigit()


def _stamp_end(line: str) -> int:
    m = _KUBELET_TS.match(line)
    return m.end() if m is not None else 0


def _findings(
    lines: list[str],
    layer_of: dict[str, str],
    pod: str,
    container: str,
    previous: bool,
    part: PodPart,
    error_layer: str = "",
) -> list[LogFinding]:
    """The engine's findings over the selected lines (:func:`select_lines`); on the way,
    the error-level lines (each in ``error_layer``, else runtime or service by its words)
    and the runtime lines are counted into ``part``."""
    fed, shapes, counts, candidates = select_lines(lines)
    for i in candidates:
        raw = lines[i]
        runtime = is_runtime(raw)
        if runtime and not error_layer:
            part.layer_lines["runtime"] = part.layer_lines.get("runtime", 0) + 1
        if _ERROR_LINE.match(raw) is None:
            continue
        layer = error_layer or ("runtime" if runtime else "service")
        part.error_lines[layer] = part.error_lines.get(layer, 0) + 1
        if layer not in part.first_error:
            part.first_error[layer] = _line(pod, container, previous, raw)
    expl = explain_lines(fed)
    out: list[LogFinding] = []
    for f in expl.findings:
        layer = layer_of.get(f.kind) or ("runtime" if f.kind in RUNTIME_KINDS else "service")
        numbers = sorted({e.line for e in f.evidence if 0 < e.line <= len(fed)})
        if not numbers and 0 < f.first_line <= len(fed):
            numbers = [f.first_line]
        picked = [_line(pod, container, previous, fed[n - 1]) for n in numbers]
        times = [ln.at for ln in picked if ln.at is not None]
        out.append(
            LogFinding(
                key=f"{layer}/{f.kind}/{f.cause or ''}",
                layer=layer,
                kind=f.kind,
                cause=f.cause,
                category=f.category,
                first_at=min(times) if times else None,
                # Every line of the shapes it rests on, not only those the engine saw.
                count=sum(counts[sh] for sh in {shapes[n - 1] for n in numbers}),
                pods=[pod],
                lines=picked[:MAX_FINDING_LINES],
                fields=f.fields,
            )
        )
    return out


def analyse_serving(
    pod: str, container: str, previous: bool, text: str, wanted: Iterable[str] = ()
) -> PodPart:
    """One serving pod's log: service and runtime findings, error lines, and the lines
    that carry one of the ``wanted`` request IDs (lower-case; :func:`follow_ids`)."""
    part = PodPart()
    lines = text.splitlines()
    part.layer_lines["service"] = len(lines)
    part.layer_lines["runtime"] = 0
    part.findings = _findings(lines, {}, pod, container, previous, part)
    follow_ids(part, pod, container, previous, text, wanted)
    return part


def follow_ids(
    part: PodPart, pod: str, container: str, previous: bool, text: str, wanted: Iterable[str]
) -> None:
    """Put into ``part.serving_hits`` the lines of ``text`` (a serving pod's log) that carry
    one of the ``wanted`` request IDs (lower-case), at most :data:`MAX_HOPS` per ID: once
    the gateway's IDs are known, after the log was analysed."""
    for rid in wanted:
        pos = text.find(rid)
        while pos >= 0 and len(part.serving_hits.get(rid, ())) < MAX_HOPS:
            start = text.rfind("\n", 0, pos) + 1
            end = text.find("\n", pos)
            raw = text[start : end if end >= 0 else len(text)]
            part.serving_hits.setdefault(rid, []).append(_line(pod, container, previous, raw))
            if end < 0:
                break
            pos = text.find(rid, end)


def _access_fields(rest: str) -> tuple[int, float | None, str, str] | None:
    """(status, duration s, upstream, request ID) of one access line, ``None`` when it is
    not one."""
    m = _NGINX.search(rest)
    if m is not None:
        dur = _float(m.group("duration"))
        up = m.group("upstream_name") or m.group("upstream")
        return int(m.group("status")), dur, up, (m.group("req_id") or "").lower()
    m = _ENVOY.search(rest)
    if m is not None:
        ms = _float(m.group("duration_ms"))
        rid = m.group("req_id")
        return (
            int(m.group("status")),
            None if ms is None else ms / 1000,
            m.group("upstream"),
            "" if rid == "-" else rid.lower(),
        )
    if rest.startswith("{") and '"status"' in rest:
        try:
            doc = json.loads(rest)
        except ValueError:
            return None
        if not isinstance(doc, dict):
            return None
        try:
            status = int(str(doc.get("status")))
        except (TypeError, ValueError):
            return None
        dur = _float(str(doc.get("request_time", doc.get("duration", ""))))
        rid = str(doc.get("req_id") or doc.get("request_id") or doc.get("x_request_id") or "")
        up = str(doc.get("proxy_upstream_name") or doc.get("upstream_addr") or "")
        return status, dur, up, rid.lower()
    return None


def _float(v: str | None) -> float | None:
    try:
        return float(v) if v not in (None, "", "-") else None
    except ValueError:
        return None


def _status_class(status: int) -> str:
    return "499" if status == 499 else f"{status // 100}xx"


def analyse_access(pod: str, container: str, previous: bool, text: str) -> PodPart:
    """One gateway controller pod's log: the access summary, the error answers (5xx and
    499) as a finding, the request IDs to follow (errors first, then the slowest), and the
    engine's findings over its other lines (upstream timeouts, resets)."""
    part = PodPart()
    summary = AccessSummary()
    # Lines are kept as their text (the pydantic lines are built at the end, for the few
    # that are reported): most lines of a gateway's log are access lines.
    errors: list[str] = []
    candidates: list[tuple[int, float, str, int, str]] = []
    lines = text.splitlines()
    others: list[str] = []
    # Counted in locals and put into the summary once: a model's attribute assignment
    # costs a validation per access line.
    requests = with_id = 0
    slowest: float | None = None
    by_class, upstreams = summary.status, summary.upstreams
    for raw in lines:
        fields = _access_fields(_stamp_rest(raw))
        if fields is None:
            others.append(raw)
            continue
        status, dur, upstream, rid = fields
        requests += 1
        cls = _status_class(status)
        by_class[cls] = by_class.get(cls, 0) + 1
        if upstream:
            upstreams[upstream] = upstreams.get(upstream, 0) + 1
        if dur is not None and (slowest is None or dur > slowest):
            slowest = dur
        bad = status >= 500 or status == 499
        if bad:
            errors.append(raw)
        if rid:
            with_id += 1
            candidates.append((0 if bad else 1, -(dur or 0.0), rid, status, raw))
            if len(candidates) > 4 * MAX_FOLLOW:
                candidates.sort(key=lambda c: (c[0], c[1]))
                del candidates[MAX_FOLLOW:]
    summary.requests, summary.with_request_id, summary.slowest_s = requests, with_id, slowest
    candidates.sort(key=lambda c: (c[0], c[1]))
    for _, _, rid, status, raw in candidates:
        if len(part.access_ids) >= MAX_FOLLOW:
            break
        if rid not in part.access_ids:
            part.access_ids[rid] = (status, _line(pod, container, previous, raw))
    part.access = summary
    part.layer_lines["access"] = len(lines)
    found = _findings(
        others,
        {k: "access" for k in ("serving", "engine_log")},
        pod,
        container,
        previous,
        part,
        error_layer="access",
    )
    part.error_lines["access"] = part.error_lines.get("access", 0) + len(errors)
    shown = [_line(pod, container, previous, raw) for raw in errors[:MAX_FINDING_LINES]]
    firsts = [ln for ln in (*part.first_error.values(), *shown[:1])]
    dated = [ln for ln in firsts if ln.at is not None]
    part.first_error = {"access": min(dated, key=_at)} if dated else {}
    if errors:
        by: dict[str, int] = {}
        for raw in errors:
            m = re.search(r'" (\d{3}) ', _stamp_rest(raw)[:400])
            code = m.group(1) if m else "5xx"
            by[code] = by.get(code, 0) + 1
        part.findings.append(
            LogFinding(
                key="access/access_errors/",
                layer="access",
                kind="access_errors",
                category="ttft_spike",
                first_at=shown[0].at,
                count=len(errors),
                pods=[pod],
                lines=shown,
                fields={"by_status": by},
            )
        )
    part.findings += found
    return part


def _at(line: LogLine) -> datetime:
    return line.at or datetime.max.replace(tzinfo=UTC)


def merge(
    parts: Iterable[tuple[str, PodPart]],
    incident_start: datetime | None,
    system: LayerReport,
) -> tuple[list[LayerReport], RequestIdReport]:
    """The layers and the request-ID report from every read's part.

    Args:
        parts: ``(role, part)`` with role ``gateway`` or ``serving``.
        incident_start: The incident's start, for each finding's ``offset_s``.
        system: The system layer (:func:`system_layer`).
    """
    layers = {name: LayerReport(layer=name) for name in ("access", "service", "runtime")}
    merged: dict[str, LogFinding] = {}
    access_ids: dict[str, tuple[int | None, LogLine]] = {}
    hits: dict[str, list[LogLine]] = {}
    any_access = False
    for role, part in parts:
        names = ("access",) if role == "gateway" else ("service", "runtime")
        for name in names:
            lay = layers[name]
            lay.read = True
            lay.lines += part.layer_lines.get(name, 0)
            lay.error_lines += part.error_lines.get(name, 0)
            first = part.first_error.get(name)
            if first is not None and (lay.first_error is None or _at(first) < _at(lay.first_error)):
                lay.first_error = first
        if part.access is not None:
            acc = layers["access"].access or AccessSummary()
            any_access = any_access or part.access.requests > 0
            acc.requests += part.access.requests
            acc.with_request_id += part.access.with_request_id
            for k, v in part.access.status.items():
                acc.status[k] = acc.status.get(k, 0) + v
            for k, v in part.access.upstreams.items():
                acc.upstreams[k] = acc.upstreams.get(k, 0) + v
            if part.access.slowest_s is not None:
                acc.slowest_s = max(acc.slowest_s or 0.0, part.access.slowest_s)
            layers["access"].access = acc
        for rid, entry in part.access_ids.items():
            access_ids.setdefault(rid, entry)
        for rid, found in part.serving_hits.items():
            hits.setdefault(rid, []).extend(found)
        for f in part.findings:
            cur = merged.get(f.key)
            if cur is None:
                merged[f.key] = f.model_copy(deep=True)
                continue
            cur.count += f.count
            cur.pods += [p for p in f.pods if p not in cur.pods]
            cur.lines = sorted(cur.lines + f.lines, key=_at)[:MAX_FINDING_LINES]
            if f.first_at is not None and (cur.first_at is None or f.first_at < cur.first_at):
                cur.first_at = f.first_at
    for f in merged.values():
        if f.first_at is not None and incident_start is not None:
            f.offset_s = (f.first_at - incident_start).total_seconds()
        layers[f.layer].findings.append(f)
    for lay in layers.values():
        lay.findings.sort(key=lambda f: (f.first_at or datetime.max.replace(tzinfo=UTC), f.key))
    ids = RequestIdReport(access_ids=len(access_ids))
    if not any_access:
        ids.status = "no_access"
    elif not access_ids:
        ids.status = "no_ids"
    else:
        for rid, (status, line) in access_ids.items():
            if rid in hits and len(ids.followed) < MAX_TRACES:
                ids.followed.append(
                    TracedRequest(
                        request_id=rid,
                        status=status,
                        access=line,
                        serving=sorted(hits[rid], key=_at)[:MAX_HOPS],
                    )
                )
        ids.status = "followed" if ids.followed else "not_in_serving"
    return [layers["access"], layers["service"], layers["runtime"], system], ids


def system_layer(gpu_reason: str | None, metrics_reason: str | None) -> LayerReport:
    """The system layer: Xid and driver messages are kernel messages, never in a pod's
    log; they are read from NVML events on this host (the GPU panel) and from DCGM's Xid
    field for a node (``cockpit gpus --node``).

    Args:
        gpu_reason: Why NVML cannot be read here (``None`` when it can).
        metrics_reason: Why DCGM metrics cannot be read (``None`` when they can).
    """
    if gpu_reason is None or metrics_reason is None:
        where = "nvml" if gpu_reason is None and metrics_reason is not None else "dcgm"
        if gpu_reason is None and metrics_reason is None:
            where = "both"
        return LayerReport(layer="system", not_read=f"elsewhere_{where}")
    return LayerReport(
        layer="system",
        not_read="unreadable",
        not_read_args={"nvml": gpu_reason, "dcgm": metrics_reason},
    )
