"""A bare Textual app that shows one plugin panel, as the panel snapshots render it."""

from __future__ import annotations

from collections.abc import Callable

from textual.app import App, ComposeResult
from textual.widget import Widget

from cockpit.context import AppContext


class PanelHost(App[None]):
    """Shows ``panel(ctx)`` alone, in the dark theme; closes the context's sources when it
    ends, as ``CockpitApp`` does (no connection outlives the app)."""

    def __init__(self, ctx: AppContext, panel: Callable[[AppContext], Widget]) -> None:
        super().__init__()
        self.ctx = ctx
        self.panel = panel

    def on_mount(self) -> None:
        self.theme = "textual-dark"

    def compose(self) -> ComposeResult:
        yield self.panel(self.ctx)

    async def on_unmount(self) -> None:
        await self.ctx.sources.close()
