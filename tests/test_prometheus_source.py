"""PrometheusSource against a real Prometheus (worked example backfilled by promtool), and
every failure class through a fault proxy in front of it."""

from __future__ import annotations

import asyncio
import base64
import json
import math
from datetime import timedelta
from pathlib import Path

import pytest
from pydantic import SecretStr

from cockpit.config import PrometheusSettings
from cockpit.models import from_epoch
from cockpit.scenarios.promserver import PromServer
from cockpit.sources.base import ErrorKind, MetricsSource, SourceError
from cockpit.sources.prometheus import POST_THRESHOLD, PrometheusSource, env_proxy
from tests.backends.faultproxy import Fault, FaultProxy, closed_port_url

WAITING = 'vllm:num_requests_waiting{namespace="llm-serving"}'


def source(url: str, **kw: object) -> PrometheusSource:
    return PrometheusSource(PrometheusSettings(url=url, **kw))  # type: ignore[arg-type]


async def test_protocol_and_ping(worked_example_prom: PromServer) -> None:
    src = source(worked_example_prom.url)
    try:
        assert isinstance(src, MetricsSource)
        info = await src.ping()
        assert "2." in info and "Prometheus" in info
    finally:
        await src.close()


async def test_instant_per_pod_breakdown(worked_example_prom: PromServer) -> None:
    sc = worked_example_prom.scenario
    src = source(worked_example_prom.url)
    try:
        now = await src.instant(WAITING, sc.now_dt)
        base = await src.instant(WAITING, sc.now_dt - timedelta(days=1))
    finally:
        await src.close()
    assert len(now) == 4 and len(base) == 4
    assert {v.labels["pod"] for v in now} == {v.labels["pod"] for v in base}
    for v in now:
        assert v.labels["model_name"] == "qwen2.5-72b-instruct"
        assert v.t == sc.now
        assert 75 < v.v < 95  # every replica degrades together (shared cause)
    assert all(5 < v.v < 20 for v in base)


async def test_instant_outside_history_is_empty_not_zero(worked_example_prom: PromServer) -> None:
    sc = worked_example_prom.scenario
    src = source(worked_example_prom.url)
    try:
        assert await src.instant(WAITING, from_epoch(sc.start - 3600)) == []
    finally:
        await src.close()


async def test_range_query(worked_example_prom: PromServer) -> None:
    sc = worked_example_prom.scenario
    src = source(worked_example_prom.url)
    end = sc.now_dt
    start = end - timedelta(hours=2)
    try:
        series = await src.range(f"avg({WAITING})", start, end, 60)
    finally:
        await src.close()
    assert len(series) == 1
    samples = series[0].samples
    assert len(samples) == 121
    assert [s.t for s in samples] == [start.timestamp() + 60 * i for i in range(121)]
    before = [s.v for s in samples if s.t < sc.incident_start]
    after = [s.v for s in samples if s.t > sc.incident_start + 600]
    assert max(before) < 20 and min(after) > 75


async def test_metric_names(worked_example_prom: PromServer) -> None:
    sc = worked_example_prom.scenario
    src = source(worked_example_prom.url)
    try:
        names = await src.metric_names(sc.now_dt)
        old = await src.metric_names(from_epoch(sc.start - 7200))
    finally:
        await src.close()
    for n in (
        "vllm:num_requests_waiting",
        "vllm:e2e_request_latency_seconds_bucket",
        "vllm:request_success_total",
        "DCGM_FI_DEV_GPU_UTIL",
        "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
        "kube_pod_info",
        "nginx_ingress_controller_requests",
        "pytorch_cuda_memory_reserved_bytes",
        "ALERTS",
    ):
        assert n in names
    assert names == sorted(names)
    assert old == []


