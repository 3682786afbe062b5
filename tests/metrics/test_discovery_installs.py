"""Discovery on real installs: a real Prometheus backfilled with each install of
``cockpit.scenarios.installs`` (upstream names, types and label sets, scraped as the charts
scrape them), ``cockpit analyze --json`` and ``cockpit doctor`` against it.

- ``exported_labels``: dcgm-exporter and ingress-nginx behind ServiceMonitors with
  ``honorLabels: false`` — the hardware and access layers read ``exported_*``.
- ``mixed_fleet``: vLLM, SGLang and TGI in one namespace — each service with its own stack.
- ``static_scrape``: SGLang without ``namespace``/``pod`` — joined through pod IPs.

``cockpit doctor``'s discovery lines for each install are compared with the text fixtures
under ``tests/data/installs`` (regenerate one with ``REGEN_DOCTOR_FIXTURES=1`` and read
the diff before committing it).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from cockpit.config import PrometheusSettings
from cockpit.models import from_epoch
from cockpit.scenarios.promserver import PromServer
from cockpit.sources.prometheus import PrometheusSource
from tests.conftest import DATA
from tests.metrics.test_metric_scenarios import COCKPIT, signal, verdicts

Get = Callable[[str], PromServer]
FIXTURES = DATA / "installs"
ENV = {"PATH": "/usr/bin:/bin", "COCKPIT_CONFIG": "/nonexistent/config.toml", "LANG": "C.UTF-8"}


def _at(srv: PromServer) -> str:
    return datetime.fromtimestamp(srv.scenario.now, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _cockpit(*args: str, state: Path) -> str:
    proc = subprocess.run(
        [COCKPIT, "--state-dir", str(state), *args],
        capture_output=True,
        text=True,
        timeout=180,
        env=ENV,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout


def _analyze(srv: PromServer, tmp_path: Path, *scope: str) -> dict[str, Any]:
    out = _cockpit(
        "analyze",
        "--prometheus-url",
        srv.url,
        "--at",
        _at(srv),
        "--window",
        "1h",
        "--json",
        *scope,
        state=tmp_path,
    )
    doc: dict[str, Any] = json.loads(out)
    return doc


def _doctor_discovery(srv: PromServer, tmp_path: Path, lang: str, *scope: str) -> str:
    """The detected stacks line and the discovery lines of ``cockpit doctor`` (from where
    each source keeps its labels through the services; the per-signal lines between them
    are the profiles' and left out)."""
    out = _cockpit(
        "--lang",
        lang,
        "--at",
        _at(srv),
        "doctor",
        "--prometheus-url",
        srv.url,
        *scope,
        state=tmp_path,
    )
    lines = [x[4:] for x in out.splitlines() if x.startswith("    ")]
    first = next(i for i, x in enumerate(lines) if x.startswith(("Detected", "识别到")))
    title = next(i for i, x in enumerate(lines) if x.startswith(("Where each", "工作负载标签")))
    end = next(i for i, x in enumerate(lines) if x.startswith(("Unified labels", "统一标签")))
    kept = [lines[first], *lines[title:end]]
    return "\n".join(kept) + "\n"


def _check_fixture(name: str, text: str) -> None:
    path = FIXTURES / name
    if os.environ.get("REGEN_DOCTOR_FIXTURES") == "1":
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


async def _labels_of(srv: PromServer, metric: str) -> set[str]:
    src = PrometheusSource(PrometheusSettings(url=srv.url))
    try:
        vec = await src.instant(f"topk(1, {metric})", from_epoch(srv.scenario.now))
    finally:
        await src.close()
    assert vec, metric
    return set(vec[0].labels) - {"__name__"}


@pytest.mark.parametrize("name", ["exported_labels", "static_scrape", "mixed_fleet"])
async def test_installs_carry_the_upstream_label_sets(prometheus_scenario: Get, name: str) -> None:
    """The served series have the label sets the upstream exporters and charts give them
    (``tests/data/installs/upstream_labels.json``), and every promised number holds."""
    srv = prometheus_scenario(name)
    expected = json.loads((FIXTURES / "upstream_labels.json").read_text(encoding="utf-8"))[name]
    for metric, want in expected.items():
        got = await _labels_of(srv, metric)
        if isinstance(want, list):
            assert got == set(want), (metric, sorted(got))
        else:
            assert set(want["has"]) <= got and not set(want["lacks"]) & got, (metric, sorted(got))
    src = PrometheusSource(PrometheusSettings(url=srv.url))
    try:
        for target in srv.scenario.targets:
            vec = await src.instant(target.query, from_epoch(target.at))
            assert len(vec) == 1, target.name
            assert vec[0].v == pytest.approx(target.expected, rel=target.rel_tol, abs=1e-9), (
                target.name
            )
    finally:
        await src.close()


def test_exported_labels_fill_the_hardware_and_access_layers(
    prometheus_scenario: Get, tmp_path: Path
) -> None:
    srv = prometheus_scenario("exported_labels")
    d = _analyze(srv, tmp_path, "-n", "llm", "--deployment", "qwen-chat")
    v = verdicts(d)
    # the GPU heated to 90 °C: read through exported_namespace/exported_pod, never "no data"
    assert v["hardware"] == "anomalous"
    temp = signal(d, "hardware.temp:value")
    assert temp["now"] == pytest.approx(90.0, abs=1.0)
    assert (
        'exported_namespace="llm"' in temp["query"] and 'exported_pod=~"qwen-chat' in temp["query"]
    )
    assert signal(d, "hardware.sm_clock:value")["verdict"] == "anomalous"
    # ingress-nginx: the Ingress's namespace is exported_namespace; the access layer is read
    assert v["access"] == "normal"
    qps = signal(d, "access.qps:value")
    assert qps["now"] == pytest.approx(32.0, rel=0.05)
    assert 'exported_namespace="llm"' in qps["query"]
    # the engine's own PodMonitor labels stay as they are
    assert 'vllm:num_requests_waiting{namespace="llm"' in signal(d, "serving.queue:value")["query"]
    # the hot GPU's pod is the workload's (exported_pod), never the exporter's own pod
    truth = srv.scenario.ground_truth
    assert truth is not None
    whole = _analyze(srv, tmp_path, "-n", "llm")
    suspect = whole["conclusion"]["suspect"]
    assert (suspect["pod"], suspect["uuid"]) == (truth.suspect.pod, truth.suspect.uuid)
    assert whole["conclusion"]["cause"] == truth.cause == "thermal_throttle"
    text = _doctor_discovery(srv, tmp_path, "en", "-n", "llm", "--deployment", "qwen-chat")
    assert "dcgm-exporter: workload labels in exported_* (honorLabels false)" in text
    _check_fixture("exported_labels.doctor.en.txt", text)


def test_mixed_fleet_analyses_each_service_with_its_own_stack(
    prometheus_scenario: Get, tmp_path: Path
) -> None:
    srv = prometheus_scenario("mixed_fleet")
    serving = {"vllm", "sglang", "tgi", "triton"}
    got = {}
    for deployment, stack in (
        ("vllm-chat", "vllm"),
        ("sglang-chat", "sglang"),
        ("tgi-chat", "tgi"),
    ):
        d = _analyze(srv, tmp_path, "-n", "llm", "--deployment", deployment)
        assert set(d["profiles"]) & serving == {stack}, deployment
        got[stack] = d
    tgi = got["tgi"]
    assert verdicts(tgi)["serving"] == "anomalous"
    assert signal(tgi, "serving.error_ratio:value")["now"] == pytest.approx(25.0, rel=0.05)
    assert signal(tgi, "serving.queue:value")["now"] == pytest.approx(240.0, rel=0.1)
    assert "tgi_queue_size{" in signal(tgi, "serving.queue:value")["query"]
    for stack in ("vllm", "sglang"):
        d = got[stack]
        assert verdicts(d)["serving"] == "normal", stack
        assert signal(d, "serving.ttft:p99")["now"] is not None, stack
        assert signal(d, "serving.queue:value")["now"] == pytest.approx(2.0, rel=0.3), stack
    doctor = _doctor_discovery(srv, tmp_path, "en", "-n", "llm", "--deployment", "tgi-chat")
    _check_fixture("mixed_fleet.doctor.en.txt", doctor)
    # a namespace alone: every service listed, the choice named as a guess
    wide = _doctor_discovery(srv, tmp_path, "en", "-n", "llm")
    assert "tgi-chat — Hugging Face TGI, 2 pods" in wide and "vllm-chat — vLLM, 2 pods" in wide
    assert "more than one engine serves this namespace" in wide
    _check_fixture("mixed_fleet_namespace.doctor.en.txt", wide)
    zh = _doctor_discovery(srv, tmp_path, "zh", "-n", "llm")
    _check_fixture("mixed_fleet_namespace.doctor.zh.txt", zh)
    # analyze says the same: the services it saw, and which one it read
    whole = _analyze(srv, tmp_path, "-n", "llm")
    assert whole["scope"]["services"] == [
        "sglang-chat (SGLang)",
        "tgi-chat (Hugging Face TGI)",
        "vllm-chat (vLLM)",
    ]
    assert whole["scope"]["analysed_with"] == "SGLang"
    assert set(whole["profiles"]) & serving == {"sglang"}
    assert any(n["key"] == "discovery.several" for n in whole["notes"])
    assert got["tgi"]["scope"]["services"] == []  # a deployment tells them apart


def test_static_scrape_is_joined_through_pod_ips(prometheus_scenario: Get, tmp_path: Path) -> None:
    srv = prometheus_scenario("static_scrape")
    d = _analyze(srv, tmp_path, "-n", "llm", "--deployment", "sglang-chat")
    assert verdicts(d)["serving"] == "anomalous"
    queue = signal(d, "serving.queue:value")
    # the two chat pods' 40 each, not the batch namespace's pods of the same job
    assert queue["now"] == pytest.approx(80.0, rel=0.1)
    assert 'instance=~"' in queue["query"] and "namespace=" not in queue["query"]
    assert d["scope"]["joined"] == ["SGLang"]
    assert any(n["key"] == "discovery.joined" for n in d["notes"])
    # a namespace with the same engine but no incident: the join keeps it apart
    other = _analyze(srv, tmp_path, "-n", "batch")
    assert verdicts(other)["serving"] == "normal"
    assert signal(other, "serving.queue:value")["now"] == pytest.approx(2.0, rel=0.3)
    text = _doctor_discovery(srv, tmp_path, "en", "-n", "llm", "--deployment", "sglang-chat")
    assert "joined through instance → pod IP from kube_pod_info, 2 pods" in text
    _check_fixture("static_scrape.doctor.en.txt", text)
    # a namespace with no pod to join with: nothing is read, never every namespace's series
    nowhere = _analyze(srv, tmp_path, "-n", "nowhere")
    assert verdicts(nowhere)["serving"] == "no_data"
    text = _doctor_discovery(srv, tmp_path, "en", "-n", "nowhere")
    assert "SGLang: no namespace/pod labels, and no pod of this scope has its IP" in text


async def test_drilldown_view_says_how_the_series_were_found(
    prometheus_scenario: Get, tmp_path: Path
) -> None:
    """Step C's head names a static scrape joined through pod IPs, and the services of a
    namespace that several engines serve."""
    from cockpit.ui.drilldown_view import DrilldownView
    from tests.metrics.test_metric_widgets import Host, ctx_for, text_of, wait_for

    for name, expected in (
        ("static_scrape", "SGLang's series carry no namespace/pod labels: joined"),
        ("mixed_fleet", "this namespace holds several services (sglang-chat (SGLang), tgi-chat"),
    ):
        ctx = ctx_for(prometheus_scenario(name), tmp_path / name)
        app = Host(ctx, DrilldownView)
        async with app.run_test(size=(240, 60)) as pilot:
            view = app.query_one(DrilldownView)
            await wait_for(pilot, lambda v=view: v.data is not None or v.failure is not None)
            assert view.failure is None
            assert expected in re.sub(r"\s+", " ", text_of(app, "#dd-head")), name
        await ctx.sources.close()


def test_a_recording_without_discovery_answers_says_so(tmp_path: Path) -> None:
    """A bundle recorded by a cockpit that sent no discovery queries: doctor says so in one
    line (never as a failed query) and the stacks from the metric names are used."""
    import gzip

    from cockpit.scenarios import build_demo

    with gzip.open(build_demo.DEMO_BUNDLE, "rt", encoding="utf-8") as f:
        lines = f.readlines()
    kept = [x for x in lines if "count by (__name__, namespace, exported_namespace)" not in x]
    assert len(kept) < len(lines)  # the shipped bundle holds the answer
    old = tmp_path / "old.jsonl.gz"
    with gzip.open(old, "wt", encoding="utf-8") as f:
        f.writelines(kept)
    out = _cockpit("--lang", "en", "doctor", "--replay", str(old), state=tmp_path)
    assert (
        "this recording holds no answers on the label layout and services (made by an "
        "earlier cockpit): every stack detected from the metric names is used"
    ) in out
    assert "could not find the label layout" not in out and "vllm" in out
