"""Typing is never navigation: a sentence typed on any step, with focus on any widget or on
nothing, changes nothing but the focused field.

The demo bundle (every panel loaded) gives each step its real widgets: golden-signal rows,
the drilldown and cohort tables, the changes list, buttons, drop-downs and text fields.
"""

from __future__ import annotations

import contextlib
import re
import time
from typing import Any

import pytest
from focus_look import strong_look
from textual import constants, events
from textual.keys import _character_to_key
from textual.widget import Widget
from textual.widgets import Input, TextArea

from cockpit.app import STEP_SCREENS, CockpitApp
from cockpit.collect.cache import screen_window
from demo_ctx import demo_ctx

SENTENCE = "Xid 79 on node 3: pod b, cpu 0 np"
"""Letters, digits, space and punctuation: ``n``/``b``/digits were step keys, ``c``/``o``/
``p`` panel actions."""


def _leaves(value: Any, prefix: str = "") -> dict[str, Any]:
    """``{"collect.title": "…", "path.0": "A", …}`` of a JSON-shaped value."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_leaves(v, f"{prefix}{k}."))
        return out
    if isinstance(value, list):
        out = {f"{prefix}len": len(value)}
        for i, v in enumerate(value):
            out.update(_leaves(v, f"{prefix}{i}."))
        return out
    return {prefix.rstrip("."): value}


def _fields(app: CockpitApp) -> dict[str, str]:
    """What every text field of the screen holds, by widget id."""
    out: dict[str, str] = {}
    for w in app.screen.query(Input):
        out[w.id or repr(w)] = w.value
    for a in app.screen.query(TextArea):
        out[a.id or repr(a)] = a.text
    return out


def _state(app: CockpitApp) -> dict[str, Any]:
    ctx = app.ctx
    assert ctx is not None and ctx.session is not None
    incident = ctx.session.incident.model_dump(mode="json")
    incident.pop("updated_at", None)
    return {
        "screen": app.screen,
        "step": app.current_step(),
        "incident": _leaves(incident),
        "baseline": screen_window(ctx).baseline,
        "cohort": [
            (getattr(p, "kind", None), getattr(p, "suspect", None))
            for p in app.screen.query("CohortPanel")
        ],
        "clipboard": app.clipboard,
        "fields": _fields(app),
    }


def _assert_only_typed(before: dict[str, Any], after: dict[str, Any], where: str) -> None:
    assert after["screen"] is before["screen"], where
    assert after["step"] == before["step"], where
    assert after["baseline"] == before["baseline"], where
    assert after["cohort"] == before["cohort"], where
    assert after["clipboard"] == before["clipboard"], where
    inc_b, inc_a = before["incident"], after["incident"]
    # The path (steps visited) and evidence (pins) are leaves like any other: the only
    # change allowed in the incident is the typed text in the focused field's value.
    changed = {k for k in inc_a.keys() | inc_b.keys() if inc_a.get(k) != inc_b.get(k)}
    # The change history records the typing: one field set, nothing deleted or restored.
    history = {k for k in changed if k.startswith("history.")}
    rows = {k.split(".")[1] for k in history if k != "history.len"}
    assert len({inc_a[f"history.{i}.target"] for i in rows}) <= 1, (where, history)
    assert {inc_a[f"history.{i}.op"] for i in rows} <= {"set"}, (where, history)
    changed -= history
    # One field at most: a list field (affected models) splits the sentence at its commas.
    assert len({re.sub(r"(\.\d+|\.len)+$", "", k) for k in changed}) <= 1, (where, changed)
    for key in changed:
        value = inc_a.get(key)
        if key.endswith(".len"):
            continue
        assert isinstance(value, str) and value.strip(), (where, key)
        assert SENTENCE in value or value.strip() in SENTENCE, (where, key, value)


async def _type(app: CockpitApp, pilot: Any) -> None:
    """Type the sentence as a terminal delivers it: key events in a burst, as fast typing
    (or a paste without bracketed paste) arrives."""
    for char in SENTENCE:
        key = char if char.isalnum() else _character_to_key(char)
        event = events.Key(key, char)
        event.set_sender(app)
        app.post_message(event)
    await pilot.pause()
    await pilot.pause()
    # On a loaded machine the burst is still being handled and stored: wait until the
    # incident stops changing (the text typed is all in, or nothing more is coming).
    last = None
    for _ in range(50):
        now = _leaves(app.ctx.session.incident.model_dump(mode="json"))
        if now == last:
            return
        last = now
        await pilot.pause(0.1)


async def _check_focus_on(app: CockpitApp, pilot: Any, widget: Widget | None) -> None:
    where = f"{app.current_step()} {widget!r}"
    if widget is None:
        app.screen.set_focus(None)
    else:
        widget.focus()
    await pilot.pause()
    focused = app.screen.focused
    before = _state(app)
    await _type(app, pilot)
    after = _state(app)
    _assert_only_typed(before, after, where)
    changed = {k for k, v in after["fields"].items() if before["fields"].get(k) != v}
    if isinstance(focused, Input) and (focused.type != "text" or focused.restrict):
        # A number field takes only the digits: still nowhere else.
        assert changed <= {focused.id}, where
    elif isinstance(focused, (Input, TextArea)):
        value = focused.value if isinstance(focused, Input) else focused.text
        assert SENTENCE in value, where
        # Focus selects nothing: the text already there is kept, not replaced.
        assert before["fields"][focused.id] in value, where
        assert changed == {focused.id}, where
    else:
        assert changed == set(), where


@pytest.mark.parametrize("step", list(STEP_SCREENS))
async def test_typing_on_every_widget_of_a_step_only_types(tmp_path, step):
    ctx = demo_ctx(tmp_path, "en")
    app = CockpitApp(ctx=ctx, start_step=step)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.current_step() == step
        path = list(ctx.session.incident.path)
        await _check_focus_on(app, pilot, None)
        chain = list(app.screen.focus_chain)
        assert len(chain) >= 2
        for widget in chain:
            if widget.is_mounted and widget.focusable:
                await _check_focus_on(app, pilot, widget)
        await _check_focus_on(app, pilot, None)
        assert ctx.session.incident.path == path


async def test_a_button_that_goes_away_hands_focus_to_the_next_field(tmp_path):
    """A's "Use as start" hides itself once used: focus moves on to the next field, so
    what is typed next is text in that field, not keys pressed into nowhere."""
    ctx = demo_ctx(tmp_path, "en")
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        button = app.screen.query_one("#breach-use")
        assert button.parent is not None and button.parent.has_class("-shown")
        button.focus()
        await pilot.pause()
        path = list(ctx.session.incident.path)
        await pilot.press("enter")
        await pilot.pause()
        assert ctx.session.incident.times.start is not None
        assert not button.parent.has_class("-shown")
        focused = app.screen.focused
        assert isinstance(focused, Input) and focused.id == "input-time_range"
        await _check_focus_on(app, pilot, focused)
        assert ctx.session.incident.path == path


async def test_a_button_that_goes_away_skips_a_field_that_holds_text(tmp_path):
    """When the next field already holds text (A's time range), "Use as start" hands focus
    past it: the next sentence is not glued onto text the user did not just type."""
    async with _opened(tmp_path, "A") as (app, pilot):
        time_range = app.screen.query_one("#input-time_range", Input)
        time_range.value = "last 2h"
        for _ in range(100):  # the field saves as typed, through its Changed message
            await pilot.pause(0.02)
            if "last 2h" in app.ctx.session.incident.model_dump_json():
                break
        assert "last 2h" in app.ctx.session.incident.model_dump_json()
        button = app.screen.query_one("#breach-use")
        button.focus()
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert not button.parent.has_class("-shown")
        focused = app.screen.focused
        assert focused is not None and focused is not time_range
        assert not isinstance(focused, Input | TextArea) or _text_of(focused) == ""
        await _check_focus_on(app, pilot, focused)
        assert time_range.value == "last 2h"


@contextlib.asynccontextmanager
async def _opened(tmp_path: Any, step: str) -> Any:
    """The demo incident open on ``step`` at 160×48, its panels loaded: ``(app, pilot)``."""
    ctx = demo_ctx(tmp_path, "en")
    app = CockpitApp(ctx=ctx, start_step=step)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        yield app, pilot


def _text_of(widget: Widget) -> str:
    return widget.value if isinstance(widget, Input) else widget.text


def _look(widget: Widget) -> tuple[Any, ...]:
    """What the eye sees of a widget's focus: its colours, border, outline and text style
    (and those of a drop-down's visible part, or of the panel around it)."""
    from cockpit.ui.panel import Panel

    parts = [widget, *widget.query("SelectCurrent")]
    parts += [a for a in widget.ancestors if isinstance(a, Panel)]
    return tuple(
        (
            str(w.styles.background),
            str(w.styles.border),
            str(w.styles.outline),
            str(w.styles.text_style),
            str(w.styles.color),
        )
        for w in parts
    )


@pytest.mark.parametrize("step", ["A", "C", "G"])
async def test_focus_is_visible_and_tab_walks_fields(tmp_path, step):
    """Nothing has focus when a step opens; the first Tab lands on its first field; every
    Tab stop looks different when focused; a table is one Tab stop; Esc leaves a field."""
    ctx = demo_ctx(tmp_path, "en")
    app = CockpitApp(ctx=ctx, start_step=step)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert screen.focused is None
        chain = list(screen.focus_chain)
        await pilot.press("tab")
        await pilot.pause()
        assert screen.focused is chain[0]
        assert not screen.query("GoldenRow:focus")  # the rows are one stop, not eleven
        if step == "A":
            assert [w.id for w in chain[:2]] == ["golden-rows", "golden-use-detect"] or [
                w.id for w in chain[:2]
            ] == ["golden-rows", "input-title"]
        for widget in chain:
            screen.set_focus(None)
            await pilot.pause()
            plain = _look(widget)
            widget.focus()
            await pilot.pause()
            assert _look(widget) != plain, repr(widget)
        field = next(w for w in chain if isinstance(w, (Input, TextArea)))
        field.focus()
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert screen.focused is None


async def test_pagedown_walks_through_cs_table_and_on_down_the_page(tmp_path):
    """C's table, wide enough for all its columns, is as tall as its rows (no scrolling of
    its own): PageDown from its first row moves through it a page at a time and then goes
    on down the page, never trapped inside it; PageUp comes back the same way. With
    nothing focused PageDown scrolls too."""
    from textual.containers import VerticalScroll
    from textual.widgets import DataTable

    ctx = demo_ctx(tmp_path, "en")
    app = CockpitApp(ctx=ctx, start_step="C")
    async with app.run_test(size=(160, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        body = app.screen.query_one("#step-body", VerticalScroll)
        await pilot.press("pagedown")
        await pilot.pause()
        assert body.scroll_y > 0
        body.scroll_home(animate=False)
        table = app.screen.query_one("#dd-table", DataTable)
        assert table.row_count > 20 and table.max_scroll_y == 0
        table.focus()
        table.move_cursor(row=0)
        await pilot.pause()
        rows_seen = [table.cursor_row]
        for _ in range(30):
            await pilot.press("pagedown")
            await pilot.pause()
            rows_seen.append(table.cursor_row)
            if body.scroll_y >= body.max_scroll_y:
                break
        assert table.cursor_row == table.row_count - 1
        assert len(set(rows_seen)) > 2  # a page at a time, not straight to the end
        assert body.scroll_y == body.max_scroll_y  # and past the table to the page's end
        for _ in range(30):
            await pilot.press("pageup")
            await pilot.pause()
            if body.scroll_y == 0:
                break
        assert table.cursor_row == 0 and body.scroll_y == 0
        assert app.current_step() == "C"
        # The last PageUp scrolled the table out of sight below: it gave focus away.
        assert app.screen.focused is not table
        table.focus(scroll_visible=False)
        await pilot.pause()
        # Down, row by row, keeps the highlighted row on screen: the page follows it.
        for _ in range(table.row_count - 1):
            await pilot.press("down")
        await pilot.pause()
        assert table.cursor_row == table.row_count - 1
        row_on_screen = table.region.y + table._get_row_region(table.cursor_row).y
        page = body.content_region
        assert page.y <= row_on_screen < page.y + page.height, (row_on_screen, page)


async def test_pagedown_walks_through_a_narrow_cs_table_and_on_down_the_page(tmp_path):
    """At 80×24 C's table, with the highlighted row shown under it, is kept to the
    window's height and scrolls by itself: PageDown pages through its rows and, at its
    last row, goes on down the page, never trapped inside it; PageUp comes back."""
    from textual.containers import VerticalScroll
    from textual.widgets import DataTable

    app = CockpitApp(ctx=demo_ctx(tmp_path, "en"), start_step="C")
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        body = app.screen.query_one("#step-body", VerticalScroll)
        table = app.screen.query_one("#dd-table", DataTable)
        table.focus()
        await pilot.pause()
        assert table.max_scroll_y > 0
        rows_seen = [table.cursor_row]
        for _ in range(40):
            await pilot.press("pagedown")
            await pilot.pause()
            rows_seen.append(table.cursor_row)
            if body.scroll_y >= body.max_scroll_y:
                break
        assert table.cursor_row == table.row_count - 1
        assert len(set(rows_seen)) > 2
        assert body.scroll_y == body.max_scroll_y
        for _ in range(40):
            await pilot.press("pageup")
            await pilot.pause()
            if body.scroll_y == 0:
                break
        assert table.cursor_row == 0 and body.scroll_y == 0
        assert app.current_step() == "C"


def test_every_command_key_is_what_a_terminal_sends():
    """The keys of steps and actions arrive as those keys from a real terminal: Alt+digit
    does not (``ESC 3`` reads as ``£``) nor Alt+B (``ESC b`` reads as Ctrl+Left), so none
    of the app's or the panels' commands is bound to them."""
    from textual._xterm_parser import XTermParser

    from cockpit.plugins.cohort import CohortPanel
    from cockpit.ui.drilldown_view import DrilldownView

    def keys(data: str) -> list[str]:
        """The keys Textual reads from ``data``, after the wait that tells a lone Esc
        from the start of a sequence."""
        parser = XTermParser()
        read = list(parser.feed(data))
        time.sleep(constants.ESCAPE_DELAY + 0.05)
        read += list(parser.tick())
        return [e.key for e in read if isinstance(e, events.Key)]

    sent = {
        "\x1b[1;3C": "alt+right",
        "\x1b[1;3D": "alt+left",
        "\x1bOS": "f4",
        "\x1bOR": "f3",
        "\x07": "ctrl+g",
        "\x1bp": "alt+p",
        "\x1bc": "alt+c",
        "\x1bo": "alt+o",
    }
    for data, key in sent.items():
        assert keys(data) == [key], (data, keys(data))
    assert keys("\x1b3") == ["pound_sign"] and keys("\x1bb") == ["ctrl+left"]
    bound = {
        k
        for cls in (CockpitApp, CohortPanel, DrilldownView)
        for b in cls.BINDINGS
        for k in b.key.split(",")
    }
    assert {"alt+right", "alt+left", "f3", "f4", "ctrl+g", "alt+p", "alt+c", "alt+o"} <= bound
    for key in bound:
        assert not (len(key) == 1 and key.isprintable()), key
        assert key not in {f"alt+{d}" for d in "0123456789b"}, key


async def test_ctrl_g_lists_the_steps_a_number_highlights_and_enter_goes(tmp_path):
    from testkit import make_ctx

    ctx = make_ctx(tmp_path, lang="zh")
    app = CockpitApp(ctx=ctx, start_step="B")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+g")
        await pilot.pause()
        menu = app.screen.query_one("#step-menu")
        assert menu.option_count == 9 and menu.highlighted == 1
        assert "4. D · " in str(menu.get_option_at_index(3).prompt)
        await pilot.press("4")
        await pilot.pause()
        # the number highlights; the list stays open and nothing moved
        assert app.screen.query_one("#step-menu") is menu and menu.highlighted == 3
        assert ctx.session.incident.path == ["B"]
        await pilot.press("enter")
        await pilot.pause()
        assert app.current_step() == "D"
        # a sentence typed into the list moves nothing, and its digits highlight nothing:
        # the current step (D) stays highlighted
        await pilot.press("ctrl+g", *"Xid 79 on node 3")
        await pilot.pause()
        assert app.screen.query_one("#step-menu").highlighted == 3
        assert ctx.session.incident.path == ["B", "D"]
        await pilot.press("escape")
        await pilot.pause()
        assert app.current_step() == "D"
        await pilot.press("ctrl+g", "down", "enter")
        await pilot.pause()
        assert app.current_step() == "E"
        await pilot.press("ctrl+g", "escape")
        await pilot.pause()
        assert app.current_step() == "E"
    assert ctx.session.incident.path == ["B", "D", "E"]


async def test_an_action_button_that_stays_hands_focus_to_a_field(tmp_path):
    """G's "Add hypothesis" and D's "Accept verdict" stay on screen after they act: focus
    moves to a text field, so the next sentence typed is text there and a second Enter
    does not add the row or record the verdict again."""
    ctx = demo_ctx(tmp_path, "en")
    app = CockpitApp(ctx=ctx, start_step="G")
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        screen.query_one("#hyp-statement").value = "the KV cache fills"
        screen.query_one("#hyp-falsifier").value = "usage stays under 90 %"
        screen.query_one("#hyp-add").focus()
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert len(ctx.session.incident.hypotheses) == 1
        focused = app.screen.focused
        assert isinstance(focused, Input) and focused.id == "hyp-statement"
        await pilot.press("enter")
        await pilot.pause()
        assert len(ctx.session.incident.hypotheses) == 1
        await _check_focus_on(app, pilot, focused)

    ctx = demo_ctx(tmp_path / "d", "en")
    app = CockpitApp(ctx=ctx, start_step="D")
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        accept = app.screen.query_one("#scope-accept")
        assert not accept.disabled
        accept.focus()
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert ctx.session.incident.scope_branch is not None
        # The verdict just accepted is in its field, shown; focus went on to a place that
        # does not glue the next sentence onto it (an empty field, or a widget that is no
        # field), and never back to the button.
        verdict = ctx.session.incident.scope_verdict
        assert verdict
        shown = app.screen.query_one("#input-scope_verdict", TextArea)
        assert shown.text == verdict
        focused = app.screen.focused
        assert focused is not None and focused is not accept
        assert (
            not isinstance(focused, TextArea | Input)
            or not _text_of(focused)
            or (focused is not shown and _text_of(focused) == "")
        )
        await _check_focus_on(app, pilot, focused)
        assert ctx.session.incident.scope_verdict == verdict


async def test_after_accepting_ds_verdict_focus_is_on_the_next_question(tmp_path):
    """D's "Accept verdict": focus lands on the answer it gave to the question under it
    (single or shared?), in sight, said; never on the notes at the bottom of the step."""
    ctx = demo_ctx(tmp_path, "en")
    app = CockpitApp(ctx=ctx, start_step="D")
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        accept = screen.query_one("#scope-accept")
        accept.focus()
        await pilot.pause()
        app.clear_notifications()
        await pilot.press("enter")
        await pilot.pause()
        await pilot.pause(0.1)
        branch = ctx.session.incident.scope_branch
        assert branch in ("single", "shared")
        focused = screen.focused
        assert focused is not None and focused.id == f"branch-{branch}", focused
        body = screen.query_one("#step-body")
        assert body.content_region.contains_region(focused.region)
        said = [str(n.message) for n in app._notifications]
        assert any("Focus is on the next question" in s for s in said), said
        assert ctx.session.incident.path[-1] == "D"


async def test_tab_after_escape_goes_on_from_the_field_left(tmp_path):
    """Escape leaves a field (typing then does nothing); the next Tab goes to the widget
    after that field, not back to the top of the step (where Enter would press another
    panel's button), and Shift+Tab to the one before it."""
    ctx = demo_ctx(tmp_path, "en")
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        chain = screen.focus_chain
        field = next(w for w in chain if isinstance(w, Input))
        index = chain.index(field)
        assert index > 0, "a widget before the field makes the test meaningful"
        field.focus()
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert screen.focused is None
        await pilot.press("tab")
        await pilot.pause()
        assert screen.focused is chain[index + 1]
        field.focus()
        await pilot.press("escape", "shift+tab")
        await pilot.pause()
        assert screen.focused is chain[index - 1]
        # Left with Escape, then the step is shown again: it opens at its first field.
        field.focus()
        await pilot.press("escape")
        app.goto("B")
        await pilot.pause()
        app.goto("A")
        await pilot.pause()
        assert app.screen is screen and screen.focused is None
        await pilot.press("tab")
        await pilot.pause()
        assert screen.focused is screen.focus_chain[0]


def _clearly_different(plain: list[tuple[Any, ...]], focused: list[tuple[Any, ...]]) -> bool:
    """Focus is seen at a glance: a border or outline appears or changes, the text is
    reversed, or the background moves by at least 100 levels (R+G+B), not a faint tint."""
    for (bg0, border0, outline0, style0), (bg1, border1, outline1, style1) in zip(
        plain, focused, strict=True
    ):
        if border0 != border1 or outline0 != outline1:
            return True
        if "reverse" in style1 and "reverse" not in style0:
            return True
        if sum(abs(a - b) for a, b in zip(bg0, bg1, strict=True)) >= 100:
            return True
    return False


async def _assert_focus_clear(app: CockpitApp, pilot: Any, where: str) -> int:
    screen = app.screen
    seen = 0
    for widget in list(screen.focus_chain):
        screen.set_focus(None)
        await pilot.pause()
        plain = strong_look(widget)
        widget.focus()
        await pilot.pause()
        assert _clearly_different(plain, strong_look(widget)), (where, repr(widget))
        seen += 1
    return seen


@pytest.mark.parametrize(
    ("step", "size"),
    [(step, (80, 24)) for step in STEP_SCREENS] + [(step, (160, 48)) for step in "AEH"],
)
async def test_every_focusable_widget_shows_focus_clearly(tmp_path, step, size):
    """Every Tab stop of every step, at both sizes: a one-line field without a border (the
    title, the time range, E's suspect, H's fields) shows focus as clearly as a bordered one."""
    ctx = demo_ctx(tmp_path, "en")
    app = CockpitApp(ctx=ctx, start_step=step)
    async with app.run_test(size=size) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert await _assert_focus_clear(app, pilot, f"{step} {size}") >= 1


async def test_a_drills_drop_downs_show_focus_and_keep_their_first_letter(tmp_path):
    """The drill form's compact drop-downs: focus is clear on the closed drop-down, and the
    open list does not draw its focus bar over the options' first letter."""
    from drill_ctx import drill_ctx
    from textual.widgets import OptionList

    ctx = drill_ctx(tmp_path, "worked_example", "en")
    app = CockpitApp(ctx=ctx, start_step="G")
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert await _assert_focus_clear(app, pilot, "drill G") >= 3
        select = app.screen.query_one("#drill-layer")
        select.focus()
        await pilot.press("enter")
        await pilot.pause()
        overlay = select.query_one(OptionList)
        assert overlay.has_focus
        assert str(overlay.styles.outline_left[0]) in {"", "none"}


async def test_a_time_the_program_rewrote_takes_typing_at_its_end_and_one_undo(tmp_path):
    """A time typed as ``13:04`` and Enter is written out whole by the program: the cursor
    goes to its end, so what is typed next is added after the date, never into its middle.
    When the field then cannot be read, one Ctrl+Z brings back the last good time, and the
    field is understood again."""
    async with _opened(tmp_path, "A") as (app, pilot):
        ctx = app.ctx
        field = app.screen.query_one("#time-start", Input)
        field.value = ""
        field.focus()
        await pilot.pause()
        await pilot.press(*"13:04", "enter")
        await pilot.pause()
        good = field.value
        assert good.endswith("13:04:00Z") and len(good) == len("2026-11-29 13:04:00Z")
        assert ctx.session.incident.times.start is not None
        assert field.cursor_position == len(good)
        await pilot.press(*" then more")
        await pilot.pause()
        assert field.value == good + " then more"
        await pilot.press("escape")
        await pilot.pause()
        assert field.has_class("-invalid")
        field.focus()
        await pilot.pause()
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert field.value == good
        assert not field.has_class("-invalid")
        await pilot.press("escape")
        await pilot.pause()
        assert not field.has_class("-invalid")
        assert "cannot" not in str(app.screen.query_one("#times-problems").render()).lower()


async def test_typing_into_the_middle_of_a_field_is_one_undo_step(tmp_path):
    """Keys typed in the middle of a field's text (after Home or Left) join one Ctrl+Z step,
    as keys typed at its end do; a value written by the program puts the cursor at its
    end."""
    from cockpit.ui.fields import TextInput

    ctx = demo_ctx(tmp_path, "en")
    app = CockpitApp(ctx=ctx, start_step="G")
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        field = app.screen.query_one("#hyp-statement", TextInput)
        field.focus()
        await pilot.pause()
        field.value = "the cache fills"
        await pilot.pause()
        assert field.cursor_position == len("the cache fills")
        await pilot.press("home", *"KV ")
        await pilot.pause()
        assert field.value == "KV the cache fills"
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert field.value == "the cache fills"


async def test_bs_form_empties_whole_and_a_missing_field_takes_focus(tmp_path):
    """B's "Add a change by hand": Enter with "What changed" empty says so and takes focus
    there (the sentence typed next fills it, not the time); a change added empties the
    whole form (time, kind, what changed) and focus waits in its first empty required field."""
    async with _opened(tmp_path, "B") as (app, pilot):
        ctx = app.ctx
        screen = app.screen
        when = screen.query_one("#chg-when", Input)
        summary = screen.query_one("#chg-summary", Input)
        changes = len(ctx.session.incident.changes)
        when.focus()
        await pilot.pause()
        await pilot.press(*"12:55", "enter")
        await pilot.pause()
        assert len(ctx.session.incident.changes) == changes
        assert str(screen.query_one("#chg-error").render()).strip()
        assert screen.focused is summary
        await pilot.press(*"driver 550", "enter")
        await pilot.pause()
        assert len(ctx.session.incident.changes) == changes + 1
        assert (when.value, summary.value) == ("", "")
        assert screen.query_one("#chg-kind").value == "manual"
        assert screen.focused is summary
        await _check_focus_on(app, pilot, summary)
        assert when.value == ""
        # Pressed with the button itself, the same.
        summary.value = ""
        when.value = "12:56"
        screen.query_one("#chg-add").focus()
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert screen.focused is summary and when.value == "12:56"


async def test_gs_enter_with_the_falsifier_missing_takes_focus_to_it(tmp_path):
    ctx = demo_ctx(tmp_path, "en")
    app = CockpitApp(ctx=ctx, start_step="G")
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        screen = app.screen
        statement = screen.query_one("#hyp-statement", Input)
        statement.focus()
        await pilot.press(*"the KV cache fills", "enter")
        await pilot.pause()
        assert ctx.session.incident.hypotheses == []
        assert screen.focused is screen.query_one("#hyp-falsifier", Input)
        await _check_focus_on(app, pilot, screen.focused)
        assert statement.value == "the KV cache fills"


async def test_a_list_shows_its_cursor_row_as_it_takes_focus(tmp_path):
    """B's list of changes found: tabbed into, it highlights its first row at once, and
    Alt+S marks that visible row (no arrow key needed first)."""
    from textual.widgets import OptionList

    async with _opened(tmp_path, "B") as (app, pilot):
        ctx = app.ctx
        screen = app.screen
        changes = screen.query_one("#changes-list", OptionList)
        assert changes.option_count >= 2
        screen.set_focus(None)
        await pilot.pause()
        chain = screen.focus_chain
        for _ in range(chain.index(changes) + 1):
            await pilot.press("tab")
        await pilot.pause()
        assert screen.focused is changes
        assert changes.highlighted == 0
        await pilot.press("alt+s")
        await pilot.pause(0.5)
        assert [c.suspect for c in ctx.session.incident.changes].count(True) == 1


async def test_the_palettes_export_writes_the_export_and_shows_its_preview(tmp_path):
    """Ctrl+P, "export", Enter: the command named "Export the incident record" writes the
    export file and opens its preview on step I, with a notice that says where the file
    is; it does not only move focus to the format drop-down."""
    from pathlib import Path

    async with _opened(tmp_path, "A") as (app, pilot):
        ctx = app.ctx
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Export the incident record")
        await pilot.pause(1.5)
        await pilot.press("enter")
        for _ in range(30):
            await pilot.pause(0.1)
            if any("Written to" in str(n.message) for n in app._notifications):
                break
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.current_step() == "I"
        [said] = [str(n.message) for n in app._notifications if "Written to" in str(n.message)]
        path = Path(said.split("Written to", 1)[1].strip())
        assert path.is_file() and ctx.session.incident.id in path.read_text()
        assert app.screen.query_one("#export-box").display


async def _arrived(app: CockpitApp, pilot: Any, step: str, where: str) -> None:
    """The step on screen is ``step``, at its top, with nothing focused (what is typed on
    arrival lands in no field already filled), and the first Tab lands on its first
    widget."""
    from textual.containers import VerticalScroll

    await app.workers.wait_for_complete()
    await pilot.pause(0.2)
    screen = app.screen
    assert app.current_step() == step, where
    body = screen.query_one("#step-body", VerticalScroll)
    assert body.scroll_y == 0, where
    assert screen.focused is None, (where, screen.focused)
    await pilot.press("tab")
    await pilot.pause()
    assert screen.focused is screen.focus_chain[0], (where, screen.focused)


@pytest.mark.parametrize("step", list(STEP_SCREENS))
async def test_every_step_opens_at_its_top_and_the_first_tab_lands_on_its_first_field(
    tmp_path, step
):
    """However a step is reached again (a jump, Alt+Left/Right, a closing step menu), it
    opens at its top with nothing focused and the first Tab on its first field, never
    half-scrolled where an earlier visit left it nor on the widget focused then (G's "Edit
    selected"), nor with focus in a filled field that would take what is typed next."""
    from textual.containers import VerticalScroll

    async with _opened(tmp_path, step) as (app, pilot):
        screen = app.screen
        # Leave the step scrolled down with focus on its last widget.
        screen.focus_chain[-1].focus()
        screen.query_one("#step-body", VerticalScroll).scroll_end(animate=False)
        await pilot.pause()
        other = "B" if step != "B" else "C"
        app.goto(other)
        await _arrived(app, pilot, other, "goto other")
        app.goto(step)
        await _arrived(app, pilot, step, "goto back")
        screen.focus_chain[-1].focus()
        await pilot.pause()
        await pilot.press("alt+right")
        await pilot.pause()
        if app.current_step() != step:
            await _arrived(app, pilot, app.current_step(), "alt+right")
            await pilot.press("alt+left")
            await _arrived(app, pilot, app.current_step(), "alt+left")
        # Ctrl+G to another step, with the step left scrolled down and focused low.
        screen = app.screen
        screen.focus_chain[-1].focus()
        await pilot.pause()
        target = "A" if app.current_step() != "A" else "I"
        await pilot.press("ctrl+g", "home" if target == "A" else "end", "enter")
        await _arrived(app, pilot, target, "step menu")
        await pilot.press("ctrl+g", "down" if target == "A" else "up", "enter")
        await _arrived(app, pilot, "B" if target == "A" else "H", "step menu again")
