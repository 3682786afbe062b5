"""Per-node fit of a Pending pod against cluster state: taints and tolerations, node
selectors, GPU allocatable and requests, the node table (pure, no I/O)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from cockpit.analysis.scheduling.message import (
    GPU,
    GPU_SHARED,
    MIG_PREFIX,
    ReasonClass,
    _resource_class,
)
from cockpit.models.kube import (
    DaemonSetLite,
    NodeLite,
    NodeRequests,
    PodLite,
    effective_requests,
    parse_quantity,
)


# -- per-node analysis with cluster state -----------------------------------------------------------
def tolerates(tolerations: list[Any], taint: Any) -> bool:
    """Whether any toleration tolerates the taint (Kubernetes docs "Taints and Tolerations":
    an empty key with ``Exists`` tolerates everything; an empty effect matches all effects)."""
    for tol in tolerations:
        if tol.effect and tol.effect != taint.effect:
            continue
        if tol.operator == "Exists":
            if not tol.key or tol.key == taint.key:
                return True
        elif tol.key == taint.key and (tol.value or "") == (taint.value or ""):
            return True
    return False


def _expr_match(labels: dict[str, str], expr: dict[str, Any]) -> bool:
    key = expr.get("key", "")
    op = expr.get("operator", "In")
    values = [str(v) for v in expr.get("values") or []]
    has = key in labels
    val = labels.get(key, "")
    if op == "In":
        return has and val in values
    if op == "NotIn":
        return not has or val not in values
    if op == "Exists":
        return has
    if op == "DoesNotExist":
        return not has
    if op in ("Gt", "Lt") and has and values:
        try:
            a, b = int(val), int(values[0])
        except ValueError:
            return False
        return a > b if op == "Gt" else a < b
    return False


def selector_match(pod: PodLite, node: NodeLite) -> bool:
    """``nodeSelector`` and required node affinity (terms ORed, expressions ANDed)."""
    labels = node.meta.labels
    for k, v in pod.spec.node_selector.items():
        if labels.get(k) != v:
            return False
    req = (pod.spec.affinity.get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    terms = req.get("nodeSelectorTerms") or []
    if not terms:
        return True
    for term in terms:
        exprs = term.get("matchExpressions") or []
        if all(_expr_match(labels, e) for e in exprs):
            return True
    return False


class NodeRow(BaseModel):
    """One row of the per-node table (numbers are ``None`` when unknown, never 0).

    GPU figures are in devices of the pod's GPU resource (``nvidia.com/gpu`` unless the
    pod asks for a shared or MIG resource); CPU in cores; memory in GiB.
    """

    name: str
    gpu_node: bool
    gpu_resource: str = GPU
    gpu_capacity: float | None = None
    gpu_allocatable: float | None = None
    gpu_requested: float | None = None
    gpu_free: float | None = None
    gpu_unhealthy: float | None = None
    cpu_allocatable: float | None = None
    cpu_requested: float | None = None
    mem_allocatable_gib: float | None = None
    mem_requested_gib: float | None = None
    taints_blocking: list[str] = Field(default_factory=list)
    taints_tolerated: list[str] = Field(default_factory=list)
    selector_match: bool = True
    cordoned: bool = False
    ready: bool | None = None
    device_plugin: str = "n/a"  # ready | not_ready | missing | n/a
    blockers: list[str] = Field(default_factory=list)
    fits: bool = False


def _gpu_resource(req: dict[str, float]) -> str:
    for k in req:
        if k.startswith(MIG_PREFIX) or k == GPU_SHARED:
            return k
    return GPU if GPU in req else ""


def _is_device_plugin(ds: DaemonSetLite) -> bool:
    text = " ".join([ds.meta.name, *ds.meta.labels.values(), *ds.selector.values()]).lower()
    return ("device-plugin" in text and "nvidia" in text) or "nvidia-device-plugin" in text


def _shape_key(pod: PodLite) -> str:
    s = pod.spec
    return json.dumps(
        [
            effective_requests(s),
            [t.model_dump() for t in s.tolerations],
            s.node_selector,
            s.affinity.get("nodeAffinity"),
        ],
        sort_keys=True,
        default=str,
    )


def _keep_rows(rows: list[_Row], max_rows: int, wants_gpu: bool) -> list[NodeRow]:
    return [r.model() for r in _pick_rows(rows, max_rows, wants_gpu)]


def _pick_rows(rows: list[_Row], max_rows: int, wants_gpu: bool) -> list[_Row]:
    if len(rows) <= max_rows:
        return rows
    gpu = [r for r in rows if r.gpu_node]
    cpu = [r for r in rows if not r.gpu_node]
    # Problem nodes are always kept: unhealthy GPUs, plugin not ready, NotReady, cordoned.
    flagged = [
        r
        for r in gpu
        if r.gpu_unhealthy
        or r.device_plugin in ("not_ready", "missing")
        or r.ready is False
        or r.cordoned
    ]
    cpu_quota = 20 if wants_gpu else max_rows // 2
    keep_gpu = max_rows - min(len(cpu), cpu_quota)
    chosen = {id(r) for r in flagged[:keep_gpu]}
    for r in gpu:
        if len(chosen) >= keep_gpu:
            break
        chosen.add(id(r))
    kept = [r for r in gpu if id(r) in chosen] + cpu[: max_rows - len(chosen)]
    return kept


_GPU_RE = re.compile(r"gpu|nvidia|accelerator|pci-10de", re.IGNORECASE)


def looks_like_gpu_node(node: NodeLite) -> bool:
    """A node meant for GPUs even when it advertises none: GPU feature-discovery/NFD labels,
    or a label or taint naming a GPU (``gpu``, ``nvidia.com/gpu=true:NoSchedule``,
    ``workload=gpu``, ``cloud.google.com/gke-accelerator``). Such a node with 0 allocatable
    GPUs is the silent device-plugin case (pend-03, pend-04)."""
    labels = node.meta.labels
    text = " ".join([*labels, *labels.values(), *(t.key for t in node.taints)])
    return _GPU_RE.search(text) is not None


def _node_row(
    pod: PodLite,
    node: NodeLite,
    gres: str,
    requests: NodeRequests | None,
    pod_req: dict[str, float],
    plugin_state: dict[str, str],
    plugin_known: bool,
) -> _Row:
    name = node.meta.name
    cap_keys = node.capacity
    has_gpu_res = (
        GPU in cap_keys
        or GPU_SHARED in cap_keys
        or any(k.startswith(MIG_PREFIX) for k in cap_keys if k[0] == "n")
    )
    gpu_node = has_gpu_res or looks_like_gpu_node(node)
    d: dict[str, Any] = {"name": name, "gpu_node": gpu_node, "gpu_resource": gres}
    used = requests.by_node.get(name, {}) if requests is not None else {}
    if gpu_node:
        cap = parse_quantity(node.capacity.get(gres))
        alloc = parse_quantity(node.allocatable.get(gres))
        # Missing on a GPU node means "the device plugin advertises none": 0 devices.
        d["gpu_capacity"] = cap if cap is not None else 0.0
        d["gpu_allocatable"] = alloc if alloc is not None else 0.0
        if cap is not None and alloc is not None and cap > alloc:
            d["gpu_unhealthy"] = cap - alloc
        d["device_plugin"] = plugin_state.get(name, "missing") if plugin_known else "n/a"
        if requests is not None:
            d["gpu_requested"] = used.get(gres, 0.0)
            d["gpu_free"] = d["gpu_allocatable"] - d["gpu_requested"]
    d["cpu_allocatable"] = parse_quantity(node.allocatable.get("cpu"))
    mem = parse_quantity(node.allocatable.get("memory"))
    d["mem_allocatable_gib"] = mem / 2**30 if mem is not None else None
    if requests is not None:
        d["cpu_requested"] = used.get("cpu", 0.0)
        d["mem_requested_gib"] = used.get("memory", 0.0) / 2**30
    blocking: list[str] = []
    tolerated: list[str] = []
    for taint in node.taints:
        if taint.effect not in ("NoSchedule", "NoExecute"):
            continue
        (tolerated if tolerates(pod.spec.tolerations, taint) else blocking).append(taint.text())
    match = selector_match(pod, node)
    # Blockers, named by the scheduler's reason classes.
    blockers: list[str] = []
    if node.unschedulable:
        blockers.append(ReasonClass.UNSCHEDULABLE.value)
    if blocking and not (
        node.unschedulable
        and all(t.startswith("node.kubernetes.io/unschedulable") for t in blocking)
    ):
        blockers.append(ReasonClass.TAINT.value)
    if not match:
        blockers.append(ReasonClass.NODE_AFFINITY.value)
    for res, amount in pod_req.items():
        if amount <= 0:
            continue
        alloc_r = parse_quantity(node.allocatable.get(res))
        if alloc_r is None:
            if res == gres or res.startswith("nvidia.com/") or "/" in res:
                blockers.append(_resource_class(res).value)
            continue
        if used.get(res, 0.0) + amount > alloc_r + 1e-9:
            blockers.append(_resource_class(res).value)
    ready = node.ready
    if ready is False:
        blockers.append("not_ready")
    blockers = list(dict.fromkeys(blockers))
    d.update(
        taints_blocking=blocking,
        taints_tolerated=tolerated,
        selector_match=match,
        cordoned=node.unschedulable,
        ready=ready,
        blockers=blockers,
        fits=not blockers and requests is not None,
    )
    return _Row(**d)


@dataclass(slots=True)
class _Row:
    """A :class:`NodeRow` while the table is built: every node gets one, and only the
    rows kept (``max_rows``) become pydantic models (5,000 model builds cost ~1 s)."""

    name: str
    gpu_node: bool
    gpu_resource: str = GPU
    gpu_capacity: float | None = None
    gpu_allocatable: float | None = None
    gpu_requested: float | None = None
    gpu_free: float | None = None
    gpu_unhealthy: float | None = None
    cpu_allocatable: float | None = None
    cpu_requested: float | None = None
    mem_allocatable_gib: float | None = None
    mem_requested_gib: float | None = None
    taints_blocking: list[str] = field(default_factory=list)
    taints_tolerated: list[str] = field(default_factory=list)
    selector_match: bool = True
    cordoned: bool = False
    ready: bool | None = None
    device_plugin: str = "n/a"
    blockers: list[str] = field(default_factory=list)
    fits: bool = False

    def model(self) -> NodeRow:
        """As the public :class:`NodeRow` (values already typed: no re-validation)."""
        return NodeRow.model_construct(**{f: getattr(self, f) for f in self.__slots__})


class RowStats(BaseModel):
    """Aggregates over every node row of one pod shape (computed once per shape)."""

    gpu_names: list[str] = Field(default_factory=list)
    """The first GPU nodes' names (for per-node commands)."""
    gpu_count: int = 0
    cpu_count: int = 0
    zero: list[str] = Field(default_factory=list)
    unhealthy: list[str] = Field(default_factory=list)
    taint_blocked: list[str] = Field(default_factory=list)
    plugin_bad: list[str] = Field(default_factory=list)
    max_alloc: float = 0.0
    total_free: float = 0.0
    fitting: int = 0
    tainted_fit: list[str] = Field(default_factory=list)
    """GPU nodes with enough free GPUs whose only blocker is a taint the pod does not
    tolerate (Kubernetes docs, "Taints and Tolerations")."""
    cordoned: list[str] = Field(default_factory=list)


