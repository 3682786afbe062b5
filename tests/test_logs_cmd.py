"""``cockpit logs`` on the local Kubernetes API server (cluster ``logs``): text and JSON
through the shared wiring, a named pod, exit statuses, and ``record`` capturing the reads
that ``--replay`` answers with the same report."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from cockpit.cli import main
from tests.backends.kube_api import KubeApiServer
from tests.fixtures.kube import layered_logs as fx

AT = "2026-03-10T12:30:00Z"
SCOPE = ("--context", "logs", "-n", "llm", "-l", "app=vllm")


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kubeconfig: Path) -> Path:
    for key in ("COCKPIT_PROMETHEUS__URL", "COCKPIT_SERVICE__NAMESPACE", "COCKPIT_LANG"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("COCKPIT_CONFIG", str(tmp_path / "no-config.toml"))
    monkeypatch.setenv("COCKPIT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    got = capsys.readouterr()
    return code, got.out, got.err


def test_named_pod_text(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--at", AT, "logs", fx.SUSPECT, *SCOPE, "--lang", "en")
    assert code == 0
    assert "Reading the logs of the pod named." in out
    assert f"{fx.SUSPECT} (named pod, previous (terminated) instance): 5 lines" in out
    assert "CUDA out of memory (OOM)" in out and "NCCL hang / timeout" in out
    assert fx.SECRET not in out
    code, out, _ = run(capsys, "--at", AT, "logs", fx.SUSPECT, *SCOPE, "--lang", "zh")
    assert "运行时日志" in out and "接入日志" in out and "已从网关追到服务 Pod" in out


def test_exit_statuses(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--at", AT, "logs", "no-such-pod", *SCOPE, "--json")
    assert code == 2 and out == "" and "not_found" in err
    code, out, err = run(capsys, "logs", "--since", "soon", *SCOPE)
    assert code == 2 and "--since soon" in err
    # A cluster that cannot be reached: nothing read (1), each listing's failure said.
    code, out, err = run(capsys, "logs", "--context", "nope", "-n", "llm", "--json")
    doc = json.loads(out)
    assert code == 1 and not doc["reads"]
    assert {f["kind"] for f in doc["failures"]} == {"not_configured"}
    assert doc["layers"][0]["not_read"] == "failed"


def _without_system(doc: dict[str, Any]) -> dict[str, Any]:
    doc = dict(doc)
    doc["layers"] = [lay for lay in doc["layers"] if lay["layer"] != "system"]
    return doc


def test_record_captures_the_logs_and_replay_answers_them(
    env: Path, kube_api: KubeApiServer, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = env / "logs.jsonl.gz"
    code, out, _ = run(
        capsys, "record", "-o", str(bundle), "--at", AT, "--plan", "logs", *SCOPE, "--lang", "en"
    )
    assert code == 0, out
    assert "kube.pod_log: 5 recorded, 0 failed" in out
    # The live source is asked for serving logs unmasked; a recording never is.
    with gzip.open(bundle, "rt", encoding="utf-8") as fh:
        recorded = fh.read()
    assert fx.SECRET not in recorded and "launcher.py:19] Authorization: " in recorded
    code, live, _ = run(capsys, "--at", AT, "logs", *SCOPE, "--json")
    assert code == 0 and fx.SECRET not in live
    before = len(kube_api.requests_for("logs"))
    code, replayed, _ = run(capsys, "logs", "--replay", str(bundle), "--json")
    assert code == 0
    assert len(kube_api.requests_for("logs")) == before  # answered from the bundle only
    a, b = json.loads(live), json.loads(replayed)
    assert a["layers"] and _without_system(a) == _without_system(b)
    assert b["request_ids"]["followed"][0]["request_id"] == fx.RID_FOLLOWED


def _without_bytes(doc: dict[str, Any]) -> dict[str, Any]:
    doc = _without_system(doc)
    doc["reads"] = [{k: v for k, v in r.items() if k != "bytes"} for r in doc["reads"]]
    return doc


def test_replay_answers_a_shorter_window_and_says_what_it_lacks(
    env: Path, kube_api: KubeApiServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bundle recorded with the default hour answers ``--since 30m`` from the lines it
    holds (the same report as live, sizes aside: the bundle holds the masked text); for
    ``--since 3h`` each read says since when the bundle holds the log."""
    bundle = env / "logs.jsonl.gz"
    code, out, _ = run(
        capsys, "record", "-o", str(bundle), "--at", AT, "--plan", "logs", *SCOPE, "--lang", "en"
    )
    assert code == 0, out
    code, live, _ = run(capsys, "--at", AT, "logs", *SCOPE, "--since", "30m", "--json")
    assert code == 0
    code, replayed, _ = run(capsys, "logs", "--replay", str(bundle), "--since", "30m", "--json")
    assert code == 0, replayed
    a, b = json.loads(live), json.loads(replayed)
    assert a["since"] == b["since"] == "2026-03-10T12:00:00Z"
    assert _without_bytes(a) == _without_bytes(b)
    assert all(r["failure"] is None for r in b["reads"])
    code, wider, _ = run(capsys, "logs", "--replay", str(bundle), "--since", "3h", "--json")
    doc = json.loads(wider)
    failed = [r["failure"]["message"] for r in doc["reads"] if r["failure"]]
    assert failed and len(failed) == len(doc["reads"])
    assert all(
        "the bundle holds the" in m and "from 2026-03-10T11:30:00+00:00" in m for m in failed
    )
