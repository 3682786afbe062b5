"""Table cells are shown as typed: PromQL regexes and the user's own text are never read
as Rich markup (which drops ``[a-z0-9]`` and fails on ``[/tmp]``)."""

from __future__ import annotations

from textual.app import App, ComposeResult

from cockpit.ui.table import PlainTable

CELLS = ('pod=~"vllm-[a-z0-9]{1,10}-[a-z0-9]{5}"', "[/tmp] is full", "[b]not bold[/b]")


class _TableApp(App[None]):
    def compose(self) -> ComposeResult:
        yield PlainTable(id="t")


async def test_cells_are_literal_text() -> None:
    app = _TableApp()
    async with app.run_test(size=(120, 10)) as pilot:
        table = app.query_one(PlainTable)
        table.add_columns("query", "note", "other")
        table.add_row(*CELLS, key="r")
        table.update_cell("r", table.ordered_columns[2].key, "[red]still literal[/]")
        await pilot.pause()
        shown = [getattr(c, "plain", c) for c in table.get_row("r")]
        assert shown == [*CELLS[:2], "[red]still literal[/]"]
        screen = app.export_screenshot()
        assert "[a-z0-9]{1,10}" in screen.replace("&#160;", " ") and "[/tmp]" in screen
