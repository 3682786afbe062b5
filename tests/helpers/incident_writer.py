"""A process that edits an incident through the real :class:`IncidentSession`, for crash tests.

Run as a script it is a small fork server (so the kill tests do not pay an interpreter
start per kill): it imports cockpit once, then reads commands on stdin, one per line::

    run STATE_DIR INCIDENT_ID MAX_EDITS   fork a writer child; it prints "pid N", then
                                          applies edits, printing "ack SEQ NS" after each
                                          call returns (NS = the call's duration), and
                                          "done" after MAX_EDITS edits
    reap PID                              wait for that child; prints "dead PID STATUS"
    quit                                  exit

Every line is written with one ``os.write`` on the shared stdout pipe (atomic below
PIPE_BUF), and "dead" is written after ``waitpid``, so every ack the child wrote comes
before it. The writer child is the process the test kills with SIGKILL.

Imported as a module it offers :func:`apply_edit` and :func:`check_acknowledged`, the
edit stream and its invariant.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from cockpit.incident import Evidence, Incident
from cockpit.session import IncidentSession
from cockpit.store import IncidentStore

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
KINDS = 6
APPEND_KINDS = frozenset({1, 2, 4, 5})
OVERWRITE_KINDS = frozenset({0, 3})


def apply_edit(session: IncidentSession, n: int) -> None:
    """Apply edit number ``n`` of the stream (its kind is ``n % 6``); saves once."""
    kind = n % KINDS
    if kind == 0:
        session.set_text("impact", f"impact {n}")
    elif kind == 1:
        session.pin(
            Evidence(
                label=f"ev {n}",
                value=str(n),
                unit="ms",
                at=T0 + timedelta(seconds=n),
                query=f'histogram_quantile(0.99, rate(x_bucket{{n="{n}"}}[5m]))',
            )
        )
    elif kind == 2:
        session.add_timeline(T0 + timedelta(seconds=n), f"note {n}")
    elif kind == 3:
        session.set_step_note("C", f"step {n}")
    elif kind == 4:
        session.add_action(f"action {n}", owner="sre", deadline="2026-12-31", verification="v")
    else:
        session.add_hypothesis(f"hypothesis {n}", f"falsifier {n}")


def _num(text: str, prefix: str) -> int | None:
    if text.startswith(prefix):
        tail = text[len(prefix) :]
        if tail.isdigit():
            return int(tail)
    return None


def present(incident: Incident) -> tuple[set[int], dict[int, int]]:
    """Edits visible in ``incident``: (append-kind seqs, {overwrite kind: last seq})."""
    seqs: set[int] = set()
    seqs.update(n for e in incident.evidence if (n := _num(e.label, "ev ")) is not None)
    seqs.update(n for e in incident.timeline if (n := _num(e.text, "note ")) is not None)
    seqs.update(n for a in incident.actions if (n := _num(a.what, "action ")) is not None)
    seqs.update(
        n for h in incident.hypotheses if (n := _num(h.statement, "hypothesis ")) is not None
    )
    last: dict[int, int] = {}
    if (n := _num(incident.impact, "impact ")) is not None:
        last[0] = n
    if (n := _num(incident.step_notes.get("C", ""), "step ")) is not None:
        last[3] = n
    return seqs, last


def next_seq(incident: Incident) -> int:
    """The next edit number to apply to ``incident`` (0 for a fresh one)."""
    seqs, last = present(incident)
    top = max([*seqs, *last.values()], default=-1)
    return top + 1


def check_acknowledged(incident: Incident, acked: list[int]) -> list[str]:
    """Problems with ``incident`` given the acknowledged edit numbers (empty = fine).

    Invariant: the file holds a prefix of the edit stream that includes every
    acknowledged edit (it may hold one more, saved but not yet acknowledged).
    """
    problems: list[str] = []
    seqs, last = present(incident)
    top = next_seq(incident) - 1
    if acked and top < max(acked):
        problems.append(f"file ends at edit {top}, but {max(acked)} was acknowledged")
    for n in range(top + 1):
        kind = n % KINDS
        if kind in APPEND_KINDS and n not in seqs:
            problems.append(f"edit {n} (kind {kind}) missing below the file's last edit {top}")
    for kind in OVERWRITE_KINDS:
        want = max((n for n in range(top + 1) if n % KINDS == kind), default=None)
        if want is not None and last.get(kind) != want:
            problems.append(f"kind {kind}: file holds {last.get(kind)}, expected {want}")
    return problems


def _out(line: str) -> None:
    os.write(1, (line + "\n").encode())


def _writer(state_dir: Path, incident_id: str, max_edits: int) -> None:
    _out(f"pid {os.getpid()}")
    store = IncidentStore(state_dir)
    try:
        incident = store.load(incident_id)
    except FileNotFoundError:
        incident = Incident(id=incident_id, title="crash test")
    session = IncidentSession(store, incident)
    n = next_seq(incident)
    for _ in range(max_edits):
        t0 = time.perf_counter_ns()
        apply_edit(session, n)
        _out(f"ack {n} {time.perf_counter_ns() - t0}")
        n += 1
    _out("done")


def serve() -> int:
    """The fork server loop (see the module docstring)."""
    for raw in sys.stdin:
        parts = raw.split()
        if not parts:
            continue
        if parts[0] == "quit":
            return 0
        if parts[0] == "run":
            pid = os.fork()
            if pid == 0:
                code = 0
                try:
                    _writer(Path(parts[1]), parts[2], int(parts[3]))
                except BaseException as exc:
                    _out(f"error {type(exc).__name__}: {exc}".replace("\n", " "))
                    code = 1
                os._exit(code)
        elif parts[0] == "reap":
            pid = int(parts[1])
            _, status = os.waitpid(pid, 0)
            _out(f"dead {pid} {status}")
    return 0


if __name__ == "__main__":
    sys.exit(serve())
