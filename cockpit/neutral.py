"""The output boundary: text from outside cockpit made harmless before it is shown.

Pod and node names, event and termination messages, Helm values, images and arguments,
Prometheus label values, error bodies, GPU and process names, pasted logs, bundles and
config values are written by other people. A terminal interprets some of their bytes:
``ESC ] 52`` writes the user's clipboard, ``ESC ] 0`` sets the window title, ``ESC [ 2J``
clears the screen, the C1 byte ``\\x9b`` starts a control sequence on its own, ``BEL``
rings. Every such character is shown visibly instead, as ``\\x1b``, ``\\x9b``, ``\\x07``:

- C0 controls ``U+0000``–``U+001F`` except newline and tab, ``DEL`` (``U+007F``) and the
  C1 controls ``U+0080``–``U+009F``; a Windows line end (``\\r\\n``) becomes ``\\n``;
- nothing else changes, so the function is idempotent and cheap on clean text (one regex
  scan).

Where it is applied (the few places output leaves cockpit):

- the plain-text commands: :func:`neutral_streams` wraps ``sys.stdout``/``sys.stderr``
  for the whole of ``cockpit …`` (``cockpit.cli.main``); cockpit's own terminal controls
  (the refresh of ``gpus`` without ``--once``) go through :func:`write_control`;
- JSON output (``--json``, the JSON export): :func:`json_text` writes the C1 controls and
  ``DEL``, which JSON allows raw, as ``\\u009b`` escapes (C0 are escaped by every JSON
  encoder), so the document stays valid and exact;
- the TUI: :mod:`cockpit.ui.boundary` makes this function the control-code filter of the
  two text constructors every widget renders through (Rich ``Text``, Textual ``Content``);
- the Markdown export (:func:`cockpit.export.render_markdown`).

Markup is never interpreted: widgets are built with ``markup=False`` or from ``Text``.
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator
from typing import TextIO

_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f"
_CONTROL_RE = re.compile(f"\r\n|[{_CONTROLS}]")
_JSON_RAW_RE = re.compile("[\x7f-\x9f]")


def _visible(m: re.Match[str]) -> str:
    s = m.group()
    return "\n" if s == "\r\n" else f"\\x{ord(s):02x}"


def neutralise(text: str) -> str:
    """``text`` with every control character but newline and tab written out visibly.

    Args:
        text: Any string (outside text, or a whole rendered page).

    Returns:
        The same string when it holds no control character (the common case), else a
        copy where each one is ``\\xNN`` (two lowercase hex digits) and ``\\r\\n`` is
        ``\\n``.
    """
    if not text or _CONTROL_RE.search(text) is None:
        return text
    return _CONTROL_RE.sub(_visible, text)


def json_text(serialised: str) -> str:
    """A serialised JSON document with ``DEL`` and the C1 controls escaped as ``\\u00NN``.

    Only valid on JSON text: there such characters can only stand inside strings, where
    the escape decodes back to the same character. C0 controls are already escaped by
    ``json.dumps`` and pydantic.
    """
    if _JSON_RAW_RE.search(serialised) is None:
        return serialised
    return _JSON_RAW_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", serialised)


class NeutralStream:
    """A text stream that neutralises everything written through it (see the module).

    Attributes:
        unguarded: The wrapped stream, for cockpit's own terminal controls only.
    """

    def __init__(self, stream: TextIO) -> None:
        self.unguarded = stream

    def write(self, text: str) -> int:
        self.unguarded.write(neutralise(text))
        return len(text)

    def writelines(self, lines: list[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> object:
        # flush, isatty, fileno, encoding, buffer…: those of the wrapped stream.
        return getattr(self.unguarded, name)


@contextlib.contextmanager
def neutral_streams() -> Iterator[None]:
    """Within the block, ``sys.stdout`` and ``sys.stderr`` neutralise what is written."""
    saved = sys.stdout, sys.stderr
    sys.stdout = NeutralStream(saved[0])  # type: ignore[assignment]
    sys.stderr = NeutralStream(saved[1])  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def write_control(sequence: str) -> None:
    """Write one of cockpit's own terminal control sequences to stdout, unneutralised."""
    out = sys.stdout
    getattr(out, "unguarded", out).write(sequence)
