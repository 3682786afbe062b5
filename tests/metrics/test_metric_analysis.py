"""Pure analysis: golden summaries and SLO breach, layer verdicts and reading rules, blast
radius with robust statistics, cohort comparison, length-mix shift and back-testing."""

from __future__ import annotations

from datetime import UTC, datetime

from cockpit.analysis.backtest import Candidate, backtest, rule_yaml
from cockpit.analysis.blast_radius import Breakdown, EntityValue, decide
from cockpit.analysis.cohort import auto_cohort, compare
from cockpit.analysis.golden import derive_slo_error_pct, first_breach, judge, summarize
from cockpit.analysis.inventory import Inventory, PodInfo
from cockpit.analysis.layers import drilldown
from cockpit.analysis.load import Bucket, LengthMix, length_shift, quantile
from cockpit.analysis.stats import max_z, robust_score
from cockpit.models import Sample, Series

T0 = 1_700_000_000.0


def series(values: list[float], t0: float = T0, step: float = 60.0) -> list[Series]:
    return [Series(samples=[Sample(t=t0 + i * step, v=v) for i, v in enumerate(values)])]


def test_worked_example_numbers_are_judged_anomalous() -> None:
    # Seed 003 §四: P99 180→620 ms, QPS 1200→900, errors 0.2 %→1.8 %, GPU util 72→98 %,
    # batch 8→3, queue 12→85, temperature 68→83 °C.
    assert judge("serving.e2e_latency", 620, 180)[0] == "anomalous"
    assert judge("serving.qps", 900, 1200)[0] == "anomalous"
    assert judge("serving.error_ratio", 1.8, 0.2)[0] == "anomalous"
    assert judge("hardware.gpu_util", 98, 72)[0] == "anomalous"
    assert judge("serving.batch_size", 3, 8)[0] == "anomalous"
    assert judge("serving.queue", 85, 12)[0] == "anomalous"
    assert judge("hardware.temp", 83, 68)[0] == "anomalous"
    # and ordinary wobble is not
    assert judge("serving.e2e_latency", 190, 180)[0] == "normal"
    assert judge("serving.qps", 1150, 1200)[0] == "normal"
    assert judge("serving.error_ratio", 0.3, 0.2)[0] == "normal"
    assert judge("serving.queue", None, 12)[0] == "no_data"


def test_a_value_without_baseline_is_undecided_never_normal() -> None:
    """P99 at 9.5 s with nothing to compare it with is not "normal" (only a ceiling can
    decide without a baseline)."""
    verdict, reason = judge("serving.e2e_latency", 9583, None)
    assert verdict == "no_data" and "no baseline" in reason and "9,583" in reason
    s = summarize(
        "serving.e2e_latency:p99", "serving.e2e_latency", "p99", "ms", series([9583] * 20), None
    )
    assert s.verdict == "no_data" and s.now.value == 9583
    layer = next(v for v in drilldown([s]).layers if v.layer == "serving")
    assert layer.verdict == "no_data"
    assert layer.evidence == [s.key] and "no baseline" in layer.lines_text("en")[0]
    assert "基线" in layer.lines_text("zh")[0]


def test_an_undecided_layer_says_which_query_failed() -> None:
    """A layer whose queries failed is "no data" with the failure on its lines, never a
    bare "no data" that reads like a quiet layer."""
    failed = summarize(
        "hardware.temp:max",
        "hardware.temp",
        "max",
        "°C",
        None,
        None,
        failure="timeout: query timed out in expression evaluation",
    )
    layer = next(v for v in drilldown([failed]).layers if v.layer == "hardware")
    assert layer.verdict == "no_data"
    assert any("query timed out" in line for line in layer.lines_text("en"))
    assert any("query timed out" in line for line in layer.lines_text("zh"))


def test_summary_now_instant_window_and_no_data_is_never_zero() -> None:
    s = summarize(
        "serving.queue:value",
        "serving.queue",
        "value",
        "req",
        series([10] * 100 + [80, 85, 90]),
        series([12] * 100),
    )
    assert s.verdict == "anomalous"
    assert s.instant.value == 90 and s.window_max.value == 90
    assert s.baseline.value == 12
    assert s.now.value is not None and s.now.value > 12
    empty = summarize("serving.queue:value", "serving.queue", "value", "req", [], series([12]))
    assert empty.verdict == "no_data" and empty.now.value is None and not empty.now.ok
    failed = summarize(
        "x:value", "serving.queue", "value", "req", None, None, failure="timeout: slow"
    )
    assert failed.now.reason == "timeout: slow"


def test_first_breach_needs_two_consecutive_samples() -> None:
    t = [T0 + 60 * i for i in range(6)]
    assert (
        first_breach(
            t, [100, 400, 100, 300, 320, 330], 270, signal="p99", derived=True
        ).at.timestamp()
        == T0 + 180
    )  # type: ignore[union-attr]
    assert first_breach(t, [100, 400, 100, 100, 100, 100], 270, signal="p99", derived=True) is None
    assert derive_slo_error_pct(None, 0.2) == 1.0
    assert derive_slo_error_pct(0.005, 0.2) == 0.5


