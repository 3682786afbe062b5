"""One verdict per signal: the judgement of a value against its baseline, its SLO and its
histogram's top bucket is made once, and the reading rules, step I's recovery band and
the playbooks read that same judgement."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cockpit.analysis.golden import (
    SignalSummary,
    apply_slo,
    judge,
    judge_msg,
    reading_msg,
    summarize,
    threshold_for,
    value_msg,
)
from cockpit.analysis.layers import drilldown, queue_growing, signal_row
from cockpit.analysis.playbooks.data import PlaybookData, Signal
from cockpit.analysis.playbooks.ttft_checks import ttft_queue, ttft_tpot_rule
from cockpit.analysis.recovery import LineStatus, band_limit, check_recovery
from cockpit.collect.recovery import signals_from_golden
from cockpit.collect.signals import bottom_bucket, bucket_grid, top_bucket
from cockpit.models import Reading, Sample, Series

T0 = 1_700_000_000.0


def series(values: list[float], t0: float = T0, step: float = 60.0) -> list[Series]:
    return [Series(samples=[Sample(t=t0 + i * step, v=v) for i, v in enumerate(values)])]


def summary(key: str, unit: str, now: list[Series], base: list[Series] | None) -> SignalSummary:
    """:func:`summarize` of ``key`` (``<signal>:<stat>``)."""
    sid, _, stat = key.partition(":")
    return summarize(key, sid, stat, unit, now, base)


def test_a_move_of_x2_on_the_harmless_side_is_changed_not_normal() -> None:
    # latency halved: not bad, but not "normal" either
    assert judge("serving.e2e_latency", 90, 180)[0] == "changed"
    # KV cache doubled under its 95 % ceiling
    verdict, reason = judge_msg("runtime.kv_cache", 80.0, 40.0, "%")
    assert verdict == "changed" and "95%" in reason.text("en")
    # from nothing to something on a signal that is only bad when it drops
    assert judge("hardware.sm_clock", 1400, 0)[0] == "changed"
    # ×1.9 is still normal; the bad side stays anomalous
    assert judge("serving.e2e_latency", 100, 180)[0] == "normal"
    assert judge("serving.e2e_latency", 400, 180)[0] == "anomalous"
    # a changed signal leaves its layer normal but is listed first
    rows = [
        summarize(
            "serving.e2e_latency:p99",
            "serving.e2e_latency",
            "p99",
            "ms",
            series([90] * 20),
            series([180] * 20),
        ),
        summary("serving.ttft:p99", "ms", series([100] * 20), series([101] * 20)),
    ]
    layer = drilldown(rows).layer("serving")
    assert layer.verdict == "normal" and layer.evidence[0] == "serving.e2e_latency:p99"


def test_a_signal_over_its_slo_is_never_normal() -> None:
    # P99 180 → 250 ms is ×1.39, under the ×1.5 ratio: normal against the baseline …
    values = [180.0] * 30 + [250.0] * 30
    row = summary("access.latency:p99", "ms", series(values), series([180.0] * 60))
    assert row.verdict == "normal"
    # … but a configured SLO of 200 ms is crossed: anomalous, and the reason says so
    breach = apply_slo(row, 200.0, signal="latency_p99", derived=False)
    assert breach is not None and row.verdict == "anomalous"
    assert row.slo == 200.0 and row.slo_breach_at == breach.at
    assert breach.at == datetime.fromtimestamp(T0 + 30 * 60, UTC)
    assert "SLO 200 ms" in row.reason and "SLO 200 ms" in row.reason_text("zh")
    # the rule that reads it sees the same verdict
    assert drilldown([row]).layer("access").verdict == "anomalous"
    # under its SLO, the verdict is the baseline's
    ok = summary(
        "access.latency:p99",
        "ms",
        series([180.0] * 60),
        series([180.0] * 60),
    )
    assert apply_slo(ok, 200.0, signal="latency_p99", derived=False) is None
    assert ok.verdict == "normal" and ok.slo == 200.0


def buckets(counts: dict[str, float]) -> list[Series]:
    """One cumulative bucket series per ``le``, the same count at two points."""
    return [
        Series(labels={"le": le}, samples=[Sample(t=T0, v=c), Sample(t=T0 + 60, v=c)])
        for le, c in counts.items()
    ]


def p99_row(sid: str, value: float) -> SignalSummary:
    """A P99 row in ms at ``value`` with no baseline."""
    return summarize(f"{sid}:p99", sid, "p99", "ms", series([value] * 5), None)


def test_a_quantile_in_the_top_bucket_is_a_lower_bound() -> None:
    # 3 % of requests above the 159.2 s top bound: the P99 is beyond it
    stuck = bucket_grid(buckets({"10": 90.0, "159.2": 97.0, "+Inf": 100.0}))
    assert top_bucket(stuck, 0.99, 1000.0) == 159_200.0
    assert top_bucket(stuck, 0.95, 1000.0) is None
    fine = bucket_grid(buckets({"10": 99.5, "159.2": 100.0, "+Inf": 100.0}))
    assert top_bucket(fine, 0.99, 1000.0) is None
    row = p99_row("serving.e2e_latency", 159_200.0)
    row.top_bucket = 159_200.0
    assert value_msg(row).text("en") == "≥ 159,200 ms, top bucket"
    assert "≥ 159,200 ms" in value_msg(row).text("zh")
    assert reading_msg(row).text("en").startswith("end-to-end latency P99 ≥ 159,200 ms, top bucket")


def test_a_quantile_in_the_lowest_bucket_is_an_upper_bound() -> None:
    """vLLM's queue-time histogram starts at 0.3 s: requests that queue for a millisecond
    all land in that bucket, and ``histogram_quantile`` answers q × 0.3 s for them (a P99 of
    "297 ms" on a service that does not queue). That is shown as the bound it is."""

    idle = bucket_grid(buckets({"0.3": 100.0, "0.5": 100.0, "+Inf": 100.0}))
    assert bottom_bucket(idle, 0.99, 1000.0) == 300.0
    assert bottom_bucket(idle, 0.5, 1000.0) == 300.0
    # 2 % above the lowest bound: the P99 is interpolated between real bounds
    queued = bucket_grid(buckets({"0.3": 98.0, "0.5": 100.0, "+Inf": 100.0}))
    assert bottom_bucket(queued, 0.99, 1000.0) is None
    assert bottom_bucket(queued, 0.95, 1000.0) == 300.0
    # a lowest bound of 0 is exact (histogram_quantile answers it), no observations: none
    assert bottom_bucket(bucket_grid(buckets({"0": 100.0, "+Inf": 100.0})), 0.5) is None
    assert bottom_bucket(bucket_grid(buckets({"0.3": 0.0, "+Inf": 0.0})), 0.5) is None
    row = p99_row("serving.queue_time", 297.0)
    row.bottom_bucket = 300.0
    assert value_msg(row).text("en") == "≤ 300 ms, lowest bucket"
    assert "≤ 300 ms（落在直方图最低桶）" in value_msg(row).text("zh")
    assert reading_msg(row).text("en").startswith("queue time P99 ≤ 300 ms, lowest bucket")
    # F's time-before-the-GPU check quotes it as the bound, never as a 297 ms queue
    from cockpit.analysis.load import before_gpu

    f = before_gpu(None, None, row)
    assert "≤ 300 ms, lowest bucket" in " ".join(f.text("en")) and "297" not in " ".join(
        f.text("en")
    )
    # E's service-wide column (C's value) says the same, never the interpolated 297 ms
    from cockpit.analysis.cohort import CohortRow
    from cockpit.plugins.cohort import service_text

    cohort = CohortRow(
        key=row.key, signal=row.signal, unit="ms", service=297.0, service_msg=value_msg(row)
    )
    assert service_text(cohort, "ms", "en") == "≤ 300 ms, lowest bucket"
    assert service_text(cohort, "ms", "zh") == value_msg(row).text("zh")


def test_a_ratio_against_a_bucket_bound_is_a_bound_on_every_line() -> None:
    """Only one side in an edge bucket: the ratio is taken against the bound and written
    as the bound it is. A queue time of 1,816 ms against a baseline inside the 300 ms
    lowest bucket rose at least ×6.05 (never the ×12.10 an interpolated 150 ms gives); a
    value now inside it against 750 ms fell to at most ×0.40; a value now in the top
    bucket rose at least its ratio."""
    from cockpit.analysis.golden import change_text, judge_lowest_bucket

    def row(sid: str, now: float, base: float) -> SignalSummary:
        return summarize(f"{sid}:p99", sid, "p99", "ms", series([now] * 5), series([base] * 5))

    up = row("serving.queue_time", 1816.0, 150.0)
    up.lowest_bound = 300.0
    judge_lowest_bucket(up)
    assert up.ratio_bound == "at_least" and round(up.ratio or 0, 2) == 6.05
    assert up.verdict == "anomalous"
    assert change_text(up, "en") == change_text(up, "zh") == "≥ ×6.05"
    assert "≥ ×6.05 baseline" in reading_msg(up).text("en")
    assert "至少为基线的 ×6.05" in reading_msg(up).text("zh")
    assert "12.1" not in reading_msg(up).text("en") + change_text(up, "en")

    down = row("serving.queue_time", 150.0, 750.0)
    down.lowest_bound = down.bottom_bucket = 300.0
    judge_lowest_bucket(down)
    assert down.ratio_bound == "at_most" and round(down.ratio or 0, 2) == 0.4
    assert change_text(down, "en") == "≤ ×0.40"
    assert "≤ ×0.40 baseline" in reading_msg(down).text("en")

    top = row("serving.e2e_latency", 159_200.0, 1000.0)
    top.top_bucket = 159_200.0
    judge_lowest_bucket(top)
    assert top.ratio_bound == "at_least" and change_text(top, "en") == "≥ ×159.20"

    # both measured: a plain ratio, as before
    plain = row("serving.queue_time", 1816.0, 600.0)
    plain.lowest_bound = 300.0
    judge_lowest_bucket(plain)
    assert plain.ratio_bound == "" and change_text(plain, "en") == "×3.03"


def test_per_replica_quantiles_in_an_edge_bucket_are_bounds_in_e_and_the_playbooks() -> None:
    """A quantile per replica (D, E) and the playbooks' reading of C's row carry the same
    bound as C's service-wide value: five replicas that do not queue are each "≤ 300 ms,
    lowest bucket", and so is their median; E never writes the interpolated 297 ms."""
    from cockpit.analysis.blast_radius import Breakdown, EntityValue
    from cockpit.analysis.cohort import CohortDef, compare, median_edge, median_text, suspect_text
    from cockpit.analysis.golden import BucketEdge
    from cockpit.analysis.inventory import Inventory
    from cockpit.collect.signals import edged_quantiles
    from cockpit.models import InstantVector

    def vector(pod: str, counts: dict[str, float]) -> list[InstantVector]:
        return [InstantVector(labels={"pod": pod, "le": le}, t=T0, v=c) for le, c in counts.items()]

    idle = {"0.3": 100.0, "0.5": 100.0, "+Inf": 100.0}
    stuck = {"0.3": 10.0, "159.2": 97.0, "+Inf": 100.0}
    mid = {"0.3": 50.0, "0.5": 100.0, "+Inf": 100.0}
    got = {
        v.labels["pod"]: (round(v.v, 3), e)
        for v, e in edged_quantiles(
            vector("a", idle) + vector("b", stuck) + vector("c", mid), 0.99, 1000.0
        )
    }
    assert got["a"] == (297.0, BucketEdge(side="bottom", bound=300.0))
    assert got["b"] == (159_200.0, BucketEdge(side="top", bound=159_200.0))
    assert got["c"][1] is None  # interpolated between two real bounds: a measured value

    low = BucketEdge(side="bottom", bound=300.0)

    def ev(pod: str, value: float, edge: BucketEdge | None) -> EntityValue:
        return EntityValue(entity=pod, kind="pod", pod=pod, value=value, edge=edge)

    peers = [ev(f"p{i}", 297.0 + i * 0.5, low) for i in range(5)]
    assert median_edge(peers) == low
    # the middle value measured: the median is a number, whatever the others are
    assert (
        median_edge([*peers[:2], ev("x", 420.0, None), ev("y", 450.0, None), ev("z", 460.0, None)])
        is None
    )
    # an even count: both middle values must be bounded on the same side
    assert median_edge(peers[:4]) == low
    assert median_edge([peers[0], ev("x", 420.0, None)]) is None

    b = Breakdown(
        key="serving.queue_time:p99",
        signal="serving.queue_time",
        unit="ms",
        values=[ev("sus", 2_400.0, None), *peers],
    )
    cohort = CohortDef(
        suspect="sus", suspect_kind="pod", kind="replicas", members=[f"p{i}" for i in range(5)]
    )
    [row] = compare(cohort, [b], Inventory()).rows
    assert median_text(row, "en") == "≤ 300 ms, lowest bucket"
    assert median_text(row, "zh") == "≤ 300 ms（落在直方图最低桶）"
    assert suspect_text(row, "en") == "2,400 ms"
    # the other way round: the suspect in the lowest bucket, the cohort queueing
    b.values = [ev("sus", 297.0, low), *(ev(f"p{i}", 2_000.0, None) for i in range(5))]
    [row] = compare(cohort, [b], Inventory()).rows
    assert suspect_text(row, "en") == "≤ 300 ms, lowest bucket"
    assert median_text(row, "en") == "2,000 ms"

    # the TTFT playbook's queue item reads C's row as C shows it
    data = PlaybookData(
        metrics={
            "queue_time_p99": Signal(
                now=Reading.known(297.0, "ms"),
                baseline=Reading.known(296.0, "ms"),
                signal_id="serving.queue_time",
                verdict="normal",
                bottom_bucket=300.0,
                lowest_bound=300.0,
            )
        }
    )
    [evidence] = ttft_queue(data).evidence
    assert evidence.value == "≤ 300" and "297" not in evidence.value
    assert "≤ 300 ms" in str(evidence.label_args) and "296" not in str(evidence.label_args)


