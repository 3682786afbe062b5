"""Golden-signal summaries: now vs baseline, instant vs windowed, with a verdict per value.

Seed 003 §二: the four golden signals (latency, traffic, errors, saturation) are read
together in the same window; latency as P50/P95/P99/max, traffic as QPS and tokens/s,
errors split by type, utilization both instant and windowed. Seed 003 §五: alert
thresholds are based on the baseline, not fixed values — hence the relative thresholds of
:data:`THRESHOLDS`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from cockpit.analysis.stats import mean, median
from cockpit.models import Reading, Series, from_epoch
from cockpit.models.messages import (
    TEXT_IN,
    Msg,
    delta_suffix,
    msg,
    signal_label,
    signal_names,
    unit_suffix,
)
from cockpit.models.signals import SIGNALS

Verdict = Literal["anomalous", "changed", "normal", "no_data"]
"""A signal's verdict: ``changed`` is a move of ×:data:`CHANGED_RATIO` or more on the side
that is not the signal's bad one (it is shown, it decides no layer)."""
LayerVerdictValue = Literal["anomalous", "normal", "no_data"]
"""A layer's verdict (a changed signal leaves its layer normal, with the line shown)."""

CHANGED_RATIO = 2.0
"""A value at ×2 or more (or ×0.5 or less) of its baseline is said to have changed even when
that side is not the bad one (seed 003 §五: read against the baseline, never hide a move)."""

STAT_QUANTILES: dict[str, float] = {"p50": 0.5, "p95": 0.95, "p99": 0.99, "max": 0.999}
"""Histogram quantile per latency stat. Histograms have no true maximum (metrics_kb.md §7.1):
``max`` is estimated as the 0.999 quantile and labelled ``≈max``."""


@dataclass(frozen=True)
class Threshold:
    """When a value counts as anomalous against its baseline.

    Attributes:
        up: Ratio now/baseline at or above which an increase is anomalous (``None``: never).
        down: Ratio at or below which a decrease is anomalous (``None``: never).
        min_delta: Smallest absolute change (display unit) that may count.
        ceiling: Value at or above which the signal is anomalous whatever the baseline.
    """

    up: float | None = 1.5
    down: float | None = None
    min_delta: float = 0.0
    ceiling: float | None = None


THRESHOLDS: dict[str, Threshold] = {
    # Latency: P99 × 1.5 is also the derived SLO (cockpit.config.ServiceSettings.slo_p99_ms).
    "latency": Threshold(up=1.5, min_delta=5.0),
    # Traffic: a 20 % drop or a 25 % rise changes what the GPU sees (seed 003 §四 example:
    # QPS 1200→900 is −25 %).
    "traffic": Threshold(up=1.25, down=0.8),
    # Errors: × 3 and at least 0.5 points, as the derived error SLO (config.py).
    "errors": Threshold(up=3.0, min_delta=0.5),
    "saturation": Threshold(up=1.5, down=0.67, min_delta=0.0),
}
"""Default thresholds per golden signal (overridden per signal in :data:`SIGNAL_THRESHOLDS`)."""

