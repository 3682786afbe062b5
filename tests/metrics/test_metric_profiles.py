"""Metric profiles: every built-in profile loads, detects from its own names, renders valid
PromQL shapes, resolves version aliases and reports missing metrics with a hint."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cockpit.analysis.labels import LabelReport, format_report, stack_labels
from cockpit.analysis.profiles import builtin_profiles, detect_profiles, load_profiles, render
from cockpit.config import PrometheusSettings
from cockpit.models import from_epoch
from cockpit.models.signals import SIGNALS
from cockpit.scenarios.promserver import PromServer
from cockpit.sources.prometheus import PrometheusSource

EXPECTED = {
    "vllm",
    "sglang",
    "tgi",
    "triton",
    "dcgm",
    "kube_state_metrics",
    "node_cadvisor",
    "ingress_nginx",
    "envoy",
    "inference_gateway",
    "torch_alloc",
}


def test_every_stack_has_a_profile_with_sources_and_known_signals() -> None:
    profiles = {p.id: p for p in builtin_profiles()}
    assert set(profiles) == EXPECTED
    for p in profiles.values():
        assert p.profile.source, p.id
        assert p.profile.enable_en and p.profile.enable_zh, p.id
        for s in p.signal:
            assert s.id in SIGNALS, (p.id, s.id)
            assert s.source, (p.id, s.id)
            # Unitless only for a 0/1 flag (a comparison with the bool modifier).
            assert s.unit or re.search(r"[<>]=? bool", s.query), (p.id, s.id)


async def test_throttle_flag_reads_exactly_the_slowdown_bits(
    worked_example_prom: PromServer,
) -> None:
    """The throttle flag (one read of the clock-event bitmask) is 1 exactly when HW
    slowdown 0x8, SW thermal 0x20, HW thermal 0x40 or power brake 0x80 is set, evaluated
    by a real Prometheus for every mask below 4096 (idle 0x1, app clocks 0x2, SW power cap
    0x4, sync boost 0x10 and the bits above 0x80 do not set it)."""
    det = detect_profiles(["DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"])
    r = det.get("hardware.throttle")
    assert r is not None and r.available
    q = render(r, sel='namespace="llm"', by=("mask",))
    assert q.count('DCGM_FI_DEV_CLOCKS_EVENT_REASONS{namespace="llm"}') == 1, q
    src = PrometheusSource(PrometheusSettings(url=worked_example_prom.url))
    at = from_epoch(worked_example_prom.scenario.now)
    got: dict[int, float] = {}
    try:
        for lo in range(0, 4096, 128):
            masks = " or ".join(
                f'label_replace(vector({m}), "mask", "{m}", "", "")' for m in range(lo, lo + 128)
            )
            for s in await src.instant(
                q.replace('DCGM_FI_DEV_CLOCKS_EVENT_REASONS{namespace="llm"}', f"({masks})"), at
            ):
                got[int(s.labels["mask"])] = s.v
    finally:
        await src.close()
    want = {m: float(any(m & bit for bit in (0x8, 0x20, 0x40, 0x80))) for m in range(4096)}
    assert got == want


@pytest.mark.parametrize("profile_id", sorted(EXPECTED))
def test_profile_detected_from_its_own_names_only(profile_id: str) -> None:
    prof = next(p for p in builtin_profiles() if p.id == profile_id)
    names = set(prof.profile.detect)
    for s in prof.signal:
        names.update(s.presence_names()[:1])
        names.update(s.requires)
    det = detect_profiles(names)
    assert profile_id in det.profiles
    for s in prof.signal:
        r = det.get(s.id)
        assert r is not None and r.available, (profile_id, s.id)
        q = render(r, sel='namespace="llm"', quantile=0.99, by=("pod",))
        assert q.count("(") == q.count(")"), q
        assert "$" not in q and "{," not in q and ",}" not in q, q


def test_vllm_version_aliases_resolve_to_the_old_names() -> None:
    det = detect_profiles(
        [
            "vllm:num_requests_running",
            "vllm:gpu_cache_usage_perc",
            "vllm:time_per_output_token_seconds_bucket",
        ]
    )
    kv = det.get("runtime.kv_cache")
    tpot = det.get("serving.tpot")
    assert kv is not None and kv.metric == "vllm:gpu_cache_usage_perc" and kv.alias
    assert tpot is not None and tpot.metric == "vllm:time_per_output_token_seconds" and tpot.alias
    new = detect_profiles(["vllm:num_requests_running", "vllm:kv_cache_usage_perc"])
    kv_new = new.get("runtime.kv_cache")
    assert kv_new is not None and kv_new.metric == "vllm:kv_cache_usage_perc" and not kv_new.alias


def test_tgi_ttft_is_a_proxy_and_dcgm_fields_off_by_default_say_how_to_enable() -> None:
    det = detect_profiles(["tgi_queue_size", "DCGM_FI_DEV_GPU_UTIL"])
    ttft = det.get("serving.ttft")
    assert ttft is not None and ttft.profile == "tgi" and ttft.spec.average_only
    assert ttft.missing == [
        "tgi_batch_inference_duration_count",
        "tgi_request_queue_duration_count",
    ]
    assert "proxy" in ttft.spec.note_en and "近似" in ttft.spec.note_zh
    sm = det.get("hardware.sm_active")
    assert sm is not None and not sm.available
    assert sm.missing == ["DCGM_FI_PROF_SM_ACTIVE"]
    assert "1002" in det.enable_hint(sm, "en") and "CSV" in det.enable_hint(sm, "en")
    assert "取消注释" in det.enable_hint(sm, "zh")


def test_unsupported_is_cleared_when_another_stack_provides_it() -> None:
    det = detect_profiles(
        ["tgi_queue_size", "vllm:time_to_first_token_seconds_bucket", "vllm:num_requests_running"]
    )
    assert "serving.ttft" not in det.unsupported


def test_user_file_overrides_and_extends(tmp_path: Path) -> None:
    extra = tmp_path / "fork.toml"
    extra.write_text(
        """
