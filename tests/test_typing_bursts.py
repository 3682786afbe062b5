"""Text typed in one burst lands in the field that had focus when it was typed: a Tab
right after typing moves on before the next key is handed on, and edits apply in order.

The keys are posted to the app all at once, as the terminal driver does when they arrive
in one read (``tmux send-keys``, a fast typist on a loaded machine); ``pilot.press``
waits for each key to be handled and so never shows the race."""

from __future__ import annotations

from textual import events
from textual.widgets import Input, TextArea

from cockpit.app import CockpitApp
from testkit import make_ctx

CHARS = {"space": " ", "tab": "\t", "backspace": "\x7f"}


async def burst(app, pilot, keys: list[str]) -> None:
    """Post ``keys`` in one go, then wait until the app has handled all of them."""
    for key in keys:
        char = key if len(key) == 1 else CHARS.get(key)
        app.post_message(events.Key("space" if key == " " else key, char))
    await pilot.pause()
    for _ in range(400):
        if not app.keys_pending:
            break
        await pilot.pause(0.05)
    await pilot.pause()


async def test_tab_after_a_burst_of_typing_moves_to_the_next_text_area(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="I")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        first = app.screen.query_one("#input-root_cause_technical", TextArea)
        first.focus()
        await pilot.pause()
        keys = [*"Hello world. Second partXX", "backspace", "backspace", ".", "tab", *"NEXT"]
        await burst(app, pilot, keys)
        second = app.screen.query_one("#input-root_cause_systemic", TextArea)
        assert first.text == "Hello world. Second part."
        assert second.text == "NEXT"
        assert ctx.session.get_text("root_cause_technical") == "Hello world. Second part."
        assert ctx.session.get_text("root_cause_systemic") == "NEXT"


async def test_tab_after_a_burst_moves_along_the_action_item_row(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="I")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.screen.query_one("#act-what", Input).focus()
        await pilot.pause()
        keys = [*"Add alert", "tab", *"sre-oncall", "tab", *"2026-12-15", "tab", *"alert fires"]
        await burst(app, pilot, keys)
        values = {
            i: app.screen.query_one(f"#{i}", Input).value
            for i in ("act-what", "act-owner", "act-deadline", "act-verify")
        }
        assert values == {
            "act-what": "Add alert",
            "act-owner": "sre-oncall",
            "act-deadline": "2026-12-15",
            "act-verify": "alert fires",
        }


async def test_a_step_change_then_tab_then_typing_lands_in_the_first_field(tmp_path):
    # F4 (next step) + Tab + text in one burst: the Tab waits for the new step, lands on
    # its first field, and the text is in it, not lost on the step left behind
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="G")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await burst(app, pilot, ["f4", "tab", *"max_num_seqs"])
        assert app.screen.name == "step-H"
        assert app.focused is app.screen.query_one("#exp-variable", Input)
        assert app.focused.value == "max_num_seqs"
        await burst(app, pilot, ["f3", "tab", *"KV cache full"])
        assert app.screen.name == "step-G"
        assert app.focused is app.screen.query_one("#hyp-statement", Input)
        assert app.focused.value == "KV cache full"