SIGNAL_THRESHOLDS: dict[str, Threshold] = {
    "serving.queue": Threshold(up=2.0, min_delta=5.0),
    "serving.running": Threshold(up=2.0, down=0.5, min_delta=5.0),
    "serving.batch_size": Threshold(up=None, down=0.67, min_delta=1.0),
    # KV cache ≥ 95 % is where vLLM starts preempting (backtest candidate, metrics_kb.md §2.1).
    "runtime.kv_cache": Threshold(up=None, min_delta=20.0, ceiling=95.0),
    "runtime.preemptions": Threshold(up=2.0, min_delta=0.05),
    "runtime.fragmentation": Threshold(up=1.5, min_delta=10.0),
    # GPU util: a rise of 15 points (seed 003 §四: 72 %→98 %).
    "hardware.gpu_util": Threshold(up=1.0, down=0.5, min_delta=15.0),
    "hardware.sm_active": Threshold(up=1.0, down=0.5, min_delta=15.0),
    # +10 °C, or at/above 85 °C (NVIDIA data-centre GPUs slow down in the high 80s).
    "hardware.temp": Threshold(up=1.0, min_delta=10.0, ceiling=85.0),
    "hardware.sm_clock": Threshold(up=None, down=0.9, min_delta=50.0),
    "hardware.power": Threshold(up=1.25, min_delta=30.0),
    "hardware.fb_used": Threshold(up=1.25, min_delta=1024.0),
    "hardware.fb_reserved": Threshold(up=1.5, min_delta=512.0),
    "hardware.throttle": Threshold(up=1.0, min_delta=0.5),
    "hardware.thermal_violation": Threshold(up=1.0, min_delta=5.0),
    "hardware.xid": Threshold(up=1.0, min_delta=0.5),
    "infra.restarts": Threshold(up=1.0, min_delta=0.5),
    "infra.oomkilled": Threshold(up=1.0, min_delta=0.5),
    "infra.not_ready": Threshold(up=1.0, min_delta=0.5),
    "infra.node_cpu": Threshold(up=1.0, min_delta=20.0, ceiling=95.0),
    "infra.mem_pressure": Threshold(up=1.0, min_delta=5.0),
    "infra.net_errors": Threshold(up=3.0, min_delta=1.0),
    "infra.cpu_throttle": Threshold(up=1.0, min_delta=10.0),
    "access.timeouts": Threshold(up=3.0, min_delta=0.5),
    "access.qps": Threshold(up=1.25, down=0.8),
    # The arrival rate at the engine reads as the gateway's: both sides count (more
    # requests is a load cause for step F, fewer a symptom).
    "serving.qps": Threshold(up=1.25, down=0.8),
    "serving.prompt_len": Threshold(up=1.5, down=0.67),
    "serving.output_len": Threshold(up=1.5, down=0.67),
    "serving.max_tokens": Threshold(up=1.5, down=0.67),
    # The share of requests cut at the length limit: doubled and at least 10 points more
    # (4 % → 60 % when a release stops emitting end-of-sequence tokens). Our rule, not a
    # vendor's: a few percent of long answers reaching max_tokens is ordinary.
    "serving.length_stops": Threshold(up=2.0, min_delta=10.0),
}
"""Per-signal thresholds where the golden-signal default does not fit."""


def threshold_for(signal_id: str) -> Threshold:
    """The threshold of a canonical signal."""
    if signal_id in SIGNAL_THRESHOLDS:
        return SIGNAL_THRESHOLDS[signal_id]
    info = SIGNALS.get(signal_id)
    base = THRESHOLDS.get(info.golden if info else "saturation", Threshold())
    if info is not None and info.bad == "down":
        return Threshold(up=None, down=base.down or 0.67, min_delta=base.min_delta)
    if info is not None and info.bad == "both" and base.down is None:
        return Threshold(up=base.up, down=0.67, min_delta=base.min_delta)
    return base


