"""Histogram shapes whose ``histogram_quantile`` hits chosen quantiles.

Prometheus' ``histogram_quantile(q, …)`` finds the first bucket whose cumulative count
reaches the rank ``q × total`` and interpolates linearly inside it (the lower bound of the
first bucket is 0). A shape is the cumulative fraction at every finite bucket bound; a
scenario multiplies it by the number of observations of each interval, so with large
counts the quantile of ``rate(…_bucket[5m])`` is the shape's quantile (rounding to whole
observations moves it by < 0.1 %).

:func:`exact_shape` solves for fractions that make the interpolation land *exactly* on
the targets (one target per bucket); :func:`lognormal_shape` gives what a log-normal
latency distribution would put in each bucket, for histograms whose buckets are too
coarse for exact targets (vLLM's e2e buckets start at 0.3 s).

Reference: ``promql/quantile.go`` (``bucketQuantile``) in prometheus/prometheus.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Shape:
    """Cumulative fraction of observations at each finite bucket bound.

    Attributes:
        bounds: Finite upper bounds, increasing (``+Inf`` is implicit, fraction 1).
        cdf: Fraction of observations ``<= bound`` for each bound.
        mean: Mean observation (for ``_sum``), same unit as the bounds.
    """

    bounds: tuple[float, ...]
    cdf: tuple[float, ...]
    mean: float


def bucket_quantile(q: float, bounds: Sequence[float], cum: Sequence[float]) -> float:
    """Prometheus' interpolation over cumulative counts ``cum`` (last = ``+Inf`` count).

    Returns:
        The quantile, in the bounds' unit; ``bounds[-1]`` when the rank falls in ``+Inf``.
    """
    total = cum[-1]
    if total == 0:
        return math.nan
    rank = q * total
    i = next(k for k, c in enumerate(cum) if c >= rank)
    if i == len(bounds):
        return bounds[-1]
    lo = 0.0 if i == 0 else bounds[i - 1]
    below = 0.0 if i == 0 else cum[i - 1]
    inside = cum[i] - below
    if inside == 0:
        return bounds[i]
    return lo + (bounds[i] - lo) * (rank - below) / inside


def _mean(bounds: Sequence[float], cdf: Sequence[float], tail: float) -> float:
    total, prev_b, prev_f = 0.0, 0.0, 0.0
    for b, f in zip(bounds, cdf, strict=True):
        total += (f - prev_f) * (prev_b + b) / 2
        prev_b, prev_f = b, f
    total += (1 - prev_f) * (prev_b + max(tail, prev_b)) / 2
    return total


def exact_shape(
    bounds: Sequence[float],
    targets: Mapping[float, float],
    *,
    tail: float | None = None,
) -> Shape:
    """A shape whose interpolated quantiles equal ``targets`` exactly.

    Args:
        bounds: Finite bucket upper bounds, increasing, all > 0.
        targets: ``{quantile: value}``, e.g. ``{0.5: 0.045, 0.95: 0.095, 0.99: 0.18}``;
            each value strictly inside a different finite bucket.
        tail: Largest observation (for the mean); default the bound above the top target.

    Raises:
        ValueError: when two targets share a bucket, a target sits on a bound or beyond
            the last finite bound, or no monotone solution exists.
    """
    bnds = [float(b) for b in bounds]
    tq = sorted(targets.items())
    if any(b2 <= b1 for b1, b2 in itertools.pairwise([0.0, *bnds])):
        raise ValueError("bounds must be positive and increasing")
    placed: list[tuple[int, float, float]] = []  # (bucket index, q, f within bucket)
    for q, x in tq:
        if not 0 < q < 1:
            raise ValueError(f"quantile {q} outside (0, 1)")
        i = next((k for k, b in enumerate(bnds) if x <= b), None)
        if i is None:
            raise ValueError(f"target {x} beyond the last finite bound {bnds[-1]}")
        lo = 0.0 if i == 0 else bnds[i - 1]
        f = (x - lo) / (bnds[i] - lo)
        if not 0 < f < 1:
            raise ValueError(f"target {x} sits on a bucket bound; move it inside a bucket")
        if placed and placed[-1][0] == i:
            raise ValueError(
                f"targets {placed[-1][1]} and {q} share the bucket ending at {bnds[i]}"
            )
        if placed and placed[-1][0] > i:
            raise ValueError("target values must increase with the quantile")
        placed.append((i, q, f))

    cdf = _solve(bnds, placed)
    tail_v = tail if tail is not None else bnds[min(placed[-1][0] + 1, len(bnds) - 1)]
    shape = Shape(tuple(bnds), tuple(cdf), _mean(bnds, cdf, tail_v))
    for q, x in tq:  # the solution must reproduce every target
        got = bucket_quantile(q, bnds, [*cdf, 1.0])
        if abs(got - x) > 1e-9 * max(1.0, x):
            raise ValueError(f"internal error: quantile {q} gives {got}, not {x}")
    return shape


def _solve(bnds: list[float], placed: list[tuple[int, float, float]]) -> list[float]:
    """Fix the cumulative fraction at both ends of every target's bucket.

    Targets in adjacent buckets form a chain: once the fraction ``x`` below the chain's
    first bucket is chosen, each interpolation equation fixes the next bound as an affine
    function of ``x``. Every constraint (``F_lo < q`` per target, the chain's end below the
    next target's rank, fractions <= 1) is then an interval for ``x``; take its middle.
    """
    chains: list[list[tuple[int, float, float]]] = []
    for item in placed:
        if chains and chains[-1][-1][0] + 1 == item[0]:
            chains[-1].append(item)
        else:
            chains.append([item])
    fixed: dict[int, float] = {-1: 0.0}
    prev = 0.0
    for c, chain in enumerate(chains):
        limit = chains[c + 1][0][1] if c + 1 < len(chains) else 1.0
        lo_x, hi_x = prev, chain[0][1]  # x in [prev, q0)
        a, b = 0.0, 1.0  # F_lo of the current bucket = a + b x
        for _, q, f in chain:
            lo_x, hi_x = _constrain(lo_x, hi_x, a, b, q)  # F_lo < q
            a, b = q / f + (1 - 1 / f) * a, (1 - 1 / f) * b
        lo_x, hi_x = _constrain(lo_x, hi_x, a, b, limit)  # chain end below the next rank
        if not lo_x < hi_x:
            raise ValueError(
                "no monotone bucket fractions reach these targets: move a target further "
                "from its bucket's bounds or into another bucket"
            )
        x = (lo_x + hi_x) / 2
        fixed[chain[0][0] - 1] = x
        val = x
        for i, q, f in chain:
            val = val + (q - val) / f
            fixed[i] = val
        prev = val
    cdf: list[float] = []
    keys = sorted(fixed)
    for k in range(len(bnds)):
        if k in fixed:
            cdf.append(fixed[k])
            continue
        left = max(x for x in keys if x < k)
        right = next((x for x in keys if x > k), None)
        if right is None:  # above the last target: approach 1 geometrically
            p = cdf[-1] if cdf else 0.0
            cdf.append(p + (1 - p) * 0.9)
        else:
            w = (k - left) / (right - left)
            cdf.append(fixed[left] + (fixed[right] - fixed[left]) * w)
    return cdf


def _constrain(lo: float, hi: float, a: float, b: float, bound: float) -> tuple[float, float]:
    """Narrow ``[lo, hi)`` to the ``x`` with ``a + b x < bound``."""
    if b > 0:
        return lo, min(hi, (bound - a) / b)
    if b < 0:
        return max(lo, (bound - a) / b), hi
    return (lo, hi) if a < bound else (hi, hi)


def lognormal_shape(bounds: Sequence[float], median: float, p99: float) -> Shape:
    """What a log-normal distribution with this median and P99 puts in each bucket."""
    sigma = math.log(p99 / median) / 2.3263478740408408  # z of 0.99
    mu = math.log(median)

    def cdf(x: float) -> float:
        return 0.5 * (1 + math.erf((math.log(x) - mu) / (sigma * math.sqrt(2))))

    bnds = tuple(float(b) for b in bounds)
    fr = tuple(cdf(b) for b in bnds)
    return Shape(bnds, fr, math.exp(mu + sigma * sigma / 2))


def shifted(shape: Shape, bounds: Sequence[float], by: float) -> Shape:
    """``shape`` plus a constant ``by`` (same unit), on the buckets ``bounds``: what a
    proxy in front of a server records when each request takes the server's time plus its
    own overhead. The server's distribution is read as Prometheus reads it, linear inside
    each bucket from 0; above its last finite bound the fraction stays at that bound's."""
    xs = (0.0, *shape.bounds)
    fs = (0.0, *shape.cdf)

    def cdf(x: float) -> float:
        if x <= 0.0:
            return 0.0
        for i in range(1, len(xs)):
            if x <= xs[i]:
                return fs[i - 1] + (fs[i] - fs[i - 1]) * (x - xs[i - 1]) / (xs[i] - xs[i - 1])
        return fs[-1]

    bnds = tuple(float(b) for b in bounds)
    return Shape(bnds, tuple(cdf(b - by) for b in bnds), shape.mean + by)
