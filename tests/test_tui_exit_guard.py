"""The TUI on SIGHUP (an ssh drop): exits promptly, restores the terminal and releases the
incident's write lock so ``cockpit --resume`` can take it at once. (Saving typed input is
covered by ``test_tui_signals.py``.)"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import time
from datetime import datetime
from pathlib import Path

from cockpit.store import IncidentStore
from tests.helpers.hangup import drain, spawn_tui


def test_sighup_exit_restores_terminal_and_releases_lock(tmp_path: Path) -> None:
    exe = shutil.which("cockpit", path=str(Path(sys.executable).parent))
    assert exe
    state = tmp_path / "state"
    pid, master = spawn_tui(exe, state)
    try:
        deadline = time.monotonic() + 60
        screen = b""
        while not list(state.glob("*.json")) and time.monotonic() < deadline:
            screen += drain(master, 0.2)
        files = list(state.glob("*.json"))
        assert files, screen[-2000:]
        screen += drain(master, 1.0)  # let the first frame finish
        before = datetime.fromisoformat(json.loads(files[0].read_text())["updated_at"])

        os.kill(pid, signal.SIGHUP)
        t0 = time.monotonic()
        status = None
        while time.monotonic() - t0 < 30:
            screen += drain(master, 0.1)
            done, st = os.waitpid(pid, os.WNOHANG)
            if done:
                status = st
                break
        assert status is not None, "the TUI did not exit after SIGHUP"
        assert os.waitstatus_to_exitcode(status) == 128 + signal.SIGHUP
        # what it wrote just before exiting may still wait in the terminal to be read
        screen += drain(master, 1.0)
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