class SignalSummary(BaseModel):
    """One value of a golden signal, now vs baseline, with its sparkline and verdict.

    Attributes:
        key: ``<signal id>:<stat>`` (``serving.e2e_latency:p99``).
        signal: Canonical signal id.
        stat: ``p50``/``p95``/``p99``/``max``/``avg``/``value``.
        layer: Layer of the signal.
        unit: Display unit.
        now: Mean of the last ``recent`` samples of the window.
        instant: The last sample (instant value).
        window_avg, window_max: Over the whole window (windowed view).
        baseline: Median of the baseline series.
        ratio: now / baseline (``None`` when either is unknown or baseline is 0).
        verdict: anomalous / normal / no_data.
        reason: Why (thresholds and numbers), rendered in English.
        reason_msg: The same as a message (key ``evidence.reason.*`` and arguments), which
            the UI renders in its language; ``None`` only for summaries built by hand.
        query, baseline_query: The PromQL behind the values.
        missing: Metric names that are missing (shown as "missing: <metric>").
        enable: How to enable the missing metric (in the plan's language);
            ``enable_i18n``: the same in each language (``{"zh": …, "en": …}``), read by
            :meth:`enable_text`.
        spark: Window values in time order (NaN dropped) for the sparkline.
        spark_t: Their timestamps (Unix s).
        baseline_spark: Baseline values in time order.
        at: Evaluation time of ``now``.
        failure_kind: The class of failure of the window query (an ``ErrorKind`` value:
            ``unavailable``, ``timeout``…); empty when it ran (its text is ``now.reason``).
        slo: The SLO the value is held to (display unit), when it is one of the service's
            SLIs (:func:`apply_slo`); ``slo_breach_at``: the first sustained breach in the
            window, if any (then the verdict is ``anomalous``, never ``normal``).
        top_bucket: For a histogram quantile whose last sample sits in the top (``+Inf``)
            bucket: the highest finite bound (display unit). The quantile is then only known
            to be at least this (``histogram_quantile`` returns that bound), and it is shown
            as ``≥ <bound>, top bucket``.
        bottom_bucket: For a histogram quantile whose last sample sits in the lowest
            bucket (bound above 0): that bound (display unit). ``histogram_quantile``
            interpolates from 0 to it, so the quantile is only known to be at most this; it
            is shown as ``≤ <bound>, lowest bucket``.
        lowest_bound: For a histogram quantile, its histogram's lowest bucket bound (display
            unit) when above 0: a baseline below it is an interpolation inside that bucket
            too, and is shown as ``≤ <bound>`` beside the value now.
        ratio_bound: How far :attr:`ratio` is known where one side is a bucket bound:
            ``at_least`` — the value now in the top bucket (at least its bound), or the
            baseline inside the lowest bucket (at most its bound) while the value now is
            measured: the ratio is taken against the bound and the real one is at least
            it (``≥ ×6.05``); ``at_most`` — the mirror (now inside the lowest bucket
            against a measured baseline, ``≤ ×0.40``); empty when both are measured.
        window_reading: When the verdict rests on the window's history rather than on the
            value now (an Xid seen in the window while the count now is 0, a series that
            stopped): that reading (``in the window: Xid 79 (13:40:00)``). It is the row's
            reading wherever the row is shown or pinned (:func:`value_msg`), never a bare
            value now beside a verdict it did not decide.
    """

    key: str
    signal: str
    stat: str = "value"
    layer: str = ""
    unit: str = ""
    now: Reading = Field(default_factory=lambda: Reading.unknown("not collected"))
    instant: Reading = Field(default_factory=lambda: Reading.unknown("not collected"))
    window_avg: Reading = Field(default_factory=lambda: Reading.unknown("not collected"))
    window_max: Reading = Field(default_factory=lambda: Reading.unknown("not collected"))
    baseline: Reading = Field(default_factory=lambda: Reading.unknown("not collected"))
    ratio: float | None = None
    verdict: Verdict = "no_data"
    reason: str = ""
    reason_msg: Msg | None = None
    query: str = ""
    baseline_query: str = ""
    missing: list[str] = Field(default_factory=list)
    enable: str = ""
    enable_i18n: dict[str, str] = Field(default_factory=dict)
    spark: list[float] = Field(default_factory=list)
    spark_t: list[float] = Field(default_factory=list)
    baseline_spark: list[float] = Field(default_factory=list)
    at: datetime | None = None
    failure_kind: str = ""
    slo: float | None = None
    slo_breach_at: datetime | None = None
    top_bucket: float | None = None
    bottom_bucket: float | None = None
    lowest_bound: float | None = None
    ratio_bound: Literal["", "at_least", "at_most"] = ""
    window_reading: Msg | None = None

    @property
    def up(self) -> bool:
        """Above its baseline (or, with none, over its SLO)."""
        if self.ratio is not None:
            return self.ratio > 1.0
        return self.slo_breach_at is not None

    def label(self, lang: str) -> str:
        """Human name with the stat (``TTFT P99``)."""
        return signal_label(f"{self.signal}:{self.stat}", lang)

    def reason_text(self, lang: str) -> str:
        """:attr:`reason` in ``lang``."""
        return self.reason_msg.text(lang) if self.reason_msg is not None else self.reason

    def enable_text(self, lang: str) -> str:
        """:attr:`enable` in ``lang``."""
        return self.enable_i18n.get(lang) or self.enable

    def set_reason(self, m: Msg) -> None:
        """Set :attr:`reason_msg` and its English rendering :attr:`reason`."""
        self.reason_msg = m
        self.reason = m.text("en")


def inside_lowest_bucket(s: SignalSummary) -> bool:
    """Whether a quantile's value now and its baseline both lie below its histogram's
    lowest bound (:attr:`SignalSummary.lowest_bound`): each only known to be at most it."""
    low, now, base = s.lowest_bound, s.now.value, s.baseline.value
    return low is not None and now is not None and base is not None and now < low and base < low


