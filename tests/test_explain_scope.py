"""``cockpit explain`` fills the ``<namespace>`` / ``<deployment>`` of its commands from the
configured service (flags, config file) and says in words, in both languages, which
placeholder is left and why, as F6 does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.commandline import fill_scope
from tests.conftest import DATA


@pytest.fixture
def rollout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A bad-rollout log (its mitigation is ``kubectl rollout undo deployment/<deployment>
    -n <namespace>``), with a configuration of its own."""
    for key in ("COCKPIT_SERVICE__NAMESPACE", "COCKPIT_SERVICE__DEPLOYMENT"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("COCKPIT_CONFIG", str(tmp_path / "config.toml"))
    cases = [json.loads(line) for line in (DATA / "cases.jsonl").read_text().splitlines()]
    case = next(c for c in cases if c["id"] == "roll-01")
    path = tmp_path / "rollout.log"
    path.write_text(case["artifact"], encoding="utf-8")
    return path


def _explain(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    rc = main(["explain", *argv])
    assert rc == 0
    return capsys.readouterr().out


def test_configured_scope_fills_the_commands(rollout, tmp_path, capsys):
    out = _explain(capsys, str(rollout), "--lang", "en", "-n", "llm", "--deployment", "vllm-qwen")
    assert "kubectl rollout undo deployment/vllm-qwen -n llm" in out
    assert "<deployment>" not in out and "<namespace>" not in out
    # From the config file, as every command reads it.
    (tmp_path / "config.toml").write_text(
        '[service]\nnamespace = "prod"\ndeployment = "chat"\n', encoding="utf-8"
    )
    out = _explain(capsys, str(rollout), "--lang", "zh")
    assert "kubectl rollout undo deployment/chat -n prod" in out
    doc = json.loads(_explain(capsys, str(rollout), "--json", "--lang", "en"))
    assert doc["unfilled"] == []
    assert "deployment/chat -n prod" in json.dumps(doc)


def test_an_unknown_placeholder_is_said_in_words(rollout, capsys):
    out = _explain(capsys, str(rollout), "--lang", "en", "-n", "llm")
    assert "deployment/<deployment> -n llm" in out
    assert "<deployment>: no deployment is configured (--deployment" in out
    assert "<namespace>:" not in out
    zh = _explain(capsys, str(rollout), "--lang", "zh")
    assert "<namespace>：未配置命名空间" in zh and "<deployment>：未配置 Deployment" in zh
    doc = json.loads(_explain(capsys, str(rollout), "--json", "--lang", "en", "-n", "llm"))
    assert [u["placeholder"] for u in doc["unfilled"]] == ["<deployment>"]
    assert "no deployment is configured" in doc["unfilled"][0]["text"]


def test_fill_scope_quotes_names_and_leaves_other_brackets():
    text = "kubectl logs <pod> -n <namespace> --previous; pass --chat-template <file>"
    out = fill_scope(text, "en", namespace="a b")
    assert out.startswith("kubectl logs <pod> -n 'a b' --previous; pass --chat-template <file>")
    assert "<pod>: the pasted text does not say which pod" in out and "<file>:" not in out
    assert fill_scope("no commands", "en") == "no commands"
