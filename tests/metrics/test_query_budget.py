"""Each query is sent once per evaluation, under a concurrency limit that follows the
server's latency, and ``analyze --json`` says what the run asked of Prometheus.

Counted where the queries land: the fault proxy's request log, and Prometheus's own query
log (``global: query_log_file``)."""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from cockpit.collect.runner import AdaptiveLimit, QueryRunner, QuerySpec, cancel_all
from cockpit.config import PrometheusSettings
from cockpit.scenarios.promserver import PromServer
from cockpit.sources.prometheus import PrometheusSource
from tests.backends.faultproxy import Fault, FaultProxy
from tests.test_incident_story import _analyze
from tests.test_json_docs import jsonc_to_json
from tests.test_large_service import SLOW_MACHINE

DOC = Path(__file__).resolve().parents[2] / "docs" / "analyze-json.md"


def documented_timing() -> dict[str, Any]:
    """The ``timing`` object of ``docs/analyze-json.md``'s block, parsed."""
    text = DOC.read_text(encoding="utf-8")
    i = text.index('"timing": {') + len('"timing": ')
    depth, j = 0, i
    while True:
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        j += 1
        if depth == 0:
            break
    return json.loads(jsonc_to_json(text[i:j]))  # type: ignore[no-any-return]


@pytest.fixture
async def runner(prom_fault_proxy: FaultProxy) -> AsyncIterator[QueryRunner]:
    """A runner of up to 64 queries at once through the fault proxy."""
    src = PrometheusSource(PrometheusSettings(url=prom_fault_proxy.url))
    try:
        yield QueryRunner(src, max_concurrency=64, timeout_s=20)
    finally:
        await src.close()


def _spec(key: str, query: str, at: datetime) -> QuerySpec:
    return QuerySpec(key=key, query=query, kind="instant", end=at)


async def test_a_query_is_sent_once_across_calls_until_it_fails_or_is_forgotten(
    worked_example_prom: PromServer, prom_fault_proxy: FaultProxy, runner: QueryRunner
) -> None:
    at = worked_example_prom.scenario.now_dt
    first = await runner.run([_spec("a", "vector(1)", at)])
    second = await runner.run([_spec("b", "vector(1)", at), _spec("c", "vector(2)", at)])
    assert first["a"].vector[0].v == 1.0 and second["b"].vector[0].v == 1.0
    assert second["b"].spec.key == "b"
    assert len(prom_fault_proxy.log) == 2  # vector(1) once, vector(2) once
    assert runner.stats.sent == 2 and runner.stats.shared == 1
    # Another evaluation time is another query.
    await runner.run([_spec("d", "vector(1)", at + timedelta(seconds=15))])
    assert len(prom_fault_proxy.log) == 3
    # A failed answer is not kept: the next ask sends it again.
    prom_fault_proxy.add(Fault(path="/api/v1/query", status=503, times=1))
    failed = await runner.run([_spec("e", "vector(5)", at)])
    assert not failed["e"].ok
    again = await runner.run([_spec("e", "vector(5)", at)])
    assert again["e"].ok and len(prom_fault_proxy.log) == 5
    # A refresh forgets the kept answers.
    runner.forget()
    await runner.run([_spec("a", "vector(1)", at)])
    assert len(prom_fault_proxy.log) == 6


async def test_a_shared_query_is_cancelled_only_when_its_last_caller_gives_up(
    worked_example_prom: PromServer, prom_fault_proxy: FaultProxy, runner: QueryRunner
) -> None:
    at = worked_example_prom.scenario.now_dt
    prom_fault_proxy.add(Fault(path="/api/v1/query", delay_s=0.5))
    one = runner.start([_spec("x", "vector(7)", at)])
    two = runner.start([_spec("y", "vector(7)", at)])
    await asyncio.sleep(0.1)
    cancel_all(one)
    got = await asyncio.wait_for(two["y"], 5)
    assert got.ok and got.vector[0].v == 7.0 and got.spec.key == "y"
    assert len(prom_fault_proxy.log) == 1
    three = runner.start([_spec("z", "vector(8)", at)])
    await asyncio.sleep(0.1)
    cancel_all(three)
    await asyncio.sleep(0.05)
    assert runner.in_flight == 0  # the abandoned query no longer holds a slot


