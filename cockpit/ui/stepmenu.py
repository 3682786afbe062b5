"""Ctrl+G: go to a step of the flow from a short numbered list.

Terminals send Alt+digit as characters (Option+3 is ``£`` on a Mac, and Textual reads
``ESC 3`` so), so a jump key cannot be an Alt chord: Ctrl+G opens this list instead. A
number only highlights its step and Enter goes there, so a sentence typed into the list by
mistake (``Xid 79 on node 3``) moves nothing: typing is never navigation.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from cockpit.flow import STEPS
from cockpit.ui.keys import localize_bindings
from cockpit.ui.nowhere import SaysWhereTypingGoes
from cockpit.ui.select import EndOptionList


class StepMenuScreen(SaysWhereTypingGoes, ModalScreen[str | None]):
    """The nine steps, numbered 1–9; dismissed with the chosen step's letter (or ``None``).

    Args:
        lang: UI language.
        current: Letter of the step on screen (highlighted first).
    """

    DIALOG_TITLE_KEY = "stepmenu.title"
    """What names the dialog's unnamed stop (its one list, table or text)."""

    DEFAULT_CSS = """
    StepMenuScreen { align: center middle; }
    StepMenuScreen > OptionList { width: 60; height: auto; max-height: 13; border: thick $accent; }
    """
    BINDINGS = [
        Binding("escape,ctrl+g", "dismiss(None)", "Close"),
        *[Binding(str(n), f"pick({n})", show=False) for n in range(1, len(STEPS) + 1)],
    ]

    def __init__(self, lang: str, current: str = "") -> None:
        super().__init__()
        self.lang = lang
        self.current = current
        localize_bindings(self, lang)

    def compose(self) -> ComposeResult:
        yield EndOptionList(
            *[
                Option(f"{i}. {st.id.value} · {st.title(self.lang)}", id=st.id.value)
                for i, st in enumerate(STEPS, start=1)
            ],
            id="step-menu",
        )

    def on_mount(self) -> None:
        menu = self.query_one(OptionList)
        ids = [st.id.value for st in STEPS]
        if self.current in ids:
            menu.highlighted = ids.index(self.current)

    def action_pick(self, number: int) -> None:
        """Highlight the step numbered ``number`` (1 = A … 9 = I); Enter goes there."""
        menu = self.query_one(OptionList)
        if isinstance(menu, EndOptionList) and menu.typed_in_a_run():
            return  # a digit of a sentence typed into the list picks nothing
        if 1 <= number <= len(STEPS):
            menu.highlighted = number - 1

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)