async def test_scalar_nan_and_inf(worked_example_prom: PromServer) -> None:
    src = source(worked_example_prom.url)
    at = worked_example_prom.scenario.now_dt
    try:
        (two,) = await src.instant("1 + 1", at)
        (nan,) = await src.instant("0/0", at)
        (inf,) = await src.instant("1/0", at)
        rng = await src.range("vector(1)", at - timedelta(minutes=2), at, 60)
    finally:
        await src.close()
    assert two.labels == {} and two.v == 2.0
    assert math.isnan(nan.v)
    assert inf.v == math.inf
    assert [s.v for s in rng[0].samples] == [1.0, 1.0, 1.0]


async def test_long_query_is_posted(
    worked_example_prom: PromServer, prom_fault_proxy: FaultProxy
) -> None:
    sc = worked_example_prom.scenario
    q = " or ".join(
        f'vllm:num_requests_waiting{{namespace="llm-serving",pod!="x{i}"}}' for i in range(40)
    )
    assert len(q) > POST_THRESHOLD
    src = source(prom_fault_proxy.url)
    try:
        long_res = await src.instant(q, sc.now_dt)
        short_res = await src.instant(WAITING, sc.now_dt)
    finally:
        await src.close()
    assert len(long_res) == 4 and len(short_res) == 4
    methods = [(e.method, e.path) for e in prom_fault_proxy.log]
    assert methods == [("POST", "/api/v1/query"), ("GET", "/api/v1/query")]
    posted = prom_fault_proxy.log[0].body.decode()
    assert "time=" in posted and "timeout=" in posted


async def test_every_query_has_explicit_time(
    worked_example_prom: PromServer, prom_fault_proxy: FaultProxy
) -> None:
    sc = worked_example_prom.scenario
    src = source(prom_fault_proxy.url, timeout_s=7)
    try:
        await src.instant("up", sc.now_dt)
        await src.range("up", sc.now_dt - timedelta(minutes=5), sc.now_dt, 30)
        await src.metric_names(sc.now_dt)
    finally:
        await src.close()
    q0, q1, q2 = (e.query for e in prom_fault_proxy.log)
    assert f"time={sc.now}.000" in q0 and "timeout=7s" in q0
    assert f"start={sc.now - 300}.000" in q1 and f"end={sc.now}.000" in q1 and "step=30" in q1
    assert "start=" in q2 and "end=" in q2


async def test_auth_and_headers_are_sent(
    worked_example_prom: PromServer, prom_fault_proxy: FaultProxy, tmp_path: Path
) -> None:
    at = worked_example_prom.scenario.now_dt
    token_file = tmp_path / "token"
    token_file.write_text("file-token\n")
    a = PrometheusSource(
        PrometheusSettings(
            url=prom_fault_proxy.url,
            bearer_token=SecretStr("tok-1"),
            headers={"X-Scope-OrgID": "team-a"},
        )
    )
    b = PrometheusSource(
        PrometheusSettings(
            url=prom_fault_proxy.url,
            bearer_token_file=token_file,
            bearer_token=SecretStr("ignored"),
        )
    )
    c = PrometheusSource(
        PrometheusSettings(url=prom_fault_proxy.url, username="alice", password=SecretStr("s3cret"))
    )
    try:
        for s in (a, b, c):
            await s.instant("up", at)
    finally:
        for s in (a, b, c):
            await s.close()
    ha, hb, hc = (e.headers for e in prom_fault_proxy.log)
    assert ha["authorization"] == "Bearer tok-1" and ha["x-scope-orgid"] == "team-a"
    assert hb["authorization"] == "Bearer file-token"
    assert hc["authorization"] == "Basic " + base64.b64encode(b"alice:s3cret").decode()


