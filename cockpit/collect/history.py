"""The window's inventory and its change list from metrics history (step B, C, D, E, the
GPU panel and ``cockpit changes``), collected once per window and shared.

Range queries over the incident window (kube-state-metrics names from metrics_kb.md
§7.0 and pod-metrics.md; DCGM and the engine through the detected profiles) on one time
grid whatever the window: a 15 s step (the alert query's, :data:`cockpit.collect.alerts.ALERTS_STEP_S`)
aligned to multiples of the step since the epoch, coarser only past :data:`MAX_POINTS`
points. So an event has the same time on every screen, whichever window asked for it. Presence queries are ``timestamp(...)`` so a
vanished series ends at its last sample, not 5 minutes later (the lookback), and Xid is
``max_over_time`` per step so a 30-second burst shows. GPUs are read on the nodes the
service's pods ran on (every GPU there, idle ones too).
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from cockpit.analysis.changes import ChangeItem
from cockpit.analysis.history import (
    GPU_NODE_LABELS,
    HistoryInput,
    WindowInventory,
    build_window_inventory,
    metric_changes,
)
from cockpit.collect.base import Window, detection_for, runner_for, scope_for
from cockpit.collect.runner import QuerySpec
from cockpit.models import Series

if TYPE_CHECKING:
    from cockpit.collect.kube_gather import ChangesReport as ChangesReportT
    from cockpit.context import AppContext

MAX_POINTS = 10_000
"""At most this many points per series (Prometheus refuses more than 11,000)."""
MIN_STEP_S = 15.0
LAST_VALUE_SIGNALS = (
    "hardware.gpu_util",
    "hardware.temp",
    "hardware.power",
    "hardware.fb_used",
    "hardware.xid",
)
"""DCGM signals whose last value is kept for a GPU that went silent."""


class HistoryReport(BaseModel):
    """The window's inventory, its metric-derived changes, and queries that failed."""

    inventory: WindowInventory
    items: list[ChangeItem] = Field(default_factory=list)
    failures: list[str] = Field(default_factory=list)


def history_step(window: Window) -> float:
    """Range step in seconds: :data:`MIN_STEP_S`, or a multiple of it when the window would
    have more than :data:`MAX_POINTS` points. Independent of the screen's step, so every
    window up to ~41 h reads events on the same grid."""
    span = window.span.total_seconds()
    return MIN_STEP_S * max(1, math.ceil(span / MAX_POINTS / MIN_STEP_S))


def history_grid(window: Window, step: float) -> tuple[datetime, datetime]:
    """``(start, end)`` of the range queries: the window's ends floored to multiples of
    ``step`` since the epoch, so two windows sample the same instants."""
    from cockpit.models import from_epoch

    def floor(at: datetime) -> datetime:
        return from_epoch(math.floor(at.timestamp() / step) * step)

    return floor(window.start), floor(window.end)


def _ns(scope: dict[str, str]) -> str:
    ns = scope.get("namespace", "")
    return f'namespace="{ns}"' if ns else ""


def _and(*parts: str) -> str:
    return ",".join(p for p in parts if p)


def _regex(values: list[str]) -> str:
    """An alternation of literal ``values`` as the body of a PromQL ``=~"…"`` string
    (regex escapes for RE2, then the string's own backslash and quote escapes)."""
    from cockpit.analysis.podnames import _META

    body = "|".join(_META.sub(r"\\\1", v) for v in sorted(set(values)))
    return body.replace("\\", "\\\\").replace('"', '\\"')


async def collect_history(ctx: AppContext, window: Window) -> HistoryReport:
    """Inventory and change list of ``window`` from Prometheus (never raises for a failed
    query: it is listed in ``failures`` and its part stays empty)."""
    from cockpit.collect.cache import cached

    return await cached(ctx, "history", window, lambda: _collect(ctx, window))