def test_the_gateway_item_of_the_ttft_playbook_is_not_decided_by_the_engines_queue() -> None:
    """F's time-before-the-GPU finding fires on the gateway-serving gap or on the queue
    time; the TTFT playbook's item asks about ingress, auth, the gateway and downstreams,
    so a finding fired by the queue alone answers it "no" (the queue has its own item),
    and a gap that grew answers it "yes"."""
    from cockpit.analysis.load import before_gpu
    from cockpit.analysis.playbooks.ttft_checks import ttft_before_gpu

    base = series([151.0] * 60)
    qt = summary("serving.queue_time:p99", "ms", series([8_900.0] * 60), series([600.0] * 60))
    assert qt.verdict == "anomalous"
    flat_gw = summary("access.latency:p99", "ms", series([9_305.0] * 60), base)
    sv = summary("serving.e2e_latency:p99", "ms", series([9_300.0] * 60), series([146.0] * 60))
    queue_only = before_gpu(flat_gw, sv, qt)
    assert queue_only.status == "fired"
    item = ttft_before_gpu(PlaybookData(load={"before_gpu": queue_only}))
    assert item.status.value == "ok", item
    assert item.finding_key == "playbook.finding.ttft.before_gpu_queue_only"
    wide_gw = summary("access.latency:p99", "ms", series([9_900.0] * 60), base)
    gap = before_gpu(wide_gw, sv, qt)
    assert ttft_before_gpu(PlaybookData(load={"before_gpu": gap})).status.value == "problem"


