"""Alerts on the timeline (``ALERTS``) and the back-test of candidate alert expressions."""

from __future__ import annotations

import math
from datetime import datetime
from typing import TYPE_CHECKING, Any

from cockpit.analysis.alerts import FiredAlert, fired_alerts
from cockpit.analysis.backtest import KV_CACHE_CEILING_PCT, Backtest, Candidate, backtest
from cockpit.analysis.golden import SignalSummary
from cockpit.analysis.profiles import Detection, render
from cockpit.collect.base import Window, detection_for, runner_for, scope_for
from cockpit.collect.runner import QuerySpec
from cockpit.models import from_epoch
from cockpit.models.messages import Msg, msg

if TYPE_CHECKING:
    from cockpit.context import AppContext

ALERTS_QUERY = 'ALERTS{alertstate="firing"}'
ALERTS_STEP_S = 15.0
"""Resolution of the alert timeline: the detection time is read to within 15 s (a common
rule evaluation interval), whatever the window's step, as long as the window allows it
(see :data:`MAX_POINTS`)."""
MAX_POINTS = 11_000
"""Most points a range query may return per series: Prometheus refuses more ("exceeded
maximum resolution of 11,000 points per timeseries", ``web/api/v1/api.go``), so windows
longer than 11,000 × 15 s ≈ 45.8 h read the alerts at a coarser step."""


def alerts_step_s(window: Window) -> float:
    """The step of the alert query for ``window``: :data:`ALERTS_STEP_S` (or the window's
    own step when finer), coarsened so that the window stays within :data:`MAX_POINTS`."""
    span = (window.end - window.start).total_seconds()
    return max(min(window.step_s, ALERTS_STEP_S), math.ceil(span / MAX_POINTS))


def alert_grid(start: datetime, step_s: float) -> datetime:
    """``start`` moved back onto the epoch-aligned grid of ``step_s`` (13:31:45 for
    13:31:52 at 15 s): every reader of ``ALERTS`` (the alert picker,
    step A's alerts, ``analyze``, the back-test) samples it at the same instants, so an
    alert's first firing sample, its detection time, is the same time on every screen
    and on the timeline once, whatever instant each window starts at."""
    t = start.timestamp()
    return from_epoch(math.floor(t / step_s) * step_s)


async def collect_alerts(ctx: AppContext, window: Window) -> list[FiredAlert]:
    """Firing alerts of the service's namespace (see :func:`alert_in_scope`) in the
    window, earliest first.

    Raises:
        SourceError: the query failed.
    """
    step = alerts_step_s(window)
    res = await runner_for(ctx).run(
        [
            QuerySpec(
                key="alerts",
                query=ALERTS_QUERY,
                start=alert_grid(window.start, step),
                end=window.end,
                step_s=step,
            )
        ]
    )
    r = res["alerts"]
    if r.failure is not None:
        from cockpit.sources.base import SourceError

        raise SourceError(r.failure)
    ns = ctx.settings.service.namespace
    return fired_alerts([s for s in r.series if alert_in_scope(s.labels, ns)])


def alert_in_scope(labels: dict[str, str], namespace: str) -> bool:
    """Whether an alert concerns the service's ``namespace``: alerts of another namespace
    are left out; those with no namespace label (a node, a GPU, Prometheus itself) are
    kept, as is everything when no namespace is set. ``exported_namespace`` wins: it is
    the workload's own when the exporter's pod took ``namespace`` (``honor_labels``)."""
    own = labels.get("exported_namespace") or labels.get("namespace")
    return not namespace or not own or own == namespace


def _summary(m: Msg) -> dict[str, Any]:
    """A candidate's summary: English for the rule annotation, the message for the UI."""
    return {"summary": m.text("en"), "summary_msg": m}


