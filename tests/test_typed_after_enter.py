"""What a fast typist types right after Enter is never lost or misplaced: the row saved is
exactly what the field held when Enter was pressed, what was typed after it stays in the
field once the form is emptied, and a row that was added is never said to be missing a
field."""

from __future__ import annotations

import pytest
from textual import events
from textual.widgets import Input

from cockpit.app import CockpitApp
from demo_ctx import demo_ctx
from testkit import make_ctx


def _key(c: str) -> events.Key:
    name = {" ": "space", "-": "minus", ":": "colon", "/": "slash"}.get(c, c)
    return events.Key(name, c)


async def _type(pilot, text: str) -> None:
    await pilot.press(*[_key(c).key for c in text])


async def _burst(app: CockpitApp, pilot, after_enter: str) -> None:
    """Enter and the next keys at a terminal's speed: all of them reach the app before
    the first is handled (as keys sent by tmux or typed without a pause do)."""
    driver = app._driver
    assert driver is not None
    for event in [events.Key("enter", "\r"), *(_key(c) for c in after_enter)]:
        event.set_sender(app)
        driver.send_message(event)
    for _ in range(6):
        await pilot.pause()


def _notices(app: CockpitApp) -> list[str]:
    return [n.message for n in app._notifications]


MISSING = ("is missing", "missing:")


async def _add_then_type_ahead(app, pilot, fields: dict[str, str], last: str, ahead: str):
    screen = app.screen
    for fid, text in fields.items():
        field = screen.query_one(f"#{fid}", Input)
        field.focus()
        await pilot.pause()
        await _type(pilot, text)
    field = screen.query_one(f"#{last}", Input)
    field.focus()
    await pilot.pause()
    app.clear_notifications()
    await _burst(app, pilot, ahead)
    return field


async def test_a_timeline_note_saves_what_enter_submitted_and_keeps_what_followed(tmp_path):
    ctx = demo_ctx(tmp_path, "en")
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        field = await _add_then_type_ahead(
            app, pilot, {"tl-text": "Cordoned gpu-node-b at 1505"}, "tl-text", "Deleted pod"
        )
        texts = [e.text for e in ctx.session.incident.timeline]
        assert "Cordoned gpu-node-b at 1505" in texts, texts
        assert field.value == "Deleted pod"
        said = _notices(app)
        assert not any(m in s for s in said for m in MISSING), said
        # The keys typed ahead are the next note's start: Enter adds that one whole.
        await _type(pilot, " lfdea")
        await pilot.press("enter")
        await pilot.pause()
        assert ctx.session.incident.timeline[-1].text == "Deleted pod lfdea" or any(
            e.text == "Deleted pod lfdea" for e in ctx.session.incident.timeline
        )


async def test_g_hypothesis_saves_what_enter_submitted_and_keeps_what_followed(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="G")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        field = await _add_then_type_ahead(
            app,
            pilot,
            {"hyp-statement": "node b lost a GPU", "hyp-falsifier": "P99 stays after cordon"},
            "hyp-falsifier",
            "Queue builds",
        )
        [hyp] = ctx.session.incident.hypotheses
        assert (hyp.statement, hyp.falsifier) == ("node b lost a GPU", "P99 stays after cordon")
        # The next hypothesis is typed from its statement: what followed the Enter is there.
        assert field.value == ""
        assert app.screen.query_one("#hyp-statement", Input).value == "Queue builds"
        said = _notices(app)
        assert not any(m in s for s in said for m in MISSING), said


async def test_i_action_item_saves_what_enter_submitted_and_keeps_what_followed(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="I")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        field = await _add_then_type_ahead(
            app, pilot, {"act-what": "Alert on Xid 79"}, "act-what", "Add a drill"
        )
        assert [a.what for a in ctx.session.incident.actions] == ["Alert on Xid 79"]
        assert field.value == "Add a drill"
        said = _notices(app)
        assert not any(m in s for s in said for m in MISSING), said


async def test_h_experiment_saves_what_enter_submitted_and_says_only_it_was_logged(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="H")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        field = await _add_then_type_ahead(
            app, pilot, {"exp-variable": "cordon node b"}, "exp-variable", "x"
        )
        [exp] = ctx.session.incident.experiments
        assert exp.variable == "cordon node b"
        said = _notices(app)
        assert not any(m in s for s in said for m in MISSING), said
        assert any("logged" in s.lower() for s in said), said
        assert field.value in ("x", "")


@pytest.mark.parametrize("step", ["A", "G", "H", "I"])
async def test_a_row_added_by_enter_is_never_said_to_miss_a_field(tmp_path, step):
    """Typed at a person's pace: Enter adds the row and no "missing" notice follows."""
    forms = {
        "A": ({"tl-text": "restarted the exporter"}, "tl-text"),
        "G": ({"hyp-statement": "Xid 79", "hyp-falsifier": "no Xid in dmesg"}, "hyp-falsifier"),
        "H": ({"exp-variable": "cordon node b"}, "exp-variable"),
        "I": ({"act-what": "Alert on Xid 79"}, "act-what"),
    }
    fields, last = forms[step]
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step=step)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        before = ctx.session.incident.model_dump_json()
        await _add_then_type_ahead(app, pilot, fields, last, "")
        assert ctx.session.incident.model_dump_json() != before
        said = _notices(app)
        assert not any(m in s for s in said for m in MISSING), said


@pytest.mark.parametrize(("fid", "text", "more"), [("input-title", "TTFT P99 x2", "GPU 0")])
async def test_enter_in_a_field_saved_as_typed_says_so_and_ends_the_undo_step(
    tmp_path, fid, text, more
):
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        field = app.screen.query_one(f"#{fid}", Input)
        field.focus()
        await pilot.pause()
        await _type(pilot, text)
        app.clear_notifications()
        await pilot.press("enter")
        await pilot.pause()
        said = _notices(app)
        assert any("is saved" in s and "Tab goes on to" in s for s in said), said
        assert not any("focused item" in s for s in said), said
        await _type(pilot, " " + more)
        assert field.value == f"{text} {more}"
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert field.value == text


async def test_enter_in_a_time_says_it_is_saved_and_keeps_what_was_typed_after(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        field = app.screen.query_one("#time-start", Input)
        field.focus()
        await pilot.pause()
        await pilot.press("ctrl+a", "backspace")
        await _type(pilot, "2026-11-29 12:40")
        app.clear_notifications()
        await _burst(app, pilot, "1")
        start = ctx.session.incident.times.start
        assert start is not None and (start.hour, start.minute) == (12, 40)
        assert field.value.endswith("Z1"), field.value
        said = _notices(app)
        assert any("is saved" in s for s in said), said
