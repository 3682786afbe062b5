"""Escape pressed and a key typed at once are two keys, never a panel chord: a person's
keys come in separate reads of the terminal, a chord's bytes in one (cockpit.ui.escape).
An Alt+O that did switch C's baseline is in the change history, and F8 puts the previous
baseline back."""

from __future__ import annotations

import time
from typing import Any

from textual import constants, events
from textual.widgets import DataTable

from cockpit.app import CockpitApp
from cockpit.session import BASELINE_TARGET
from cockpit.ui.escape import TypedKeysParser
from demo_ctx import demo_ctx


def read(*chunks: str) -> list[events.Key]:
    """The keys cockpit's parser reads from the terminal's ``chunks`` (one read each),
    after the wait that tells a lone Esc from the start of a sequence."""
    parser = TypedKeysParser()
    out: list[Any] = []
    for chunk in chunks:
        out += list(parser.feed(chunk))
    time.sleep(constants.ESCAPE_DELAY + 0.05)
    out += list(parser.tick())
    return [e for e in out if isinstance(e, events.Key)]


def test_a_lone_escape_then_a_key_is_two_keys_and_a_chord_stays_a_chord():
    def keys(*chunks: str) -> list[str]:
        return [e.key for e in read(*chunks)]

    assert keys("\x1b", "p") == ["escape", "p"]
    assert keys("\x1b", "o") == ["escape", "o"]
    assert keys("abc\x1b", "P") == ["a", "b", "c", "escape", "P"]
    assert keys("\x1b", "3") == ["escape", "3"]
    # one read: what the terminal sends for the chord
    assert keys("\x1bp") == ["alt+p"] and keys("\x1b[1;3C") == ["alt+right"]
    # a sequence the kernel split between two reads is still the key it encodes
    assert keys("\x1b", "[A") == ["up"] and keys("\x1b", "OS") == ["f4"]
    assert keys("\x1b") == ["escape"] and keys("\x1b", "\x1b[1;3C") == ["escape", "alt+right"]


async def test_escape_then_p_on_cs_table_pins_nothing_and_alt_p_still_pins(tmp_path):
    ctx = demo_ctx(tmp_path, "en")
    app = CockpitApp(ctx=ctx, start_step="C")
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        table = app.screen.query_one("#dd-table", DataTable)
        assert table.row_count > 0
        pinned = len(ctx.session.incident.evidence)
        path = list(ctx.session.incident.path)
        table.focus()
        await pilot.pause()
        for key in read("\x1b", "p"):
            app.post_message(key)
        await pilot.pause(0.3)
        assert len(ctx.session.incident.evidence) == pinned
        assert app.screen.focused is None  # Esc left the table
        assert app.current_step() == "C" and ctx.session.incident.path == path
        table.focus()
        await pilot.pause()
        for key in read("\x1bp"):
            app.post_message(key)
        await pilot.pause(0.3)
        assert len(ctx.session.incident.evidence) == pinned + 1


async def test_alt_o_switch_is_in_the_history_and_f8_puts_the_baseline_back(tmp_path):
    from cockpit.collect.cache import screen_window
    from cockpit.history import entry_line

    ctx = demo_ctx(tmp_path, "en")
    app = CockpitApp(ctx=ctx, start_step="C")
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        before = screen_window(ctx).baseline
        app.screen.query_one("#dd-table", DataTable).focus()
        await pilot.pause()
        await pilot.press("alt+o")
        await app.workers.wait_for_complete()
        await pilot.pause()
        after = screen_window(ctx).baseline
        assert after != before
        inc = ctx.session.incident
        [entry] = [h for h in inc.history if h.target == BASELINE_TARGET]
        assert (entry.old, entry.new) == (before, after)
        line = entry_line(inc, entry, "en")
        assert "baseline" in line and BASELINE_TARGET not in line, line
        assert any("was" in n.message and "F8" in n.message for n in app._notifications)
        await pilot.press("f8")
        await pilot.pause()
        history = app.screen
        table = history.query_one(DataTable)
        ids = [str(k.value) for k in table.rows]
        table.move_cursor(row=ids.index(entry.id))
        history.restore_selected()  # type: ignore[attr-defined]
        await pilot.pause()
        assert screen_window(ctx).baseline == before == inc.opened_with.baseline
        await pilot.press("escape")
        view = app.screen.query_one("DrilldownView")
        # The change reaches the screen after the app's coalescing timer, and the fetch
        # it starts runs in a worker: wait for the result, not for a fixed time.
        for _ in range(600):
            await app.workers.wait_for_complete()
            shown = view.data.window.baseline  # type: ignore[attr-defined]
            if shown == before:
                break
            await pilot.pause(0.1)
        assert shown == before
