"""The one "most likely" line of steps D and G, with the evidence of each part: the same
conclusion ``cockpit analyze`` returns (:func:`cockpit.collect.steps.likely`)."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.widgets import Static

from cockpit.analysis.conclusion import Conclusion
from cockpit.i18n import t
from cockpit.ui.metrics_common import MetricsView


def likely_text(c: Conclusion, lang: str) -> str:
    """The conclusion line, then per part what it rests on (:meth:`Conclusion.lines`)."""
    return "\n".join(c.lines(lang))


class LikelyView(MetricsView):
    """Most likely: primary layer, scope, suspect and cause, with confidence."""

    DEFAULT_CSS = """
    LikelyView #likely-line { height: auto; }
    """

    def compose_body(self) -> ComposeResult:
        yield Static(t("metrics.likely.title", self.lang), classes="section")
        yield Static("", id="likely-line", markup=False)

    async def load(self, refresh: bool) -> Any:
        from cockpit.collect import steps
        from cockpit.collect.cache import screen_window

        return await steps.likely(self.ctx, screen_window(self.ctx), refresh)

    def show(self, data: Conclusion) -> None:
        self.query_one("#likely-line", Static).update(likely_text(data, self.lang))
