"""The highlighted row of a table too wide for its screen, in full, under the table.

On an 80-column terminal C's signals, the GPU panel's GPUs and the scheduling panel's nodes
keep their name and their verdict in sight (:meth:`PlainTable.add_rows_fitted` narrows and
wraps the leading columns); the columns after those would be reached only by scrolling
sideways. Instead, while the columns do not fit, the pane under the table shows the row
the cursor is on, every column with its header, as the table itself holds them (the same
text the wide table shows), and follows the cursor. When every column fits, the pane is
hidden. The pane takes no focus: the table stays the one Tab stop, its arrows move the
cursor and the pane reads along.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.css.scalar import Scalar, Unit
from textual.widget import Widget
from textual.widgets import Static

from cockpit.ui.table import PlainTable

SEPARATOR = " ·  "
"""Between two columns: a line breaks after its dot, never before it."""


def colon(lang: str) -> str:
    """What follows a column's header before its value, in ``lang``."""
    return "：" if lang == "zh" else ": "


def row_text(table: PlainTable, lang: str) -> Text | None:
    """The cursor's row of ``table``: each column's header and its cell (the table's own
    text, spaces around it left out), the empty ones left out (``None`` when the table has
    no rows)."""
    if table.row_count == 0 or not 0 <= table.cursor_row < table.row_count:
        return None
    out = Text()
    cells = table.get_row_at(table.cursor_row)
    for column, cell in zip(table.ordered_columns, cells, strict=False):
        value = cell.copy() if isinstance(cell, Text) else Text(str(cell))
        value.rstrip()
        value = value[len(value.plain) - len(value.plain.lstrip()) :]
        if not value.plain:
            continue
        if out:
            out.append(SEPARATOR, style="dim")
        out.append(" ".join(str(column.label).split()) + colon(lang), style="bold")
        out.append_text(value)
    return out


class RowDetail(Static):
    """The pane under a :class:`PlainTable` (see the module docstring)."""

    DEFAULT_CSS = """
    RowDetail { height: auto; display: none; border-left: thick $accent; padding: 0 1; }
    """

    def __init__(self, table: PlainTable, lang: str, **kwargs: Any) -> None:
        super().__init__("", markup=False, **kwargs)
        self.table = table
        self.lang = lang
        self._cursor_type = table.cursor_type
        """The table's own cursor: a table without one gets a row cursor while the pane
        is shown, to choose the row it reads."""
        self._max_height: Scalar | None = None

    def on_mount(self) -> None:
        table = self.table
        self._max_height = table.styles.max_height
        self.watch(table, "cursor_coordinate", self._moved, init=False)
        self.watch(table, "drawn", self._redrawn, init=False)
        self.watch(table, "has_focus", self._focused, init=False)
        self._redrawn()

    def _viewport(self) -> Widget:
        """What the table and the pane are seen through: the nearest container that
        scrolls vertically (the step's page), else the screen."""
        for box in self.table.ancestors:
            if isinstance(box, Widget) and box.styles.overflow_y in ("auto", "scroll"):
                return box
        return self.screen

    def _moved(self, *_: Any) -> None:
        """The cursor moved: the pane reads its row and, the table focused, is scrolled
        into sight."""
        self._read(follow=True)

    def _redrawn(self, *_: Any) -> None:
        """The rows were laid out again or a cell changed (a poll): read again, leaving
        the page where it is."""
        self._read(follow=False)

    def _read(self, follow: bool) -> None:
        table = self.table
        text = row_text(table, self.lang) if table.overflows else None
        shown = text is not None
        if self._cursor_type == "none":
            table.cursor_type = "row" if shown else "none"
        self.display = shown
        if text is None:
            table.styles.max_height = self._max_height
            return
        self.update(text)
        # The table with the pane under it fits the page's window: the pane is in sight
        # whichever row the cursor is on (the table scrolls by itself instead).
        width = max(1, table.size.width - 3)
        lines = len(text.wrap(self.app.console, width))
        room = max(4, self._viewport().scrollable_content_region.height - lines - 1)
        css = self._max_height
        if css is not None and css.unit is Unit.CELLS:
            room = min(room, int(css.value))
        table.styles.max_height = room
        if follow and table.has_focus:
            self.call_after_refresh(self._into_view)

    def _focused(self, focused: bool) -> None:
        if focused and self.display:
            self.call_after_refresh(self._into_view)

    def _into_view(self) -> None:
        """Scroll the page so the pane is seen (the table, no taller than the window
        leaves it, stays in sight above it)."""
        if self.display:
            self.screen.scroll_to_widget(self, animate=False)


def with_detail(table: PlainTable, lang: str) -> ComposeResult:
    """``table`` and, under it, the pane showing its cursor's row while it is too wide
    (headers and values in ``lang``, the UI's language)."""
    yield table
    yield RowDetail(table, lang, id=f"{table.id}-detail" if table.id else None)
