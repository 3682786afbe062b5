"""Step I's data: the golden signals over a window that covers the hold period, turned
into :class:`~cockpit.analysis.recovery.RecoverySignal` for the pure check.

Which signals count: every golden row (screen A) and every drilldown signal (screen C:
queue, KV cache, temperature, clocks…) that left its baseline band at some point of the
window, or is anomalous now ("every signal that was anomalous", seed 000 step I): the
cause must be gone too, not only the symptom at the gateway. Every row steps A and C judge
anomalous is checked, whatever its signal, utilization rows (GPU utilization, SM activity,
KV cache usage) included: the recovery reads their one verdict per signal, so a busy GPU
is a failure of recovery exactly when C calls it anomalous, never otherwise ("GPU 利用率瞬时
100% 并不一定是瓶颈", seed 003: C's band, not a fixed 100 %, decides).
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from cockpit.analysis.recovery import (
    DEFAULT_TOLERANCE,
    DEMAND_SIGNALS,
    Direction,
    LineStatus,
    RecoveryLine,
    RecoveryResult,
    RecoverySignal,
    check_recovery,
)
from cockpit.models import Sample, Series
from cockpit.models.messages import Msg

if TYPE_CHECKING:
    from cockpit.analysis.golden import SignalSummary
    from cockpit.context import AppContext

_LOWER_IS_WORSE = ("qps", "tps", "throughput")
WORK_DONE = frozenset({"serving.gen_tps"})
"""Throughput the service produces (output tokens/s): checked against a lower bound only.
Fewer tokens out than the baseline is a failure to recover; more is the service answering
more demand (arrivals up: QPS and prompt tokens/s are context, :data:`DEMAND_SIGNALS`),
never a reason to call it unrecovered. Longer answers per request (a release) are the
output length's own row, which stays two-sided."""


def _serving_more(row: SignalSummary) -> bool:
    """A :data:`WORK_DONE` row at or above its baseline now: the service answering more
    demand, context beside the demand rows (C may call the move anomalous: it is on the
    side that is no failure of the service)."""
    now, base = row.now.value, row.baseline.value
    return row.signal in WORK_DONE and now is not None and base is not None and now >= base


def _direction(row: SignalSummary) -> Direction:
    """The bad side of a row: from its signal's profile entry (``bad = "down"`` for
    clocks, throughput, batch size; for ``bad = "both"``, such as running requests, the
    side the row moved further from its baseline on, so that a drop is checked against a
    lower bound); for a signal no profile knows, lower is worse for rates of work."""
    from cockpit.models.signals import SIGNALS

    info = SIGNALS.get(row.signal)
    if row.signal in WORK_DONE:
        return Direction.LOWER_IS_WORSE
    if info is None:
        name = row.signal.split(".")[-1]
        if any(k in name for k in _LOWER_IS_WORSE):
            return Direction.LOWER_IS_WORSE
        return Direction.HIGHER_IS_WORSE
    base = row.baseline.value
    if info.bad == "both" and base is not None and row.spark:
        if base - min(row.spark) > max(row.spark) - base:
            return Direction.LOWER_IS_WORSE
        return Direction.HIGHER_IS_WORSE
    return Direction.LOWER_IS_WORSE if info.bad == "down" else Direction.HIGHER_IS_WORSE


def _noise(row: SignalSummary, direction: Direction) -> float | None:
    """The baseline window's 95th-percentile sample on the bad side (5th for
    lower-is-worse): how far the baseline itself strayed."""
    values = sorted(v for v in row.baseline_spark if v == v)
    if not values:
        return None
    i = round(0.95 * (len(values) - 1))
    return values[i] if direction is Direction.HIGHER_IS_WORSE else values[len(values) - 1 - i]


def _left_band(row: SignalSummary, sig: RecoverySignal) -> bool:
    """The row left its band at some point of the window."""
    from cockpit.analysis.recovery import limit_of, within

    limit = limit_of(sig)
    if limit is None or not row.spark:
        return False
    return any(not within(sig, v, limit) for v in row.spark)


def verdict_now(row: SignalSummary) -> str:
    """The verdict of the row's current value: its own verdict, except that a sustained
    SLO breach earlier in the window (:func:`cockpit.analysis.golden.apply_slo`, which makes
    the whole row ``anomalous`` for steps A and C) no longer counts once the value is back
    under the SLO; the value is then judged against its baseline alone
    (:func:`cockpit.analysis.golden.judge_msg`). Without a current value the row's verdict
    stands (no data is never recovery)."""
    from cockpit.analysis.golden import judge_msg

    now = row.now.value
    if row.slo_breach_at is None or row.slo is None or now is None or now > row.slo:
        return row.verdict
    return judge_msg(row.signal, now, row.baseline.value, row.unit)[0]


