"""Step F: shared dependencies and load.

Seed 000 ("检查共享依赖与负载"): arrival rate and its change; the prompt- and
output-length mix (a histogram shift reads as "a new long-prompt client"); gateway
latency vs serving latency (time spent before the GPU); errors at the gateway vs at the
server; shared node, storage and network signals where exported.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, Field

from cockpit.analysis.golden import (
    BucketEdge,
    SignalSummary,
    past_breach_peak,
    reading_msg,
    value_msg,
)
from cockpit.models.messages import Msg, msg, signal_names, unit_suffix

UNHEALTHY_REPLICA_SIGNALS = ("infra.restarts", "infra.not_ready")
"""Signals of step C that say a replica is not serving (crash-looping, not ready): while
one of them is anomalous the servers are not healthy, for the gateway-errors check."""

LONG_SHIFT_RATIO = 1.5
"""A P95 prompt length ≥ 1.5× the baseline's is a shift in the mix (the latency threshold
of :mod:`cockpit.analysis.golden`, applied to lengths)."""
LONG_SHARE_POINTS = 10.0
"""…or ≥ 10 more points of requests above the baseline's P95 (by definition 5 % before)."""


class Bucket(BaseModel):
    """One cumulative histogram bucket: ``count`` observations ≤ ``le``."""

    le: float
    count: float


def quantile(buckets: list[Bucket], q: float) -> float | None:
    """Quantile from cumulative buckets with linear interpolation (as ``histogram_quantile``).

    Returns ``None`` with no observations. The ``+Inf`` bucket returns the highest finite
    bound, as Prometheus does.
    """
    les, counts = cumulative(sorted((b.le, b.count) for b in buckets))
    return quantile_cumulative(les, counts, q)


def cumulative(pairs: Iterable[tuple[float, float]]) -> tuple[list[float], list[float]]:
    """Bounds and counts of ``(le, count)`` pairs sorted by ``le``, counts made monotonic.

    A count below the one of a lower bucket (rate() of buckets scraped at slightly
    different instants) is raised to it, as ``histogram_quantile`` does
    (https://prometheus.io/docs/prometheus/latest/querying/functions/#histogram_quantile).
    """
    les: list[float] = []
    counts: list[float] = []
    top = 0.0
    for le, count in pairs:
        top = count if count > top else top
        les.append(le)
        counts.append(top)
    return les, counts


def quantile_cumulative(les: list[float], counts: list[float], q: float) -> float | None:
    """:func:`quantile` over the output of :func:`cumulative` (one binary search: the
    drilldown computes it for every point of every latency histogram)."""
    if not counts or counts[-1] <= 0:
        return None
    rank = q * counts[-1]
    i = bisect_left(counts, rank)
    if i >= len(counts):
        return les[-1]
    le, count = les[i], counts[i]
    prev_le, prev_c = (les[i - 1], counts[i - 1]) if i else (0.0, 0.0)
    if math.isinf(le):
        return prev_le
    if count == prev_c:
        return le
    # Prometheus's order of operations (promql/quantile.go), so that a quantile computed
    # here from buckets is the very number histogram_quantile answers for them.
    return prev_le + (le - prev_le) * ((rank - prev_c) / (count - prev_c))


def quantile_edge(
    les: list[float], counts: list[float], q: float, scale: float = 1.0
) -> BucketEdge | None:
    """Where a ``q`` quantile of cumulative ``counts`` over bounds ``les`` (the output of
    :func:`cumulative`) is only bounded, not measured: ``top`` at ``b × scale`` when it
    falls in the ``+Inf`` bucket (``histogram_quantile`` answers the highest finite bound
    ``b``; the true value is at least ``b``), ``bottom`` when it falls in the lowest bucket
    of bound ``b > 0`` (``histogram_quantile`` interpolates between 0 and ``b`` as if the
    observations spread evenly; the true value is at most ``b``), else ``None``
    (https://prometheus.io/docs/prometheus/latest/querying/functions/#histogram_quantile).
    """
    if not les or not counts or counts[-1] <= 0:
        return None
    rank = q * counts[-1]
    if len(les) >= 2 and math.isinf(les[-1]) and rank > counts[-2]:
        return BucketEdge(side="top", bound=les[-2] * scale)
    if les[0] > 0 and not math.isinf(les[0]) and rank <= counts[0]:
        return BucketEdge(side="bottom", bound=les[0] * scale)
    return None


