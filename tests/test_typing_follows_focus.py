"""What is typed right after Enter follows focus: when the form Enter submitted takes
focus to another field (a form that refused goes to its missing field, a form emptied by
the row it added is typed again from its first), the keys typed after the Enter are in
that field, in order, and none is left behind in the field Enter was pressed in.

Enter and the keys after it are sent as a terminal sends them in one read (``tmux
send-keys``, a fast typist): all reach the app before the first is handled, so the first
keys after Enter reach the old field before the form has moved focus."""

from __future__ import annotations

import pytest
from textual import events
from textual.widgets import Input

from cockpit.app import CockpitApp
from cockpit.ui.nowhere import tab_goes_to
from testkit import make_ctx
from tests.test_typed_after_enter import _burst, _key, _type


async def _fill(app, pilot, fields: dict[str, str], enter_in: str) -> Input:
    """Type each field's text, then put focus in ``enter_in``."""
    for fid, text in fields.items():
        app.screen.query_one(f"#{fid}", Input).focus()
        await pilot.pause()
        await _type(pilot, text)
    field = app.screen.query_one(f"#{enter_in}", Input)
    field.focus()
    await pilot.pause()
    return field


def _values(app, ids: tuple[str, ...]) -> dict[str, str]:
    return {i: app.screen.query_one(f"#{i}", Input).value for i in ids}


CASES = {
    # step, fields typed, Enter pressed in, typed after Enter, fields to read, expected
    # text in each, field with focus after
    "G refused: the refutation is missing": (
        "G",
        {"hyp-statement": "node b lost a GPU"},
        "hyp-statement",
        "P99 stays after cordon",
        {"hyp-statement": "node b lost a GPU", "hyp-falsifier": "P99 stays after cordon"},
        "hyp-falsifier",
    ),
    "G added: the next hypothesis starts in its statement": (
        "G",
        {"hyp-statement": "node b lost a GPU", "hyp-falsifier": "P99 stays"},
        "hyp-falsifier",
        "Queue builds",
        {"hyp-statement": "Queue builds", "hyp-falsifier": ""},
        "hyp-statement",
    ),
    "I refused: the action is missing": (
        "I",
        {"act-owner": "sre-oncall"},
        "act-owner",
        "Alert on Xid 79",
        {"act-what": "Alert on Xid 79", "act-owner": "sre-oncall", "act-deadline": ""},
        "act-what",
    ),
    "I added from the deadline: the next action starts in its first field": (
        "I",
        {"act-what": "Alert on Xid 79", "act-deadline": "2026-12-15"},
        "act-deadline",
        "Add a drill",
        {"act-what": "Add a drill", "act-owner": "", "act-deadline": ""},
        "act-what",
    ),
    "A refused: the error sample is missing": (
        "A",
        {"err-request": "req-7"},
        "err-request",
        "CUDA error: an illegal memory access",
        {"err-text": "CUDA error: an illegal memory access", "err-request": "req-7"},
        "err-text",
    ),
    "A added from the job ID: the next sample starts in its text": (
        "A",
        {"err-text": "CUDA error", "err-job": "job-9"},
        "err-job",
        "NCCL timeout",
        {"err-text": "NCCL timeout", "err-request": "", "err-job": ""},
        "err-text",
    ),
    "H logged: its result is typed next": (
        "H",
        {"exp-variable": "cordon node b"},
        "exp-variable",
        "P99 back to 300 ms",
        {"exp-variable": "", "exp-after": "P99 back to 300 ms"},
        "exp-after",
    ),
    "H logged from its old value: its result is typed next": (
        "H",
        {"exp-variable": "max_num_seqs", "exp-from": "256"},
        "exp-from",
        "P99 back to 300 ms",
        {"exp-variable": "", "exp-from": "", "exp-after": "P99 back to 300 ms"},
        "exp-after",
    ),
    "B refused: the change's summary is missing": (
        "B",
        {"chg-when": "12:40"},
        "chg-when",
        "rolled out v2",
        {"chg-when": "12:40", "chg-summary": "rolled out v2"},
        "chg-summary",
    ),
    "B added from its time: the next change starts in its summary": (
        "B",
        {"chg-summary": "rolled out v2", "chg-when": "12:40"},
        "chg-when",
        "drained node b",
        {"chg-when": "", "chg-summary": "drained node b"},
        "chg-summary",
    ),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
async def test_what_is_typed_after_enter_follows_the_focus_the_form_moved(tmp_path, case):
    step, fields, enter_in, ahead, expected, focus_after = CASES[case]
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step=step)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        await _fill(app, pilot, fields, enter_in)
        await _burst(app, pilot, ahead)
        assert _values(app, tuple(expected)) == expected
        assert app.focused is not None and app.focused.id == focus_after
        # The text that followed is typed on as one step: one Ctrl+Z takes it all away,
        # and the field Enter was pressed in has no step of it to undo.
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert app.screen.query_one(f"#{focus_after}", Input).value == ""


async def test_the_text_that_followed_is_typed_on_where_focus_went(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="G")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await _fill(app, pilot, {"hyp-statement": "node b lost a GPU"}, "hyp-statement")
        await _burst(app, pilot, "P99 stays")
        await _type(pilot, " after cordon")
        assert _values(app, ("hyp-statement", "hyp-falsifier")) == {
            "hyp-statement": "node b lost a GPU",
            "hyp-falsifier": "P99 stays after cordon",
        }
        await pilot.press("enter")
        await pilot.pause()
        [hyp] = ctx.session.incident.hypotheses
        assert (hyp.statement, hyp.falsifier) == ("node b lost a GPU", "P99 stays after cordon")


async def test_text_typed_after_enter_then_tab_stays_where_it_was_typed(tmp_path):
    """A's error sample typed in its first field: Enter adds it and focus stays there; the
    text typed after it and then Tab are the user's own moves, so that text stays in the
    field and only what follows the Tab is in the next one."""
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        note = await _fill(app, pilot, {"err-text": "CUDA error"}, "err-text")
        after = tab_goes_to(app.screen, note)
        assert isinstance(after, Input) and not after.value
        driver = app._driver
        keys = [events.Key("enter", "\r"), *(_key(c) for c in "Deleted"), events.Key("tab", "\t")]
        for event in [*keys, _key("x")]:
            event.set_sender(app)
            driver.send_message(event)
        for _ in range(8):
            await pilot.pause()
        assert [e.text for e in ctx.session.incident.collect.error_samples] == ["CUDA error"]
        assert (note.value, after.value) == ("Deleted", "x")
