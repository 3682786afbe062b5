"""A data table whose text cells are shown as typed, never parsed as Rich markup.

Textual's ``DataTable`` reads a ``str`` cell as markup: a PromQL regex such as
``pod=~"vllm-[a-z0-9]{5}"`` loses its ``[a-z0-9]``, and a note typed as ``[/tmp] full``
raises a markup error while the table renders. Every table of the app holds queries,
pod names or the user's own text, so they all use this one.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.geometry import Region, Spacing
from textual.widget import Widget
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey, RowKey


def plain(cell: object) -> object:
    """``cell`` as shown: a ``str`` becomes literal :class:`~rich.text.Text`."""
    return Text(cell, end="") if isinstance(cell, str) else cell


class PlainTable(DataTable[Any]):
    """``DataTable`` with literal text cells (see the module docstring).

    A table as tall as its rows (no scrolling of its own) is part of the page: PageUp and
    PageDown move its cursor by a page of the screen and, at its first or last row, go on
    scrolling the page, so the keys neither skip the table nor stop inside it.
    """

    def _page(self) -> Widget | None:
        """The nearest ancestor that scrolls vertically (the step's page)."""
        return next(
            (a for a in self.ancestors if isinstance(a, Widget) and a.allow_vertical_scroll),
            None,
        )

    def _page_by(self, sign: int) -> bool:
        """Page with the outer scroll; False when the table scrolls by itself."""
        page = self._page()
        if self.max_scroll_y > 0 or page is None:
            return False
        last = self.row_count - 1
        edge = self.cursor_row <= 0 if sign < 0 else self.cursor_row >= last
        if self.cursor_type == "none" or self.row_count == 0 or edge:
            page.scroll_page_up() if sign < 0 else page.scroll_page_down()
            return True
        step = max(1, page.scrollable_content_region.height - 2)
        self.move_cursor(row=max(0, min(last, self.cursor_row + sign * step)))
        return True

    def _scroll_cursor_into_view(self, animate: bool = False) -> None:
        """Keep the highlighted row on screen: a table as tall as its rows does not scroll
        by itself, so the page it sits in scrolls to the row (Down pressed 50 times must
        not leave the cursor, and what Alt+P would pin, out of sight)."""
        super()._scroll_cursor_into_view(animate=animate)
        page = self._page()
        if self.max_scroll_y > 0 or page is None or self.cursor_type == "column":
            return
        if not self.has_focus:
            # A cursor put on a row by the program (a panel choosing the best row as it
            # loads) does not move the page: a step opens at its top.
            return
        row = self._get_row_region(self.cursor_row)
        if not row.height:
            return
        top = self.region.y - page.content_region.y + round(page.scroll_y)
        header = self.header_height if self.show_header else 0
        page.scroll_to_region(
            Region(0, top + row.y, 1, row.height),
            spacing=Spacing(header, 0, 0, 0),
            animate=False,
            force=True,
        )

    def action_page_down(self) -> None:
        if not self._page_by(1):
            super().action_page_down()

    def action_page_up(self) -> None:
        if not self._page_by(-1):
            super().action_page_up()

    def add_row(
        self,
        *cells: Any,
        height: int | None = 1,
        key: str | None = None,
        label: Any = None,
    ) -> RowKey:
        return super().add_row(*(plain(c) for c in cells), height=height, key=key, label=label)

    def update_cell(
        self,
        row_key: RowKey | str,
        column_key: ColumnKey | str,
        value: Any,
        *,
        update_width: bool = False,
    ) -> None:
        super().update_cell(row_key, column_key, plain(value), update_width=update_width)