def test_two_values_inside_the_lowest_bucket_show_no_change() -> None:
    """vLLM's queue-time P50 at 280 ms now against 150 ms in the baseline: both inside the
    histogram's 0.3 s bucket, shown "≤ 300" and "≤ 300". C reads no change there (never
    ×1.87 anomalous), and step I's band never ends below the bound, so a queue back in
    its lowest bucket is recovered."""
    from cockpit.analysis.golden import judge_lowest_bucket

    row = summary("serving.queue_time:p50", "ms", series([280.0] * 60), series([150.0] * 60))
    assert row.verdict == "anomalous" and row.ratio is not None  # the interpolations
    row.lowest_bound = 300.0
    judge_lowest_bucket(row)
    assert row.verdict == "normal" and row.ratio is None
    assert "lowest bucket (≤ 300 ms)" in row.reason_text("en")
    # out of the bucket now: judged as ever
    spike = summary("serving.queue_time:p50", "ms", series([1_816.0] * 60), series([150.0] * 60))
    spike.lowest_bound = 300.0
    judge_lowest_bucket(spike)
    assert spike.verdict == "anomalous" and spike.ratio is not None
    # step I: back inside the bucket after a spike is within the band
    back = summary(
        "serving.queue_time:p50",
        "ms",
        series([1_816.0] * 30 + [280.0] * 30),
        series([150.0] * 60),
    )
    back.lowest_bound = 300.0
    judge_lowest_bucket(back)
    [sig] = signals_from_golden([back])
    assert band_limit("serving.queue_time", 150.0, sig.direction) < 300.0
    res = check_recovery([sig], NOW, hold_minutes=15)
    assert res.lines[0].limit == 300.0 and res.recovered is True


