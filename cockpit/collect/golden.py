"""Screen A: the service's golden signals now vs baseline, and the first SLO breach.

Seed 000 step A: latency P50/P95/P99/max, QPS, tokens/s, error rate and GPU
utilization, each with a sparkline, against the same window one day earlier when the data
has it, else the quiet hours before the impact; the first SLO breach is offered as the
impact start.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from cockpit.analysis.alerts import FiredAlert
from cockpit.analysis.golden import (
    Breach,
    SignalSummary,
    derive_slo_error_pct,
    derive_slo_p99_ms,
    first_breach,
)
from cockpit.analysis.profiles import Detection
from cockpit.collect.base import (
    Window,
    detection_for,
    make_window,
    runner_for,
    scope_for,
)
from cockpit.collect.signals import LATENCY_STATS, collect_summaries, plan
from cockpit.i18n import t
from cockpit.timeparse import parse_duration

if TYPE_CHECKING:
    from cockpit.context import AppContext

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


async def collect_golden(ctx: AppContext, window: Window | None = None) -> GoldenSignals:
    """Collect screen A's golden signals.

    Raises:
        SourceError: when the metric-name listing fails (nothing can be planned); individual
            query failures become per-row ``unknown`` readings instead.
    """
    window = window or golden_window(ctx)
    det = await detection_for(ctx, window.end)
    chosen = {row: choose(det, ids) for row, ids in GOLDEN_CHOICES.items()}
    stats: dict[str, tuple[str, ...]] = {chosen["latency"]: LATENCY_STATS}
    if det.get(chosen["latency"]) is not None and det.signals[chosen["latency"]].spec.average_only:
        stats[chosen["latency"]] = ("avg",)
    ids = [chosen[k] for k in ("latency", "qps", "gen_tps", "prompt_tps", "errors", "gpu_util")]
    planned = plan(det, await scope_for(ctx), window, ids, ctx.lang, stats)
    # A signal no profile defines still gets a row that says it is missing.
    planned_ids = {p.signal for p in planned}
    from cockpit.collect.signals import PlannedSignal

    for sid in ids:
        if sid not in planned_ids:
            planned.append(
                PlannedSignal(
                    key=f"{sid}:value",
                    signal=sid,
                    stat="value",
                    missing=[f"({sid})"],
                    enable=t("evidence.no_profile", ctx.lang),
                )
            )
    from cockpit.collect.alerts import collect_alerts
    from cockpit.sources.base import SourceError

    async def alerts() -> tuple[list[FiredAlert], str]:
        try:
            return await collect_alerts(ctx, window), ""
        except SourceError as exc:
            return [], f"{exc.failure.kind.value}: {exc.failure.message}"

    res, (fired, alerts_error) = await asyncio.gather(
        collect_summaries(runner_for(ctx), planned, window), alerts()
    )
    out = GoldenSignals(
        rows=res.summaries,
        window=res.window,
        baseline_note=res.baseline_note,
        baseline_from=res.baseline_from,
        profiles=det.profiles,
        alerts=fired,
        alerts_error=alerts_error,
    )
    svc = ctx.settings.service
    p99 = next(
        (
            s
            for s in res.summaries
            if s.stat in ("p99", "avg") and s.layer in ("serving", "access") and s.unit == "ms"
        ),
        None,
    )
    err = next((s for s in res.summaries if s.signal == chosen["errors"]), None)
    out.slo_p99_ms = derive_slo_p99_ms(svc.slo_p99_ms, p99.baseline.value if p99 else None)
    out.slo_error_pct = derive_slo_error_pct(
        svc.slo_error_ratio, err.baseline.value if err else None
    )
    out.slo_derived = svc.slo_p99_ms is None or svc.slo_error_ratio is None
    out.breach = earliest_breach(
        p99,
        err,
        out.slo_p99_ms,
        out.slo_error_pct,
        svc.slo_p99_ms is None,
        svc.slo_error_ratio is None,
    )
    return out


def earliest_breach(
    p99: SignalSummary | None,
    err: SignalSummary | None,
    slo_ms: float | None,
    slo_err: float | None,
    ms_derived: bool,
    err_derived: bool,
) -> Breach | None:
    """The earlier of the first latency-SLO and the first error-SLO breach."""
    found: list[Breach] = []
    if p99 is not None and slo_ms is not None and p99.spark:
        b = first_breach(
            p99.spark_t,
            p99.spark,
            slo_ms,
            signal="latency_p99",
            derived=ms_derived,
            query=p99.query,
        )
        if b:
            found.append(b)
    if err is not None and slo_err is not None and err.spark:
        b = first_breach(
            err.spark_t,
            err.spark,
            slo_err,
            signal="error_ratio",
            derived=err_derived,
            query=err.query,
        )
        if b:
            found.append(b)
    return min(found, key=lambda b: b.at) if found else None


def breach_time(g: GoldenSignals) -> datetime | None:
    """The offered impact start (first SLO breach), or ``None``."""
    return g.breach.at if g.breach else None