def test_the_limit_grows_while_answers_are_steady_and_backs_off_when_they_slow() -> None:
    assert AdaptiveLimit(256).allowed() == AdaptiveLimit.INITIAL == 256  # the ceiling first
    assert AdaptiveLimit(64).allowed() == 64
    assert AdaptiveLimit(10).allowed() == 10
    lim = AdaptiveLimit(64, initial=8)
    assert lim.allowed() == 8
    for _ in range(60):
        lim.observe(0.05)
    assert lim.allowed() == 64
    for i in range(30):
        lim.observe(0.05 * (1.3 ** (i + 1)))  # the server queues: every answer slower
    assert lim.allowed() <= 8
    # A distant server, slow but steady, keeps a high limit.
    far = AdaptiveLimit(64)
    for _ in range(60):
        far.observe(0.4)
    assert far.allowed() == 64
    # Never below one, never above its ceiling; nonsense durations change nothing.
    tiny = AdaptiveLimit(3, initial=1)
    for d in (0.0, -1.0, float("nan"), float("inf")):
        tiny.observe(d)
    assert tiny.limit == 1.0
    for i in range(100):
        tiny.observe(2.0**i)
    assert tiny.allowed() == 1
    for _ in range(100):
        tiny.observe(1.0)
    assert tiny.allowed() == 3


async def test_the_runner_backs_off_when_the_server_slows(
    worked_example_prom: PromServer, prom_fault_proxy: FaultProxy, runner: QueryRunner
) -> None:
    """Against the real server behind a proxy that starts to answer slowly: the limit in
    force falls below where it stood, and queries wait for a slot instead of piling up."""
    at = worked_example_prom.scenario.now_dt
    await runner.run([_spec(f"q{i}", f"vector({i})", at) for i in range(40)])
    fast_limit = runner.limit.allowed()
    assert fast_limit == 64  # steady answers keep the limit at its ceiling
    prom_fault_proxy.add(Fault(path="/api/v1/query", delay_s=1.0))
    await runner.run([_spec(f"s{i}", f"vector({100 + i})", at) for i in range(24)])
    assert runner.limit.lowest < fast_limit / 2
    assert runner.peak_in_flight <= 64
    assert runner.stats.wait_s > 0


def _logged(path: Path, offset: int) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        f.seek(offset)
        return [json.loads(line) for line in f if line.strip()]


@pytest.mark.parametrize(
    ("name", "extra"),
    [("throttled_gpu", ()), ("large_throttled_gpu", ("--window", "1h"))],
    ids=["6_replicas", "200_replicas"],
)
def test_analyze_sends_no_query_twice_by_prometheus_own_log(
    prometheus_scenario: Any, name: str, extra: tuple[str, ...]
) -> None:
    srv: PromServer = prometheus_scenario(name)
    assert srv.query_log is not None
    offset = srv.query_log.stat().st_size if srv.query_log.exists() else 0
    timing = _analyze(srv, *extra, env=SLOW_MACHINE)["timing"]
    deadline = time.monotonic() + 5
    entries = _logged(srv.query_log, offset)
    while len(entries) < timing["queries"] and time.monotonic() < deadline:
        time.sleep(0.1)
        entries = _logged(srv.query_log, offset)
    sent = Counter(
        (e["params"]["query"], e["params"].get("start"), e["params"]["end"], e["params"]["step"])
        for e in entries
    )
    repeats = {k: n for k, n in sent.items() if n > 1}
    assert repeats == {}
    # The JSON counts every query the run sent, not only the drilldown's.
    assert timing["queries"] == len(entries) == len(timing["all"]) > 60
    assert {q["query"] for q in timing["all"]} == {k[0] for k in sent}
    own = [q["own_s"] for q in timing["all"]]
    assert abs(timing["slowest_s"] - max(own)) <= 0.0006
    slowest = {q["query"] for q in timing["all"] if q["own_s"] >= max(own) - 0.0001}
    assert timing["slowest_query"] in slowest
    assert abs(timing["own_s"] - sum(own)) < 0.01 + 0.001 * len(own)
    assert abs(timing["wait_s"] - sum(q["wait_s"] for q in timing["all"])) < 0.01 + 0.001 * len(own)
    assert timing["shared"] > 0  # a step read answers another step had asked for
    assert 1 <= timing["peak_concurrency"] <= PrometheusSettings().max_concurrency
    assert timing["wall_s"] > 0
    doc = documented_timing()
    assert set(timing) == set(doc)
    assert set(timing["all"][0]) == set(doc["all"][0])


