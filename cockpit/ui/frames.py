"""Frame markers for ``make bench`` (``bench/bench_startup.py``): after the next paint of
a widget, append the wall-clock time and a label to the file named by an environment
variable. Without the variable nothing happens.

- ``COCKPIT_FIRST_FRAME_FILE``: the first frame (the loading line);
- ``COCKPIT_USEFUL_FRAME_FILE``: the first frame in which step A's golden signals carry
  values (label: ``<rows>x<columns>`` of that table);
- ``COCKPIT_STEP_FRAME_FILE``: every step screen's first frame after a jump (label: the
  step letter).

With ``COCKPIT_FIRST_FRAME_EXIT`` set, the app exits once the first- or useful-frame
marker is written.
"""

from __future__ import annotations

import os
import time

from textual.dom import DOMNode


def mark_after_paint(widget: DOMNode, env: str, label: str = "", exit_after: bool = False) -> None:
    """Append ``"<time.time()> <label>"`` to the file ``$env`` once ``widget`` has painted.

    Args:
        widget: The widget whose next refresh counts (its screen must be on top).
        env: Name of the environment variable holding the file path.
        label: What the frame shows.
        exit_after: Exit the app afterwards when ``COCKPIT_FIRST_FRAME_EXIT`` is set.
    """
    path = os.environ.get(env)
    if not path:
        return

    def write() -> None:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{time.time()!r} {label}\n")
        if exit_after and os.environ.get("COCKPIT_FIRST_FRAME_EXIT"):
            widget.app.exit()

    widget.call_after_refresh(write)
