"""The F1 help screen: keys, the flowchart, and the handbook's rules."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

from cockpit.flow import STEPS
from cockpit.i18n import t
from cockpit.ui.keys import localize_bindings
from cockpit.ui.nowhere import SaysWhereTypingGoes


class HelpScreen(SaysWhereTypingGoes, ModalScreen[None]):
    """Keys and flow overview in the UI language."""

    DIALOG_TITLE_KEY = "help.title"
    """What names the dialog's unnamed stop (its one list, table or text)."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90%; max-width: 120; height: 90%; border: thick $primary; background: $surface; }
    """
    BINDINGS = [Binding("escape,f1", "close", "Close")]

    def __init__(self, lang: str) -> None:
        super().__init__()
        self.lang = lang
        localize_bindings(self, lang)

    def compose(self) -> ComposeResult:
        lang = self.lang
        lines = [
            f"# {t('help.title', lang)}",
            "",
            t("help.keys", lang),
            "",
            t("help.typing", lang),
            "",
            f"## {t('help.flow', lang)}",
            "",
        ]
        for st in STEPS:
            lines.append(
                f"- **{st.id.value} {st.title(lang)}** — {t(f'step.{st.id.value}.guide', lang)}"
            )
        lines += [
            "",
            f"## {t('help.rules', lang)}",
            "",
            t("app.protect_first_rule", lang),
            "",
            t("help.no_data", lang),
        ]
        with VerticalScroll():
            yield Markdown("\n".join(lines))

    def action_close(self) -> None:
        self.dismiss(None)
