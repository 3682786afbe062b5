"""Screen A: the service's golden signals now vs baseline, and the first SLO breach.

Seed 000 step A: latency P50/P95/P99/max, QPS, tokens/s, error rate and GPU
utilization, each with a sparkline, against the same window one day earlier when the data
has it, else the quiet hours before the impact; the first SLO breach is offered as the
impact start.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from cockpit.analysis.alerts import FiredAlert
from cockpit.analysis.golden import (
    Breach,
    SignalSummary,
    apply_slo,
    derive_slo_error_pct,
    derive_slo_p99_ms,
)
from cockpit.analysis.profiles import Detection
from cockpit.collect.base import (
    Window,
    detection_for,
    make_window,
    runner_for,
    scope_for,
)
from cockpit.collect.signals import LATENCY_STATS, PlannedSignal, collect_summaries, plan
from cockpit.i18n import t
from cockpit.timeparse import parse_duration

if TYPE_CHECKING:
    from cockpit.config import ServiceSettings
    from cockpit.context import AppContext
    from cockpit.incident import PagedBy, TimelineEntry

GOLDEN_CHOICES: dict[str, tuple[str, ...]] = {
    "latency": ("access.latency", "serving.e2e_latency", "serving.ttft"),
    "qps": ("access.qps", "serving.qps"),
    "gen_tps": ("serving.gen_tps",),
    "prompt_tps": ("serving.prompt_tps",),
    "errors": ("access.error_ratio_5xx", "serving.error_ratio"),
    "gpu_util": ("hardware.gpu_util",),
}
"""For each golden row, the canonical signals in order of preference (first available):
what users see at the gateway first, the serving engine's view when there is no gateway."""


class GoldenSignals(BaseModel):
    """What screen A shows.

    Attributes:
        rows: Summaries in display order (latency stats, QPS, tokens/s, errors, GPU util).
        window: Window and the baseline used.
        baseline_note: Why the baseline fell back to the quiet window, if it did;
            ``baseline_from``: the baseline asked for then (``1d``/``7d``).
        breach: The first SLO breach in the window (``None`` when none).
        slo_p99_ms, slo_error_pct: The SLOs used; ``slo_derived`` when from the baseline.
        profiles: Detected profiles.
        alerts: Alerts that fired in the window, earliest first (the first one is the
            offered detection time); ``alerts_error`` when the ALERTS query failed.
        slowest_s, queries: The slowest of its range queries (s) and how many ran.
    """

    rows: list[SignalSummary] = Field(default_factory=list)
    window: Window
    alerts: list[FiredAlert] = Field(default_factory=list)
    alerts_error: str = ""
    baseline_note: str = ""
    baseline_from: str = ""
    breach: Breach | None = None
    slo_p99_ms: float | None = None
    slo_error_pct: float | None = None
    slo_derived: bool = False
    profiles: list[str] = Field(default_factory=list)
    slowest_s: float = 0.0
    queries: int = 0


def choose(det: Detection, choices: tuple[str, ...]) -> str:
    """The first available signal of ``choices``; else the first one defined; else the first."""
    for sid in choices:
        r = det.get(sid)
        if r is not None and r.available:
            return sid
    for sid in choices:
        if det.get(sid) is not None or sid in det.unsupported:
            return sid
    return choices[0]


def golden_window(ctx: AppContext, span: str = "2h") -> Window:
    """The default screen-A window ending at the context clock's now."""
    kind = ctx.settings.baseline if ctx.settings.baseline in ("1d", "7d", "quiet") else "1d"
    return make_window(ctx.clock.now(), parse_duration(span), kind)  # type: ignore[arg-type]


