"""Fetch what each playbook's checks need from ``ctx.sources`` (read-only, async).

The checks themselves are pure (:mod:`cockpit.analysis.playbooks`); this layer only
fetches. A source that is absent (``None`` in :class:`~cockpit.sources.base.Sources`) or
fails is named in ``PlaybookData.missing`` with the reason, so every check that needs it
says "not available: <source>". Every call has a timeout; nothing here writes anywhere.

Metric signals (PromQL over vLLM, dcgm-exporter, cAdvisor and PyTorch-allocator series),
scoped as the drilldown scopes them (:func:`_scope`): the service's namespace, model and
pods (the deployment's, or those the playbook found or was given), each in its exporter's
label names (:data:`_SOURCE_OF`):

==================== ==============================================================
``requests_running`` ``sum(vllm:num_requests_running)``
``requests_waiting`` ``sum(vllm:num_requests_waiting)``
``queue_time_p99``   P99 of ``vllm:request_queue_time_seconds``
``ttft_p99``         P99 of ``vllm:time_to_first_token_seconds`` (also per pod)
``tpot_p99``         P99 of ``vllm:time_per_output_token_seconds``
``arrival_rate``     ``rate(vllm:e2e_request_latency_seconds_count)``
``prompt_tokens_p90`` P90 of ``vllm:request_prompt_tokens``
``gpu_util``         ``DCGM_FI_DEV_GPU_UTIL`` (%)
``sm_active``        ``DCGM_FI_PROF_SM_ACTIVE`` (0–1)
``cpu_throttled_share`` throttled / total CFS periods (cAdvisor)
``finish_length_share`` share of ``vllm:request_success_total{finished_reason="length"}``
``torch_reserved_gib`` largest ``pytorch_cuda_memory_reserved_bytes`` of one GPU (GiB)
``torch_unallocated_gib`` largest reserved − allocated of one GPU (GiB): what the caching
                     allocator holds but does not use (app instrumentation, see the
                     ``torch_alloc`` metric profile)
==================== ==============================================================
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from cockpit.analysis.playbooks.data import ModelConfig, PlaybookData, Signal
from cockpit.analysis.profiles import Detection, ProfileMeta, selector
from cockpit.models import Reading

if TYPE_CHECKING:
    from cockpit.context import AppContext

CALL_TIMEOUT_S = 15.0
QUIET_BEFORE = timedelta(hours=2)
"""Where the baseline is read when a day (or week) earlier has no series: the start of
the default 2 h incident window, the quiet time before it (the drilldown's fallback)."""
LOG_TAIL_LINES = 2000
MAX_LOG_PODS = 64
RATE = "5m"

_Q: dict[str, str] = {
    "requests_running": "sum(vllm:num_requests_running{{{sel}}})",
    "requests_waiting": "sum(vllm:num_requests_waiting{{{sel}}})",
    "queue_time_p99": "histogram_quantile(0.99, sum by (le) (rate(vllm:request_queue_time_seconds_bucket{{{sel}}}[{rate}])))",
    "ttft_p99": "histogram_quantile(0.99, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket{{{sel}}}[{rate}])))",
    # vLLM ≥ 0.11 renamed time_per_output_token_seconds to inter_token_latency_seconds
    # (metrics_kb.md §2.1): ask for both, the new name first.
    "tpot_p99": "histogram_quantile(0.99, sum by (le) (rate(vllm:inter_token_latency_seconds_bucket{{{sel}}}[{rate}]) or rate(vllm:time_per_output_token_seconds_bucket{{{sel}}}[{rate}])))",
    "arrival_rate": "sum(rate(vllm:e2e_request_latency_seconds_count{{{sel}}}[{rate}]))",
    "prompt_tokens_p90": "histogram_quantile(0.9, sum by (le) (rate(vllm:request_prompt_tokens_bucket{{{sel}}}[{rate}])))",
    "gpu_util": "avg(DCGM_FI_DEV_GPU_UTIL{{{sel}}})",
    "sm_active": "avg(DCGM_FI_PROF_SM_ACTIVE{{{sel}}})",
    "cpu_throttled_share": "sum(rate(container_cpu_cfs_throttled_periods_total{{{sel}}}[{rate}])) / sum(rate(container_cpu_cfs_periods_total{{{sel}}}[{rate}]))",
    "torch_reserved_gib": "max(pytorch_cuda_memory_reserved_bytes{{{sel}}})",
    "torch_unallocated_gib": "max(pytorch_cuda_memory_reserved_bytes{{{sel}}} - pytorch_cuda_memory_allocated_bytes{{{sel}}})",
    "finish_length_share": 'sum(rate(vllm:request_success_total{{finished_reason="length",{sel}}}[{rate}])) / sum(rate(vllm:request_success_total{{{sel}}}[{rate}]))',
}
_UNITS: dict[str, tuple[str, float]] = {
    "queue_time_p99": ("ms", 1000.0),
    "ttft_p99": ("ms", 1000.0),
    "tpot_p99": ("ms", 1000.0),
    "arrival_rate": ("req/s", 1.0),
    "prompt_tokens_p90": ("tokens", 1.0),
    "requests_running": ("req", 1.0),
    "requests_waiting": ("req", 1.0),
    "gpu_util": ("%", 1.0),
    "torch_reserved_gib": ("GiB", 1 / 2**30),
    "torch_unallocated_gib": ("GiB", 1 / 2**30),
}
"""Display unit and factor of a signal (latencies in ms, as on every other screen);
shares and ratios stay fractions."""
_PER_POD = {
    "ttft_p99": "histogram_quantile(0.99, sum by (le, pod) (rate(vllm:time_to_first_token_seconds_bucket{{{sel}}}[{rate}])))",
}
PROFILE_SIGNALS: dict[str, tuple[str, float | None]] = {
    "queue_time_p99": ("serving.queue_time", 0.99),
    "requests_waiting": ("serving.queue", None),
    "requests_running": ("serving.running", None),
    "arrival_rate": ("serving.qps", None),
    "prompt_tokens_p90": ("serving.prompt_len", 0.9),
    "ttft_p99": ("serving.ttft", 0.99),
    "tpot_p99": ("serving.tpot", 0.99),
}
"""Playbook signals that every serving stack's metric profile defines (canonical signal
id, quantile): read in the detected stack's own metric names (SGLang, TGI, Triton…) and
narrowed like the drilldown (namespace, model, the deployment's pods). The vLLM queries
of :data:`_Q` are used when no profile was detected (or the listing failed)."""


SIGNALS_BY_PLAYBOOK: dict[str, tuple[str, ...]] = {
    "cuda_oom": ("requests_running", "torch_reserved_gib", "torch_unallocated_gib"),
    "nccl_hang": (),
    "low_util": (
        "gpu_util",
        "sm_active",
        "cpu_throttled_share",
        "requests_running",
        "requests_waiting",
    ),
    "ttft_spike": (
        "queue_time_p99",
        "requests_waiting",
        "arrival_rate",
        "prompt_tokens_p90",
        "ttft_p99",
        "tpot_p99",
    ),
    "pod_pending": (),
    "bad_rollout": ("finish_length_share",),
}
NEEDS_LOGS = {"cuda_oom", "nccl_hang", "low_util", "ttft_spike", "bad_rollout"}
NEEDS_GPU = {"cuda_oom", "nccl_hang", "low_util"}


_SOURCE_OF: dict[str, str] = {
    "requests_running": "vllm",
    "requests_waiting": "vllm",
    "queue_time_p99": "vllm",
    "ttft_p99": "vllm",
    "tpot_p99": "vllm",
    "arrival_rate": "vllm",
    "prompt_tokens_p90": "vllm",
    "finish_length_share": "vllm",
    "gpu_util": "dcgm",
    "sm_active": "dcgm",
    "torch_reserved_gib": "torch_alloc",
    "torch_unallocated_gib": "torch_alloc",
    "cpu_throttled_share": "cadvisor_container",
}
"""The metric profile whose series each query of :data:`_Q` reads: its label names
(``model_name``, ``exported_pod``…, as discovery found them) narrow the query to the
service's scope."""
_CADVISOR = ProfileMeta(
    id="cadvisor_container",
    name="cAdvisor",
    stack="infrastructure",
    detect=[],
    labels={"namespace": "namespace", "pod": "pod"},
)
"""cAdvisor's ``container_*`` series carry the workload's namespace and pod (the
``node_cadvisor`` profile maps none: its node signals are shared)."""


def _selector(
    det: Detection | None, scope: dict[str, str], name: str, shipped: dict[str, ProfileMeta]
) -> str:
    """The label matchers of ``scope`` for the series the query ``name`` of :data:`_Q`
    reads (``namespace="llm",model_name="m",pod=~"…"``, without braces)."""
    pid = _SOURCE_OF[name]
    meta = _CADVISOR if pid == _CADVISOR.id else shipped.get(pid)
    if det is None:
        return selector(scope, meta) if meta is not None else ""
    return det.scope_selector(pid, scope, meta)


async def _scope(
    ctx: AppContext, now: datetime, pods: list[str]
) -> tuple[Detection | None, dict[str, str]]:
    """The detection (``None`` when it fails) and the service scope the playbook's
    queries are narrowed to: namespace, model and ``pod`` (a regex: the pods the playbook
    read or was given, else the deployment's or the selector's workloads'), as steps A
    and C narrow theirs (:func:`cockpit.collect.base.scope_for`)."""
    import re

    from cockpit.collect.base import detection_for, scope_for, scope_labels

    try:
        scope = dict(await _timed(scope_for(ctx)))
    except Exception:
        scope = dict(scope_labels(ctx))
    if pods:
        scope["pod"] = "|".join(re.escape(p) for p in sorted(pods))
    try:
        det: Detection | None = await _timed(detection_for(ctx, now))
    except Exception:
        det = None
    return det, scope


async def _timed(coro: Any) -> Any:
    return await asyncio.wait_for(coro, timeout=CALL_TIMEOUT_S)


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:200]