def test_reading_rules_read_the_rows_the_table_shows() -> None:
    base = series([10.0] * 30)
    rows = [
        summary("serving.ttft:p99", "ms", series([60.0] * 30), base),
        # TPOT P99 flat but its P50 is ×1.67: TPOT is not "normal"
        summary("serving.tpot:p50", "ms", series([16.7] * 30), base),
        summary("serving.tpot:p99", "ms", series([10.5] * 30), base),
    ]
    assert signal_row(rows, "serving.tpot") is rows[1]
    dd = drilldown(rows)
    fired = {r.id for r in dd.rules if r.status == "fired"}
    assert "ttft_and_tpot" in fired and "ttft_not_tpot" not in fired
    rule = next(r for r in dd.rules if r.id == "ttft_and_tpot")
    assert rule.evidence == ["serving.ttft:p99", "serving.tpot:p50"]
    assert "TPOT / ITL P50 16.7 ms (×1.67 baseline, anomalous)" in rule.line("en")


def test_queue_growing_has_one_definition() -> None:
    # 1,372 waiting against a baseline of 900 (×1.52: under the ×2 threshold), but it
    # built up inside the window from 40: growing
    values = [40.0] * 20 + [600.0] * 20 + [1372.0] * 20
    q = summary("serving.queue:value", "req", series(values), series([900.0] * 60))
    assert q.verdict == "normal" and queue_growing(q) is True
    gpu = summary(
        "hardware.gpu_util:value",
        "%",
        series([99.0] * 60),
        series([97.0] * 60),
    )
    fired = {r.id for r in drilldown([q, gpu]).rules if r.status == "fired"}
    assert "gpu_saturated_queue" in fired and "gpu_saturated_no_queue" not in fired
    # a flat queue at its baseline is not growing
    flat = summary(
        "serving.queue:value",
        "req",
        series([900.0] * 60),
        series([900.0] * 60),
    )
    assert queue_growing(flat) is False
    fired = {r.id for r in drilldown([flat, gpu]).rules if r.status == "fired"}
    assert "gpu_saturated_no_queue" in fired
    # no value now: undecided
    none = summary("serving.queue:value", "req", [], series([900.0] * 60))
    assert queue_growing(none) is None