def judge_lowest_bucket(s: SignalSummary) -> None:
    """A quantile whose value now and baseline both lie inside its histogram's lowest
    bucket (below :attr:`SignalSummary.lowest_bound`): both are only known to be at most
    that bound (``histogram_quantile`` interpolates inside the bucket as if observations
    spread evenly, https://prometheus.io/docs/prometheus/latest/querying/functions/#histogram_quantile),
    so no change between them can be read. The ratio is dropped and the verdict is
    ``normal`` with that reason, never "×1.98 anomalous" beside "≤ 300 vs ≤ 300" (a
    vLLM queue time P50 of 280 ms against 150 ms, both in its 0.3 s bucket). An SLO is
    applied after this, as to every row. Mutates ``s``."""
    if not inside_lowest_bucket(s):
        bound_ratio(s)
        return
    low = s.lowest_bound
    assert low is not None
    s.ratio = None
    s.verdict = "normal"
    s.set_reason(msg("evidence.reason.lowest_bucket", bound=low, unit=unit_suffix(s.unit)))


def bound_ratio(s: SignalSummary) -> None:
    """A quantile's ratio where one side is only known as a bucket bound
    (:attr:`SignalSummary.ratio_bound`), judged on that bound: the baseline inside the
    lowest bucket (at most ``lowest_bound``) against a measured value now is a rise of at
    least ``now / lowest_bound`` (1,816 ms against "≤ 300 ms" is ``≥ ×6.05``, never the
    ×12.10 an interpolated 150 ms would give); the value now inside it against a measured
    baseline is a fall to at most ``lowest_bound / baseline``; the value now in the top
    bucket (``histogram_quantile`` returns its bound, at least that) a rise of at least
    the ratio already taken. The verdict is the signal's threshold on the bound (a rise of
    at least the limit is anomalous; below it, the change the numbers show). Mutates ``s``.
    """
    low, now, base = s.lowest_bound, s.now.value, s.baseline.value
    if now is None or base is None or not base:
        return
    if low is not None and base < low <= now and s.bottom_bucket is None:
        s.ratio, s.ratio_bound = now / low, "at_least"
        verdict, reason = judge_msg(s.signal, now, low, s.unit)
        s.verdict = verdict
        s.set_reason(reason)
    elif s.bottom_bucket is not None and low is not None and base >= low:
        s.ratio, s.ratio_bound = s.bottom_bucket / base, "at_most"
    elif s.top_bucket is not None and s.ratio is not None:
        s.ratio_bound = "at_least"


def ratio_msg(s: SignalSummary) -> Msg | str:
    """The ratio as the lines write it: ``×1.67 baseline``, ``≥ ×6.05 baseline`` for a
    bound (:attr:`SignalSummary.ratio_bound`); empty without a ratio."""
    if s.ratio is None:
        return ""
    key = f"evidence.value.ratio_{s.ratio_bound}" if s.ratio_bound else "evidence.value.ratio"
    return msg(key, ratio=s.ratio)


def ratio_text(s: SignalSummary) -> str:
    """The ratio as a cell writes it: ``×1.67``, ``≥ ×6.05``, ``≤ ×0.40``; empty without."""
    if s.ratio is None:
        return ""
    mark = {"at_least": "≥ ", "at_most": "≤ "}.get(s.ratio_bound, "")
    return f"{mark}×{s.ratio:.2f}"


class BucketEdge(BaseModel):
    """A histogram quantile known only as a bound (:func:`~cockpit.analysis.load.quantile_edge`):
    ``side`` ``top`` — in the ``+Inf`` bucket, at least ``bound``; ``bottom`` — in the
    lowest bucket, at most ``bound`` (the signal's unit, scaled as its values)."""

    side: Literal["top", "bottom"]
    bound: float


def bound_number(top_bucket: float | None, bottom_bucket: float | None) -> str | None:
    """A bounded quantile's number as a cell or a pin writes it, the unit apart:
    ``≥ 159,200`` (top bucket), ``≤ 300`` (lowest bucket); ``None`` when it is measured."""
    from cockpit.i18n import fmt_number

    if top_bucket is not None:
        return f"≥ {fmt_number(top_bucket)}"
    if bottom_bucket is not None:
        return f"≤ {fmt_number(bottom_bucket)}"
    return None


def edge_msg(edge: BucketEdge, unit: str) -> Msg:
    """A bounded quantile as every screen writes it: ``≥ 159,200 ms, top bucket`` or
    ``≤ 300 ms, lowest bucket`` (``unit``: the signal's unit id)."""
    key = "evidence.value.lower_bound" if edge.side == "top" else "evidence.value.upper_bound"
    return msg(key, value=edge.bound, unit=unit_suffix(unit))