def _sum(key: str, sig: str, stat: str, now: list[float], base: list[float], unit: str = "ms"):  # type: ignore[no-untyped-def]
    return summarize(key, sig, stat, unit, series(now), series(base))


def test_layers_and_reading_rules() -> None:
    sums = [
        _sum("serving.e2e_latency:p50", "serving.e2e_latency", "p50", [100] * 20, [100] * 20),
        _sum("serving.e2e_latency:p99", "serving.e2e_latency", "p99", [620] * 20, [180] * 20),
        _sum("serving.ttft:p99", "serving.ttft", "p99", [900] * 20, [200] * 20),
        _sum("serving.tpot:p99", "serving.tpot", "p99", [30] * 20, [30] * 20),
        _sum("serving.queue:value", "serving.queue", "value", [85] * 20, [12] * 20, "req"),
        _sum("hardware.gpu_util:value", "hardware.gpu_util", "value", [98] * 20, [72] * 20, "%"),
        _sum("infra.restarts:value", "infra.restarts", "value", [0] * 20, [0] * 20, "restarts"),
    ]
    dd = drilldown(sums)
    assert dd.layer("serving").verdict == "anomalous"
    assert dd.layer("hardware").verdict == "anomalous"
    assert dd.layer("infrastructure").verdict == "normal"
    assert dd.layer("access").verdict == "no_data"
    rules = {r.id: r.status for r in dd.rules}
    assert rules["p99_only"] == "fired" and rules["p50_and_p99"] == "not_fired"
    assert rules["ttft_not_tpot"] == "fired" and rules["ttft_and_tpot"] == "not_fired"
    assert rules["gpu_saturated_queue"] == "fired"
    assert rules["errors_up"] == "no_data"


def test_z_score_bound_and_robust_score() -> None:
    assert round(max_z(4), 2) == 1.73
    assert robust_score(650, [200, 210, 190]) > 3.5  # type: ignore[operator]
    assert robust_score(200, [210, 190, 650]) < 3.5  # type: ignore[operator]


def _inv() -> Inventory:
    inv = Inventory()
    for i, node in enumerate(["n1", "n1", "n2", "n3"]):
        inv.pods[f"vllm-abc-{i}"] = PodInfo(
            pod=f"vllm-abc-{i}", node=node, revision="vllm-abc", deployment="vllm"
        )
    inv.gpu_pod = {f"GPU-{i}": f"vllm-abc-{i}" for i in range(4)}
    inv.gpu_node = {f"GPU-{i}": n for i, n in enumerate(["n1", "n1", "n2", "n3"])}
    return inv


def _pods(key: str, sig: str, vals: list[float]) -> Breakdown:
    inv = _inv()
    return Breakdown(
        key=key,
        signal=sig,
        values=[
            EntityValue(
                entity=p, kind="pod", pod=p, node=inv.pods[p].node, revision="vllm-abc", value=v
            )
            for p, v in zip(sorted(inv.pods), vals, strict=True)
        ],
    )


def _gpus(key: str, sig: str, vals: list[float]) -> Breakdown:
    inv = _inv()
    return Breakdown(
        key=key,
        signal=sig,
        values=[
            EntityValue(
                entity=f"GPU-{i}",
                kind="gpu",
                gpu=f"GPU-{i}",
                pod=inv.gpu_pod[f"GPU-{i}"],
                node=inv.gpu_node[f"GPU-{i}"],
                value=v,
            )
            for i, v in enumerate(vals)
        ],
    )


def test_blast_radius_single_gpu_serving_the_slow_pod() -> None:
    inv = _inv()
    bds = [
        _pods("serving.e2e_latency:p99", "serving.e2e_latency", [200, 210, 650, 190]),
        _gpus("hardware.temp:value", "hardware.temp", [68, 69, 87, 67]),
        _gpus("hardware.sm_clock:value", "hardware.sm_clock", [1980, 1980, 1100, 1975]),
    ]
    br = decide(bds, inv)
    assert br.scope == "single_gpu" and br.propose == "E" and br.suspect == "GPU-2"
    assert "1.73" in br.max_z_note
    assert any("vllm-abc-2" in line for line in br.lines)


def test_blast_radius_everything_when_no_one_stands_out() -> None:
    br = decide(
        [_pods("serving.e2e_latency:p99", "serving.e2e_latency", [600, 610, 650, 620])], _inv()
    )
    assert br.scope == "everything" and br.propose == "F" and br.suspect == ""