NOW = datetime.fromtimestamp(T0 + 59 * 60, UTC)


def test_recovery_band_is_the_drilldown_threshold_and_demand_is_context() -> None:
    # P99 back at 250 ms against a 180 ms baseline: ×1.39, normal for the drilldown
    # (×1.5), so recovered; a ±20 % band would have said "not recovered"
    p99 = summary(
        "access.latency:p99",
        "ms",
        series([620.0] * 30 + [250.0] * 30),
        series([180.0] * 60),
    )
    assert p99.verdict == "normal"
    # QPS still at ×0.7: the clients' demand, not a failure of the service
    qps = summary(
        "access.qps:value",
        "req/s",
        series([700.0] * 60),
        series([1000.0] * 60),
    )
    assert qps.verdict == "anomalous"
    sigs = signals_from_golden([p99, qps])
    res = check_recovery(sigs, NOW, hold_minutes=15)
    lines = {line.key: line for line in res.lines}
    assert lines["access.latency:p99"].status is LineStatus.RECOVERED
    assert lines["access.latency:p99"].limit == band_limit(
        "access.latency", 180.0, sigs[0].direction
    )
    assert lines["access.latency:p99"].limit == 180.0 * threshold_for("access.latency").up  # type: ignore[operator]
    assert lines["access.qps:value"].status is LineStatus.CONTEXT
    assert res.recovered is True
    # a row that A and C call anomalous now is never recovered
    hot = summary(
        "access.latency:p99",
        "ms",
        series([250.0] * 60),
        series([180.0] * 60),
    )
    apply_slo(hot, 200.0, signal="latency_p99", derived=False)
    res = check_recovery(signals_from_golden([hot]), NOW, hold_minutes=15)
    assert res.recovered is False and res.lines[0].verdict_now == "anomalous"