def value_msg(s: SignalSummary) -> Msg:
    """A signal's value now as every screen shows it: ``620 ms``; for a quantile in the
    histogram's top bucket the bound it is at least (``≥ 159,200 ms, top bucket``), in its
    lowest bucket the bound it is at most (``≤ 300 ms, lowest bucket``); for no
    value, why (``evidence.reason.*``); for a verdict that rests on the window, the window's
    reading it rests on (:attr:`SignalSummary.window_reading`)."""
    if s.window_reading is not None:
        return s.window_reading
    u = unit_suffix(s.unit)
    if s.top_bucket is not None:
        return edge_msg(BucketEdge(side="top", bound=s.top_bucket), s.unit)
    if s.bottom_bucket is not None:
        return edge_msg(BucketEdge(side="bottom", bound=s.bottom_bucket), s.unit)
    if s.now.value is None:
        return s.reason_msg or msg("evidence.reason.no_data")
    return msg("evidence.value.plain", value=s.now.value, unit=u)


def reading_msg(s: SignalSummary) -> Msg:
    """One signal's reading as a line: name, value now, change against the baseline and
    verdict (``TPOT P99 42 ms (×1.67, anomalous)``) — the same numbers and verdict as its
    row in screens A and C, for the lines of the other screens (D, F, G, playbooks, I)."""
    change: Msg | str = ratio_msg(s)
    if s.slo_breach_at is not None and s.slo is not None:
        # anomalous for its SLO, whatever the ratio: say so beside the value (a breach
        # over by now with the peak its verdict rests on, never "since")
        peak = past_breach_peak(s)
        change = msg(
            "evidence.value.slo" if peak is None else "evidence.value.slo_past",
            slo=s.slo,
            unit=unit_suffix(s.unit),
            at=f"{s.slo_breach_at:%H:%M}",
            change=change,
            **({} if peak is None else {"peak": peak}),
        )
    return msg(
        "evidence.reading",
        key=s.key,
        name=signal_names(s.key),
        value=value_msg(s),
        change=change,
        verdict=msg(f"metrics.verdict.{s.verdict}"),
    )


def _single(series: list[Series] | None) -> Series | None:
    """Collapse a result to one series (sum when a query unexpectedly returns several)."""
    if not series:
        return None
    if len(series) == 1:
        return series[0]
    by_t: dict[float, float] = {}
    for s in series:
        for smp in s.samples:
            if math.isfinite(smp.v):
                by_t[smp.t] = by_t.get(smp.t, 0.0) + smp.v
    from cockpit.models import Sample

    return Series(labels={}, samples=[Sample(t=t, v=v) for t, v in sorted(by_t.items())])


def judge(signal_id: str, now: float | None, baseline: float | None) -> tuple[Verdict, str]:
    """:func:`judge_msg` with the reason rendered in English."""
    verdict, reason = judge_msg(signal_id, now, baseline)
    return verdict, reason.text("en")


def judge_msg(
    signal_id: str, now: float | None, baseline: float | None, unit: str = ""
) -> tuple[Verdict, Msg]:
    """Verdict of one value against its baseline with the signal's :class:`Threshold`.

    Returns:
        ``(verdict, reason)``, the reason a message ``evidence.reason.*`` with the numbers
        (in ``unit``, the display unit) as arguments; ``no_data`` when ``now`` is unknown,
        and when there is no baseline and the value is under the signal's ceiling (the only
        verdict a value can get without a baseline is ``anomalous``, from the ceiling).
    """
    if now is None:
        return "no_data", msg("evidence.reason.no_data")
    th = threshold_for(signal_id)
    u = unit_suffix(unit)
    if th.ceiling is not None and now >= th.ceiling:
        return "anomalous", msg("evidence.reason.ceiling", unit=u, now=now, ceiling=th.ceiling)
    if baseline is None:
        # A value with nothing to compare it with decides nothing: never "normal".
        return "no_data", msg("evidence.reason.no_baseline", unit=u, now=now)
    delta = now - baseline
    if abs(delta) < th.min_delta:
        return "normal", msg(
            "evidence.reason.small_change", unit=u, delta=delta, min_delta=th.min_delta
        )
    if baseline == 0:
        if th.up is not None and delta > 0:
            return "anomalous", msg("evidence.reason.change", unit=u, baseline=baseline, now=now)
        return "changed", msg("evidence.reason.changed_from_zero", unit=u, now=now)
    ratio = now / baseline
    if th.up is not None and ratio >= th.up and delta > 0:
        if th.up <= 1.0:
            # Any rise counts once it passes min_delta: that is what decided, say so.
            return "anomalous", msg(
                "evidence.reason.rise",
                unit=u,
                baseline=baseline,
                now=now,
                delta=delta,
                min_delta=th.min_delta,
            )
        return "anomalous", msg(
            "evidence.reason.up", unit=u, baseline=baseline, now=now, ratio=ratio, limit=th.up
        )
    if th.down is not None and ratio <= th.down:
        return "anomalous", msg(
            "evidence.reason.down", unit=u, baseline=baseline, now=now, ratio=ratio, limit=th.down
        )
    # A move of ×2 on the harmless side is shown as changed (a demand drop, a clock rise).
    changed = is_changed(ratio)
    verdict: Verdict = "changed" if changed else "normal"
    if th.ceiling is not None and th.up is None:
        # Only the ceiling decides a rise here (KV cache: full is what hurts, not doubling):
        # say which limit the value is under.
        key = "changed_below_ceiling" if changed else "below_ceiling"
        return verdict, msg(
            f"evidence.reason.{key}",
            unit=u,
            baseline=baseline,
            now=now,
            ratio=ratio,
            ceiling=th.ceiling,
        )
    key = "changed" if changed else "ratio"
    return verdict, msg(f"evidence.reason.{key}", unit=u, baseline=baseline, now=now, ratio=ratio)


