"""A table's cursor row stays on screen as it moves: Down pressed 48 times on C's signals
table leaves the row it is on (what Alt+P pins) in sight at 80×24 and 160×48, the table
and the step's page around it scrolled to it."""

from __future__ import annotations

from typing import Any

import pytest
from textual.geometry import Region
from textual.widget import Widget

from cockpit.app import CockpitApp
from cockpit.ui.table import PlainTable
from demo_ctx import demo_ctx


def cursor_row_on_screen(table: PlainTable) -> tuple[Region, Region]:
    """The cursor row's lines on screen and the part of the screen where it can be seen
    (inside the table, each box it sits in, which cuts off what lies outside it, and the
    screen)."""
    row = table._get_row_region(table.cursor_row)
    box = table.scrollable_content_region
    shown = Region(box.x, box.y + row.y - round(table.scroll_y), box.width, row.height)
    seen = box.intersection(table.screen.region)
    for a in table.ancestors:
        if isinstance(a, Widget):
            seen = seen.intersection(a.scrollable_content_region)
    return shown, seen


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_c_cursor_row_stays_in_sight_after_48_downs(tmp_path: Any, size: tuple[int, int]):
    ctx = demo_ctx(tmp_path, "en")
    app = CockpitApp(ctx=ctx, start_step="C")
    async with app.run_test(size=size) as pilot:
        for _ in range(5):
            await app.workers.wait_for_complete()
            await pilot.pause()
        table = app.screen.query_one("#dd-table", PlainTable)
        assert table.row_count > 48
        table.focus()
        await pilot.pause()
        for n in range(48):
            await pilot.press("down")
            await pilot.pause()
            shown, seen = cursor_row_on_screen(table)
            assert table.cursor_row == n + 1
            assert seen.contains_region(shown), (n + 1, shown, seen)
        # and back up to the first row: the page follows it up again
        for _ in range(48):
            await pilot.press("up")
        await pilot.pause()
        shown, seen = cursor_row_on_screen(table)
        assert table.cursor_row == 0 and seen.contains_region(shown), (shown, seen)


async def test_every_steps_table_keeps_its_cursor_row_in_sight(tmp_path: Any) -> None:
    """The same on every table with a cursor of every step and panel at 80×24 (B's
    changes, E's cohort and findings, F's shared signals, I's back-test, ...)."""
    from cockpit.app import STEP_SCREENS

    ctx = demo_ctx(tmp_path, "en")
    app = CockpitApp(ctx=ctx, start_step="A")
    seen_tables = []
    async with app.run_test(size=(80, 24)) as pilot:
        for step in STEP_SCREENS:
            app.goto(step)
            for _ in range(3):
                await app.workers.wait_for_complete()
                await pilot.pause()
            for table in app.screen.query(PlainTable):
                if table.cursor_type == "none" or table.row_count < 2 or not table.display:
                    continue
                seen_tables.append(f"{step}:{table.id}")
                table.focus()
                await pilot.pause()
                for _ in range(min(table.row_count - 1, 30)):
                    await pilot.press("down")
                    await pilot.pause()
                    shown, seen = cursor_row_on_screen(table)
                    assert seen.contains_region(shown), (step, table.id, table.cursor_row)
    assert len(seen_tables) >= 4, seen_tables
