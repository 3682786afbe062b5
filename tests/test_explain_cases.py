"""Every real case of ``tests/data/cases.jsonl`` through ``cockpit explain --json``.

Each case asserts the expected category and the key fields the responsible analyzer
extracts (the case's ``expected`` block). Cases of kinds whose parser is owned elsewhere
(Xid, FailedScheduling) are skipped until that parser is in the registry.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cockpit.analysis.explain import REGISTRY
from cockpit.cli import main
from tests.conftest import DATA, case_params

CASES_FILE = DATA / "cases.jsonl"
CASES = [json.loads(line) for line in CASES_FILE.read_text(encoding="utf-8").splitlines() if line]

# category → registry kind that owns it
_OWNER = {
    "cuda_oom": "cuda_oom",
    "nccl_hang": "nccl",
    "xid_hw": "xid",
    "pod_pending": "failed_scheduling",
    "ttft_spike": "engine_log",
    "low_util": "utilization",
    "bad_rollout": "rollout",
}
# Cases whose analyzer is not the category's usual one (a family of its own).
_OWNER_OF_CASE = {
    "xid-10": "cuda_error",
    "serve-01": "serving",
    "util-10": "metric_artifact",
}


def _cause_id(expected_cause: str) -> str:
    """``"other_tenant_on_shared_gpu (time-slicing …)"`` → ``other_tenant_on_shared_gpu``;
    ``"ncclRemoteError: peer/network failure …"`` → ``ncclRemoteError``."""
    return expected_cause.split(" ")[0].split(":")[0].rstrip(",;")


def _facts(f: dict[str, Any]) -> str:
    return " | ".join(x["text"] for x in f["facts"])


def _approx(a: float | None, b: float, tol: float = 0.011) -> bool:
    return a is not None and abs(a - b) <= tol


def _check_oom(case: dict[str, Any], f: dict[str, Any]) -> None:
    exp = case["expected"]
    fields = f["fields"]
    if "engine" in exp:
        assert fields["engine"] == exp["engine"]
    if "phase" in exp:
        assert fields["phase"] == exp["phase"]
    if "stage" in exp:
        assert fields["stage"] == exp["stage"]
    if "subtype" in exp:
        assert fields["subtype"] == exp["subtype"]
    cid = case["id"]
    if cid == "oom-01":
        assert f["cause"] == exp["likely"] == "max_num_seqs_too_high"
        assert fields["dummy_requests"] == exp["key_fields"]["dummy_requests"]
        assert fields["tp"] == exp["key_fields"]["tp"]
        assert fields["gpu_memory_utilization"] == exp["key_fields"]["gpu_memory_utilization"]
        assert "fragmentation" not in fields["classes"]
        assert any(m["id"] == "lower_max_num_seqs" for m in f["mitigations"])
    elif cid == "oom-02":
        assert fields["trigger"] == exp["trigger"]
        assert fields["engine_fatal"] is exp["engine_fatal"]
        assert _approx(fields["requested_gib"], exp["requested_gib"])
        assert _approx(fields["free_gib"], exp["free_gib"])
        assert _approx(fields["reserved_minus_allocated_gib"], exp["reserved_minus_allocated_gib"])
        assert _approx(fields["non_pytorch_gib"], exp["non_pytorch_gib"])
        assert _approx(fields["reserved_total_gib"], case["extracted"]["reserved_total_gib"])
        assert _approx(fields["private_pools_gib"], case["extracted"]["private_pools_gib"], 0.01)
        # own process printed as "Process <pid> has" inside the container
        assert fields["events"][0]["own_process_inferred"] is True
        assert fields["other_processes"] == []
        # headline: a runtime prefill outgrew what vLLM left outside its 0.9 budget ...
        assert exp["likely"].startswith("activation_headroom_exhausted")
        assert f["cause"] == fields["likely"] == "activation_headroom_exhausted"
        # ... fragmentation contributes (reserved-unallocated >= requested > free)
        assert fields["contributing"][:2] == ["fragmentation", "non_pytorch_memory"]
        # 79.33 x (1 - 0.9) - 10.04: non-PyTorch memory alone exceeds the share left over
        assert _approx(fields["headroom_outside_budget_gib"], -2.107, 0.002)
        ids = [m["id"] for m in f["mitigations"]]
        assert ids[:3] == ["lower_gpu_mem_util", "cap_prefill", "expandable_segments"]
        assert "Fragmentation" in f["meaning"]
    elif cid == "oom-04":
        assert fields["prefill_tokens"] == exp["prefill_tokens"]
        assert f["cause"] == exp["likely"]
        assert any(m["id"] == "lower_prefill_tokens" for m in f["mitigations"])
    elif cid == "oom-06":
        assert f["cause"] == exp["likely"]
        assert fields["max_model_len"] == exp["max_model_len"]
        assert fields["kv_capacity_tokens"] == exp["kv_capacity_tokens"]
        assert fields["gpu_blocks"] == case["extracted"]["gpu_blocks"]
        assert fields["block_size_inferred"] == case["extracted"]["block_size_inferred"]
        assert fields["shortfall_tokens"] == case["extracted"]["shortfall_tokens"]
    elif cid == "oom-10":
        assert f["cause"] == _cause_id(exp["cause"]) == "other_tenant_on_shared_gpu"
        assert fields["events"][0]["format"] == "pre_2_1"
        assert _approx(fields["total_gib"], 14.76) and _approx(fields["reserved_total_gib"], 4.43)
        # total − reserved − free: the number that shows the co-tenant
        assert _approx(fields["outside_process_gib"], 10.32, 0.02)
        assert _approx(fields["reserved_unallocated_gib"], 0.06)
        assert "fragmentation" not in fields["classes"]
        facts = _facts(f)
        assert "14.76 GiB total, 4.43 GiB reserved by this process, 14.75 MiB free" in facts
        assert "~10.32 GiB" in facts and "held outside this process" in facts
        assert "fragmentation cannot explain it" in facts and "CrashLoop" in facts
        assert "time-slicing" in facts
        ids = [m["id"] for m in f["mitigations"]]
        assert ids[:3] == ["find_cotenant", "separate_tenants", "cap_process_memory"]
        assert any("--query-compute-apps" in c["text"] for c in f["next_checks"])
    elif cid == "oom-11":
        assert f["cause"] == _cause_id(exp["cause"]) == "startup_cuda_graph_capture_oom"
        assert fields["stage"] == "cuda_graph_capture" and fields["phase"] == "startup"
        prof = fields["memory_profile"]
        assert prof["gpu_memory_utilization"] == 0.98 and prof["total_gib"] == 44.53
        assert prof["kv_gib"] == 21.2
        assert _approx(fields["headroom_outside_budget_gib"], 0.89)
        facts = _facts(f)
        assert "('Capturing cudagraphs') right after memory profiling" in facts
        assert "KV pool sized to 21.20 GiB, leaving ~0.89 GiB outside the budget" in facts
        assert "only 2.00 MiB with 448 KiB free" in facts and "full by design" in facts
        ids = [m["id"] for m in f["mitigations"]]
        assert ids[:3] == ["lower_gpu_mem_util", "enforce_eager", "lower_max_num_seqs"]
    elif cid == "oom-12":
        assert f["cause"] == "kv_budget_negative"
        prof = fields["memory_profile"]
        assert (prof["weights_gib"], prof["non_torch_gib"], prof["activation_peak_gib"]) == (
            5.2,
            0.03,
            1.42,
        )
        assert prof["kv_gib"] == -1.05 and prof["budget_gib"] == 5.6
        assert fields["gpu_blocks"] == 0
        assert fields["kv_gib_if_activation_halved"] <= 0
        assert fields["kv_gib_at_utilization"] == {"0.90": 0.55, "0.95": 0.95}
        facts = _facts(f)
        # the expected cause's own arithmetic, and the key facts
        assert "weights 5.20 + non-torch 0.03 + activation peak 1.42 = 6.65 GiB" in facts
        assert "budget 8.00 × 0.70 = 5.60 GiB" in facts and "-1.05 GiB" in facts
        assert "cuda blocks: 0" in facts
        assert "the budget, not max_model_len, is the binding constraint" in facts
        assert "65% of the 8.00 GiB card" in facts
        assert "max_model_len_exceeds_kv_capacity" not in fields["classes"]
        ids = [m["id"] for m in f["mitigations"]]
        assert ids == ["raise_gpu_mem_util", "lower_batched_tokens", "smaller_weights"]
    else:  # a further case: the generic contract
        assert f["cause"]


def _check_nccl(case: dict[str, Any], f: dict[str, Any]) -> None:
    exp = case["expected"]
    fields = f["fields"]
    if "pattern" in exp:
        assert fields["pattern"] == exp["pattern"]
    if "timeout_ms" in exp:
        assert fields["timeout_ms"] == exp["timeout_ms"]
    if "seq" in exp:
        assert fields["seq"] == exp["seq"]
    if "ops_at_seq" in exp:
        assert fields["ops_at_seq"] == exp["ops_at_seq"]
    if "odd_one_out_rank" in exp:
        assert fields["odd_one_out_rank"] == exp["odd_one_out_rank"]
        assert fields["first_failing_rank"] == exp["odd_one_out_rank"]
    if "suspect_rank" in exp:
        assert fields["suspect_rank"] == exp["suspect_rank"]
    if "gap_s" in exp:
        assert fields["gap_s"] == exp["gap_s"]
    if case["id"] == "nccl-03":
        assert fields["preceding_event"]["kind"] == "checkpoint_save"
    if case["id"] == "nccl-05":
        # never the last watchdog message: the first error is the assert on rank 3
        assert fields["primary"] == "device_side_assert"
        assert fields["first_failing_rank"] == 3
        assert "index out of bounds" in fields["first_error"]["text"]
        assert fields["first_error"]["line"] == 1
    if case["id"] == "nccl-10":
        assert f["cause"] == "nccl_remote_error"
        assert _cause_id(exp["cause"]) == fields["nccl_error"] == "ncclRemoteError"
        assert fields["timeouts_seen"] == 0 and fields["nccl_version"] == "2.21.5"
        assert fields["peer"] == "10.0.0.7" and fields["socket_reset"] is True
        facts = _facts(f)
        assert "ncclRemoteError (NCCL 2.21.5)" in facts
        assert "remote process exited or there was a network error" in facts
        assert "reset by peer" in facts and "the peer process died or the fabric dropped" in facts
        assert "not a collective-timeout/desync: the transport failed" in facts
        checks = " ".join(c["text"] for c in f["next_checks"])
        assert "ibstat" in checks and "NCCL_DEBUG_SUBSYS=INIT,NET" in checks
        assert "nccl-tests" in checks
    ids = {m["id"] for m in f["mitigations"]}
    assert "no_timeout_raise" in ids


def _check_cuda_error(case: dict[str, Any], f: dict[str, Any]) -> None:
    exp = case["expected"]
    fields = f["fields"]
    assert case["id"] == "xid-10"
    assert f["cause"] == "uncorrectable_ecc" and fields["side"] == "hardware"
    assert "uncorrectable ECC error on the GPU (hardware)" in exp["cause"]
    assert "Uncorrectable ECC error on the GPU (hardware)" in f["meaning"]
    assert "Xid 48/63/94/95" in f["meaning"]
    facts = _facts(f)
    assert "device memory fault, not a software or OOM bug" in facts
    assert "recurs on the same GPU/node" in facts and "works on other hardware" in facts
    checks = " ".join(c["text"] for c in f["next_checks"])
    assert "nvidia-smi -q -d ECC,ROW_REMAPPER" in checks and "dmesg | grep -i xid" in checks
    assert [m["id"] for m in f["mitigations"]] == ["cordon_reset", "rma_if_recurs"]


def _check_serving(case: dict[str, Any], f: dict[str, Any]) -> None:
    fields = f["fields"]
    assert f["cause"] == "admission_backpressure"
    assert fields["engine"] == "tgi" and fields["http_status"] == 429
    assert fields["max_concurrent_requests"] == 128 and fields["offered_concurrency"] == 500
    facts = _facts(f)
    assert "429 + error_type 'overloaded' is deliberate load shedding, not a crash" in facts
    assert "max_concurrent_requests: 128 vs 500 concurrent clients" in facts
    ids = [m["id"] for m in f["mitigations"]]
    assert ids == ["scale_replicas", "raise_limit_tgi", "client_backoff"]


def _check_metric(case: dict[str, Any], f: dict[str, Any]) -> None:
    fields = f["fields"]
    assert f["cause"] == "mig_gpu_util_unsupported"
    assert fields["mig_series"] == fields["zero_series"] == 3
    assert fields["mig_profiles"] == ["3g.40gb", "7g.80gb"]
    facts = _facts(f)
    assert "series carry GPU_I_PROFILE / GPU_I_ID labels" in facts
    assert "all 3 GPU_UTIL values are exactly 0 while jobs run" in facts
    assert "DCGM_FI_PROF_GR_ENGINE_ACTIVE" in " ".join(m["text"] for m in f["mitigations"])


def _check_engine(case: dict[str, Any], f: dict[str, Any]) -> None:
    exp = case["expected"]
    fields = f["fields"]
    assert f["cause"] == exp["cause"]
    if "kv_saturated" in exp:
        assert fields["kv_saturated"] is exp["kv_saturated"]
    if "kv_usage" in exp:
        assert _approx(fields["kv_usage"], exp["kv_usage"], 0.001)
    if "running" in exp:
        assert fields["running"] == exp["running"]
    if "cumulative_preemptions" in exp:
        assert fields["cumulative_preemptions"] == exp["cumulative_preemptions"]
    if case["id"] == "ttft-01":
        assert fields["waiting_trend"] == "rising"
        assert fields["gen_to_prompt_ratio"] < 0.1


def _check_util(case: dict[str, Any], f: dict[str, Any]) -> None:
    exp = case["expected"]
    fields = f["fields"]
    assert f["cause"] == exp["cause"]
    if "tp" in exp:
        assert fields["tp"] == exp["tp"]
    if "model_params_b" in exp:
        assert fields["model_params_b"] == exp["model_params_b"]
    if case["id"] == "util-03":
        assert fields["host_cpu_pct"] == 100
        assert fields["sm_active"] is not None and fields["sm_active"] < 0.76
    if case["id"] == "util-04":
        assert fields["data_time_fraction"] > 0.9
        assert fields["util_pattern"] == "sawtooth"
        # 0% <-> 100%: both ends kept; the level is the duty cycle, not the trough
        assert (fields["gpu_util_trough_pct"], fields["gpu_util_peak_pct"]) == (0, 100)
        assert _approx(fields["gpu_busy_share_est"], 1 - fields["data_time_fraction"], 0.001)
        assert _approx(fields["gpu_util_pct"], 6.8, 0.05)
        assert "saw-tooth" in f["meaning"]


def _check_rollout(case: dict[str, Any], f: dict[str, Any]) -> None:
    exp = case["expected"]
    fields = f["fields"]
    assert f["cause"] == exp["cause"]
    if case["id"] == "roll-01":
        assert "<|eot_id|>" in fields["special_tokens_visible"]
        assert fields["finish_length"] >= 1
    if case["id"] == "roll-02":
        assert fields["ready_while_warming"] is True
        assert fields["status_counts"].get("503") == 1
    if case["id"] == "roll-04":
        assert fields["http_status"] == 400
        assert fields["runtime_pip_install"] is True
    assert any(m["id"] == "roll.stop_spread" for m in f["mitigations"])


def _check_xid(case: dict[str, Any], f: dict[str, Any]) -> None:
    exp = case["expected"]
    fields = f["fields"]
    if "xid" in exp:
        assert fields["xid"] == exp["xid"]
    if "xids" in exp:
        assert fields["xids"] == exp["xids"]
    if "gpu" in exp:
        assert fields["gpu"] == exp["gpu"][: len("0000:00:00")]
    if "xid_inferred" in exp:
        assert fields["xid_inferred"] is exp["xid_inferred"]
    if "distinct_pids" in exp:
        assert fields["distinct_pids"] == exp["distinct_pids"]
    if "likely" in exp and exp["likely"].split(" ")[0] in ("suspect_hardware", "application_bug"):
        assert fields["likely"] == exp["likely"].split(" ")[0]
    if isinstance(exp.get("gpus"), dict):
        assert {g["pci"] for g in fields["gpus"]} >= set(exp["gpus"])
    if "severity" in exp:
        assert fields["severity"] == exp["severity"]
    if "node_effect" in exp:
        assert fields["node_effect"] == exp["node_effect"]
        assert "7 of 8" in f["meaning"] and "until the plugin restarts" in f["meaning"]
    if "check" in exp:
        assert fields["check"] == exp["check"]
        assert any(exp["check"] in c["text"] for c in f["next_checks"])
    if "escalate_if" in exp:
        assert fields["escalate_if"] == exp["escalate_if"]
        assert any(exp["escalate_if"] in c["text"] for c in f["next_checks"])
    assert f["meaning"] and f["next_checks"]


def _check_pending(case: dict[str, Any], f: dict[str, Any]) -> None:
    exp = case["expected"]
    fields = f["fields"]
    if "nodes_total" in exp:
        assert fields["nodes_total"] == exp["nodes_total"]
    if isinstance(exp.get("reasons"), dict) and case["id"] == "pend-01":
        assert fields["reasons"] == exp["reasons"]
    if "preemption_helpful" in exp:
        assert fields["preemption_helpful"] is exp["preemption_helpful"]
    if "preemption_possible" in exp:
        assert fields["preemption_possible"] is exp["preemption_possible"]
    if exp.get("subtype") == "gang_not_ready":
        assert fields["subtype"] == "gang_not_ready"
        assert fields["min_available"] == exp["min_available"]
        assert fields["tasks_known"] == exp["tasks_known"]
        # the scheduler's message, not the whole pasted YAML
        assert "\n" not in fields["message"]["raw"] and "status:" not in fields["message"]["raw"]
        if exp["tasks_known"] == 0:
            # "X/0 tasks": Volcano sees no member pod -> the pod is not Volcano's
            assert f["cause"] == "gang_scheduler_mismatch"
            assert "pod not owned by volcano" in exp["likely"]
            assert fields["scheduler_name"] == case["extracted"]["pod_schedulerName"].split()[0]
            assert "typo" in f["meaning"] and "sees no member pods" in f["meaning"]
    if case["id"] == "pend-01":
        assert f["cause"] == exp["likely"] == "device_plugin_not_reporting"
    if exp.get("subtype") == "device_plugin_not_scheduled":
        assert f["cause"] == exp["subtype"]
        assert fields["device_plugin_desired"] == exp["ds_desired"]
        # the pasted NFD toleration (Equal, value present) against the taint value "true"
        assert "operator: Exists" in f["meaning"] and "Equal" in f["meaning"]
    if case["id"] == "pend-03":
        assert f["cause"] == "missing_toleration"
    if case["id"] == "pend-10":
        assert f["cause"] == _cause_id(exp["cause"]) == "request_exceeds_node_capacity"
        assert fields["gpu_allocatable"] == [1, 1]
        m = f["meaning"]
        assert "GPU requests are summed per pod: 2 + 2 = 4" in m
        assert "k8s-master=none, k8s-node1=1, k8s-node2=1: the device plugin IS reporting" in m
        assert "no amount of waiting or preemption helps" in m
        # never the default the table contradicts
        assert "device_plugin" not in f["cause"] and "advertising" not in m
    assert f["meaning"] and f["next_checks"]


_CHECKS = {
    "xid": _check_xid,
    "failed_scheduling": _check_pending,
    "cuda_oom": _check_oom,
    "nccl": _check_nccl,
    "engine_log": _check_engine,
    "utilization": _check_util,
    "rollout": _check_rollout,
    "cuda_error": _check_cuda_error,
    "serving": _check_serving,
    "metric_artifact": _check_metric,
}


def _run_json(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, dict[str, Any]]:
    rc = main(["explain", str(path), "--json", "--lang", "en"])
    out = capsys.readouterr().out
    return rc, json.loads(out)


@pytest.mark.parametrize("case", case_params(CASES))
def test_case_through_explain_json(
    case: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    category = case["expected"]["category"]
    owner = _OWNER_OF_CASE.get(case["id"]) or _OWNER[category]
    if owner not in {k.name for k in REGISTRY}:
        pytest.skip(f"{owner} parser not merged yet")
    path = tmp_path / "artifact.txt"
    path.write_text(case["artifact"], encoding="utf-8")
    rc, data = _run_json(capsys, path)
    assert rc == 0
    assert data["schema"] == "cockpit.explain/1"
    assert data["recognised"] is True
    assert data["category"] == category
    finding = data["findings"][0]
    assert finding["kind"] == owner
    assert finding["role"] == "primary" and finding["evidence"]
    # nothing in the output contradicts the expected category
    assert all(
        f["category"] in (category, "other") or f["role"] == "consequence"
        for f in data["findings"][:1]
    )
    assert finding["title"] and finding["meaning"] and finding["next_checks"]
    check = _CHECKS.get(owner)
    if check is not None:
        check(case, finding)


@pytest.mark.parametrize("case_id", ["oom-02", "nccl-05", "ttft-02"])
def test_console_script_json(case_id: str, tmp_path: Path) -> None:
    """The installed ``cockpit`` script gives the same answer, from a file and stdin."""
    case = next(c for c in CASES if c["id"] == case_id)
    script = Path(sys.executable).with_name("cockpit")
    path = tmp_path / "a.txt"
    path.write_text(case["artifact"], encoding="utf-8")
    from_file = subprocess.run(
        [str(script), "explain", str(path), "--json"], capture_output=True, timeout=60, check=False
    )
    from_stdin = subprocess.run(
        [str(script), "explain", "-", "--json"],
        input=case["artifact"].encode(),
        capture_output=True,
        timeout=60,
        check=False,
    )
    for proc in (from_file, from_stdin):
        assert proc.returncode == 0, proc.stderr
        data = json.loads(proc.stdout)
        assert data["category"] == case["expected"]["category"]
    assert json.loads(from_file.stdout)["findings"] == json.loads(from_stdin.stdout)["findings"]


def test_not_recognised_says_what_it_looked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "x.txt"
    path.write_text("hello world\nnothing to see here\n", encoding="utf-8")
    rc, data = _run_json(capsys, path)
    assert rc == 1
    assert data["recognised"] is False and data["findings"] == [] and data["category"] is None
    kinds = {x["kind"] for x in data["looked_for"]}
    assert {"cuda_oom", "nccl", "xid", "failed_scheduling", "engine_log"} <= kinds
    assert all(x["text"] for x in data["looked_for"])


def test_text_output_in_both_languages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = next(c for c in CASES if c["id"] == "oom-02")
    path = tmp_path / "a.txt"
    path.write_text(case["artifact"], encoding="utf-8")
    assert main(["explain", str(path), "--lang", "zh"]) == 0
    zh = capsys.readouterr().out
    assert "碎片" in zh and "下一步检查" in zh and "申请(GiB): 1.27" in zh
    assert "requested_gib" not in zh and "allocator" not in zh
    assert main(["explain", str(path), "--lang", "en"]) == 0
    en = capsys.readouterr().out
    assert "Fragmentation" in en and "Next checks" in en and "requested (GiB): 1.27" in en


def test_missing_file_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", str(tmp_path / "nope.txt"), "--lang", "en"]) == 2
    assert "Cannot read the input" in capsys.readouterr().err


def test_mixed_kinds_in_one_paste(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An OOM on one rank followed by the others' watchdog timeouts: both found, the OOM
    named as the NCCL finding's first error, and the OOM (earlier line) listed first."""
    text = "\n".join(
        [
            "2026-02-18T10:00:01Z [rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to "
            "allocate 2.00 GiB. GPU 5 has a total capacity of 79.15 GiB of which 1.02 GiB is free. "
            "Including non-PyTorch memory, this process has 78.12 GiB memory in use. Of the "
            "allocated memory 75.00 GiB is allocated by PyTorch, and 1.50 GiB is reserved by "
            "PyTorch but unallocated.",
            "2026-02-18T10:10:02Z [rank0]:[E218 10:10:02.000000000 ProcessGroupNCCL.cpp:632] "
            "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=77, "
            "OpType=ALLREDUCE, NumelIn=10, NumelOut=10, Timeout(ms)=600000) ran for 600001 "
            "milliseconds before timing out.",
            "Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 "
            "tokens/s, Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%",
        ]
    )
    path = tmp_path / "mixed.txt"
    path.write_text(text, encoding="utf-8")
    rc, data = _run_json(capsys, path)
    assert rc == 0
    assert data["kinds"][:2] == ["cuda_oom", "nccl"]
    assert "engine_log" in data["kinds"]
    oom_f, nccl_f = data["findings"][0], data["findings"][1]
    assert oom_f["fields"]["rank"] == 5
    assert oom_f["fields"]["non_pytorch_gib"] == pytest.approx(1.62, abs=0.01)
    assert nccl_f["fields"]["pattern"] == "secondary_to_rank_failure"
    assert nccl_f["fields"]["primary"] == "cuda_oom"
    assert nccl_f["fields"]["first_failing_rank"] == 5
    idle = next(f for f in data["findings"] if f["kind"] == "engine_log")
    assert idle["category"] == "low_util" and idle["cause"] == "few_requests_idle"


