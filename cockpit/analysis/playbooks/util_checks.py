"""Checks of the low GPU utilization playbook (seed 000, 场景三)."""

from __future__ import annotations

from cockpit.analysis.playbooks import result as res
from cockpit.analysis.playbooks.common import engine_args_of
from cockpit.analysis.playbooks.data import PlaybookData
from cockpit.analysis.playbooks.result import CheckEvidence, ItemResult, L
from cockpit.analysis.utilization import MIN_WEIGHTS_PER_SHARD_GIB, explain_util_text
from cockpit.incident import ItemStatus

# CFS throttling: share of CPU periods throttled above which the host CPU starves the GPU
# (cAdvisor container_cpu_cfs_throttled_periods_total / container_cpu_cfs_periods_total;
# formats.md §C7, vllm#4806).
THROTTLED_SHARE = 0.25
# GPU "busy" (DCGM_FI_DEV_GPU_UTIL, % of time a kernel ran) while SM active stays low:
# kernels run but use few SMs (DCGM field docs: GPU_UTIL is time-based, SM_ACTIVE is
# the fraction of SMs with a warp resident).
BUSY_UTIL_PCT = 80.0
LOW_SM_ACTIVE = 0.5
# Requests in flight below this per replica is idle capacity, not a problem.
IDLE_REQUESTS = 0.5


def util_gaps(data: PlaybookData) -> ItemResult:
    """Long gaps: CPU throttling (metrics) and dataloader/CPU signals (logs)."""
    ev: list[CheckEvidence] = []
    found = False
    thr = data.signal("cpu_throttled_share")
    if thr is not None and thr.now.value is not None:
        ev.append(
            CheckEvidence(
                **L("cpu_throttled"),
                value=f"{thr.now.value:.2f}",
                source="metrics",
                query=thr.query,
            )
        )
        found = found or thr.now.value >= THROTTLED_SHARE
    report = explain_util_text(data.all_logs()) if data.logs else None
    if report is not None and report.cause in ("dataloader_cpu_starved", "host_cpu_bound"):
        found = True
        ev.append(
            CheckEvidence(
                **L("log"),
                value=report.cause,
                value_key=f"explain.cause.utilization.{report.cause}",
                source="logs",
            )
        )
    if not ev and not data.has("metrics"):
        return res.not_available("metrics")
    if found:
        return res.problem("playbook.finding.util.gaps", ev)
    return res.result(
        ItemStatus.OK if ev else ItemStatus.OPEN,
        "playbook.finding.util.no_gaps" if ev else "playbook.finding.no_signal",
        ev,
    )


def util_sm(data: PlaybookData) -> ItemResult:
    """Busy kernels but low SM activity."""
    util = data.signal("gpu_util")
    sm = data.signal("sm_active")
    if util is None or sm is None:
        return (
            res.not_available("metrics")
            if not data.has("metrics")
            else res.still_open("playbook.finding.no_signal")
        )
    u, s = util.now.value or 0.0, sm.now.value or 0.0
    ev = [
        CheckEvidence(
            label="GPU util", value=f"{u:.0f}", unit="%", source="metrics", query=util.query
        ),
        CheckEvidence(label="SM active", value=f"{s:.2f}", source="metrics", query=sm.query),
    ]
    if u >= BUSY_UTIL_PCT and s < LOW_SM_ACTIVE:
        return res.problem("playbook.finding.util.low_sm", ev, util=f"{u:.0f}", sm=f"{s:.2f}")
    return res.ok("playbook.finding.util.sm_ok", ev, util=f"{u:.0f}", sm=f"{s:.2f}")


def util_collectives(data: PlaybookData) -> ItemResult:
    """Collectives dominate: tensor-parallel size vs model size (pod args)."""
    if not data.has("kube"):
        return res.not_available("kube")
    for pod in data.pods:
        args = engine_args_of(pod)
        tp, params = args.tensor_parallel_size, args.model_params_b
        if tp and tp > 1 and params:
            per_shard = params * 1e9 * 2 / tp / 1024**3
            ev = [
                CheckEvidence(
                    label=f"{pod.meta.name}: TP × model",
                    value=f"TP={tp}, {params:g}B, {per_shard:.1f} GiB/shard",
                    source="kube",
                )
            ]
            if per_shard < MIN_WEIGHTS_PER_SHARD_GIB:
                return res.problem(
                    "playbook.finding.util.over_sharded", ev, tp=tp, params=f"{params:g}"
                )
            return res.ok("playbook.finding.util.tp_ok", ev, tp=tp, params=f"{params:g}")
    return res.still_open("playbook.finding.no_signal")


def util_idle(data: PlaybookData) -> ItemResult:
    """Few requests: normal idle capacity (do not invent work)."""
    running = data.signal("requests_running")
    waiting = data.signal("requests_waiting")
    if running is None:
        return (
            res.not_available("metrics")
            if not data.has("metrics")
            else res.still_open("playbook.finding.no_signal")
        )
    total = (running.now.value or 0.0) + ((waiting.now.value or 0.0) if waiting else 0.0)
    ev = [
        CheckEvidence(
            **L("requests_in_flight"),
            value=f"{total:.1f}",
            source="metrics",
            # both queries behind the sum
            query=running.query + (f" + {waiting.query}" if waiting else ""),
        )
    ]
    if total < IDLE_REQUESTS:
        return res.ok("playbook.finding.util.idle", ev)
    return res.result(ItemStatus.NA, "playbook.finding.util.not_idle", ev, n=f"{total:.1f}")