# Labels that name a distributed job's pods, and their rank index (Kubeflow PyTorchJob,
# JobSet, indexed Job, plain Job, StatefulSet).
JOB_LABELS = (
    "training.kubeflow.org/job-name",
    "jobset.sigs.k8s.io/jobset-name",
    "batch.kubernetes.io/job-name",
    "job-name",
    "app",
)
INDEX_LABELS = (
    "training.kubeflow.org/replica-index",
    "jobset.sigs.k8s.io/job-index",
    "batch.kubernetes.io/job-completion-index",
    "apps.kubernetes.io/pod-index",
)


def _rank_order(pod: Any) -> tuple[int, str]:
    labels = pod.meta.labels
    for key in INDEX_LABELS:
        if labels.get(key, "").isdigit():
            return int(labels[key]), pod.meta.name
    tail = pod.meta.name.rsplit("-", 1)[-1]
    return (int(tail) if tail.isdigit() else 1 << 30), pod.meta.name


async def _kube(
    ctx: AppContext,
    data: PlaybookData,
    playbook_id: str,
    pod_names: list[str] | None,
    job: str | None = None,
) -> None:
    kube: Any = ctx.sources.kube
    ns = ctx.settings.service.namespace or None
    sel = ctx.settings.service.selector
    if pod_names:
        wanted = set(pod_names)
        pods = [p for p in await _timed(kube.list_pods(ns)) if p.meta.name in wanted]
    elif job:
        pods = []
        for key in JOB_LABELS:
            pods = await _timed(kube.list_pods(ns, label_selector=f"{key}={job}"))
            if pods:
                break
        if not pods:
            pods = [p for p in await _timed(kube.list_pods(ns)) if p.meta.name == job]
    else:
        pods = await _timed(kube.list_pods(ns, label_selector=sel))
    data.pods = sorted(pods, key=_rank_order)
    if playbook_id == "pod_pending":
        data.nodes = await _timed(kube.list_nodes())
        events = await _timed(kube.list_events(ns, "reason=FailedScheduling"))
        names = {p.meta.name for p in pods}
        data.events = [e for e in events if not names or e.name in names]
        for ds in await _timed(kube.list_daemonsets("*")):
            if "device-plugin" in ds.meta.name or "nvidia-device" in ds.meta.name:
                data.daemonsets[f"{ds.meta.namespace}/{ds.meta.name}"] = (ds.desired, ds.ready)
    if playbook_id in NEEDS_LOGS:
        limit = MAX_LOG_PODS if playbook_id == "nccl_hang" else 8
        for p in pods[:limit]:
            if p.phase == "Pending":
                continue
            try:
                log = await _timed(
                    kube.pod_log(
                        p.meta.name,
                        p.meta.namespace or ns,
                        tail_lines=LOG_TAIL_LINES,
                        timestamps=playbook_id == "nccl_hang",
                    )
                )
                text = log.text
                if any(cs.restart_count for cs in p.container_statuses):
                    prev = await _timed(
                        kube.pod_log(
                            p.meta.name,
                            p.meta.namespace or ns,
                            previous=True,
                            tail_lines=LOG_TAIL_LINES,
                            timestamps=playbook_id == "nccl_hang",
                        )
                    )
                    text = prev.text + "\n" + text
                data.logs[p.meta.name] = text
            except Exception as exc:
                data.missing.setdefault(f"logs:{p.meta.name}", _reason(exc))