def is_changed(ratio: float | None) -> bool:
    """A move of ×:data:`CHANGED_RATIO` or more either way: what C calls ``changed`` when
    the threshold does not call it anomalous, and E marks beside a row that is no outlier."""
    return ratio is not None and (ratio >= CHANGED_RATIO or ratio <= 1.0 / CHANGED_RATIO)


def summarize(
    key: str,
    signal_id: str,
    stat: str,
    unit: str,
    now_series: list[Series] | None,
    base_series: list[Series] | None,
    *,
    query: str = "",
    baseline_query: str = "",
    recent_s: float = 600.0,
    failure: str = "",
    baseline_failure: str = "",
    failure_kind: str = "",
) -> SignalSummary:
    """Build a :class:`SignalSummary` from a window range and a baseline range.

    Args:
        key, signal_id, stat, unit: Identity and display unit.
        now_series: Result of the window range query (``None`` when it failed).
        base_series: Result of the baseline range query.
        recent_s: "Now" is the mean of the samples in the last ``recent_s`` seconds.
        failure, baseline_failure: Classified failure text of the queries, if any.
        failure_kind: The class of ``failure`` (an ``ErrorKind`` value), kept apart so that
            a table cell can name it shortly; ``unavailable`` when not given.
    """
    info = SIGNALS.get(signal_id)
    out = SignalSummary(
        key=key,
        signal=signal_id,
        stat=stat,
        layer=info.layer if info else "",
        unit=unit,
        query=query,
        baseline_query=baseline_query,
    )
    s = _single(now_series)
    if failure:
        out.now = out.instant = out.window_avg = out.window_max = Reading.unknown(
            failure, unit=unit, query=query
        )
        out.set_reason(msg("evidence.reason.failure", failure=failure))
        out.failure_kind = failure_kind or "unavailable"
        return out
    if s is None or not s.values():
        reason = "query returned no series in the window"
        out.now = out.instant = out.window_avg = out.window_max = Reading.unknown(
            reason, unit=unit, query=query
        )
        out.set_reason(msg("evidence.reason.no_series"))
        return out
    pts = [(p.t, p.v) for p in s.samples if math.isfinite(p.v)]
    out.spark = [v for _, v in pts]
    out.spark_t = [t for t, _ in pts]
    t_last = pts[-1][0]
    at = from_epoch(t_last)
    out.at = at
    recent = [v for t, v in pts if t >= t_last - recent_s]
    now_v = mean(recent)
    assert now_v is not None
    out.now = Reading.known(now_v, unit, query=query, at=at)
    out.instant = Reading.known(pts[-1][1], unit, query=query, at=at)
    out.window_avg = Reading.known(mean(out.spark) or 0.0, unit, query=query, at=at)
    out.window_max = Reading.known(max(out.spark), unit, query=query, at=at)
    b = _single(base_series)
    base_v: float | None = None
    if baseline_failure:
        out.baseline = Reading.unknown(baseline_failure, unit=unit, query=baseline_query)
    elif b is None or not b.values():
        out.baseline = Reading.unknown(
            "no data in the baseline window", unit=unit, query=baseline_query
        )
    else:
        out.baseline_spark = b.values()
        base_v = median(out.baseline_spark)
        assert base_v is not None
        out.baseline = Reading.known(base_v, unit, query=baseline_query)
    if base_v:
        out.ratio = now_v / base_v
    out.verdict, reason_msg = judge_msg(signal_id, now_v, base_v, unit)
    out.set_reason(reason_msg)
    return out


