"""The window's inventory and its change list from metrics history (step B, C, D, E, the
GPU panel and ``cockpit changes``), collected once per window and shared.

Range queries over the incident window (kube-state-metrics names from metrics_kb.md
§7.0 and pod-metrics.md; DCGM and the engine through the detected profiles) on one time
grid whatever the window: a 15 s step (the alert query's, :data:`cockpit.collect.alerts.ALERTS_STEP_S`)
aligned to multiples of the step since the epoch, coarser only past :data:`MAX_POINTS`
points. So an event has the same time on every screen, whichever window asked for it. When a
pod, a revision or a service's GPU was present is read from its series' raw samples (a range
selector evaluated once at the grid's end, :func:`presence`: what ``timestamp(...)`` on the
grid gives, so a vanished series ends at its last sample, not 5 minutes later, without the
server selecting the series again at every step), and Xid is ``max_over_time`` per step so
a 30-second burst shows. GPUs are read on the nodes the service's pods ran on (every GPU
there, idle ones too), by the steps that saw them (:func:`_gpus_seen`).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

from pydantic import BaseModel, Field

from cockpit.analysis.changes import ChangeItem
from cockpit.analysis.history import (
    GPU_NODE_LABELS,
    GpuEntity,
    HistoryInput,
    WindowInventory,
    build_window_inventory,
    metric_changes,
)
from cockpit.collect.base import Window, detection_for, runner_for, scope_for
from cockpit.collect.runner import QueryResult, QuerySpec
from cockpit.models import Sample, Series

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
LOOKBACK_S = 300
"""Prometheus' default lookback delta (5 min): how far before each step of a range query
an instant selector reaches (https://prometheus.io/docs/prometheus/latest/querying/basics/#staleness)."""


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


async def collect_history_within(ctx: AppContext, window: Window, wider: Window) -> HistoryReport:
    """:func:`collect_history` of ``window``, read from the queries of ``wider`` (a
    window ending with it and starting before, :func:`within`) instead of asking for the
    same series twice; queried on its own when it is not within."""
    from cockpit.collect.cache import cached

    if not within(window, wider):
        return await collect_history(ctx, window)
    return await cached(ctx, "history", window, lambda: _collect(ctx, window, wider))


class _Raw(BaseModel):
    """What :func:`_fetch` read for a window: the range series by
    :class:`~cockpit.analysis.history.HistoryInput` field (the presence fields,
    :data:`PRESENCE_KEYS`, as raw samples), the failed queries, and the answers of
    :func:`_last_value_specs` (``None`` when one failed)."""

    step: float
    got: dict[str, list[Series]]
    failures: list[str]
    last: dict[str, QueryResult] | None


async def _collect(ctx: AppContext, window: Window, wider: Window | None = None) -> HistoryReport:
    """The history of ``window``, read from the answers for ``wider`` when given
    (:func:`collect_history_within`), else queried."""
    from cockpit.collect.cache import cached

    if wider is None:
        return await _build(ctx, window, await _fetch(ctx, window))
    raw = await cached(ctx, "history_raw", wider, lambda: _fetch(ctx, wider))
    return await _build(ctx, window, _narrowed(raw, window))


class _Plan(NamedTuple):
    """The queries of a window's history (:func:`_plan`): range queries by
    :class:`~cockpit.analysis.history.HistoryInput` field, the raw reads of the presence
    fields (each field's series selectors, read as one range selector each), those read
    on the window's nodes (joined in PromQL), the GPUs' last values, and what a server
    that refuses the join needs to ask for them by the nodes' names."""

    step: float
    start: datetime
    end: datetime
    first: dict[str, str]
    present: dict[str, list[str]]
    joined: dict[str, str]
    last: dict[str, QuerySpec]
    gpu_metric: str | None
    xid_metric: str | None

    def spec(self, key: str, query: str) -> QuerySpec:
        """The range query ``query`` over the history's grid, under ``key``."""
        return QuerySpec(key=key, query=query, start=self.start, end=self.end, step_s=self.step)

    def raw_specs(self) -> list[QuerySpec]:
        """The raw reads of :attr:`present`: each selector over the grid and one lookback
        before it (:data:`LOOKBACK_S`, what the grid's first step sees), evaluated at the
        grid's end; keyed ``field`` or ``field#i`` for a field of several selectors."""
        rng = int((self.end - self.start).total_seconds()) + LOOKBACK_S
        return [
            QuerySpec(
                key=k if i == 0 else f"{k}#{i}",
                query=f"{sel}[{rng}s]",
                kind="samples",
                end=self.end,
            )
            for k, sels in self.present.items()
            for i, sel in enumerate(sels)
        ]

    def specs(self) -> list[QuerySpec]:
        """Every query of the one round :func:`_fetch` sends."""
        ranges = [self.spec(k, q) for k, q in (self.first | self.joined).items()]
        return ranges + self.raw_specs() + list(self.last.values())


async def _plan(ctx: AppContext, window: Window) -> _Plan:
    det = await detection_for(ctx, window.end)
    scope = await scope_for(ctx)
    step = history_step(window)
    grid_start, grid_end = history_grid(window, step)
    ns = _ns(scope)
    pod_re = scope.get("pod", "")
    pods_sel = _and(ns, f'pod=~"{pod_re}"' if pod_re else "")
    owner_rs = _and(pods_sel, 'owner_kind="ReplicaSet"')
    owner_deploy = _and(ns, 'owner_kind="Deployment"')
    ready = _and(pods_sel, 'condition="true"')
    firing = _and(ns, 'alertstate="firing"')
    present = {
        "pod_info_ts": [f"kube_pod_info{{{pods_sel}}}"],
        "pod_owner_ts": [f"kube_pod_owner{{{owner_rs}}}"],
        "rs_owner_ts": [f"kube_replicaset_owner{{{owner_deploy}}}"],
        "pod_labels_ts": [f"kube_pod_labels{{{pods_sel}}}"],
    }
    first = {
        "restarts": f"kube_pod_container_status_restarts_total{{{pods_sel}}}",
        "last_terminated": f"kube_pod_container_status_last_terminated_reason{{{pods_sel}}}",
        "ready": f"kube_pod_status_ready{{{ready}}}",
        "up": f"up{{{pods_sel}}}",
        "alerts": f"ALERTS{{{firing}}}",
    }
    serving = det.get("serving.running") or det.get("serving.queue")
    if serving is not None and serving.available and serving.metric:
        sel = det.selector_for(serving, scope)
        present["serving_ts"] = [f"{serving.metric}{{{sel}}}"]
    gpu = det.get("hardware.gpu_util")
    gpu_metric = gpu.metric if gpu is not None and gpu.available else None
    if gpu_metric:
        # the service's own GPUs, to learn the nodes when kube-state-metrics is absent
        present["gpu_own_ts"] = (
            [
                f"{gpu_metric}{{{ns}}}",
                f"{gpu_metric}{{{ns.replace('namespace', 'exported_namespace')}}}",
            ]
            if ns
            else [gpu_metric]
        )
    xid = det.get("hardware.xid")
    xid_metric = xid.metric if xid is not None and xid.available and xid.metric else None
    # The nodes the service's pods and GPUs ran on are joined in PromQL into the queries
    # that read the nodes and their GPUs, which go with the rest (one round trip, not a
    # lookup first); a server that refuses the join gets them by name after the lookup.
    nodes_expr = _nodes_expr(pods_sel, ns, gpu_metric, grid_start, grid_end)
    joined = _node_queries(_joined_on(nodes_expr), gpu_metric, xid_metric, step)
    last = _last_value_specs(det, window, _joined_on(nodes_expr))
    return _Plan(step, grid_start, grid_end, first, present, joined, last, gpu_metric, xid_metric)


async def history_specs(ctx: AppContext, window: Window) -> list[QuerySpec]:
    """The queries :func:`collect_history` of ``window`` asks for (one round; a server
    that refuses the nodes' join is asked again by name after it): for a caller that
    starts them ahead of the other queries of its round, the heaviest first (a range over
    the window's pods, nodes and GPUs at the history's fine step, see
    :func:`history_step`), so that they are not queued at the server behind the light
    ones; the raw reads of when each pod and GPU was present, cheap, after them. The
    history then shares their answers (each query is sent once)."""
    plan = await _plan(ctx, window)
    heavy = [plan.spec(k, q) for k, q in (plan.joined | plan.first).items()]
    return heavy + plan.raw_specs() + list(plan.last.values())


REVISION_KEYS = ("pod_info_ts", "pod_owner_ts", "rs_owner_ts", "pod_labels_ts")
"""The presence fields that place pods in revisions (kube-state-metrics)."""


async def early_revisions(ctx: AppContext, window: Window) -> WindowInventory:
    """The window's pods and revisions as soon as their raw kube-state-metrics reads are
    in (:data:`REVISION_KEYS`, the cheap queries of :func:`history_specs`, shared with
    :func:`collect_history`), without waiting for its heavy node and GPU queries: what a
    caller needs to ask, in the same round, for what a release's comparison reads at the
    minute of its rollout. The same pods and revisions :func:`collect_history` builds
    from the same answers, before Kubernetes (when reachable) completes them."""
    plan = await _plan(ctx, window)
    specs = [s for s in plan.raw_specs() if s.key.split("#", 1)[0] in REVISION_KEYS]
    results = await runner_for(ctx).run(specs)
    lo, hi = (t.timestamp() for t in history_grid(window, plan.step))
    got = {k: _presences(_raw_field(results, k), lo, hi, plan.step) for k in REVISION_KEYS}
    h = HistoryInput(
        start=window.start.timestamp(), end=window.end.timestamp(), step_s=plan.step, **got
    )
    return build_window_inventory(h)


async def _fetch(ctx: AppContext, window: Window) -> _Raw:
    plan = await _plan(ctx, window)
    first, joined, last, spec = plan.first, plan.joined, plan.last, plan.spec
    runner = runner_for(ctx)
    results = await runner.run(plan.specs())
    raw_keys = {s.key: s.key.split("#", 1)[0] for s in plan.raw_specs()}
    failures = _failed(r for k, r in results.items() if k in first or k in raw_keys)
    got: dict[str, list[Series]] = {
        k: (r.series if r.ok else [])
        for k, r in results.items()
        if k not in last and k not in raw_keys
    }
    for k in plan.present:
        got[k] = _raw_field({q: results[q] for q in raw_keys}, k)
    refused = [k for k in joined if results[k].failure is not None]
    nodes = [s.labels.get("node", "") for s in got.get("pod_info_ts", [])]
    nodes += [
        next((s.labels[n] for n in GPU_NODE_LABELS if s.labels.get(n)), "")
        for s in got.get("gpu_own_ts", [])
    ]
    nodes = [n for n in nodes if n]
    if refused and nodes:
        by_name = _node_queries(
            _named_on(_regex(nodes)), plan.gpu_metric, plan.xid_metric, plan.step
        )
        more = await runner.run([spec(k, by_name[k]) for k in refused])
        failures += _failed(more.values())
        got.update({k: (r.series if r.ok else []) for k, r in more.items()})
    answers = {k: results[k] for k in last}
    ok = all(r.ok for r in answers.values())
    return _Raw(step=plan.step, got=got, failures=failures, last=answers if ok else None)


async def _build(ctx: AppContext, window: Window, raw: _Raw) -> HistoryReport:
    """Inventory and change list of ``window`` from what :func:`_fetch` read."""
    det = await detection_for(ctx, window.end)
    scope = await scope_for(ctx)
    lo, hi = (t.timestamp() for t in history_grid(window, raw.step))
    got = dict(raw.got)
    for k in PRESENCE_KEYS:
        if k in got:
            got[k] = _presences(got[k], lo, hi, raw.step)
    got["gpu_ts"] = _gpus_seen(got.get("gpu_ts", []), got.get("gpu_own_ts", []))
    fields = set(HistoryInput.model_fields)
    h = HistoryInput(
        start=window.start.timestamp(),
        end=window.end.timestamp(),
        step_s=raw.step,
        **{k: v for k, v in got.items() if k in fields},
    )
    inv = build_window_inventory(h)
    failures = raw.failures + await _merge_kubernetes(ctx, inv, scope)
    if raw.last is None:
        await _last_values(ctx, window, inv, det)
    else:
        _place_last_values(inv, raw.last, det)
    return HistoryReport(inventory=inv, items=metric_changes(h, inv), failures=failures)


def _gpus_seen(on_nodes: list[Series], own: list[Series]) -> list[Series]:
    """When each GPU series of the window's nodes was present, as :func:`presence` gives
    it (sample times as values, at its first and last steps).

    ``on_nodes`` holds the metric's values on the history grid (the range query of
    :func:`_node_queries`); ``own`` the presence of the service's own GPUs, read from
    their raw samples. A series in both is taken from ``own`` (its exact sample times);
    another one is seen from the first to the last step that has a value, its times
    those of the steps: one step late at most for its start, and for its end as late as
    the scrape that went without it (Prometheus marks a series that left its target
    stale there, https://prometheus.io/docs/prometheus/latest/querying/basics/#staleness),
    or up to the 5-minute lookback on a server that wrote no staleness markers (history
    backfilled with ``promtool``). With nothing read on the nodes (no join, or none of
    their series), the service's own GPUs are all there is."""
    if not on_nodes:
        return own
    exact = {frozenset(s.labels.items()): s for s in own}
    out = []
    for s in on_nodes:
        if not s.samples:
            continue
        labels = {k: v for k, v in s.labels.items() if k != "__name__"}
        known = exact.get(frozenset(labels.items()))
        if known is not None:
            out.append(known)
            continue
        first, last = s.samples[0].t, s.samples[-1].t
        out.append(
            Series.model_construct(
                labels=labels, samples=[Sample(first, first), Sample(last, last)]
            )
        )
    return out


PRESENCE_KEYS = (
    "pod_info_ts",
    "pod_owner_ts",
    "rs_owner_ts",
    "pod_labels_ts",
    "serving_ts",
    "gpu_own_ts",
)
"""The presence fields :func:`_fetch` reads as raw samples (:func:`presence` makes them
what a range query of ``timestamp(...)`` gives)."""
NODE_KEYS = ("allocatable", "node_conditions", "gpu_ts", "xid")
"""The range series of :func:`_fetch` read on the window's nodes (:func:`_node_queries`)."""


def within(window: Window, wider: Window) -> bool:
    """``window``'s history can be read from ``wider``'s answers: both end together, on
    the same grid, and ``wider`` starts no later."""
    step = history_step(window)
    return (
        window.end == wider.end
        and wider.start <= window.start
        and history_step(wider) == step
        and history_grid(wider, step)[1] == history_grid(window, step)[1]
    )


def _narrowed(raw: _Raw, window: Window) -> _Raw:
    """``raw`` (of a wider window, :func:`within`) as :func:`_fetch` reads ``window``: each
    range series cut to the window's grid (the same instants, so the same points), and
    the node series kept on the nodes ``window``'s pods and GPUs ran on (as the queries
    by the nodes' names select them). The GPUs' last values (over the wider span) are
    kept as they are: a GPU seen in the window has its last sample in it. The raw
    samples of :data:`PRESENCE_KEYS` are cut to what the window's grid sees (its first
    step's lookback included), and a series no step of it sees is dropped."""
    lo, hi = (t.timestamp() for t in history_grid(window, raw.step))
    got = {
        k: [
            Series.model_construct(labels=x.labels, samples=pts)
            for x in v
            if (pts := _between(x.samples, lo - 5e-4, hi + 5e-4))
        ]
        for k, v in raw.got.items()
        if k not in PRESENCE_KEYS
    }
    for k in PRESENCE_KEYS:
        if k in raw.got:
            got[k] = [
                Series.model_construct(labels=x.labels, samples=pts)
                for x in raw.got[k]
                if (pts := _between(x.samples, lo - LOOKBACK_S - 5e-4, hi + 5e-4))
                and presence(x, lo, hi, raw.step) is not None
            ]
    nodes = {s.labels.get("node", "") for s in got.get("pod_info_ts", [])}
    nodes |= {
        next((s.labels[n] for n in GPU_NODE_LABELS if s.labels.get(n)), "")
        for s in got.get("gpu_own_ts", [])
    }
    nodes.discard("")
    labels = {"allocatable": ("node",), "node_conditions": ("node",)}
    for k in NODE_KEYS:
        if k in got:
            names = labels.get(k, ("Hostname", "hostname"))
            got[k] = [x for x in got[k] if any(x.labels.get(n) in nodes for n in names)]
    return raw.model_copy(update={"got": got})


def _raw_field(results: dict[str, QueryResult], field: str) -> list[Series]:
    """The series a presence ``field``'s raw reads answered (keys ``field`` and
    ``field#i``, :meth:`_Plan.raw_specs`), as one union (:func:`_union`); failed reads
    add nothing."""
    return _union(r.series for k, r in results.items() if k.split("#", 1)[0] == field and r.ok)


def _presences(series: list[Series], lo: float, hi: float, step: float) -> list[Series]:
    """:func:`presence` of each of ``series``, those no step sees left out."""
    return [p for x in series if (p := presence(x, lo, hi, step)) is not None]


def _union(parts: Iterable[list[Series]]) -> list[Series]:
    """The series of ``parts`` without their metric name, a label set already listed by
    an earlier part left out: what PromQL's ``timestamp(a) or timestamp(b)`` selects."""
    seen: set[frozenset[tuple[str, str]]] = set()
    out = []
    for part in parts:
        for s in part:
            labels = {k: v for k, v in s.labels.items() if k != "__name__"}
            ident = frozenset(labels.items())
            if ident not in seen:
                seen.add(ident)
                out.append(Series.model_construct(labels=labels, samples=s.samples))
    return out


def presence(s: Series, lo: float, hi: float, step: float) -> Series | None:
    """What a range query of ``timestamp(selector)`` over ``[lo, hi]`` every ``step``
    seconds gives at its first and last steps, from the series' raw samples ``s``
    (Unix seconds, in time order); ``None`` when no step sees a sample.

    A step ``t`` sees the newest sample in ``[t - LOOKBACK_S, t]`` (Prometheus 2.x's
    lookback, closed at both ends, https://prometheus.io/docs/prometheus/latest/querying/basics/#staleness)
    and its value is that sample's time, so the values only grow: the first step's is
    the series' earliest time on the grid and the last step's its latest. Times are
    compared in whole milliseconds, as Prometheus stores them. A series that went stale
    (its target gone) is seen here up to the lookback after its last sample, as on a
    server without staleness markers; its last time is that sample's either way."""
    pts = s.samples
    lo_ms, hi_ms, st, lb = round(lo * 1000), round(hi * 1000), round(step * 1000), LOOKBACK_S * 1000
    if st <= 0 or not pts:
        return None

    def upto(t_ms: int, i: int = 0) -> int:
        # samples up to t_ms (a sample time is whole milliseconds: 0.4 ms absorbs the
        # float error and never reaches the next millisecond)
        return bisect.bisect_right(pts, t_ms / 1000 + 4e-4, i, key=_t)

    i0 = bisect.bisect_left(pts, (lo_ms - lb) / 1000 - 4e-4, key=_t)
    i1 = upto(hi_ms, i0)
    first = last = None
    for x in pts[i0:i1]:
        t = round(x.t * 1000)
        at = lo_ms + max(0, -(-(t - lo_ms) // st)) * st  # the first step at or after t
        if at > hi_ms:
            break
        if at - t <= lb:
            first = at
            break
    for x in reversed(pts[i0:i1]):
        t = round(x.t * 1000)
        at = lo_ms + ((min(t + lb, hi_ms) - lo_ms) // st) * st  # the last step that sees t
        if at >= t and at >= lo_ms:
            last = at
            break
    if first is None or last is None:
        return None
    seen_first = round(pts[upto(first, i0) - 1].t * 1000)
    seen_last = round(pts[upto(last, i0) - 1].t * 1000)
    return Series.model_construct(
        labels=s.labels,
        samples=[Sample(first / 1000, seen_first / 1000), Sample(last / 1000, seen_last / 1000)],
    )


def _t(x: Sample) -> float:
    return x.t


def _between(pts: list[Sample], lo: float, hi: float) -> list[Sample]:
    """The samples of ``pts`` (in time order, as Prometheus answers them) at times in
    ``[lo, hi]`` (Unix seconds), found by bisection: a narrowed window cuts every range
    series of the wider one."""
    return pts[bisect.bisect_left(pts, lo, key=_t) : bisect.bisect_right(pts, hi, key=_t)]


def _failed(results: Iterable[QueryResult]) -> list[str]:
    """``query: kind: message`` of each failed result."""
    return [
        f"{r.spec.query}: {r.failure.kind.value}: {r.failure.message}"
        for r in results
        if r.failure is not None
    ]


OnNodes = Callable[[Callable[[str], str], str], str]
"""``on(expr, label)``: the PromQL ``expr(matcher)`` restricted to the window's nodes by its
``label`` (``node``, ``Hostname``, ``hostname``), ``matcher`` being an extra label matcher
(``""`` for none)."""


def _nodes_expr(
    pods_sel: str, ns: str, gpu_metric: str | None, start: datetime, end: datetime
) -> str:
    """PromQL of the nodes the scope's pods ran on over ``[start, end]`` (the history's
    grid) and, for a namespace, the nodes of its own GPUs' DCGM series (where
    kube-state-metrics is absent): one series per node, labelled ``node``.

    Each part is read over the range the history's range queries see (the grid and one
    lookback before it, :data:`LOOKBACK_S`) at its end (``@``), so the set is the same at
    every step."""
    rng = int((end - start).total_seconds()) + LOOKBACK_S
    at = f"@ {end.timestamp():.3f}"
    pod_sel = _and(pods_sel, 'node!=""')
    parts = [f"last_over_time(kube_pod_info{{{pod_sel}}}[{rng}s] {at})"]
    if gpu_metric:
        scopes = [ns, ns.replace("namespace", "exported_namespace")] if ns else [""]
        for sel in scopes:
            for lab in GPU_NODE_LABELS:
                present = lab + '!=""'
                own = f"{gpu_metric}{{{_and(sel, present)}}}"
                parts.append(
                    f"label_replace(group by ({lab}) (last_over_time({own}[{rng}s] {at})), "
                    f'"node", "$1", "{lab}", "(.+)")'
                )
    return "group by (node) (" + " or ".join(parts) + ")"


def _joined_on(nodes_expr: str) -> OnNodes:
    """:data:`OnNodes` by a PromQL join with ``nodes_expr`` (:func:`_nodes_expr`)."""

    def on(expr: Callable[[str], str], label: str) -> str:
        nodes = (
            nodes_expr
            if label == "node"
            else f'label_replace({nodes_expr}, "{label}", "$1", "node", "(.+)")'
        )
        # only series that carry the label: the other label's variant reads none
        present = label + '!=""'
        return f"({expr(present)} and on({label}) {nodes})"

    return on


def _named_on(node_re: str) -> OnNodes:
    """:data:`OnNodes` by a matcher on the nodes' names (``node_re``, see :func:`_regex`)."""

    def on(expr: Callable[[str], str], label: str) -> str:
        return expr(f'{label}=~"{node_re}"')

    return on


def _node_queries(
    on: OnNodes, gpu_metric: str | None, xid_metric: str | None, step: float
) -> dict[str, str]:
    """The range queries of the window's nodes and their GPUs: allocatable GPUs, node
    conditions, each GPU's presence and its Xid per step (both DCGM node labels)."""
    gpus, true = 'resource="nvidia_com_gpu"', 'status="true"'
    out = {
        "allocatable": on(lambda m: f"kube_node_status_allocatable{{{_and(m, gpus)}}}", "node"),
        "node_conditions": on(lambda m: f"kube_node_status_condition{{{_and(m, true)}}}", "node"),
    }
    if gpu_metric:
        # The plain selector, not ``timestamp(...)``: Prometheus 2.x selects a series again
        # at every step for ``timestamp`` of a selector (its range evaluation resets each
        # series' iterator per step), which made this the slowest query of an analysis by
        # far (about 30x the plain selector on the lost-GPU incident); :func:`_build`
        # reads the steps that saw each GPU, and the service's own GPUs' exact sample
        # times from their raw samples.
        out["gpu_ts"] = " or ".join(
            on(lambda m: f"{gpu_metric}{{{m}}}", lab) for lab in ("Hostname", "hostname")
        )
    if xid_metric:
        # Only the steps with an Xid (``> 0``): :func:`cockpit.analysis.history.xid_items`
        # reads nothing else, and a GPU's presence is read from ``gpu_ts``. The zeros of
        # every GPU at every step were the second-largest answer of an analysis (16 GPUs
        # x 1,000 steps on the lost-GPU incident, 212 kB and 14 ms of the server's CPU;
        # 0.5 kB and 5 ms without them).
        out["xid"] = " or ".join(
            on(lambda m: f"max_over_time({xid_metric}{{{m}}}[{int(step)}s]) > 0", lab)
            for lab in ("Hostname", "hostname")
        )
    return out


def _last_value_specs(det: object, window: Window, on: OnNodes) -> dict[str, QuerySpec]:
    """One instant query of the last value over the window of every GPU on the window's
    nodes, for every signal of :data:`LAST_VALUE_SIGNALS` at once (one selector of their
    metric names: ``last_over_time`` keeps ``__name__``, so each answer row tells its
    signal; the nodes' join is evaluated once, not once per signal). Those of the GPUs
    that went silent are kept: :func:`_place_last_values`."""
    names = _last_value_metrics(det)
    if not names:
        return {}
    span = int(window.span.total_seconds())
    sel = f'__name__=~"{_regex(list(names))}"'

    def last_of(m: str) -> str:
        return f"last_over_time({{{_and(sel, m)}}}[{span}s])"

    query = " or ".join(on(last_of, lab) for lab in ("Hostname", "hostname"))
    return {"last": QuerySpec(key="last", query=query, kind="instant", end=window.end)}


def _last_value_metrics(det: object) -> dict[str, list[str]]:
    """The detected metric of each signal of :data:`LAST_VALUE_SIGNALS`: the signals by
    metric name, in the signals' order."""
    out: dict[str, list[str]] = {}
    for sid in LAST_VALUE_SIGNALS:
        r = det.get(sid)  # type: ignore[attr-defined]
        if r is not None and r.available and r.metric:
            out.setdefault(r.metric, []).append(sid)
    return out


def _place_last_values(inv: WindowInventory, results: dict[str, QueryResult], det: object) -> None:
    """Keep, for each GPU that went silent, its last values from the answer of
    :func:`_last_value_specs` (its series by UUID, else by node and index; the first one
    of each metric as Prometheus lists them)."""
    signals = _last_value_metrics(det)
    for g in inv.silent_gpus():
        placed: set[str] = set()
        for res in results.values():
            for row in res.vector:
                if not _is_gpu(row.labels, g):
                    continue
                for sid in signals.get(row.labels.get("__name__", ""), []):
                    if sid in placed:
                        continue
                    placed.add(sid)
                    # dcgm-exporter's Xid counter names its code in a label; the gauge
                    # holds it.
                    code = row.labels.get("xid", "")
                    xid = sid == "hardware.xid" and code.isdigit()
                    g.last_values[sid] = float(code) if xid else row.v


def _is_gpu(labels: dict[str, str], g: GpuEntity) -> bool:
    """The series' labels are those of GPU ``g`` (as :func:`_last_values` selects it)."""
    if g.uuid.startswith("GPU-"):
        return labels.get("UUID") == g.uuid
    return labels.get("Hostname") == g.node and labels.get("gpu") == g.index


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
