"""A headless process with the SIGHUP/SIGTERM guard installed (for the lifecycle tests).

Usage: ``signal_target.py STATE_DIR INCIDENT_ID [background]``. Applies one edit through the real
session, registers a flusher holding a pending edit (as a half-typed input field would),
prints ``ready PID`` and waits for signals. On SIGHUP/SIGTERM the guard flushes, saves and
exits with 128 + signum.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from cockpit.incident import Incident
from cockpit.lifecycle import install_exit_handlers
from cockpit.session import IncidentSession
from cockpit.store import IncidentStore


def main() -> int:
    store = IncidentStore(Path(sys.argv[1]))
    background = sys.argv[3:] == ["background"]
    session = IncidentSession(
        store, Incident(id=sys.argv[2], title="signal target"), background=background
    )
    guard = install_exit_handlers(lambda: session)
    session.set_text("impact", "saved edit")
    if not session.flush():
        return 1

    def flush() -> None:
        # Pending input that was never saved: only the guard puts it in the record.
        session.incident.symptoms = "typed but not yet committed"

    guard.add_flusher(flush)
    print(f"ready {os.getpid()}", flush=True)
    while True:
        signal.pause()


if __name__ == "__main__":
    sys.exit(main())
