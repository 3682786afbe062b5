"""Enter in a field acts on that field's own form only: it submits the form it belongs to
(a timeline note, an error sample, a hypothesis, an experiment, an action item, a change)
and never presses a button or picks a row elsewhere; with a required field empty it says
what is missing."""

from __future__ import annotations

import pytest
from textual.widgets import Button, Input

from cockpit.app import STEP_SCREENS, CockpitApp
from demo_ctx import demo_ctx
from testkit import make_ctx


def _editing(app: CockpitApp) -> list[str]:
    """The ledger forms in edit mode (their Cancel button is shown)."""
    return [
        b.id or ""
        for b in app.screen.query(Button)
        if (b.id or "").endswith("-cancel") and b.display
    ]


async def _type(pilot, text: str) -> None:
    await pilot.press(*[c if c.isalnum() else {" ": "space"}.get(c, c) for c in text])


async def test_enter_in_as_timeline_note_adds_it_and_presses_nothing_else(tmp_path):
    ctx = demo_ctx(tmp_path, "en")
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        notes = len(ctx.session.incident.timeline)
        table = screen.query_one("#timeline")
        table.focus()
        table.move_cursor(row=0)
        await pilot.pause()
        field = screen.query_one("#tl-text", Input)
        field.focus()
        await pilot.pause()
        await _type(pilot, "rolled back to r41")
        await pilot.pause()
        assert field.value == "rolled back to r41"
        await pilot.press("enter")
        await pilot.pause()
        await pilot.pause()
        timeline = ctx.session.incident.timeline
        assert len(timeline) == notes + 1
        assert any(e.text == "rolled back to r41" for e in timeline)
        # Nothing was loaded for editing: Enter did not press "Edit selected".
        assert _editing(app) == [] and screen.timeline_editor.editing is None
        assert field.value == "" and screen.focused is field


async def test_enter_in_gs_falsifier_adds_the_hypothesis_or_says_what_is_missing(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="G")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        screen.query_one("#hyp-statement", Input).focus()
        await _type(pilot, "gpu-node-7 throttles")
        await pilot.press("enter")
        await pilot.pause()
        # The falsifier is required: nothing added, and the form says so.
        assert ctx.session.incident.hypotheses == []
        error = str(screen.query_one("#hyp-error").render())
        assert "refute" in error.lower() or "falsif" in error.lower(), error
        screen.query_one("#hyp-falsifier", Input).focus()
        await _type(pilot, "P99 stays high after cordon")
        await pilot.press("enter")
        await pilot.pause()
        await pilot.pause()
        [hyp] = ctx.session.incident.hypotheses
        assert (hyp.statement, hyp.falsifier) == (
            "gpu-node-7 throttles",
            "P99 stays high after cordon",
        )
        # The next hypothesis is typed from the form's first field.
        assert screen.focused is screen.query_one("#hyp-statement", Input)
        assert str(screen.query_one("#hyp-error").render()).strip() == ""


@pytest.mark.parametrize("step", list(STEP_SCREENS))
async def test_enter_in_any_field_stays_in_its_form(tmp_path, step):
    """Every one-line field of every step: Enter leaves focus in a field, loads no ledger
    row for editing, and moves no step."""
    ctx = demo_ctx(tmp_path, "en")
    app = CockpitApp(ctx=ctx, start_step=step)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        path = list(ctx.session.incident.path)
        fields = [w for w in app.screen.focus_chain if isinstance(w, Input)]
        for field in fields:
            field.focus()
            await pilot.pause()
            await pilot.press("enter")
            await pilot.pause()
            await pilot.pause()
            where = f"{step} {field.id}"
            assert isinstance(app.screen.focused, Input), (where, app.screen.focused)
            assert _editing(app) == [], where
            assert app.current_step() == step and ctx.session.incident.path == path, where


def test_every_form_names_fields_and_buttons_that_exist():
    """A form's field ids and button id are widgets of its screen (a renamed widget must
    not leave Enter pressing nothing)."""
    import importlib
    import inspect

    for step, (module, name) in STEP_SCREENS.items():
        cls = getattr(importlib.import_module(module), name)
        source = inspect.getsource(inspect.getmodule(cls))
        for fields, button in cls.FORMS:
            assert f'"{button}"' in source, (step, button)
            for field in fields:
                assert f'"{field}"' in source, (step, field)