def test_xid_node_effect_from_describe_node_blocks() -> None:
    """``kubectl describe node`` prints Capacity/Allocatable as blocks; the node effect and
    the catalogue's check come out in both languages."""
    from cockpit.analysis.xid import explain_xid_text

    text = "\n".join(
        [
            "Capacity:",
            "  cpu:             96",
            "  nvidia.com/gpu:  8",
            "Allocatable:",
            "  cpu:             95",
            "  nvidia.com/gpu:  6",
            "[  219.470994] NVRM: Xid (PCI:0000:07:00): 48, pid='<unknown>', name=<unknown>, "
            "An uncorrectable double bit error (DBE) has been detected on GPU",
        ]
    )
    en = explain_xid_text(text, "en")
    assert (en.gpu_capacity, en.gpu_allocatable) == (8, 6)
    assert en.node_effect == "allocatable nvidia.com/gpu 6/8"
    assert "took 2 GPU(s) out" in en.node_effect_text
    zh = explain_xid_text(text, "zh")
    assert "摘掉了 2 块 GPU" in zh.node_effect_text
    assert "行重映射" in zh.gpus[0].groups[0].info.escalate_if
    # Without a describe node there is no node effect.
    bare = explain_xid_text(text.splitlines()[-1], "en")
    assert bare.node_effect == "" and bare.gpu_allocatable is None
