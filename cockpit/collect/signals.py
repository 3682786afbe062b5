"""Plan and run the now-vs-baseline range queries of a set of canonical signals."""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Iterable
from datetime import datetime
from itertools import accumulate

from pydantic import BaseModel, Field

from cockpit.analysis.golden import (
    STAT_QUANTILES,
    BucketEdge,
    SignalSummary,
    judge_lowest_bucket,
    missing_summary,
    summarize,
    unsupported_summary,
)
from cockpit.analysis.profiles import Detection, SplitSpec, render, render_buckets, render_family
from cockpit.collect.base import Window
from cockpit.collect.runner import QueryResult, QueryRunner, QuerySpec, cancel_all
from cockpit.models import InstantVector, Sample, Series
from cockpit.models.signals import SIGNALS

LATENCY_STATS = ("p50", "p95", "p99", "max")
"""Seed 003 §二: P50 (typical), P95, P99 (tail), max (long stalls)."""
DISTRIBUTION_STATS = ("p50", "p95")
"""Stats of non-latency histograms (prompt/output length)."""


class PlannedSignal(BaseModel):
    """One value to collect: the query, or why there is none (``enable`` and
    ``unsupported`` in the plan's language; ``enable_i18n`` and ``unsupported_i18n`` in
    each, ``{"zh": …, "en": …}``, for a screen that switches language)."""

    key: str
    signal: str
    stat: str
    unit: str = ""
    query: str = ""
    missing: list[str] = Field(default_factory=list)
    enable: str = ""
    enable_i18n: dict[str, str] = Field(default_factory=dict)
    unsupported: str = ""
    unsupported_i18n: dict[str, str] = Field(default_factory=dict)
    bucket_query: str = ""
    quantile: float | None = None
    scale: float = 1.0
    family_query: str = ""
    split: SplitSpec | None = None


def stats_for(det: Detection, signal_id: str) -> tuple[str, ...]:
    """The stats collected for a signal (quantiles for histograms, else one value)."""
    r = det.get(signal_id)
    if r is None:
        return ("p99",) if SIGNALS[signal_id].golden == "latency" else ("value",)
    if r.spec.kind == "histogram":
        return LATENCY_STATS if SIGNALS[signal_id].golden == "latency" else DISTRIBUTION_STATS
    if r.spec.average_only:
        return ("avg",)
    return ("value",)


def plan(
    det: Detection,
    scope: dict[str, str],
    window: Window,
    signal_ids: Iterable[str],
    lang: str = "en",
    stats: dict[str, tuple[str, ...]] | None = None,
    by: Iterable[str] = (),
) -> list[PlannedSignal]:
    """Queries for the given signals; missing/unsupported ones are planned without a query.

    A signal no detected profile defines is left out (nothing to say about it), unless a
    detected stack declares it unsupported (TGI and TTFT) — that is shown with the reason.
    """
    out: list[PlannedSignal] = []
    for sid in signal_ids:
        r = det.get(sid)
        wanted = (stats or {}).get(sid) or stats_for(det, sid)
        if r is None:
            if sid in det.unsupported:
                for st in wanted:
                    out.append(
                        PlannedSignal(
                            key=f"{sid}:{st}",
                            signal=sid,
                            stat=st,
                            unsupported=det.unsupported[sid],
                            unsupported_i18n=det.unsupported_i18n.get(sid, {}),
                        )
                    )
            continue
        unit = r.spec.unit
        for st in wanted:
            key = f"{sid}:{st}"
            if not r.available:
                out.append(
                    PlannedSignal(
                        key=key,
                        signal=sid,
                        stat=st,
                        unit=unit,
                        missing=r.missing,
                        enable=det.enable_hint(r, lang),
                        enable_i18n={x: det.enable_hint(r, x) for x in ("zh", "en")},
                    )
                )
                continue
            q = render(
                r,
                sel=det.selector_for(r, scope),
                window=window.rate_window,
                by=by,
                quantile=STAT_QUANTILES.get(st) if r.spec.kind == "histogram" else None,
            )
            planned = PlannedSignal(key=key, signal=sid, stat=st, unit=unit, query=q)
            if r.spec.kind == "histogram" and not list(by):
                planned.bucket_query = render_buckets(
                    r, det.selector_for(r, scope), window.rate_window
                )
                planned.quantile = STAT_QUANTILES.get(st)
                planned.scale = r.spec.scale
            elif r.spec.split is not None and not list(by):
                planned.family_query = render_family(
                    r, det.selector_for(r, scope), window.rate_window
                )
                planned.split = r.spec.split
                planned.scale = r.spec.scale
            out.append(planned)
    return out


