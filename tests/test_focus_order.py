"""Tab walks every step in the order the eye reads it: top to bottom, then left to right;
the first Tab lands on the first widget shown; a table or list is one Tab stop; a closed
drop-down takes no typed letter."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widget import Widget
from textual.widgets import Select

from cockpit.app import STEP_SCREENS, CockpitApp
from demo_ctx import demo_ctx, opened_demo


def on_screen_at(app: CockpitApp, widget: Widget) -> tuple[int, int]:
    """``(y, x)`` of ``widget`` on the step's page (scrolled content included)."""
    geometry = app.screen._compositor.full_map.get(widget)
    assert geometry is not None, f"{widget!r} is a Tab stop that is not laid out"
    return geometry.region.y, geometry.region.x


async def tab_walk(app: CockpitApp, pilot: Any) -> list[Widget]:
    """The widgets Tab visits from nothing focused until it comes round again."""
    app.screen.set_focus(None)
    await pilot.pause()
    seen: list[Widget] = []
    for _ in range(len(app.screen.focus_chain) + 1):
        await pilot.press("tab")
        await pilot.pause()
        focused = app.screen.focused
        assert focused is not None
        if seen and focused is seen[0]:
            break
        seen.append(focused)
    return seen


@pytest.mark.parametrize(
    ("step", "size"),
    [(step, (80, 24)) for step in STEP_SCREENS] + [(step, (160, 48)) for step in "ABH"],
)
async def test_tab_walks_each_step_in_screen_order(tmp_path, step, size):
    async with opened_demo(demo_ctx(tmp_path, "en"), step, size) as (app, pilot):
        walked = await tab_walk(app, pilot)
        assert walked == list(app.screen.focus_chain)  # every stop, each once
        where = [(on_screen_at(app, w), w.id) for w in walked]
        assert where == sorted(where, key=lambda p: p[0]), (step, size, where)
        assert app.current_step() == step


async def test_bs_first_tab_is_the_list_of_changes_and_a_closed_drop_down_takes_no_letter(
    tmp_path,
):
    """B: the first Tab is on the changes found (above the form), not the form's Kind;
    typed letters on the closed Kind drop-down neither open it nor change it; Enter opens
    it on purpose, and only then does a letter search its options."""
    async with opened_demo(demo_ctx(tmp_path, "en"), "B", (160, 48)) as (app, pilot):
        # The changes found are loaded (their list did not fail filling B's table while
        # the screen was still mounting) and listed in the table too.
        from cockpit.ui.worker_errors import error_log_path

        log = error_log_path(app)
        assert log is not None and not log.exists(), log.read_text() if log else ""
        found = app.screen.found_items()
        assert found and app.screen.query_one("#chg-table").row_count >= len(found)
        await pilot.press("tab")
        await pilot.pause()
        assert app.screen.focused is app.screen.query_one("#changes-list")
        kind = app.screen.query_one("#chg-kind", Select)
        kind.focus()
        await pilot.pause()
        await pilot.press(*"driver node image")
        await pilot.pause()
        assert kind.value == "manual" and not kind.expanded
        assert app.current_step() == "B"
        await pilot.press("enter")
        await pilot.pause()
        assert kind.expanded
        await pilot.press("escape")
        await pilot.pause()
        assert kind.value == "manual" and not kind.expanded


