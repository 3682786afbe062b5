"""Why a pod is Pending, with cluster state: the newest FailedScheduling message, the node
table, quotas, gangs and the verdict with its next steps (pure, no I/O)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from cockpit.analysis.scheduling.message import (
    _GANG,
    GPU,
    ReasonClass,
    SchedulingMessage,
    parse_failed_scheduling,
)
from cockpit.analysis.scheduling.nodes import (
    NodeRow,
    RowStats,
    _gpu_resource,
    _is_device_plugin,
    _keep_rows,
    _node_row,
    _shape_key,
    _toleration_yaml,
    row_stats,
)
from cockpit.analysis.scheduling.paste import (
    Finding,
    _class_commands,
    _likely_from_message,
    base_commands,
    reason_findings,
)
from cockpit.commandline import arg, namespace_flag
from cockpit.models.kube import (
    DaemonSetLite,
    EventLite,
    GangLite,
    NodeLite,
    NodeRequests,
    PodLite,
    PriorityClassLite,
    ResourceQuotaLite,
    effective_requests,
    parse_quantity,
)

MAX_ROWS = 300
"""Rows kept per node table (a terminal shows a few dozen; the rest are counted)."""


class QuotaRow(BaseModel):
    """One resource of a ResourceQuota in the pod's namespace."""

    quota: str
    resource: str
    used: str
    hard: str
    pod_request: float | None = None
    exceeded: bool = False


class PendingAnalysis(BaseModel):
    """Everything the scheduling panel shows for one Pending pod."""

    pod: str
    namespace: str
    scheduler: str = "default-scheduler"
    message: SchedulingMessage | None = None
    message_source: str = "none"  # event | condition | none
    message_at: str = ""
    stale_condition: str = ""
    requests: dict[str, float] = Field(default_factory=dict)
    gpu_resource: str = ""
    priority_class: str = ""
    priority: int | None = None
    rows: list[NodeRow] = Field(default_factory=list)
    gpu_nodes: int = 0
    cpu_nodes: int = 0
    rows_omitted: int = 0
    """Nodes left out of ``rows`` (see ``max_rows``); counted in ``gpu_nodes``/``cpu_nodes``."""
    quotas: list[QuotaRow] = Field(default_factory=list)
    gangs: list[GangLite] = Field(default_factory=list)
    device_plugin_desired: int | None = None
    device_plugin_ready: int | None = None
    likely: str = "unknown"
    findings: list[Finding] = Field(default_factory=list)
    commands: list[str] = Field(default_factory=list)
    checklist: list[str] = Field(default_factory=list)


def newest_failed_scheduling(events: list[EventLite], pod: PodLite) -> EventLite | None:
    """The newest FailedScheduling (or gang/queue) event about this pod."""
    mine = [
        e
        for e in events
        if e.name == pod.meta.name
        and (not e.namespace or e.namespace == pod.meta.namespace)
        and e.reason in ("FailedScheduling", "Unschedulable", "PodGroupNotReady")
    ]
    if not mine:
        return None
    return max(mine, key=lambda e: (e.when is not None, e.when))