def row_stats(rows: list[_Row], need: float) -> RowStats:
    """Aggregate the node rows once (GPU nodes, zero/unhealthy allocatable, free GPUs…)."""
    gpu = [r for r in rows if r.gpu_node]
    return RowStats.model_construct(
        gpu_names=[r.name for r in gpu[:5]],
        gpu_count=len(gpu),
        cpu_count=len(rows) - len(gpu),
        zero=[r.name for r in gpu if not r.gpu_allocatable],
        unhealthy=[
            f"{r.name} ({r.gpu_allocatable:g}/{r.gpu_capacity:g})" for r in gpu if r.gpu_unhealthy
        ],
        taint_blocked=sorted(
            {t for r in gpu if ReasonClass.TAINT.value in r.blockers for t in r.taints_blocking}
        ),
        plugin_bad=[r.name for r in gpu if r.device_plugin in ("not_ready", "missing")],
        max_alloc=max((r.gpu_allocatable or 0.0) for r in gpu) if gpu else 0.0,
        total_free=sum(
            max(0.0, r.gpu_free or 0.0) for r in gpu if r.gpu_free is not None and not r.cordoned
        ),
        fitting=sum(
            1 for r in gpu if r.gpu_free is not None and r.gpu_free >= need and not r.blockers
        ),
        tainted_fit=[
            r.name
            for r in gpu
            if r.gpu_free is not None
            and r.gpu_free >= need
            and not r.cordoned
            and r.blockers == [ReasonClass.TAINT.value]
        ],
        cordoned=[r.name for r in rows if r.cordoned],
    )


def _toleration_yaml(taint_text: str) -> str:
    key_value, _, effect = taint_text.partition(":")
    key, _, _value = key_value.partition("=")
    return f"{{key: {key}, operator: Exists, effect: {effect or 'NoSchedule'}}}"
