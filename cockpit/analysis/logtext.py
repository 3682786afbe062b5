"""Small, pure helpers shared by the artifact analyzers: sizes, log timestamps, ranks.

Nothing here does I/O. Every function accepts arbitrary text and returns ``None`` (or an
empty result) instead of raising when the text does not match.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

# PyTorch's caching allocator prints sizes with ``format_size`` (c10/cuda/
# CUDACachingAllocator.cpp): ``N bytes``, ``x.xx KiB``, ``x.xx MiB``, ``x.xx GiB``.
# TiB/EiB and the decimal spellings are accepted too because hand-edited reports use them.
SIZE_RE = r"(\d+(?:\.\d+)?)\s*(bytes|byte|B|KiB|MiB|GiB|TiB|PiB|EiB|KB|MB|GB|TB)\b"

_UNIT_BYTES = {
    "bytes": 1,
    "byte": 1,
    "b": 1,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "tib": 1024**4,
    "pib": 1024**5,
    "eib": 1024**6,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "tb": 1000**4,
}

GIB = 1024**3

# Lines longer than this are cut before any regular expression sees them, so one
# pathological line cannot make a scan quadratic.
MAX_LINE_CHARS = 16_384


def has_keyword(line: str, keywords: tuple[str, ...]) -> bool:
    """True when the lower-cased ``line`` contains one of ``keywords`` (lower-case)."""
    low = line.lower()
    return any(k in low for k in keywords)


class Gated:
    """An expression (case-insensitive, or with letters ``str.lower`` may fold) searched
    only in a line that holds one of its ``words`` (lower case; every match of the
    expression holds one, lower-cased): the same answer as the expression's,
    without its scan of each line that cannot match (a few microseconds against tens for
    a long alternation). A line with non-ASCII characters, whose case folding goes beyond
    ``str.lower``, is searched as it is."""

    def __init__(self, rx: re.Pattern[str], words: tuple[str, ...]) -> None:
        self.rx = rx
        self.words = words

    def search(self, line: str) -> re.Match[str] | None:
        """``rx.search(line)``."""
        if line.isascii():
            low = line.lower()
            for w in self.words:
                if w in low:
                    break
            else:
                return None
        return self.rx.search(line)


def size_to_bytes(number: str, unit: str) -> int | None:
    """``("1.27", "GiB")`` → ``1363652526``; ``None`` for an unknown unit or bad number."""
    factor = _UNIT_BYTES.get(unit.lower())
    if factor is None:
        return None
    try:
        value = float(number)
    except ValueError:
        return None
    if value != value or value in (float("inf"), float("-inf")):
        return None
    return round(value * factor)


def gib(n_bytes: int | None) -> float | None:
    """Bytes → GiB rounded to 3 decimals (``None`` stays ``None``)."""
    if n_bytes is None:
        return None
    return round(n_bytes / GIB, 3)


def clip(line: str, limit: int = MAX_LINE_CHARS) -> str:
    """``line`` cut to ``limit`` characters."""
    return line if len(line) <= limit else line[:limit]


def snippet(line: str, limit: int = 300) -> str:
    """A line shortened for display (stripped, at most ``limit`` characters)."""
    s = line.strip()
    return s if len(s) <= limit else s[: limit - 1] + "…"


_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    )
}
# Cumulative days before each month in a leap year, so 02-29 is representable.
_DAYS_BEFORE = [0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335]

_ISO_TS = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?")
# glog prefix used by c10 logging: ``[E816 01:45:40.183009389 ProcessGroupNCCL.cpp:607]``.
# glog: ``E0816 01:45:40.212150`` — c10's own logger drops the month's leading zero
# (``[E816 01:45:40.212150935 ProcessGroupNCCL.cpp:607]``, formats.md §A2).
_GLOG_TS = re.compile(r"\b[EWIF](\d{1,2})(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?\b")
# vLLM / many Python loggers: ``INFO 03-20 02:29:07``.
_MD_TS = re.compile(r"(?<![\d-])(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?\b")
# syslog / dmesg -T: ``Dec  2 11:38:46`` or ``Wed Jan 27 23:04:35 2021``.
_SYSLOG_TS = re.compile(
    r"\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\s+(\d{1,2}) (\d{2}):(\d{2}):(\d{2})",
    re.IGNORECASE,
)


def _seconds(month: int, day: int, hh: int, mm: int, ss: int, frac: str | None) -> float | None:
    if not (1 <= month <= 12 and 1 <= day <= 31 and hh < 24 and mm < 60 and ss < 61):
        return None
    base = ((_DAYS_BEFORE[month - 1] + day - 1) * 24 + hh) * 3600 + mm * 60 + ss
    return base + (float("0." + frac) if frac else 0.0)


def line_time(line: str) -> float | None:
    """Time of a log line as seconds since 1 January (year ignored), or ``None``.

    The first timestamp on the line wins (an ISO prefix added by ``kubectl logs
    --timestamps`` or a launcher comes before the framework's own). The year is ignored
    because glog and vLLM prefixes carry none; comparisons across a new year are wrong,
    which is acceptable for incident windows of minutes to hours.
    """
    best: tuple[int, float] | None = None
    for rx, kind in ((_ISO_TS, "iso"), (_GLOG_TS, "glog"), (_MD_TS, "md"), (_SYSLOG_TS, "sys")):
        m = rx.search(line)
        if m is None:
            continue
        g = m.groups()
        try:
            if kind == "iso":
                val = _seconds(int(g[1]), int(g[2]), int(g[3]), int(g[4]), int(g[5]), g[6])
            elif kind == "sys":
                val = _seconds(
                    _MONTHS[g[0].lower()], int(g[1]), int(g[2]), int(g[3]), int(g[4]), None
                )
            else:
                val = _seconds(int(g[0]), int(g[1]), int(g[2]), int(g[3]), int(g[4]), g[5])
        except (ValueError, KeyError):
            val = None
        if val is not None and (best is None or m.start() < best[0]):
            best = (m.start(), val)
    return None if best is None else best[1]


def line_datetime(line: str, now: datetime) -> datetime | None:
    """When a log line says it was written: its first timestamp (see :func:`line_time`)
    read as UTC in its own year (ISO 8601) or else ``now``'s year, or the year before when
    that would be after ``now``;
    ``None`` when the line carries no wall-clock time (dmesg's seconds since boot) or only
    one after ``now``."""
    seconds = line_time(line)
    if seconds is None:
        return None
    day, rest = divmod(seconds, 86400)
    month = max(m for m in range(1, 13) if _DAYS_BEFORE[m - 1] <= day)
    dom = int(day) - _DAYS_BEFORE[month - 1] + 1
    years: tuple[int, ...] = (now.year, now.year - 1)
    iso = _ISO_TS.search(line)
    if iso is not None and (int(iso.group(2)), int(iso.group(3))) == (month, dom):
        years = (int(iso.group(1)),)  # the line's own year
    for year in years:
        try:
            at = datetime(year, month, dom, tzinfo=UTC) + timedelta(seconds=rest)
        except ValueError:  # 29 February of a common year
            continue
        if at <= now:
            return at
    return None


def clock_text(seconds: float | None) -> str | None:
    """``line_time`` value → ``"MM-DD HH:MM:SS"`` (``None`` stays ``None``)."""
    if seconds is None:
        return None
    day_of_year, rest = divmod(int(seconds), 86400)
    month = max(i for i, d in enumerate(_DAYS_BEFORE) if d <= day_of_year) + 1
    day = day_of_year - _DAYS_BEFORE[month - 1] + 1
    hh, rest = divmod(rest, 3600)
    mm, ss = divmod(rest, 60)
    return f"{month:02d}-{day:02d} {hh:02d}:{mm:02d}:{ss:02d}"


# ``[rank3]:`` (torchrun ``--tee``/``--log-line-prefix``), ``[rank3]``, ``[Rank 3]``,
# ``[PG 0 (default_pg) Rank 3]``, ``[PG ID 0 PG GUID 0(default_pg) Rank 3]``, ``[default3]:``.
_RANK_PREFIX = re.compile(r"\[(?:rank|default)(\d{1,6})\]", re.IGNORECASE)
_RANK_INNER = re.compile(r"\[(?:[^\[\]]{0,80}\s)?Rank (\d{1,6})\]")
_RANK_LOOSE = re.compile(r"\b(?:global_)?rank[ =:]{1,3}(\d{1,6})\b", re.IGNORECASE)


def line_rank(line: str, loose: bool = True) -> int | None:
    """The distributed rank a log line belongs to, or ``None`` when it names none.

    ``loose`` also accepts ``rank=3`` / ``rank: 3`` near the start of the line; turn it off
    for lines that may mention another rank (``... from rank 6``).
    """
    for rx in (_RANK_PREFIX, _RANK_INNER):
        m = rx.search(line)
        if m:
            return int(m.group(1))
    if not loose:
        return None
    m = _RANK_LOOSE.search(line[:200])
    return int(m.group(1)) if m else None


def to_int(text: str | None) -> int | None:
    """``"80078"`` → ``80078``; placeholders like ``<n>`` or ``1800xxx`` → ``None``."""
    if text is None:
        return None
    t = text.strip().replace(",", "").replace("_", "")
    if not t.isdigit():
        return None
    try:
        return int(t)
    except ValueError:
        return None


def to_float(text: str | None) -> float | None:
    """``"0.78"`` → ``0.78``; anything else → ``None``."""
    if text is None:
        return None
    try:
        value = float(text.strip().rstrip("%"))
    except ValueError:
        return None
    if value != value or value in (float("inf"), float("-inf")):
        return None
    return value