def analyze_pending(
    pod: PodLite,
    events: list[EventLite],
    nodes: list[NodeLite],
    requests: NodeRequests | None,
    daemonsets: list[DaemonSetLite] | None = None,
    plugin_pods: list[PodLite] | None = None,
    quotas: list[ResourceQuotaLite] | None = None,
    priority_classes: list[PriorityClassLite] | None = None,
    gangs: list[GangLite] | None = None,
    rows_cache: dict[str, Any] | None = None,
    max_rows: int = MAX_ROWS,
) -> PendingAnalysis:
    """The scheduling explanation for one Pending pod, with the per-node table.

    Args:
        pod: The pod.
        events: Events of its namespace (or about it).
        nodes: Every node.
        requests: Requests already bound to each node (``None`` = unknown: the
            requested/free columns stay unknown).
        daemonsets: DaemonSets (the NVIDIA device plugin is found among them).
        plugin_pods: Pods of the device-plugin DaemonSet (health per node).
        quotas: ResourceQuotas of the pod's namespace.
        priority_classes: PriorityClasses of the cluster.
        gangs: PodGroups / Workloads of the pod's namespace.
        rows_cache: Shared between calls for pods of one cluster snapshot: pods with the
            same requests, tolerations, selector and affinity get the same node table
            (computed once — 100 replicas of one Pending Deployment on 5,000 nodes).
        max_rows: Rows kept in the table (GPU nodes first, the closest to fitting
            first); ``rows_omitted`` counts the rest. Counts and verdicts use every node.
    """
    ns = pod.meta.namespace
    out = PendingAnalysis(pod=pod.meta.name, namespace=ns, scheduler=pod.spec.scheduler_name)
    out.requests = effective_requests(pod.spec)
    out.gpu_resource = _gpu_resource(out.requests)
    out.priority_class = pod.spec.priority_class_name
    out.priority = pod.spec.priority
    if out.priority is None and out.priority_class:
        pc = next((p for p in priority_classes or [] if p.name == out.priority_class), None)
        out.priority = pc.value if pc else None

    ev = newest_failed_scheduling(events, pod)
    cond = pod.condition("PodScheduled")
    if ev is not None:
        out.message = parse_failed_scheduling(ev.message)
        out.message_source = "event"
        out.message_at = ev.when.isoformat() if ev.when else ""
        if cond and cond.message and cond.message.strip() != ev.message.strip():
            out.stale_condition = cond.message
    elif cond and cond.message:
        out.message = parse_failed_scheduling(cond.message)
        out.message_source = "condition"
        out.message_at = cond.last_transition.isoformat() if cond.last_transition else ""

    # Device plugin per node.
    plugin_state: dict[str, str] = {}
    dps = [d for d in daemonsets or [] if _is_device_plugin(d)]
    if dps:
        out.device_plugin_desired = sum(d.desired for d in dps)
        out.device_plugin_ready = sum(d.ready for d in dps)
    for p in plugin_pods or []:
        if p.spec.node_name:
            ok = (
                p.phase == "Running"
                and all(s.ready for s in p.container_statuses)
                and bool(p.container_statuses)
            )
            plugin_state[p.spec.node_name] = "ready" if ok else "not_ready"

    gres = out.gpu_resource or GPU
    shape = _shape_key(pod)
    cached = rows_cache.get(shape) if rows_cache is not None else None
    if cached is None:
        rows = [
            _node_row(
                pod,
                node,
                gres,
                requests,
                out.requests,
                plugin_state,
                bool(dps) or plugin_pods is not None,
            )
            for node in nodes
        ]
        rows.sort(
            key=lambda r: (
                not r.gpu_node,
                not r.fits,
                len(r.blockers),
                -(r.gpu_free or 0.0),
                r.name,
            )
        )
        gpu_n = sum(1 for r in rows if r.gpu_node)
        kept = _keep_rows(rows, max_rows, bool(out.gpu_resource))
        stats = row_stats(
            rows, out.requests.get(out.gpu_resource, 0.0) if out.gpu_resource else 0.0
        )
        cached = (kept, gpu_n, len(rows) - gpu_n, len(rows) - len(kept), stats)
        if rows_cache is not None:
            rows_cache[shape] = cached
    out.rows = cached[0]
    stats = cached[4]
    out.gpu_nodes, out.cpu_nodes, out.rows_omitted = cached[1], cached[2], cached[3]

    for q in quotas or []:
        if q.meta.namespace and q.meta.namespace != ns:
            continue
        for res, hard in q.hard.items():
            used = q.used.get(res, "")
            base = res.removeprefix("requests.").removeprefix("limits.")
            req = out.requests.get(base) if res.startswith(("requests.", base)) else None
            h, u = parse_quantity(hard), parse_quantity(used)
            exceeded = h is not None and u is not None and req is not None and u + req > h
            out.quotas.append(
                QuotaRow(
                    quota=q.meta.name,
                    resource=res,
                    used=used or "?",
                    hard=hard,
                    pod_request=req,
                    exceeded=exceeded,
                )
            )

    out.gangs = list(gangs or [])
    _verdict_and_steps(out, pod, stats)
    return out


def _verdict_and_steps(out: PendingAnalysis, pod: PodLite, st: RowStats) -> None:
    """Fill ``out``'s findings, ``likely``, commands and checklist: the message's reasons,
    then the gangs, the GPU nodes, quotas and priority, each refining ``likely``."""
    msg = out.message
    f = out.findings
    if out.message_source == "event" and out.stale_condition:
        f.append(
            Finding(
                key="kube.finding.stale_condition",
                params={"old": out.stale_condition[:160]},
                severity="info",
            )
        )
    if msg is not None:
        f.extend(reason_findings(msg))
    elif out.scheduler == "default-scheduler":
        f.append(Finding(key="kube.finding.no_message", severity="warn"))

    likely = _likely_from_message(msg) if msg is not None else "unknown"
    likely = _gang_verdict(out, pod, likely)
    likely = _gpu_node_verdict(out, st, likely)
    likely = _quota_priority_verdict(out, st, likely)
    out.likely = likely
    f.append(Finding(key=f"kube.likely.{likely}", severity="problem"))
    out.commands = _pending_commands(out, st, likely)
    out.checklist = [
        "kube.check.allocatable",
        "kube.check.requests",
        "kube.check.affinity",
        "kube.check.taints",
        "kube.check.quota",
        "kube.check.priority",
        "kube.check.gang",
        "kube.check.device_plugin",
    ]