def test_recovery_holds_output_tokens_to_a_floor_not_a_ceiling() -> None:
    """Arrivals up ×1.6 and scaled out: output tokens/s stays ×1.6 above its baseline
    because the service answers the extra demand. That is not a failure to recover (only
    fewer tokens out than the baseline is): shown as context, as the demand is; a
    throughput that collapsed still fails."""
    from cockpit.analysis.recovery import Direction

    busy = summary(
        "serving.gen_tps:value", "tok/s", series([23_805.0] * 60), series([14_880.0] * 60)
    )
    assert busy.verdict == "anomalous"  # C: a ×1.6 move of a traffic signal
    ttft = summary(
        "serving.ttft:p99", "ms", series([9_300.0] * 30 + [160.0] * 30), series([151.0] * 60)
    )
    sig, back = signals_from_golden([busy, ttft])
    assert sig.direction is Direction.LOWER_IS_WORSE and sig.context
    res = check_recovery([sig, back], NOW, hold_minutes=15)
    assert res.lines[0].status is LineStatus.CONTEXT and res.recovered is True
    slow = summary(
        "serving.gen_tps:value", "tok/s", series([6_000.0] * 60), series([14_880.0] * 60)
    )
    res = check_recovery(signals_from_golden([slow]), NOW, hold_minutes=15)
    assert res.recovered is False


def test_recovery_tolerates_the_baseline_noise() -> None:
    # a baseline that itself swings up to 300 ms (median 180): samples at 260 ms are as
    # the baseline often was
    noisy = [180.0, 300.0, 170.0, 290.0, 185.0, 175.0] * 10
    noisy_row = summary(
        "access.latency:p99",
        "ms",
        series([620.0] * 30 + [265.0] * 30),
        series(noisy),
    )
    [sig] = signals_from_golden([noisy_row])
    assert sig.baseline_noise is not None and sig.baseline_noise >= 290.0
    assert check_recovery([sig], NOW, hold_minutes=15).recovered is True