def share_above(buckets: list[Bucket], bound: float) -> float | None:
    """Percent of observations above ``bound`` (interpolated inside its bucket)."""
    bs = sorted(buckets, key=lambda b: b.le)
    if not bs or bs[-1].count <= 0:
        return None
    total = bs[-1].count
    prev_le, prev_c = 0.0, 0.0
    below = total
    for b in bs:
        if b.le >= bound:
            if math.isinf(b.le) or b.le == prev_le:
                below = prev_c
            else:
                below = prev_c + (b.count - prev_c) * (bound - prev_le) / (b.le - prev_le)
            break
        prev_le, prev_c = b.le, b.count
    return 100.0 * (total - below) / total


class Finding(BaseModel):
    """One load/shared-dependency finding.

    Attributes:
        id: ``arrival_rate``, ``long_prompts``, ``output_mix``, ``before_gpu``,
            ``gateway_errors``, ``server_errors``, ``shared_node``.
        status: ``fired`` / ``not_fired`` / ``no_data``.
        numbers: The values behind it (display units).
        evidence: Summary keys or queries used.
        note: Why data is missing or partial, in English.
        note_msg: The same as a message (``evidence.load.*``).
        detail: :attr:`numbers` as readable sentences with units (``evidence.load.*``).
        by: What fired it, for a finding with several parts (``before_gpu``: ``gap``, the
            gateway-serving gap; ``queue``, the engine's queue time).
    """

    id: str
    status: Literal["fired", "not_fired", "no_data"]
    numbers: dict[str, float] = Field(default_factory=dict)
    evidence: list[str] = Field(default_factory=list)
    note: str = ""
    note_msg: Msg | None = None
    detail: list[Msg] = Field(default_factory=list)
    by: list[str] = Field(default_factory=list)

    def with_note(self, m: Msg) -> Finding:
        """Set :attr:`note_msg` and its English rendering :attr:`note`; returns self."""
        self.note_msg = m
        self.note = m.text("en")
        return self

    def text(self, lang: str) -> list[str]:
        """The detail sentences, then the note, in ``lang``."""
        out = [m.text(lang) for m in self.detail]
        if self.note_msg is not None:
            out.append(self.note_msg.text(lang))
        elif self.note:
            out.append(self.note)
        return out


class LengthMix(BaseModel):
    """Buckets of a length histogram over the window and over the baseline window."""

    signal: str
    query: str = ""
    now: list[Bucket] = Field(default_factory=list)
    base: list[Bucket] = Field(default_factory=list)


def _get(summaries: list[SignalSummary], *keys: str) -> SignalSummary | None:
    by = {s.key: s for s in summaries}
    for k in keys:
        s = by.get(k)
        if s is not None and s.now.ok:
            return s
    return None


def length_shift(mix: LengthMix | None, finding_id: str) -> Finding:
    """Did the length mix shift? Compares P50/P95 and the share above the baseline P95."""
    if mix is None:
        return Finding(id=finding_id, status="no_data").with_note(msg("evidence.load.no_histogram"))
    p95_b, p95_n = quantile(mix.base, 0.95), quantile(mix.now, 0.95)
    p50_b, p50_n = quantile(mix.base, 0.5), quantile(mix.now, 0.5)
    if p95_b is None or p95_n is None or p50_b is None or p50_n is None:
        return Finding(id=finding_id, status="no_data", evidence=[mix.query]).with_note(
            msg("evidence.load.no_observations")
        )
    share_n = share_above(mix.now, p95_b) or 0.0
    share_b = share_above(mix.base, p95_b) or 0.0
    fired = (p95_b > 0 and p95_n / p95_b >= LONG_SHIFT_RATIO) or (
        share_n - share_b >= LONG_SHARE_POINTS
    )
    return Finding(
        id=finding_id,
        status="fired" if fired else "not_fired",
        numbers={
            "p50_base": p50_b,
            "p50_now": p50_n,
            "p95_base": p95_b,
            "p95_now": p95_n,
            "share_above_base_p95_now": share_n,
            "share_above_base_p95_base": share_b,
        },
        evidence=[mix.query],
        detail=[
            msg(
                "evidence.load.length_mix",
                p50_base=p50_b,
                p50_now=p50_n,
                p95_base=p95_b,
                p95_now=p95_n,
                share_now=share_n,
                share_base=share_b,
            )
        ],
    )


