"""The real TUI in a pseudo-terminal: SIGHUP (ssh drop) saves the incident and exits."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import time
from pathlib import Path


def _drain(fd: int, seconds: float) -> bytes:
    out = b""
    end = time.time() + seconds
    while time.time() < end:
        try:
            import select

            r, _, _ = select.select([fd], [], [], 0.1)
            if r:
                out += os.read(fd, 65536)
        except OSError:
            break
    return out


def test_sighup_saves_and_exits(tmp_path):
    state = tmp_path / "state"
    cockpit = str(Path(sys.executable).with_name("cockpit"))
    env = dict(os.environ, COCKPIT_STATE_DIR=str(state), TERM="xterm-256color", COCKPIT_LANG="en")
    env.pop("COCKPIT_PROMETHEUS__URL", None)
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [cockpit, "--namespace", "llm", "--deployment", "vllm"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,
    )
    os.close(slave)
    try:
        deadline = time.time() + 30
        files: list[Path] = []
        while time.time() < deadline and not files:
            _drain(master, 0.3)
            files = list(state.glob("inc-*.json"))
        assert files, "the TUI never created its incident"
        _drain(master, 1.5)
        os.write(master, b"\t")  # focus the title field (the scroll body has focus first)
        _drain(master, 0.5)
        os.write(master, b"Quarter of tenants see 503")
        _drain(master, 1.0)
        proc.send_signal(signal.SIGHUP)
        rc = proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert rc == 128 + signal.SIGHUP
    data = json.loads(files[0].read_text())
    assert data["service"]["namespace"] == "llm"
    assert data["title"] == "Quarter of tenants see 503"