async def _signal(
    ctx: AppContext,
    name: str,
    sel: str,
    now: datetime,
    offset: timedelta,
    profiled: tuple[str, str | None, str] | None = None,
) -> tuple[str, Signal]:
    src = ctx.sources.metrics
    assert src is not None
    if profiled is not None:
        # (query, per-pod query, unit) in the detected stack's names, already scaled
        q, per_q, unit = profiled
        factor = 1.0
    else:
        q = _Q[name].format(sel=sel, rate=RATE)
        unit, factor = _UNITS.get(name, ("", 1.0))
        per_q = _PER_POD[name].format(sel=sel, rate=RATE) if name in _PER_POD else None

    async def per_pod() -> list[Any]:
        return await _timed(src.instant(per_q, now)) if per_q else []

    cur, base, per = await asyncio.gather(
        _timed(src.instant(q, now)),
        _timed(src.instant(q, now - offset)),
        per_pod(),
        return_exceptions=True,
    )
    if isinstance(cur, BaseException):
        return name, Signal(now=Reading.unknown(_reason(cur), query=q), query=q)
    baseline_from = ""
    if isinstance(base, BaseException) or not base:
        # No history a day (week) earlier: the quiet time before the incident window, as
        # the drilldown falls back to (see cockpit.collect.base.Window.with_baseline).
        try:
            base = await _timed(src.instant(q, now - QUIET_BEFORE))
        except Exception:
            base = []
        baseline_from = "quiet" if base else ""

    def reading(found: list[Any]) -> Reading:
        if found:
            return Reading.known(found[0].v * factor, unit, query=q)
        return Reading.unknown("no series", unit=unit, query=q)

    sig = Signal(now=reading(cur), baseline=reading(base), query=q, baseline_from=baseline_from)
    if per_q and not isinstance(per, BaseException):
        sig.per_instance = {v.labels.get("pod", "?"): v.v * factor for v in per if v.v == v.v}
        sig.per_instance_query = per_q
    return name, sig