def per_request_shift(
    tps: SignalSummary | None, qps: SignalSummary | None, finding_id: str
) -> Finding | None:
    """Tokens per request, now against the baseline, from a token rate (tok/s) and a
    request rate (req/s) of the same window: the length mix's mean where no length
    histogram is exported (Triton; SGLang before its token histograms). Fires at
    :data:`LONG_SHIFT_RATIO` either way the histogram finding would. ``None`` when a rate
    or its baseline is missing or zero."""
    if tps is None or qps is None:
        return None
    tn, tb, qn, qb = tps.now.value, tps.baseline.value, qps.now.value, qps.baseline.value
    if not (tn and tb and qn and qb):
        return None
    now, base = tn / qn, tb / qb
    ratio = now / base
    fired = ratio >= LONG_SHIFT_RATIO or ratio <= 1 / LONG_SHIFT_RATIO
    return Finding(
        id=finding_id,
        status="fired" if fired else "not_fired",
        numbers={"per_request_base": base, "per_request_now": now, "ratio": ratio},
        evidence=[tps.key, qps.key],
        detail=[msg("evidence.load.per_request", base=base, now=now, ratio=ratio)],
    ).with_note(msg("evidence.load.per_request_note"))


def _rate_direction(rate: SignalSummary) -> list[Msg]:
    """How to read an anomalous arrival rate: more requests can explain a latency rise
    (load); fewer requests is rather a symptom — clients giving up or retrying less, an
    upstream outage, or traffic moved elsewhere (seed 003, F: "请求到达率及其变化")."""
    if rate.verdict != "anomalous" or rate.ratio is None:
        return []
    return [msg("evidence.load.rate_up" if rate.ratio > 1 else "evidence.load.rate_down")]


def before_gpu(
    gw: SignalSummary | None, sv: SignalSummary | None, qt: SignalSummary | None
) -> Finding:
    """Time spent before the GPU (seed 003, F: "网关延迟 vs 服务延迟"): the gap between the
    gateway's P99 and the serving P99 against the baseline's gap, and the engine's own
    queue time (time a request waits before its prefill). Either one decides: without a
    gateway (or without a serving latency) the queue time alone does, and the finding
    says that the gap could not be read.

    The gap fires when it grew by ≥ 50 ms and ≥ 50 % of the baseline gap; the queue time
    when its own verdict is anomalous (the drilldown's thresholds). Both P99s are C's rows;
    when either is at its histogram's top bucket (a lower bound) or its lowest (an upper
    bound) no gap is read, and a queue time at a bound is given as that bound.
    """
    have_gap = gw is not None and sv is not None
    if not have_gap and qt is None:
        return Finding(id="before_gpu", status="no_data").with_note(
            msg("evidence.load.needs_latency")
        )
    nums: dict[str, float] = {}
    detail: list[Msg] = []
    fired = False
    by: list[str] = []
    bounded = gw is not None and sv is not None and any(_bound(s) for s in (gw, sv))
    if gw is not None and sv is not None and bounded:
        # a quantile at its histogram's top or lowest bucket is a bound: no gap to subtract
        top = gw.top_bucket is not None or sv.top_bucket is not None
        detail.append(
            msg(
                "evidence.load.latency_gap_bound" if top else "evidence.load.latency_gap_lowest",
                gateway=value_msg(gw),
                serving=value_msg(sv),
            )
        )
    elif gw is not None and sv is not None:
        gap_now = (gw.now.value or 0.0) - (sv.now.value or 0.0)
        nums.update(
            gateway_p99_now=gw.now.value or 0.0,
            serving_p99_now=sv.now.value or 0.0,
            gap_now=gap_now,
        )
        u = unit_suffix(gw.unit)
        # P99s of two histograms (the proxy's request time over every response it sent,
        # the engine's end-to-end time over the requests it finished, in other buckets) do
        # not subtract exactly: below zero the gap only says that no time shows up before
        # the serving layer, so it is not given as a duration, and the line says what each
        # one measures.
        detail.append(
            msg(
                "evidence.load.latency_gap" if gap_now >= 0 else "evidence.load.latency_gap_none",
                gateway=nums["gateway_p99_now"],
                serving=nums["serving_p99_now"],
                gap=gap_now,
                unit=u,
            )
        )
        if gw.baseline.ok and sv.baseline.ok:
            gap_b = (gw.baseline.value or 0.0) - (sv.baseline.value or 0.0)
            nums["gap_base"] = gap_b
            if gap_now - gap_b >= max(50.0, 0.5 * abs(gap_b)) and gap_now > 0:
                fired = True
                by.append("gap")
            detail.append(msg("evidence.load.gap_base", gap=gap_b, unit=u))
    if qt is not None and _bound(qt):
        # a bound, as A and C show it (vLLM's lowest bucket is 0.3 s: a P99 of "297 ms"
        # there is the interpolation, not a queue)
        nums["queue_time_now"] = qt.now.value or 0.0
        detail.append(msg("evidence.load.queue_time_bounded", now=value_msg(qt)))
        if qt.verdict == "anomalous":
            fired = True
            by.append("queue")
    elif qt is not None:
        nums["queue_time_now"] = qt.now.value or 0.0
        qu = unit_suffix(qt.unit)
        if qt.baseline.ok:
            nums["queue_time_base"] = qt.baseline.value or 0.0
            low = qt.lowest_bound
            inside = low is not None and nums["queue_time_base"] < low
            base = low if low is not None and inside else nums["queue_time_base"]
            detail.append(
                msg(
                    # a baseline inside the lowest bucket is its bound, as C shows it
                    "evidence.load.queue_time_base_lowest"
                    if inside
                    else "evidence.load.queue_time_base",
                    now=nums["queue_time_now"],
                    base=base,
                    unit=qu,
                )
            )
        else:
            detail.append(msg("evidence.load.queue_time", now=nums["queue_time_now"], unit=qu))
        if qt.verdict == "anomalous":
            fired = True
            by.append("queue")
    detail += [msg(f"evidence.load.before_gpu_by_{part}") for part in by]
    finding = Finding(
        id="before_gpu",
        status="fired" if fired else "not_fired",
        numbers=nums,
        evidence=[s.key for s in (gw, sv, qt) if s is not None],
        detail=detail,
        by=by,
    )
    if not have_gap:
        finding.with_note(msg("evidence.load.no_gap"))
    return finding


