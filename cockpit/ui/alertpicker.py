"""The alert picker: start the incident from the alert that paged.

Shown at start when alerts are available and no incident was reopened, and from the
command palette. A filter field keeps the focus: every printable key types into it (a
name, a namespace, a pod), so typing never chooses anything; ↑/↓ move the highlight in
the list, Enter uses the highlighted alert, Escape closes without one. The list is
:func:`cockpit.collect.paged.alert_line` per alert (silenced, inhibited and other-scope
alerts marked), and the highlighted alert's summary, expression and SLI show below it.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from cockpit.analysis.paged import PagedAlert
from cockpit.collect.paged import AlertList, alert_details, alert_line, failure_lines
from cockpit.i18n import t
from cockpit.ui.fields import TextInput
from cockpit.ui.keys import localize_bindings
from cockpit.ui.nowhere import SaysWhereTypingGoes
from cockpit.ui.select import EndOptionList


def matches(alert: PagedAlert, words: list[str]) -> bool:
    """Whether every filter word occurs (case-insensitively) in the alert's name,
    fingerprint, summary or label values."""
    hay = " ".join([alert.name, alert.fingerprint, alert.summary, *alert.labels.values()]).lower()
    return all(w in hay for w in words)


class AlertPickerScreen(SaysWhereTypingGoes, ModalScreen[str | None]):
    """The alerts of one read; dismissed with the chosen alert's fingerprint (or ``None``).

    Args:
        lang: UI language.
        alerts: The alerts, in :func:`cockpit.analysis.paged.finish`'s order.
    """

    DEFAULT_CSS = """
    AlertPickerScreen { align: center middle; }
    AlertPickerScreen > Vertical {
        width: 96%; max-width: 140; height: auto; max-height: 90%;
        border: thick $accent; padding: 0 1; background: $surface;
    }
    AlertPickerScreen #alert-title { text-style: bold; }
    AlertPickerScreen #alert-list { height: auto; max-height: 12; }
    AlertPickerScreen #alert-detail { height: auto; color: $text-muted; }
    AlertPickerScreen #alert-failures { height: auto; color: $warning; }
    AlertPickerScreen #alert-hint { color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Close"),
        Binding("down", "move(1)", show=False, priority=True),
        Binding("up", "move(-1)", show=False, priority=True),
        Binding("pagedown", "move(10)", show=False, priority=True),
        Binding("pageup", "move(-10)", show=False, priority=True),
    ]

    def __init__(self, lang: str, alerts: AlertList) -> None:
        super().__init__()
        self.lang = lang
        self.alerts = alerts
        self.shown: list[PagedAlert] = list(alerts.alerts)
        localize_bindings(self, lang)

    def compose(self) -> ComposeResult:
        lang = self.lang
        with Vertical():
            yield Static(t("alerts.picker.title", lang), id="alert-title", markup=False)
            yield TextInput(placeholder=t("alerts.picker.filter", lang), id="alert-filter")
            yield EndOptionList(id="alert-list")
            yield Static("", id="alert-detail", markup=False)
            yield Static(
                "\n".join(failure_lines(self.alerts, lang)), id="alert-failures", markup=False
            )
            yield Static(t("alerts.picker.hint", lang), id="alert-hint", markup=False)

    def on_mount(self) -> None:
        self.query_one("#alert-list", OptionList).can_focus = False
        self._fill()
        self.query_one("#alert-filter", Input).focus()

    def _fill(self, text: str | None = None) -> None:
        """The list from the filter's words, or from ``text`` (the first alert
        highlighted)."""
        if text is None:
            text = self.query_one("#alert-filter", Input).value
        words = text.lower().split()
        self.shown = [a for a in self.alerts.alerts if matches(a, words)]
        menu = self.query_one("#alert-list", OptionList)
        menu.clear_options()
        if not self.shown:
            menu.add_option(Option(Text(t("alerts.picker.no_match", self.lang)), disabled=True))
        else:
            menu.add_options(
                # Text, never markup: "[firing]" and label values are shown as they are.
                [Option(Text(alert_line(a, self.lang)), id=a.fingerprint) for a in self.shown]
            )
            menu.highlighted = 0
        self._detail()

    def _detail(self) -> None:
        menu = self.query_one("#alert-list", OptionList)
        i = menu.highlighted
        text = ""
        if self.shown and i is not None and 0 <= i < len(self.shown):
            text = "\n".join(alert_details(self.shown[i], self.lang))
        self.query_one("#alert-detail", Static).update(text)

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._fill()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the filter uses the highlighted alert, as listed when Enter was
        pressed (keys typed right after it do not change which one)."""
        event.stop()
        if event.input.value != event.value:
            self._fill(event.value)
        self._choose()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._detail()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """A click on an alert uses it."""
        if event.option.id:
            self.dismiss(event.option.id)

    def action_move(self, delta: int) -> None:
        """Move the highlight by ``delta`` rows (clamped to the list)."""
        if not self.shown:
            return
        menu = self.query_one("#alert-list", OptionList)
        i = menu.highlighted if menu.highlighted is not None else 0
        menu.highlighted = max(0, min(len(self.shown) - 1, i + delta))
        self._detail()

    def _choose(self) -> None:
        menu = self.query_one("#alert-list", OptionList)
        i = menu.highlighted
        if self.shown and i is not None and 0 <= i < len(self.shown):
            self.dismiss(self.shown[i].fingerprint)
            return
        # nothing to use: said, never a silent Enter
        key = "alerts.picker.enter_no_match" if self.alerts.alerts else "alerts.picker.enter_none"
        self.notify(t(key, self.lang), markup=False)