def _sig(now: float, base: float, signal_id: str = "", verdict: str = "") -> Signal:
    return Signal(
        now=Reading.known(now, "req/s"),
        baseline=Reading.known(base, "req/s"),
        signal_id=signal_id,
        verdict=verdict,
    )


def test_playbook_items_judge_with_the_drilldown_thresholds() -> None:
    # arrival rate ×1.46: anomalous for the traffic threshold (×1.25) as in step C —
    # the playbook no longer calls it flat under its own ×1.5
    assert judge("serving.qps", 1460, 1000)[0] == "anomalous"
    data = PlaybookData(metrics={"arrival_rate": _sig(1460, 1000, "serving.qps")})
    item = ttft_queue(data)
    assert item.status.value == "problem" and "arrival_rate" in item.finding_args["signals"]
    # read from the drilldown, its verdict is taken as it is
    data = PlaybookData(metrics={"arrival_rate": _sig(1460, 1000, "serving.qps", "normal")})
    assert ttft_queue(data).status.value == "ok"
    # TPOT ×1.67 is anomalous (×1.5): "TTFT and TPOT both worse", not "TPOT normal"
    data = PlaybookData(
        metrics={
            "ttft_p99": _sig(600, 100, "serving.ttft"),
            "tpot_p99": _sig(16.7, 10, "serving.tpot"),
        }
    )
    assert ttft_tpot_rule(data).finding_key == "playbook.finding.ttft.rule_overload"


def test_the_impact_start_is_never_after_the_first_alert() -> None:
    from cockpit.analysis.alerts import FiredAlert
    from cockpit.analysis.golden import Breach

    b = Breach(at=NOW, signal="latency_p99", value=300, slo=270, derived=True)
    first = FiredAlert(name="TTFTHigh", labels={}, first=NOW - timedelta(minutes=5), last=NOW)
    from cockpit.collect.golden import offered_start

    moved = offered_start(b, [first])
    assert moved is not None and moved.at == first.first and moved.alert == "TTFTHigh"
    assert moved.crossed_at == NOW
    assert offered_start(b, []) == b
    later = FiredAlert(name="X", labels={}, first=NOW + timedelta(minutes=1), last=NOW)
    assert offered_start(b, [later]) == b


def test_a_breach_earlier_in_the_window_does_not_fail_a_recovered_signal() -> None:
    # gateway 5xx at 5 % during the incident (its SLO 0.5 %), back at 0 % for the last
    # half hour against a 0 % baseline: steps A and C call the window anomalous (it
    # breached), but the value now is within its band and under its SLO — recovered
    row = summary(
        "access.error_ratio_5xx:value",
        "%",
        series([5.0] * 30 + [0.0] * 30),
        series([0.0] * 60),
    )
    assert apply_slo(row, 0.5, signal="error_ratio", derived=False) is not None
    assert row.verdict == "anomalous"
    [sig] = signals_from_golden([row])
    assert sig.verdict_now == "normal"
    res = check_recovery([sig], NOW, hold_minutes=15)
    assert res.lines[0].status is LineStatus.RECOVERED
    assert res.recovered is True
    # still over the SLO now: not recovered
    hot = summary(
        "access.error_ratio_5xx:value",
        "%",
        series([5.0] * 60),
        series([0.0] * 60),
    )
    apply_slo(hot, 0.5, signal="error_ratio", derived=False)
    assert check_recovery(signals_from_golden([hot]), NOW, hold_minutes=15).recovered is False