class _Timed(QueryRunner):
    """The suite's runner, noting when each query is asked for and answered:
    ``(asked at, spec)`` and ``(answered at, spec)`` in :attr:`asked` / :attr:`answered`."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.asked: list[tuple[float, QuerySpec]] = []
        self.answered: list[tuple[float, QuerySpec]] = []

    async def run_one(self, spec: QuerySpec) -> Any:
        self.asked.append((time.perf_counter(), spec))
        res = await super().run_one(spec)
        self.answered.append((time.perf_counter(), spec))
        return res


async def _timed_analysis(
    srv: PromServer, tmp_path: Path, faults: list[Fault], max_concurrency: int
) -> tuple[Any, _Timed, Any]:
    """``(report, runner, window)`` of one analysis of ``srv``'s incident through a
    fault proxy holding requests as ``faults`` say (detection first, outside the record)."""
    from cockpit.collect.analyze import run_analysis
    from cockpit.collect.base import detection_for
    from cockpit.collect.cache import screen_window
    from cockpit.config import ServiceSettings, Settings
    from cockpit.models import from_epoch
    from cockpit.sources.base import Sources
    from testkit import make_ctx

    sc = srv.scenario
    with FaultProxy(srv.url) as proxy:
        for f in faults:
            proxy.add(f)
        settings = Settings(
            prometheus=PrometheusSettings(url=proxy.url, timeout_s=60),
            service=ServiceSettings(
                namespace=sc.scope["namespace"], deployment=sc.scope["deployment"]
            ),
        )
        src = PrometheusSource(settings.prometheus)
        ctx = make_ctx(
            tmp_path, sources=Sources(metrics=src), frozen_at=from_epoch(sc.now), settings=settings
        )
        try:
            window = screen_window(ctx)
            await detection_for(ctx, window.end)
            runner = _Timed(src, max_concurrency=max_concurrency, timeout_s=60)
            ctx.metrics.runner = runner
            report = await run_analysis(ctx, window)
        finally:
            await src.close()
    return report, runner, window


async def test_the_lost_gpu_analysis_asks_for_every_query_before_the_first_answer(
    prometheus_scenario: Any, tmp_path: Path
) -> None:
    """No query of the analysis waits for another's answer to be asked for: the
    history's nodes and a lost GPU's last values are joined in PromQL, the quiet baseline
    goes with the day-earlier one, and what depends on C's verdicts (the splits of the
    anomalous signals, the length mixes, the gateway) goes ahead of them. On a distant
    Prometheus the analysis is then one round of queries, not five (here one second
    away, so that a query asked after another's answer cannot pass unseen)."""
    srv: PromServer = prometheus_scenario("gpu_lost")
    report, runner, _ = await _timed_analysis(srv, tmp_path, [Fault(delay_s=1.0)], 64)
    assert report.conclusion.cause == "gpu_lost"
    assert len(runner.asked) == report.timing.stats.sent > 100
    assert max(t for t, _ in runner.asked) < min(t for t, _ in runner.answered)


async def test_a_completed_release_is_read_at_its_rollout_minute_in_the_same_round(
    prometheus_scenario: Any, tmp_path: Path
) -> None:
    """When the previous revision's pods are gone, E compares the release with them at
    the minute of the rollout: those per-replica reads are asked for as soon as the
    history's cheap kube-state-metrics reads name the revisions, not after the round's
    heavy range queries. Here every range query is held 2.5 s and every other request
    0.5 s, so a read asked after a range answer cannot pass unseen."""
    srv: PromServer = prometheus_scenario("bad_release")
    faults = [Fault(path="/api/v1/query_range", delay_s=2.5), Fault(delay_s=0.5)]
    report, runner, window = await _timed_analysis(srv, tmp_path, faults, 256)
    assert report.conclusion.cause == "release"
    cohort = report.cohort
    assert cohort is not None and cohort.cohort.kind == "previous_revision"
    truth = srv.scenario.ground_truth.suspect  # type: ignore[union-attr]
    assert cohort.cohort.suspect == truth.new_revision
    assert cohort.cohort.members and cohort.rows
    # the previous revision was read at an earlier minute: instants before the window's end
    earlier = [s for _, s in runner.asked if s.kind == "instant" and s.end < window.end]
    assert any(s.query.startswith("kube_pod_info") for s in earlier)
    ranges = [t for t, s in runner.answered if s.kind == "range"]
    assert max(t for t, _ in runner.asked) < min(ranges)
