"""Why is a pod Pending? FailedScheduling parsing and the per-node table (pure, no I/O).

The message format is kube-scheduler's ``FitError.Error()`` (kubernetes
``pkg/scheduler/framework``, 1.26+; older wordings too), summarised in
``shared/cases/formats.md`` §A4::

    0/{N} nodes are available: [{PreFilterMsg}.] [{count reason}, ...]. [preemption: 0/{N}
    nodes are available: {count verdict}, ....]

Rules used below, with their sources:

- The newest FailedScheduling event describes the current state; the ``PodScheduled``
  condition message can be older (it is only rewritten on a status update).
- "Preemption is not helpful for scheduling" = unresolvable by evicting pods (taint,
  affinity, request larger than allocatable): fix the spec. "No preemption victims found"
  = resolvable in principle, no lower-priority victims: capacity or priority
  (formats.md §A4, §C.5; Kubernetes docs "Pod Priority and Preemption").
- ``Insufficient nvidia.com/gpu`` on a GPU node whose ``allocatable`` is 0 or missing is
  a device plugin that is not reporting, not exhausted capacity (NVIDIA/k8s-device-plugin
  #348, #430; cases pend-01, pend-04). ``capacity > allocatable`` is GPUs the device
  plugin marked unhealthy (they stay so until the plugin restarts; case xid-01).
- Taints with effect ``NoSchedule``/``NoExecute`` block scheduling unless tolerated;
  ``PreferNoSchedule`` does not (Kubernetes docs "Taints and Tolerations").
- "No preemption victims found for incoming pod" is what ``SelectVictimsOnNode``
  (kubernetes ``pkg/scheduler/framework/plugins/defaultpreemption``) returns, as
  ``UnschedulableAndUnresolvable``, when the node holds no pod of lower priority than the
  incoming one; it is returned before the fit is re-checked, so it says nothing about the
  node's GPUs, and no node is nominated: preemption is not possible either way.
- Volcano writes ``{X}/{Y} tasks in gang unschedulable: ...`` with ``Y = len(job.Tasks)``,
  the member pods the scheduler knows, and ``X = MinAvailable - schedulable`` on the
  PodGroup condition (volcano ``pkg/scheduler/plugins/gang/gang.go``; the pod event of
  ``cache.RecordJobStatusEvent`` puts the pending count in ``X``). ``Y = 0``: Volcano sees
  no member pod — the pods' ``schedulerName`` is not ``volcano`` or their
  ``scheduling.k8s.io/group-name`` annotation names another PodGroup (Volcano docs,
  "PodGroup"; case pend-06).
- The next steps and commands are the handbook's (seed 000, 场景五).
"""

from __future__ import annotations

from cockpit.analysis.scheduling.message import (
    GPU,
    GPU_SHARED,
    MIG_PREFIX,
    Preemption,
    PreemptionVerdict,
    Reason,
    ReasonClass,
    SchedulingMessage,
    classify_reason,
    parse_failed_scheduling,
)
from cockpit.analysis.scheduling.nodes import (
    NodeRow,
    RowStats,
    looks_like_gpu_node,
    row_stats,
    selector_match,
    tolerates,
)
from cockpit.analysis.scheduling.paste import (
    EVENT_ROW,
    TYPO_DISTANCE,
    VOLCANO,
    DaemonSetRow,
    Finding,
    GangMessage,
    PasteEvidence,
    SchedulingExplanation,
    base_commands,
    event_rows,
    explain_failed_scheduling,
    paste_evidence,
    reason_findings,
)
from cockpit.analysis.scheduling.pending import (
    MAX_ROWS,
    PendingAnalysis,
    QuotaRow,
    analyze_pending,
    newest_failed_scheduling,
)

__all__ = [
    "EVENT_ROW",
    "GPU",
    "GPU_SHARED",
    "MAX_ROWS",
    "MIG_PREFIX",
    "TYPO_DISTANCE",
    "VOLCANO",
    "DaemonSetRow",
    "Finding",
    "GangMessage",
    "NodeRow",
    "PasteEvidence",
    "PendingAnalysis",
    "Preemption",
    "PreemptionVerdict",
    "QuotaRow",
    "Reason",
    "ReasonClass",
    "RowStats",
    "SchedulingExplanation",
    "SchedulingMessage",
    "analyze_pending",
    "base_commands",
    "classify_reason",
    "event_rows",
    "explain_failed_scheduling",
    "looks_like_gpu_node",
    "newest_failed_scheduling",
    "parse_failed_scheduling",
    "paste_evidence",
    "reason_findings",
    "row_stats",
    "selector_match",
    "tolerates",
]