def test_cohort_replicas_and_node_gpus() -> None:
    inv = _inv()
    bds = [
        _pods("serving.e2e_latency:p99", "serving.e2e_latency", [200, 210, 650, 190]),
        _gpus("hardware.temp:value", "hardware.temp", [68, 69, 87, 67]),
        _gpus("hardware.gpu_util:value", "hardware.gpu_util", [70, 72, 71, 70]),
    ]
    c = auto_cohort("vllm-abc-2", "pod", inv, bds)
    assert c.kind == "replicas" and c.members == ["vllm-abc-0", "vllm-abc-1", "vllm-abc-3"]
    cmp = compare(c, bds, inv)
    assert set(cmp.outliers) == {"serving.e2e_latency:p99", "hardware.temp:value"}
    g = auto_cohort("GPU-0", "gpu", inv, bds, kind="node_gpus")
    assert g.members == ["GPU-1"] and "n1" in g.definition_en
    # E opens on the cohort D's blast radius used: every other GPU of the service.
    auto = auto_cohort("GPU-0", "gpu", inv, bds)
    assert auto.kind == "all_gpus" and auto.members == ["GPU-1", "GPU-2", "GPU-3"]
    assert "every other GPU of the service (3)" in auto.definition_en
    # With two neighbours on its node too, E still opens on D's cohort, not the node's.
    inv.gpu_node["GPU-2"] = "n1"
    wide = auto_cohort("GPU-0", "gpu", inv, bds)
    assert wide.kind == "all_gpus" and wide.members == ["GPU-1", "GPU-2", "GPU-3"]
    custom = auto_cohort("vllm-abc-2", "pod", inv, bds, kind="custom", members=["vllm-abc-0"])
    assert custom.members == ["vllm-abc-0"]


def test_length_mix_shift_reads_as_a_long_prompt_client() -> None:
    base = [
        Bucket(le=le, count=c)
        for le, c in [(128, 300), (512, 900), (2048, 990), (8192, 1000), (float("inf"), 1000)]
    ]
    now = [
        Bucket(le=le, count=c)
        for le, c in [(128, 300), (512, 800), (2048, 850), (8192, 1000), (float("inf"), 1000)]
    ]
    assert quantile(base, 0.5) is not None
    f = length_shift(LengthMix(signal="serving.prompt_len", now=now, base=base), "long_prompts")
    assert f.status == "fired" and f.numbers["p95_now"] > f.numbers["p95_base"]
    same = length_shift(LengthMix(signal="serving.prompt_len", now=base, base=base), "long_prompts")
    assert same.status == "not_fired"


def test_backtest_lead_time_and_rule() -> None:
    start = datetime.fromtimestamp(T0, UTC)
    impact = datetime.fromtimestamp(T0 + 3600, UTC)
    # every rule waits its ``for: 2m`` in pending: it fires 2 min after its condition
    # began, and a condition that held for less never fires
    queue = Candidate(id="queue_growth", expr="sum(q) > 24")
    p99 = Candidate(id="p99_over_baseline", expr="p99 > 270")
    brief = Candidate(id="error_burn", expr="e > 0.01")
    xid = Candidate(id="xid", expr="x > 0", for_s=0)
    results = {
        "queue_growth": (series([1, 1, 1], t0=T0 + 3000), ""),
        "p99_over_baseline": (series([1, 1, 1], t0=T0 + 3540), ""),
        "error_burn": (series([1, 1], t0=T0 + 3000), ""),
        "xid": (series([1], t0=T0 + 3300), ""),
    }
    bt = backtest([queue, p99, brief, xid], results, start, impact, 60.0, "vllm")
    status = {r.candidate.id: (r.status, r.lead_s) for r in bt.results}
    assert status["queue_growth"] == ("lead", 480.0)
    assert status["p99_over_baseline"] == ("late", -60.0)  # began 1 min before, fired after
    assert status["error_burn"][0] == "silent"
    assert status["xid"] == ("silent", None)  # one sample is no sustained condition
    assert bt.best is not None and bt.best.candidate.id == "queue_growth"
    assert "alert: CockpitQueueGrowth" in bt.rule_yaml and "expr: 'sum(q) > 24'" in bt.rule_yaml
    assert "8 min before" in rule_yaml(bt.best)
    # annotations in the UI's language: the rule is pasted from a Chinese screen too
    zh = rule_yaml(bt.best, "vllm", "zh")
    assert "回测：在影响开始前 8 分钟触发" in zh and "Back-tested" not in zh


def test_alerts_of_other_namespaces_are_left_out() -> None:
    from cockpit.collect.alerts import alert_in_scope

    assert alert_in_scope({"alertname": "X", "namespace": "llm"}, "llm")
    assert not alert_in_scope({"alertname": "X", "namespace": "other"}, "llm")
    assert not alert_in_scope({"alertname": "X", "exported_namespace": "other"}, "llm")
    assert alert_in_scope({"alertname": "GpuHot", "Hostname": "n1"}, "llm")  # cluster-wide
    assert alert_in_scope({"alertname": "X", "namespace": "other"}, "")  # no scope set
