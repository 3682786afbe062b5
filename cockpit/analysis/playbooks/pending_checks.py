"""Checks of the Pod Pending playbook (seed 000, 场景五)."""

from __future__ import annotations

from cockpit.analysis.playbooks import result as res
from cockpit.analysis.playbooks.common import GPU_RESOURCE
from cockpit.analysis.playbooks.data import PlaybookData
from cockpit.analysis.playbooks.result import CheckEvidence, ItemResult, L
from cockpit.analysis.scheduling import explain_failed_scheduling
from cockpit.incident import ItemStatus
from cockpit.models.kube import NodeLite, parse_quantity

# Labels that mark a GPU node even when the device plugin advertises nothing
# (GPU feature discovery / NFD: nvidia.com/gpu.present, feature.node.kubernetes.io/pci-10de.present).
_GPU_LABELS = (
    "nvidia.com/gpu.present",
    "feature.node.kubernetes.io/pci-10de.present",
    "nvidia.com/gpu.product",
)


PLACEMENT_CAUSES = (
    "missing_toleration",
    "node_selector_mismatch",
    "pod_affinity",
    "nodes_cordoned",
)


def _gpu_alloc(node: NodeLite) -> float | None:
    raw = node.allocatable.get(GPU_RESOURCE)
    return parse_quantity(raw) if raw is not None else None


def _is_gpu_node(node: NodeLite) -> bool:
    return GPU_RESOURCE in node.capacity or any(k in node.meta.labels for k in _GPU_LABELS)


def _pending(data: PlaybookData) -> list[str]:
    return [p.meta.name for p in data.pods if p.phase == "Pending"]


def pend_allocatable(data: PlaybookData) -> ItemResult:
    """GPU allocatable per GPU node (0 or missing → the device plugin is not reporting)."""
    if not data.has("kube"):
        return res.not_available("kube")
    gpu_nodes = [n for n in data.nodes if _is_gpu_node(n)]
    ev = [
        CheckEvidence(
            label=n.meta.name,
            value=f"allocatable {n.allocatable.get(GPU_RESOURCE, '<none>')} / capacity {n.capacity.get(GPU_RESOURCE, '<none>')}",
            source="kube",
        )
        for n in gpu_nodes[:20]
    ]
    if not gpu_nodes:
        return res.problem("playbook.finding.pend.no_gpu_nodes", ev)
    zero = [n.meta.name for n in gpu_nodes if not _gpu_alloc(n)]
    if zero:
        return res.problem("playbook.finding.pend.alloc_zero", ev, nodes=", ".join(zero))
    return res.ok("playbook.finding.pend.alloc_ok", ev, n=len(gpu_nodes))


def pend_requests(data: PlaybookData) -> ItemResult:
    """The Pending pods' GPU requests vs the largest node's allocatable."""
    if not data.has("kube"):
        return res.not_available("kube")
    pend = [p for p in data.pods if p.phase == "Pending"]
    if not pend:
        return res.result(ItemStatus.NA, "playbook.finding.pend.none_pending")
    biggest = max((_gpu_alloc(n) or 0.0 for n in data.nodes), default=0.0)
    ev = []
    too_big = []
    for p in pend:
        req = p.requests().get(GPU_RESOURCE, 0.0)
        ev.append(
            CheckEvidence(**L("gpu_request", pod=p.meta.name), value=f"{req:g}", source="kube")
        )
        if req > biggest:
            too_big.append(p.meta.name)
    ev.append(CheckEvidence(**L("largest_allocatable"), value=f"{biggest:g}", source="kube"))
    if too_big:
        return res.problem(
            "playbook.finding.pend.request_too_big", ev, pods=", ".join(too_big), max=f"{biggest:g}"
        )
    return res.ok("playbook.finding.pend.request_fits", ev, max=f"{biggest:g}")


def pend_placement(data: PlaybookData) -> ItemResult:
    """Affinity / taints from the FailedScheduling events (the scheduler's own words)."""
    if not data.has("kube"):
        return res.not_available("kube")
    msgs = [e for e in data.events if e.reason == "FailedScheduling"]
    if not msgs:
        return res.result(
            ItemStatus.OPEN if _pending(data) else ItemStatus.NA, "playbook.finding.pend.no_events"
        )
    latest = max(msgs, key=lambda e: (e.last is not None, e.last))
    exp = explain_failed_scheduling(latest.message)
    ev = [
        CheckEvidence(
            label=f"FailedScheduling {latest.name}", value=latest.message[:300], source="kube"
        )
    ]
    # The scheduler's verdict, not the raw histogram: "didn't match affinity" on CPU nodes
    # is noise for a GPU pod (formats.md §C5).
    if exp.likely in PLACEMENT_CAUSES:
        return res.problem("playbook.finding.pend.placement", ev, likely=exp.likely)
    return res.ok("playbook.finding.pend.placement_ok", ev, likely=exp.likely)


def pend_device_plugin(data: PlaybookData) -> ItemResult:
    """Device-plugin DaemonSet desired/ready and GPU nodes without allocatable."""
    if not data.has("kube"):
        return res.not_available("kube")
    ev = [
        CheckEvidence(label=f"DaemonSet {k}", value=f"desired {d} ready {r}", source="kube")
        for k, (d, r) in sorted(data.daemonsets.items())
    ]
    gpu_nodes = [n for n in data.nodes if _is_gpu_node(n)]
    zero = [n.meta.name for n in gpu_nodes if not _gpu_alloc(n)]
    broken = [k for k, (d, r) in data.daemonsets.items() if d == 0 or r < d]
    if zero or broken or (gpu_nodes and not data.daemonsets):
        return res.problem(
            "playbook.finding.pend.plugin",
            ev,
            nodes=", ".join(zero) or "-",
            ds=", ".join(broken) or ("<none found>" if not data.daemonsets else "-"),
        )
    return res.ok("playbook.finding.pend.plugin_ok", ev)
