"""A data table whose text cells are shown as typed, never parsed as Rich markup.

Textual's ``DataTable`` reads a ``str`` cell as markup: a PromQL regex such as
``pod=~"vllm-[a-z0-9]{5}"`` loses its ``[a-z0-9]``, and a note typed as ``[/tmp] full``
raises a markup error while the table renders. Every table of the app holds queries,
pod names or the user's own text, so they all use this one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

from rich.cells import cell_len
from rich.text import Text
from textual.coordinate import Coordinate
from textual.geometry import Region, Spacing
from textual.reactive import reactive
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
    scrolling the page, so the keys neither skip the table nor stop inside it. A table
    that scrolls by itself pages its own rows and, at its first or last row, the page.

    Its ``max-height`` is a number of lines, not Textual's 100% of its container: measured
    against the page's window while the box it sits in is laid out, a table would be given
    fewer lines than its rows and the box would cut the rows below off (the cursor on
    them out of sight). A table meant to scroll by itself sets a smaller ``max-height``.
    """

    DEFAULT_CSS = """
    PlainTable { max-height: 1000; }
    """

    drawn: reactive[int] = reactive(0, init=False)
    """Counts the times the rows of :meth:`add_rows_fitted` were laid out or a cell was
    updated: what reads a row (:class:`cockpit.ui.row_detail.RowDetail`) reads it again."""

    overflows = False
    """Whether the columns of :meth:`add_rows_fitted`, fitted, are still wider than the
    table: the ones past the right edge are then reached only by scrolling sideways."""

    def _page(self) -> Widget | None:
        """The nearest ancestor that scrolls vertically (the step's page)."""
        return next(
            (a for a in self.ancestors if isinstance(a, Widget) and a.allow_vertical_scroll),
            None,
        )

    def _page_by(self, sign: int) -> bool:
        """Page with the outer scroll; False when the table scrolls by itself and its
        cursor is not at its first or last row (the table pages by itself then)."""
        page = self._page()
        if page is None:
            return False
        last = self.row_count - 1
        edge = self.cursor_row <= 0 if sign < 0 else self.cursor_row >= last
        if self.max_scroll_y > 0:
            # A table with a row shown under it (cockpit.ui.row_detail) is kept to the
            # window's height: at its edge the keys go on scrolling the page.
            if not edge and self.cursor_type != "none" and self.row_count:
                return False
            self._scroll_page(page, sign)
            return True
        if self.cursor_type == "none" or self.row_count == 0 or edge:
            self._scroll_page(page, sign)
            return True
        step = max(1, page.scrollable_content_region.height - 2)
        self.move_cursor(row=max(0, min(last, self.cursor_row + sign * step)))
        return True

    def rows_in_sight(self, region: Region, seen: Region) -> list[int]:
        """The rows whose line lies inside ``seen`` (the page's window, screen cells) when
        the table is laid out at ``region`` (its region on screen, maybe after a scroll
        not yet laid out), top to bottom; empty when the table has no cursor on rows."""
        if self.cursor_type == "none" or not self.row_count:
            return []
        header = self.header_height if self.show_header else 0
        first = max(seen.y, region.y + header)  # rows scrolled under the header are hidden
        last = min(seen.bottom, region.bottom)
        lines = (
            (row, region.y + self._get_row_region(row).y - round(self.scroll_y))
            for row in range(self.row_count)
        )
        return [row for row, y in lines if first <= y < last]

    @staticmethod
    def _scroll_page(page: Widget, sign: int) -> None:
        """Page ``page`` by its own PageUp/PageDown action: the step's page then keeps
        focus in sight (``StepBody``), so a table paged out of sight hands focus on."""
        page.action_page_up() if sign < 0 else page.action_page_down()

    def _scroll_cursor_into_view(self, animate: bool = False) -> None:
        """Keep the highlighted row on screen: the table scrolls to it and so does every
        container it sits in (the step's page), so Down pressed 50 times never leaves the
        cursor, and what Alt+P would pin, out of sight, whether the table scrolls by itself
        (a horizontal scroll bar gives it a line to scroll) or is as tall as its rows."""
        if self.cursor_type == "column":
            super()._scroll_cursor_into_view(animate=animate)
            return
        fixed = self._get_fixed_offset()
        row = self._get_row_region(self.cursor_row)
        if self.cursor_type == "row":
            region = Region(
                int(self.scroll_x) + fixed.left, row.y, row.width - fixed.left, row.height
            )
        else:
            region = self._get_cell_region(self.cursor_coordinate)
        moved = self.scroll_to_region(region, animate=animate, spacing=fixed, force=True)
        if not self.has_focus or not row.height:
            # A cursor put on a row by the program (a panel choosing the best row as it
            # loads) does not move the page: a step opens at its top.
            return
        # The row's line on screen once the table has scrolled, then each container's.
        y = self.scrollable_content_region.y + row.y - round(self.scroll_y) - moved.y
        header = self.header_height if self.show_header else 0
        for box in self.ancestors:
            if not isinstance(box, Widget) or not box.allow_vertical_scroll:
                continue
            top = y - box.scrollable_content_region.y + round(box.scroll_y)
            y -= box.scroll_to_region(
                Region(0, top, 1, row.height),
                spacing=Spacing(header, 0, 0, 0),
                animate=False,
                force=True,
            ).y

    def action_page_down(self) -> None:
        if not self._page_by(1):
            super().action_page_down()

    def action_page_up(self) -> None:
        if not self._page_by(-1):
            super().action_page_up()

    _cursor_key: str | None = None
    """The key of the cursor's row when the rows were last cleared: the cursor goes back
    to that row when it is added again (a refresh, a pin, the incident changing), never
    to the first row, where the next action would hit another row."""

    def clear(self, columns: bool = False) -> Self:
        if self.row_count and 0 <= self.cursor_row < self.row_count:
            key = self.coordinate_to_cell_key(Coordinate(self.cursor_row, 0)).row_key.value
            self._cursor_key = str(key) if key is not None else None
        super().clear(columns)
        return self

    def add_row(
        self,
        *cells: Any,
        height: int | None = 1,
        key: str | None = None,
        label: Any = None,
    ) -> RowKey:
        added = super().add_row(*(plain(c) for c in cells), height=height, key=key, label=label)
        if key is not None and key == self._cursor_key:
            self._cursor_key = None
            self.move_cursor(row=self.row_count - 1, scroll=False)
        return added

    def add_rows_fitted(
        self,
        rows: Sequence[tuple[tuple[Any, ...], str | None]],
        wrap: int | tuple[int, ...],
        minimum: int | tuple[int, ...] = 8,
        keep: int | None = None,
    ) -> None:
        """Add ``rows`` (``(cells, key)`` pairs) so that the table fits its width: when the
        columns would be wider than the table, column ``wrap`` (a long text: a signal's
        name; several: each first gets its ``minimum`` (one for all or one each, never
        less than its label's longest word: the header then has more lines), then an
        even share of the room left, a narrow one no more than it needs) is narrowed and
        its cells wrap onto more lines, so the columns after it (a value, an "◀ outlier"
        mark) stay on screen rather than beyond the right edge.
        ``keep``: how many leading columns must fit (default all) when not every column
        can; the ones after them then go past the right edge (:attr:`overflows`)."""
        # The room left when the rows outgrow the table's height and a scroll bar appears.
        room = self.content_region.width - self.styles.scrollbar_size_vertical
        self._fitted = (list(rows), wrap, minimum, self.content_region.width, keep)
        columns = self.ordered_columns
        pad = 2 * self.cell_padding
        wraps = (wrap,) if isinstance(wrap, int) else wrap
        kept = len(columns) if keep is None else keep

        def width(j: int) -> int:
            texts = [str(c[j]) for c, _ in rows if j < len(c)]
            # An empty cell is drawn as one blank when rows wrap (see below).
            return max([1, cell_len(str(columns[j].label)), *map(cell_len, texts)]) + pad

        mins = (minimum,) * len(wraps) if isinstance(minimum, int) else minimum

        # A column is never narrower than the longest word of its label: a longer label
        # wraps onto a second line of the header.
        def word(j: int) -> int:
            return max(map(cell_len, str(columns[j].label).split() or [""]))

        given = {j: min(width(j), max(m, word(j)) + pad) for j, m in zip(wraps, mins, strict=True)}

        def others_in(n: int) -> int:
            return sum(width(j) for j in range(n) if j not in wraps)

        if others_in(len(columns)) + sum(given.values()) <= room:
            kept = len(columns)  # every column fits once the long ones wrap
        others = others_in(kept)
        fits = room <= 0 or others + sum(width(j) for j in wraps) <= room
        spare = room - others - sum(given.values())
        wanting = [j for j in wraps if width(j) > given[j]]
        while wanting and spare >= len(wanting):
            share = spare // len(wanting)
            for j in list(wanting):
                more = min(share, width(j) - given[j])
                given[j] += more
                spare -= more
                if given[j] >= width(j):
                    wanting.remove(j)
        for j in wraps:
            columns[j].auto_width = fits
            if not fits:
                columns[j].width = given[j] - pad
        total = sum(given[j] if j in wraps and not fits else width(j) for j in range(len(columns)))
        self.overflows = room > 0 and total > room
        self.header_height = max(
            [1]
            + [
                len(Text(str(columns[j].label)).wrap(self.app.console, given[j] - pad))
                for j in wraps
                if not fits
            ]
        )
        self.wrapping = not fits
        for cells, key in rows:
            if not fits:
                # A row of wrapping height measures each cell: an empty one has no line.
                cells = tuple(" " if str(c) == "" else c for c in cells)
            self.add_row(*cells, height=1 if fits else None, key=key)
        self.drawn += 1

    _fitted: (
        tuple[
            list[tuple[tuple[Any, ...], str | None]],
            int | tuple[int, ...],
            int | tuple[int, ...],
            int,
            int | None,
        ]
        | None
    ) = None
    """The rows of :meth:`add_rows_fitted`, its arguments and the width they were fitted to."""

    wrapping = False
    """Whether the rows of :meth:`add_rows_fitted` wrap (the table was too narrow for them):
    a cell updated in place may then need more lines than its row has."""

    def on_resize(self) -> None:
        """Fit the rows of :meth:`add_rows_fitted` again when the table's width changed (a
        page growing its scroll bar, a resized terminal), keeping the cursor's row."""
        if self._fitted is None or self._fitted[3] == self.content_region.width:
            return
        rows, wrap, minimum, _, keep = self._fitted
        if self.row_count != len(rows):
            self._fitted = None  # rows were added or removed since: not ours to redo
            return
        cursor = self.cursor_row
        self.clear()
        self.add_rows_fitted(rows, wrap, minimum, keep)
        if 0 <= cursor < self.row_count:
            self.move_cursor(row=cursor, scroll=False)

    def update_cell(
        self,
        row_key: RowKey | str,
        column_key: ColumnKey | str,
        value: Any,
        *,
        update_width: bool = False,
    ) -> None:
        super().update_cell(row_key, column_key, plain(value), update_width=update_width)
        self.drawn += 1
