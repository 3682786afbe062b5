"""Drives ``incident_writer.py`` and kills its writers with SIGKILL at random points.

Shared by ``tests/test_store_crash.py`` (≥ 200 kills) and ``bench/bench_store.py``
(1,000 kills).
"""

from __future__ import annotations

import os
import random
import selectors
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from cockpit.store import CorruptIncident, IncidentStore
from tests.helpers.incident_writer import check_acknowledged

WRITER = Path(__file__).with_name("incident_writer.py")


@dataclass
class KillReport:
    """What a kill run did.

    Attributes:
        kills: Writers killed with SIGKILL.
        acked: Edits acknowledged in total.
        seconds: Wall time of the kill loop.
        save_ns: Duration of each acknowledged session call (one save each).
        problems: Invariant violations found after kills (must be empty).
        killed_before_first_ack: Kills that landed before the writer acknowledged anything.
    """

    kills: int = 0
    acked: int = 0
    seconds: float = 0.0
    save_ns: list[int] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    killed_before_first_ack: int = 0


class WriterServer:
    """The fork server subprocess, with line reads under a timeout."""

    def __init__(self) -> None:
        root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.proc = subprocess.Popen(
            [sys.executable, str(WRITER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            bufsize=0,
        )
        assert self.proc.stdout is not None and self.proc.stdin is not None
        self._out = self.proc.stdout
        self._in = self.proc.stdin
        self._sel = selectors.DefaultSelector()
        self._sel.register(self._out, selectors.EVENT_READ)
        self._buf = b""

    def send(self, line: str) -> None:
        self._in.write((line + "\n").encode())
        self._in.flush()

    def line(self, timeout: float = 10.0) -> str:
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not self._sel.select(left):
                raise TimeoutError(f"no line from the writer within {timeout} s")
            chunk = os.read(self._out.fileno(), 65536)
            if not chunk:
                raise EOFError("writer server exited")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\n", 1)
        return raw.decode()

    def close(self) -> None:
        try:
            self.send("quit")
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        self._sel.close()
        self._out.close()
        self._in.close()


def kill_run(
    state_dir: Path,
    kills: int,
    *,
    seed: int = 0,
    max_acks_before_kill: int = 6,
    max_delay_s: float = 0.004,
    kills_per_incident: int = 25,
) -> KillReport:
    """Start writers and SIGKILL each at a random point; check the file after each kill.

    Each round waits for a random number of acknowledgements (0 to
    ``max_acks_before_kill``; 0 kills during load or the first save), sleeps a random
    0..``max_delay_s`` and sends SIGKILL. Then it reaps the writer, collects every ack it
    wrote before dying, loads the file and checks it with
    :func:`~tests.helpers.incident_writer.check_acknowledged`. Incidents rotate every
    ``kills_per_incident`` kills so files stay a realistic size.
    """
    rng = random.Random(seed)
    report = KillReport()
    server = WriterServer()
    store = IncidentStore(state_dir)
    acked: dict[str, list[int]] = {}
    t0 = time.perf_counter()
    try:
        for k in range(kills):
            incident_id = f"crash-{seed}-{k // kills_per_incident}"
            mine = acked.setdefault(incident_id, [])
            server.send(f"run {state_dir} {incident_id} 1000000")
            first = server.line()
            if not first.startswith("pid "):
                raise RuntimeError(f"writer did not start: {first}")
            pid = int(first.split()[1])
            want = rng.randint(0, max_acks_before_kill)
            got = 0
            while got < want:
                line = server.line()
                if line.startswith("error"):
                    raise RuntimeError(f"writer failed: {line}")
                _, seq, ns = line.split()
                mine.append(int(seq))
                report.save_ns.append(int(ns))
                got += 1
            if rng.random() < 0.8:
                time.sleep(rng.uniform(0, max_delay_s))
            os.kill(pid, signal.SIGKILL)
            if want == 0:
                report.killed_before_first_ack += 1
            server.send(f"reap {pid}")
            while True:
                line = server.line()
                if line.startswith("dead "):
                    status = int(line.split()[2])
                    if not (os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL):
                        raise RuntimeError(f"writer {pid} was not killed by SIGKILL: {line}")
                    break
                if line.startswith("ack "):
                    _, seq, ns = line.split()
                    mine.append(int(seq))
                    report.save_ns.append(int(ns))
                elif line.startswith("error"):
                    raise RuntimeError(f"writer failed: {line}")
            report.kills += 1
            path = store.path_for(incident_id)
            if not path.exists():
                if mine:
                    report.problems.append(f"kill {k}: {path} missing after acks {mine}")
                continue
            try:
                incident = store.load_path(path)
            except CorruptIncident as exc:
                report.problems.append(f"kill {k}: {exc}")
                continue
            report.problems.extend(f"kill {k}: {p}" for p in check_acknowledged(incident, mine))
    finally:
        report.seconds = time.perf_counter() - t0
        server.close()
    report.acked = sum(len(v) for v in acked.values())
    return report