def _sliceable(window: Window, lo: datetime, hi: datetime) -> bool:
    """A baseline over ``[lo, hi]`` (at the window's baseline step) lies on the points of
    the window's own range query: inside the window and on its grid (the quiet hours at
    the start of the window, :func:`inside_quiet`), so it is read from that answer."""
    offset = (lo - window.start).total_seconds()
    return (
        window.start <= lo
        and hi <= window.end
        and offset % window.step_s == 0
        and window.baseline_step_s % window.step_s == 0
    )


def sliced(r: QueryResult, lo: datetime, hi: datetime, step_s: float) -> QueryResult:
    """The answer a range query over ``[lo, hi]`` every ``step_s`` seconds would give,
    taken from ``r``, the same query over a longer range on the same grid (its points at
    those instants; a series without one is left out, as Prometheus leaves it out)."""
    if not r.ok:
        return r
    t0, t1 = lo.timestamp(), hi.timestamp()
    # Timestamps are whole milliseconds on the wire; compare them as such.
    step_ms = round(step_s * 1000)
    lo_ms = round(t0 * 1000)
    out = []
    for x in r.series:
        samples = [
            p
            for p in x.samples
            if t0 - 5e-4 <= p.t <= t1 + 5e-4 and (round(p.t * 1000) - lo_ms) % step_ms == 0
        ]
        if samples:
            out.append(Series.model_construct(labels=x.labels, samples=samples))
    return r.model_copy(update={"series": out})


def _unasked_baselines(
    specs: list[QuerySpec], window: Window, empty: list[tuple[datetime, datetime]]
) -> dict[str, asyncio.Future[QueryResult]]:
    """The offset baseline queries of ``specs`` known to have no data (their range and the
    rate window or lookback before it inside an ``empty`` span), each answered at once
    with no series, by key."""
    from datetime import timedelta

    from cockpit.collect.base import known_empty
    from cockpit.timeparse import parse_duration

    if window.baseline == "quiet" or not empty:
        return {}
    try:
        reach = max(parse_duration(window.rate_window), timedelta(minutes=5))
    except ValueError:
        return {}
    if not known_empty(empty, window.baseline_start, window.baseline_end, reach):
        return {}
    loop = asyncio.get_running_loop()
    out: dict[str, asyncio.Future[QueryResult]] = {}
    for s in specs:
        if s.key.endswith("/base"):
            out[s.key] = fut = loop.create_future()
            fut.set_result(QueryResult(spec=s))
    return out


def range_specs(planned: Iterable[PlannedSignal], window: Window) -> list[QuerySpec]:
    """Window and baseline range queries of every planned signal that has a query.

    Histogram bucket queries come first: they are the heaviest for the server and for the
    analysis, so started first they are answered, and analysed, while the rest run.
    """
    buckets: list[QuerySpec] = []
    specs: list[QuerySpec] = []
    seen: set[str] = set()
    for p in planned:
        if not p.query:
            continue
        shared = p.bucket_query or p.family_query
        if shared:
            # Every quantile of a histogram comes from one bucket query, every signal of a
            # counter family from one per-label query.
            if shared in seen:
                continue
            seen.add(shared)
            prefix = "buckets" if p.bucket_query else "family"
            for part, (start, end, step) in (
                ("now", (window.start, window.end, window.step_s)),
                ("base", (window.baseline_start, window.baseline_end, window.baseline_step_s)),
            ):
                (buckets if p.bucket_query else specs).append(
                    QuerySpec(
                        key=f"{prefix}:{shared}/{part}",
                        query=shared,
                        start=start,
                        end=end,
                        step_s=step,
                    )
                )
            continue
        specs.append(
            QuerySpec(
                key=f"{p.key}/now",
                query=p.query,
                start=window.start,
                end=window.end,
                step_s=window.step_s,
            )
        )
        specs.append(
            QuerySpec(
                key=f"{p.key}/base",
                query=p.query,
                start=window.baseline_start,
                end=window.baseline_end,
                step_s=window.baseline_step_s,
            )
        )
    return buckets + specs


