"""A key that goes nowhere says where typing goes, and the notice says what Tab does:
after Escape left a field it names the stop Tab goes on to (never "the first field" when
Tab goes elsewhere); a key typed on a button, table or list says it takes no text and
names the next field to type in, once per burst."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widget import Widget
from textual.widgets import Button, DataTable, Input

from cockpit.app import CockpitApp
from cockpit.ui.focus import stop_name
from cockpit.ui.table import PlainTable
from demo_ctx import demo_ctx, opened_demo


def _said(app: CockpitApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def _press_and_settle(pilot: Any, key: str) -> None:
    """Press ``key`` and wait until the page has scrolled and laid out again before focus
    is judged (on a busy machine one pause can end before the scroll's completion runs)."""
    await pilot.press(key)
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()
    await pilot.pause()


async def test_after_escape_the_notice_names_the_stop_tab_goes_to(tmp_path):
    """A: Escape in a field, a key typed, then Tab: focus lands on the stop the notice
    named, and the notice does not promise the step's first field."""
    ctx = demo_ctx(tmp_path, "en")
    async with opened_demo(ctx, "A", (160, 48)) as (app, pilot):
        screen = app.screen
        chain = screen.focus_chain
        fields = [w for w in chain if isinstance(w, Input)]
        field = fields[1]
        field.focus()
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        app.clear_notifications()
        await pilot.press("x")
        await pilot.pause()
        said = _said(app)
        assert len(said) == 1, said
        assert "first field" not in said[0]
        await pilot.press("tab")
        await pilot.pause()
        landed = screen.focused
        assert landed is chain[chain.index(field) + 1]
        assert stop_name(landed) and f"Tab goes on to “{stop_name(landed)}”" in said[0], said
        assert stop_name(field) in said[0]


async def test_a_key_typed_on_a_button_or_table_says_it_went_nowhere_once_per_burst(tmp_path):
    """G's "Add hypothesis" button and its table: a sentence typed there changes nothing
    and one notice says that it takes no text and which field is next to type in."""
    ctx = demo_ctx(tmp_path, "en")
    async with opened_demo(ctx, "G", (160, 48)) as (app, pilot):
        screen = app.screen
        button = screen.query_one("#hyp-add", Button)
        button.focus()
        await pilot.pause()
        app.clear_notifications()
        await pilot.press(*"it is the nic")
        await pilot.pause()
        said = _said(app)
        assert len(said) == 1, said
        assert "Add hypothesis" in said[0] and "takes no text" in said[0], said
        assert ctx.session.incident.hypotheses == []
        table = screen.query_one("#hyp-table", DataTable)
        table.focus()
        await pilot.pause()
        app.clear_notifications()
        screen._nowhere_said_at = -1e9  # a new burst
        await pilot.press(*"xid")
        await pilot.pause()
        said = _said(app)
        assert len(said) == 1 and "takes no text" in said[0], said
        # The next field to type in after the table is named as the screen labels it.
        assert "“" in said[0] and "”" in said[0]


async def test_a_key_typed_in_a_field_says_nothing(tmp_path):
    ctx = demo_ctx(tmp_path, "en")
    async with opened_demo(ctx, "G", (160, 48)) as (app, pilot):
        app.screen.query_one("#hyp-statement", Input).focus()
        await pilot.pause()
        app.clear_notifications()
        await pilot.press(*"nic down")
        await pilot.pause()
        assert _said(app) == []


async def test_scrolling_the_page_never_leaves_focus_out_of_sight(tmp_path):
    """A at 80x24: focus in "Affected tenants", then Down and PageDown scroll the page (the
    field does not take them): focus follows into sight, and the word typed next lands in
    a widget the eye can see (or nowhere, said), never in the field scrolled away."""
    ctx = demo_ctx(tmp_path, "en")
    async with opened_demo(ctx, "A", (80, 24)) as (app, pilot):
        screen = app.screen
        body = screen.query_one("#step-body")
        tenants = screen.query_one("#input-affected_tenants", Input)
        tenants.focus()
        await pilot.pause()
        for key in ["pagedown", "down", "down", "pagedown", "pagedown", "pageup", "up"]:
            await _press_and_settle(pilot, key)
            focused = screen.focused
            assert focused is None or body.content_region.contains_region(focused.region), (
                key,
                focused,
            )
        assert screen.focused is not tenants
        await pilot.press(*"tenant x")
        await pilot.pause()
        assert tenants.value == ""
        assert ctx.session.incident.collect.affected_tenants == []


@pytest.mark.parametrize("frame", [-20, 6, 18, 30])
async def test_a_key_that_scrolls_while_the_page_still_scrolls_keeps_focus_in_sight(
    tmp_path, frame
):
    """Focus moved to a field scrolls the page to it, animated; PageDown pressed while a
    frame of that animation has moved the page and it is not laid out there yet still
    hands focus to a widget in sight (the regions it judges are of the position it pages
    from), never leaves it in the field scrolled away."""
    ctx = demo_ctx(tmp_path, "en")
    async with opened_demo(ctx, "A", (80, 24)) as (app, pilot):
        screen = app.screen
        body = screen.query_one("#step-body")
        tenants = screen.query_one("#input-affected_tenants", Input)
        tenants.focus(scroll_visible=False)
        body.scroll_to(y=30, animate=False)
        await pilot.pause()
        body.scroll_to_center(tenants, animate=True, duration=30)
        await pilot.pause()
        assert app.animator.is_being_animated(body, "scroll_y")
        # what one frame of the animation does before the page is laid out again
        body.scroll_y += frame
        body.action_page_down()
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        await pilot.pause()
        focused = screen.focused
        assert focused is None or body.content_region.contains_region(focused.region), (
            focused,
            focused.region,
        )


def _in_sight(body: Widget, widget: Widget | None) -> bool:
    """Whether ``widget`` (focused) is seen on ``body``'s window: a table by the line of
    its cursor's row, any other widget whole; nothing focused counts."""
    if widget is None:
        return True
    if isinstance(widget, PlainTable):
        line = widget.region.y + widget._get_row_region(widget.cursor_row).y
        line -= round(widget.scroll_y)
        return body.content_region.y <= line < body.content_region.bottom
    return body.content_region.contains_region(widget.region)


async def test_paging_past_a_table_hands_focus_to_a_widget_in_sight(tmp_path):
    """A table as tall as its rows, focused, at its last row: PageDown goes on paging the
    page, and focus follows into sight (the table does not stay focused above the top);
    PageUp back to the top likewise."""
    ctx = demo_ctx(tmp_path, "en")
    async with opened_demo(ctx, "A", (80, 24)) as (app, pilot):
        screen = app.screen
        body = screen.query_one("#step-body")
        screen.query_one("#err-table").focus()
        await pilot.pause()
        seen = set()
        for key in ["end", "pagedown", "pagedown", "pagedown", "pageup", "pageup", "pageup"]:
            await _press_and_settle(pilot, key)
            focused = screen.focused
            assert _in_sight(body, focused), (key, focused, focused and focused.region)
            seen.add(focused.id if focused else None)
        assert len(seen) > 1, seen


async def test_editing_a_row_says_which_and_escape_cancels_it(tmp_path):
    """G's "Edit selected": the form says which row it holds and how to leave (Enter
    saves, Esc cancels), the cursor is after the text; Escape cancels the edit and the
    row keeps its text."""
    from textual.widgets import Static

    ctx = demo_ctx(tmp_path, "en")
    ctx.session.add_hypothesis("the KV cache fills", "usage stays under 90 %")
    async with opened_demo(ctx, "G") as (app, pilot):
        screen = app.screen
        screen.query_one("#hyp-table", DataTable).focus()
        await pilot.pause()
        screen.query_one("#hyp-edit", Button).press()
        await pilot.pause()
        said = str(screen.query_one("#hyp-error", Static).render())
        assert "Editing hypothesis 1" in said and "Enter saves, Esc cancels" in said, said
        field = screen.query_one("#hyp-statement", Input)
        assert screen.focused is field and field.cursor_position == len(field.value)
        await pilot.press(*" fast", "escape")
        await pilot.pause()
        assert ctx.session.incident.hypotheses[0].statement == "the KV cache fills"
        assert field.value == "" and screen.editor.editing is None
        assert "cancelled" in str(screen.query_one("#hyp-error", Static).render())
        assert str(screen.query_one("#hyp-add", Button).label) == "Add hypothesis"


async def _typed_lands_or_is_said(app: CockpitApp, pilot, where: str) -> None:
    """A letter typed now shows in the focused field, or a notice says it went nowhere."""
    from textual.widgets import TextArea

    await app.workers.wait_for_complete()
    await pilot.pause()
    screen = app.screen
    focused = screen.focused
    before = (
        focused.value
        if isinstance(focused, Input)
        else focused.text
        if isinstance(focused, TextArea)
        else None
    )
    screen._nowhere_said_at = -1e9  # a new burst
    app.clear_notifications()
    await pilot.press("q")
    await pilot.pause()
    if before is not None:
        after = focused.value if isinstance(focused, Input) else focused.text
        assert after != before and "q" in after, (where, focused)
        return
    said = _said(app)
    assert any("goes nowhere" in s for s in said), (where, focused, said)


@pytest.mark.parametrize("key", ["f2", "f6", "f7", "f8"])
async def test_typing_after_each_button_of_a_dialog_lands_or_says_where(tmp_path, key):
    """F2's copy and "I did this", F6's Explain and Pin, F7's scenario list, F8's Restore and
    Close: after Enter on each, a letter typed shows in a field or says it went nowhere."""
    ctx = demo_ctx(tmp_path, "en")
    ctx.session.set_text("title", "P99 high")  # F8 has a row to restore
    async with opened_demo(ctx, "B", (160, 48)) as (app, pilot):
        step_screen = app.screen

        async def open_dialog() -> None:
            while app.screen is not step_screen:
                app.pop_screen()
                await pilot.pause()
            await pilot.press(key)
            await app.workers.wait_for_complete()
            await pilot.pause()
            if key == "f6":
                area = app.screen.query_one("#paste-text")
                area.text = "CUDA out of memory. Tried to allocate 2.00 GiB"

        await open_dialog()
        await _typed_lands_or_is_said(app, pilot, f"{key} opened")
        ids = [w.id for w in app.screen.focus_chain if isinstance(w, Button) and w.id]
        if key == "f7":
            ids = ["pb-menu"]
        assert ids, key
        for wid in ids:
            await open_dialog()
            app.screen.query_one(f"#{wid}").focus()
            await pilot.pause()
            await pilot.press("enter")
            await _typed_lands_or_is_said(app, pilot, f"{key} after {wid}")


@pytest.mark.parametrize("field_id", ["hyp-statement", "input-notes-G"])
async def test_a_went_nowhere_notice_is_taken_down_once_typing_lands_in_a_field(tmp_path, field_id):
    """Typed on G's button (said to go nowhere), then typed into a field: the notice
    goes at the first key that lands, not seconds later; a key that then goes nowhere
    again is said again at once."""
    ctx = demo_ctx(tmp_path, "en")
    async with opened_demo(ctx, "G", (160, 48)) as (app, pilot):
        screen = app.screen
        button = screen.query_one("#hyp-add", Button)
        button.focus()
        await pilot.pause()
        app.clear_notifications()
        await pilot.press(*"it is")
        await pilot.pause()
        [nowhere] = _said(app)
        screen.query_one(f"#{field_id}").focus()
        await pilot.pause()
        assert nowhere in _said(app)  # focus alone says nothing new: the notice stays
        await pilot.press("x")
        await pilot.pause()
        assert nowhere not in _said(app), _said(app)
        button.focus()
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert nowhere in _said(app)


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_tab_goes_where_the_notice_said_even_when_the_stops_changed_since(tmp_path, lang):
    """D opened, nothing focused, a key typed while "Accept verdict" still waits for its
    data (not a stop yet): the notice names the first stop then; once the button can take
    focus (before it in the order), Tab still lands on the stop the notice named."""
    ctx = demo_ctx(tmp_path, lang)
    async with opened_demo(ctx, "D", (160, 48)) as (app, pilot):
        screen = app.screen
        accept = screen.query_one("#scope-accept", Button)
        accept.disabled = True
        screen.set_focus(None)
        await pilot.pause()
        named = screen.focus_chain[0]
        app.clear_notifications()
        await pilot.press("x")
        await pilot.pause()
        said = _said(app)
        assert len(said) == 1 and stop_name(named) in said[0], said
        accept.disabled = False
        await pilot.pause()
        assert screen.focus_chain[0] is accept  # the order changed under the notice
        await pilot.press("tab")
        await pilot.pause()
        assert screen.focused is named
        await pilot.press("tab")  # the promise is kept once; then Tab moves on
        await pilot.pause()
        assert screen.focused is not named and screen.focused is not None