def missing_summary(
    key: str,
    signal_id: str,
    stat: str,
    unit: str,
    missing: list[str],
    enable: str,
    enable_i18n: dict[str, str] | None = None,
) -> SignalSummary:
    """A summary for a signal whose metric the target does not expose; ``enable`` how to
    enable it, ``enable_i18n`` the same per language."""
    reason_msg = msg("evidence.reason.missing", metrics=", ".join(missing))
    reason = reason_msg.text("en")
    out = _no_data(key, signal_id, stat, Reading.unknown(reason, unit=unit), reason_msg)
    out.unit, out.missing, out.enable = unit, missing, enable
    out.enable_i18n = dict(enable_i18n or {})
    return out


def unsupported_summary(
    key: str, signal_id: str, stat: str, reason: str, reason_i18n: dict[str, str] | None = None
) -> SignalSummary:
    """A summary for a signal the detected stack cannot produce (TGI has no TTFT):
    ``reason`` in the detection's language, ``reason_i18n`` per language (its message
    renders in the reader's)."""
    both = reason_i18n or {"en": reason}
    reason_msg = msg("evidence.reason.unsupported", reason=msg(TEXT_IN, **both))
    out = _no_data(key, signal_id, stat, Reading.unsupported(reason), reason_msg)
    out.reason = reason_msg.text("en")
    return out


def _no_data(key: str, signal_id: str, stat: str, r: Reading, reason_msg: Msg) -> SignalSummary:
    """A ``no_data`` summary whose every value is ``r``."""
    info = SIGNALS.get(signal_id)
    out = SignalSummary(
        key=key,
        signal=signal_id,
        stat=stat,
        layer=info.layer if info else "",
        now=r,
        instant=r,
        window_avg=r,
        window_max=r,
        baseline=r,
        verdict="no_data",
    )
    out.set_reason(reason_msg)
    return out


class Breach(BaseModel):
    """The first SLO breach found in the data (offered as the impact start).

    Attributes:
        at: First sample time of the breach (UTC).
        signal: ``latency_p99``, ``ttft_p99`` or ``error_ratio``.
        value: Value at ``at`` (ms or %).
        slo: The SLO it crossed (ms or %).
        derived: True when the SLO was derived from the baseline (no configured SLO).
        query: The PromQL of the series.
        alert: When an alert fired before the SLO was crossed: its name, and ``at`` is the
            alert's time (the impact cannot start after it was detected); ``crossed_at``
            is then when the SLO was crossed.
        key: The row it breached on (``access.latency:p99``, ``serving.e2e_latency:p99``,
            ``serving.ttft:p99``, ``access.error_ratio_5xx:value``…): which P99 or which
            error ratio, named by :func:`breach_name` wherever the breach is told.
    """

    at: datetime
    signal: str
    value: float
    slo: float
    derived: bool
    query: str = ""
    alert: str = ""
    crossed_at: datetime | None = None
    key: str = ""


def breach_name(b: Breach, lang: str) -> str:
    """The human name of the signal ``b`` breached on, as its row is labelled
    (``gateway latency P99``, ``end-to-end latency P99``, ``TTFT P99``, ``gateway 5xx
    ratio``); the kind of SLI (``P99 latency``) only for a breach that names no row."""
    from cockpit.i18n import t

    return signal_label(b.key, lang) if b.key else t(f"metrics.slo_signal.{b.signal}", lang)


def breach_detail(b: Breach, lang: str) -> str:
    """What breached, in ``lang``: ``gateway latency P99 = 7948 ms, SLO 7502 ms, derived
    from the baseline`` (A's SLO line, the impact start A offers, the timeline entry that
    start leaves and so the export)."""
    from cockpit.i18n import fmt_number, t

    unit = "%" if b.signal == "error_ratio" else "ms"  # Breach: ms or % (see its docs)
    sep = "，" if lang == "zh" else ", "
    return (
        f"{breach_name(b, lang)} = {fmt_number(b.value)} {unit}{sep}SLO {fmt_number(b.slo)} {unit}"
        + (t("metrics.golden.derived", lang) if b.derived else "")
    )