class SummaryResult(BaseModel):
    """Summaries of a signal set and the baseline actually used.

    Attributes:
        summaries: In plan order.
        window: The window, with the baseline that was used (``quiet`` after a fallback).
        baseline_note: Why the baseline changed, when it did.
        baseline_from: The baseline asked for (``1d``/``7d``) when it fell back to the
            quiet window, else empty.
        slowest_s: Slowest single query (seconds); ``queries``: how many ran.
    """

    summaries: list[SignalSummary]
    window: Window
    baseline_note: str = ""
    baseline_from: str = ""
    slowest_s: float = 0.0
    queries: int = 0


async def collect_summaries(
    runner: QueryRunner,
    planned: list[PlannedSignal],
    window: Window,
    fallback_quiet: bool = True,
    empty: list[tuple[datetime, datetime]] | None = None,
) -> SummaryResult:
    """Run the planned range queries concurrently and summarise each signal.

    Each signal is summarised as soon as its own answers are in, while the server still
    works on the others (a screen's analysis overlaps its slowest queries instead of
    following them). When the offset baseline has no data for any signal (history shorter
    than the offset) and ``fallback_quiet`` is set, the baseline is the quiet window before
    the incident window (seed's "else the quiet hours before the impact"), else the
    window's first half. Those baselines are asked for together with the window's own
    queries, not after the offset one came back empty (one round trip, not two, on a
    distant Prometheus): the span before is queried at once (dropped when the offset
    baseline answers), the first half read from the window's own answers
    (:func:`sliced`).

    An offset baseline inside one of the ``empty`` spans (where the server holds no
    sample: :func:`cockpit.collect.base.empty_history`) is not asked for: it answers
    nothing, and the quiet window is the baseline with the same note.
    """
    specs = range_specs(planned, window)
    unasked = _unasked_baselines(specs, window, empty or [])
    now_keys = [s.key for s in specs if s.key.endswith("/now")]
    base_keys = [s.key for s in specs if s.key.endswith("/base")]
    quiet_futures: dict[str, asyncio.Future[QueryResult]] = {}
    tries = [] if window.baseline == "quiet" else [window.with_baseline("quiet")]
    tries.append(window.with_baseline("quiet", inside_quiet(window)))
    # The quiet baselines the fallback may need start with the rest (no round trip more
    # when the offset one has no data): the window's first half is read from the
    # window's own answers; the span before it is queried at once, and dropped when the
    # offset baseline answers.
    ahead: dict[int, dict[str, asyncio.Future[QueryResult]]] = {}
    futures = runner.start(s for s in specs if s.key not in unasked)
    futures.update(unasked)
    if fallback_quiet and futures:
        for i, alt in enumerate(tries):
            if not _sliceable(window, alt.baseline_start, alt.baseline_end):
                ahead[i] = runner.start(
                    s for s in range_specs(planned, alt) if s.key.endswith("/base")
                )

    async def slice_of(now_key: str, w: Window) -> QueryResult:
        # shielded: giving up on a baseline never cancels the window's own query
        r = await asyncio.shield(futures[now_key])
        return sliced(r, w.baseline_start, w.baseline_end, w.baseline_step_s)

    async def answered(started: dict[str, asyncio.Future[QueryResult]], span: float) -> bool:
        """Whether any of the ``started`` baseline queries answered with data over at
        least a quarter of its ``span`` seconds (a point at the border, where the history
        begins, is no baseline)."""
        for f in asyncio.as_completed(list(started.values())):
            r = await f
            if r.ok and any(
                len(x.samples) > 1 and x.samples[-1].t - x.samples[0].t >= span / 4
                for x in r.series
            ):
                return True
        return False

    async def fallback() -> Window | None:
        """The quiet window when no baseline answered with data: the span before the
        window, else — no history before it either (a Prometheus that keeps less than
        twice the window) — the window's first half, the quiet hours before an impact
        near its end."""
        span = (window.baseline_end - window.baseline_start).total_seconds()
        if await answered({k: futures[k] for k in base_keys}, span):
            for started in ahead.values():
                cancel_all(started)  # not needed: free their slots now
            return None
        if not fallback_quiet or not futures:
            return None
        for i, quiet in enumerate(tries):
            started = ahead.get(i) or {
                f"{k[: -len('/now')]}/base": asyncio.ensure_future(slice_of(k, quiet))
                for k in now_keys
            }
            quiet_span = (quiet.baseline_end - quiet.baseline_start).total_seconds()
            if i == len(tries) - 1 or await answered(started, quiet_span):
                quiet_futures.update(started)
                return quiet
            cancel_all(started)
        return None

    decision = asyncio.ensure_future(fallback())

    async def result(key: str) -> QueryResult:
        r = await futures[key]
        if key.endswith("/base") and not (r.ok and r.series) and await decision is not None:
            r = await quiet_futures[key]
        return r

    grids: dict[str, BucketGrid] = {}

    def grid(key: str, r: QueryResult) -> BucketGrid:
        # Every quantile of one histogram reads the same bucket result: group it once.
        if key not in grids:
            grids[key] = bucket_grid(r.series)
        return grids[key]

    async def summary(p: PlannedSignal) -> SignalSummary:
        if p.unsupported:
            return unsupported_summary(p.key, p.signal, p.stat, p.unsupported, p.unsupported_i18n)
        if not p.query:
            return missing_summary(
                p.key, p.signal, p.stat, p.unit, p.missing, p.enable, p.enable_i18n
            )
        if p.bucket_query:
            now_key, base_key = f"buckets:{p.bucket_query}/now", f"buckets:{p.bucket_query}/base"
            now, base = await result(now_key), await result(base_key)
            q = p.quantile or 0.99
            now_series = grid_quantile(grid(now_key, now), q, p.scale) if now.ok else None
            base_series = grid_quantile(grid(base_key, base), q, p.scale) if base.ok else None
        elif p.family_query and p.split is not None:
            now_key, base_key = f"family:{p.family_query}/now", f"family:{p.family_query}/base"
            now, base = await result(now_key), await result(base_key)
            now_series = split_series(now.series, p.split, p.scale) if now.ok else None
            base_series = split_series(base.series, p.split, p.scale) if base.ok else None
        else:
            now, base = await result(f"{p.key}/now"), await result(f"{p.key}/base")
            now_series = now.series if now.ok else None
            base_series = base.series if base.ok else None
        out = summarize(
            p.key,
            p.signal,
            p.stat,
            p.unit,
            now_series,
            base_series,
            query=p.query,
            baseline_query=p.query,
            recent_s=window.recent_s,
            failure=_failure_text(now.failure),
            baseline_failure=_failure_text(base.failure),
            failure_kind=_failure_kind(now.failure),
        )
        if p.bucket_query and now.ok:
            out.top_bucket = top_bucket(grid(now_key, now), p.quantile or 0.99, p.scale)
            out.bottom_bucket = bottom_bucket(grid(now_key, now), p.quantile or 0.99, p.scale)
            out.lowest_bound = lowest_bound(grid(now_key, now), p.scale)
            judge_lowest_bucket(out)
        return out

    try:
        summaries = list(await asyncio.gather(*(summary(p) for p in planned)))
        quiet = await decision
    finally:
        decision.cancel()
        cancel_all(futures)
        cancel_all(quiet_futures)
        for started in ahead.values():
            cancel_all(started)
    results = {k: f.result() for k, f in futures.items()}
    for started in ahead.values():
        results.update(
            {f"quiet:{k}": f.result() for k, f in started.items() if f.done() and not f.cancelled()}
        )
    slowest = max((r.elapsed_s for r in results.values()), default=0.0)
    return SummaryResult(
        summaries=summaries,
        window=quiet or window,
        baseline_note=""
        if quiet is None
        else f"no data {window.baseline} earlier or before the window; baseline = the window's first half"
        if quiet.baseline_start >= window.start
        else f"no data {window.baseline} earlier; baseline = the quiet window before",
        baseline_from=window.baseline if quiet is not None else "",
        slowest_s=slowest,
        queries=len(results) - len(unasked),
    )


