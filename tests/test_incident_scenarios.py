"""The seven incidents of ``cockpit.scenarios.incidents`` served from a real Prometheus:
every promised number measured by PromQL, a 6-hour window without a day-earlier
baseline, and a machine-readable ground truth whose entities exist in the served series."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable

import pytest

from cockpit.config import PrometheusSettings
from cockpit.models import from_epoch
from cockpit.scenarios import get_scenario, incidents
from cockpit.scenarios.promserver import PromServer
from cockpit.sources.prometheus import PrometheusSource

NAMES = sorted(incidents.scenarios())
Get = Callable[[str], PromServer]


async def _query(srv: PromServer, query: str, at: int) -> list[float]:
    src = PrometheusSource(PrometheusSettings(url=srv.url))
    try:
        return [s.v for s in await src.instant(query, from_epoch(at))]
    finally:
        await src.close()


def test_seven_incidents_with_their_ground_truth() -> None:
    assert NAMES == [
        "bad_release",
        "gateway_burst",
        "gpu_lost",
        "kv_overload",
        "pod_pending",
        "sglang_long_prompts",
        "throttled_gpu",
    ]
    causes = {get_scenario(n).ground_truth.cause for n in NAMES}  # type: ignore[union-attr]
    assert causes == {
        "release",
        "gateway_errors",
        "gpu_lost",
        "kv_cache_overload",
        "long_prompts",
        "thermal_throttle",
        "unschedulable",
    }
    for name in NAMES:
        sc = get_scenario(name)
        assert sc.now - sc.start == 6 * 3600
        assert sc.start < sc.incident_start < (sc.detected_at or sc.now) <= sc.now


@pytest.mark.parametrize("name", NAMES)
def test_truth_printed_as_json(name: str) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "cockpit.scenarios.serve", "--truth", name],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    doc = json.loads(out)
    gt = doc["ground_truth"]
    assert doc["name"] == name and doc["scope"]["namespace"] == "llm"
    assert set(gt) == {"primary_layer", "scope", "cause", "suspect", "mitigation"}
    assert gt["primary_layer"] in {"access", "serving", "runtime", "hardware", "infrastructure"}
    suspect = gt["suspect"]
    if suspect["kind"] == "gpu":
        assert suspect["pod"] and suspect["node"] and suspect["uuid"].startswith("GPU-")
        assert isinstance(suspect["gpu_index"], int)
    if suspect["kind"] == "revision":
        assert suspect["old_revision"] != suspect["new_revision"]
        assert suspect["old_version"] and suspect["new_version"]


def test_truth_of_a_scenario_without_one_is_an_error() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "cockpit.scenarios.serve", "--truth", "thermal_replica"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "no structured ground truth" in proc.stderr


@pytest.mark.parametrize("name", NAMES)
async def test_served_with_targets_and_without_a_day_earlier(
    prometheus_scenario: Get, name: str
) -> None:
    srv = prometheus_scenario(name)
    sc = srv.scenario
    for t in sc.targets:
        got = await _query(srv, t.query, t.at)
        assert len(got) == 1, (t.phase, t.query)
        assert got[0] == pytest.approx(t.expected, rel=t.rel_tol, abs=1e-9), (t.phase, t.query)
    assert await _query(srv, 'count({job="kube-state-metrics"})', sc.now - 86400) == []
    for job in ("kube-state-metrics", "dcgm-exporter"):
        assert (await _query(srv, f'count({{job="{job}"}})', sc.start + 60))[0] > 0


@pytest.mark.parametrize("name", ["gpu_lost", "throttled_gpu"])
async def test_suspect_gpu_is_in_the_series(prometheus_scenario: Get, name: str) -> None:
    """The suspect's pod, node, index and UUID sit on one DCGM series before the
    incident, the pod on that node in kube-state-metrics."""
    srv = prometheus_scenario(name)
    s = srv.scenario.ground_truth.suspect  # type: ignore[union-attr]
    before = srv.scenario.incident_start - 600
    sel = f'UUID="{s.uuid}",gpu="{s.gpu_index}",Hostname="{s.node}",pod="{s.pod}"'
    assert await _query(srv, f"count(DCGM_FI_DEV_GPU_UTIL{{{sel}}})", before) == [1]
    assert await _query(srv, f'count(kube_pod_info{{pod="{s.pod}",node="{s.node}"}})', before) == [
        1
    ]


async def test_lost_gpu_vanishes_and_its_pod_crash_loops(prometheus_scenario: Get) -> None:
    srv = prometheus_scenario("gpu_lost")
    sc = srv.scenario
    s = sc.ground_truth.suspect  # type: ignore[union-attr]
    gpu = f'{{UUID="{s.uuid}"}}'
    assert await _query(srv, f"DCGM_FI_DEV_XID_ERRORS{gpu}", incidents.LOST_XID_AT + 15) == [79]
    assert await _query(srv, f"count(DCGM_FI_DEV_GPU_UTIL{gpu})", sc.now) == []
    pod = f'pod="{s.pod}"'
    assert await _query(srv, f"count(vllm:num_requests_running{{{pod}}})", sc.now) == []
    reasons = f"kube_pod_container_status_waiting_reason{{{pod},reason='CrashLoopBackOff'}}"
    assert await _query(srv, reasons, sc.now) == [1]
    last = f"kube_pod_container_status_last_terminated_reason{{{pod},reason='Error'}}"
    assert await _query(srv, last, sc.now) == [1]
    assert await _query(srv, f"kube_pod_status_ready{{{pod},condition='true'}}", sc.now) == [0]


async def test_release_replaced_every_pod(prometheus_scenario: Get) -> None:
    srv = prometheus_scenario("bad_release")
    sc = srv.scenario
    s = sc.ground_truth.suspect  # type: ignore[union-attr]
    for rs, at, want in (
        (s.old_revision, incidents.BASELINE_AT, [6]),
        (s.old_revision, sc.now, []),
        (s.new_revision, sc.now, [6]),
        (s.new_revision, incidents.BASELINE_AT, []),
    ):
        got = await _query(srv, f'count(kube_pod_owner{{owner_name="{rs}"}})', at)
        assert got == want, (rs, at)
    assert incidents.ROLL_START < sc.incident_start < incidents.ROLL_END < sc.now