def derive_slo_p99_ms(configured: float | None, baseline_p99_ms: float | None) -> float | None:
    """Latency SLO in ms: configured, else baseline P99 × 1.5 (config.py ServiceSettings)."""
    if configured is not None:
        return configured
    return baseline_p99_ms * 1.5 if baseline_p99_ms else None


def derive_slo_error_pct(
    configured_ratio: float | None, baseline_pct: float | None
) -> float | None:
    """Error SLO in percent: configured ratio × 100, else baseline × 3, at least 1 %
    (config.py ServiceSettings.slo_error_ratio)."""
    if configured_ratio is not None:
        return configured_ratio * 100.0
    if baseline_pct is None:
        return None
    return max(baseline_pct * 3.0, 1.0)


def apply_slo(s: SignalSummary, slo: float | None, *, signal: str, derived: bool) -> Breach | None:
    """Hold ``s`` to its SLO: a sustained breach in the window (:func:`first_breach`) makes
    it ``anomalous`` whatever its ratio to the baseline (a signal breaching its SLO is never
    ``normal`` or ``changed``), with a reason naming the SLO and when it was first crossed.

    Returns:
        The breach, or ``None`` (``s`` then only records the SLO it is held to).
    """
    if slo is None:
        return None
    s.slo = slo
    if not s.spark:
        return None
    b = first_breach(
        s.spark_t,
        s.spark,
        slo,
        signal=signal,
        derived=derived,
        query=s.query,
    )
    if b is None:
        return None
    b.key = s.key
    s.slo_breach_at = b.at
    if s.verdict != "anomalous":
        s.verdict = "anomalous"
        u = unit_suffix(s.unit)
        back = s.now.value is not None and s.now.value <= slo
        s.set_reason(
            msg(
                "evidence.reason.slo_past" if back else "evidence.reason.slo",
                unit=u,
                now=s.now.value if s.now.value is not None else b.value,
                slo=slo,
                at=f"{b.at:%H:%M}",
                peak=max(s.spark),
            )
        )
    return b


def past_breach_peak(s: SignalSummary) -> float | None:
    """The window's peak (display unit) of a row whose ``anomalous`` verdict stands on a
    sustained SLO breach earlier in the window (:func:`apply_slo`) while its value now is
    back within the SLO: the value that verdict rests on, shown beside ``now`` wherever the
    row is (step C's window max); ``None`` for any other row."""
    now = s.now.value
    if s.slo_breach_at is None or s.slo is None or now is None or now > s.slo:
        return None
    return s.window_max.value


def change_text(s: SignalSummary, lang: str) -> str:
    """Step A's change cell: ``×3.44`` now vs baseline, ``+1.6 pp`` / ``+2 restarts``
    when the baseline is 0 (the difference in its unit, :func:`delta_suffix`); for a row
    anomalous only for an SLO breach earlier in the window, the peak it rests on
    (``max 2.49 %``, :func:`past_breach_peak`) instead of a change near zero; empty when
    either value is unknown or both are inside the histogram's lowest bucket
    (:func:`inside_lowest_bucket`)."""
    from cockpit.i18n import fmt_number, fmt_value, t
    from cockpit.models.messages import unit_text

    peak = past_breach_peak(s)
    if peak is not None:
        return t("metrics.golden.peak", lang, value=fmt_value(peak, unit_text(s.unit, lang)))
    if s.ratio is not None:
        return ratio_text(s)
    if inside_lowest_bucket(s):
        return ""  # two interpolations inside one bucket: no change to write
    if s.now.ok and s.baseline.ok:
        diff = (s.now.value or 0) - (s.baseline.value or 0)
        return fmt_number(diff, 3, "+") + unit_text(delta_suffix(s.unit), lang, diff)
    return ""


def first_breach(
    times: list[float],
    values: list[float],
    slo: float,
    *,
    signal: str,
    derived: bool,
    query: str = "",
    sustain: int = 2,
) -> Breach | None:
    """The first time ``values`` exceed ``slo`` for ``sustain`` consecutive samples.

    Requiring two consecutive samples keeps a single scrape spike from being offered as
    the impact start.
    """
    run = 0
    for i, v in enumerate(values):
        if v > slo:
            run += 1
            if run >= sustain:
                j = i - sustain + 1
                return Breach(
                    at=from_epoch(times[j]),
                    signal=signal,
                    value=values[j],
                    slo=slo,
                    derived=derived,
                    query=query,
                )
        else:
            run = 0
    return None
