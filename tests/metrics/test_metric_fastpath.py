"""The drilldown's fast paths give the answers of the general ones: range answers decoded
straight into samples, client-side quantiles from bucket rates, the baseline at a coarser
step, and connection pools of bounded size that still put every query in flight."""

from __future__ import annotations

import asyncio
import json
import math
import statistics
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cockpit.analysis.load import Bucket, cumulative, quantile, quantile_cumulative
from cockpit.collect.base import make_window
from cockpit.collect.runner import QueryResult, QueryRunner, QuerySpec, cancel_all
from cockpit.collect.signals import (
    PlannedSignal,
    bucket_grid,
    collect_summaries,
    grid_quantile,
    inside_quiet,
    quantile_series,
    sliced,
    vector_quantiles,
)
from cockpit.config import PrometheusSettings
from cockpit.models import InstantVector, Sample, Series
from cockpit.scenarios.promserver import PromServer
from cockpit.sources.base import ErrorKind, SourceError
from cockpit.sources.prometheus import (
    PrometheusSource,
    fast_matrix,
    fast_vector,
    parse_instant,
    parse_range,
)
from tests.backends.faultproxy import Fault, FaultProxy

TTFT_BUCKETS = (
    'sum by (le) (rate(vllm:time_to_first_token_seconds_bucket{namespace="llm-serving"}[5m]))'
)


def _source(url: str, **kw: object) -> PrometheusSource:
    return PrometheusSource(PrometheusSettings(url=url, **kw))  # type: ignore[arg-type]