def test_the_recovery_check_of_the_gpu_temperature_names_the_rule_of_c() -> None:
    """90 °C over a 67 °C baseline: C's verdict cites its fixed 85 °C threshold; I's
    recovery line judges by the same rule (the band 77 °C is capped by 85 °C) and says
    so, naming 85 °C, instead of a bound C never mentions."""
    from cockpit.collect.recovery import line_text

    temp = summary("hardware.temp:max", "°C", series([90.0] * 60), series([67.0] * 60))
    verdict, reason = judge_msg("hardware.temp", 90.0, 67.0, "°C")
    assert verdict == "anomalous" and "85" in reason.text("en")
    [line] = check_recovery(signals_from_golden([temp]), NOW, hold_minutes=15).lines
    assert line.status is LineStatus.NOT_RECOVERED and line.ceiling == 85.0
    assert line.limit == band_limit("hardware.temp", 67.0, line.direction)
    text = line_text(line, "en")
    assert "upper bound 77" in text and "at or above 85 °C whatever the baseline" in text
    assert "step C" in text
    assert "85 °C" in line_text(line, "zh") and "步骤 C" in line_text(line, "zh")


def test_step_i_checks_every_signal_c_calls_anomalous_utilization_included() -> None:
    # GPU utilization 72 → 96.5 % and SM activity 40 → 90 %: C calls both anomalous
    util = summary("hardware.gpu_util:value", "%", series([96.5] * 60), series([72.0] * 60))
    sm = summary("hardware.sm_active:value", "%", series([90.0] * 60), series([40.0] * 60))
    qps = summary("access.qps:value", "req/s", series([700.0] * 60), series([1000.0] * 60))
    assert (util.verdict, sm.verdict, qps.verdict) == ("anomalous",) * 3
    res = check_recovery(signals_from_golden([util, sm, qps]), NOW, hold_minutes=15)
    lines = {line.key: line for line in res.lines}
    assert set(lines) == {util.key, sm.key, qps.key}
    assert lines[util.key].verdict_now == "anomalous"
    assert lines[util.key].status is not LineStatus.RECOVERED
    assert lines[sm.key].status is not LineStatus.RECOVERED
    # demand stays context, never a failure criterion
    assert lines[qps.key].status is LineStatus.CONTEXT
    assert res.recovered is False
    # back at its baseline: utilization is checked and recovered
    back = summary(
        "hardware.gpu_util:value",
        "%",
        series([96.5] * 30 + [72.0] * 30),
        series([72.0] * 60),
    )
    [line] = check_recovery(signals_from_golden([back]), NOW, hold_minutes=15).lines
    assert line.status is LineStatus.RECOVERED
    # a busy GPU that C does not call anomalous is not a recovery criterion
    busy = summary("hardware.gpu_util:value", "%", series([74.0] * 60), series([72.0] * 60))
    assert busy.verdict != "anomalous"
    assert signals_from_golden([busy]) == []


def test_a_count_of_one_takes_the_singular_in_english() -> None:
    """``1 restart``, ``+1 restart``, never ``1 restarts``; Chinese has no plural; a unit
    shared by two numbers of one line keeps the plural of the larger."""
    from cockpit.analysis.golden import change_text
    from cockpit.models.messages import msg

    assert msg("evidence.value.plain", value=1.0, unit=" restarts").text("en") == "1 restart"
    assert msg("evidence.value.plain", value=3.0, unit=" restarts").text("en") == "3 restarts"
    assert msg("evidence.value.plain", value=1.0, unit=" restarts").text("zh") == "1 次重启"
    row = summarize(
        "r:value", "runtime.restarts", "value", "restarts", series([1.0] * 5), series([0.0] * 5)
    )
    assert change_text(row, "en") == "+1 restart"
    assert change_text(row, "zh") == "+1 次重启"
    two = msg("evidence.reason.small_change", unit=" restarts", delta=1.0, min_delta=2.0)
    assert two.text("en").endswith("below 2 restarts")
