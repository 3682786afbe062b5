"""A data table whose text cells are shown as typed, never parsed as Rich markup.

Textual's ``DataTable`` reads a ``str`` cell as markup: a PromQL regex such as
``pod=~"vllm-[a-z0-9]{5}"`` loses its ``[a-z0-9]``, and a note typed as ``[/tmp] full``
raises a markup error while the table renders. Every table of the app holds queries,
pod names or the user's own text, so they all use this one.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey, RowKey


def plain(cell: object) -> object:
    """``cell`` as shown: a ``str`` becomes literal :class:`~rich.text.Text`."""
    return Text(cell, end="") if isinstance(cell, str) else cell


class PlainTable(DataTable[Any]):
    """``DataTable`` with literal text cells (see the module docstring)."""

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
