"""Holds an incident's write lock in a separate process (for the lock contention test).

Usage: ``lock_holder.py STATE_DIR INCIDENT_ID``. Saves the incident through the real
session (which takes the lock), prints ``locked PID``, then waits for a line on stdin
and exits (the kernel releases the lock with the process).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from cockpit.incident import Incident
from cockpit.session import IncidentSession
from cockpit.store import IncidentStore


def main() -> int:
    store = IncidentStore(Path(sys.argv[1]))
    session = IncidentSession(store, Incident(id=sys.argv[2], title="held"))
    session.set_text("impact", "written by the holder")
    print(f"locked {os.getpid()}", flush=True)
    sys.stdin.readline()
    return 0


if __name__ == "__main__":
    sys.exit(main())
