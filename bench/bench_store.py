"""Incident store durability and cost.

1,000 SIGKILLs of writers editing an incident through the real session (the crash test's
invariant checked after each); :data:`HANGUPS` ssh drops of the real TUI in a pseudo-terminal
whose master is closed (the hangup test's checks after each: exit status, record saved on
the hangup, lock free); then the latency of one durable save (temp file, fsync,
rename, directory fsync, lock and overwrite checks) against a bare ``os.replace`` write of
the same bytes (temp file, write, rename; no fsync), measured in the same run.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cockpit.incident import Incident
from cockpit.session import IncidentSession
from cockpit.store import IncidentStore
from tests.helpers.crash_client import kill_run
from tests.helpers.hangup import EXIT_BOUND_S, hangup
from tests.helpers.incident_writer import apply_edit

KILLS = 1000
HANGUPS = 20
SAVES = 300


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _bare_replace(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.bare")
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def main() -> list[str]:
    lines: list[str] = []
    with tempfile.TemporaryDirectory() as d:
        report = kill_run(Path(d) / "kill", KILLS, seed=7)
        if report.problems:
            raise AssertionError(f"{len(report.problems)} problems: {report.problems[:3]}")
        lines.append(
            f"kills: {report.kills} SIGKILLs in {report.seconds:.1f} s "
            f"({report.kills / report.seconds:.0f} kills/s), {report.acked} acknowledged "
            f"edits all present, {report.killed_before_first_ack} kills before the first ack"
        )
        in_loop = [ns / 1e6 for ns in report.save_ns]
        lines.append(
            f"session edit+save inside the kill loop: p50 {_pct(in_loop, 0.5):.2f} ms, "
            f"p99 {_pct(in_loop, 0.99):.2f} ms"
        )

        drops = [hangup(Path(d) / f"hup{n}" / "state") for n in range(HANGUPS)]
        exited = [h for h in drops if h.status == 129]
        gone_ms = [h.seconds * 1e3 for h in exited]
        lines.append(
            f"hangups: {HANGUPS} ssh drops (pty master closed), {len(exited)} exited with "
            f"status 129, {sum(h.saved for h in drops)} saved the record, "
            f"{sum(h.lock_free for h in drops)} left the lock free, "
            f"{HANGUPS - len(exited)} hung past {EXIT_BOUND_S:.0f} s"
        )
        if gone_ms:
            lines.append(
                f"hangup to exit: p50 {_pct(gone_ms, 0.5):.0f} ms, max {max(gone_ms):.0f} ms "
                f"({max(gone_ms) / (EXIT_BOUND_S * 1e3):.2f}x of the {EXIT_BOUND_S:.0f} s bound)"
            )

        root = Path(d) / "lat"
        store = IncidentStore(root)
        session = IncidentSession(store, Incident(id="bench", title="bench"))
        for n in range(120):  # a realistically filled record (~120 edits)
            apply_edit(session, n)
        incident = session.incident
        data = incident.model_dump_json(indent=1).encode()
        bare_path = root / "bare.json"
        durable: list[float] = []
        bare: list[float] = []
        for _ in range(SAVES):
            t0 = time.perf_counter()
            store.save(incident)
            durable.append((time.perf_counter() - t0) * 1e3)
            t0 = time.perf_counter()
            _bare_replace(bare_path, data)
            bare.append((time.perf_counter() - t0) * 1e3)
        p50d, p99d = _pct(durable, 0.5), _pct(durable, 0.99)
        p50b, p99b = _pct(bare, 0.5), _pct(bare, 0.99)
        lines.append(
            f"save of a {len(data) / 1024:.0f} KiB record: p50 {p50d:.2f} ms, p99 {p99d:.2f} ms; "
            f"bare os.replace of the same bytes: p50 {p50b:.3f} ms, p99 {p99b:.3f} ms"
        )
        lines.append(
            f"ratio durable/bare: p50 {p50d / p50b:.1f}x, p99 {p99d / p99b:.1f}x "
            f"(mean {statistics.fmean(durable):.2f} ms vs {statistics.fmean(bare):.3f} ms)"
        )
    return lines


if __name__ == "__main__":
    for line in main():
        print(line)