def inside_quiet(window: Window) -> tuple[datetime, datetime]:
    """The quiet baseline inside ``window`` when nothing before it has data: its first
    half (an impact near the window's end leaves it quiet; the screens' "now" is the
    last ``recent_s`` seconds)."""
    return window.start, window.start + window.span / 2


def split_series(family: list[Series], split: SplitSpec, scale: float = 1.0) -> list[Series]:
    """One signal of a counter family from its per-label rates (see
    :class:`~cockpit.analysis.profiles.SplitSpec`), ``× scale``.

    At each timestamp: the matching series' rate (``rate``), or matching / all
    (``share``; ``percent`` × 100), as the signal's own PromQL computes it, with the same
    ``clamp_min(…, 1e-9)`` for no traffic. A timestamp with data but no matching series is
    a true 0 (no 5xx answered); no series at all, or none carrying ``split.label``, is no
    data (an empty list), never zero.
    """
    if not family or (split.match and not any(split.label in s.labels for s in family)):
        return []  # nothing, or nothing to tell the matching series by: no data
    rx = re.compile(split.match) if split.match else None
    total: dict[float, float] = {}
    matched: dict[float, float] = {}
    for s in family:
        hit = rx is None or rx.fullmatch(s.labels.get(split.label, "")) is not None
        for t, v in s.samples:
            if v != v:
                continue
            total[t] = total.get(t, 0.0) + v
            if hit:
                matched[t] = matched.get(t, 0.0) + v
    factor = scale * (100.0 if split.mode == "percent" else 1.0)
    samples = []
    for t in sorted(total):
        m = matched.get(t, 0.0)
        value = m if split.mode == "rate" else m / max(total[t], 1e-9)
        samples.append(Sample(t, value * factor))
    return [Series(samples=samples)] if samples else []