def golden_plan(
    det: Detection, scope: dict[str, str], window: Window, lang: str
) -> tuple[list[PlannedSignal], dict[str, str]]:
    """Screen A's rows: the chosen signal of each :data:`GOLDEN_CHOICES` row (latency with
    its four stats, or Triton's average), TTFT P99 beside a gateway or end-to-end latency
    when the engine exports it (its paged SLI), and a "missing" row for a signal no profile
    defines.

    Returns:
        ``(planned rows, {row: chosen signal id})``.
    """
    chosen = {row: choose(det, ids) for row, ids in GOLDEN_CHOICES.items()}
    stats: dict[str, tuple[str, ...]] = {chosen["latency"]: LATENCY_STATS}
    if det.get(chosen["latency"]) is not None and det.signals[chosen["latency"]].spec.average_only:
        stats[chosen["latency"]] = ("avg",)
    ids = [chosen[k] for k in ("latency", "qps", "gen_tps", "prompt_tps", "errors", "gpu_util")]
    ttft = det.get("serving.ttft")
    if (
        chosen["latency"] != "serving.ttft"
        and ttft is not None
        and ttft.available
        and ttft.spec.kind == "histogram"
    ):
        # The engine's paged SLI beside what users see at the gateway (seed 000 场景四).
        ids.insert(1, "serving.ttft")
        stats["serving.ttft"] = ("p99",)
    planned = plan(det, scope, window, ids, lang, stats)
    # A signal no profile defines still gets a row that says it is missing.
    planned_ids = {p.signal for p in planned}
    for sid in ids:
        if sid not in planned_ids:
            planned.append(
                PlannedSignal(
                    key=f"{sid}:value",
                    signal=sid,
                    stat="value",
                    missing=[f"({sid})"],
                    enable=t("evidence.no_profile", lang),
                )
            )
    return planned, chosen


async def collect_golden(ctx: AppContext, window: Window | None = None) -> GoldenSignals:
    """Collect screen A's golden signals.

    Raises:
        SourceError: when the metric-name listing fails (nothing can be planned); individual
            query failures become per-row ``unknown`` readings instead.
    """
    window = window or golden_window(ctx)
    det = await detection_for(ctx, window.end)
    planned, chosen = golden_plan(det, await scope_for(ctx), window, ctx.lang)
    from cockpit.collect.alerts import collect_alerts
    from cockpit.sources.base import SourceError

    async def alerts() -> tuple[list[FiredAlert], str]:
        try:
            return await collect_alerts(ctx, window), ""
        except SourceError as exc:
            return [], f"{exc.failure.kind.value}: {exc.failure.message}"

    res, (fired, alerts_error) = await asyncio.gather(
        collect_summaries(runner_for(ctx), planned, window, empty=ctx.metrics.empty_spans),
        alerts(),
    )
    out = GoldenSignals(
        rows=res.summaries,
        window=res.window,
        baseline_note=res.baseline_note,
        baseline_from=res.baseline_from,
        profiles=det.profiles,
        alerts=fired,
        alerts_error=alerts_error,
        slowest_s=res.slowest_s,
        queries=res.queries,
    )
    out.slo_p99_ms, out.slo_error_pct, out.slo_derived, out.breach = apply_slos(
        res.summaries, chosen, ctx.settings.service
    )
    out.breach = offered_start(out.breach, fired)
    return out


def offered_start(breach: Breach | None, alerts: list[FiredAlert]) -> Breach | None:
    """The impact start to offer: the first SLO breach, or, when an alert fired before it,
    that alert's time (the impact cannot start after it was detected; seed 000 step A),
    with ``alert`` naming it and ``crossed_at`` keeping when the SLO was crossed."""
    if breach is None or not alerts or alerts[0].first >= breach.at:
        return breach
    first = alerts[0]
    return breach.model_copy(
        update={"at": first.first, "alert": first.name, "crossed_at": breach.at}
    )


