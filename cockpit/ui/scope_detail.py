"""Step D's detail view: every outlier behind the blast-radius verdict, signal by signal
(:func:`cockpit.analysis.blast_radius.detail_msgs`), where D itself shows the headline,
the few worst outliers of each signal and a count of the rest."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from cockpit.analysis.blast_radius import BlastRadius, detail_msgs
from cockpit.i18n import t
from cockpit.ui.keys import localize_bindings
from cockpit.ui.nowhere import SaysWhereTypingGoes


def detail_text(br: BlastRadius, headline: str, lang: str) -> str:
    """The headline, then every outlier line of :func:`detail_msgs` in ``lang``."""
    return "\n".join([headline, "", *(m.text(lang) for m in detail_msgs(br))])


class ScopeDetailScreen(SaysWhereTypingGoes, ModalScreen[None]):
    """Every per-entity line of step D's verdict, scrollable; Esc or Close returns."""

    DEFAULT_CSS = """
    ScopeDetailScreen { align: center middle; }
    ScopeDetailScreen > Vertical { width: 100%; max-width: 160; height: 100%;
        border: thick $primary; background: $surface; padding: 0 1; }
    ScopeDetailScreen #scope-detail-body { height: 1fr; }
    ScopeDetailScreen #scope-detail-text { height: auto; }
    ScopeDetailScreen Horizontal { height: auto; }
    ScopeDetailScreen Button { height: 1; border: none; min-width: 10; }
    """
    BINDINGS = [Binding("escape", "close", "Close")]

    def __init__(self, br: BlastRadius, headline: str, lang: str) -> None:
        super().__init__()
        self.br, self.headline, self.lang = br, headline, lang
        localize_bindings(self, lang)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(t("metrics.scope.detail_title", self.lang), classes="section")
            with VerticalScroll(id="scope-detail-body"):
                yield Static(
                    detail_text(self.br, self.headline, self.lang),
                    id="scope-detail-text",
                    markup=False,
                )
            with Horizontal():
                yield Button(t("history.close", self.lang), id="scope-detail-close")

    def on_mount(self) -> None:
        self.query_one("#scope-detail-close", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "scope-detail-close":
            event.stop()
            self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)
