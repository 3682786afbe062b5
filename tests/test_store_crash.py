"""Crash test: writers editing an incident through the real session are killed with SIGKILL
at random points; after every kill the file loads and holds every acknowledged edit."""

from __future__ import annotations

import os
from pathlib import Path

from cockpit.store import IncidentStore
from tests.helpers.crash_client import kill_run

KILLS = 240


def test_sigkill_at_random_points_never_loses_an_acknowledged_edit(tmp_path: Path) -> None:
    state = tmp_path / "state"
    report = kill_run(state, KILLS, seed=20261129)

    assert report.problems == []
    assert report.kills == KILLS
    # Kills landed both before any acknowledgement (during load / first save) and after.
    assert report.killed_before_first_ack > 0
    assert report.acked > KILLS
    # Every surviving file is complete and private; the next writer of an incident removes
    # the temp file a killed one left, so at most the last writer's temp file remains.
    store = IncidentStore(state)
    listed = store.list()
    assert listed and all(not isinstance(inc, Exception) for _, inc in listed)
    for path, _ in listed:
        assert os.stat(path).st_mode & 0o777 == 0o600
    assert os.stat(state).st_mode & 0o777 == 0o700
    for path, _ in listed:
        temps = list(state.glob(f".{path.name}.*.tmp"))
        assert len(temps) <= 1, temps
