"""Step I: has every signal that was anomalous come back within its baseline, and stayed
there for the hold period the user set (default 15 min)?

Source of the rule: seed ``000`` flowchart "验证恢复并记录" and seed ``003`` (compare in the
same window; thresholds relative to the baseline, "告警阈值基于基线而非固定值").
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum

from pydantic import BaseModel, Field

from cockpit.models import Series, from_epoch, to_epoch
from cockpit.models.messages import Msg

DEFAULT_TOLERANCE = 0.2
"""Relative band around the baseline counted as "back to normal" (±20 %) for a signal no
profile knows. A known signal's band is the drilldown's own threshold
(:func:`band_limit`), so that step I and step C never disagree on what is normal."""

DEMAND_SIGNALS = frozenset({"access.qps", "serving.qps", "serving.prompt_tps"})
"""Demand: how much the clients ask (requests/s, prompt tokens/s in). Step I shows them as
context; they never decide a recovery (traffic that has not come back is the clients'
doing, not the service's; seed 000 step I checks the service's signals)."""


class Direction(StrEnum):
    """Which side of the baseline is bad."""

    HIGHER_IS_WORSE = "higher_is_worse"  # latency, errors, queue, temperature
    LOWER_IS_WORSE = "lower_is_worse"  # throughput, batch size


class RecoverySignal(BaseModel):
    """One signal to check.

    Attributes:
        name: Display name (``"P99 latency"``).
        key: The signal key (``access.latency:p99``) when it is a known signal, so that
            its name can be given in any language.
        unit: Unit of ``baseline`` and the series values.
        baseline: Baseline value (same window one day earlier, or the quiet hours).
        series: Recent samples, covering at least the hold period.
        direction: Which side of the baseline is bad.
        tolerance: Relative band (0.2 = within 20 % of the baseline on the bad side), for a
            signal without ``signal_id``.
        query: PromQL behind the series (kept for the evidence).
        signal_id: The canonical signal (``access.latency``): its band is the drilldown's
            threshold (:func:`band_limit`), widened to the baseline's own noise.
        baseline_noise: The baseline window's 95th-percentile sample on the bad side (its
            5th for lower-is-worse): a sample no worse than the baseline itself often was
            is within the band.
        verdict_now: The verdict of the signal's current value, as steps A and C judge it
            (:func:`cockpit.collect.recovery.verdict_now`: an SLO breach earlier in the
            window no longer counts once the value is back under the SLO): ``anomalous``
            is never recovered here.
        context: Demand (:data:`DEMAND_SIGNALS`): shown, never deciding.
        slo: The SLO the signal is held to on steps A and C (display unit; the row's
            :attr:`~cockpit.analysis.golden.SignalSummary.slo`), when it is an SLI: the
            band never reaches past it (:func:`limit_of`).
        absent: The entities whose series of this signal stopped reporting in the window
            (a lost GPU: :func:`cockpit.analysis.history.absent_msgs`), each said with when
            it stopped and its last values: the signal is never recovered while one is
            absent (what the others report says nothing of it).
        now: The value now as steps A and C show it (the row's instant reading at the
            window's end); the line's ``last`` is this number when given, so step I never
            quotes another value than A and C (the series' last point may sit a few
            seconds before the end).
        lowest_bound: For a histogram quantile, its lowest bucket's bound (the row's
            :attr:`~cockpit.analysis.golden.SignalSummary.lowest_bound`): a value inside
            that bucket is only known to be at most it, so the band never ends below it.
    """

    name: str
    key: str = ""
    unit: str = ""
    baseline: float | None
    series: Series
    direction: Direction = Direction.HIGHER_IS_WORSE
    tolerance: float = DEFAULT_TOLERANCE
    query: str = ""
    signal_id: str = ""
    baseline_noise: float | None = None
    verdict_now: str = ""
    context: bool = False
    slo: float | None = None
    absent: list[Msg] = Field(default_factory=list)
    now: float | None = None
    lowest_bound: float | None = None


class LineStatus(StrEnum):
    """Per-signal outcome (``context``: demand, shown beside the others, deciding nothing)."""

    RECOVERED = "recovered"
    NOT_RECOVERED = "not_recovered"
    NO_DATA = "no_data"
    CONTEXT = "context"
    ABSENT = "absent"


class RecoveryLine(BaseModel):
    """Outcome for one signal, with the numbers behind it (``verdict_now``: the signal's
    verdict in steps A and C, which the line never contradicts; ``slo``: the SLO those
    steps hold it to, when it is an SLI, which ``limit`` never exceeds; ``absent``: the
    entities that stopped reporting, status ``absent``; ``ceiling``: the value at or
    above which step C's rule for the signal calls it anomalous whatever the baseline
    (:attr:`cockpit.analysis.golden.Threshold.ceiling`), the same rule ``limit`` is capped
    by, so that the line names C's threshold)."""

    name: str
    key: str = ""
    unit: str
    status: LineStatus
    direction: Direction = Direction.HIGHER_IS_WORSE
    baseline: float | None
    limit: float | None
    last: float | None
    worst_in_hold: float | None
    within_since: datetime | None
    verdict_now: str = ""
    slo: float | None = None
    absent: list[Msg] = Field(default_factory=list)
    ceiling: float | None = None


def ceiling_of(sig: RecoverySignal) -> float | None:
    """Step C's fixed threshold for a known higher-is-worse signal (``85`` °C for the GPU
    temperature), ``None`` when its rule has none."""
    from cockpit.analysis.golden import threshold_for

    if not sig.signal_id or sig.direction is not Direction.HIGHER_IS_WORSE:
        return None
    return threshold_for(sig.signal_id).ceiling


class RecoveryResult(BaseModel):
    """Outcome of the check.

    Attributes:
        recovered: True when every signal is back; False when one is not; None when any
            signal has no data (no data is never "healthy").
        recovered_at: Earliest time from which every signal stayed within its band.
        lines: One per signal.
    """

    recovered: bool | None
    recovered_at: datetime | None
    hold_minutes: int
    lines: list[RecoveryLine]


def band_limit(signal_id: str, baseline: float, direction: Direction) -> float:
    """The worst value a known signal may take and still be judged normal by the
    drilldown (:func:`cockpit.analysis.golden.judge_msg` with the signal's
    :class:`~cockpit.analysis.golden.Threshold`): above the baseline by its ``up`` ratio and
    ``min_delta`` (capped by its ``ceiling``), below it by its ``down`` ratio and
    ``min_delta``; a side the threshold never judges gets the ratio ×2 of a "changed" value.
    """
    from cockpit.analysis.golden import CHANGED_RATIO, threshold_for

    th = threshold_for(signal_id)
    if direction is Direction.HIGHER_IS_WORSE:
        ratio = th.up if th.up is not None else CHANGED_RATIO
        limit = max(baseline * ratio, baseline + th.min_delta)
        return min(limit, th.ceiling) if th.ceiling is not None else limit
    ratio = th.down if th.down is not None else 1.0 / CHANGED_RATIO
    return min(baseline * ratio, baseline - th.min_delta)


def limit_of(sig: RecoverySignal) -> float | None:
    """The band's limit on the bad side (``None`` without a baseline): the drilldown's
    threshold for a known signal (:func:`band_limit`), else ``tolerance`` around the
    baseline; widened to ``baseline_noise`` and, for a quantile, to its histogram's
    lowest bound (``lowest_bound``); for an SLI, never past its SLO (the SLO steps A
    and C hold it to: a value over it is never recovered)."""
    if sig.baseline is None:
        return None
    higher = sig.direction is Direction.HIGHER_IS_WORSE
    if sig.signal_id:
        limit = band_limit(sig.signal_id, sig.baseline, sig.direction)
    else:
        limit = sig.baseline * (1 + sig.tolerance if higher else 1 - sig.tolerance)
    if sig.baseline_noise is not None:
        limit = max(limit, sig.baseline_noise) if higher else min(limit, sig.baseline_noise)
    if sig.lowest_bound is not None and higher:
        # inside the lowest bucket a quantile reads as the bucket's interpolation (150 to
        # 300 ms for a P50 in vLLM's 0.3 s queue-time bucket): as low as it can be told
        limit = max(limit, sig.lowest_bound)
    if sig.slo is not None and higher:
        limit = min(limit, sig.slo)
    return limit


def within(sig: RecoverySignal, value: float, limit: float) -> bool:
    """``value`` is on the good side of ``limit``."""
    if sig.direction is Direction.HIGHER_IS_WORSE:
        return value <= limit
    return value >= limit


def check_recovery(
    signals: list[RecoverySignal], now: datetime, hold_minutes: int = 15
) -> RecoveryResult:
    """Check every signal over ``[now - hold, now]``.

    A signal counts as recovered when it has samples in the hold window, all of them are
    inside the band, and steps A and C do not call it anomalous now; its ``within_since``
    is the start of the final unbroken in-band run. Demand signals (``context``) are
    reported with status ``context`` and decide nothing. A signal with an entity that
    stopped reporting (``absent``) is ``absent``: not recovered, whatever the others show.
    """
    hold_start = to_epoch(now - timedelta(minutes=hold_minutes))
    end = to_epoch(now)
    lines: list[RecoveryLine] = []
    for sig in signals:
        limit = limit_of(sig)
        pts = [s for s in sig.series.samples if s.t <= end and s.v == s.v]
        hold = [s for s in pts if s.t >= hold_start]
        if limit is None or not hold:
            lines.append(
                RecoveryLine(
                    name=sig.name,
                    key=sig.key,
                    unit=sig.unit,
                    direction=sig.direction,
                    status=LineStatus.CONTEXT
                    if sig.context
                    else LineStatus.ABSENT
                    if sig.absent
                    else LineStatus.NO_DATA,
                    absent=sig.absent,
                    verdict_now=sig.verdict_now,
                    slo=sig.slo,
                    ceiling=ceiling_of(sig),
                    baseline=sig.baseline,
                    limit=limit,
                    last=sig.now if sig.now is not None else pts[-1].v if pts else None,
                    worst_in_hold=None,
                    within_since=None,
                )
            )
            continue
        worst = (
            max(s.v for s in hold)
            if sig.direction is Direction.HIGHER_IS_WORSE
            else min(s.v for s in hold)
        )
        since: float | None = None
        for s in reversed(pts):
            if within(sig, s.v, limit):
                since = s.t
            else:
                break
        ok = all(within(sig, s.v, limit) for s in hold) and sig.verdict_now != "anomalous"
        status = LineStatus.RECOVERED if ok else LineStatus.NOT_RECOVERED
        if sig.absent:
            status = LineStatus.ABSENT
        lines.append(
            RecoveryLine(
                name=sig.name,
                key=sig.key,
                unit=sig.unit,
                direction=sig.direction,
                status=LineStatus.CONTEXT if sig.context else status,
                absent=sig.absent,
                verdict_now=sig.verdict_now,
                slo=sig.slo,
                ceiling=ceiling_of(sig),
                baseline=sig.baseline,
                limit=limit,
                last=sig.now if sig.now is not None else pts[-1].v,
                worst_in_hold=worst,
                within_since=from_epoch(since) if since is not None else None,
            )
        )
    deciding = [line for line in lines if line.status is not LineStatus.CONTEXT]
    if any(line.status is LineStatus.NO_DATA for line in deciding) or not deciding:
        recovered: bool | None = None
    else:
        recovered = all(line.status is LineStatus.RECOVERED for line in deciding)
    recovered_at = None
    if recovered:
        recovered_at = max(line.within_since for line in deciding if line.within_since is not None)
    return RecoveryResult(
        recovered=recovered, recovered_at=recovered_at, hold_minutes=hold_minutes, lines=lines
    )
