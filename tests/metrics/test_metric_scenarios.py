"""``cockpit analyze --json`` against a real Prometheus backfilled with each drilldown
scenario: layer verdicts, reading rules, blast radius, cohort outliers, load findings and
missing metrics, for every metric profile in its own names."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from cockpit.scenarios.promserver import PromServer

COCKPIT = str(Path(sys.executable).with_name("cockpit"))


def run_analyze(srv: PromServer, url: str, *extra: str) -> str:
    """``cockpit analyze`` at the scenario's "now" against ``url``; its standard output."""
    at = datetime.fromtimestamp(srv.scenario.now, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    proc = subprocess.run(
        [COCKPIT, "analyze", "--prometheus-url", url, "--at", at, *extra],
        capture_output=True,
        text=True,
        timeout=120,
        env={
            "PATH": "/usr/bin:/bin",
            "COCKPIT_CONFIG": "/nonexistent/config.toml",
            "LANG": "C.UTF-8",
        },
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def analyze(srv: PromServer, *extra: str, window: str = "1h") -> dict[str, Any]:
    ns = srv.scenario.scope["namespace"]
    out = run_analyze(srv, srv.url, "-n", ns, "--window", window, "--json", *extra)
    return json.loads(out)  # type: ignore[no-any-return]


def analyze_text(srv: PromServer, url: str, lang: str, *extra: str) -> str:
    """``cockpit analyze`` as text in ``lang``."""
    return run_analyze(srv, url, "--lang", lang, *extra)


def verdicts(d: dict[str, Any]) -> dict[str, str]:
    return {layer["layer"]: layer["verdict"] for layer in d["layers"]}


def fired(d: dict[str, Any], section: str = "rules") -> set[str]:
    return {r["id"] for r in d[section] if r["status"] == "fired"}


def signal(d: dict[str, Any], key: str) -> dict[str, Any]:
    return next(s for s in d["signals"] if s["key"] == key)


Get = Callable[[str], PromServer]


def test_worked_example_reads_like_the_seed(prometheus_scenario: Get) -> None:
    d = analyze(prometheus_scenario("worked_example"), window="2h")
    assert d["schema"] == 1 and d["window"]["baseline"] == "1d" and not d["window"]["baseline_note"]
    assert verdicts(d) == {
        "access": "anomalous",
        "serving": "anomalous",
        "runtime": "anomalous",
        "hardware": "anomalous",
        "infrastructure": "normal",
    }
    # Seed 003 §四 numbers as measured by PromQL (no constants in the app).
    p99 = signal(d, "access.latency:p99")
    assert p99["baseline"] == pytest.approx(180, rel=0.05) and p99["now"] == pytest.approx(
        620, rel=0.05
    )
    assert signal(d, "access.error_ratio_5xx:value")["now"] == pytest.approx(1.8, rel=0.05)
    assert signal(d, "runtime.fragmentation:value")["now"] == pytest.approx(34, rel=0.05)
    assert signal(d, "hardware.temp:value")["baseline"] == pytest.approx(68, abs=1)
    assert {"p50_and_p99", "gpu_saturated_queue", "errors_up", "latency_and_throughput"} <= fired(d)
    assert "p99_only" not in fired(d)
    assert d["blast_radius"]["scope"] == "everything" and d["blast_radius"]["propose"] == "F"
    assert d["cohort"] is None
    assert [a["name"] for a in d["alerts"]] == ["VLLMHighP99Latency", "GPUThermalThrottling"]
    assert "arrival_rate" in fired(d, "load")
    # QPS 1200 → 900 is a change, read as a symptom rather than a load cause
    rate = next(f for f in d["load"] if f["id"] == "arrival_rate")
    assert [m["key"] for m in rate["detail_msgs"]][-1] == "evidence.load.rate_down"


def test_thermal_replica_is_a_single_gpu_with_a_hot_cohort_outlier(
    prometheus_scenario: Get,
) -> None:
    d = analyze(prometheus_scenario("thermal_replica"))
    assert d["window"]["baseline"] == "quiet" and d["window"]["baseline_note"]
    v = verdicts(d)
    assert v["hardware"] == "anomalous" and v["serving"] == "anomalous"
    assert v["runtime"] == "normal" and v["infrastructure"] == "normal"
    assert "p99_only" in fired(d)
    br = d["blast_radius"]
    assert br["scope"] == "single_gpu" and br["propose"] == "E" and br["suspect"].startswith("GPU-")
    assert any("1.73" in br["note"] for _ in [0])
    c = d["cohort"]
    assert c["suspect"] == br["suspect"] and c["kind"] == "all_gpus" and len(c["members"]) == 3
    assert {"hardware.temp:value", "hardware.sm_clock:value", "hardware.throttle:value"} <= set(
        c["outliers"]
    )
    assert "hardware.gpu_util:value" not in c["outliers"]


def test_long_prompts_raise_ttft_not_tpot_with_healthy_gpus(prometheus_scenario: Get) -> None:
    d = analyze(prometheus_scenario("long_prompts"))
    v = verdicts(d)
    assert v["serving"] == "anomalous" and v["hardware"] == "normal" and v["runtime"] == "normal"
    assert "ttft_not_tpot" in fired(d) and "ttft_and_tpot" not in fired(d)
    assert signal(d, "serving.tpot:p99")["verdict"] == "normal"
    assert d["blast_radius"]["scope"] == "everything" and d["cohort"] is None
    load = {f["id"]: f for f in d["load"]}
    assert load["long_prompts"]["status"] == "fired"
    assert (
        load["long_prompts"]["numbers"]["p95_now"]
        > 1.5 * load["long_prompts"]["numbers"]["p95_base"]
    )
    assert load["arrival_rate"]["status"] == "not_fired"


def test_gateway_5xx_burst_with_healthy_servers(prometheus_scenario: Get) -> None:
    d = analyze(prometheus_scenario("gateway_5xx"))
    v = verdicts(d)
    assert v["access"] == "anomalous"
    assert v["serving"] == v["runtime"] == v["hardware"] == "normal"
    assert signal(d, "access.error_ratio_5xx:value")["now"] == pytest.approx(6.0, rel=0.1)
    assert d["blast_radius"]["scope"] == "everything" and d["blast_radius"]["propose"] == "F"
    assert d["cohort"] is None
    load = {f["id"]: f["status"] for f in d["load"]}
    assert load["gateway_errors"] == "fired" and load["server_errors"] == "not_fired"


def test_half_the_metrics_missing_still_decides(prometheus_scenario: Get) -> None:
    d = analyze(prometheus_scenario("half_missing"))
    v = verdicts(d)
    assert v["serving"] == "anomalous"
    assert v["access"] == "no_data" and v["runtime"] == "no_data"
    missing = " ".join(m for layer in d["layers"] for m in layer["missing"])
    for metric in (
        "vllm:time_to_first_token_seconds_bucket",
        "vllm:kv_cache_usage_perc",
        "DCGM_FI_DEV_GPU_TEMP",
        "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
    ):
        assert metric in missing
    ttft = signal(d, "serving.ttft:p99")
    assert ttft["now"] is None and ttft["verdict"] == "no_data"
    assert ttft["missing"] == ["vllm:time_to_first_token_seconds_bucket"] and ttft["enable"]
    assert d["blast_radius"]["scope"] == "everything"
    # Hardware is normal on the two signals it has: said to be partial, not healthy.
    hw = next(layer for layer in d["layers"] if layer["layer"] == "hardware")
    assert hw["verdict"] == "normal" and hw["signals_decided"] < hw["signals_total"] // 2
    srv = prometheus_scenario("half_missing")
    text = analyze_text(srv, srv.url, "en", "-n", "llm", "--window", "1h")
    hw_line = next(line for line in text.splitlines() if line.startswith("  Hardware:"))
    assert hw_line == (
        f"  Hardware: normal (only {hw['signals_decided']} of {hw['signals_total']} signals "
        "had data; the rest is unknown)"
    )


def test_replaying_another_window_names_the_recorded_one() -> None:
    """A replay asked for a window the bundle does not hold says which one it does hold,
    instead of blaming the namespace or the baseline."""
    proc = subprocess.run(
        [COCKPIT, "analyze", "--demo", "--window", "1w", "--lang", "en"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "COCKPIT_CONFIG": "/nonexistent", "LANG": "C.UTF-8"},
    )
    assert proc.returncode == 0, proc.stderr
    assert "recorded for 2026-11-27 10:55–12:55 UTC; replay with --window 2h" in proc.stdout
    assert "No series at all" not in proc.stdout and "No data a day earlier" not in proc.stdout


@pytest.mark.parametrize(
    ("name", "profiles", "latency_key"),
    [
        ("sglang_stack", {"sglang", "envoy", "node_cadvisor", "dcgm"}, "serving.ttft:p99"),
        ("tgi_stack", {"tgi", "dcgm"}, "serving.e2e_latency:p99"),
        ("triton_stack", {"triton", "ingress_nginx"}, "serving.e2e_latency:avg"),
    ],
)
def test_each_stack_in_its_own_names(
    prometheus_scenario: Get, name: str, profiles: set[str], latency_key: str
) -> None:
    d = analyze(prometheus_scenario(name))
    assert profiles <= set(d["profiles"])
    assert verdicts(d)["serving"] == "anomalous"
    assert signal(d, latency_key)["verdict"] == "anomalous"
    assert signal(d, "serving.queue:value")["verdict"] == "anomalous"
    assert d["blast_radius"]["scope"] == "everything"
    if name == "sglang_stack":
        assert verdicts(d)["access"] == "anomalous"  # Envoy upstream time (ms)
        assert signal(d, "infra.node_cpu:value")["verdict"] == "normal"
    if name == "tgi_stack":
        serving_missing = next(
            layer["missing"] for layer in d["layers"] if layer["layer"] == "serving"
        )
        # TGI has no TTFT histogram; its proxy needs the prefill batch time: say so
        assert any("tgi_batch_inference_duration" in m for m in serving_missing), serving_missing
        assert signal(d, "hardware.temp:value")["now"] is not None  # lowercase hostname label
        # no gateway in front of TGI: the time before the GPU is read from its queue time
        before = next(f for f in d["load"] if f["id"] == "before_gpu")
        assert before["status"] == "fired" and "serving.queue_time:p99" in before["evidence"]
        assert before["note_key"] == "evidence.load.no_gap"
    if name == "triton_stack":
        assert signal(d, "serving.batch_size:value")["verdict"] == "anomalous"
        # Triton's latency is a mean: never compared with the gateway's P99 as a P99
        before = next(f for f in d["load"] if f["id"] == "before_gpu")
        assert "serving.e2e_latency:p99" not in before["evidence"]
        assert "serving_p99_now" not in before["numbers"]
        assert before["note_key"] == "evidence.load.no_gap"


def test_recorded_bundle_replays_the_same_analysis(
    prometheus_scenario: Get, tmp_path: Path
) -> None:
    srv = prometheus_scenario("thermal_replica")
    at = datetime.fromtimestamp(srv.scenario.now, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    bundle = tmp_path / "thermal.jsonl.gz"
    env = {"PATH": "/usr/bin:/bin", "COCKPIT_CONFIG": "/nonexistent/config.toml", "LANG": "C.UTF-8"}
    rec = subprocess.run(
        [
            COCKPIT,
            "record",
            "--prometheus-url",
            srv.url,
            "-n",
            "llm",
            "--at",
            at,
            "--window",
            "1h",
            "-o",
            str(bundle),
            "--plan",
            "metrics_drilldown",
        ],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )
    assert rec.returncode == 0, rec.stderr
    live = analyze(srv)
    rep = subprocess.run(
        [COCKPIT, "analyze", "--replay", str(bundle), "--window", "1h", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert rep.returncode == 0, rep.stderr
    replayed = json.loads(rep.stdout)
    live.pop("timing")
    replayed.pop("timing")
    assert replayed == live


def _demo_json(*args: str) -> dict[str, Any]:
    """``cockpit analyze --demo --json`` with ``args``, in a clean environment."""
    env = {"PATH": "/usr/bin:/bin", "COCKPIT_CONFIG": "/nonexistent/config.toml", "LANG": "C.UTF-8"}
    proc = subprocess.run(
        [COCKPIT, "analyze", "--demo", *args, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def test_demo_bundle_answers_every_drilldown_query() -> None:
    d = _demo_json()
    # The shipped bundle holds exactly the queries the screens make (rebuild it with
    # `make demo-bundle` whenever they change): nothing is answered "not recorded".
    unanswered = [
        s["key"] for s in d["signals"] if s["reason"].startswith(("not_found", "bad_query"))
    ]
    assert unanswered == []
    assert verdicts(d)["hardware"] == "anomalous" and d["blast_radius"]["scope"] == "everything"
    assert signal(d, "access.latency:p99")["now"] == pytest.approx(620, rel=0.05)
    assert [n["key"] for n in d["notes"]] == ["metrics.text.scope_deployment"]


def test_a_window_the_bundle_does_not_hold_is_said_in_json() -> None:
    """Replaying a window the bundle was not recorded for: every value is null, and the
    JSON says why (as the text does) instead of blaming the deployment's name."""
    d = _demo_json("--at", "2026-11-20T10:00")
    assert all(s["now"] is None for s in d["signals"])
    notes = {n["key"]: n for n in d["notes"]}
    assert "metrics.text.not_in_bundle" in notes
    assert notes["metrics.text.not_in_bundle"]["args"]["at"] == "2026-11-27T12:55Z"
    assert "--at 2026-11-27T12:55Z" in notes["metrics.text.not_in_bundle"]["text"]
    assert not d["scope"]["no_pod_matched"]
    assert "metrics.text.no_pod_matched" not in notes


def test_thermal_replica_evidence_in_chinese_and_english(prometheus_scenario: Get) -> None:
    srv = prometheus_scenario("thermal_replica")
    d = analyze(srv, "--lang", "zh")
    br = d["blast_radius"]
    # The English fields stay as they were; the zh rendering and the keys come alongside.
    assert any("vs peer median" in line for line in br["evidence"])
    assert br["note"].startswith("with ") and br["note_key"] == "evidence.blast.max_z"
    assert [m["key"] for m in br["evidence_msgs"]] and all(
        m["key"].startswith("evidence.blast.") for m in br["evidence_msgs"]
    )
    zh = br["evidence_text"]
    assert any("同类中位数" in line and "稳健分数" in line for line in zh)
    assert "z 分数" in zh[-1] and "1.73" in zh[-1]
    for fragment in ("peer median", "robust score", "stands out", "entities", "z-score"):
        assert not any(fragment in line for line in zh), fragment
    hw = next(layer for layer in d["layers"] if layer["layer"] == "hardware")
    assert any("基线" in line and "当前" in line for line in hw["evidence_text"])
    assert not any("≥ ×" in line or " below " in line for line in hw["evidence_text"])
    assert any("≥ ×" in line or "≤ ×" in line for line in hw["evidence"])
    rate = next(f for f in d["load"] if f["id"] == "arrival_rate")
    assert rate["text"][0].startswith("到达速率 ") and "req/s" in rate["text"][0]
    sig = signal(d, "hardware.temp:value")
    assert sig["reason_key"].startswith("evidence.reason.") and "°C" in sig["reason_text"]


def test_analyze_text_renders_in_the_chosen_language(prometheus_scenario: Get) -> None:
    srv = prometheus_scenario("thermal_replica")
    ns = srv.scenario.scope["namespace"]
    out = {
        lang: analyze_text(srv, srv.url, lang, "-n", ns, "--window", "1h") for lang in ("zh", "en")
    }
    assert "同类中位数" in out["zh"] and "到达速率" in out["zh"] and "基线" in out["zh"]
    for fragment in ("peer median", "robust score", "arrival rate", "z-score", "=620", "gap_now"):
        assert fragment not in out["zh"], fragment
    assert "vs peer median" in out["en"] and "arrival rate" in out["en"]
    assert "now=" not in out["en"] and "z-score cannot exceed" in out["en"]


def test_failed_queries_are_named_in_the_text_report(prometheus_scenario: Any) -> None:
    """A query that fails is never a quiet "no data" or "no alert fired": the text says
    what failed (the JSON already carries it)."""
    from tests.backends.faultproxy import Fault, FaultProxy

    srv = prometheus_scenario("thermal_replica")
    with FaultProxy(srv.url) as proxy:
        proxy.add(Fault(path="/api/v1/query", query="DCGM", status=503))
        proxy.add(Fault(path="/api/v1/query", query="ALERTS", status=503))
        for lang, alerts_line in (("en", "could not be read"), ("zh", "无法读取告警")):
            text = analyze_text(srv, proxy.url, lang, "-n", "llm", "--window", "1h")
            assert alerts_line in text and "No alert fired" not in text
            hardware = text[text.index("硬件" if lang == "zh" else "Hardware:") :].splitlines()
            assert "injected 503" in hardware[1], text  # under the layer's "no data"
            # said once for the layer's failed queries, not once per signal
            assert ("queries failed" in hardware[1]) or ("个查询失败" in hardware[1])
            assert not any("injected 503" in line for line in hardware[2:6]), text


def test_a_namespace_with_no_series_says_so(prometheus_scenario: Any) -> None:
    srv = prometheus_scenario("thermal_replica")
    text = analyze_text(srv, srv.url, "en", "-n", "no-such-namespace")
    assert "No series at all in the window" in text
    assert "normal" not in text.split("Reading rules")[0]


def test_deployment_narrows_the_series_with_a_pod_label(prometheus_scenario: Get) -> None:
    """--deployment reaches the PromQL of the stacks whose series carry the pod name; the
    gateway's series have none and say so; a wrong name finds nothing and says so."""
    srv = prometheus_scenario("thermal_replica")
    whole = analyze(srv)
    d = analyze(srv, "--deployment", "vllm-llama")
    assert verdicts(d) == verdicts(whole)
    assert d["blast_radius"]["scope"] == whole["blast_radius"]["scope"] == "single_gpu"
    assert d["blast_radius"]["suspect"] == whole["blast_radius"]["suspect"]
    assert d["scope"]["not_narrowed"] == ["ingress-nginx"] and not d["scope"]["no_pod_matched"]
    assert whole["scope"] == {
        "namespace": "llm",
        "model": "",
        "pod_regex": "",
        "not_narrowed": [],
        "no_pod_matched": False,
        "selector_workloads": [],
        "selector_failure": "",
        "joined": [],
        "services": [],
        "analysed_with": "",
    }
    pod = 'pod=~"vllm-llama-[a-z0-9]{1,10}-[a-z0-9]{5}|vllm-llama-[0-9]+"'
    by_key = {s["key"]: s["query"] for s in d["signals"]}
    assert pod in by_key["serving.e2e_latency:p99"] and pod in by_key["hardware.temp:value"]
    assert pod in by_key["infra.restarts:value"] and pod not in by_key["access.latency:p99"]

    other = analyze(srv, "--deployment", "vllm-llam")  # a prefix of the real name
    v = verdicts(other)
    assert v["access"] == "anomalous" and v["serving"] == v["hardware"] == "no_data"
    assert other["scope"]["no_pod_matched"]
    assert "metrics.text.no_pod_matched" in [n["key"] for n in other["notes"]]
    assert "metrics.text.no_pod_matched" not in [n["key"] for n in d["notes"]]
    text = analyze_text(srv, srv.url, "en", "-n", "llm", "--deployment", "vllm-llam")
    assert "No series of pods named like the deployment" in text
    assert "(kubectl get deploy -n llm)" in text  # the namespace is known: no placeholder
    assert "ingress-nginx series carry no pod label" in text


def test_selector_is_called_out_as_kubernetes_only(prometheus_scenario: Get) -> None:
    """A label selector cannot reach the PromQL (series carry no pod labels): the text says
    so instead of implying the metrics are narrowed."""
    srv = prometheus_scenario("thermal_replica")
    text = analyze_text(srv, srv.url, "en", "-n", "llm", "--selector", "app=vllm")
    assert "--selector app=vllm narrows the Kubernetes views only" in text