BucketGrid = list[tuple[float, list[float], list[float]]]
"""Histogram buckets over time: ``(t, bounds, cumulative counts)``, as
:func:`cockpit.analysis.load.cumulative` returns them."""


def bucket_grid(buckets: list[Series]) -> BucketGrid:
    """Group ``sum by (le)`` bucket series by timestamp, bounds ascending, counts made
    monotonic as :func:`cockpit.analysis.load.cumulative` does.

    Series without a numeric ``le`` label and NaN counts are left out.
    """
    rows: list[tuple[float, list[Sample]]] = []
    for s in buckets:
        try:
            le = float(s.labels.get("le", "nan"))
        except ValueError:
            continue
        if le == le:
            rows.append((le, s.samples))
    # Bounds sorted once, not per timestamp: each timestamp's row is built in bound order.
    rows.sort(key=lambda r: r[0])
    aligned = _aligned_grid(rows)
    if aligned is not None:
        return aligned
    by_t: dict[float, tuple[list[float], list[float]]] = {}
    for le, samples in rows:
        for t, v in samples:
            if v == v:
                entry = by_t.get(t)
                if entry is None:
                    entry = by_t[t] = ([], [])
                entry[0].append(le)
                entry[1].append(v)
    return [
        (t, les, list(accumulate(counts, max, initial=0.0))[1:])
        for t, (les, counts) in sorted(by_t.items())
    ]


def vector_quantiles(
    buckets: list[InstantVector], q: float, scale: float = 1.0
) -> list[InstantVector]:
    """``histogram_quantile(q, sum by (le, …) (…)) * scale`` of an instant bucket vector,
    one value per label set without ``le`` (:func:`edged_quantiles` without the edges)."""
    return [v for v, _ in edged_quantiles(buckets, q, scale)]


def edged_quantiles(
    buckets: list[InstantVector], q: float, scale: float = 1.0
) -> list[tuple[InstantVector, BucketEdge | None]]:
    """``histogram_quantile(q, sum by (le, …) (…)) * scale`` of an instant bucket vector:
    one value per label set without ``le``, computed as Prometheus does (bounds ascending,
    counts made monotonic, linear interpolation, the highest finite bound for the ``+Inf``
    bucket; https://prometheus.io/docs/prometheus/latest/querying/functions/#histogram_quantile).

    One query of the buckets thus gives every quantile of every group. A group with no
    observations is left out (no data is never zero); buckets without a numeric ``le``
    and NaN counts are passed over. Beside each value, the bucket bound it is only known
    against when it falls in the top or the lowest bucket
    (:func:`~cockpit.analysis.load.quantile_edge`, ``× scale``), else ``None``.
    """
    from cockpit.analysis.load import cumulative, quantile_cumulative, quantile_edge

    groups: dict[tuple[tuple[str, str], ...], tuple[float, list[tuple[float, float]]]] = {}
    for v in buckets:
        try:
            le = float(v.labels.get("le", "nan"))
        except ValueError:
            continue
        if le != le or v.v != v.v:
            continue
        key = tuple(sorted((k, x) for k, x in v.labels.items() if k != "le"))
        entry = groups.setdefault(key, (v.t, []))
        entry[1].append((le, v.v))
    out: list[tuple[InstantVector, BucketEdge | None]] = []
    for key, (t, pairs) in groups.items():
        les, counts = cumulative(sorted(pairs))
        # Prometheus answers NaN without an +Inf bucket or with fewer than two buckets.
        complete = len(les) >= 2 and math.isinf(les[-1])
        value = quantile_cumulative(les, counts, q) if complete else None
        if value is not None:
            edge = quantile_edge(les, counts, q, scale)
            out.append((InstantVector(labels=dict(key), t=t, v=value * scale), edge))
    return out


