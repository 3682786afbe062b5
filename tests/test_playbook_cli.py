"""``cockpit playbook``: the six checklists with their automated checks, headless, on the
demo bundle (metrics from a real Prometheus, replayed) and live against the local
Kubernetes API server (the official client over HTTP)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cockpit.analysis.playbooks.spec import PLAYBOOK_IDS, load_playbook
from cockpit.cli import main


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_lists_the_six_playbooks(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run(capsys, "--demo", "--lang", "en", "playbook")
    assert rc == 0
    assert [line.split()[0] for line in out.splitlines()[:6]] == list(PLAYBOOK_IDS)


def test_ttft_spike_on_the_demo(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run(capsys, "--demo", "--lang", "en", "playbook", "ttft_spike", "--json")
    assert rc == 0
    doc = json.loads(out)
    book = load_playbook("ttft_spike")
    assert [i["id"] for i in doc["items"]] == [i.id for i in book.items]
    assert doc["at"] == "2026-11-27T12:55:00+00:00"  # the recording's now, not today
    assert sum(doc["summary"].values()) == len(book.items)
    items = {i["id"]: i for i in doc["items"]}
    # the worked example: queue time and waiting requests up against the day before
    assert items["queue"]["status"] == "problem"
    assert "queue time P99" in items["queue"]["finding"]
    assert "queue_time_p99" in items["queue"]["finding_args"]["signals"]
    # TTFT and TPOT both worse: the seed's reading rule says overload / GPU / shared deps
    assert items["tpot_rule"]["status"] == "problem"
    # per-replica TTFT in the unit of the signal, with the per-pod query behind it
    per_pod = items["slow_replica"]["evidence"]
    assert len(per_pod) == 4
    assert all(e["unit"] == "ms" and "by (le, pod)" in e["query"] for e in per_pod)
    assert all(100 < float(e["value"].replace(",", "")) < 2000 for e in per_pod)
    # the demo holds the Kubernetes side: pods ready since the day before, no rollout
    assert doc["missing"] == {}
    assert items["scaling"]["status"] == "ok"
    # the time before the GPU is step F's finding, read as F computed it (one reading);
    # F fired on the engine's queue alone, so the item (ingress, auth, the gateway,
    # downstreams) is answered "no", pointing at the queue item
    before = items["before_gpu"]
    assert before["mode"] == "auto" and before["status"] == "ok"
    assert before["finding"].startswith(
        "Step F: no more time between the gateway and the engine; the wait before the GPU "
        "is in the engine's queue"
    )
    assert "the queue time is anomalous" in before["finding"]


def test_text_is_in_the_language_asked(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run(capsys, "--demo", "--lang", "zh", "playbook", "cuda_oom")
    assert rc == 0
    assert "场景一：CUDA OOM" in out and "不可用的数据源" not in out
    # the incident's clock written as every screen writes a time, not ISO's "+00:00"
    assert "2026-11-27 12:55:00Z" in out and "+00:00" not in out
    # the worked example's pod logs: an allocation failed with enough reserved memory
    assert "运行一段时间后 OOM（类别：显存碎片）" in out
    # the allocator item decides nothing from metrics alone but shows them, with baseline
    assert "分配器已保留（指标，基线 70.00 GiB）: 74.00 GiB" in out
    assert "baseline" not in out and "not recorded" not in out


def test_pod_pending_live(
    kubeconfig: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    rc, out, _ = _run(
        capsys,
        "--context",
        "pend-04",
        "-n",
        "llm",
        "--lang",
        "en",
        "playbook",
        "pod_pending",
        "--json",
    )
    assert rc == 0
    doc = json.loads(out)
    items = {i["id"]: i for i in doc["items"]}
    assert doc["pods_checked"] == ["llm-7b-0"]
    assert items["device_plugin"]["status"] == "problem"
    assert "nvidia-device-plugin" in items["device_plugin"]["finding"]
    assert items["requests"]["status"] == "problem"
    assert items["placement"]["status"] == "ok"
    # the commands to copy carry the namespace
    cmds = doc["commands"] + [c for i in doc["items"] for c in i["commands"]]
    assert cmds and not any("<namespace>" in c for c in cmds)


def test_refusals(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    rc, out, err = _run(capsys, "--demo", "--lang", "en", "playbook", "oom")
    assert rc == 2 and not out and "no playbook 'oom'; one of: cuda_oom" in err
    rc, out, err = _run(capsys, "--demo", "--lang", "en", "playbook", "cuda_oom", "layer=80")
    assert rc == 2 and not out and "unknown model keys layer" in err
    # nothing to read at all: the report still says why per item, and the exit says so
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    rc, out, err = _run(capsys, "--lang", "en", "playbook", "pod_pending")
    assert rc == 2
    assert "not available: kube" in out
    assert "no item could be checked automatically" in err
