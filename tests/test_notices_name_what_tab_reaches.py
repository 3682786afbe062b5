"""A notice that says where a key went names widgets in human words of the incident's
language (a field's label, a table's title, "the button"), never a class name or an
internal key; and the stop it says Tab goes on to is the one Tab then focuses, on every
step and in every dialog (F2, F6, F7, F8)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from textual.widget import Widget
from textual.widgets import Input, TextArea

from cockpit.app import STEP_SCREENS, CockpitApp
from cockpit.i18n import t
from cockpit.ui.focus import widget_name
from demo_ctx import demo_ctx, opened_demo

TAB_GOES = {"en": r"Tab goes on to “(.+?)”\.(?: |$)", "zh": r"按 Tab 前往“(.+?)”。"}
HERE = {"en": r"^“(.+?)” takes no text", "zh": r"^“(.+?)”不接受文字"}


def internal_names(widget: Widget) -> set[str]:
    """What a notice must never show for ``widget``: its classes' names and its id."""
    names = {cls.__name__ for cls in type(widget).__mro__}
    return names | ({widget.id} if widget.id else set())


def widget_classes() -> set[str]:
    """The names of every widget class loaded (Textual's and cockpit's)."""
    seen: set[str] = set()
    todo = [Widget]
    while todo:
        cls = todo.pop()
        seen.add(cls.__name__)
        todo.extend(cls.__subclasses__())
    return seen


GENERIC = {t("focus.kind.other", lang) for lang in ("en", "zh")}
"""The phrase a widget nothing on screen names would get ("the focused item")."""


def assert_human(name: str, widget: Widget, where: str) -> None:
    assert name and name != "-", (where, widget)
    assert name not in GENERIC, (where, widget)
    assert name not in internal_names(widget), (where, name)
    # No widget's class (GoldenRows, PlainTable), no CamelCase identifier, no message key.
    assert not set(re.findall(r"\w+", name)) & widget_classes(), (where, name)
    assert not re.fullmatch(r"[A-Z][a-z]+(?:[A-Z][a-z0-9]+)+", name), (where, name)
    assert not re.fullmatch(r"[a-z_]+(?:[.-][a-z_]+)+", name), (where, name)


def _said(app: CockpitApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def walk_stops(app: CockpitApp, pilot: Any, lang: str, where: str) -> int:
    """Focus each Tab stop of the screen in turn: its human name, and on a stop that takes
    no text, a letter typed says so naming it, and Tab goes to the stop the notice named.
    Returns how many notices were checked."""
    screen = app.screen
    checked = 0
    for widget in list(screen.focus_chain):
        if app.screen is not screen:
            break
        if widget not in screen.focus_chain:
            continue
        assert_human(widget_name(widget, lang), widget, where)
        if isinstance(widget, Input | TextArea):
            continue
        screen.set_focus(widget, scroll_visible=False)
        await pilot.pause()
        if screen.focused is not widget:
            continue
        screen._nowhere_said_at = -1e9  # a new burst
        app.clear_notifications()
        await pilot.press("x")
        await pilot.pause()
        assert not [s for s in _said(app) if any(g in s for g in GENERIC)], (where, widget)
        said = [s for s in _said(app) if re.search(HERE[lang], s)]
        assert len(said) == 1, (where, widget, _said(app))
        here = re.search(HERE[lang], said[0])
        named = re.search(TAB_GOES[lang], said[0])
        assert here and named, (where, said)
        assert here.group(1) == widget_name(widget, lang), (where, said)
        await pilot.press("tab")
        await pilot.pause()
        landed = screen.focused
        assert landed is not None, (where, widget)
        assert_human(named.group(1), landed, where)
        assert named.group(1) == widget_name(landed, lang), (where, widget, landed, said)
        checked += 1
    return checked


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("step", list(STEP_SCREENS))
async def test_every_step_names_its_stops_and_where_tab_goes(tmp_path, step, lang):
    async with opened_demo(demo_ctx(tmp_path, lang), step, (160, 48)) as (app, pilot):
        assert await walk_stops(app, pilot, lang, step) > 0


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("key", ["f2", "f6", "f7", "f8"])
async def test_every_dialog_names_its_stops_and_where_tab_goes(tmp_path, key, lang):
    ctx = demo_ctx(tmp_path, lang)
    ctx.session.set_text("title", "P99 high")  # F8 has a row to restore
    async with opened_demo(ctx, "B", (160, 48)) as (app, pilot):
        await pilot.press(key)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert await walk_stops(app, pilot, lang, key) > 0
        if key == "f7":  # the scenario chosen opens its checklist
            app.screen.set_focus(app.screen.focus_chain[0])
            await pilot.press("enter")
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert await walk_stops(app, pilot, lang, "f7 checklist") > 0


async def test_with_nothing_focused_the_notice_names_the_first_stop_tab_reaches(tmp_path):
    async with opened_demo(demo_ctx(tmp_path, "en"), "I", (160, 48)) as (app, pilot):
        screen = app.screen
        assert screen.focused is None
        app.clear_notifications()
        await pilot.press("x")
        await pilot.pause()
        said = [s for s in _said(app) if "Nothing has focus" in s]
        assert len(said) == 1, _said(app)
        named = re.search(r"Tab goes to “(.+?)”", said[0])
        assert named, said
        await pilot.press("tab")
        await pilot.pause()
        assert screen.focused is not None
        assert named.group(1) == widget_name(screen.focused, "en")
