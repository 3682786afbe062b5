"""Startup and step-jump times of ``cockpit --demo`` against a bare Textual app, same run.

Every program runs in a pseudo-terminal and appends the wall-clock time of a painted frame
to a file (see ``cockpit/ui/frames.py``):

- useful first frame: the first frame in which step A's golden signals carry values from
  the demo bundle, against a bare Textual app that paints a table of the same rows and
  columns (target: ratio <= 1.5);
- loading line: cockpit's first frame ("cockpit — 加载中 / loading…") against the bare app
  painting one line (the time to any sign of life);
- step jump: from the key press that opens step C on the useful step A to C's first
  frame (target: <= 0.1 s, what people perceive as instant), the first visit and a
  return after going back to A.
"""

from __future__ import annotations

import os
import pty
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BARE_LINE = """
import os, time
from textual.app import App
from textual.widgets import Static
class Bare(App):
    def compose(self):
        yield Static("loading")
    def on_mount(self):
        self.call_after_refresh(self.done)
    def done(self):
        open(os.environ["BENCH_FRAME_FILE"], "w").write(repr(time.time()))
        self.exit()
Bare().run()
"""

BARE_TABLE = """
import os, sys, time
from textual.app import App
from textual.widgets import DataTable
rows, cols = int(sys.argv[1]), int(sys.argv[2])
class Bare(App):
    def compose(self):
        yield DataTable()
    def on_mount(self):
        table = self.query_one(DataTable)
        table.add_columns(*[f"column {c}" for c in range(cols)])
        for r in range(rows):
            table.add_row(*[f"{r * cols + c:.4g} ms" for c in range(cols)])
        self.call_after_refresh(self.done)
    def done(self):
        open(os.environ["BENCH_FRAME_FILE"], "w").write(repr(time.time()))
        self.exit()
Bare().run()
"""

RUNS = 7
RATIO_TARGET = 1.5
JUMP_TARGET_S = 0.1


def _spawn(
    argv: list[str], env_extra: dict[str, str], tmp: str
) -> tuple[subprocess.Popen[bytes], int]:
    env = dict(
        os.environ,
        COCKPIT_STATE_DIR=tmp,
        COCKPIT_CONFIG=str(Path(tmp) / "none.toml"),
        TERM="xterm-256color",
        **env_extra,
    )
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=subprocess.DEVNULL, env=env)
    os.close(slave)
    return proc, master


def _drain(master: int, timeout: float) -> bool:
    """Read the terminal output for up to ``timeout`` s; False once the terminal closed."""
    ready, _, _ = select.select([master], [], [], timeout)
    if ready:
        try:
            return bool(os.read(master, 65536))
        except OSError:
            return False
    return True


def _run_to_exit(argv: list[str], env_extra: dict[str, str], marker_env: str) -> tuple[float, str]:
    """Seconds from spawn to the marker's first line, and that line's label."""
    with tempfile.TemporaryDirectory() as tmp:
        marker = Path(tmp) / "frame"
        t0 = time.time()
        proc, master = _spawn(argv, {marker_env: str(marker), **env_extra}, tmp)
        deadline = time.time() + 60
        while proc.poll() is None and time.time() < deadline:
            if not _drain(master, 0.05):
                break
        proc.kill() if proc.poll() is None else None
        proc.wait(timeout=10)
        os.close(master)
        first = marker.read_text().splitlines()[0].split(" ", 1)
        return float(first[0]) - t0, (first[1] if len(first) > 1 else "")


def _lines(path: Path) -> list[tuple[float, str]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        at, _, label = line.partition(" ")
        out.append((float(at), label))
    return out


def _step_jumps(cockpit: list[str]) -> tuple[float, float]:
    """(first visit of C, return to C) key-to-frame seconds, from a useful step A."""
    with tempfile.TemporaryDirectory() as tmp:
        useful, steps = Path(tmp) / "useful", Path(tmp) / "steps"
        proc, master = _spawn(
            cockpit,
            {"COCKPIT_USEFUL_FRAME_FILE": str(useful), "COCKPIT_STEP_FRAME_FILE": str(steps)},
            tmp,
        )
        try:

            def wait_for(path: Path, label: str, after: float) -> float:
                deadline = time.time() + 60
                while time.time() < deadline:
                    _drain(master, 0.02)
                    for at, lab in _lines(path):
                        if (not label or lab.startswith(label)) and at >= after:
                            return at
                raise TimeoutError(f"no {label or 'frame'} in {path.name}")

            wait_for(useful, "", 0)
            time.sleep(0.5)  # let A settle (its other panels, the sparklines)
            jumps = []
            for key, label in (("3", "C"), ("1", "A"), ("3", "C")):
                # Ctrl+G opens the list of steps, the step's number highlights it, and the
                # Enter that goes there is the jump timed.
                os.write(master, b"\x07")
                time.sleep(0.3)
                os.write(master, key.encode())
                time.sleep(0.2)
                pressed = time.time()
                os.write(master, b"\r")
                jumps.append((label, wait_for(steps, label, pressed) - pressed))
                time.sleep(0.5)
            return jumps[0][1], jumps[2][1]
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
            os.close(master)


def main() -> list[str]:
    cockpit = [str(Path(sys.executable).with_name("cockpit")), "--demo"]
    exit_env = {"COCKPIT_FIRST_FRAME_EXIT": "1"}
    useful, first, bare_table, bare_line, shapes = [], [], [], [], set()
    for _ in range(RUNS):
        s, shape = _run_to_exit(cockpit, exit_env, "COCKPIT_USEFUL_FRAME_FILE")
        useful.append(s)
        shapes.add(shape)
        rows, cols = shape.split("x")
        bare = [sys.executable, "-c", BARE_TABLE, rows, cols]
        bare_table.append(_run_to_exit(bare, {}, "BENCH_FRAME_FILE")[0])
        first.append(_run_to_exit(cockpit, exit_env, "COCKPIT_FIRST_FRAME_FILE")[0])
        bare_line.append(_run_to_exit([sys.executable, "-c", BARE_LINE], {}, "BENCH_FRAME_FILE")[0])
    jumps = [_step_jumps(cockpit) for _ in range(3)]
    u, bt = statistics.median(useful), statistics.median(bare_table)
    f, bl = statistics.median(first), statistics.median(bare_line)
    j1 = statistics.median(j[0] for j in jumps)
    j2 = statistics.median(j[1] for j in jumps)
    return [
        f"useful first frame (step A's golden signals with values, {'/'.join(sorted(shapes))} "
        f"rows x columns): cockpit --demo median {u * 1000:.0f} ms, bare Textual table "
        f"{bt * 1000:.0f} ms over {RUNS} runs; ratio {u / bt:.2f}x (target <= {RATIO_TARGET}x)",
        f"loading line (first frame, no data): cockpit --demo median {f * 1000:.0f} ms, bare "
        f"Textual line {bl * 1000:.0f} ms; ratio {f / bl:.2f}x",
        f"step jump A -> C, key to C's first frame: first visit median {j1 * 1000:.0f} ms, "
        f"return {j2 * 1000:.0f} ms over {len(jumps)} runs (target <= {JUMP_TARGET_S * 1000:.0f} ms)",
    ]


if __name__ == "__main__":
    print("\n".join(main()))