def signals_from_golden(
    rows: list[SignalSummary],
    tolerance: float = DEFAULT_TOLERANCE,
    lang: str = "en",
    absent: dict[str, list[Msg]] | None = None,
) -> list[RecoverySignal]:
    """Recovery signals for the golden rows that steps A and C call anomalous or that left
    their band (see module docstring),
    each held to the drilldown's threshold and carrying the verdict steps A and C give it;
    demand rows (requests/s, prompt tokens/s) come along as context.

    A row with no data still counts when it has a baseline: no data is not recovery.
    ``absent`` (layer → entities silent now, :func:`cockpit.analysis.history.absent_msgs`)
    marks each row of that layer absent: a GPU that stopped reporting is never recovered.
    """
    from cockpit.models.signals import SIGNALS

    out: list[RecoverySignal] = []
    for row in rows:
        judged = row.verdict == "anomalous" or verdict_now(row) == "anomalous"
        if row.baseline.value is None and not row.spark:
            continue
        direction = _direction(row)
        known = row.signal in SIGNALS
        sig = RecoverySignal(
            name=row.label(lang),
            key=row.key,
            unit=row.unit,
            baseline=row.baseline.value,
            series=Series(
                samples=[Sample(t=t, v=v) for t, v in zip(row.spark_t, row.spark, strict=False)]
            ),
            direction=direction,
            tolerance=tolerance,
            query=row.query,
            signal_id=row.signal if known else "",
            baseline_noise=_noise(row, direction) if known else None,
            verdict_now=verdict_now(row),
            context=row.signal in DEMAND_SIGNALS or _serving_more(row),
            slo=row.slo,
            absent=(absent or {}).get(row.layer, []),
            now=row.now.value,
            lowest_bound=row.lowest_bound,
        )
        quiet = (
            row.spark and not judged and sig.verdict_now != "anomalous" and not _left_band(row, sig)
        )
        if quiet and not sig.context:
            continue
        out.append(sig)
    return out


async def fetch_recovery(ctx: AppContext, hold_minutes: int) -> RecoveryResult:
    """Collect the golden and drilldown signals over ``max(2 h, 3 × hold)`` ending now and
    check them (a failed drilldown leaves the golden signals alone to decide).

    Raises:
        SourceError: when nothing could be planned (metric names unavailable).
    """
    import asyncio

    from cockpit.collect import steps
    from cockpit.collect.base import make_window
    from cockpit.collect.drilldown import collect_drilldown

    span = max(timedelta(hours=2), timedelta(minutes=3 * hold_minutes))
    kind = ctx.settings.baseline if ctx.settings.baseline in ("1d", "7d", "quiet") else "1d"
    from cockpit.analysis.history import absent_msgs
    from cockpit.collect.history import collect_history

    window = make_window(ctx.clock.now(), span, kind)  # type: ignore[arg-type]
    golden, drill, hist = await asyncio.gather(
        steps.golden(ctx, window),
        collect_drilldown(ctx, window),
        collect_history(ctx, window),
        return_exceptions=True,
    )
    if isinstance(golden, BaseException):
        raise golden
    rows = list(golden.rows)
    if not isinstance(drill, BaseException):
        # The same signal on both screens is checked once (screen A's row).
        seen = {r.key for r in rows} | {r.signal for r in rows}
        rows += [s for s in drill.drilldown.summaries if s.key not in seen and s.signal not in seen]
    # a GPU that stopped reporting in the window is absent, never recovered
    absent = {} if isinstance(hist, BaseException) else absent_msgs(hist.inventory)
    signals = signals_from_golden(rows, lang=ctx.lang, absent=absent)
    return check_recovery(signals, ctx.clock.now(), hold_minutes)


def line_text(line: RecoveryLine, lang: str) -> str:
    """Step I's sentence for one line in ``lang`` (``✓ P99 latency: last 412 ms, …``).

    A signal step C also judges by a fixed threshold (85 °C for a GPU) names it, the rule
    of C's verdict. The bound is named "SLO" when it is the SLO steps A and C hold the
    signal to; a
    baseline band stricter than that SLO keeps the name of a bound and says so, with the
    SLO beside it (a value over the band is anomalous on steps A and C, so it is not
    recovered either).
    """
    from cockpit.i18n import fmt_value, t
    from cockpit.models.messages import signal_label, unit_text
    from cockpit.timeparse import fmt_time

    unit = unit_text(line.unit, lang)

    def with_unit(value: float | None) -> str:
        # a unitless signal (a flag, a count) has no space before the next comma
        return f"{fmt_value(value)} {unit.strip()}".rstrip()

    if line.status is LineStatus.ABSENT:
        return t(
            "verify.line.absent",
            lang,
            name=signal_label(line.key, lang) if line.key else line.name,
            absent="; ".join(m.text(lang) for m in line.absent),
        )
    at_slo = line.slo is not None and line.limit is not None and line.limit >= line.slo
    status = line.status.value
    if line.status is LineStatus.CONTEXT and line.key.partition(":")[0] in WORK_DONE:
        status = "context_work"  # more output than the baseline: not demand itself
    text = t(
        f"verify.line.{status}",
        lang,
        bound=t("verify.bound.slo" if at_slo else f"verify.bound.{line.direction.value}", lang),
        name=signal_label(line.key, lang) if line.key else line.name,
        last=with_unit(line.last),
        worst=with_unit(line.worst_in_hold),
        baseline=with_unit(line.baseline),
        limit=with_unit(line.limit),
        since=fmt_time(line.within_since),
    )
    if line.slo is not None and line.limit is not None and not at_slo:
        text += t("verify.band_under_slo", lang, slo=with_unit(line.slo))
    if line.ceiling is not None and line.status is not LineStatus.CONTEXT:
        text += t("verify.ceiling", lang, ceiling=with_unit(line.ceiling))
    return text
