"""Robust statistics for comparing an instance with its peers.

Source of the method: architecture.md and metrics_kb.md §7.5 — with n replicas and the
population standard deviation a single outlier reaches at most |z| = √(n−1) (1.73 for 4
replicas, 3 for 10), so a fixed z threshold cannot fire on small deployments. Use the
ratio to the peer median and the median absolute deviation (MAD) instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

MAD_SCALE = 1.4826
"""MAD × 1.4826 estimates σ for normal data (Rousseeuw & Croux 1993)."""


def median(values: Sequence[float]) -> float | None:
    """Median of finite values, ``None`` when there are none."""
    vals = sorted(v for v in values if math.isfinite(v))
    if not vals:
        return None
    mid = len(vals) // 2
    return vals[mid] if len(vals) % 2 else (vals[mid - 1] + vals[mid]) / 2


def mad(values: Sequence[float]) -> float | None:
    """Median absolute deviation (unscaled), ``None`` when empty."""
    med = median(values)
    if med is None:
        return None
    return median([abs(v - med) for v in values if math.isfinite(v)])


def max_z(n: int) -> float:
    """Largest |z| one of ``n`` values can reach with the population σ: √(n−1)."""
    return math.sqrt(n - 1) if n > 1 else 0.0


def robust_score(value: float, peers: Sequence[float]) -> float | None:
    """|value − median(peers)| / (1.4826 · MAD(peers)); ``inf`` when MAD is 0 and it differs.

    Returns ``None`` with fewer than two peers.
    """
    finite = [p for p in peers if math.isfinite(p)]
    if len(finite) < 2:
        return None
    med = median(finite)
    dev = mad(finite)
    assert med is not None and dev is not None
    if dev == 0:
        # Identical peers: any difference beyond rounding is infinitely unusual.
        return 0.0 if math.isclose(value, med, rel_tol=1e-6, abs_tol=1e-9) else math.inf
    return abs(value - med) / (MAD_SCALE * dev)


def mean(values: Sequence[float]) -> float | None:
    """Arithmetic mean of finite values, ``None`` when empty."""
    vals = [v for v in values if math.isfinite(v)]
    return sum(vals) / len(vals) if vals else None
