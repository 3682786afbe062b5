"""Layered logs of the suspect, its cohort and the gateway (``cockpit logs`` and the
layered-logs panel, one function for both).

Which pods: a pod named by the user; else the suspect the flow reached at step D (a pod;
a node's pods of the service) and up to ``[logs] cohort`` pods of the same workload next
to it; else, without a suspect, the service's pods. The access layer is the gateway's
controller pods (``[logs] gateway_namespace`` / ``gateway_selector``). Each log is read
since the start of the window (:class:`~cockpit.sources.logs.KubeLogSource`: bounded,
timed, previous instance first), analysed off the event loop as it arrives
(:mod:`cockpit.analysis.layered_logs`) and dropped: only the findings stay, so memory is
bounded by the concurrency times ``[logs] max_mb``.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from cockpit.analysis.layered_logs import (
    LayerReport,
    LogFinding,
    LogLine,
    PodPart,
    RequestIdReport,
    analyse_access,
    analyse_serving,
    follow_ids,
    merge,
    system_layer,
)
from cockpit.models.kube import PodLite
from cockpit.sources.base import ErrorKind, SourceError, SourceFailure
from cockpit.sources.logs import KubeLogSource, LogRead, Role

if TYPE_CHECKING:
    from cockpit.context import AppContext
    from cockpit.incident import Evidence

DEFAULT_SINCE = timedelta(hours=1)
"""How far back a read starts without an incident start (``cockpit logs --since``)."""
START_MARGIN = timedelta(minutes=10)
"""Read from this long before the incident's start: the first error often precedes the
page."""
CONCURRENCY = 4
"""Pods whose log is being read or analysed at once: at most that many texts in memory."""
READS_IN_FLIGHT = 2
"""Log reads in flight at once. The API server answers several reads no faster than one
after the other, so logs arrive one by one and each is analysed while the next ones
download, instead of a batch of reads and then a batch of analyses."""
MAX_GATEWAY_PODS = 3
"""Gateway controller pods read (replicas log the same kind of lines)."""


class ReadInfo(BaseModel):
    """One log read, without its text.

    Attributes:
        namespace / pod / container / role / previous / truncated / restarts: See
            :class:`~cockpit.sources.logs.LogRead`.
        bytes: Size of what was read, in bytes.
        lines: Lines read.
        failure: Why it could not be read.
    """

    namespace: str
    pod: str
    container: str = ""
    role: str = "serving"
    previous: bool = False
    bytes: int = 0
    lines: int = 0
    truncated: bool = False
    restarts: int = 0
    failure: SourceFailure | None = None


class LogReport(BaseModel):
    """The layered logs of one window.

    Attributes:
        since / until: The window read (UTC; ``until`` is the clock's now).
        incident_start: The incident's start, findings' ``offset_s`` are from it.
        suspect / suspect_kind: The suspect whose logs were read (``""`` without one; a
            GPU as every screen names it, ``gpu-node-b GPU 0 (GPU-5568…)``, when the
            window's inventory knows it).
        scope_note: An i18n key under ``logs.scope.`` saying how the pods were chosen
            (``named``, ``suspect``, ``suspect_node``, ``no_suspect``, ``no_metrics``;
            for a GPU suspect ``suspect_gpu_pod`` (the pods that held it, from the
            window's inventory), ``suspect_gpu_node`` (its node's pods) or
            ``suspect_gpu`` (neither known: the service's pods)).
        layer: The one layer asked for (``""``: every layer).
        reads: Every log read, in the order asked.
        layers: Access, service, runtime and system (only ``layer`` when one was asked
            for).
        request_ids: Whether a request ID was followed from the gateway into the serving
            logs.
        failures: Listings that failed (the gateway's pods, the service's pods).
    """

    since: datetime
    until: datetime
    incident_start: datetime | None = None
    suspect: str = ""
    suspect_kind: str = ""
    scope_note: str = ""
    layer: str = ""
    reads: list[ReadInfo] = Field(default_factory=list)
    layers: list[LayerReport] = Field(default_factory=list)
    request_ids: RequestIdReport = Field(default_factory=RequestIdReport)
    failures: list[SourceFailure] = Field(default_factory=list)


def window_start(ctx: AppContext, since: timedelta | None = None) -> datetime:
    """Where reads start: ``since`` before now when given; else the incident's start less
    :data:`START_MARGIN`; else :data:`DEFAULT_SINCE` before now (whole seconds, so that a
    recorded read is answered again on replay)."""
    now = ctx.clock.now()
    start = None
    if since is None and ctx.session is not None:
        start = ctx.session.incident.times.start
    at = (
        now - since
        if since is not None
        else (start - START_MARGIN if start else now - DEFAULT_SINCE)
    )
    return at.astimezone(UTC).replace(microsecond=0)


async def find_suspect(ctx: AppContext) -> tuple[str, str, str]:
    """The suspect the flow reached (``(name, kind, note)``): picked at E, else D's, else
    step D's blast radius now; ``("", "", note)`` when there is none."""
    for chosen in (ctx.metrics.picked, ctx.metrics.suspect):
        if chosen is not None and chosen[1] in ("pod", "node", "gpu"):
            return chosen[0], chosen[1], "suspect"
    if ctx.sources.metrics is None:
        return "", "", "no_metrics"
    from cockpit.collect import steps
    from cockpit.collect.cache import screen_window

    try:
        res = await steps.scope(ctx, screen_window(ctx))
    except SourceError:
        return "", "", "no_metrics"
    br = res.blast_radius
    if not br.suspect:
        return "", "", "no_suspect"
    return br.suspect, br.suspect_kind, "suspect"


def _owner(pod: PodLite) -> str:
    return pod.meta.owners[0].name if pod.meta.owners else ""


def _service_pods(ctx: AppContext, pods: list[PodLite]) -> list[PodLite]:
    dep = ctx.settings.service.deployment
    if dep and not ctx.settings.service.selector:
        pods = [p for p in pods if p.meta.name.startswith(f"{dep}-")]
    return sorted(pods, key=lambda p: p.meta.name)


async def _targets(
    ctx: AppContext, src: KubeLogSource, pod: str | None, report: LogReport
) -> list[tuple[PodLite, Role]]:
    ns = _namespace(ctx)
    if pod:
        report.scope_note = "named"
        return [(await src.pod(pod, ns), "named")]
    name, kind, note = await find_suspect(ctx)
    report.suspect, report.suspect_kind, report.scope_note = name, kind, note
    n = ctx.settings.logs.cohort
    if kind == "node":
        report.scope_note = "suspect_node"
        on_node = await src.pods(ns, field_selector=f"spec.nodeName={name}")
        return [(p, "suspect") for p in _service_pods(ctx, on_node)[: n + 1]]
    service: list[PodLite] = []
    try:
        service = _service_pods(ctx, await src.pods(ns, ctx.settings.service.selector))
    except SourceError as exc:
        report.failures.append(exc.failure)
    if kind == "pod":
        suspect = next((p for p in service if p.meta.name == name), None)
        if suspect is None:
            try:
                suspect = await src.pod(name, ns)
            except SourceError as exc:
                # Gone (a replaced replica) or unreadable: said, and the service is read.
                report.failures.append(exc.failure)
                return [(p, "serving") for p in service if p.phase == "Running"][: n + 1]
        owner = _owner(suspect)
        cohort = [
            p
            for p in service
            if p.meta.name != name and _owner(p) == owner and p.phase == "Running"
        ][:n]
        return [(suspect, "suspect"), *((p, "cohort") for p in cohort)]
    if kind == "gpu":
        held, node, shown = await _gpu_holders(ctx, name)
        report.suspect = shown
        mine = [p for p in service if p.meta.name in held]
        if mine:
            # The pod(s) that held the GPU in the window, and their cohort next to them.
            report.scope_note = "suspect_gpu_pod"
            owners = {_owner(p) for p in mine}
            cohort = [
                p for p in service if p not in mine and _owner(p) in owners and p.phase == "Running"
            ][:n]
            return [*((p, "suspect") for p in mine), *((p, "cohort") for p in cohort)]
        if node:
            report.scope_note = "suspect_gpu_node"
            on_node = [p for p in service if p.spec.node_name == node]
            return [(p, "suspect") for p in on_node[: n + 1]]
        report.scope_note = "suspect_gpu"
    return [(p, "serving") for p in service if p.phase == "Running"][: n + 1]


async def _gpu_holders(ctx: AppContext, uuid: str) -> tuple[list[str], str, str]:
    """``(pods, node, name)`` of a GPU suspect: the pods that held it in the screens'
    window and its node, from the window's inventory (DCGM's ``pod``/``Hostname`` labels
    and kube-state-metrics, :func:`cockpit.collect.history.collect_history`, the history
    steps D and E read, so nothing is queried again), and the GPU as every screen names it
    (``gpu-node-b GPU 0 (GPU-5568…)``); ``([], "", uuid)`` when the metrics cannot say."""
    if ctx.sources.metrics is None:
        return [], "", uuid
    from cockpit.collect.analyze import history_window
    from cockpit.collect.cache import screen_window
    from cockpit.collect.history import collect_history

    try:
        hist = await collect_history(ctx, history_window(screen_window(ctx)))
    except SourceError:
        return [], "", uuid
    inv = hist.inventory
    gpu = inv.gpus.get(uuid)
    if gpu is None:
        return [], "", uuid
    return list(gpu.pods), gpu.node, inv.name_of(uuid, "gpu")


def _namespace(ctx: AppContext) -> str | None:
    if ctx.session is not None and ctx.session.incident.service.namespace:
        return ctx.session.incident.service.namespace
    return ctx.settings.service.namespace or None


def _info(r: LogRead) -> ReadInfo:
    return ReadInfo(
        namespace=r.namespace,
        pod=r.pod,
        container=r.container,
        role=r.role,
        previous=r.previous,
        bytes=r.bytes,
        lines=r.text.count("\n") + (1 if r.text and not r.text.endswith("\n") else 0),
        truncated=r.truncated,
        restarts=r.restarts,
        failure=r.failure,
    )


async def gather_logs(
    ctx: AppContext,
    *,
    pod: str | None = None,
    layer: str | None = None,
    since: timedelta | None = None,
) -> LogReport:
    """Read and analyse the layered logs (see the module docstring).

    Args:
        pod: Read this pod (and the gateway) instead of the suspect and its cohort.
        layer: ``access``, ``service`` or ``runtime``: read and report only what that
            layer needs (``None``: every layer).
        since: Read from this long before now (default :func:`window_start`).

    Raises:
        SourceError: ``NOT_CONFIGURED`` without Kubernetes; the named pod cannot be read
            (the suspect's pod that cannot be read is listed in ``failures``).
    """
    kube = ctx.sources.kube
    if kube is None:
        reason = ctx.sources.missing_text("kube", "en", "no Kubernetes source")
        raise SourceError.of("kubernetes", ErrorKind.NOT_CONFIGURED, reason)
    src = KubeLogSource(kube, ctx.settings.logs)
    start = window_start(ctx, since)
    incident_start = ctx.session.incident.times.start if ctx.session is not None else None
    report = LogReport(
        since=start, until=ctx.clock.now(), incident_start=incident_start, layer=layer or ""
    )
    targets: list[tuple[PodLite, Role]] = []
    if layer in (None, "service", "runtime"):
        targets = await _targets(ctx, src, pod, report)
    gateways: list[PodLite] = []
    gateways_failed = False
    if layer in (None, "access"):
        cfg = ctx.settings.logs
        try:
            found = await src.pods(cfg.gateway_namespace, cfg.gateway_selector)
            gateways = sorted(found, key=lambda p: p.meta.name)[:MAX_GATEWAY_PODS]
        except SourceError as exc:
            report.failures.append(exc.failure)
            gateways_failed = True
    sem = asyncio.Semaphore(CONCURRENCY)
    reading = asyncio.Semaphore(READS_IN_FLIGHT)
    # One analysis at a time, in the order the logs arrive: analyses share one
    # interpreter lock, and a log analysed alone is done (and dropped) soonest.
    analysing = asyncio.Lock()
    infos: dict[int, list[ReadInfo]] = {}
    parts: list[tuple[int, int, str, PodPart]] = []

    async def read(slot: int, p: PodLite, role: Role) -> list[LogRead]:
        # A serving log is read unmasked (from a live source only) and only the lines the
        # analysis keeps are masked (:mod:`cockpit.analysis.layered_logs`); a gateway's
        # access fields are taken from whole lines, so its log is read masked.
        async with reading:
            reads = await src.read_pod(p, role, start, redact=role == "gateway")
        infos[slot] = [_info(r) for r in reads]
        return reads

    async def gateway_ids() -> set[str]:
        ids: set[str] = set()
        for slot, p in enumerate(gateways):
            for j, r in enumerate(await read(slot, p, "gateway")):
                if r.failure is None:
                    async with analysing:
                        part = await asyncio.to_thread(
                            analyse_access, r.pod, r.container, r.previous, r.text
                        )
                    parts.append((slot, j, "gateway", part))
                    ids |= set(part.access_ids)
        return ids

    ids_task = asyncio.ensure_future(gateway_ids())

    async def serving(slot: int, p: PodLite, role: Role) -> None:
        # Read and analysed under one slot: at most CONCURRENCY pods' texts in memory.
        # The analysis does not wait for the gateway's request IDs; they are looked for
        # in the text afterwards.
        async with sem:
            reads = await read(slot, p, role)
            done: list[tuple[int, LogRead, PodPart]] = []
            for j, r in enumerate(reads):
                if r.failure is None:
                    async with analysing:
                        part = await asyncio.to_thread(
                            analyse_serving, r.pod, r.container, r.previous, r.text
                        )
                    done.append((j, r, part))
            wanted = await asyncio.shield(ids_task)
            for j, r, part in done:
                if wanted:
                    await asyncio.to_thread(
                        follow_ids, part, r.pod, r.container, r.previous, r.text, wanted
                    )
                parts.append((slot, j, "serving", part))
            for r in reads:
                r.text = ""  # analysed: only the findings are kept

    try:
        await asyncio.gather(
            *(serving(len(gateways) + i, p, role) for i, (p, role) in enumerate(targets))
        )
        await ids_task
    finally:
        if not ids_task.done():
            ids_task.cancel()
    report.reads = [i for slot in sorted(infos) for i in infos[slot]]
    # In the order the logs were asked for (gateway first), whatever order they came in.
    parts.sort(key=lambda p: (p[0], p[1]))
    sources = ctx.sources
    from cockpit.i18n import t

    lang = ctx.lang
    unset = t("panel.not_configured", lang)
    gpu_reason = None if sources.gpu is not None else sources.missing_text("gpu", lang, unset)
    metrics_reason = (
        None if sources.metrics is not None else sources.missing_text("metrics", lang, unset)
    )
    system = await _system_layer(ctx, system_layer(gpu_reason, metrics_reason), incident_start)
    layers, ids = merge(((role, part) for _, _, role, part in parts), incident_start, system)
    _not_read(layers, gateways or gateways_failed, targets, ctx)
    report.layers = [lay for lay in layers if layer is None or lay.layer == layer]
    report.request_ids = ids
    return report


async def _system_layer(
    ctx: AppContext, note: LayerReport, incident_start: datetime | None
) -> LayerReport:
    """The system layer: the Xid codes DCGM reported for the service's GPUs in the
    screens' window, from the window's metrics history (the same items step B and the
    timeline show, :func:`cockpit.collect.history.collect_history`), one finding per GPU
    and code; ``note`` (where Xid and driver messages are read, or why they cannot be)
    when the history has no DCGM Xid field or cannot be read."""
    if ctx.sources.metrics is None:
        return note
    from cockpit.collect.cache import screen_window
    from cockpit.collect.history import collect_history

    try:
        hist = await collect_history(ctx, screen_window(ctx))
    except SourceError:
        return note
    if not any("hardware.xid" in g.last_values for g in hist.inventory.gpus.values()):
        return note
    never = datetime.max.replace(tzinfo=UTC)
    xids = sorted((i for i in hist.items if i.kind == "xid"), key=lambda i: i.at or never)
    lay = LayerReport(layer="system", read=True, lines=len(xids), error_lines=len(xids))
    for item in xids:
        line = LogLine(pod="dcgm-exporter", at=item.at, text=item.text(ctx.lang))
        lay.findings.append(
            LogFinding(
                key=f"system/xid/{item.key}",
                layer="system",
                kind="xid",
                cause=None,
                category="xid_hw",
                first_at=item.at,
                offset_s=(item.at - incident_start).total_seconds()
                if item.at and incident_start
                else None,
                count=1,
                lines=[line],
                fields={"detail": item.detail},
            )
        )
    lay.first_error = lay.findings[0].lines[0] if lay.findings else None
    return lay


def _not_read(
    layers: list[LayerReport],
    gateways: object,
    targets: list[tuple[PodLite, Role]],
    ctx: AppContext,
) -> None:
    """Say why a layer read nothing (``gateways``: some gateway pod was found, or listing
    them failed)."""
    cfg = ctx.settings.logs
    for lay in layers:
        if lay.read or lay.layer == "system":
            continue
        if lay.layer == "access":
            if not gateways:
                lay.not_read = "no_gateway"
                lay.not_read_args = {"ns": cfg.gateway_namespace, "selector": cfg.gateway_selector}
            else:
                lay.not_read = "failed"
        elif not targets:
            lay.not_read = "no_pods"
        else:
            lay.not_read = "failed"


def scope_text(report: LogReport, lang: str) -> str:
    """How the pods were chosen, in ``lang``."""
    from cockpit.i18n import t

    key = f"logs.scope.{report.scope_note or 'no_suspect'}"
    return t(key, lang, suspect=report.suspect, kind=report.suspect_kind)


def layer_name(layer: str, lang: str) -> str:
    """The seed's name of a layer (接入日志 / access logs …)."""
    from cockpit.i18n import t

    return t(f"logs.layer.{layer}", lang)


def finding_title(f: LogFinding, lang: str, short: bool = False) -> str:
    """What a finding is, in ``lang``: the engine's title and, when it has one, what its
    cause means (the same words as ``cockpit explain``); ``short``: only the first clause
    of the meaning, for a table row."""
    import re

    from cockpit.i18n import catalog, t

    title = t(f"logs.kind.{f.kind}.title", lang)
    if f"explain.kind.{f.kind}.title" in catalog():
        title = t(f"explain.kind.{f.kind}.title", lang)
    key = f"explain.cause.{f.kind}.{f.cause or ''}"
    if not f.cause or key not in catalog():
        return title
    meaning = t(key, lang)
    if short:
        meaning = re.split(r"[:;：；]", meaning, maxsplit=1)[0].rstrip("。. ")
        return f"{title} — {meaning}"
    return f"{title}: {meaning}"


def when_text(at: datetime | None, start: datetime | None, lang: str) -> str:
    """``HH:MM:SS`` and the offset from the incident's start (``T+2m03s``; ``T−8m00s``
    before it), or "time unknown"."""
    from cockpit.i18n import t

    if at is None:
        return t("logs.text.no_time", lang)
    clock = at.strftime("%H:%M:%S")
    if start is None:
        return clock
    secs = int((at - start).total_seconds())
    sign = "+" if secs >= 0 else "−"
    m, s = divmod(abs(secs), 60)
    return f"{clock} (T{sign}{m}m{s:02d}s)"


def logs_command(line: LogLine, namespace: str, since: datetime) -> str:
    """The ``kubectl logs`` line that shows ``line`` again (every name shell-quoted)."""
    from cockpit.commandline import arg, namespace_flag

    prev = " --previous" if line.previous else ""
    cont = f" -c {arg(line.container)}" if line.container else ""
    stamp = since.strftime("%Y-%m-%dT%H:%M:%SZ")
    return (
        f"kubectl logs{namespace_flag(namespace)} {arg(line.pod)}{cont}{prev} "
        f"--timestamps --since-time={stamp}"
    )


def finding_evidence(f: LogFinding, report: LogReport, step: str) -> Evidence:
    """A finding as pinned evidence: its layer and title, how many lines, the first line's
    time (so it lands on the incident timeline there), the ``kubectl logs`` line that
    shows it again and the first line as the note; label and note in both languages."""
    from cockpit.i18n import in_both
    from cockpit.incident import Evidence

    first = f.lines[0] if f.lines else None
    ns = next((r.namespace for r in report.reads if first and r.pod == first.pod), "")

    def label(lang: str) -> str:
        pods = ", ".join(f.pods[:3]) + (f" +{len(f.pods) - 3}" if len(f.pods) > 3 else "")
        return f"{layer_name(f.layer, lang)} · {finding_title(f, lang)} ({pods})"

    def note(lang: str) -> str:
        from cockpit.i18n import t

        text = first.text if first is not None else ""
        return t("logs.pin.note", lang, count=f.count, line=text)

    labels = in_both(label)
    notes = in_both(note)
    return Evidence(
        label=labels["en"],
        value=str(f.count),
        unit="lines",
        at=f.first_at,
        query=logs_command(first, ns, report.since)
        if first is not None and f.layer != "system"
        else "",
        source="logs",
        step=step,
        what=f.kind,
        note=notes["en"],
        label_i18n=labels,
        note_i18n=notes,
    )


def read_line(r: ReadInfo, lang: str) -> str:
    """One read as a line: the pod, its role, which instance, lines and size (cut at the
    limit), or why it could not be read."""
    from cockpit.i18n import t

    role = t(f"logs.role.{r.role}", lang)
    which = t("logs.text.previous" if r.previous else "logs.text.current", lang)
    if r.failure is not None:
        what = t(f"error.{r.failure.kind.value}", lang)
        failed = t("logs.text.read_failed", lang, pod=r.pod, role=role, which=which)
        return f"✗ {failed}: {what}: {r.failure.message}"
    kib = f"{r.bytes / 1024:.1f}"
    read = t("logs.text.read", lang, pod=r.pod, role=role, which=which, lines=r.lines, kib=kib)
    cut = " " + t("logs.text.truncated", lang) if r.truncated else ""
    return f"· {read}{cut}"


def render_lines(report: LogReport, lang: str, max_lines: int = 3) -> list[str]:
    """The report as text lines (``cockpit logs`` and the panel): how the pods were
    chosen, what was read, then per layer its counts, first error and findings with
    their lines and time on the incident timeline, then the request IDs followed."""
    from cockpit.i18n import t

    start = report.incident_start
    out = [
        t(
            "logs.text.window",
            lang,
            since=report.since.strftime("%Y-%m-%d %H:%M:%S"),
            until=report.until.strftime("%H:%M:%S"),
        ),
        scope_text(report, lang),
    ]
    out += [f"  {read_line(r, lang)}" for r in report.reads]
    for fl in report.failures:
        out.append(
            "  ⚠ " + t("logs.text.listing_failed", lang, what=f"{fl.kind.value}: {fl.message}")
        )
    for lay in report.layers:
        out.append("")
        out.append(f"== {layer_name(lay.layer, lang)}")
        if not lay.read:
            out.append(
                "  " + t(f"logs.not_read.{lay.not_read or 'failed'}", lang, **lay.not_read_args)
            )
            continue
        out.append("  " + t("logs.text.counts", lang, lines=lay.lines, errors=lay.error_lines))
        if lay.access is not None and lay.access.requests:
            a = lay.access
            status = ", ".join(f"{k} {v}" for k, v in sorted(a.status.items()))
            slow = "—" if a.slowest_s is None else f"{a.slowest_s:g} s"
            out.append(
                "  "
                + t(
                    "logs.text.access",
                    lang,
                    requests=a.requests,
                    status=status,
                    ids=a.with_request_id,
                    slowest=slow,
                )
            )
        if lay.first_error is not None:
            fe = lay.first_error
            out.append(
                "  "
                + t("logs.text.first_error", lang, when=when_text(fe.at, start, lang), pod=fe.pod)
            )
            out.append(f"    {fe.text}")
        if not lay.findings:
            out.append("  " + t("logs.text.no_findings", lang))
        for f in lay.findings:
            out.append(
                "  ▸ "
                + t(
                    "logs.text.finding",
                    lang,
                    title=finding_title(f, lang),
                    count=f.count,
                    when=when_text(f.first_at, start, lang),
                    pods=", ".join(f.pods),
                )
            )
            for ln in f.lines[:max_lines]:
                prev = "⟲ " if ln.previous else ""
                at = ln.at.strftime("%H:%M:%S") if ln.at else "--:--:--"
                out.append(f"    {at} {prev}{ln.pod}: {ln.text}")
    ids = report.request_ids
    if report.layer in ("", "access"):
        out.append("")
        out.append("== " + t("logs.text.request_ids", lang))
        out.append("  " + t(f"logs.request_ids.{ids.status}", lang, n=ids.access_ids))
        for tr in ids.followed[:max_lines]:
            out.append(f"  {tr.request_id} → {tr.status}")
            out.append(f"    {tr.access.pod}: {tr.access.text}")
            for hop in tr.serving[:2]:
                out.append(f"    {hop.pod}: {hop.text}")
    return out


async def record_logs(ctx: AppContext, start: datetime, end: datetime) -> None:
    """``cockpit record``'s ``logs`` plan: the reads ``cockpit logs`` and the panel make by
    default (the suspect, its cohort and the gateway, from an hour before the recorded
    time), so that ``--replay`` answers them."""
    try:
        await gather_logs(ctx)
    except SourceError:
        return  # recorded as a failure; the rest of the recording goes on