def _bound(s: SignalSummary) -> bool:
    """The value now is a bound of its histogram (top or lowest bucket), not a number."""
    return s.top_bucket is not None or s.bottom_bucket is not None


def analyze_load(
    summaries: list[SignalSummary],
    prompt_mix: LengthMix | None = None,
    output_mix: LengthMix | None = None,
    drilldown: list[SignalSummary] | None = None,
) -> list[Finding]:
    """Findings of step F from summaries (now vs baseline) and the length mixes.

    ``drilldown``: step C's summaries; the gateway-errors check reads those of
    :data:`UNHEALTHY_REPLICA_SIGNALS` (restarts, pods not ready), which are no row of F's
    table.
    """
    out: list[Finding] = []
    rate = _get(summaries, "access.qps:value", "serving.qps:value")
    if rate is None:
        out.append(Finding(id="arrival_rate", status="no_data"))
    else:
        base = rate.baseline.value
        out.append(
            Finding(
                id="arrival_rate",
                status="fired" if rate.verdict == "anomalous" else "not_fired",
                numbers={
                    "now": rate.now.value or 0.0,
                    **({"baseline": base} if base is not None else {}),
                    **({"ratio": rate.ratio} if rate.ratio is not None else {}),
                },
                evidence=[rate.key],
                detail=[_rate_msg(rate), *_rate_direction(rate)],
            )
        )
    qps = _get(summaries, "serving.qps:value", "access.qps:value")
    for mix, fid, tps in (
        (prompt_mix, "long_prompts", "serving.prompt_tps:value"),
        (output_mix, "output_mix", "serving.gen_tps:value"),
    ):
        found = length_shift(mix, fid)
        if found.status == "no_data":
            # No length histogram (or no observations): tokens per request from the token
            # and request rates, when both are there.
            found = per_request_shift(_get(summaries, tps), qps, fid) or found
        out.append(found)

    out.append(
        before_gpu(
            _get(summaries, "access.latency:p99"),
            _get(summaries, "serving.e2e_latency:p99"),
            _get(summaries, "serving.queue_time:p99", "serving.queue_time:avg"),
        )
    )

    g5 = _get(summaries, "access.error_ratio_5xx:value")
    s5 = _get(summaries, "serving.error_ratio:value")
    # Failures the engine never sees (vLLM's API server) are the servers' errors too.
    front = [
        s
        for s in (
            _get(summaries, "serving.rejected_ratio:value"),
            _get(summaries, "serving.api_error_ratio:value"),
        )
        if s is not None
    ]
    servers = ([s5] if s5 is not None else []) + front
    server_detail = [
        msg(
            "evidence.load.server_error_ratio" if s is s5 else "evidence.load.server_front_errors",
            now=s.now.value or 0.0,
            unit=unit_suffix(s.unit),
            name=signal_names(s.key),
        )
        for s in servers
    ]
    server_numbers = {
        ("now" if s is s5 else f"{s.signal}_now"): s.now.value or 0.0 for s in servers
    }
    # A replica that restarts or is not ready is a server that is not healthy, whatever
    # the error ratio of the replicas still answering says: the gateway's 5xx are then
    # its own (502/503 for the requests sent to it), not the gateway's.
    unhealthy = [
        s
        for s in drilldown or []
        if s.signal in UNHEALTHY_REPLICA_SIGNALS and s.verdict == "anomalous"
    ]
    if g5 is None:
        out.append(Finding(id="gateway_errors", status="no_data"))
    else:
        server_ok = all(s.verdict != "anomalous" for s in servers) and not unhealthy
        fired = g5.verdict == "anomalous" and server_ok
        nums = {"gateway_5xx_now": g5.now.value or 0.0}
        # A breach over by now reads as C and D read it (the peak its verdict rests on),
        # not as a bare "0 %" beside a verdict that fired.
        detail = [
            reading_msg(g5)
            if past_breach_peak(g5) is not None
            else msg(
                "evidence.load.gateway_5xx",
                now=nums["gateway_5xx_now"],
                unit=unit_suffix(g5.unit),
                name=signal_names(g5.key),
            )
        ]
        if s5 is not None:
            nums["server_errors_now"] = s5.now.value or 0.0
        detail += server_detail
        if unhealthy:
            detail.append(
                msg(
                    "evidence.load.replicas_unhealthy",
                    names=signal_names(*(s.key for s in unhealthy)),
                )
            )
            detail += [reading_msg(s) for s in unhealthy]
        finding = Finding(
            id="gateway_errors",
            status="fired" if fired else "not_fired",
            numbers=nums,
            evidence=[g5.key] + [s.key for s in servers],
            detail=detail,
        )
        if not servers:
            finding.with_note(msg("evidence.load.no_server_errors"))
        out.append(finding)
    if not servers:
        out.append(Finding(id="server_errors", status="no_data"))
    else:
        out.append(
            Finding(
                id="server_errors",
                status="fired" if any(s.verdict == "anomalous" for s in servers) else "not_fired",
                numbers=server_numbers,
                evidence=[s.key for s in servers],
                detail=server_detail,
            )
        )

    shared = [s for s in summaries if s.layer == "infrastructure" and s.verdict != "no_data"]
    if not shared:
        out.append(
            Finding(id="shared_node", status="no_data").with_note(msg("evidence.load.no_shared"))
        )
    else:
        bad = [s for s in shared if s.verdict == "anomalous"]
        out.append(
            Finding(
                id="shared_node",
                status="fired" if bad else "not_fired",
                numbers={s.key: s.now.value or 0.0 for s in shared},
                evidence=[s.key for s in (bad or shared)],
                detail=[
                    msg(
                        "evidence.load.shared_signal",
                        key=s.key,
                        name=signal_names(s.key),
                        now=s.now.value or 0.0,
                        unit=unit_suffix(s.unit),
                        verdict=msg(f"metrics.verdict.{s.verdict}"),
                    )
                    for s in shared
                ],
            )
        )
    return out


def _rate_msg(rate: SignalSummary) -> Msg:
    """The arrival rate now, against its baseline when there is one."""
    u = unit_suffix(rate.unit)
    now = rate.now.value or 0.0
    base = rate.baseline.value
    if base is None:
        return msg("evidence.load.rate_no_base", now=now, unit=u)
    if rate.ratio is None:
        return msg("evidence.load.rate_base", now=now, base=base, unit=u)
    return msg("evidence.load.rate", now=now, base=base, ratio=rate.ratio, unit=u)
