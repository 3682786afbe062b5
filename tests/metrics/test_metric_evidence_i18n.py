"""Evidence sentences of the analysis exist in Chinese and English: the blast radius,
layer evidence and load findings rendered in zh carry Chinese sentences and none of the
English ones; rendered in en they read as the English text fields."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from cockpit.analysis.blast_radius import Breakdown, EntityValue, decide, signal_scope
from cockpit.analysis.golden import judge_msg, summarize
from cockpit.analysis.inventory import Inventory, PodInfo
from cockpit.analysis.layers import drilldown
from cockpit.analysis.load import Bucket, LengthMix, analyze_load
from cockpit.i18n import catalog
from cockpit.models import Sample, Series
from cockpit.models.messages import Msg

ROOT = Path(__file__).resolve().parents[2]
CJK = re.compile(r"[\u4e00-\u9fff]")
ENGLISH = (
    "peer median",
    "peers",
    "robust score",
    "entities",
    "too few",
    "stands out",
    "differs from",
    "z-score",
    "baseline",
    "below",
    "arrival rate",
    "gateway P99",
    "queue time",
    "requests above",
    "error ratio",
    "no data",
    "exported",
)


def english_left(lines: list[str]) -> list[str]:
    return [f for f in ENGLISH for line in lines if f in line]


def _inv() -> Inventory:
    inv = Inventory()
    for i in range(4):
        pod = f"vllm-abc-{i}"
        node = "n1" if i < 2 else "n2"
        inv.pods[pod] = PodInfo(pod=pod, node=node, revision="vllm-abc", deployment="vllm")
        inv.gpu_pod[f"GPU-{i}"] = pod
        inv.gpu_node[f"GPU-{i}"] = node
    return inv


def _pods(key: str, sig: str, vals: list[float], revs: list[str] | None = None) -> Breakdown:
    return Breakdown(
        key=key,
        signal=sig,
        unit="ms",
        values=[
            EntityValue(
                entity=f"vllm-abc-{i}",
                kind="pod",
                pod=f"vllm-abc-{i}",
                node="n1" if i < 2 else "n2",
                revision=(revs or ["vllm-abc"] * len(vals))[i],
                value=v,
            )
            for i, v in enumerate(vals)
        ],
    )


def _gpus(key: str, sig: str, unit: str, vals: list[float]) -> Breakdown:
    return Breakdown(
        key=key,
        signal=sig,
        unit=unit,
        values=[
            EntityValue(
                entity=f"GPU-{i}",
                kind="gpu",
                gpu=f"GPU-{i}",
                pod=f"vllm-abc-{i}",
                node="n1" if i < 2 else "n2",
                value=v,
            )
            for i, v in enumerate(vals)
        ],
    )


def test_blast_radius_lines_in_both_languages() -> None:
    bds = [
        _pods("serving.e2e_latency:p99", "serving.e2e_latency", [200, 210, 650, 190]),
        _gpus("hardware.temp:value", "hardware.temp", "°C", [68, 69, 87, 67]),
        _gpus("hardware.gpu_util:value", "hardware.gpu_util", "%", [70, 72, 71, 70]),
    ]
    br = decide(bds, _inv())
    assert br.scope == "single_gpu"
    en = br.lines_text("en")
    zh = br.lines_text("zh")
    # en reads as the English fields kept for --json, with the √(n−1) reminder last.
    assert en == [*br.lines, f"({br.max_z_note})"]
    assert any(
        "vllm-abc-2 = 650 ms vs peer median 200 ms (×3.25" in line and "peers) → " in line
        for line in en
    )
    assert "no entity stands out from its peers (4 entities)" in "\n".join(en)
    assert en[-1] == (
        "(with 4 entities a z-score cannot exceed √(n−1) = 1.73, so outliers are judged"
        " by their distance from the median (MAD), not by z-score)"
    )
    assert all(CJK.search(line) for line in zh), zh
    assert english_left(zh) == []
    joined = "\n".join(zh)
    assert "vllm-abc-2 = 650 ms，同类中位数 200 ms（×3.25" in joined
    assert "GPU-2 = 87 °C" in joined and "稳健分数" in joined
    assert "没有实体明显偏离同类（4 个实体）→ 全部副本" in joined
    assert "√(n−1) = 1.73" in zh[-1] and "z 分数" in zh[-1]
    assert all(m.key.startswith("evidence.blast.") for m in br.line_msgs)


def test_scope_notes_in_both_languages() -> None:
    few = signal_scope(_pods("k", "serving.e2e_latency", [1, 2]), _inv())
    rev = signal_scope(
        _pods("k", "serving.e2e_latency", [200, 300, 450, 600], ["a", "a", "b", "b"]), _inv()
    )
    assert few.note == "2 entities: too few peers to compare"
    assert rev.scope == "revision" and rev.note == "revision b differs from the others"
    assert few.note_msg is not None and rev.note_msg is not None
    assert few.note_msg.text("zh") == "仅 2 个实体：同类太少，无法横向比较"
    assert rev.note_msg.text("zh") == "版本 b 与其他版本明显不同"


def test_layer_evidence_and_reasons_in_both_languages() -> None:
    t0 = 1_700_000_000.0

    def series(values: list[float]) -> list[Series]:
        return [Series(samples=[Sample(t=t0 + i * 60, v=v) for i, v in enumerate(values)])]

    sums = [
        summarize(
            "access.latency:p99",
            "access.latency",
            "p99",
            "ms",
            series([620] * 5),
            series([180] * 5),
        ),
        summarize(
            "access.latency:p50", "access.latency", "p50", "ms", series([140] * 5), series([45] * 5)
        ),
        summarize(
            "hardware.sm_clock:value",
            "hardware.sm_clock",
            "value",
            "MHz",
            series([1100] * 5),
            series([1980] * 5),
        ),
        summarize(
            "infra.restarts:value", "infra.restarts", "value", "", series([0] * 5), series([0] * 5)
        ),
        summarize(
            "serving.ttft:p99", "serving.ttft", "p99", "ms", None, None, failure="timeout: slow"
        ),
    ]
    dd = drilldown(sums)
    access = dd.layer("access")
    assert access.lines_text("en") == access.lines
    assert "gateway latency P99: 180 ms → 620 ms (×3.44 ≥ ×1.5)" in access.lines
    zh = [line for v in dd.layers for line in v.lines_text("zh")]
    assert "网关延迟 P99：基线 180 ms → 当前 620 ms（×3.44，达到上升阈值 ×1.5）" in zh
    assert any("低于下降阈值 ×0.9" in line for line in zh)
    assert any("变化 +0，小于阈值 0.5" in line for line in zh)
    assert english_left(zh) == []
    failed = next(s for s in sums if s.key == "serving.ttft:p99")
    assert (
        failed.reason == "timeout: slow" and failed.reason_text("zh") == "查询失败：timeout: slow"
    )
    verdict, reason = judge_msg("runtime.kv_cache", 96.0, 60.0, "%")
    assert verdict == "anomalous" and reason.text("en") == "96% ≥ 95%"
    assert reason.text("zh") == "当前 96%，已达上限 95%"
    # doubling is not anomalous for the KV cache until the limit, but it is shown as a
    # change, and the reason names the limit
    verdict, reason = judge_msg("runtime.kv_cache", 90.0, 45.0, "%")
    assert verdict == "changed"
    assert reason.text("en") == "45% → 90% (×2.00: changed ×2 or more, under the 95% limit)"
    verdict, reason = judge_msg("runtime.kv_cache", 80.0, 45.0, "%")
    assert verdict == "normal" and reason.text("en") == "45% → 80% (×1.78), under the 95% limit"


def test_load_findings_read_as_sentences_with_units() -> None:
    t0 = 1_700_000_000.0

    def series(values: list[float]) -> list[Series]:
        return [Series(samples=[Sample(t=t0 + i * 60, v=v) for i, v in enumerate(values)])]

    sums = [
        summarize(f"{sid}:{stat}", sid, stat, unit, series([now] * 5), series([base] * 5))
        for sid, stat, unit, now, base in (
            ("access.qps", "value", "req/s", 900, 1200),
            ("access.latency", "p99", "ms", 620, 180),
            ("serving.e2e_latency", "p99", "ms", 676.67, 297),
            ("access.error_ratio_5xx", "value", "%", 1.8, 0.2),
        )
    ]
    base = [Bucket(le=le, count=c) for le, c in [(512, 900), (2048, 990), (float("inf"), 1000)]]
    now = [Bucket(le=le, count=c) for le, c in [(512, 500), (2048, 700), (float("inf"), 1000)]]
    findings = analyze_load(sums, LengthMix(signal="serving.prompt_len", now=now, base=base))
    by = {f.id: f for f in findings}
    en = {k: f.text("en") for k, f in by.items()}
    zh = {k: f.text("zh") for k, f in by.items()}
    assert en["arrival_rate"] == [
        "arrival rate 900 req/s, baseline 1,200 req/s (×0.75)",
        "fewer requests than in the baseline: rather a symptom (clients giving up or retrying "
        "less, an upstream outage, traffic moved away) than a load cause",
    ]
    assert zh["arrival_rate"][0] == "到达速率 900 req/s，基线 1,200 req/s（×0.75）"
    assert zh["arrival_rate"][1].startswith("请求比基线少")
    # A negative P99 difference is not a duration, and the gap that fell did not fire it.
    # Each P99 says what it measures: two histograms of different requests.
    assert en["before_gpu"][0] == (
        "gateway P99 620 ms (the proxy's request time, over every response it sent, its own "
        "errors included), serving P99 677 ms (the engine's end-to-end time, over the "
        "requests it finished): quantiles of two histograms with different requests and "
        "buckets, so their difference (-57 ms, below zero) is not a duration and shows no "
        "time before the serving layer"
    )
    assert (
        "代理记录的请求耗时" in zh["before_gpu"][0]
        and "引擎记录的端到端耗时" in zh["before_gpu"][0]
    )
    assert by["before_gpu"].status == "not_fired"
    assert "gap_now" not in "\n".join(en["before_gpu"])  # numbers read as sentences
    assert (
        zh["long_prompts"][0].startswith("最近 30 分钟的长度分布：P50 ")
        and "token" in zh["long_prompts"][0]
    )
    # each error ratio by the name its row has, with what it measures
    assert en["gateway_errors"] == [
        "gateway 5xx ratio 1.8% (the 5xx the gateway answered, over every response it sent)",
        "no server error metric to compare with",
    ]
    assert by["gateway_errors"].note == "no server error metric to compare with"
    assert zh["gateway_errors"] == [
        "网关 5xx 比例 1.8%（网关返回的 5xx 占它发出的全部响应）",
        "没有服务端错误指标可比较",
    ]
    assert zh["shared_node"] == ["未导出节点、存储或网络信号"]
    for lines in zh.values():
        assert all(CJK.search(line) or line.startswith("P50") for line in lines), lines
        assert english_left(lines) == []


def test_every_evidence_key_exists_and_formats_in_both_languages() -> None:
    keys = set(catalog())
    used: set[str] = set()
    for path in [*ROOT.glob("cockpit/analysis/*.py"), *ROOT.glob("cockpit/collect/*.py")]:
        used |= set(re.findall(r"\bmsg\(\s*\"(evidence\.[a-z0-9_.]+)\"", path.read_text()))
    assert used and sorted(used - keys) == []
    # Every evidence message formats with the same placeholders in both languages.
    for key, entry in catalog().items():
        if key.startswith("evidence."):
            # zh shows a signal's name where en keeps its identifier (stable for scripts).
            names = [
                {{"name": "key", "names": "keys"}.get(n, n) for n in re.findall(r"\{(\w+)", e)}
                for e in (entry["zh"], entry["en"])
            ]
            assert names[0] == names[1], key
    assert Msg(key="evidence.blast.max_z", args={"n": 4, "bound": 1.732}).text("zh").count("1.73")


def test_large_numbers_are_written_whole() -> None:
    m = Msg(
        key="evidence.reason.up",
        args={"baseline": 4586.0, "now": 13360.0, "ratio": 2.91, "limit": 1.5, "unit": " ms"},
    )
    assert m.text("en") == "4,586 ms → 13,360 ms (×2.91 ≥ ×1.5)"
    assert "13,360 ms" in m.text("zh") and "e+" not in m.text("zh")


def test_a_gateway_p99_at_its_top_bucket_is_not_subtracted() -> None:
    """A P99 at its histogram's top bucket is a lower bound: F quotes it as C shows it
    (``≥ 10,000 ms, top bucket``) and reads no gap from it."""
    from cockpit.analysis.load import before_gpu

    def row(sid: str, value: float) -> Any:
        samples = [Series(samples=[Sample(t=1.8e9 + i * 60, v=value) for i in range(5)])]
        return summarize(f"{sid}:p99", sid, "p99", "ms", samples, samples)

    gw, sv = row("access.latency", 10000.0), row("serving.e2e_latency", 16868.0)
    gw.top_bucket = 10000.0
    f = before_gpu(gw, sv, None)
    assert "gap_now" not in f.numbers and f.status == "not_fired"
    assert f.text("en")[0] == (
        "gateway P99 ≥ 10,000 ms, top bucket, serving P99 16,868 ms: one of them is at its "
        "histogram's top bucket, a lower bound, so the time spent before the engine cannot "
        "be read from their difference"
    )
    assert f.text("zh")[0].startswith("网关 P99 ≥ 10,000 ms（落在直方图最高桶）")
    # …and one in the lowest bucket is an upper bound: no gap either
    gw.top_bucket, sv.bottom_bucket = None, 300.0
    f = before_gpu(gw, sv, None)
    assert "gap_now" not in f.numbers
    assert "serving P99 ≤ 300 ms, lowest bucket" in f.text("en")[0]
    assert "an upper bound" in f.text("en")[0]
