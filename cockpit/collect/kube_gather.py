"""Fetch what the Pending and changes analyses need, in as few requests as the API allows.

Required reads (the pods, the nodes) raise :class:`SourceError`; optional ones (quotas,
priority classes, gangs, the device plugin, bound requests) are recorded as failures and
the analysis continues with what it has, so a 403 on one resource shows as a partial
result with the refused verb, not as an empty panel.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from datetime import datetime
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from cockpit.analysis.changes import ChangeItem, ReleaseComparison
from cockpit.analysis.scheduling import PendingAnalysis, analyze_pending
from cockpit.models.kube import PodLite
from cockpit.sources.base import SourceError, SourceFailure

T = TypeVar("T")


class PendingReport(BaseModel):
    """Analyses of every Pending pod in scope, plus what could not be read.

    Attributes:
        scope: Namespace (``*`` = all) or ``namespace/pod``.
        analyses: One per Pending pod, oldest first.
        failures: Optional reads that failed (the analyses say "unknown" there).
    """

    scope: str
    analyses: list[PendingAnalysis] = Field(default_factory=list)
    failures: list[SourceFailure] = Field(default_factory=list)


async def _optional(coro: Awaitable[T], failures: list[SourceFailure]) -> T | None:
    try:
        return await coro
    except SourceError as exc:
        failures.append(exc.failure)
        return None


async def gather_pending(
    source: Any, pod: str | None = None, namespace: str | None = None
) -> PendingReport:
    """Analyse one pod (``pod``) or every Pending pod in ``namespace`` (``"*"`` = all).

    Requests: the pods (``fieldSelector=status.phase=Pending``), every node, bound
    requests of every non-terminated pod (paged), FailedScheduling events of the
    affected namespaces (``fieldSelector=reason=FailedScheduling``), DaemonSets, the
    device-plugin pods (label selector), quotas, priority classes, PodGroups/Workloads.

    Raises:
        SourceError: when the pods or the nodes cannot be read.
    """
    failures: list[SourceFailure] = []
    if pod:
        pods: list[PodLite] = [await source.get_pod(pod, namespace)]
        scope = f"{pods[0].meta.namespace}/{pod}"
    else:
        pods = await source.list_pods(namespace, field_selector="status.phase=Pending")
        scope = namespace or await source.default_namespace()
    pending = [p for p in pods if not p.spec.node_name]
    report = PendingReport(scope=scope)
    if not pending:
        return report
    namespaces = sorted({p.meta.namespace for p in pending})
    nodes_t = asyncio.ensure_future(source.list_nodes())
    reqs_t = asyncio.ensure_future(_optional(source.node_requests(), failures))
    ds_t = asyncio.ensure_future(_optional(source.list_daemonsets("*"), failures))
    pcs_t = asyncio.ensure_future(_optional(source.list_priority_classes(), failures))
    per_ns: dict[str, tuple[Any, Any, Any]] = {}
    if len(namespaces) > 2:
        # Many namespaces: one cluster-wide list each instead of one per namespace.
        ev_all = asyncio.ensure_future(
            _optional(source.list_events("*", "reason=FailedScheduling"), failures)
        )
        q_all = asyncio.ensure_future(_optional(source.list_resource_quotas("*"), failures))
        g_all = asyncio.ensure_future(_optional(source.list_gangs("*"), failures))
        for ns in namespaces:
            per_ns[ns] = (ev_all, q_all, g_all)
    else:
        for ns in namespaces:
            per_ns[ns] = (
                asyncio.ensure_future(
                    _optional(source.list_events(ns, "reason=FailedScheduling"), failures)
                ),
                asyncio.ensure_future(_optional(source.list_resource_quotas(ns), failures)),
                asyncio.ensure_future(_optional(source.list_gangs(ns), failures)),
            )
    try:
        nodes = await nodes_t
    except SourceError:
        for fut in [reqs_t, ds_t, pcs_t, *(f for fs in per_ns.values() for f in fs)]:
            fut.cancel()
        # Let the cancelled reads finish so no task is left pending.
        await asyncio.gather(
            reqs_t, ds_t, pcs_t, *(f for fs in per_ns.values() for f in fs), return_exceptions=True
        )
        raise
    requests, daemonsets, pcs = await reqs_t, await ds_t, await pcs_t
    plugin_pods: list[PodLite] | None = None
    if daemonsets:
        from cockpit.analysis.scheduling.nodes import _is_device_plugin

        dps = [d for d in daemonsets if _is_device_plugin(d)]
        if dps:
            plugin_pods = []  # filled below
            for d in dps:
                sel = ",".join(f"{k}={v}" for k, v in sorted(d.selector.items()))
                got = await _optional(
                    source.list_pods(d.meta.namespace, label_selector=sel), failures
                )
                plugin_pods += got or []
    rows_cache: dict[str, Any] = {}
    for p in pending:
        ev_t, q_t, g_t = per_ns[p.meta.namespace]
        events, quotas, gangs = await ev_t, await q_t, await g_t
        ns = p.meta.namespace
        quotas = [q for q in quotas or [] if q.meta.namespace == ns]
        gangs = [g for g in gangs or [] if g.meta.namespace == ns]
        report.analyses.append(
            analyze_pending(
                p,
                events or [],
                nodes,
                requests,
                daemonsets or [],
                plugin_pods,
                quotas or [],
                pcs or [],
                gangs or [],
                rows_cache=rows_cache,
            )
        )
    report.failures = _dedupe(failures)
    return report


def _dedupe(failures: list[SourceFailure]) -> list[SourceFailure]:
    seen: set[tuple[str, str]] = set()
    out = []
    for f in failures:
        key = (f.kind.value, f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


class ChangesReport(BaseModel):
    """Changes and timeline items of the service's namespace in a window.

    Attributes:
        namespace / selector: Scope (selector ``""`` = every pod of the namespace).
        since / until: The window (UTC).
        items: Time-ordered :class:`~cockpit.analysis.changes.ChangeItem` (unknown times last).
        releases: Old vs new comparison for each workload rolled out in the window.
        failures: Optional reads that failed.
        sources: Where the items come from: ``kubernetes`` (the API) and/or ``metrics``
            (derived from Prometheus history, :mod:`cockpit.analysis.history`).
        notes: Why a source is missing (``kubernetes: not configured``) or partial.
    """

    namespace: str
    selector: str = ""
    since: datetime
    until: datetime
    items: list[ChangeItem] = Field(default_factory=list)
    releases: list[ReleaseComparison] = Field(default_factory=list)
    failures: list[SourceFailure] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=lambda: ["kubernetes"])
    notes: list[str] = Field(default_factory=list)


async def gather_changes(
    source: Any,
    since: datetime,
    until: datetime,
    namespace: str | None = None,
    selector: str = "",
    read_logs: bool = True,
) -> ChangesReport:
    """Everything the B screen and the timeline need for ``namespace`` in ``[since, until]``.

    Reads the namespace's pods (label ``selector``), revisions, Helm release secrets,
    ConfigMaps and events, every node and the Node events; for each workload rolled out
    inside the window, the new pods' logs (``timestamps=true``, last 500 lines) to time
    their warm-up.

    Raises:
        SourceError: when the pods cannot be read.
    """
    from cockpit.analysis import changes as ch

    failures: list[SourceFailure] = []
    ns = namespace or await source.default_namespace()
    pods = await source.list_pods(ns, label_selector=selector)
    revs_t = asyncio.ensure_future(_optional(source.list_revisions(ns), failures))
    helm_t = asyncio.ensure_future(_optional(source.list_helm_releases(ns), failures))
    nodes_t = asyncio.ensure_future(_optional(source.list_nodes(), failures))
    cms_t = asyncio.ensure_future(_optional(source.list_configmaps(ns), failures))
    ev_t = asyncio.ensure_future(_optional(source.list_events(ns), failures))
    nev_t = asyncio.ensure_future(
        _optional(source.list_events("*", "involvedObject.kind=Node"), failures)
    )
    revisions = await revs_t or []
    releases = await helm_t or []
    nodes = await nodes_t or []
    cms = await cms_t or []
    events = await ev_t or []
    node_events = await nev_t or []
    if selector:
        owners = {o.name for p in pods for o in p.meta.owners}
        rs_owners = {r.owner for r in revisions if r.meta.name in owners}
        revisions = [r for r in revisions if r.owner in rs_owners or r.meta.name in owners]
        pod_names = {p.meta.name for p in pods}
        events = [e for e in events if e.kind != "Pod" or e.name in pod_names]
    node_names = {p.spec.node_name for p in pods if p.spec.node_name}
    items: list[ChangeItem] = []
    items += ch.rollout_changes(revisions, pods, since, until)
    items += ch.helm_changes(releases, since, until)
    scoped_nodes = [n for n in nodes if not selector or n.meta.name in node_names]
    items += ch.node_changes(scoped_nodes, node_events, since, until)
    items += ch.node_condition_items(scoped_nodes, since, until)
    items += ch.config_changes(cms, pods, since, until)
    items += ch.restart_items(pods, since, until)
    all_events = events + [e for e in node_events if not selector or e.name in node_names]
    items += ch.warning_event_items(all_events, since, until)
    report = ChangesReport(namespace=ns, selector=selector, since=since, until=until)
    report.items = ch.timeline(items)
    rolled = {
        (i.key.split("/")[1], i.key.split("/")[3])
        for i in items
        if i.kind == "rollout" and i.in_window
    }
    for _ns, owner in sorted(rolled):
        logs: dict[str, str] = {}
        cmp = ch.compare_release(owner, revisions, pods)
        if read_logs and cmp.new is not None:
            for w in cmp.warmup:
                got = await _optional(
                    source.pod_log(w.pod, ns, tail_lines=500, timestamps=True), failures
                )
                if got is not None:
                    logs[w.pod] = got.text
            cmp = ch.compare_release(owner, revisions, pods, logs)
        report.releases.append(cmp)
    report.failures = _dedupe(failures)
    return report