def _aligned_grid(rows: list[tuple[float, list[Sample]]]) -> BucketGrid | None:
    """The common case of :func:`bucket_grid`: every bucket series has the same timestamps
    and no NaN, so each timestamp's counts are one column (built in C by ``zip``).
    ``None`` otherwise."""
    if not rows:
        return []
    ts = [p.t for p in rows[0][1]]
    if any([p.t for p in samples] != ts for _, samples in rows[1:]):
        return None
    les = [le for le, _ in rows]
    grid: BucketGrid = []
    columns = zip(*([p.v for p in samples] for _, samples in rows), strict=True)
    for t, counts in zip(ts, columns, strict=True):
        total = sum(counts)
        if total != total:
            return None  # a NaN count: the general path leaves that point out
        grid.append((t, les, list(accumulate(counts, max, initial=0.0))[1:]))
    return grid


def quantile_series(buckets: list[Series], q: float, scale: float = 1.0) -> list[Series]:
    """``histogram_quantile(q, …) * scale`` over time from ``sum by (le)`` bucket series.

    Returns an empty list when there are no buckets; timestamps with no observations
    are left out (no data is never zero).
    """
    return grid_quantile(bucket_grid(buckets), q, scale)


def grid_quantile(grid: BucketGrid, q: float, scale: float = 1.0) -> list[Series]:
    """:func:`quantile_series` over an already grouped :func:`bucket_grid`."""
    from cockpit.analysis.load import quantile_cumulative

    samples = []
    for t, les, counts in grid:
        v = quantile_cumulative(les, counts, q)
        if v is not None:
            samples.append(Sample(t, v * scale))
    return [Series(samples=samples)] if samples else []


def top_bucket(grid: BucketGrid, q: float, scale: float = 1.0) -> float | None:
    """The highest finite bound ``× scale`` when the last point's ``q`` quantile falls in
    the ``+Inf`` bucket, else ``None``.

    ``histogram_quantile`` answers that bound for such a quantile
    (https://prometheus.io/docs/prometheus/latest/querying/functions/#histogram_quantile):
    the true value is only known to be at least it, and is shown as a lower bound.
    """
    from cockpit.analysis.load import quantile_edge

    if not grid:
        return None
    edge = quantile_edge(grid[-1][1], grid[-1][2], q, scale)
    return edge.bound if edge is not None and edge.side == "top" else None


def bottom_bucket(grid: BucketGrid, q: float, scale: float = 1.0) -> float | None:
    """The lowest bucket's bound ``× scale`` when the last point's ``q`` quantile falls in
    that bucket and the bound is above 0, else ``None``.

    ``histogram_quantile`` then interpolates between 0 and that bound as if the
    observations spread evenly over it
    (https://prometheus.io/docs/prometheus/latest/querying/functions/#histogram_quantile):
    with every observation in the bucket it answers ``q × bound`` whatever they were (a
    P99 of 297 ms for vLLM's queue time, whose lowest bound is 0.3 s, when requests queue
    for a millisecond). The true value is only known to be at most the bound, and is shown
    as an upper bound.
    """
    from cockpit.analysis.load import quantile_edge

    if not grid:
        return None
    edge = quantile_edge(grid[-1][1], grid[-1][2], q, scale)
    return edge.bound if edge is not None and edge.side == "bottom" else None


def lowest_bound(grid: BucketGrid, scale: float = 1.0) -> float | None:
    """The lowest bucket's bound ``× scale`` when it is above 0 and finite, else ``None``:
    a quantile below it can only be ``histogram_quantile``'s interpolation inside that
    bucket (:func:`bottom_bucket`)."""
    if not grid:
        return None
    _, les, _ = grid[-1]
    if not les or not les[0] > 0 or math.isinf(les[0]):
        return None
    return les[0] * scale


def _failure_kind(failure: object) -> str:
    kind = getattr(failure, "kind", "")
    return str(getattr(kind, "value", kind))


def _failure_text(failure: object) -> str:
    if failure is None:
        return ""
    kind = getattr(failure, "kind", "")
    msg = getattr(failure, "message", "")
    return f"{getattr(kind, 'value', kind)}: {msg}"