async def _metrics(
    ctx: AppContext, data: PlaybookData, playbook_id: str, service_scope: bool = False
) -> None:
    """Every signal of the playbook, now and at the baseline offset, all queries at once
    (the source bounds how many run together; each has its own timeout). With
    ``service_scope`` (no pods or job named: the service itself) the canonical signals are
    then read from the drilldown (:func:`_from_drilldown`)."""
    from cockpit.analysis.profiles import builtin_profiles

    now = ctx.clock.now()
    offset = timedelta(days=7) if ctx.settings.baseline == "7d" else timedelta(days=1)
    pods = [p.meta.name for p in data.pods]
    names = SIGNALS_BY_PLAYBOOK.get(playbook_id, ())
    det, scope = await _scope(ctx, now, pods)
    shipped = {p.id: p.profile for p in builtin_profiles()}
    profiled = _profiled(det, scope, names)
    for name, sig in await asyncio.gather(
        *(
            _signal(ctx, n, _selector(det, scope, n, shipped), now, offset, profiled.get(n))
            for n in names
        )
    ):
        if name in PROFILE_SIGNALS:
            sig.signal_id = PROFILE_SIGNALS[name][0]
        data.metrics[name] = sig
    if service_scope:
        await _from_drilldown(ctx, data)
        if playbook_id in LOAD_FINDINGS_BY_PLAYBOOK:
            await _from_load(ctx, data)


