"""Run a playbook's automated checks over fetched data (pure)."""

from __future__ import annotations

from collections.abc import Callable

from cockpit.analysis.playbooks import (
    nccl_checks,
    oom_checks,
    pending_checks,
    rollout_checks,
    ttft_checks,
    util_checks,
)
from cockpit.analysis.playbooks.data import PlaybookData
from cockpit.analysis.playbooks.result import ItemResult
from cockpit.analysis.playbooks.spec import Playbook
from cockpit.incident import ItemStatus

CheckFn = Callable[[PlaybookData], ItemResult]

CHECKS: dict[str, CheckFn] = {
    "oom_phase": oom_checks.oom_phase,
    "oom_budget": oom_checks.oom_budget,
    "oom_allocator": oom_checks.oom_allocator,
    "oom_other_process": oom_checks.oom_other_process,
    "oom_limits": oom_checks.oom_limits,
    "oom_remedy": oom_checks.oom_remedy,
    "nccl_first_rank": nccl_checks.nccl_first_rank,
    "nccl_sequence": nccl_checks.nccl_sequence,
    "nccl_alive_xid": nccl_checks.nccl_alive_xid,
    "nccl_versions_env": nccl_checks.nccl_versions_env,
    "nccl_timeout_raised": nccl_checks.nccl_timeout_raised,
    "util_gaps": util_checks.util_gaps,
    "util_sm": util_checks.util_sm,
    "util_collectives": util_checks.util_collectives,
    "util_idle": util_checks.util_idle,
    "ttft_queue": ttft_checks.ttft_queue,
    "ttft_prefill": ttft_checks.ttft_prefill,
    "ttft_scaling": ttft_checks.ttft_scaling,
    "ttft_slow_replica": ttft_checks.ttft_slow_replica,
    "ttft_tpot_rule": ttft_checks.ttft_tpot_rule,
    "ttft_before_gpu": ttft_checks.ttft_before_gpu,
    "pend_allocatable": pending_checks.pend_allocatable,
    "pend_requests": pending_checks.pend_requests,
    "pend_placement": pending_checks.pend_placement,
    "pend_device_plugin": pending_checks.pend_device_plugin,
    "roll_diff": rollout_checks.roll_diff,
    "roll_readiness": rollout_checks.roll_readiness,
    "roll_mixed_versions": rollout_checks.roll_mixed_versions,
    "roll_finish_reason": rollout_checks.roll_finish_reason,
}


def run_playbook(playbook: Playbook, data: PlaybookData) -> list[ItemResult]:
    """One result per item, in the checklist's order.

    ``ask`` items come back ``open`` (the user answers them); a check that raises is
    reported as ``open`` with the ``playbook.finding.check_failed`` finding instead of
    breaking the other items.
    """
    out: list[ItemResult] = []
    for item in playbook.items:
        fn = CHECKS.get(item.check) if item.mode == "auto" else None
        if fn is None:
            out.append(
                ItemResult(item=item.id, status=ItemStatus.OPEN, finding_key="playbook.finding.ask")
            )
            continue
        try:
            res = fn(data)
        except Exception as exc:
            res = ItemResult(
                item=item.id,
                status=ItemStatus.OPEN,
                finding_key="playbook.finding.check_failed",
                finding_args={"error": type(exc).__name__},
            )
        out.append(res.model_copy(update={"item": item.id}))
    return out
