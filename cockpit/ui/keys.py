"""Key descriptions in the UI language: the footer shows ``r Refresh`` as ``r 刷新``.

A widget or screen declares its ``BINDINGS`` in English (Textual's convention); after its
``__init__`` it calls :func:`localize_bindings`, which replaces each description that has a
message ``binding.<action>`` (the action with non-word characters as ``_``:
``mark('ok')`` → ``binding.mark_ok``).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from cockpit.i18n import catalog, t

TYPING_RUN_GAP_S = 0.5
"""Printable keys closer together than this are one run of typing (a sentence typed, or
sent at once): a field taking a number refuses the digits of a refused run, a numbered
list takes none of its digits as a pick."""


def binding_key(action: str) -> str:
    """The message key of a binding's action (``binding.refresh``, ``binding.mark_ok``)."""
    return "binding." + re.sub(r"\W+", "_", action).strip("_")


def localize_bindings(node: Any, lang: str) -> None:
    """Describe ``node``'s own bindings in ``lang`` (those without a message keep theirs)."""
    table = node._bindings.key_to_bindings
    known = catalog()
    for key, bindings in table.items():
        table[key] = [
            dataclasses.replace(b, description=t(k, lang))
            if b.description and (k := binding_key(b.action)) in known
            else b
            for b in bindings
        ]
