"""``python -m cockpit.scenarios.serve``: a real Prometheus serving a scenario, with the
cockpit commands to investigate it printed, for trying the live mode."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cockpit.scenarios.serve import main


def test_list_names_every_scenario_with_its_story(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["--list"]) == 0
    out = capsys.readouterr().out
    assert "thermal_replica: vLLM behind ingress-nginx: the GPU of replica 2 throttles" in out
    assert "worked_example: a vLLM service of qwen2.5-72b-instruct" in out


def test_unknown_scenario_is_a_usage_error(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["no_such"]) == 2
    assert "unknown scenario 'no_such'" in capsys.readouterr().err


def _json_of(command: list[str]) -> subprocess.CompletedProcess[str]:
    """Run a printed ``cockpit …`` command with ``--json``, without a config file."""
    return subprocess.run(
        [str(Path(sys.executable).with_name("cockpit")), *command[1:], "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "COCKPIT_CONFIG": "/nonexistent", "LANG": "C.UTF-8"},
    )


def test_serves_and_the_printed_analyze_and_changes_commands_work() -> None:
    """The server stays up until interrupted, and the analyze command it prints finds the
    scenario's diagnosis (one throttling GPU) against it."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "cockpit.scenarios.serve", "thermal_replica"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(4)]
        assert lines[0].startswith("thermal_replica served at http://127.0.0.1:"), lines
        command = lines[2].split()
        assert command[:2] == ["cockpit", "analyze"] and "--deployment" in command
        out = _json_of(command)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["blast_radius"]["scope"] == "single_gpu"
        changes = lines[3].split()
        assert changes[:2] == ["cockpit", "changes"] and "--at" in changes
        got = _json_of(changes)
        assert got.returncode == 0, got.stderr
        at = changes[changes.index("--at") + 1].removesuffix("Z")
        assert json.loads(got.stdout)["until"].startswith(at), got.stdout[:300]
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0  # stop: SIGTERM, SIGKILL after 10 s, rm


def _children(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (from /proc)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            out.append(int(entry.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_stop_signal_stops_prometheus_and_removes_the_temp_dir(sig: signal.Signals) -> None:
    """``kill`` (SIGTERM) or a closed terminal (SIGHUP) cleans up like Ctrl-C: no
    Prometheus left listening, no temporary directory left behind."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "cockpit.scenarios.serve", "thermal_replica"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    prom: list[int] = []
    workdir: Path | None = None
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert " served at http://127.0.0.1:" in first, first + proc.stderr.read()
        port = int(first.split("http://127.0.0.1:")[1].split()[0])
        prom = [
            pid
            for pid in _children(proc.pid)
            if b"prometheus" in Path(f"/proc/{pid}/cmdline").read_bytes()
        ]
        assert len(prom) == 1, prom
        cmdline = Path(f"/proc/{prom[0]}/cmdline").read_bytes().split(b"\0")
        (config,) = [a for a in cmdline if a.startswith(b"--config.file=")]
        workdir = Path(os.fsdecode(config.split(b"=", 1)[1])).parent
        assert workdir.name.startswith("cockpit-scenario-") and workdir.is_dir()
        assert _port_open(port)
        proc.send_signal(sig)
        assert proc.wait(timeout=30) == 0, proc.stderr.read()
        deadline = time.monotonic() + 5
        while _alive(prom[0]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(prom[0]), "prometheus outlived serve"
        assert not _port_open(port)
        assert not workdir.exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        for pid in prom:  # never leave a leaked server behind, even when the test fails
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        if workdir is not None and workdir.exists():
            shutil.rmtree(workdir, ignore_errors=True)