def _gang_verdict(out: PendingAnalysis, pod: PodLite, likely: str) -> str:
    """Volcano PodGroups and Kueue Workloads of the pod (module docs)."""
    f = out.findings
    group = pod.meta.annotations.get("scheduling.k8s.io/group-name") or pod.meta.annotations.get(
        "scheduling.volcano.sh/group-name", ""
    )
    for g in out.gangs:
        cond = next((c for c in g.conditions if c.message), None)
        text = cond.message if cond else ""
        if g.kind == "PodGroup" and (not group or g.meta.name == group):
            gm = _GANG.search(text)
            f.append(
                Finding(
                    key="kube.finding.podgroup",
                    params={
                        "name": g.meta.name,
                        "phase": g.phase or "?",
                        "min": g.min_member if g.min_member is not None else "?",
                        "message": text or "-",
                    },
                    severity="warn",
                )
            )
            if gm and gm.group(2) == "0":
                f.append(
                    Finding(
                        key="kube.finding.gang_sees_no_pods",
                        params={"scheduler": out.scheduler},
                        severity="problem",
                    )
                )
                likely = "gang_scheduler_mismatch"
            elif likely == "unknown":
                likely = "gang_not_ready"
        if g.kind == "Workload" and g.phase != "admitted":
            f.append(
                Finding(
                    key="kube.finding.workload",
                    params={"name": g.meta.name, "queue": g.queue or "?", "message": text or "-"},
                    severity="warn",
                )
            )
            if likely in ("unknown",):
                likely = "queue_quota"
    if (
        group
        and out.scheduler not in ("volcano",)
        and not any(g.kind == "PodGroup" for g in out.gangs)
    ):
        f.append(
            Finding(key="kube.finding.group_no_podgroup", params={"group": group}, severity="warn")
        )
    if group and out.scheduler != "volcano":
        f.append(
            Finding(
                key="kube.finding.scheduler_name",
                params={"scheduler": out.scheduler},
                severity="problem",
            )
        )
        likely = "gang_scheduler_mismatch"
    return likely


_CAPACITY_VERDICTS = frozenset(
    {"capacity_or_priority", "device_plugin_or_capacity", "insufficient_resources"}
)
"""Verdicts that blame capacity or priority, overturned when the free room is tainted."""


def _gpu_node_verdict(out: PendingAnalysis, st: RowStats, likely: str) -> str:
    """GPU-specific cross-checks against the node table (formats.md §C.5)."""
    f = out.findings
    msg = out.message
    wants_gpu = bool(out.gpu_resource)
    if wants_gpu and st.gpu_count:
        if (
            likely in _CAPACITY_VERDICTS
            and not st.fitting
            and st.tainted_fit
            and not any(q.exceeded for q in out.quotas)
        ):
            # Every node with room for the pod is tainted: waiting or preempting frees
            # nothing the pod may use; a toleration (or another taint) decides.
            likely = "missing_toleration"
            f.append(
                Finding(
                    key="kube.finding.free_behind_taint",
                    params={"nodes": ", ".join(st.tainted_fit[:5]), "count": len(st.tainted_fit)},
                    severity="problem",
                )
            )
        zero = st.zero
        if st.unhealthy:
            f.append(
                Finding(
                    key="kube.finding.gpus_unhealthy",
                    params={"nodes": ", ".join(st.unhealthy[:10])},
                    severity="problem",
                )
            )
        if zero and len(zero) == st.gpu_count:
            if likely == "missing_toleration":
                if out.device_plugin_desired == 0:
                    f.append(Finding(key="kube.finding.plugin_not_scheduled", severity="problem"))
            elif out.device_plugin_desired == 0:
                likely = "device_plugin_not_scheduled"
                f.append(Finding(key="kube.finding.plugin_not_scheduled", severity="problem"))
            else:
                likely = "device_plugin_not_reporting"
                f.append(
                    Finding(
                        key="kube.finding.plugin_not_reporting",
                        params={"nodes": ", ".join(zero[:5])},
                        severity="problem",
                    )
                )
        elif zero:
            f.append(
                Finding(
                    key="kube.finding.some_gpu_nodes_zero",
                    params={"nodes": ", ".join(zero[:5])},
                    severity="warn",
                )
            )
        if st.taint_blocked and likely in (
            "missing_toleration",
            "unknown",
            "device_plugin_not_scheduled",
            "device_plugin_not_reporting",
        ):
            taints = st.taint_blocked
            f.append(
                Finding(
                    key="kube.finding.toleration_fix",
                    params={"taints": ", ".join(taints), "yaml": _toleration_yaml(taints[0])},
                    severity="problem",
                )
            )
            if out.device_plugin_desired == 0:
                f.append(Finding(key="kube.finding.plugin_toleration_too", severity="problem"))
        not_ready_plugins = st.plugin_bad
        if not_ready_plugins and out.device_plugin_desired:
            f.append(
                Finding(
                    key="kube.finding.plugin_pods_unhealthy",
                    params={"nodes": ", ".join(not_ready_plugins[:5])},
                    severity="warn",
                )
            )
        need = out.requests.get(out.gpu_resource, 0.0)
        max_alloc = st.max_alloc
        if need and 0 < max_alloc < need:
            likely = "request_exceeds_node_capacity"
            f.append(
                Finding(
                    key="kube.finding.request_too_large",
                    params={"need": f"{need:g}", "max": f"{max_alloc:g}"},
                    severity="problem",
                )
            )
        if likely in ("capacity_or_priority", "device_plugin_or_capacity") and max_alloc > 0:
            likely = "capacity_exhausted" if not st.fitting else likely
            total_free = st.total_free
            f.append(
                Finding(
                    key="kube.finding.capacity",
                    params={"need": f"{need:g}", "free": f"{total_free:g}", "nodes": st.gpu_count},
                    severity="warn",
                )
            )
    elif wants_gpu and not st.gpu_count and st.cpu_count:
        f.append(Finding(key="kube.finding.no_gpu_nodes", severity="problem"))
        likely = "no_gpu_nodes"
    if (
        wants_gpu
        and st.cpu_count
        and msg is not None
        and msg.count_of(ReasonClass.INSUFFICIENT_GPU)
    ):
        f.append(
            Finding(
                key="kube.finding.cpu_nodes_noise", params={"count": st.cpu_count}, severity="info"
            )
        )
    return likely