LOAD_FINDINGS_BY_PLAYBOOK = {"ttft_spike"}
"""Playbooks with an item step F answers (the TTFT spike's "time spent before the GPU")."""


async def _from_load(ctx: AppContext, data: PlaybookData) -> None:
    """Step F's findings for the screens' window (shared, not computed again); a failed F
    leaves none (the item stays open)."""
    from cockpit.collect import steps
    from cockpit.collect.cache import screen_window

    try:
        report = await _timed(steps.load(ctx, screen_window(ctx)))
    except Exception:
        return
    data.load = {f.id: f for f in report.findings}


_STAT_OF: dict[float | None, tuple[str, ...]] = {
    0.99: ("p99", "avg"),
    None: ("value",),
}
"""The drilldown stats that are a playbook signal's value (its quantile, or the value; a
P90 the drilldown does not compute keeps its own query)."""


async def _from_drilldown(ctx: AppContext, data: PlaybookData) -> None:
    """Read the playbook's canonical signals from steps A and C's result for the screens'
    window (shared, not queried again): the same now, baseline and verdict as every other
    screen. A signal the drilldown has no value for keeps the playbook's own reading; a
    failed drilldown leaves them all."""
    from cockpit.collect import steps
    from cockpit.collect.cache import screen_window

    try:
        dd = await _timed(steps.drilldown(ctx, screen_window(ctx)))
    except Exception:
        return
    rows = {s.key: s for s in dd.drilldown.summaries}
    for name, sig in data.metrics.items():
        sid, quantile = PROFILE_SIGNALS.get(name, ("", -1.0))
        row = next(
            (rows[f"{sid}:{st}"] for st in _STAT_OF.get(quantile, ()) if f"{sid}:{st}" in rows),
            None,
        )
        if row is None or row.now.value is None:
            continue
        sig.now, sig.baseline, sig.query = row.now, row.baseline, row.query
        sig.verdict = row.verdict
        sig.top_bucket, sig.bottom_bucket = row.top_bucket, row.bottom_bucket
        sig.lowest_bound = row.lowest_bound
        sig.baseline_from = "quiet" if dd.window.baseline == "quiet" else ""


def _profiled(
    det: Detection | None, scope: dict[str, str], names: tuple[str, ...]
) -> dict[str, tuple[str, str | None, str]]:
    """The queries of :data:`PROFILE_SIGNALS` in the detected stack's metric names and
    ``scope`` (see :func:`_scope`); empty when detection failed (the vLLM queries of
    :data:`_Q` are used then, narrowed the same way)."""
    from cockpit.analysis.profiles import render

    wanted = [n for n in names if n in PROFILE_SIGNALS]
    if not wanted or det is None:
        return {}
    out: dict[str, tuple[str, str | None, str]] = {}
    for name in wanted:
        sid, quantile = PROFILE_SIGNALS[name]
        resolved = det.get(sid)
        if resolved is None or resolved.metric is None:
            continue
        sel = det.selector_for(resolved, scope)
        meta = det.metas.get(resolved.profile)
        pod_label = meta.labels.get("pod", "") if meta is not None else ""
        try:
            q = render(resolved, sel, RATE, quantile=quantile)
            per_q = (
                render(resolved, sel, RATE, by=(pod_label,), quantile=quantile)
                if name in _PER_POD and pod_label
                else None
            )
        except ValueError:
            continue
        out[name] = (q, per_q, resolved.spec.unit)
    return out


DCGM_MAX_NODES = 16
"""Most nodes whose dcgm-exporter GPUs a playbook reads (one instant query per label
spelling each)."""


