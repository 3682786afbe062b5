"""Time to first frame of ``cockpit --demo`` against a bare Textual app, same run, as a ratio.

Both run in a pseudo-terminal; each writes the wall-clock time of its first painted frame
to a file and exits. Target: ratio ≤ 1.2.
"""

from __future__ import annotations

import os
import pty
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BARE = """
import os, time
from textual.app import App
from textual.widgets import Static
class Bare(App):
    def compose(self):
        yield Static("loading")
    def on_mount(self):
        self.call_after_refresh(self.done)
    def done(self):
        open(os.environ["COCKPIT_FIRST_FRAME_FILE"], "w").write(repr(time.time()))
        self.exit()
Bare().run()
"""

RUNS = 7


def _first_frame(argv: list[str], env_extra: dict[str, str]) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        marker = Path(tmp) / "frame"
        env = dict(
            os.environ,
            COCKPIT_FIRST_FRAME_FILE=str(marker),
            COCKPIT_FIRST_FRAME_EXIT="1",
            COCKPIT_STATE_DIR=tmp,
            TERM="xterm-256color",
            **env_extra,
        )
        master, slave = pty.openpty()
        t0 = time.time()
        proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=subprocess.DEVNULL, env=env)
        os.close(slave)
        deadline = time.time() + 30
        while proc.poll() is None and time.time() < deadline:
            try:
                os.read(master, 65536)
            except OSError:
                break
        proc.wait(timeout=10)
        os.close(master)
        return float(marker.read_text()) - t0


def main() -> list[str]:
    bare_cmd = [sys.executable, "-c", BARE]
    cockpit_cmd = [str(Path(sys.executable).with_name("cockpit")), "--demo"]
    bare, ours = [], []
    for _ in range(RUNS):
        bare.append(_first_frame(bare_cmd, {}))
        ours.append(_first_frame(cockpit_cmd, {}))
    b, o = statistics.median(bare), statistics.median(ours)
    return [
        f"bare Textual app first frame: median {b * 1000:.0f} ms over {RUNS} runs",
        f"cockpit --demo first frame:   median {o * 1000:.0f} ms over {RUNS} runs",
        f"ratio {o / b:.2f}x (target <= 1.2x)",
    ]


if __name__ == "__main__":
    print("\n".join(main()))
