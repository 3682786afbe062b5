"""``cockpit list``, ``cockpit export`` and what ``cockpit record`` reports, through ``cockpit.cli.main`` and through the
installed ``cockpit`` console script."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from datetime import UTC, timedelta
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.export import render
from cockpit.incident import Incident, IncidentStatus
from cockpit.scenarios.promserver import PromServer
from cockpit.sources.bundle import open_replay
from cockpit.store import IncidentStore
from tests.backends.faultproxy import Fault, FaultProxy, closed_port_url
from tests.helpers.sample_incident import empty_incident, full_incident

ENV_KEYS = ("COCKPIT_STATE_DIR", "COCKPIT_LANG", "COCKPIT_CONFIG", "TMUX", "STY")


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A state dir with a closed full incident, an open empty one and a corrupt file."""
    for key in ENV_KEYS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("COCKPIT_CONFIG", str(tmp_path / "no-config.toml"))
    root = tmp_path / "state"
    store = IncidentStore(root)
    store.save(full_incident())
    store.save(empty_incident())
    store.release_all()
    (root / "inc-broken.json").write_text('{"id": "inc-broken", "title": ')
    os.chmod(root / "inc-broken.json", 0o600)
    return root


def test_list_table_shows_open_incidents_and_unreadable_files(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["list", "--state-dir", str(state), "--lang", "en"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split() == [
        "ID",
        "Title",
        "Status",
        "Created",
        "(UTC)",
        "Updated",
        "(UTC)",
        "Step",
    ]
    assert lines[1].split()[:4] == ["inc-empty", "(untitled)", "open", "2026-11-28"]
    assert lines[1].split()[-1] == "A"
    assert "inc-2026-11-28-p99" not in out  # closed: only with --all
    assert lines[2].split() == ["inc-broken", "UNREADABLE"]
    assert "Cannot read the incident file" in lines[3]
    assert str(state / "inc-broken.json") in lines[3]


def test_list_all_json(state: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--all", "--json", "--state-dir", str(state)]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in rows] == ["inc-2026-11-28-p99", "inc-empty", "inc-broken"]
    full = rows[0]
    assert full == {
        "id": "inc-2026-11-28-p99",
        "path": str(state / "inc-2026-11-28-p99.json"),
        "title": "qwen2.5-72b P99 latency 180→620 ms at the evening peak",
        "status": "closed",
        "created_at": "2026-11-28T12:10:00Z",
        "updated_at": "2026-11-28T13:35:00Z",
        "current_step": "I",
        "error": None,
        "drill": None,
    }
    assert rows[2]["status"] is None and rows[2]["error"]


def test_list_empty_state_dir_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--state-dir", str(tmp_path / "none"), "--lang", "zh"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "没有事故记录" in captured.err


def test_export_to_stdout_is_markdown_in_the_language_the_incident_was_opened_in(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert full_incident().lang == "zh"
    assert main(["export", "inc-2026-11-28-p99", "--state-dir", str(state)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# 事故：qwen2.5-72b P99 latency 180→620 ms")
    assert out == render(full_incident(), "zh", "md")
    # An incident opened in English (the TUI under LANG=C.UTF-8) exports in English,
    # unless --lang names another language.
    store = IncidentStore(state)
    store.save(full_incident().model_copy(update={"id": "inc-en", "lang": "en"}))
    store.release_all()
    assert main(["export", "inc-en", "--state-dir", str(state)]) == 0
    assert capsys.readouterr().out.startswith("# Incident: qwen2.5-72b")
    assert main(["export", "inc-en", "--lang", "zh", "--state-dir", str(state)]) == 0
    assert capsys.readouterr().out.startswith("# 事故：")


def test_export_latest_english_json(state: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = IncidentStore(state)
    newer = full_incident().model_copy(update={"id": "inc-newer"})
    newer.updated_at = newer.updated_at + timedelta(days=1)
    store.save(newer)
    store.release_all()
    assert (
        main(["export", "latest", "--lang", "en", "--format", "json", "--state-dir", str(state)])
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert doc["record"]["id"] == "inc-newer"
    assert doc["lang"] == "en"
    assert doc["labels"]["impact"] == "Impact"


def test_export_to_file_is_atomic_and_private(
    state: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "pm.md"
    target.write_text("previous")
    os.chmod(target, 0o644)
    argv = ["export", "inc-empty", "-o", str(target), "--lang", "en", "--state-dir", str(state)]
    # a draft edited by hand is not lost to a second export
    assert main(argv) == 2
    assert "exists: not overwritten (add --force" in capsys.readouterr().err
    assert target.read_text() == "previous"
    # nor is a mistyped directory created
    assert main([*argv[:3], str(tmp_path / "nodir" / "pm.md"), *argv[4:]]) == 2
    assert "no directory" in capsys.readouterr().err and not (tmp_path / "nodir").exists()
    assert main([*argv, "--force"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert str(target) in captured.err
    assert target.read_text(encoding="utf-8") == render(empty_incident(), "en", "md")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_export_errors(state: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "inc-missing", "--state-dir", str(state), "--lang", "en"]) == 1
    assert "No incident inc-missing" in capsys.readouterr().err
    assert main(["export", "inc-broken", "--state-dir", str(state), "--lang", "en"]) == 1
    assert "move it aside" in capsys.readouterr().err
    assert main(["export", "../etc", "--state-dir", str(state)]) == 2
    assert main(["export", "latest", "--state-dir", str(state / "void"), "--lang", "en"]) == 1
    assert "No incident to export" in capsys.readouterr().err


def test_export_clipboard_without_terminal_fails_clearly(state: Path) -> None:
    # A child started in a new session has no controlling terminal (as under cron or CI).
    exe = _console_script()
    proc = subprocess.run(
        [exe, "export", "inc-empty", "--clipboard", "--lang", "en", "--state-dir", str(state)],
        capture_output=True,
        text=True,
        env=_env(state),
        start_new_session=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert "Cannot copy to the clipboard: /dev/tty" in proc.stderr


def _console_script() -> str:
    exe = shutil.which("cockpit", path=str(Path(sys.executable).parent))
    assert exe, "the cockpit console script is not installed next to this interpreter"
    return exe


def _env(state: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ENV_KEYS}
    env["COCKPIT_STATE_DIR"] = str(state)
    env["COCKPIT_CONFIG"] = str(state.parent / "no-config.toml")
    return env


def test_console_script_list_and_export(state: Path, tmp_path: Path) -> None:
    exe = _console_script()
    env = _env(state)
    listed = subprocess.run(
        [exe, "list", "--all", "--json"], capture_output=True, text=True, env=env, timeout=60
    )
    assert listed.returncode == 0, listed.stderr
    assert {r["id"] for r in json.loads(listed.stdout)} == {
        "inc-2026-11-28-p99",
        "inc-empty",
        "inc-broken",
    }
    out = tmp_path / "export.json"
    exported = subprocess.run(
        [exe, "export", "inc-2026-11-28-p99", "--format", "json", "-o", str(out)],
        capture_output=True,
        text=True,
        env=dict(env, TZ="UTC"),
        timeout=60,
    )
    assert exported.returncode == 0, exported.stderr
    assert out.read_text(encoding="utf-8") == render(full_incident(), "zh", "json", UTC)
    assert stat.S_IMODE(out.stat().st_mode) == 0o600


def test_export_by_path_reads_a_copied_file(
    state: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "copy.json"
    copy.write_bytes((state / "inc-empty.json").read_bytes())
    assert main(["export", str(copy), "--lang", "en", "--state-dir", str(tmp_path / "other")]) == 0
    assert capsys.readouterr().out.startswith("# Incident: (not filled)")
    assert isinstance(IncidentStore.load_path(copy), Incident)


def test_common_options_before_the_command_name_are_kept(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--state-dir", str(state), "--lang", "en", "list", "--all"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ID ")
    assert "inc-2026-11-28-p99" in out
    assert main(["--lang", "en", "--state-dir", str(state), "export", "inc-empty"]) == 0
    assert capsys.readouterr().out.startswith("# Incident: (not filled)")


def test_export_language_from_the_environment(
    state: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COCKPIT_LANG", "en")
    assert main(["export", "inc-empty", "--state-dir", str(state)]) == 0
    assert capsys.readouterr().out.startswith("# Incident:")
    assert main(["export", "inc-empty", "--lang", "zh", "--state-dir", str(state)]) == 0
    assert capsys.readouterr().out.startswith("# 事故：")


def test_export_write_atomic_creates_private_directory(tmp_path: Path) -> None:
    from cockpit.store import write_atomic

    path = write_atomic(tmp_path / "exports" / "inc.zh.md", "# 事故：x\n")
    assert path.read_text(encoding="utf-8") == "# 事故：x\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


# -- `cockpit record`: what each plan and the final line say --------------------------


def _record(tmp_path: Path, url: str, *extra: str, lang: str = "en") -> list[str]:
    out = tmp_path / f"rec-{lang}-{len(list(tmp_path.glob('rec-*')))}.jsonl.gz"
    return [
        "record",
        "-o",
        str(out),
        "--prometheus-url",
        url,
        "--namespace",
        "llm-serving",
        "--at",
        "2026-11-27T12:55Z",
        "--window",
        "30m",
        "--plan",
        "metric_families",
        "--lang",
        lang,
        "--state-dir",
        str(tmp_path / "state"),
        *extra,
    ]


def _plan_line(printed: str) -> str:
    (line,) = [ln for ln in printed.splitlines() if ln.startswith("  plan metric_families")]
    return line


@pytest.fixture
def record_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key in ENV_KEYS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("COCKPIT_CONFIG", str(tmp_path / "no-config.toml"))
    return tmp_path


def test_record_plan_whose_every_call_failed_is_not_done(
    record_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _record(record_env, closed_port_url())
    assert main(args) == 1
    got = capsys.readouterr()
    line = _plan_line(got.out)
    assert "done" not in line
    assert "every call FAILED" in line and "calls: 0 recorded, 1 failed" in line
    assert "no call succeeded" in got.err and "(failed calls: 1)" in got.err
    assert open_replay(args[2]).call_count == 1  # the failure is in the bundle, as said
    assert main(_record(record_env, closed_port_url(), lang="zh")) == 1
    got = capsys.readouterr()
    assert "所有调用都失败" in got.out and "录下 0 次调用，失败 1 次" in got.out
    assert "失败调用：1 次" in got.err


def test_record_plan_counts_recorded_and_failed_calls(
    record_env: Path, worked_example_prom: PromServer, capsys: pytest.CaptureFixture[str]
) -> None:
    with FaultProxy(worked_example_prom.url) as proxy:
        proxy.add(Fault(path="/api/v1/query_range", query="kube_node_labels", status=400))
        args = _record(record_env, proxy.url)
        rc = main(args)
    got = capsys.readouterr()
    assert rc == 0, got.out + got.err
    line = _plan_line(got.out)
    m = re.search(r"done with failures \(\d+\.\d s\); calls: (\d+) recorded, 2 failed$", line)
    assert m, line
    replay = open_replay(args[2])
    assert replay.call_count == int(m.group(1)) + 2  # both windows of kube_node_labels
    assert f"wrote {args[2]}" in got.out


def test_record_after_a_hang_says_nothing_was_recorded(
    record_env: Path, worked_example_prom: PromServer, capsys: pytest.CaptureFixture[str]
) -> None:
    with FaultProxy(worked_example_prom.url) as proxy:
        proxy.add(Fault(mode="hang"))
        args = _record(record_env, proxy.url, "--timeout", "1")
        rc = main(args)
    got = capsys.readouterr()
    assert rc == 1
    line = _plan_line(got.out)
    assert "FAILED" in line and "did not finish within 1 s" in line
    assert line.endswith("calls: 0 recorded, 0 failed, 1 unanswered"), line
    assert "holds the failures" not in got.err and "no call succeeded" not in got.err
    assert "nothing was recorded" in got.err and "holds no call" in got.err
    assert "Review offline" not in got.out
    assert open_replay(args[2]).call_count == 0


def test_export_latest_says_which_incident_and_that_others_are_open(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = IncidentStore(tmp_path)
    older = empty_incident()
    older.id, older.title = "inc-older000", "GPU node 7 throttles"
    newer = empty_incident()
    newer.id, newer.title = "inc-newer000", "P99 up for qwen"
    newer.updated_at = older.updated_at + timedelta(minutes=5)
    closed = empty_incident()
    closed.id, closed.status = "inc-closed00", IncidentStatus.CLOSED
    closed.updated_at = older.updated_at - timedelta(minutes=5)
    for inc in (older, newer, closed):
        store.save(inc)
    assert main(["export", "latest", "--state-dir", str(tmp_path), "--lang", "en"]) == 0
    err = capsys.readouterr().err
    assert "incident inc-newer000 (P99 up for qwen, open" in err
    assert "1 other incident is open: inc-older000." in err and "inc-closed00" not in err
    store.save(older.model_copy(update={"status": IncidentStatus.CLOSED}))
    assert main(["export", "latest", "--state-dir", str(tmp_path), "--lang", "zh"]) == 0
    err = capsys.readouterr().err
    assert "导出最近更新的事故 inc-newer000" in err and "未关闭" not in err
