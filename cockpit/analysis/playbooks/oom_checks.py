"""Checks of the CUDA OOM playbook (seed 000, 场景一)."""

from __future__ import annotations

from cockpit.analysis.oom import OomReport, explain_oom_text
from cockpit.analysis.playbooks import result as res
from cockpit.analysis.playbooks.common import engine_args_of, restarts
from cockpit.analysis.playbooks.data import PlaybookData
from cockpit.analysis.playbooks.result import CheckEvidence, ItemResult, L
from cockpit.incident import ItemStatus

# Per-token KV bytes = 2 (K and V) × layers × KV heads × head dim × dtype bytes
# (the handbook's budget). Workspace/activations: a fixed share of the card kept
# free by vLLM's --gpu-memory-utilization default of 0.9 (vLLM EngineArgs).
DEFAULT_GPU_MEMORY_UTILIZATION = 0.9


def _oom(data: PlaybookData) -> OomReport | None:
    for pod in sorted(data.logs):
        r = explain_oom_text(data.logs[pod])
        if r is not None:
            return r
    return None


def oom_phase(data: PlaybookData) -> ItemResult:
    """Start-up / after a while / one long request / rising concurrency, from restarts and logs."""
    if not data.has("kube"):
        return res.not_available("kube")
    ev: list[CheckEvidence] = []
    killed = []
    for pod in data.pods:
        for cs in pod.container_statuses:
            t = cs.last_terminated
            if t is not None and (t.reason == "OOMKilled" or t.exit_code == 137):
                killed.append(pod.meta.name)
                ev.append(
                    CheckEvidence(
                        **L("last_termination", pod=pod.meta.name),
                        value=f"{t.reason or t.exit_code}",
                        source="kube",
                    )
                )
        if restarts(pod):
            ev.append(
                CheckEvidence(
                    **L("restarts", pod=pod.meta.name), value=str(restarts(pod)), source="kube"
                )
            )
    r = _oom(data)
    running = data.signal("requests_running")
    rising = (
        running is not None
        and running.baseline is not None
        and running.baseline.value
        and (running.now.value or 0) > 1.5 * running.baseline.value
    )
    if r is not None:
        ev.append(
            CheckEvidence(
                **L("oom_message"),
                value=r.events[0].text[:300] if r.events else r.likely,
                value_key="" if r.events else f"playbook.oom_class.{r.likely}",
                source="logs",
            )
        )
        if r.phase == "startup":
            key = "oom.phase.startup"
        elif r.trigger == "long_prompt_prefill":
            key = "oom.phase.long_request"
        elif rising:
            key = "oom.phase.concurrency"
        else:
            key = "oom.phase.runtime"
        return res.problem(f"playbook.finding.{key}", ev, stage=r.stage or "-", likely=r.likely)
    if killed:
        return res.problem("playbook.finding.oom.phase.host_oomkilled", ev, pods=", ".join(killed))
    return res.ok("playbook.finding.oom.phase.none", ev)