def _quota_priority_verdict(out: PendingAnalysis, st: RowStats, likely: str) -> str:
    """Exceeded quotas, the preemption verdict against the pod's priority, cordons."""
    f = out.findings
    msg = out.message
    for q in out.quotas:
        if q.exceeded:
            f.append(
                Finding(
                    key="kube.finding.quota_exceeded",
                    params={
                        "quota": q.quota,
                        "resource": q.resource,
                        "used": q.used,
                        "hard": q.hard,
                        "need": f"{q.pod_request:g}" if q.pod_request is not None else "?",
                    },
                    severity="problem",
                )
            )
            if likely == "unknown":
                likely = "quota_exceeded"
    if msg is not None and msg.preemption_helpful is True and likely.startswith("device_plugin"):
        f.append(Finding(key="kube.finding.old_scheduler_verdict", severity="info"))
    elif msg is not None and msg.preemption_helpful is True:
        f.append(
            Finding(
                key="kube.finding.priority",
                params={
                    "pc": out.priority_class or "-",
                    "prio": out.priority if out.priority is not None else "?",
                },
                severity="warn",
            )
        )
        if likely == "capacity_exhausted":
            likely = "capacity_or_priority"
    cordoned = st.cordoned
    if cordoned:
        f.append(
            Finding(
                key="kube.finding.cordoned",
                params={"nodes": ", ".join(cordoned[:5])},
                severity="info",
            )
        )
    return likely


def _pending_commands(out: PendingAnalysis, st: RowStats, likely: str) -> list[str]:
    """The handbook's commands, then those of the classes and the verdict found."""
    msg = out.message
    gpu_names = st.gpu_names
    cmds = base_commands(out.pod, out.namespace)
    if msg is not None:
        cmds += _class_commands(msg, out.pod, out.namespace, gpu_names)
    if likely.startswith("device_plugin") or st.plugin_bad:
        cmds.append("kubectl get ds -A -l app.kubernetes.io/name=nvidia-device-plugin")
        bad = st.plugin_bad or gpu_names
        if bad:
            cmds.append(
                f"kubectl get pods -A -o wide --field-selector spec.nodeName={arg(bad[0])} | grep -i device-plugin"
            )
        cmds.append(
            "journalctl -u kubelet --since '1 hour ago' | grep -i -E 'device|plugin|nvidia'  # on the GPU node"
        )
    ns = namespace_flag(out.namespace)
    if out.quotas:
        cmds.append(f"kubectl describe resourcequota{ns}")
    if any(g.kind == "PodGroup" for g in out.gangs) or likely.startswith("gang"):
        cmds.append(f"kubectl get podgroups{ns} -o yaml")
        cmds.append(f"kubectl get pod {arg(out.pod)}{ns} -o jsonpath='{{.spec.schedulerName}}'")
    if any(g.kind == "Workload" for g in out.gangs):
        cmds.append(f"kubectl get workloads{ns}")
    return list(dict.fromkeys(cmds))
