"""The TUI's output boundary: every widget's text passes :func:`cockpit.neutral.neutralise`.

Widgets render text through two constructors: Rich ``Text`` (``Text(...)``, ``append``,
``plain``; DataTable cells, TextArea and Input lines) and Textual ``Content`` (``Static``,
``Label``, options, notifications). Both already filter a few control characters (BEL,
backspace, VT, FF, CR) through one module-level function, but let ESC and the C1
controls through: a pod name holding ``ESC ] 52`` would write the user's clipboard, one
holding ``ESC [ 2J`` would blank the screen. :func:`install` makes
:func:`~cockpit.neutral.neutralise` that function in both, so every control character
but newline and tab is shown as ``\\x1b`` before the text's width is measured, whatever
widget shows it. Markup is a separate matter: widgets are built with ``markup=False`` or
from ``Text``, so ``[b]…[/b]`` and ``[@click=…]`` stay literal.

The two names are private to Rich and Textual (pinned in ``pyproject.toml``);
``tests/test_hostile_output.py`` fails if a new version stops calling them.
"""

from __future__ import annotations

import rich.text
import textual.content

from cockpit.neutral import neutralise


def install() -> None:
    """Make :func:`~cockpit.neutral.neutralise` the control-code filter of Rich ``Text``
    and Textual ``Content`` (idempotent; for the whole process)."""
    rich.text.strip_control_codes = neutralise  # type: ignore[attr-defined,assignment]
    textual.content._strip_control_codes = neutralise  # type: ignore[assignment]
