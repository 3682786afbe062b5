"""Translatable messages returned by the analysis: a message key and its arguments.

The analysis stays free of a UI language: every sentence it builds for a user (a reason,
a note, an evidence line) is a :class:`Msg` — a key of ``cockpit/knowledge/i18n/*.toml``
(``evidence.*``) with the numbers as arguments — and the UI or the ``analyze`` text output
renders it in the user's language with :meth:`Msg.text` (``cockpit.i18n.t``). The English
text fields kept for ``cockpit analyze --json`` are the same messages rendered in ``en``.
"""

from __future__ import annotations

from typing import Union

from pydantic import BaseModel, Field

from cockpit.i18n import t

Arg = Union[str, int, float, "Msg"]
"""A message argument: a number (formatted by the message's own format spec), a string
(an identifier such as a pod name or a unit), or a nested message."""


class Msg(BaseModel):
    """A message key with its arguments.

    Attributes:
        key: Message key (``evidence.blast.outlier``).
        args: ``str.format`` arguments of the message; nested :class:`Msg` values are
            rendered in the same language first.
    """

    key: str
    args: dict[str, Arg] = Field(default_factory=dict)

    def text(self, lang: str) -> str:
        """The message in ``lang`` (``zh`` or ``en``)."""
        args = {k: v.text(lang) if isinstance(v, Msg) else v for k, v in self.args.items()}
        return t(self.key, lang, **args)


def msg(key: str, /, **args: Arg) -> Msg:
    """Shorthand for ``Msg(key=key, args=args)``."""
    return Msg(key=key, args=args)


def unit_suffix(unit: str) -> str:
    """`` ms`` for ``ms``; empty for no unit; ``%`` and ``×`` stick to the number."""
    if not unit:
        return ""
    return unit if unit in ("%", "×") else f" {unit}"
