"""The drill's scorecard screen, opened when the conclusion is handed in at G or I: the
same :class:`cockpit.drills.score.Scorecard` as ``cockpit drill score ID``, in sections
(the conclusion part by part, the steps, the hypotheses, the decisive evidence, what was
missed and where). Esc or "Close" goes back to the step."""

from __future__ import annotations

import asyncio
from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Static

from cockpit.context import AppContext
from cockpit.drills.score import Scorecard, card_sections, score
from cockpit.i18n import t
from cockpit.ui.footer import CockpitFooter
from cockpit.ui.keys import localize_bindings

MARKS = {"✓": "green", "✗": "bold red", "—": "yellow"}
"""The colour of a line by its first mark (right, wrong, not answered)."""


def _styled(line: str) -> Text:
    text = Text(line)
    style = MARKS.get(line[:1])
    if style:
        text.stylize(style, 0, 1)
    return text


class ScorecardScreen(Screen[None]):
    """The scorecard of the drill incident in ``ctx``."""

    DEFAULT_CSS = """
    ScorecardScreen #card-title { height: 1; background: $primary; color: $text; padding: 0 1; }
    ScorecardScreen #card-body { padding: 0 1; }
    ScorecardScreen #card-body:focus { border-left: thick $accent; }
    ScorecardScreen .card-section { text-style: bold; color: $accent; margin: 1 0 0 0; }
    ScorecardScreen .card-lines { height: auto; }
    ScorecardScreen #card-close { margin: 1 0 0 0; }
    """
    BINDINGS = [Binding("escape", "close", "Close")]

    def __init__(self, ctx: AppContext) -> None:
        super().__init__(name="scorecard")
        self.ctx = ctx
        self.card: Scorecard | None = None
        localize_bindings(self, ctx.lang)

    def compose(self) -> ComposeResult:
        lang = self.ctx.lang
        yield Static(t("drill.card.loading", lang), id="card-title", markup=False)
        yield VerticalScroll(id="card-body")
        yield CockpitFooter()

    def on_mount(self) -> None:
        self.run_worker(self._load, exclusive=True, exit_on_error=False)  # type: ignore[arg-type]

    async def _load(self) -> None:
        from cockpit.drills.catalogue import get_drill

        assert self.ctx.session is not None
        inc = self.ctx.session.incident
        assert inc.drill is not None
        # The catalogue reads the package's files: off the event loop.
        drill = await asyncio.to_thread(get_drill, inc.drill.id)
        self.show(score(inc, drill.key, self.ctx.lang))

    def show(self, card: Scorecard) -> None:
        """Render ``card`` (no I/O)."""
        self.card = card
        lang = self.ctx.lang
        self.query_one("#card-title", Static).update(t("drill.card.title", lang, title=card.title))
        body = self.query_one("#card-body", VerticalScroll)
        widgets: list[Any] = []
        for title, lines in card_sections(card, lang):
            if title:
                widgets.append(Static(title, classes="card-section", markup=False))
            widgets.append(Static(Text("\n").join(_styled(x) for x in lines), classes="card-lines"))
        widgets.append(Button(t("drill.card.close", lang), id="card-close"))
        body.mount_all(widgets)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "card-close":
            self.action_close()

    def action_close(self) -> None:
        """Back to the step."""
        self.app.pop_screen()


def open_scorecard(app: App[Any], ctx: AppContext) -> None:
    """Push the scorecard of the drill incident in ``ctx``."""
    app.push_screen(ScorecardScreen(ctx))
