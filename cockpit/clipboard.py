"""Copy text to the user's clipboard through the terminal: OSC 52.

OSC 52 (xterm's "Manipulate Selection Data", ``ESC ] 52 ; c ; <base64> BEL``) asks the
terminal emulator to put the text on the local clipboard, so it works across ssh — the
bytes travel with the terminal output to the engineer's own machine. Terminal
multiplexers in between must be asked to pass it on:

- **tmux** (``$TMUX`` set): wrapped in a DCS passthrough, ``ESC P tmux; <seq with every
  ESC doubled> ESC \\``; tmux 3.3+ forwards it when ``allow-passthrough`` is on
  (``set -g allow-passthrough on``; tmux manual, "allow-passthrough").
- **GNU screen** (``$STY`` set): wrapped in DCS ``ESC P … ESC \\``, split into chunks,
  because screen truncates a string sequence longer than its limit (256 bytes in old
  releases, 768 since 4.2.1); chunks of :data:`SCREEN_CHUNK` bytes fit both.

The TUI uses Textual's ``App.copy_to_clipboard`` instead; this module serves headless
commands (``cockpit export --clipboard``). No Textual import.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

ESC = b"\x1b"
BEL = b"\x07"
ST = ESC + b"\\"
SCREEN_CHUNK = 252
"""Payload bytes per screen DCS chunk (256-byte limit minus ``ESC P`` and ``ESC \\``)."""

Wrap = Literal["none", "tmux", "screen"]


def detect_wrap(env: Mapping[str, str] | None = None) -> Wrap:
    """Which multiplexer wrapping the environment needs: ``tmux``, ``screen`` or ``none``.

    ``$TMUX`` wins over ``$STY`` (tmux inside screen talks to tmux first).
    """
    env = os.environ if env is None else env
    if env.get("TMUX"):
        return "tmux"
    if env.get("STY"):
        return "screen"
    return "none"


def osc52(text: str | bytes, wrap: Wrap = "none", selection: str = "c") -> bytes:
    """The escape sequence that copies ``text`` (UTF-8) to the clipboard.

    Args:
        text: What to copy.
        wrap: ``none`` (bare OSC 52), ``tmux`` or ``screen`` passthrough (see module doc).
        selection: OSC 52 selection parameter: ``c`` clipboard, ``p`` primary.

    Returns:
        The bytes to write to the terminal.
    """
    data = text.encode("utf-8") if isinstance(text, str) else text
    payload = base64.b64encode(data)
    seq = ESC + b"]52;" + selection.encode("ascii") + b";" + payload + BEL
    if wrap == "tmux":
        return ESC + b"Ptmux;" + seq.replace(ESC, ESC + ESC) + ST
    if wrap == "screen":
        chunks = [seq[i : i + SCREEN_CHUNK] for i in range(0, len(seq), SCREEN_CHUNK)]
        return b"".join(ESC + b"P" + chunk + ST for chunk in chunks)
    return seq


@dataclass(frozen=True)
class CopyResult:
    """Outcome of :func:`copy_to_terminal`.

    Attributes:
        ok: The sequence was written to the terminal (whether the terminal honours OSC 52
            cannot be known; most modern ones do, some need it enabled).
        size: Bytes of text copied.
        wrap: The wrapping used.
        reason: Why nothing was written, when ``ok`` is false.
    """

    ok: bool
    size: int
    wrap: Wrap
    reason: str = ""


def copy_to_terminal(
    text: str,
    tty: str = "/dev/tty",
    env: Mapping[str, str] | None = None,
) -> CopyResult:
    """Write the OSC 52 sequence for ``text`` to the controlling terminal.

    Writing to ``/dev/tty`` rather than stdout keeps the sequence out of a pipe or file
    that stdout may be redirected to.

    Args:
        text: What to copy.
        tty: Terminal device to write to.
        env: Environment used to detect tmux/screen (default ``os.environ``).

    Returns:
        A :class:`CopyResult`; ``ok`` is false with the reason when there is no
        controlling terminal (cron, CI, a detached process). Never raises ``OSError``.
    """
    wrap = detect_wrap(env)
    data = text.encode("utf-8")
    seq = osc52(data, wrap)
    try:
        fd = os.open(tty, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        return CopyResult(False, len(data), wrap, f"{tty}: {exc.strerror or exc}")
    try:
        view = memoryview(seq)
        while view:
            n = os.write(fd, view)
            view = view[n:]
    except OSError as exc:
        return CopyResult(False, len(data), wrap, f"{tty}: {exc.strerror or exc}")
    finally:
        os.close(fd)
    return CopyResult(True, len(data), wrap)
