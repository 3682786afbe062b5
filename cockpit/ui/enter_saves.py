"""Enter in a field that saves as it is typed (A's title, the times, the SLO): nothing is
submitted, so the Enter itself says that the field is saved and where Tab goes, and ends
the edit being typed, so a Ctrl+Z after more typing undoes only the new text."""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widgets import Input

from cockpit.i18n import t
from cockpit.ui.focus import widget_name

SAVES_AS_TYPED = "saves-as-typed"
"""The class of a field whose text is kept on every change (no button saves it)."""


def say_saved(screen: Screen[Any], field: Input, lang: str) -> bool:
    """Enter in ``field``: when it saves as typed (and its text was understood), say it
    is saved; True when it was such a field."""
    if not field.has_class(SAVES_AS_TYPED) or field.has_class("-invalid"):
        return False
    from cockpit.ui.nowhere import tab_goes_to

    # The typing step ended at the Enter key itself (:meth:`TextInput.action_submit`):
    # keys typed after it may already be in the field, a step of their own.
    after = tab_goes_to(screen, field)
    name = widget_name(field, lang)
    screen.notify(
        t(
            "field.saved_on_enter",
            lang,
            field=name,
            next=widget_name(after, lang) if after is not None else name,
        ),
        markup=False,
    )
    return True