def _prom_value(v: float) -> str:
    """A sample value as Prometheus writes it."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return repr(v)


_values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64), st.integers(-(10**12), 10**12)
)
_series = st.fixed_dictionaries(
    {
        "metric": st.dictionaries(st.sampled_from(["le", "pod", "Hostname"]), st.text(max_size=5)),
        "values": st.lists(
            st.tuples(st.integers(1_700_000_000, 1_800_000_000), _values), max_size=8
        ),
    }
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_series, max_size=4), st.booleans())
def test_fast_matrix_reads_what_the_general_parser_reads(
    series: list[dict[str, object]], numeric: bool
) -> None:
    result = [
        {
            "metric": s["metric"],
            "values": [
                [t, float(v) if numeric and math.isfinite(v) else _prom_value(float(v))]
                for t, v in s["values"]  # type: ignore[attr-defined]
            ],
        }
        for s in series
    ]
    data = {"resultType": "matrix", "result": result}
    body = json.dumps({"status": "success", "data": data}).encode()
    general = parse_range(json.loads(body)["data"])
    fast = fast_matrix(body)
    if fast is None:
        # Only "+Inf" sends an answer to the general path.
        assert '"+Inf"' in body.decode()
        return

    def norm(ss: list[Series]) -> list[tuple[dict[str, str], list[tuple[float, float | str]]]]:
        return [
            (s.labels, [(p.t, "nan" if math.isnan(p.v) else p.v) for p in s.samples]) for s in ss
        ]

    assert norm(fast) == norm(general)
    assert all(type(p) is Sample for s in fast for p in s.samples)


def test_fast_matrix_declines_other_answers() -> None:
    for body in (
        b'{"status":"error","errorType":"bad_data","error":"x"}',
        b'{"status":"success","data":{"resultType":"vector","result":[]}}',
        # no resultType (some compatible servers): only the general path infers it
        b'{"status":"success","data":{"result":[{"metric":{},"value":[1,"2"]}]}}',
        b'{"status":"success","data":{"resultType":"matrix","result":[{"values":[[1,true]]}]}}',
        b"<html>",
    ):
        assert fast_matrix(body) is None


@settings(max_examples=300, deadline=None)
@given(st.lists(_series, max_size=4), st.booleans())
def test_fast_vector_reads_what_the_general_parser_reads(
    series: list[dict[str, object]], numeric: bool
) -> None:
    """An instant query's rows decoded straight (:func:`fast_vector`) are those of
    ``json`` + :func:`parse_instant`, whatever the labels and values."""
    result = [
        {
            "metric": s["metric"],
            "value": [t, float(v) if numeric and math.isfinite(v) else _prom_value(float(v))],
        }
        for s in series
        for t, v in s["values"][:1]  # type: ignore[index]
    ]
    body = json.dumps(
        {"status": "success", "data": {"resultType": "vector", "result": result}}
    ).encode()
    general = parse_instant(json.loads(body)["data"])
    fast = fast_vector(body)
    if fast is None:
        assert '"+Inf"' in body.decode()
        return

    def norm(vs: list[InstantVector]) -> list[tuple[dict[str, str], float, float | str]]:
        return [(v.labels, v.t, "nan" if math.isnan(v.v) else v.v) for v in vs]

    assert norm(fast) == norm(general)


def test_fast_vector_declines_other_answers() -> None:
    for body in (
        b'{"status":"error","errorType":"bad_data","error":"x"}',
        b'{"status":"success","data":{"resultType":"matrix","result":[]}}',
        b'{"status":"success","data":{"resultType":"scalar","result":[1,"2"]}}',
        b'{"status":"success","data":{"result":[{"metric":{},"value":[1,"2"]}]}}',
        b'{"status":"success","data":{"resultType":"vector","result":[{"value":[1,true]}]}}',
        b'{"status":"success","data":{"resultType":"vector","result":[{"value":[1]}]}}',
        b"<html>",
    ):
        assert fast_vector(body) is None, body


async def test_range_answers_the_fast_path_declines_still_parse(
    worked_example_prom: PromServer, prom_fault_proxy: FaultProxy
) -> None:
    at = worked_example_prom.scenario.now_dt
    odd = {
        "status": "success",
        "data": {"resultType": "matrix", "result": [{"values": [[1, "+Inf"], [2, 3]]}]},
    }
    bad = {
        "status": "success",
        "data": {"resultType": "matrix", "result": [{"values": [[1, True]]}]},
    }
    prom_fault_proxy.add(
        Fault(path="/api/v1/query_range", status=200, body=json.dumps(odd), times=1)
    )
    prom_fault_proxy.add(
        Fault(path="/api/v1/query_range", status=200, body=json.dumps(bad), times=1)
    )
    src = _source(prom_fault_proxy.url)
    try:
        got = await src.range("x", at, at, 15)
        with pytest.raises(SourceError) as info:
            await src.range("x", at, at, 15)
    finally:
        await src.close()
    assert [(p.t, p.v) for p in got[0].samples] == [(1.0, math.inf), (2.0, 3.0)]
    assert info.value.kind is ErrorKind.BAD_DATA


async def test_client_quantiles_equal_prometheus_histogram_quantile(
    worked_example_prom: PromServer,
) -> None:
    """The drilldown computes P50/P95/P99 from one bucket query; Prometheus's own
    histogram_quantile over the same range must give the same numbers."""
    end = worked_example_prom.scenario.now_dt
    start = end - timedelta(hours=3)
    src = _source(worked_example_prom.url)
    try:
        buckets = await src.range(TTFT_BUCKETS, start, end, 60)
        server = {
            q: await src.range(f"histogram_quantile({q}, {TTFT_BUCKETS})", start, end, 60)
            for q in (0.5, 0.95, 0.99, 1.0)
        }
    finally:
        await src.close()
    assert len(buckets) > 5
    for q, expected in server.items():
        mine = quantile_series(buckets, q)
        want = {p.t: p.v for p in expected[0].samples if math.isfinite(p.v)}
        got = {p.t: p.v for p in mine[0].samples}
        assert len(want) > 150 and set(want) <= set(got)
        for t, v in want.items():
            assert got[t] == pytest.approx(v, rel=1e-9), (q, t)


async def test_per_pod_quantiles_from_one_bucket_query_are_prometheus_own(
    worked_example_prom: PromServer,
) -> None:
    """D and E read every per-replica quantile of a histogram from one ``sum by (le, pod)``
    query: each pod's P50/P95/P99/≈max must be the very number Prometheus's
    histogram_quantile answers for that pod, and a pod must be neither lost nor added."""
    at = worked_example_prom.scenario.now_dt
    per_pod = TTFT_BUCKETS.replace("sum by (le)", "sum by (le, pod)")
    src = _source(worked_example_prom.url)
    try:
        buckets = await src.instant(per_pod, at)
        server = {
            q: await src.instant(f"histogram_quantile({q}, {per_pod}) * 1000", at)
            for q in (0.5, 0.95, 0.99, 0.999)
        }
    finally:
        await src.close()
    pods = {v.labels["pod"] for v in buckets}
    assert len(pods) >= 4
    for q, expected in server.items():
        want = {v.labels["pod"]: v.v for v in expected if math.isfinite(v.v)}
        got = {v.labels["pod"]: v.v for v in vector_quantiles(buckets, q, 1000.0)}
        assert set(want) == pods
        assert got == want, q


def test_per_group_quantiles_leave_out_what_prometheus_answers_nan_for() -> None:
    """A group with no observations, no ``+Inf`` bucket or a single bucket has no value
    (Prometheus answers NaN for it): it is left out, never shown as zero."""

    def v(pod: str, le: str, count: float) -> InstantVector:
        return InstantVector(labels={"pod": pod, "le": le}, t=1.0, v=count)

    vector = [
        v("ok", "0.1", 1.0),
        v("ok", "+Inf", 4.0),
        v("idle", "0.1", 0.0),
        v("idle", "+Inf", 0.0),
        v("cut", "0.1", 1.0),
        v("cut", "0.5", 2.0),
        v("lone", "+Inf", 3.0),
        v("odd", "not-a-bound", 3.0),
    ]
    got = vector_quantiles(vector, 0.2, 1000.0)
    assert [(g.labels, g.v) for g in got] == [({"pod": "ok"}, pytest.approx(80.0))]


@given(
    st.lists(
        st.tuples(
            st.sampled_from([0.01, 0.05, 0.1, 0.5, 1.0, 5.0, math.inf]),
            st.floats(0, 1e6),
        ),
        min_size=1,
        max_size=7,
        unique_by=lambda p: p[0],
    ),
    st.floats(0, 1),
)
def test_binary_search_quantile_matches_the_linear_definition(
    pairs: list[tuple[float, float]], q: float
) -> None:
    les, counts = cumulative(sorted(pairs))
    assert counts == sorted(counts)  # monotonic, as histogram_quantile makes them
    # The linear scan histogram_quantile describes, over the same monotonic counts.
    expected: float | None
    if counts[-1] <= 0:
        expected = None
    else:
        rank, prev_le, prev_c, expected = q * counts[-1], 0.0, 0.0, les[-1]
        for le, c in zip(les, counts, strict=True):
            if c >= rank:
                if math.isinf(le):
                    expected = prev_le
                elif c == prev_c:
                    expected = le
                else:  # in Prometheus's order of operations (promql/quantile.go)
                    expected = prev_le + (le - prev_le) * ((rank - prev_c) / (c - prev_c))
                break
            prev_le, prev_c = le, c
    assert quantile_cumulative(les, counts, q) == expected
    assert quantile([Bucket(le=le, count=c) for le, c in pairs], q) == expected


def test_baseline_step_gives_about_thirty_points() -> None:
    end = make_window(__import__("datetime").datetime(2026, 1, 1)).end
    for span, step, base_step in (
        (timedelta(hours=1), 30, 120),
        (timedelta(hours=2), 60, 240),
        (timedelta(minutes=15), 15, 30),
        (timedelta(hours=24), 720, 2880),
    ):
        w = make_window(end, span, "quiet")
        assert (w.step_s, w.baseline_step_s) == (step, base_step)
        assert w.baseline_step_s % w.step_s == 0


async def test_every_query_is_in_flight_up_to_the_bound(
    worked_example_prom: PromServer, prom_fault_proxy: FaultProxy
) -> None:
    at = worked_example_prom.scenario.now_dt
    prom_fault_proxy.add(Fault(path="/api/v1/query", delay_s=0.3))
    for conc in (12, 40):
        prom_fault_proxy.clear()
        prom_fault_proxy.add(Fault(path="/api/v1/query", delay_s=0.3))
        src = _source(prom_fault_proxy.url, max_concurrency=conc)
        try:
            results = await asyncio.gather(*(src.instant(f"vector({i})", at) for i in range(50)))
        finally:
            await src.close()
        assert [r[0].v for r in results] == [float(i) for i in range(50)]
        assert prom_fault_proxy.max_in_flight == conc


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["0.1", "0.5", "1", "5", "+Inf", "bad", "NaN"]),
            st.lists(
                st.tuples(st.integers(0, 5), st.floats(-1, 1e3) | st.just(math.nan)),
                max_size=6,
                unique_by=lambda p: p[0],
            ),
        ),
        max_size=6,
        unique_by=lambda s: s[0],
    )
)
def test_bucket_grid_is_cumulative_per_timestamp(
    rows: list[tuple[str, list[tuple[int, float]]]],
) -> None:
    """Grouping all series at once gives, per timestamp, what :func:`cumulative` gives for
    that timestamp's (bound, count) pairs; bad bounds and NaN counts are left out."""
    series = [
        Series(labels={"le": le}, samples=[Sample(float(t), v) for t, v in sorted(pts)])
        for le, pts in rows
    ]
    by_t: dict[float, list[tuple[float, float]]] = {}
    for le, pts in rows:
        if le in ("bad", "NaN"):
            continue
        for t, v in pts:
            if not math.isnan(v):
                by_t.setdefault(float(t), []).append((float(le), v))
    expected = [(t, *cumulative(sorted(by_t[t]))) for t in sorted(by_t)]
    assert bucket_grid(series) == expected


