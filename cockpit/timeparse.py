"""Parsing the times an on-call engineer types.

Accepted (all interpreted in UTC unless an offset is given):

* ISO 8601: ``2026-11-29T21:05:00Z``, ``2026-11-29 21:05``, ``2026-11-29T21:05+08:00``
* a time of day ``21:05`` or ``21:05:30`` — the most recent such time not after ``now``
* relative: ``-15m``, ``-2h``, ``-1d``, ``now``
* Unix seconds: ``1795784100``
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

_REL = re.compile(r"^-\s*(\d+(?:\.\d+)?)\s*([smhd])$")
_TOD = re.compile(r"^(\d{1,2}):(\d{2})(?::(\d{2}))?$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


class TimeParseError(ValueError):
    """The text is not a time cockpit understands (the message lists the accepted forms)."""


EARLIEST = datetime(1970, 1, 2, tzinfo=UTC)
LATEST = datetime(2200, 1, 1, tzinfo=UTC)
"""Times outside this range are refused: Prometheus stores Unix-epoch milliseconds, and a
window or baseline computed from a time near ``datetime``'s limits would overflow."""
MAX_DURATION = timedelta(days=3650)
"""The longest duration accepted (a window, a lookback): ten years."""


def _bounded(dt: datetime, text: str) -> datetime:
    if not EARLIEST <= dt <= LATEST:
        raise TimeParseError(f"{text!r} is outside {EARLIEST:%Y-%m-%d} – {LATEST:%Y-%m-%d}")
    return dt


def parse_time(text: str, now: datetime) -> datetime:
    """Parse ``text`` relative to ``now`` (aware).

    Raises:
        TimeParseError: for anything else.
    """
    s = text.strip()
    if not s:
        raise TimeParseError("empty")
    if s.lower() == "now":
        return now
    if re.fullmatch(r"\d{9,11}(?:\.\d+)?", s):
        return _bounded(datetime.fromtimestamp(float(s), tz=UTC), s)
    m = _REL.match(s)
    if m:
        back = timedelta(seconds=float(m.group(1)) * _UNITS[m.group(2)])
        if back > MAX_DURATION:
            raise TimeParseError(f"{s!r} is more than {MAX_DURATION.days} days back")
        return _bounded(now - back, s)
    m = _TOD.match(s)
    if m:
        h, mi, se = int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)
        if h > 23 or mi > 59 or se > 59:
            raise TimeParseError(f"{s!r} is not a time of day")
        cand = now.astimezone(UTC).replace(hour=h, minute=mi, second=se, microsecond=0)
        if cand > now:
            cand -= timedelta(days=1)
        return cand
    try:
        dt = datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError as exc:
        raise TimeParseError(f"{s!r} is not a time (use 2026-11-27T12:55Z, 12:55 or -6h)") from exc
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return _bounded(dt.astimezone(UTC), s)


def reads_day_before(text: str, now: datetime) -> bool:
    """Whether :func:`parse_time` reads ``text`` as a time of day on the day before
    ``now``'s (UTC) date: it is later than ``now``'s time of day, so the most recent such
    time is yesterday's (``15:30`` typed when the incident clock says 15:00)."""
    m = _TOD.match(text.strip())
    if not m:
        return False
    h, mi, se = int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)
    if h > 23 or mi > 59 or se > 59:
        return False
    utc = now.astimezone(UTC)
    return (h, mi, se) > (utc.hour, utc.minute, utc.second)


FUTURE_SLACK = timedelta(minutes=5)
"""How far after "now" an ``--at`` time may be (clock skew between hosts)."""


def parse_at(text: str, now: datetime) -> datetime:
    """A time to investigate as of (``--at``): :func:`parse_time`, and not in the future.

    Raises:
        TimeParseError: unreadable, outside the accepted range, or later than ``now``
            plus :data:`FUTURE_SLACK` (there is no evidence from the future to look at).
    """
    dt = parse_time(text, now)
    if dt > now + FUTURE_SLACK:
        raise TimeParseError(f"{text!r} is in the future (now is {fmt_time(now)})")
    return dt


def parse_duration(text: str) -> timedelta:
    """``"90s"``, ``"30m"``, ``"2h"``, ``"1d"``, ``"1w"`` → timedelta.

    Raises:
        TimeParseError: for anything else (a ``ValueError``), zero, or more than
            :data:`MAX_DURATION`.
    """
    m = re.match(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", text or "")
    if not m:
        raise TimeParseError(f"not a duration: {text!r} (use 30m, 2h, 1d)")
    seconds = float(m.group(1)) * _UNITS[m.group(2)]
    if not 0 < seconds <= MAX_DURATION.total_seconds():
        raise TimeParseError(
            f"duration {text!r} must be more than 0 and at most {MAX_DURATION.days} days"
        )
    return timedelta(seconds=seconds)


def fmt_time(dt: datetime | None) -> str:
    """``2026-11-29 21:05:00Z`` (UTC, seconds) or an empty string: how every screen and
    every command's text output writes a time."""
    if dt is None:
        return ""
    return dt.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def fmt_iso_text(value: str) -> str:
    """An ISO 8601 time kept as text in a model (``2026-03-10T11:58:00+00:00``) written as
    :func:`fmt_time` writes it; text that is not one is returned as it is."""
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        return value
    return fmt_time(dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC))
