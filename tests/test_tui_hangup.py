"""An ssh drop, for real: the TUI runs in a pseudo-terminal whose master side is closed
(the kernel hangs the terminal up and sends SIGHUP). Every run must save the record,
release the incident's lock and be gone (typed input reaching the record on SIGHUP is
``test_tui_signals.py``); the 2 s is a bound on waiting, not a speed target (speed lives
in ``make bench``)."""

from __future__ import annotations

import signal
from pathlib import Path

from tests.helpers.hangup import hangup

RUNS = 10


def test_ten_hangups_with_a_dead_terminal_all_save_release_and_exit(tmp_path: Path) -> None:
    outcomes = [hangup(tmp_path / f"run{n}" / "state") for n in range(RUNS)]
    assert all(o.status == 128 + signal.SIGHUP for o in outcomes), outcomes
    assert all(o.saved and o.lock_free for o in outcomes), outcomes
