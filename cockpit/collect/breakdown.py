"""Steps D and E: per-pod / per-GPU values of signals, and the inventory that places them.

Every query is an instant query at the window's end with the rate window of the screen,
grouped by the labels that identify pods, nodes and GPUs (``Hostname`` and ``hostname``
both, for dcgm-exporter before and after PR #655).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

from pydantic import BaseModel, Field

from cockpit.analysis.blast_radius import Breakdown, EntityValue
from cockpit.analysis.discovery import ip_of_instance
from cockpit.analysis.golden import STAT_QUANTILES, BucketEdge
from cockpit.analysis.inventory import Inventory, build_inventory, first_label
from cockpit.analysis.profiles import Detection, render, render_buckets
from cockpit.collect.base import Window, detection_for, runner_for, scope_for
from cockpit.collect.runner import QueryResult, QuerySpec
from cockpit.collect.signals import edged_quantiles, stats_for
from cockpit.models import InstantVector
from cockpit.models.signals import SIGNALS

if TYPE_CHECKING:
    from cockpit.context import AppContext

GATEWAY_BY = ("controller_namespace", "controller_pod", "ingress", "service", "host")
"""ingress-nginx's labels that name the gateway in front of the service: the controller
pod and its namespace, the Ingress, the backend Service and the host (ingress-nginx
docs/user-guide/monitoring.md; other gateways carry none of them and stay unnamed)."""
POD_BY = ("namespace", "pod", "exported_pod", "instance", "node")
GPU_BY = (
    "Hostname",
    "hostname",
    "UUID",
    "uuid",
    "gpu_uuid",
    "gpu",
    "pod",
    "namespace",
    "exported_pod",
    "exported_namespace",
)
"""Labels a hardware signal is broken down by: the GPU, its node and the pod holding it
(``exported_pod`` when the dcgm-exporter chart scrapes with ``honorLabels: false``)."""

COHORT_SIGNALS = (
    "serving.e2e_latency",
    "serving.ttft",
    "serving.tpot",
    "serving.queue_time",
    "serving.qps",
    "serving.gen_tps",
    "serving.error_ratio",
    "serving.queue",
    "serving.running",
    "serving.batch_size",
    "runtime.kv_cache",
    "runtime.preemptions",
    "runtime.fragmentation",
    "hardware.gpu_util",
    "hardware.sm_active",
    "hardware.fb_used",
    "hardware.fb_reserved",
    "hardware.power",
    "hardware.temp",
    "hardware.sm_clock",
    "hardware.throttle",
    "hardware.thermal_violation",
    "hardware.xid",
    "infra.restarts",
)
"""Signals compared per entity in E: every golden signal and DCGM field we know."""


class BreakdownSet(BaseModel):
    """Breakdowns of several signals plus the inventory (placement and revisions)."""

    breakdowns: list[Breakdown] = Field(default_factory=list)
    inventory: Inventory = Field(default_factory=Inventory)
    inventory_note: str = ""


class PlannedBreakdown(NamedTuple):
    """One summary key's per-entity query.

    Attributes:
        key: The summary key (``signal:stat``).
        signal: The signal id.
        unit: The signal's unit.
        spec: What is sent. A histogram's stats share one query of its bucket rates per
            entity (``sum by (le, …)``), sent once; each stat's quantile is computed from
            it as ``histogram_quantile`` does (:func:`~cockpit.collect.signals.edged_quantiles`).
        shown: The PromQL that gives this key's values directly (a histogram's
            ``histogram_quantile(q, …)``), as the breakdown names its query.
        quantile: A histogram stat's quantile and the signal's scale; ``None`` otherwise.
    """

    key: str
    signal: str
    unit: str
    spec: QuerySpec
    shown: str
    quantile: tuple[float, float] | None


def breakdown_specs(
    det: Detection, scope: dict[str, str], window: Window, keys: Iterable[str]
) -> list[PlannedBreakdown]:
    """The per-entity query of each summary key (``signal:stat``) that is available."""
    out = []
    for key in keys:
        sid, _, stat = key.partition(":")
        r = det.get(sid)
        if r is None or not r.available or sid not in SIGNALS:
            continue
        if SIGNALS[sid].layer == "access":
            continue  # the gateway is shared: it has no per-replica breakdown
        by = GPU_BY if SIGNALS[sid].layer == "hardware" else POD_BY
        sel = det.selector_for(r, scope)
        q = STAT_QUANTILES.get(stat) if r.spec.kind == "histogram" else None
        shown = render(r, sel=sel, window=window.rate_window, by=by, quantile=q)
        sent = shown if q is None else render_buckets(r, sel, window.rate_window, by)
        out.append(
            PlannedBreakdown(
                key,
                sid,
                r.spec.unit,
                QuerySpec(key=f"bd:{key}", query=sent, kind="instant", end=window.end),
                shown,
                None if q is None else (q, r.spec.scale),
            )
        )
    return out


def inventory_specs(scope: dict[str, str], window: Window) -> list[QuerySpec]:
    """kube-state-metrics joins (metrics_kb.md §7.0)."""
    ns = scope.get("namespace", "")
    sel = f'namespace="{ns}"' if ns else ""
    qs = {
        "inv:pod_info": f"kube_pod_info{{{sel}}}",
        "inv:pod_owner": f'kube_pod_owner{{{sel + "," if sel else ""}owner_kind="ReplicaSet"}}',
        "inv:rs_owner": f'kube_replicaset_owner{{{sel + "," if sel else ""}owner_kind="Deployment"}}',
        "inv:node_labels": "kube_node_labels",
    }
    return [QuerySpec(key=k, query=q, kind="instant", end=window.end) for k, q in qs.items()]


def to_breakdown(
    key: str,
    signal: str,
    unit: str,
    res: QueryResult,
    inv: Inventory,
    quantile: tuple[float, float] | None = None,
    shown: str = "",
) -> Breakdown:
    """Per-entity values from one instant result, placed with the inventory.

    ``quantile`` (``(q, scale)``) reads ``res`` as per-entity bucket rates and takes their
    ``q`` quantile ``× scale``; ``shown`` is the query the breakdown names (default: the
    one sent).
    """
    b = Breakdown(key=key, signal=signal, unit=unit, query=shown or res.spec.query)
    if res.failure is not None:
        b.failure = f"{res.failure.kind.value}: {res.failure.message}"
        return b
    hardware = SIGNALS[signal].layer == "hardware"
    vector: list[tuple[InstantVector, BucketEdge | None]]
    if quantile is None:
        vector = [(v, None) for v in res.vector]
    else:
        vector = edged_quantiles(res.vector, *quantile)
    for v, edge in vector:
        if v.v != v.v:  # NaN: no data for that entity, never zero
            continue
        pod = first_label(v.labels, "pod")
        node = first_label(v.labels, "node")
        gpu = first_label(v.labels, "gpu")
        if hardware and gpu:
            if not gpu.startswith("GPU-") and v.labels.get("gpu") == gpu and node:
                gpu = f"{node}/gpu{gpu}"  # a bare index is only unique per node
            inv.note_gpu(gpu, node, pod)
            info = inv.pod(pod) if pod else None
            b.values.append(
                EntityValue(
                    entity=gpu,
                    kind="gpu",
                    pod=pod,
                    node=node,
                    gpu=gpu,
                    revision=info.revision if info else "",
                    deployment=info.deployment if info else "",
                    value=v.v,
                    edge=edge,
                )
            )
            continue
        instance = first_label(v.labels, "instance")
        entity = pod or inv.ip_pod.get(ip_of_instance(instance), "") or instance
        if not entity:
            continue
        info = inv.pod(entity)
        b.values.append(
            EntityValue(
                entity=entity,
                kind="pod",
                pod=entity,
                node=node or info.node,
                revision=info.revision,
                deployment=info.deployment,
                value=v.v,
                edge=edge,
            )
        )
    return b


async def collect_breakdowns(
    ctx: AppContext, window: Window, keys: Iterable[str] | None = None
) -> BreakdownSet:
    """Per-entity values of ``keys`` (default: :data:`COHORT_SIGNALS` at their main stat)."""
    det = await detection_for(ctx, window.end)
    if keys is None:
        keys = [
            f"{sid}:{'p99' if 'p99' in stats_for(det, sid) else stats_for(det, sid)[0]}"
            for sid in COHORT_SIGNALS
        ]
    scope = await scope_for(ctx)
    planned = breakdown_specs(det, scope, window, keys)
    inv_specs = inventory_specs(scope, window)
    results = await runner_for(ctx).run([p.spec for p in planned] + inv_specs)
    vec = {k: (r.vector if r.ok else []) for k, r in results.items() if k.startswith("inv:")}
    inv = build_inventory(
        vec["inv:pod_info"], vec["inv:pod_owner"], vec["inv:rs_owner"], vec["inv:node_labels"]
    )
    note = (
        ""
        if inv.pods
        else "no kube-state-metrics placement: node and revision come from series labels only"
    )
    out = BreakdownSet(inventory=inv, inventory_note=note)
    # GPU series first, so that pods learn their node from DCGM when kube-state-metrics lacks it.
    ordered = sorted(planned, key=lambda p: SIGNALS[p.signal].layer != "hardware")
    bds = {
        p.key: to_breakdown(p.key, p.signal, p.unit, results[p.spec.key], inv, p.quantile, p.shown)
        for p in ordered
    }
    out.breakdowns = [bds[p.key] for p in planned]
    return out


def gateway_spec(
    det: Detection, scope: dict[str, str], window: Window, sid: str
) -> QuerySpec | None:
    """The instant query of access-layer signal ``sid`` at the window's end split by the
    gateway's labels (:data:`GATEWAY_BY`); ``None`` when the signal is not detected."""
    r = det.get(sid)
    if r is None or not r.available:
        return None
    q = render(r, sel=det.selector_for(r, scope), window=window.rate_window, by=GATEWAY_BY)
    return QuerySpec(key=f"gw:{sid}", query=q, kind="instant", end=window.end)


async def gateway_labels(ctx: AppContext, window: Window, signals: Iterable[str]) -> dict[str, str]:
    """The labels (:data:`GATEWAY_BY`) of the gateway with the highest value of the first
    of ``signals`` (access-layer signal ids, e.g. the 5xx ratio) at the window's end that
    has them; ``{}`` when none is detected, its query fails or its series carry no such
    label."""
    det = await detection_for(ctx, window.end)
    scope = await scope_for(ctx)
    for sid in signals:
        spec = gateway_spec(det, scope, window, sid)
        if spec is None:
            continue
        res = (await runner_for(ctx).run([spec]))[spec.key]
        rows = [v for v in (res.vector if res.ok else []) if v.v == v.v]
        named = [v for v in rows if any(v.labels.get(k) for k in GATEWAY_BY)]
        if named:
            top = max(named, key=lambda v: v.v)
            return {k: top.labels[k] for k in GATEWAY_BY if top.labels.get(k)}
    return {}