def apply_slos(
    rows: list[SignalSummary], chosen: dict[str, str], svc: ServiceSettings
) -> tuple[float | None, float | None, bool, Breach | None]:
    """Hold the SLIs among ``rows`` to their SLOs (:func:`~cockpit.analysis.golden.apply_slo`):
    the latency P99 (or Triton's average) to ``svc.slo_p99_ms`` or baseline × 1.5, TTFT P99
    (the paged SLI of a serving engine) to its own baseline × 1.5, the error ratio to
    ``svc.slo_error_ratio`` or baseline × 3 (at least 1 %).

    Returns:
        ``(latency SLO ms, error SLO %, derived, earliest breach)``; ``derived`` is true
        when either SLO comes from the baseline (none configured).
    """
    p99 = next(
        (
            s
            for s in rows
            if s.signal == chosen["latency"] and s.stat in ("p99", "avg") and s.unit == "ms"
        ),
        None,
    )
    err = next((s for s in rows if s.signal == chosen["errors"]), None)
    ttft = next(
        (s for s in rows if s.key == "serving.ttft:p99" and s is not p99 and s.unit == "ms"),
        None,
    )
    slo_ms = derive_slo_p99_ms(svc.slo_p99_ms, p99.baseline.value if p99 else None)
    slo_err = derive_slo_error_pct(svc.slo_error_ratio, err.baseline.value if err else None)
    found: list[Breach | None] = []
    if p99 is not None:
        found.append(apply_slo(p99, slo_ms, signal="latency_p99", derived=svc.slo_p99_ms is None))
    if ttft is not None:
        slo_ttft = derive_slo_p99_ms(None, ttft.baseline.value)
        found.append(apply_slo(ttft, slo_ttft, signal="ttft_p99", derived=True))
    if err is not None:
        found.append(
            apply_slo(err, slo_err, signal="error_ratio", derived=svc.slo_error_ratio is None)
        )
    breaches = [b for b in found if b is not None]
    derived = svc.slo_p99_ms is None or svc.slo_error_ratio is None
    return slo_ms, slo_err, derived, min(breaches, key=lambda b: b.at) if breaches else None


def paged_fired(alerts: list[FiredAlert], paged: PagedBy | None) -> FiredAlert | None:
    """The fired alert that is the one the incident started from (``paged``): same name,
    and each of its labels as ``paged`` has it (Alertmanager adds external labels that
    ``ALERTS`` lacks); None when it did not fire in the window or nothing paged."""
    if paged is None:
        return None
    return next(
        (
            a
            for a in alerts
            if a.name == paged.name and all(paged.labels.get(k) == v for k, v in a.labels.items())
        ),
        None,
    )


def paged_recorded(paged: PagedBy | None) -> bool:
    """Whether the alert that paged went onto the timeline at its firing time when the
    incident started from it (:meth:`cockpit.session.IncidentSession.start_from_alert`):
    it was not pending then and its firing start was known."""
    return paged is not None and paged.state != "pending" and paged.starts_at is not None


def timeline_alerts(
    alerts: list[FiredAlert], paged: PagedBy | None, timeline: list[TimelineEntry]
) -> list[FiredAlert]:
    """The fired alerts still to put on the incident timeline: not the alert that paged
    when choosing it already put it there (:func:`paged_recorded`; matched by
    :func:`paged_fired`, name and labels), nor one already there at its time."""
    skip = paged_fired(alerts, paged) if paged_recorded(paged) else None
    known = {(e.at, e.text) for e in timeline}
    return [a for a in alerts if a is not skip and (a.first, a.text()) not in known]


def offered_alert(alerts: list[FiredAlert], paged: PagedBy | None = None) -> FiredAlert | None:
    """The alert whose time is offered as the detection time (A's button, I's back-test):
    the one the incident started from (``paged``) when it fired in the window, else the
    first one; None without alerts. The alert that paged keeps the firing time it was
    chosen with (``paged.starts_at``, e.g. before this window began) as its ``first``, so
    every screen offers the one detection time step A holds."""
    a = paged_fired(alerts, paged)
    if a is not None and paged is not None and paged_recorded(paged):
        return a.model_copy(update={"first": paged.starts_at})
    if a is not None:
        return a
    return alerts[0] if alerts else None
