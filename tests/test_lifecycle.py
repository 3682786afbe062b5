"""SIGHUP (ssh drop) and SIGTERM: the guard saves the session, including pending input,
releases the write lock and exits with 128 + signum."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from cockpit.incident import Incident
from cockpit.lifecycle import ExitGuard
from cockpit.session import IncidentSession
from cockpit.store import IncidentStore

HELPERS = Path(__file__).parent / "helpers"


@pytest.mark.parametrize("writer", ["sync", "background"])
@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGTERM])
def test_signal_saves_pending_change_and_exits_cleanly(
    tmp_path: Path, sig: int, writer: str
) -> None:
    root = tmp_path / "state"
    proc = subprocess.Popen(
        [sys.executable, str(HELPERS / "signal_target.py"), str(root), "inc-sig", writer],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("ready "), line + (proc.stderr.read() if proc.stderr else "")
        before = IncidentStore(root).load("inc-sig")
        assert before.impact == "saved edit"
        assert before.symptoms == ""  # the pending edit is not on disk yet
        proc.send_signal(sig)
        assert proc.wait(timeout=20) == 128 + sig
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    after = IncidentStore(root).load("inc-sig")
    assert after.impact == "saved edit"
    assert after.symptoms == "typed but not yet committed"
    assert after.updated_at >= before.updated_at
    # The lock went with the process: another writer can take the incident at once.
    other = IncidentStore(root)
    other.save(after)
    assert other.holds("inc-sig")


def test_guard_with_app_exit_callback_saves_then_calls_back(tmp_path: Path) -> None:
    """The Textual app passes a callback instead of letting SystemExit unwind the loop."""
    store = IncidentStore(tmp_path / "state")
    session = IncidentSession(store, Incident(id="inc-app"))
    session.save()
    statuses: list[int] = []
    guard = ExitGuard(lambda: session, exit_callback=statuses.append)
    guard.add_flusher(lambda: setattr(session.incident, "impact", "pending"))
    previous = signal.getsignal(signal.SIGTERM)
    with guard:
        os.kill(os.getpid(), signal.SIGTERM)
    assert signal.getsignal(signal.SIGTERM) == previous
    assert statuses == [128 + signal.SIGTERM]
    assert guard.saved and guard.received == signal.SIGTERM
    assert IncidentStore(tmp_path / "state").load("inc-app").impact == "pending"
    assert not store.holds("inc-app")


def test_guard_reports_a_failed_save_and_still_exits(tmp_path: Path) -> None:
    root = tmp_path / "state"
    root.mkdir(mode=0o700)
    (root / "inc-bad.json").write_text("{broken")
    session = IncidentSession(IncidentStore(root), Incident(id="inc-bad"))
    messages: list[str] = []
    statuses: list[int] = []
    guard = ExitGuard(lambda: session, exit_callback=statuses.append, log=messages.append)
    with guard:
        os.kill(os.getpid(), signal.SIGHUP)
    assert statuses == [128 + signal.SIGHUP]
    assert not guard.saved
    assert guard.last_error is not None
    assert messages and "could not save" in messages[0]
    assert (root / "inc-bad.json").read_text() == "{broken"


def test_guard_without_session_exits_with_system_exit() -> None:
    guard = ExitGuard(lambda: None)
    with guard, pytest.raises(SystemExit) as info:
        os.kill(os.getpid(), signal.SIGTERM)
    assert info.value.code == 128 + signal.SIGTERM


STUCK_EXIT = """
import sys, time
from pathlib import Path
from cockpit.incident import Incident
from cockpit.lifecycle import ExitGuard
from cockpit.session import IncidentSession
from cockpit.store import IncidentStore

session = IncidentSession(IncidentStore(Path(sys.argv[1])), Incident(id="inc-stuck"))
session.save()
# An exit callback that never ends the process: a UI shutdown stuck on a terminal.
ExitGuard(lambda: session, exit_callback=lambda status: None, exit_deadline_s=0.3).install()
print("ready", flush=True)
while True:
    time.sleep(0.05)
"""


def test_a_stuck_exit_is_ended_after_the_save_and_the_lock_release(tmp_path: Path) -> None:
    root = tmp_path / "state"
    proc = subprocess.Popen(
        [sys.executable, "-c", STUCK_EXIT, str(root)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    before = IncidentStore.load_path(root / "inc-stuck.json").updated_at
    proc.send_signal(signal.SIGTERM)
    try:
        rc = proc.wait(timeout=2)  # a bound on waiting; the deadline is 0.3 s
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert rc == 128 + signal.SIGTERM
    assert IncidentStore.load_path(root / "inc-stuck.json").updated_at > before
    store = IncidentStore(root)
    store.acquire("inc-stuck")
    assert store.holds("inc-stuck")
