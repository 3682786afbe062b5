"""Playbooks: the knowledge files, and each playbook's checks finding a planted cause."""

from __future__ import annotations

import re

import pytest

from cockpit.analysis.playbooks.data import PlaybookData
from cockpit.analysis.playbooks.render import evidence_label, finding_text, to_record
from cockpit.analysis.playbooks.run import CHECKS, run_playbook
from cockpit.analysis.playbooks.spec import PLAYBOOK_IDS, all_playbooks, load_playbook
from cockpit.incident import ItemStatus
from playbook_scenarios import PLANTED, SCENARIOS
from tests.conftest import DATA

SEED = (DATA / "seeds" / "000_98f0f2273dcebb14.txt").read_text(encoding="utf-8")
# Items whose words are not in the seed: the release comparison and the Pending checks.
NOT_FROM_SEED = {("bad_rollout", "finish_reason"), ("pod_pending", "allocatable"),
                 ("pod_pending", "requests"), ("pod_pending", "placement"),
                 ("pod_pending", "quota_priority")}  # fmt: skip


def _norm(s: str) -> str:
    return re.sub(r"\s+", "", s).rstrip("。.：:")


def test_six_playbooks_in_the_handbooks_order() -> None:
    books = all_playbooks()
    assert [b.id for b in books] == list(PLAYBOOK_IDS)
    assert [b.order for b in books] == [1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize("pid", PLAYBOOK_IDS)
def test_items_are_the_seeds_words_in_zh_and_have_en(pid: str) -> None:
    book = load_playbook(pid)
    seed = _norm(SEED)
    assert _norm(book.intro.zh) in seed
    if book.closing.zh:
        assert _norm(book.closing.zh) in seed
    for item in book.items:
        assert item.zh and item.en and item.mode in ("auto", "ask")
        if item.mode == "auto":
            assert item.check in CHECKS, item.check
        if (pid, item.id) not in NOT_FROM_SEED:
            assert _norm(item.zh) in seed, item.zh


def test_pod_pending_carries_the_seeds_commands() -> None:
    cmds = load_playbook("pod_pending").commands
    assert "kubectl describe pod <pod>" in cmds
    assert any("allocatable.nvidia" in c for c in cmds)
    assert "kubectl get events --sort-by=.lastTimestamp" in cmds


@pytest.mark.parametrize("pid", PLAYBOOK_IDS)
def test_checks_find_the_planted_cause(pid: str) -> None:
    book = load_playbook(pid)
    results = {r.item: r for r in run_playbook(book, SCENARIOS[pid]())}
    assert set(results) == {i.id for i in book.items}
    for item in PLANTED[pid]:
        assert results[item].status is ItemStatus.PROBLEM, (item, results[item])
        assert results[item].evidence or results[item].finding_args
    for item in book.items:
        if item.mode == "ask":
            assert results[item.id].status is ItemStatus.OPEN
        for lang in ("zh", "en"):
            text = finding_text(results[item.id], lang)
            assert text and "{" not in text, text
            for e in results[item.id].evidence:
                label = evidence_label(e, lang)
                assert label and "playbook.ev" not in label and "{" not in label, label


def test_specific_findings() -> None:
    nccl = {r.item: r for r in run_playbook(load_playbook("nccl_hang"), SCENARIOS["nccl_hang"]())}
    assert nccl["first_rank"].finding_args["rank"] == 2
    assert nccl["first_rank"].finding_args["kind"] == "cuda_oom"
    # the last watchdog line is shown, labelled as not the cause
    labels = [evidence_label(e, "en") for e in nccl["first_rank"].evidence]
    assert any("not the cause" in x for x in labels)
    assert any("不是根因" in evidence_label(e, "zh") for e in nccl["first_rank"].evidence)
    ttft = {r.item: r for r in run_playbook(load_playbook("ttft_spike"), SCENARIOS["ttft_spike"]())}
    assert ttft["slow_replica"].finding_args["replicas"] == "vllm-2"
    assert ttft["tpot_rule"].finding_key.endswith("rule_queue_prefill")
    oom = {r.item: r for r in run_playbook(load_playbook("cuda_oom"), SCENARIOS["cuda_oom"]())}
    assert "expandable_segments" in oom["remedy"].finding_args["mitigations"]
    assert "--max-num-seqs" in oom["limits"].finding_args["flags"]


@pytest.mark.parametrize("pid", PLAYBOOK_IDS)
def test_missing_sources_say_not_available(pid: str) -> None:
    data = PlaybookData(missing={"kube": "no kubeconfig", "gpu": "no NVML", "metrics": "no URL"})
    results = run_playbook(load_playbook(pid), data)
    auto = [r for r, i in zip(results, load_playbook(pid).items, strict=True) if i.mode == "auto"]
    assert auto
    for r in auto:
        assert r.status in (ItemStatus.NOT_AVAILABLE, ItemStatus.OPEN), r
        if r.status is ItemStatus.NOT_AVAILABLE:
            assert finding_text(r, "en").startswith("not available: ")
            assert finding_text(r, "zh").startswith("不可用：")
    assert any(r.status is ItemStatus.NOT_AVAILABLE for r in auto)


def test_record_for_the_incident() -> None:
    book = load_playbook("pod_pending")
    results = run_playbook(book, SCENARIOS["pod_pending"]())
    rec = to_record(book, results, "zh", {"allocatable": ["ev-1"]})
    assert rec.playbook == "pod_pending"
    assert [i.item for i in rec.items] == [i.zh for i in book.items]
    assert rec.items[0].status == "problem" and rec.items[0].evidence_ids == ["ev-1"]
    assert "场景五" in rec.summary and "项有问题" in rec.summary


def test_oom_budget_with_the_model_config() -> None:
    """Weights + KV (2 × layers × KV heads × head dim × bytes × tokens × sequences) vs GPU."""
    from cockpit.analysis.playbooks.data import ModelConfig
    from cockpit.analysis.playbooks.oom_checks import oom_budget
    from playbook_scenarios import gpu_snapshot, pod

    args = ["--model", "/m/Llama-3-70B", "--tensor-parallel-size", "4", "--max-model-len", "32768",
            "--max-num-seqs", "256"]  # fmt: skip
    model = ModelConfig(params_b=70, num_layers=80, num_kv_heads=8, head_dim=128)
    data = PlaybookData(pods=[pod("vllm-0", args=args, gpus=4)], gpus=[gpu_snapshot()], model=model)
    r = oom_budget(data)
    assert r.status is ItemStatus.PROBLEM
    # 70e9 × 2 B / 4 = 32.6 GiB of weights per GPU; KV 2×80×8×128×2 B / 4 per token
    assert r.finding_args["weights"] == "32.6"
    kv_gib = 2 * 80 * 8 * 128 * 2 / 4 * 32768 * 256 / 1024**3
    assert r.finding_args["kv"] == f"{kv_gib:.1f}"
    small = data.model_copy(
        update={
            "pods": [
                pod(
                    "vllm-0",
                    args=[*args[:4], "--max-model-len", "4096", "--max-num-seqs", "16"],
                    gpus=4,
                )
            ]
        }
    )
    assert oom_budget(small).status is ItemStatus.OK