@given(
    st.integers(1, 6).flatmap(
        lambda n: st.lists(
            st.tuples(
                st.sampled_from(["0.1", "0.5", "1", "5", "+Inf"]),
                st.lists(st.floats(0, 1e3) | st.just(math.nan), min_size=n, max_size=n),
            ),
            min_size=1,
            max_size=5,
            unique_by=lambda s: s[0],
        )
    )
)
def test_bucket_grid_of_aligned_series(rows: list[tuple[str, list[float]]]) -> None:
    """Series sharing their timestamps (the usual answer) give the same grid as the
    general grouping, NaN counts included."""
    series = [
        Series(labels={"le": le}, samples=[Sample(float(t), v) for t, v in enumerate(vals)])
        for le, vals in rows
    ]
    by_t: dict[float, list[tuple[float, float]]] = {}
    for le, vals in rows:
        for t, v in enumerate(vals):
            if not math.isnan(v):
                by_t.setdefault(float(t), []).append((float(le), v))
    assert bucket_grid(series) == [(t, *cumulative(sorted(by_t[t]))) for t in sorted(by_t)]


async def test_runner_start_runs_duplicates_once_and_cancels_cleanly(
    worked_example_prom: PromServer, prom_fault_proxy: FaultProxy
) -> None:
    """Started queries are answered per key as they finish; a query asked under two keys
    runs once; what the caller gives up on is cancelled, not left running."""
    at = worked_example_prom.scenario.now_dt
    src = _source(prom_fault_proxy.url)
    runner = QueryRunner(src, max_concurrency=8, timeout_s=10)
    specs = [
        QuerySpec(key="a", query="vector(1)", kind="instant", end=at),
        QuerySpec(key="b", query="vector(1)", kind="instant", end=at),
        QuerySpec(key="c", query="vector(2)", kind="instant", end=at),
    ]
    try:
        futures = runner.start(specs)
        got = {k: await f for k, f in futures.items()}
        assert {k: (r.spec.key, r.vector[0].v) for k, r in got.items()} == {
            "a": ("a", 1.0),
            "b": ("b", 1.0),
            "c": ("c", 2.0),
        }
        assert len(prom_fault_proxy.log) == 2
        prom_fault_proxy.add(Fault(path="/api/v1/query", delay_s=5))
        slow = runner.start([QuerySpec(key="x", query="vector(3)", kind="instant", end=at)])
        await asyncio.sleep(0.2)
        cancel_all(slow)
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(slow["x"], 2)
        assert slow["x"].cancelled()
    finally:
        await src.close()