async def test_ctrl_down_reaches_a_long_steps_sections_in_a_few_keys(tmp_path):
    """A's timeline note is a few Ctrl+Down and a Tab from nothing focused, not about 28
    Tabs; each Ctrl+Down lands lower on the page, Ctrl+Up comes back up, and the keys
    are what a terminal sends for Ctrl+Down / Ctrl+Up."""
    from textual._xterm_parser import XTermParser

    parser = XTermParser()
    read = [e.key for e in parser.feed("\x1b[1;5B\x1b[1;5A") if hasattr(e, "key")]
    assert read == ["ctrl+down", "ctrl+up"]
    async with opened_demo(demo_ctx(tmp_path, "en"), "A", (160, 48)) as (app, pilot):
        screen = app.screen
        note = screen.query_one("#tl-text")
        rows: list[int] = []
        for _ in range(8):
            await pilot.press("ctrl+down")
            await pilot.pause()
            assert screen.focused is not None
            rows.append(screen.page_row(screen.focused))
            if screen.focused is screen.query_one("#timeline"):
                break
        assert rows == sorted(set(rows)) and len(rows) <= 6, rows
        await pilot.press("tab")
        await pilot.pause()
        assert screen.focused is note
        await pilot.press(*"Xid 79 on node 3")
        await pilot.pause()
        assert note.value == "Xid 79 on node 3"
        back: list[int] = []
        for _ in range(len(rows)):
            await pilot.press("ctrl+up")
            await pilot.pause()
            back.append(screen.page_row(screen.focused))
        assert back == sorted(back, reverse=True) and back[-1] == rows[0], (rows, back)
        assert app.current_step() == "A"


async def test_ctrl_down_ends_at_the_steps_notes(tmp_path):
    """The step's notes, last on every step, are a section of their own: Ctrl+Down goes
    on to them from the section above instead of saying there is none further."""
    from cockpit.screens.base import StepNotes

    async with opened_demo(demo_ctx(tmp_path, "en"), "A", (160, 48)) as (app, pilot):
        screen = app.screen
        (notes,) = [w for w in screen.query_one(StepNotes).query("*") if w.focusable]
        for _ in range(12):
            await pilot.press("ctrl+down")
            await pilot.pause()
            if screen.focused is notes:
                break
        assert screen.focused is notes
        await pilot.press("ctrl+down")
        await pilot.pause()
        assert screen.focused is notes


async def test_ctrl_down_after_escape_goes_on_from_the_field_left(tmp_path):
    """Esc leaves a field (nothing focused); Ctrl+Down then goes on to the section after
    that field's, as Tab goes on from it, never back to the top of the page; at the last
    section, pressing it again and again says so once, not one notice per press."""
    from cockpit.screens.base import StepNotes

    async with opened_demo(demo_ctx(tmp_path, "en"), "A", (160, 48)) as (app, pilot):
        screen = app.screen
        rows: list[int] = []
        for _ in range(3):
            await pilot.press("ctrl+down")
            await pilot.pause()
            rows.append(screen.page_row(screen.focused))
        left = screen.focused
        await pilot.press("escape")
        await pilot.pause()
        assert screen.focused is None
        await pilot.press("ctrl+down")
        await pilot.pause()
        assert screen.focused is not None and screen.focused is not left
        assert screen.page_row(screen.focused) > rows[-1], (rows, screen.page_row(screen.focused))
        (notes,) = [w for w in screen.query_one(StepNotes).query("*") if w.focusable]
        for _ in range(12):
            if screen.focused is notes:
                break
            await pilot.press("ctrl+down")
            await pilot.pause()
        assert screen.focused is notes
        for _ in range(4):
            await pilot.press("ctrl+down")
            await pilot.pause()
        said = [n for n in app._notifications if n.message == "No further section that way."]
        assert len(said) == 1, [n.message for n in app._notifications]


@pytest.mark.parametrize("key", ["f2", "f6", "f7", "f8"])
async def test_tab_walks_each_dialog_in_screen_order(tmp_path, key):
    """F2's options, F6's paste box, F7's scenarios and F8's history: Tab goes top to
    bottom, then left to right, each stop once, as on the steps."""
    async with opened_demo(demo_ctx(tmp_path, "en"), "A", (160, 48)) as (app, pilot):
        await pilot.press(key)
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        dialog = app.screen
        assert type(dialog).__name__ != "ImpactScreen"
        chain = list(dialog.focus_chain)
        assert chain
        # Where each stop is before anything scrolled (a scrolled list moves its rows, not
        # the dialog's frame).
        where = [(on_screen_at(app, w), w.id) for w in chain]
        assert where == sorted(where, key=lambda p: p[0]), (key, where)
        assert await tab_walk(app, pilot) == chain