async def _collect(ctx: AppContext, window: Window) -> HistoryReport:
    det = await detection_for(ctx, window.end)
    scope = await scope_for(ctx)
    step = history_step(window)
    grid_start, grid_end = history_grid(window, step)
    ns = _ns(scope)
    pod_re = scope.get("pod", "")
    pods_sel = _and(ns, f'pod=~"{pod_re}"' if pod_re else "")

    def spec(key: str, query: str) -> QuerySpec:
        return QuerySpec(key=key, query=query, start=grid_start, end=grid_end, step_s=step)

    owner_rs = _and(pods_sel, 'owner_kind="ReplicaSet"')
    owner_deploy = _and(ns, 'owner_kind="Deployment"')
    ready = _and(pods_sel, 'condition="true"')
    firing = _and(ns, 'alertstate="firing"')
    first = {
        "pod_info_ts": f"timestamp(kube_pod_info{{{pods_sel}}})",
        "pod_owner_ts": f"timestamp(kube_pod_owner{{{owner_rs}}})",
        "rs_owner_ts": f"timestamp(kube_replicaset_owner{{{owner_deploy}}})",
        "pod_labels_ts": f"timestamp(kube_pod_labels{{{pods_sel}}})",
        "restarts": f"kube_pod_container_status_restarts_total{{{pods_sel}}}",
        "last_terminated": f"kube_pod_container_status_last_terminated_reason{{{pods_sel}}}",
        "ready": f"kube_pod_status_ready{{{ready}}}",
        "up": f"up{{{pods_sel}}}",
        "alerts": f"ALERTS{{{firing}}}",
    }
    serving = det.get("serving.running") or det.get("serving.queue")
    if serving is not None and serving.available and serving.metric:
        sel = det.selector_for(serving, scope)
        first["serving_ts"] = f"timestamp({serving.metric}{{{sel}}})"
    gpu = det.get("hardware.gpu_util")
    gpu_metric = gpu.metric if gpu is not None and gpu.available else None
    if gpu_metric:
        # the service's own GPUs, to learn the nodes when kube-state-metrics is absent
        first["gpu_own_ts"] = (
            f"timestamp({gpu_metric}{{{ns}}}) or timestamp({gpu_metric}{{{ns.replace('namespace', 'exported_namespace')}}})"
            if ns
            else f"timestamp({gpu_metric})"
        )
    runner = runner_for(ctx)
    results = await runner.run([spec(k, q) for k, q in first.items()])
    failures = [
        f"{r.spec.query}: {r.failure.kind.value}: {r.failure.message}"
        for r in results.values()
        if r.failure is not None
    ]
    got: dict[str, list[Series]] = {k: (r.series if r.ok else []) for k, r in results.items()}
    nodes = [s.labels.get("node", "") for s in got.get("pod_info_ts", [])]
    nodes += [
        next((s.labels[n] for n in GPU_NODE_LABELS if s.labels.get(n)), "")
        for s in got.get("gpu_own_ts", [])
    ]
    nodes = [n for n in nodes if n]
    second: dict[str, str] = {}
    if nodes:
        node_re = _regex(nodes)
        second["allocatable"] = (
            f'kube_node_status_allocatable{{node=~"{node_re}",resource="nvidia_com_gpu"}}'
        )
        second["node_conditions"] = f'kube_node_status_condition{{node=~"{node_re}",status="true"}}'
        xid = det.get("hardware.xid")
        if gpu_metric:
            second["gpu_ts"] = " or ".join(
                f'timestamp({gpu_metric}{{{lab}=~"{node_re}"}})' for lab in ("Hostname", "hostname")
            )
        if xid is not None and xid.available and xid.metric:
            second["xid"] = " or ".join(
                f'max_over_time({xid.metric}{{{lab}=~"{node_re}"}}[{int(step)}s])'
                for lab in ("Hostname", "hostname")
            )
    if second:
        more = await runner.run([spec(k, q) for k, q in second.items()])
        failures += [
            f"{r.spec.query}: {r.failure.kind.value}: {r.failure.message}"
            for r in more.values()
            if r.failure is not None
        ]
        got.update({k: (r.series if r.ok else []) for k, r in more.items()})
    if not got.get("gpu_ts"):
        got["gpu_ts"] = got.get("gpu_own_ts", [])
    fields = set(HistoryInput.model_fields)
    h = HistoryInput(
        start=window.start.timestamp(),
        end=window.end.timestamp(),
        step_s=step,
        **{k: v for k, v in got.items() if k in fields},
    )
    inv = build_window_inventory(h)
    failures += await _merge_kubernetes(ctx, inv, scope)
    await _last_values(ctx, window, inv, det)
    return HistoryReport(inventory=inv, items=metric_changes(h, inv), failures=failures)