async def test_the_quiet_half_read_from_the_window_query_is_what_prometheus_answers(
    worked_example_prom: PromServer,
) -> None:
    """The window's first half at the baseline step, taken from the window's own range
    answer, is exactly Prometheus's answer to its own range query."""
    end = worked_example_prom.scenario.now_dt
    w = make_window(end, timedelta(hours=1), "1d")
    lo, hi = inside_quiet(w)
    src = _source(worked_example_prom.url)
    try:
        whole = await src.range(TTFT_BUCKETS, w.start, w.end, w.step_s)
        want = await src.range(TTFT_BUCKETS, lo, hi, w.baseline_step_s)
    finally:
        await src.close()
    res = QueryResult(
        spec=QuerySpec(key="k", query=TTFT_BUCKETS, start=w.start, end=w.end), series=whole
    )
    got = sliced(res, lo, hi, w.baseline_step_s).series
    assert len(want) > 5 and len(want[0].samples) > 10
    assert [(s.labels, s.samples) for s in got] == [(s.labels, s.samples) for s in want]
    assert sliced(res, w.start, w.end, w.step_s).series == whole


def _ttft_planned() -> list[PlannedSignal]:
    """TTFT P50 and P99 of the worked example, both read from one bucket query."""
    return [
        PlannedSignal(
            key=f"serving.ttft:{st}",
            signal="serving.ttft",
            stat=st,
            unit="s",
            query="unused: read from the buckets",
            bucket_query=TTFT_BUCKETS,
            quantile=q,
        )
        for st, q in (("p50", 0.5), ("p99", 0.99))
    ]


