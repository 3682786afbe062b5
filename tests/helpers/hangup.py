"""Runs the real TUI in a pseudo-terminal and drops it as ssh does: the master side is
closed, the kernel hangs the terminal up and sends SIGHUP.

Shared by ``tests/test_tui_hangup.py`` (10 runs) and ``bench/bench_store.py`` (the
SIGHUP loop).
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from cockpit.store import IncidentStore

EXIT_BOUND_S = 2.0
"""How long a run waits for the process to be gone before it counts as hung."""


def drain(master: int, seconds: float) -> bytes:
    """What the terminal shows within ``seconds`` (until it closes)."""
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


def _plain(screen: bytes) -> bytes:
    return re.sub(rb"\x1b\[[0-9;?<>]*[A-Za-z]", b"", screen)


def _settle(master: int, quiet_s: float = 0.6, limit_s: float = 20.0) -> bytes:
    """Read until the screen has been still for ``quiet_s`` (the app is idle)."""
    out = b""
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        chunk = drain(master, quiet_s)
        out += chunk
        if not chunk:
            break
    return out


def _exited_within(pid: int, seconds: float) -> int | None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.01)
    return None


def spawn_tui(exe: str, state: Path) -> tuple[int, int]:
    """Start ``cockpit --lang en`` on a new pseudo-terminal, with state dir ``state`` and
    no configuration; returns its PID and the master side."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COCKPIT_")}
    env.update(
        TERM="xterm-256color",
        COCKPIT_STATE_DIR=str(state),
        COCKPIT_CONFIG=str(state.parent / "none.toml"),
    )
    env.pop("TMUX", None)
    pid, master = pty.fork()
    if pid == 0:
        try:
            os.execve(exe, [exe, "--lang", "en"], env)
        finally:
            os._exit(127)
    return pid, master


def _hangup_run(exe: str, state: Path) -> tuple[int | None, float, str]:
    """Start the TUI on a fresh pty, let it settle, close the master; returns the exit
    status (``None`` when still running after the bound), the seconds it took and the
    record's ``updated_at`` before the hangup."""
    pid, master = spawn_tui(exe, state)
    try:
        deadline = time.monotonic() + 60
        screen = b""
        while b"Impact" not in _plain(screen) and time.monotonic() < deadline:
            screen += drain(master, 0.1)
        assert b"Impact" in _plain(screen), "step A never came up"
        _settle(master)
        before = json.loads(next(state.glob("inc-*.json")).read_text())["updated_at"]
    except BaseException:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(master)
        raise
    os.close(master)  # the ssh connection drops: the terminal is gone
    t0 = time.monotonic()
    status = _exited_within(pid, EXIT_BOUND_S)
    took = time.monotonic() - t0
    if status is None:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    return status, took, before


@dataclass(frozen=True)
class Hangup:
    """One run: ``status`` is the exit status (``None``: still running after
    :data:`EXIT_BOUND_S`, then killed), ``seconds`` from the hangup to the exit,
    ``saved`` whether the record was written on the hangup, ``lock_free`` whether another
    store could take the incident's lock at once afterwards."""

    status: int | None
    seconds: float
    saved: bool
    lock_free: bool


def cockpit_exe() -> str:
    """The ``cockpit`` console script of the running interpreter's environment."""
    exe = shutil.which("cockpit", path=str(Path(sys.executable).parent))
    assert exe, "cockpit is not installed next to this interpreter"
    return exe


def hangup(state: Path) -> Hangup:
    """Start the TUI on state dir ``state``, drop its terminal, and judge the outcome."""
    status, took, before = _hangup_run(cockpit_exe(), state)
    files = list(state.glob("inc-*.json"))
    assert len(files) == 1, files
    after = IncidentStore.load_path(files[0])
    store = IncidentStore(state)
    try:
        store.acquire(after.id)
        lock_free = True
    except OSError:
        lock_free = False
    store.release_all()
    return Hangup(status, took, after.updated_at > datetime.fromisoformat(before), lock_free)