async def test_answers_are_not_compressed_unless_asked(
    worked_example_prom: PromServer, prom_fault_proxy: FaultProxy
) -> None:
    at = worked_example_prom.scenario.now_dt
    plain, gz = source(prom_fault_proxy.url), source(prom_fault_proxy.url, compression=True)
    try:
        for s in (plain, gz):
            assert (await s.instant("vector(3)", at))[0].v == 3
    finally:
        for s in (plain, gz):
            await s.close()
    assert [e.headers["accept-encoding"] for e in prom_fault_proxy.log] == ["identity", "gzip"]
    direct = source(worked_example_prom.url, compression=True)
    try:  # Prometheus does gzip this one; it is decoded transparently
        series = await direct.range(WAITING, at - timedelta(minutes=30), at, 60)
    finally:
        await direct.close()
    assert len(series) == 4 and all(len(s.samples) == 31 for s in series)


async def test_proxy_from_the_environment(
    worked_example_prom: PromServer, prom_fault_proxy: FaultProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HTTP_PROXY routes the queries through the proxy; NO_PROXY exempts a host."""
    at = worked_example_prom.scenario.now_dt
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    monkeypatch.setenv("HTTP_PROXY", prom_fault_proxy.url)
    monkeypatch.setenv("NO_PROXY", "exempt.invalid")
    assert env_proxy("http://prometheus.invalid:9090") == prom_fault_proxy.url
    assert env_proxy("https://prometheus.invalid:9090") is None
    assert env_proxy("http://exempt.invalid:9090") is None
    via = source("http://prometheus.invalid:9090")
    exempt = source("http://exempt.invalid:9090")
    try:
        assert (await via.instant("vector(7)", at))[0].v == 7
        with pytest.raises(SourceError) as info:
            await exempt.instant("vector(7)", at)
    finally:
        await via.close()
        await exempt.close()
    assert info.value.kind is ErrorKind.UNAVAILABLE
    assert [e.path for e in prom_fault_proxy.log] == ["/api/v1/query"]


async def test_concurrency_is_bounded(
    worked_example_prom: PromServer, prom_fault_proxy: FaultProxy
) -> None:
    at = worked_example_prom.scenario.now_dt
    prom_fault_proxy.add(Fault(path="/api/v1/query", delay_s=0.2))
    src = source(prom_fault_proxy.url, max_concurrency=2)
    try:
        results = await asyncio.gather(*(src.instant(f"vector({i})", at) for i in range(6)))
    finally:
        await src.close()
    assert [r[0].v for r in results] == [float(i) for i in range(6)]
    assert prom_fault_proxy.max_in_flight == 2


# -- failure classification ---------------------------------------------------------------


async def _fail(url: str, query: str = "up", **kw: object) -> SourceError:
    src = source(url, **kw)
    try:
        with pytest.raises(SourceError) as info:
            await src.instant(query, from_epoch(1_795_000_000))
        return info.value
    finally:
        await src.close()


async def test_connection_refused_is_unavailable() -> None:
    err = await _fail(closed_port_url())
    assert err.kind is ErrorKind.UNAVAILABLE
    assert err.failure.source == "prometheus"
    assert "reach" in err.failure.hint or "URL" in err.failure.hint


async def test_slow_server_is_timeout(prom_fault_proxy: FaultProxy) -> None:
    prom_fault_proxy.add(Fault(delay_s=1.5))
    err = await _fail(prom_fault_proxy.url, timeout_s=0.3)
    assert err.kind is ErrorKind.TIMEOUT
    assert err.failure.detail["timeout_s"] == "0.3"
    assert "timeout_s" in err.failure.hint


async def test_hung_server_is_timeout(prom_fault_proxy: FaultProxy) -> None:
    prom_fault_proxy.add(Fault(mode="hang"))
    err = await _fail(prom_fault_proxy.url, timeout_s=0.3)
    assert err.kind is ErrorKind.TIMEOUT


@pytest.mark.parametrize("status", [401, 403])
async def test_auth_failure_is_access_denied(prom_fault_proxy: FaultProxy, status: int) -> None:
    prom_fault_proxy.add(Fault(status=status, body="denied by proxy"))
    err = await _fail(prom_fault_proxy.url)
    assert err.kind is ErrorKind.ACCESS_DENIED
    assert err.failure.detail["status"] == str(status)
    assert "bearer_token" in err.failure.hint


async def test_real_parse_error_is_bad_query_with_server_message(
    worked_example_prom: PromServer,
) -> None:
    err = await _fail(worked_example_prom.url, query="sum(")
    assert err.kind is ErrorKind.BAD_QUERY
    assert "parse error" in err.failure.message
    assert err.failure.detail["error_type"] == "bad_data"
    assert err.failure.detail["query"] == "sum("


async def test_422_is_bad_query(prom_fault_proxy: FaultProxy) -> None:
    body = json.dumps(
        {"status": "error", "errorType": "execution", "error": "many-to-many matching not allowed"}
    )
    prom_fault_proxy.add(Fault(status=422, body=body))
    err = await _fail(prom_fault_proxy.url)
    assert err.kind is ErrorKind.BAD_QUERY
    assert err.failure.message == "many-to-many matching not allowed"


async def test_server_side_timeout_is_timeout(prom_fault_proxy: FaultProxy) -> None:
    body = json.dumps(
        {
            "status": "error",
            "errorType": "timeout",
            "error": "query timed out in expression evaluation",
        }
    )
    prom_fault_proxy.add(Fault(status=503, body=body))
    err = await _fail(prom_fault_proxy.url)
    assert err.kind is ErrorKind.TIMEOUT
    assert "timed out" in err.failure.message


@pytest.mark.parametrize("status", [500, 502, 503, 429])
async def test_5xx_is_unavailable_with_status(prom_fault_proxy: FaultProxy, status: int) -> None:
    prom_fault_proxy.add(Fault(status=status, body="<html>upstream error</html>"))
    err = await _fail(prom_fault_proxy.url)
    assert err.kind is ErrorKind.UNAVAILABLE
    assert err.failure.detail["status"] == str(status)
    assert str(status) in err.failure.message


async def test_404_is_not_found_with_prefix_hint(prom_fault_proxy: FaultProxy) -> None:
    prom_fault_proxy.add(Fault(status=404, body="404 page not found"))
    err = await _fail(prom_fault_proxy.url)
    assert err.kind is ErrorKind.NOT_FOUND
    assert "prefix" in err.failure.hint


@pytest.mark.parametrize("mode", ["truncate", "garbage", "empty"])
async def test_malformed_body_is_bad_data(prom_fault_proxy: FaultProxy, mode: str) -> None:
    prom_fault_proxy.add(Fault(mode=mode))
    err = await _fail(prom_fault_proxy.url, query=WAITING)
    assert err.kind is ErrorKind.BAD_DATA
    assert "not JSON" in err.failure.message


@pytest.mark.parametrize(
    "body",
    [
        {"status": "success", "data": {"resultType": "vector", "result": "oops"}},
        {
            "status": "success",
            "data": {"resultType": "vector", "result": [{"metric": {}, "value": [1, "abc"]}]},
        },
        {"status": "success"},
        [1, 2, 3],
    ],
)
async def test_unexpected_shape_is_bad_data(prom_fault_proxy: FaultProxy, body: object) -> None:
    prom_fault_proxy.add(Fault(status=200, body=json.dumps(body)))
    err = await _fail(prom_fault_proxy.url)
    assert err.kind is ErrorKind.BAD_DATA


@pytest.mark.parametrize("mode", ["reset", "close", "bad_length"])
async def test_broken_connection_is_unavailable(prom_fault_proxy: FaultProxy, mode: str) -> None:
    prom_fault_proxy.add(Fault(mode=mode))
    err = await _fail(prom_fault_proxy.url)
    assert err.kind is ErrorKind.UNAVAILABLE
    assert err.failure.detail["error"]


async def test_compatible_servers_answers_are_tolerated(prom_fault_proxy: FaultProxy) -> None:
    # VictoriaMetrics/Thanos-style answers: no resultType, numeric values, warnings, stats.
    body = {
        "status": "success",
        "warnings": ["partial response"],
        "data": {
            "result": [
                {"metric": {"pod": "a"}, "value": [1795000000, 3]},
                {"metric": {"pod": "b"}, "value": [1795000000, "+Inf"]},
            ],
            "stats": {"seriesFetched": "2"},
        },
    }
    prom_fault_proxy.add(Fault(path="/api/v1/query", status=200, body=json.dumps(body), times=1))
    scalar = {"status": "success", "data": {"resultType": "scalar", "result": [1795000000, "NaN"]}}
    prom_fault_proxy.add(
        Fault(path="/api/v1/query_range", status=200, body=json.dumps(scalar), times=1)
    )
    src = source(prom_fault_proxy.url)
    at = from_epoch(1_795_000_000)
    try:
        vec = await src.instant("x", at)
        rng = await src.range("x", at, at, 15)
    finally:
        await src.close()
    assert [(v.labels["pod"], v.v) for v in vec] == [("a", 3.0), ("b", math.inf)]
    assert len(rng) == 1 and math.isnan(rng[0].samples[0].v)


async def test_one_fault_then_recovery(
    worked_example_prom: PromServer, prom_fault_proxy: FaultProxy
) -> None:
    prom_fault_proxy.add(Fault(status=503, times=1))
    src = source(prom_fault_proxy.url)
    at = worked_example_prom.scenario.now_dt
    try:
        with pytest.raises(SourceError):
            await src.instant(WAITING, at)
        assert len(await src.instant(WAITING, at)) == 4
    finally:
        await src.close()


async def test_not_configured(tmp_path: Path) -> None:
    err = await _fail("")
    assert err.kind is ErrorKind.NOT_CONFIGURED
    missing = PrometheusSource(
        PrometheusSettings(url="http://127.0.0.1:1", bearer_token_file=tmp_path / "nope")
    )
    try:
        with pytest.raises(SourceError) as info:
            await missing.instant("up", from_epoch(1_795_000_000))
    finally:
        await missing.close()
    assert info.value.kind is ErrorKind.NOT_CONFIGURED
    assert "bearer token file" in info.value.failure.message


async def test_invalid_range_is_bad_query(worked_example_prom: PromServer) -> None:
    src = source(worked_example_prom.url)
    at = worked_example_prom.scenario.now_dt
    try:
        with pytest.raises(SourceError) as info:
            await src.range("up", at, at - timedelta(minutes=1), 15)
    finally:
        await src.close()
    assert info.value.kind is ErrorKind.BAD_QUERY


async def test_ping_falls_back_to_ready(prom_fault_proxy: FaultProxy) -> None:
    prom_fault_proxy.add(
        Fault(path="/api/v1/status/buildinfo", status=404, body="404 page not found")
    )
    src = source(prom_fault_proxy.url)
    try:
        answer = await src.ping()
    finally:
        await src.close()
    assert "Ready" in answer
    assert [e.path for e in prom_fault_proxy.log] == ["/api/v1/status/buildinfo", "/-/ready"]


async def test_ping_reports_unreachable_server() -> None:
    src = source(closed_port_url())
    try:
        with pytest.raises(SourceError) as info:
            await src.ping()
    finally:
        await src.close()
    assert info.value.kind is ErrorKind.UNAVAILABLE


async def test_unreadable_ca_file_is_not_configured(tmp_path: Path) -> None:
    bad = tmp_path / "ca.pem"
    bad.write_text("not a certificate")
    src = PrometheusSource(PrometheusSettings(url="https://127.0.0.1:1", ca_file=bad))
    try:
        with pytest.raises(SourceError) as info:
            await src.instant("up", from_epoch(1_795_000_000))
    finally:
        await src.close()
    assert info.value.kind is ErrorKind.NOT_CONFIGURED
    assert "ca_file" in info.value.failure.hint


async def test_range_selector_as_instant_gives_last_sample(worked_example_prom: PromServer) -> None:
    """An instant query of a range selector gives each series' last sample; read as raw
    samples it gives every sample in the range at its own time, the last one the
    instant's."""
    sc = worked_example_prom.scenario
    src = source(worked_example_prom.url)
    try:
        got = await src.instant(f"{WAITING}[1m]", sc.now_dt)
        plain = await src.instant(WAITING, sc.now_dt)
        raw = await src.samples(f"{WAITING}[10m]", sc.now_dt)
    finally:
        await src.close()
    assert sorted((v.labels["pod"], v.v) for v in got) == sorted(
        (v.labels["pod"], v.v) for v in plain
    )
    assert raw and len(raw) == len(plain)
    last = {v.labels["pod"]: (v.t, v.v) for v in plain}
    for s in raw:
        times = [x.t for x in s.samples]
        assert times == sorted(times) and len(times) > 5
        assert sc.now - 600 <= times[0] and times[-1] <= sc.now
        assert (times[-1], s.samples[-1].v) == last[s.labels["pod"]]


async def test_server_limits_and_api_suffixes_get_their_own_hint(
    worked_example_prom: PromServer, prom_fault_proxy: FaultProxy
) -> None:
    at = worked_example_prom.scenario.now_dt
    body = json.dumps(
        {
            "status": "error",
            "errorType": "execution",
            "error": "query processing would load too many samples into memory in query execution",
        }
    )
    prom_fault_proxy.add(Fault(path="/api/v1/query_range", status=422, body=body))
    src = source(prom_fault_proxy.url)
    suffixed = source(worked_example_prom.url + "/api/v1")
    try:
        with pytest.raises(SourceError) as limit:
            await src.range("up", at - timedelta(days=30), at, 1)
        with pytest.raises(SourceError) as suffix:
            await suffixed.instant("up", at)
    finally:
        await src.close()
        await suffixed.close()
    assert limit.value.failure.hint_key == "hint.prom.too_big"
    assert "--window" in limit.value.failure.hint
    assert suffix.value.kind is ErrorKind.NOT_FOUND
    assert suffix.value.failure.hint_key == "hint.prom.url_suffix"
    assert "/api/v1" in suffix.value.failure.hint_in("zh")


@pytest.mark.parametrize(
    "body",
    [
        {"status": "success", "data": {"resultType": "vector", "result": []}},
        {"status": "success", "data": {"resultType": "matrix", "result": "oops"}},
        {
            "status": "success",
            "data": {"resultType": "matrix", "result": [{"metric": {}, "values": [[1, "x"]]}]},
        },
        {"status": "success", "data": {"resultType": "matrix", "result": [{"values": 3}]}},
        {"status": "success", "data": None},
    ],
)
async def test_samples_of_anything_but_a_matrix_is_bad_data(
    prom_fault_proxy: FaultProxy, body: object
) -> None:
    prom_fault_proxy.add(Fault(status=200, body=json.dumps(body)))
    src = source(prom_fault_proxy.url)
    try:
        with pytest.raises(SourceError) as info:
            await src.samples("up[5m]", from_epoch(1_795_000_000))
    finally:
        await src.close()
    assert info.value.kind is ErrorKind.BAD_DATA


async def test_samples_from_a_compatible_server_are_tolerated(prom_fault_proxy: FaultProxy) -> None:
    body = {
        "status": "success",
        "data": {
            "result": [
                {"metric": {"pod": "a"}, "values": [[1795000000, 3], [1795000015.5, "+Inf"]]}
            ]
        },
    }
    prom_fault_proxy.add(Fault(status=200, body=json.dumps(body)))
    src = source(prom_fault_proxy.url)
    try:
        got = await src.samples("x[1m]", from_epoch(1_795_000_030))
    finally:
        await src.close()
    assert [(s.labels, [tuple(x) for x in s.samples]) for s in got] == [
        ({"pod": "a"}, [(1795000000.0, 3.0), (1795000015.5, math.inf)])
    ]
