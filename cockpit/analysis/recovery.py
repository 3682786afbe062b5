"""Step I: has every signal that was anomalous come back within its baseline, and stayed
there for the hold period the user set (default 15 min)?

Source of the rule: seed ``000`` flowchart "验证恢复并记录" and seed ``003`` (compare in the
same window; thresholds relative to the baseline, "告警阈值基于基线而非固定值").
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum

from pydantic import BaseModel

from cockpit.models import Series, from_epoch, to_epoch

DEFAULT_TOLERANCE = 0.2
"""Relative band around the baseline counted as "back to normal" (±20 %). A project
default, chosen to sit above the hour-to-hour noise of the worked example's signals;
configurable per signal."""


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
        tolerance: Relative band (0.2 = within 20 % of the baseline on the bad side).
        query: PromQL behind the series (kept for the evidence).
    """

    name: str
    key: str = ""
    unit: str = ""
    baseline: float | None
    series: Series
    direction: Direction = Direction.HIGHER_IS_WORSE
    tolerance: float = DEFAULT_TOLERANCE
    query: str = ""


class LineStatus(StrEnum):
    """Per-signal outcome."""

    RECOVERED = "recovered"
    NOT_RECOVERED = "not_recovered"
    NO_DATA = "no_data"


class RecoveryLine(BaseModel):
    """Outcome for one signal, with the numbers behind it."""

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


def _limit(sig: RecoverySignal) -> float | None:
    if sig.baseline is None:
        return None
    if sig.direction is Direction.HIGHER_IS_WORSE:
        return sig.baseline * (1 + sig.tolerance)
    return sig.baseline * (1 - sig.tolerance)


def _within(sig: RecoverySignal, value: float, limit: float) -> bool:
    if sig.direction is Direction.HIGHER_IS_WORSE:
        return value <= limit
    return value >= limit


def check_recovery(
    signals: list[RecoverySignal], now: datetime, hold_minutes: int = 15
) -> RecoveryResult:
    """Check every signal over ``[now - hold, now]``.

    A signal counts as recovered when it has samples in the hold window and all of them are
    inside the band; its ``within_since`` is the start of the final unbroken in-band run.
    """
    hold_start = to_epoch(now - timedelta(minutes=hold_minutes))
    end = to_epoch(now)
    lines: list[RecoveryLine] = []
    for sig in signals:
        limit = _limit(sig)
        pts = [s for s in sig.series.samples if s.t <= end and s.v == s.v]
        hold = [s for s in pts if s.t >= hold_start]
        if limit is None or not hold:
            lines.append(
                RecoveryLine(
                    name=sig.name,
                    key=sig.key,
                    unit=sig.unit,
                    direction=sig.direction,
                    status=LineStatus.NO_DATA,
                    baseline=sig.baseline,
                    limit=limit,
                    last=pts[-1].v if pts else None,
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
            if _within(sig, s.v, limit):
                since = s.t
            else:
                break
        ok = all(_within(sig, s.v, limit) for s in hold)
        lines.append(
            RecoveryLine(
                name=sig.name,
                key=sig.key,
                unit=sig.unit,
                direction=sig.direction,
                status=LineStatus.RECOVERED if ok else LineStatus.NOT_RECOVERED,
                baseline=sig.baseline,
                limit=limit,
                last=pts[-1].v,
                worst_in_hold=worst,
                within_since=from_epoch(since) if since is not None else None,
            )
        )
    if any(line.status is LineStatus.NO_DATA for line in lines) or not lines:
        recovered: bool | None = None
    else:
        recovered = all(line.status is LineStatus.RECOVERED for line in lines)
    recovered_at = None
    if recovered:
        recovered_at = max(line.within_since for line in lines if line.within_since is not None)
    return RecoveryResult(
        recovered=recovered, recovered_at=recovered_at, hold_minutes=hold_minutes, lines=lines
    )