async def _dcgm_gpus(ctx: AppContext, data: PlaybookData, pods: list[str]) -> None:
    """``data.gpus`` from dcgm-exporter through Prometheus when there is no local NVML:
    the nodes of the pods Kubernetes listed, else the GPUs of each pod the user named
    (the exporter's pod mapping), else the nodes the exporter maps the service's pods
    to (its namespace and pod names). Nothing found: ``missing["gpu"]``
    says the local library is absent and why DCGM could not stand in."""
    from cockpit.i18n import t
    from cockpit.sources.dcgm import DcgmSource
    from cockpit.sources.nvml import NO_NVML

    assert ctx.sources.metrics is not None
    dcgm = DcgmSource(ctx.sources.metrics, clock=ctx.clock.now)
    nodes = sorted({p.spec.node_name for p in data.pods if p.spec.node_name})
    namespace = ctx.settings.service.namespace
    why = ""
    if not nodes and not pods and namespace:
        # Neither Kubernetes nor a pod named: the service's pods as the exporter maps them.
        from cockpit.collect.base import scope_for

        try:
            regex = (await scope_for(ctx)).get("pod", "")
            nodes = await _timed(dcgm.service_nodes(namespace, regex))
        except Exception as exc:
            why = f"DCGM: {_reason(exc)}"
    if nodes:
        calls = [dcgm.node_snapshot(n) for n in nodes[:DCGM_MAX_NODES]]
    elif pods and namespace:
        calls = [dcgm.pod_snapshot(namespace, p) for p in pods[:DCGM_MAX_NODES]]
    else:
        calls = []
        why = why or t("playbook.gpu.no_dcgm_pods", ctx.lang)
    for r in await asyncio.gather(*(_timed(c) for c in calls), return_exceptions=True):
        if isinstance(r, BaseException):
            why = why or f"DCGM: {_reason(r)}"
        else:
            data.gpus.append(r)
    if not data.gpus:
        own = ctx.sources.missing.get("gpu") or NO_NVML
        data.missing["gpu"] = f"{own}; {why or 'DCGM: no series'}"


async def collect_playbook_data(
    ctx: AppContext,
    playbook_id: str,
    *,
    pods: list[str] | None = None,
    job: str | None = None,
    model: ModelConfig | None = None,
) -> PlaybookData:
    """Everything the checks of ``playbook_id`` read.

    Args:
        ctx: The app context (sources, settings, clock).
        playbook_id: One of :data:`cockpit.analysis.playbooks.spec.PLAYBOOK_IDS`.
        pods: Pod names the user listed (e.g. the ranks of a job); default: the service's
            pods from its namespace and label selector.
        job: A distributed job's name: its pods are found by the PyTorchJob, JobSet,
            indexed-Job, Job or ``app`` label (first that matches), in rank order.
        model: The model's shape when the user gave it.

    Returns:
        The data; never raises for a failing source (it lands in ``missing``).
    """
    data = PlaybookData(model=model)
    src = ctx.sources
    if src.kube is None:
        data.missing["kube"] = src.missing.get("kube", "not configured")
    else:
        try:
            await _kube(ctx, data, playbook_id, pods, job)
        except Exception as exc:
            data.missing["kube"] = _reason(exc)
    if playbook_id in NEEDS_GPU:
        if src.gpu is not None and hasattr(src.gpu, "snapshot"):
            try:
                data.gpus = [await _timed(src.gpu.snapshot())]
            except Exception as exc:
                data.missing["gpu"] = _reason(exc)
        elif src.metrics is not None:
            # No NVML here (cockpit runs on a bastion): the pods' GPUs from dcgm-exporter,
            # as the GPU panel falls back to them.
            await _dcgm_gpus(ctx, data, pods or [])
        else:
            data.missing["gpu"] = src.missing.get("gpu", "not configured")
    if SIGNALS_BY_PLAYBOOK.get(playbook_id):
        if src.metrics is None:
            data.missing["metrics"] = src.missing.get("metrics", "not configured")
        else:
            await _metrics(ctx, data, playbook_id, service_scope=not pods and not job)
    return data
