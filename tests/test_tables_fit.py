"""C's table keeps what a row's verdict rests on in sight: at 80 and 160 columns, in both
languages, the value now, the baseline, the change and the verdict are drawn whole inside
the table, the signal's name wrapping instead."""

from __future__ import annotations

from typing import Any

import pytest
from rich.cells import cell_len

from cockpit.app import CockpitApp
from cockpit.i18n import t
from cockpit.ui.drilldown_view import DD_COLUMNS
from cockpit.ui.table import PlainTable
from demo_ctx import demo_ctx

VERDICT_INPUTS = ("signal", "now", "base", "change", "verdict")


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_c_shows_every_column_a_verdict_rests_on(
    tmp_path: Any, lang: str, size: tuple[int, int]
) -> None:
    ctx = demo_ctx(tmp_path, lang)
    app = CockpitApp(ctx=ctx, start_step="C")
    async with app.run_test(size=size) as pilot:
        for _ in range(8):
            await app.workers.wait_for_complete()
            await pilot.pause()
        table = app.screen.query_one("#dd-table", PlainTable)
        assert table.row_count > 5
        labels = [str(c.label) for c in table.ordered_columns]
        assert labels == [t(f"metrics.view.col_{c}", lang) for c in DD_COLUMNS]
        room = table.content_region.width - table.styles.scrollbar_size_vertical
        used = sum(c.get_render_width(table) for c in table.ordered_columns[: len(VERDICT_INPUTS)])
        assert used <= room, (size, used, room)
        # every cell of those columns is drawn whole: none wider than its column
        for j, column in enumerate(table.ordered_columns[: len(VERDICT_INPUTS)]):
            if DD_COLUMNS[j] in ("signal", "now"):
                continue  # the signal's name and a long value wrap onto more lines
            for i in range(table.row_count):
                cell = str(table.get_row_at(i)[j])
                assert cell_len(cell) <= column.get_render_width(table) - 2, (labels[j], cell)


async def _c_loaded(app: CockpitApp, pilot: Any) -> PlainTable:
    for _ in range(8):
        await app.workers.wait_for_complete()
        await pilot.pause()
    return app.screen.query_one("#dd-table", PlainTable)


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_c_row_under_the_cursor_is_read_in_full_at_80_columns(
    tmp_path: Any, lang: str
) -> None:
    """At 80×24 the columns past the verdict do not fit: the pane under the table shows
    the cursor's row, every column with its header and the cells the table shows at 160
    columns, and follows the cursor; the verdict stays in sight without scrolling. At
    160×48 every column fits and the pane is not shown."""
    from cockpit.ui.row_detail import RowDetail, colon

    app = CockpitApp(ctx=demo_ctx(tmp_path / "wide", lang), start_step="C")
    async with app.run_test(size=(160, 48)) as pilot:
        table = await _c_loaded(app, pilot)
        assert not app.screen.query_one("#dd-table-detail", RowDetail).display
        wide = [[str(c) for c in table.get_row_at(i)] for i in range(4)]
    labels = [t(f"metrics.view.col_{c}", lang) for c in DD_COLUMNS]

    app = CockpitApp(ctx=demo_ctx(tmp_path / "narrow", lang), start_step="C")
    async with app.run_test(size=(80, 24)) as pilot:
        table = await _c_loaded(app, pilot)
        detail = app.screen.query_one("#dd-table-detail", RowDetail)
        table.focus()
        await pilot.pause()
        for row in (1, 3, 2):
            await pilot.press("down" if row > table.cursor_row else "up")
            while table.cursor_row != row:
                await pilot.press("down" if row > table.cursor_row else "up")
            await pilot.pause()
            assert detail.display
            shown = str(detail.render())
            for label, cell in zip(labels, wide[row], strict=True):
                if cell.strip():
                    assert f"{label}{colon(lang)}{cell.strip()}" in shown, (label, cell, shown)
            # the pane is in sight, under the table, and takes no focus
            assert app.screen.region.contains_region(detail.region), detail.region
            assert not detail.focusable and table.has_focus
        # the verdict is on screen without scrolling sideways
        assert table.scroll_x == 0
        upto = DD_COLUMNS.index("verdict") + 1
        used = sum(c.get_render_width(table) for c in table.ordered_columns[:upto])
        assert used <= table.scrollable_content_region.width
