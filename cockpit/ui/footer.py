"""The key footer of every screen, compact on narrow terminals."""

from __future__ import annotations

from textual import events
from textual.widgets import Footer

COMPACT_BELOW = 110
"""Below this many columns the footer drops the padding around each key, so that the main
keys of a screen still fit an 80-column terminal (ssh from a laptop, tmux split)."""


class CockpitFooter(Footer):
    """:class:`textual.widgets.Footer` that turns compact below ``compact_below`` columns
    (:data:`COMPACT_BELOW` by default; more for a screen with more keys of its own)."""

    def __init__(self, compact_below: int = COMPACT_BELOW) -> None:
        super().__init__()
        self.compact_below = compact_below

    def on_resize(self, event: events.Resize) -> None:
        self.compact = event.size.width < self.compact_below
        # Narrow, the palette's key (Ctrl+P, in F1's help) leaves its room to the keys of
        # the screen, which would otherwise be cut at the right edge.
        self.show_command_palette = not self.compact
