"""The TUI on SIGHUP (an ssh drop): exits promptly, restores the terminal and releases the
incident's write lock so ``cockpit --resume`` can take it at once. (Saving typed input is
covered by ``test_tui_signals.py``.)"""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import signal
import sys
import time
from datetime import datetime
from pathlib import Path

from cockpit.store import IncidentStore


def _drain(master: int, seconds: float) -> bytes:
    out = b""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        ready, _, _ = select.select([master], [], [], 0.05)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
    return out


def test_sighup_exit_restores_terminal_and_releases_lock(tmp_path: Path) -> None:
    exe = shutil.which("cockpit", path=str(Path(sys.executable).parent))
    assert exe
    state = tmp_path / "state"
    env = {k: v for k, v in os.environ.items() if not k.startswith("COCKPIT_")}
    env.update(
        TERM="xterm-256color",
        COCKPIT_STATE_DIR=str(state),
        COCKPIT_CONFIG=str(tmp_path / "none.toml"),
    )
    env.pop("TMUX", None)
    pid, master = pty.fork()
    if pid == 0:
        try:
            os.execve(exe, [exe, "--lang", "en"], env)
        finally:
            os._exit(127)
    try:
        deadline = time.monotonic() + 60
        screen = b""
        while not list(state.glob("*.json")) and time.monotonic() < deadline:
            screen += _drain(master, 0.2)
        files = list(state.glob("*.json"))
        assert files, screen[-2000:]
        screen += _drain(master, 1.0)  # let the first frame finish
        before = datetime.fromisoformat(json.loads(files[0].read_text())["updated_at"])

        os.kill(pid, signal.SIGHUP)
        t0 = time.monotonic()
        status = None
        while time.monotonic() - t0 < 30:
            screen += _drain(master, 0.1)
            done, st = os.waitpid(pid, os.WNOHANG)
            if done:
                status = st
                break
        assert status is not None, "the TUI did not exit after SIGHUP"
        assert os.waitstatus_to_exitcode(status) == 128 + signal.SIGHUP
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(master)
    after = IncidentStore.load_path(files[0])
    assert after.updated_at > before
    # The app restored the terminal (left the alternate screen) and released the lock.
    assert b"\x1b[?1049l" in screen
    store = IncidentStore(state)
    store.save(after)
    assert store.holds(after.id)
