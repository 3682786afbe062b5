"""Signal shapes over a :class:`TimeAxis`: plain lists of floats, one per sample time.

Signals are computed once per scenario and shared by every series that derives from them
(a load curve drives QPS, batch size, GPU utilisation, …), which keeps generation fast.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence

from cockpit.scenarios.timeaxis import TimeAxis

Signal = list[float]


def from_fn(axis: TimeAxis, fn: Callable[[int], float]) -> Signal:
    """``fn(t)`` at every sample time."""
    return [fn(t) for t in axis.points]


def const(axis: TimeAxis, value: float) -> Signal:
    """The same value everywhere."""
    return [value] * len(axis)


def diurnal(
    axis: TimeAxis,
    *,
    peak_start_h: float,
    peak_end_h: float,
    trough: float,
    ramp_h: float = 3.0,
) -> Signal:
    """A daily load factor in ``[trough, 1]``: 1 on the plateau ``[peak_start_h,
    peak_end_h]`` (hours of the UTC day), falling along a half cosine over ``ramp_h`` hours
    on each side, ``trough`` elsewhere.
    """

    def f(t: int) -> float:
        h = (t % 86400) / 3600.0
        # distance (hours) outside the plateau, on a circle of 24 h
        if peak_start_h <= h <= peak_end_h:
            return 1.0
        before = (peak_start_h - h) % 24
        after = (h - peak_end_h) % 24
        d = min(before, after)
        if d >= ramp_h:
            return trough
        return trough + (1 - trough) * 0.5 * (1 + math.cos(math.pi * d / ramp_h))

    return from_fn(axis, f)


def step_ramp(axis: TimeAxis, at: int, ramp_s: int) -> Signal:
    """0 before ``at``, rising linearly to 1 over ``ramp_s`` seconds, then 1."""

    def f(t: int) -> float:
        if t <= at:
            return 0.0
        if t >= at + ramp_s:
            return 1.0
        return (t - at) / ramp_s

    return from_fn(axis, f)


def window(axis: TimeAxis, start: int, end: int) -> Signal:
    """1 inside ``[start, end)``, else 0."""
    return [1.0 if start <= t < end else 0.0 for t in axis.points]


def noise(axis: TimeAxis, seed: str, amplitude: float) -> Signal:
    """Deterministic noise in ``[-amplitude, amplitude]``, smooth over ~4 samples.

    Derived from ``seed`` with SHA-256, so every run of the generator writes the same data.
    """
    raw = []
    h = hashlib.sha256(seed.encode()).digest()
    for i in range(len(axis) + 4):
        if i % 8 == 0:
            h = hashlib.sha256(h).digest()
        raw.append(h[(i % 8) * 4] / 127.5 - 1.0)
    return [amplitude * sum(raw[i : i + 4]) / 4 for i in range(len(axis))]


def lerp(a: Sequence[float], b: Sequence[float] | float, w: Sequence[float]) -> Signal:
    """``a + (b - a) * w`` element-wise (``b`` may be a constant)."""
    if isinstance(b, (int, float)):
        return [x + (b - x) * k for x, k in zip(a, w, strict=True)]
    return [x + (y - x) * k for x, y, k in zip(a, b, w, strict=True)]


def scale(a: Sequence[float], k: float) -> Signal:
    """``a * k``."""
    return [x * k for x in a]


def add(*signals: Sequence[float] | float) -> Signal:
    """Element-wise sum (constants allowed)."""
    n = next(len(s) for s in signals if not isinstance(s, (int, float)))
    out = [0.0] * n
    for s in signals:
        if isinstance(s, (int, float)):
            out = [x + s for x in out]
        else:
            out = [x + y for x, y in zip(out, s, strict=True)]
    return out


def mul(*signals: Sequence[float] | float) -> Signal:
    """Element-wise product (constants allowed)."""
    n = next(len(s) for s in signals if not isinstance(s, (int, float)))
    out = [1.0] * n
    for s in signals:
        if isinstance(s, (int, float)):
            out = [x * s for x in out]
        else:
            out = [x * y for x, y in zip(out, s, strict=True)]
    return out


def clamp(a: Sequence[float], lo: float, hi: float) -> Signal:
    """Each value clamped to ``[lo, hi]``."""
    return [min(hi, max(lo, x)) for x in a]


def around(level: Sequence[float], rel_noise: Sequence[float]) -> Signal:
    """``level * (1 + noise)``."""
    return [x * (1 + n) for x, n in zip(level, rel_noise, strict=True)]
