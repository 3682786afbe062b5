"""``python -m cockpit.scenarios.serve``: a real Prometheus serving a scenario, with the
cockpit commands to investigate it printed, for trying the live mode."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from cockpit.scenarios.serve import main


def test_list_names_every_scenario_with_its_story(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["--list"]) == 0
    out = capsys.readouterr().out
    assert "thermal_replica: vLLM behind ingress-nginx: the GPU of replica 2 throttles" in out
    assert "worked_example: a vLLM service of qwen2.5-72b-instruct" in out


def test_unknown_scenario_is_a_usage_error(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["no_such"]) == 2
    assert "unknown scenario 'no_such'" in capsys.readouterr().err


def test_serves_and_the_printed_analyze_command_works() -> None:
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
        lines = [proc.stdout.readline() for _ in range(3)]
        assert lines[0].startswith("thermal_replica served at http://127.0.0.1:"), lines
        command = lines[2].split()
        assert command[:2] == ["cockpit", "analyze"] and "--deployment" in command
        out = subprocess.run(
            [str(Path(sys.executable).with_name("cockpit")), *command[1:], "--json"],
            capture_output=True,
            text=True,
            timeout=120,
            env={"PATH": "/usr/bin:/bin", "COCKPIT_CONFIG": "/nonexistent", "LANG": "C.UTF-8"},
        )
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["blast_radius"]["scope"] == "single_gpu"
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