def oom_budget(data: PlaybookData) -> ItemResult:
    """Weights + KV cache vs the GPU's memory (model config from the user or the pod args)."""
    args = next(
        (
            engine_args_of(p)
            for p in data.pods
            if engine_args_of(p).model_params_b or engine_args_of(p).max_model_len
        ),
        None,
    )
    model = data.model
    params_b = (model.params_b if model and model.params_b else None) or (
        args.model_params_b if args else None
    )
    tp = (args.tensor_parallel_size if args else None) or 1
    gpu_total_gib: float | None = None
    for snap in data.gpus:
        for g in snap.gpus:
            if g.mem_total.value is not None:
                gpu_total_gib = g.mem_total.value / 1024
                break
    r = _oom(data)
    if gpu_total_gib is None and r is not None and r.total_gib:
        gpu_total_gib = r.total_gib
    if params_b is None or gpu_total_gib is None:
        missing = [s for s in ("kube", "gpu") if not data.has(s)]
        if missing and params_b is None:
            return res.not_available(*missing)
        return res.still_open(
            "playbook.finding.oom.budget.need_model",
            params=params_b or "?",
            gpu=f"{gpu_total_gib:.1f}" if gpu_total_gib else "?",
        )
    dtype = model.dtype_bytes if model else 2.0
    weights_gib = params_b * 1e9 * dtype / tp / 1024**3
    kv_gib: float | None = None
    if (
        model
        and model.num_layers
        and model.num_kv_heads
        and model.head_dim
        and args
        and args.max_model_len
    ):
        seqs = args.max_num_seqs or 256
        per_token = (
            2 * model.num_layers * model.num_kv_heads * model.head_dim * model.kv_dtype_bytes / tp
        )
        kv_gib = per_token * args.max_model_len * seqs / 1024**3
    util = (args.gpu_memory_utilization if args else None) or DEFAULT_GPU_MEMORY_UTILIZATION
    budget = gpu_total_gib * util
    ev = [
        CheckEvidence(
            **L("weights_per_gpu"), value=f"{weights_gib:.1f}", unit="GiB", source="kube"
        ),
        CheckEvidence(**L("gpu_memory"), value=f"{gpu_total_gib:.1f}", unit="GiB", source="gpu"),
        CheckEvidence(**L("engine_budget"), value=f"{budget:.1f}", unit="GiB"),
    ]
    if kv_gib is not None:
        ev.append(CheckEvidence(**L("kv_cache"), value=f"{kv_gib:.1f}", unit="GiB"))
    need = weights_gib + (kv_gib or 0.0)
    status = (
        ItemStatus.PROBLEM
        if weights_gib >= budget or (kv_gib is not None and need > budget)
        else ItemStatus.OK
    )
    return res.result(
        status,
        "playbook.finding.oom.budget.result",
        ev,
        weights=f"{weights_gib:.1f}",
        kv=f"{kv_gib:.1f}" if kv_gib is not None else "?",
        budget=f"{budget:.1f}",
    )


def _allocator_metrics(data: PlaybookData) -> list[CheckEvidence]:
    """The caching allocator's reserved and reserved-but-unallocated memory from app
    instrumentation (``torch_alloc`` profile), now and a baseline earlier: cache growth
    shows as reserved up against the baseline."""
    ev: list[CheckEvidence] = []
    for name, label in (
        ("torch_reserved_gib", "torch_reserved"),
        ("torch_unallocated_gib", "torch_unallocated"),
    ):
        s = data.signal(name)
        if s is None or s.now.value is None:
            continue
        base = s.baseline.value if s.baseline is not None else None
        ev.append(
            CheckEvidence(
                **L(label, baseline="—" if base is None else f"{base:.2f}"),
                value=f"{s.now.value:.2f}",
                unit="GiB",
                source="metrics",
                query=s.query,
            )
        )
    return ev


def oom_allocator(data: PlaybookData) -> ItemResult:
    """Allocated vs reserved: fragmentation or cache growth.

    Decided from the OOM message in the logs (``free < requested ≤ reserved but
    unallocated`` is fragmentation, formats.md §C2). The allocator metrics of app
    instrumentation, when exported, come as evidence beside it, or alone when no message
    is in the logs: they carry no request size, so they do not decide by themselves.
    """
    metric_ev = _allocator_metrics(data)
    r = _oom(data) if data.has("kube") else None
    if r is None or r.allocated_by_pytorch_gib is None:
        if metric_ev:
            reserved = next(
                (e.value for e in metric_ev if e.label_key.endswith("torch_reserved")), "—"
            )
            unalloc = next(
                (e.value for e in metric_ev if e.label_key.endswith("torch_unallocated")), "—"
            )
            return res.still_open(
                "playbook.finding.oom.allocator.metrics_only",
                metric_ev,
                reserved=reserved,
                unallocated=unalloc,
            )
        if not data.has("kube"):
            return res.not_available("kube")
        return res.still_open("playbook.finding.oom.allocator.no_message")
    ev = [
        CheckEvidence(**L("requested"), value=f"{r.requested_gib}", unit="GiB", source="logs"),
        CheckEvidence(**L("free"), value=f"{r.free_gib}", unit="GiB", source="logs"),
        CheckEvidence(
            **L("allocated"),
            value=f"{r.allocated_by_pytorch_gib}",
            unit="GiB",
            source="logs",
        ),
        CheckEvidence(
            **L("reserved_unallocated"),
            value=f"{r.reserved_unallocated_gib}",
            unit="GiB",
            source="logs",
        ),
    ]
    if r.non_pytorch_gib is not None:
        ev.append(
            CheckEvidence(
                **L("non_pytorch"), value=f"{r.non_pytorch_gib}", unit="GiB", source="logs"
            )
        )
    frag = "fragmentation" in r.classes
    return res.result(
        ItemStatus.PROBLEM if frag else ItemStatus.OK,
        "playbook.finding.oom.allocator." + ("fragmentation" if frag else "no_fragmentation"),
        ev + metric_ev,
        classes=", ".join(r.classes),
    )


