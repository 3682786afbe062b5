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


def _approx(a: float | None, b: float, tol: float = 0.011) -> bool:
    return a is not None and abs(a - b) <= tol


def _check_oom(case: dict[str, Any], f: dict[str, Any]) -> None:
    exp = case["expected"]
    fields = f["fields"]
    assert fields["engine"] == exp["engine"]
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
    else:  # a further case: the generic contract
        assert f["cause"]


def _check_nccl(case: dict[str, Any], f: dict[str, Any]) -> None:
    exp = case["expected"]
    fields = f["fields"]
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
    ids = {m["id"] for m in f["mitigations"]}
    assert "no_timeout_raise" in ids


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
    assert f["meaning"] and f["next_checks"]


_CHECKS = {
    "xid": _check_xid,
    "failed_scheduling": _check_pending,
    "cuda_oom": _check_oom,
    "nccl": _check_nccl,
    "engine_log": _check_engine,
    "utilization": _check_util,
    "rollout": _check_rollout,
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
    owner = _OWNER[category]
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
    assert "碎片" in zh and "下一步检查" in zh and "申请(GiB) (requested_gib): 1.27" in zh
    assert "子类型 (subtype): " in zh
    assert main(["explain", str(path), "--lang", "en"]) == 0
    en = capsys.readouterr().out
    assert "Fragmentation" in en and "Next checks" in en and "requested_gib: 1.27" in en


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