async def test_a_baseline_without_data_falls_back_to_quiet_without_another_query(
    worked_example_prom: PromServer,
) -> None:
    """No data a week earlier: the quiet window before is asked for with the window's and
    the week's queries, not after the week came back empty (no round trip more on a
    distant server), and is the baseline used."""
    end = worked_example_prom.scenario.now_dt
    w = make_window(end, timedelta(hours=1), "7d")
    planned = _ttft_planned()
    src = _source(worked_example_prom.url)
    events: list[str] = []

    class Ordered:
        """Delegates to the real source, noting when each range query goes and returns."""

        async def range(self, *args: object) -> list[Series]:
            events.append("sent")
            try:
                return await src.range(*args)  # type: ignore[arg-type]
            finally:
                events.append("answered")

    try:
        runner = QueryRunner(Ordered(), max_concurrency=8, timeout_s=20)  # type: ignore[arg-type]
        res = await collect_summaries(runner, planned, w)
        sent = [(q, k) for q, k, *_ in runner.stats.log]
        quiet = w.with_baseline("quiet")
        want = await src.range(
            TTFT_BUCKETS, quiet.baseline_start, quiet.baseline_end, w.baseline_step_s
        )
    finally:
        await src.close()
    assert res.window.baseline == "quiet" and res.baseline_from == "7d"
    assert len(sent) == 3  # the window's, the week's and the quiet window's buckets
    assert events[:3] == ["sent"] * 3  # all sent before the first answer came back
    assert res.queries == 3
    base = grid_quantile(bucket_grid(want), 0.99)[0].values()
    s99 = res.summaries[1]
    assert s99.baseline.ok and s99.now.ok
    assert s99.baseline.value == pytest.approx(statistics.median(base), rel=1e-9)


async def test_a_week_earlier_with_no_history_is_known_before_it_is_asked(
    worked_example_prom: PromServer,
) -> None:
    """A server whose history is shorter than a week (26 h here) lists no metric name a
    week earlier: the detection's probe finds that span empty (not the day earlier,
    which has data), and the week-earlier baseline is not asked for at all: the window's
    and the quiet window's queries are the only ones sent, with the same baseline,
    values, verdicts and note as when the empty week is asked and falls back. Moved
    eight days later, the probes reach into the history and know nothing."""
    from cockpit.collect.base import empty_history

    end = worked_example_prom.scenario.now_dt
    w = make_window(end, timedelta(hours=1), "7d")
    planned = _ttft_planned()
    src = _source(worked_example_prom.url)
    try:
        empty = await empty_history(src, end)
        later = await empty_history(src, end + timedelta(days=8))
        runs = []
        for spans in ([], empty):
            runner = QueryRunner(src, max_concurrency=8, timeout_s=20)
            res = await collect_summaries(runner, planned, w, empty=spans)
            runs.append((res, [q for q, *_ in runner.stats.log]))
    finally:
        await src.close()
    assert len(empty) == 1 and empty[0][0] < w.baseline_start and w.baseline_end < empty[0][1]
    assert later == []
    (asked, asked_log), (known, known_log) = runs
    assert len(asked_log) == 3 and len(known_log) == 2 and known.queries == 2
    for res in runs:
        assert res[0].window.baseline == "quiet" and res[0].baseline_from == "7d"
    assert known.baseline_note == asked.baseline_note != ""
    for k, a in zip(known.summaries, asked.summaries, strict=True):
        assert (k.baseline.value, k.now.value, k.verdict) == (
            a.baseline.value,
            a.now.value,
            a.verdict,
        )
        assert (k.spark, k.baseline_spark) == (a.spark, a.baseline_spark)
        assert len(k.spark) > 30 and len(k.baseline_spark) > 10
    assert all(s.baseline.ok for s in known.summaries)


async def test_the_history_probe_knows_nothing_when_its_listing_breaks() -> None:
    """A listing that breaks in any way (here the client's session closed under it, as
    when the detection's own listing failed and the source was closed) is no span and
    never an exception left for the event loop to print."""
    from datetime import UTC, datetime

    from cockpit.collect.base import empty_history

    class Broken:
        async def names_between(self, start: object, end: object) -> list[str]:
            raise RuntimeError("Connection closed.")

    class Empty:
        async def names_between(self, start: object, end: object) -> list[str]:
            return []

    at = datetime(2026, 11, 29, 15, tzinfo=UTC)
    assert await empty_history(Broken(), at) == []  # type: ignore[arg-type]
    assert len(await empty_history(Empty(), at)) == 2  # type: ignore[arg-type]
