"""Escape pressed, then a key: two keys, never an Alt chord.

A terminal sends Alt+P as the two bytes ESC ``p`` in one write, and the Escape key as a
lone ESC. Textual reads an ESC followed by a character within its escape delay
(``ESCDELAY``, 100 ms by default) as Alt+that character, whichever way the bytes came, so
Escape (leave the field) typed quickly followed by a letter became a panel chord: Alt+P
pinned the highlighted row, Alt+O switched C's baseline.

:class:`TypedKeysParser` tells the two apart the way the bytes arrive: a key pressed by a
person is its own write, so an ESC that ends one read, followed by a printable character
that starts the next, is the Escape key and then that character. A chord stays a chord
(its bytes come in one read), and an escape sequence a terminal wrote in one piece but
the kernel split between two reads (``ESC`` | ``[A``) is left to Textual: a CSI or SS3
introducer (``[``, ``O``) and another ESC never end the lone Escape here.

A terminal multiplexer can join the two keys itself before cockpit reads them: tmux reads
ESC followed by a key within its ``escape-time`` (500 ms by default) as Meta+key and
writes them as one chord (https://github.com/tmux/tmux/wiki/FAQ, "What is the proper
escape-time setting?"); :func:`tmux_escape_time_ms` reads that setting so the app can say
so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable
from typing import Any

from textual._parser import ParseTimeout
from textual._xterm_parser import XTermParser

_CONTINUES = frozenset("[O\x1b")
"""Characters that may continue an escape sequence split between two reads."""
TMUX_ESCAPE_TIME_OK_MS = 50
"""The largest tmux ``escape-time`` with which a person cannot type Escape and a key fast
enough to be joined (the tmux FAQ suggests 10–20 ms; neovim's health check warns above
300 ms)."""


class TypedKeysParser(XTermParser):
    """Textual's terminal parser, with an ESC at the end of one read and a printable
    character at the start of the next read taken as the Escape key, then that character
    (see the module docstring)."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self._lone_escape = False

    def feed(self, data: str) -> Iterable[Any]:
        if data and self._lone_escape and data[0] not in _CONTINUES and data[0].isprintable():
            # the ESC of the previous read was the Escape key: report it before this read
            self._lone_escape = False
            self._timeout_time = None
            self._awaiting = self._gen.throw(ParseTimeout())
            while self._tokens:
                yield self._tokens.popleft()
        yield from super().feed(data)
        # still waiting after an ESC that ended this read: the next read tells
        self._lone_escape = data.endswith("\x1b") and self._timeout_time is not None

    def tick(self) -> Iterable[Any]:
        for token in super().tick():
            self._lone_escape = False
            yield token


def install() -> None:
    """Make :class:`TypedKeysParser` the parser of Textual's terminal drivers (idempotent;
    for the whole process)."""
    from textual.drivers import linux_driver

    linux_driver.XTermParser = TypedKeysParser  # type: ignore[attr-defined,misc]


def tmux_escape_time_ms(timeout_s: float = 1.0) -> int | None:
    """tmux's ``escape-time`` in milliseconds when cockpit runs inside tmux (``$TMUX``
    set and the ``tmux`` command found), else ``None``; ``None`` too when tmux does not
    answer within ``timeout_s`` seconds. Blocking: call it from a worker thread."""
    if not os.environ.get("TMUX") or shutil.which("tmux") is None:
        return None
    try:
        out = subprocess.run(
            ["tmux", "show-options", "-sv", "escape-time"],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    text = out.stdout.strip()[:16]
    return int(text) if out.returncode == 0 and text.isdigit() else None