[profile]
id = "vllm"
name = "vLLM fork"
stack = "serving"
detect = ["myfork:running"]

[[signal]]
id = "serving.queue"
kind = "gauge"
metrics = ["myfork:waiting"]
unit = "req"
source = "our fork"
""",
        encoding="utf-8",
    )
    profiles = load_profiles([extra], disable=["triton"])
    assert "triton" not in {p.id for p in profiles}
    det = detect_profiles(["myfork:running", "myfork:waiting"], profiles)
    q = det.get("serving.queue")
    assert q is not None and q.metric == "myfork:waiting"
    # Signals the override does not mention stay as built in.
    e2e = det.get("serving.e2e_latency")
    assert e2e is not None and not e2e.available
    assert e2e.missing == ["vllm:e2e_request_latency_seconds_bucket"]


def test_forced_profile_is_used_without_its_metrics() -> None:
    det = detect_profiles([], force=["sglang"])
    assert det.profiles == ["sglang"]
    assert all(not r.available for r in det.signals.values())


def test_unified_label_report_lists_equivalents_and_absences() -> None:
    s = stack_labels(
        "dcgm",
        "DCGM_FI_DEV_GPU_UTIL",
        {"Hostname": "n1", "UUID": "GPU-1", "gpu": "0", "pod": "p", "namespace": "llm"},
    )
    assert s.found["gpu_id"] == ["UUID", "gpu"]
    assert s.found["instance"] == ["pod", "Hostname"]
    assert s.found["model"] == []
    report = LabelReport(stacks=[s])
    assert "request_id" in report.absent_everywhere()
    text = "\n".join(format_report(report, "en"))
    assert "model: absent" in text and "request_id does not belong" in text


def test_missing_and_unsupported_signals_read_in_the_language_shown_not_the_one_planned() -> None:
    """A plan made in Chinese (the detection is cached across a Ctrl+P language switch)
    still tells, in English, how to enable a missing metric and why the stack cannot give
    a signal — by its human name, never its id — and the JSON's lines stay English."""
    import asyncio

    from cockpit.analysis.layers import layer_verdicts
    from cockpit.collect.base import make_window
    from cockpit.collect.runner import QueryRunner
    from cockpit.collect.signals import collect_summaries, plan

    det = detect_profiles(["sglang:num_running_reqs", "DCGM_FI_DEV_GPU_UTIL"])
    assert "serving.error_ratio" in det.unsupported
    assert det.get("hardware.sm_active") is not None
    window = make_window(from_epoch(1_800_000_000), baseline="quiet")
    ids = ["serving.error_ratio", "hardware.sm_active"]
    planned = plan(det, {"namespace": "llm", "model": "", "pod": ""}, window, ids, "zh")
    assert planned and not any(p.query for p in planned)
    source = PrometheusSource(PrometheusSettings(url="http://127.0.0.1:9"))
    res = asyncio.run(collect_summaries(QueryRunner(source), planned, window))
    layers = {v.layer: v for v in layer_verdicts(res.summaries)}

    hw_en, hw_zh = layers["hardware"].missing_in("en"), layers["hardware"].missing_in("zh")
    assert any("DCGM_FI_PROF_SM_ACTIVE" in x and "CSV" in x for x in hw_en), hw_en
    assert any("取消注释" in x for x in hw_zh), hw_zh
    assert not re.search(r"[\u4e00-\u9fff]", " ".join(hw_en))

    sv_en, sv_zh = layers["serving"].missing_in("en"), layers["serving"].missing_in("zh")
    assert any("counts no server-side failures" in x for x in sv_en), sv_en
    assert any("服务端失败" in x for x in sv_zh), sv_zh
    assert not any("serving.error_ratio" in x for x in sv_en + sv_zh)
    # analyze --json: English, the signal by its id as documented
    assert any(
        x.startswith("serving.error_ratio: SGLang counts") for x in layers["serving"].missing
    )
    assert all(s.reason_text("en") == s.reason for s in res.summaries)