def candidates(
    det: Detection,
    scope: dict[str, str],
    window: Window,
    golden: list[SignalSummary],
    slo_error_ratio: float | None = None,
) -> list[Candidate]:
    """Candidate alerts for the detected stack, thresholds from the baseline summaries.

    The error budget is the configured ``slo_error_ratio`` or, as in
    :func:`cockpit.analysis.golden.derive_slo_error_pct`, the baseline × 3 (at least 1 %).
    """
    from cockpit.analysis.golden import derive_slo_error_pct

    out: list[Candidate] = []
    base = {s.key: s.baseline.value for s in golden if s.baseline.ok}
    w = window.rate_window

    def q(sid: str, quantile: float | None = None) -> str | None:
        r = det.get(sid)
        if r is None or not r.available:
            return None
        return render(r, sel=det.selector_for(r, scope), window=w, quantile=quantile)

    if (e := q("serving.queue")) is not None:
        thr = max(10.0, 2 * (base.get("serving.queue:value") or 0.0))
        out.append(
            Candidate(
                id="queue_growth",
                expr=f"{e} > {thr:.6g}",
                **_summary(msg("evidence.alert.queue_growth", threshold=thr)),
            )
        )
    if (e := q("runtime.kv_cache")) is not None:
        out.append(
            Candidate(
                id="kv_cache_high",
                expr=f"{e} >= {KV_CACHE_CEILING_PCT:g}",
                **_summary(msg("evidence.alert.kv_cache_high", ceiling=KV_CACHE_CEILING_PCT)),
            )
        )
    if (e := q("runtime.preemptions")) is not None:
        out.append(
            Candidate(
                id="preemption_rate",
                expr=f"{e} > 0.1",
                **_summary(msg("evidence.alert.preemption_rate")),
            )
        )
    if (e := q("hardware.xid")) is not None:
        out.append(
            Candidate(id="xid", expr=f"{e} > 0", for_s=0, **_summary(msg("evidence.alert.xid")))
        )
    if (e := q("hardware.throttle")) is not None:
        out.append(
            Candidate(
                id="throttle",
                expr=f"{e} > 0",
                **_summary(msg("evidence.alert.throttle")),
            )
        )
    for sid in ("access.latency", "serving.e2e_latency", "serving.ttft"):
        b = base.get(f"{sid}:p99")
        if b and (e := q(sid, 0.99)) is not None:
            out.append(
                Candidate(
                    id="p99_over_baseline",
                    expr=f"{e} > {1.5 * b:.6g}",
                    **_summary(msg("evidence.alert.p99_over_baseline", baseline=b)),
                )
            )
            break
    for sid in ("access.error_ratio_5xx", "serving.error_ratio"):
        if (e := q(sid)) is not None:
            slo = derive_slo_error_pct(slo_error_ratio, base.get(f"{sid}:value")) or 1.0
            out.append(
                Candidate(
                    id="error_burn",
                    expr=f"{e} > {slo:.6g}",
                    **_summary(msg("evidence.alert.error_burn", slo=slo)),
                )
            )
            break
    return out


async def collect_backtest(
    ctx: AppContext,
    window: Window,
    golden: list[SignalSummary],
    impact_start: datetime | None,
    detected_at: datetime | None = None,
) -> Backtest:
    """Back-test the candidates over the window against ``impact_start``."""
    det = await detection_for(ctx, window.end)
    svc = ctx.settings.service
    cands = candidates(det, await scope_for(ctx), window, golden, svc.slo_error_ratio)
    specs = [
        QuerySpec(
            key=f"bt:{c.id}", query=c.expr, start=window.start, end=window.end, step_s=window.step_s
        )
        for c in cands
    ]
    res = await runner_for(ctx).run(specs)
    results = {}
    for c in cands:
        r = res[f"bt:{c.id}"]
        results[c.id] = (
            r.series if r.ok else None,
            "" if r.ok else f"{r.failure.kind.value}: {r.failure.message}" if r.failure else "",
        )
    return backtest(
        cands,
        results,
        window.start,
        impact_start,
        window.step_s,
        svc.deployment or svc.namespace,
        detected_at,
        await _history_events(ctx, window),
        ctx.lang,
    )


async def _history_events(ctx: AppContext, window: Window) -> dict[str, float | None] | None:
    """When the window's history (B's change list, shared) first shows what a candidate
    alerts on: ``xid`` → the first Xid; None when the history could not be read (the
    candidates' own range queries decide then)."""
    from cockpit.collect.history import collect_history

    hist = await collect_history(ctx, window)
    if any("xid" in f.lower() for f in hist.failures):
        return None
    xids = [i.at.timestamp() for i in hist.items if i.kind == "xid" and i.at is not None]
    if not xids and "dcgm" not in hist.inventory.sources:
        return None
    return {"xid": min(xids) if xids else None}