def oom_other_process(data: PlaybookData) -> ItemResult:
    """Processes on the card that are not the pod's own (NVML/DCGM), or in the OOM message."""
    r = _oom(data)
    ev: list[CheckEvidence] = []
    if r is not None:
        for p in r.other_processes:
            ev.append(
                CheckEvidence(
                    **L("oom_process", pid=p.pid),
                    value=f"{p.in_use_gib}",
                    unit="GiB",
                    source="logs",
                )
            )
    pod_uids = {p.meta.uid for p in data.pods if p.meta.uid}
    if data.gpus:
        for snap in data.gpus:
            for g in snap.gpus:
                for proc in g.processes or []:
                    if proc.pod_uid and pod_uids and proc.pod_uid in pod_uids:
                        continue
                    mem = proc.used_memory.value
                    ev.append(
                        CheckEvidence(
                            label=f"GPU {g.index} pid {proc.pid} {proc.name or ''} pod {proc.pod_uid or proc.pod_note or '?'}".strip(),
                            value=f"{mem:.0f}" if mem is not None else "?",
                            unit="MiB",
                            source="gpu",
                        )
                    )
    elif r is None:
        return res.not_available("gpu")
    if ev:
        return res.problem("playbook.finding.oom.other_process.found", ev, n=len(ev))
    return res.ok("playbook.finding.oom.other_process.none")


def oom_limits(data: PlaybookData) -> ItemResult:
    """Max-token / concurrency / batched-token limits in the engine args."""
    if not data.has("kube"):
        return res.not_available("kube")
    if not data.pods:
        return res.still_open("playbook.finding.no_pods")
    args = engine_args_of(data.pods[0])
    missing = [
        flag
        for flag, value in (
            ("--max-model-len", args.max_model_len),
            ("--max-num-seqs", args.max_num_seqs),
            (
                "--max-num-batched-tokens",
                args.max_num_batched_tokens or args.max_batch_prefill_tokens,
            ),
        )
        if value is None
    ]
    ev = [
        CheckEvidence(
            **L("args_of", pod=data.pods[0].meta.name),
            value=" ".join(data.pods[0].spec.containers[0].args)[:300]
            if data.pods[0].spec.containers
            else "",
            source="kube",
        )
    ]
    if missing:
        return res.problem("playbook.finding.oom.limits.missing", ev, flags=", ".join(missing))
    return res.ok("playbook.finding.oom.limits.present", ev)


def oom_remedy(data: PlaybookData) -> ItemResult:
    """The handbook's mitigations and long-term fixes, matched to the OOM class."""
    r = _oom(data)
    if r is None:
        return res.still_open("playbook.finding.oom.remedy.unknown")
    return res.problem(
        "playbook.finding.oom.remedy.matched",
        [
            CheckEvidence(
                **L("oom_class"),
                value=r.likely,
                value_key=f"playbook.oom_class.{r.likely}",
                source="logs",
            )
        ],
        likely=r.likely,
        mitigations=r.mitigation_ids,
        long_term=r.long_term_ids,
    )