async def _merge_kubernetes(
    ctx: AppContext, inv: WindowInventory, scope: dict[str, str]
) -> list[str]:
    """The pods Kubernetes lists now (when it is configured and reachable) merged into the
    inventory; a failure is returned as text, never raised (metrics alone still serve)."""
    import asyncio

    from cockpit.analysis.history import merge_kube_pods
    from cockpit.sources.base import SourceError

    kube = ctx.sources.kube
    if kube is None:
        return []
    selector = ctx.settings.service.selector or ""
    try:
        pods = await asyncio.wait_for(
            kube.list_pods(scope.get("namespace") or None, label_selector=selector), 20
        )
    except (SourceError, TimeoutError) as exc:
        return [f"kubernetes: {exc}"]
    pod_re = scope.get("pod", "")
    if pod_re:
        import re

        pods = [p for p in pods if re.fullmatch(pod_re, p.meta.name)]
    merge_kube_pods(inv, pods)
    return []


async def _last_values(ctx: AppContext, window: Window, inv: WindowInventory, det: object) -> None:
    """For each GPU that went silent, the last value of the DCGM signals worth showing."""
    silent = inv.silent_gpus()
    if not silent:
        return
    span = int(window.span.total_seconds())
    specs = []
    for g in silent:
        for sid in LAST_VALUE_SIGNALS:
            r = det.get(sid)  # type: ignore[attr-defined]
            if r is None or not r.available or not r.metric:
                continue
            sel = (
                f'UUID="{g.uuid}"'
                if g.uuid.startswith("GPU-")
                else f'Hostname="{g.node}",gpu="{g.index}"'
            )
            specs.append(
                QuerySpec(
                    key=f"{g.uuid}|{sid}",
                    query=f"last_over_time({r.metric}{{{sel}}}[{span}s])",
                    kind="instant",
                    end=window.end,
                )
            )
    results = await runner_for(ctx).run(specs)
    for key, res in results.items():
        uuid, sid = key.split("|", 1)
        if res.ok and res.vector:
            # dcgm-exporter's Xid counter names its code in a label; the gauge holds it.
            code = res.vector[0].labels.get("xid", "")
            last = float(code) if sid == "hardware.xid" and code.isdigit() else res.vector[0].v
            inv.gpus[uuid].last_values[sid] = last


async def gather_all_changes(
    ctx: AppContext, since: datetime, until: datetime, namespace: str | None, selector: str
) -> ChangesReportT:
    """The :class:`~cockpit.collect.kube_gather.ChangesReport` of ``[since, until]``:
    Kubernetes' changes when it is configured, merged with the metrics history's when
    Prometheus is.

    Raises:
        SourceError: Kubernetes could not be read and there is no Prometheus to fall
            back on.
    """
    from cockpit.analysis.history import merge_changes
    from cockpit.collect.kube_gather import ChangesReport, gather_changes
    from cockpit.sources.base import SourceError

    ns = namespace or ctx.settings.service.namespace or ""
    report = ChangesReport(namespace=ns, selector=selector, since=since, until=until, sources=[])
    if ctx.sources.kube is not None:
        try:
            report = await gather_changes(ctx.sources.kube, since, until, ns or None, selector)
        except SourceError as exc:
            if ctx.sources.metrics is None:
                raise
            report.notes.append(f"kubernetes: {exc.failure.kind.value}: {exc.failure.message}")
            report.sources = []
    else:
        report.sources = []
        report.notes.append("kubernetes: " + ctx.sources.missing_text("kube", ctx.lang))
    if ctx.sources.metrics is not None:
        window = Window(
            start=since,
            end=until,
            step_s=60.0,
            baseline="quiet",
            baseline_start=since,
            baseline_end=until,
        )
        hist = await collect_history(ctx, window)
        report.items = merge_changes(report.items, hist.items)
        report.sources.append("metrics")
        if hist.failures:
            # one line, not one per query: a bundle without these queries fails them all
            first = hist.failures[0]
            report.notes.append(
                f"prometheus: {len(hist.failures)} history queries failed; the first: "
                f"{first[:200]}{'…' if len(first) > 200 else ''}"
            )
    return report
