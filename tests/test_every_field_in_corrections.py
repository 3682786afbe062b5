"""Every field of the incident record that a step lets the user edit keeps the value it
replaced in the history, and the export's Corrections lists it: the fields are found on
the screens themselves (every bound field of every step), so a field added later is
checked too."""

from __future__ import annotations

from typing import Any

from textual.widget import Widget
from textual.widgets import Input, TextArea

from cockpit.app import STEP_SCREENS, CockpitApp
from cockpit.history import corrections, describe_target
from cockpit.ui.fields import BoundInput, BoundTextArea, TimesForm
from demo_ctx import demo_ctx


def _bound_fields(screen: Any) -> list[Widget]:
    """The text fields of ``screen`` that write the incident as they are edited (a form's
    draft fields, written only by its button, are not among them)."""
    out: list[Widget] = []
    for field in screen.query("Input, TextArea"):
        holders = (BoundInput, BoundTextArea, TimesForm)
        if field.id == "hold" or any(isinstance(a, holders) for a in field.ancestors):
            out.append(field)
    return out


def _values(field: Widget) -> tuple[str, str]:
    """A first value and a second one that replaces it, as the field reads them."""
    if field.id == "hold":
        return "20", "25"
    if field.id and field.id.startswith("time-"):
        return "2026-11-29 20:00:00Z", "2026-11-29 20:07:00Z"
    return f"first {field.id}", f"second {field.id}"


async def _type_and_leave(pilot: Any, field: Widget, value: str) -> None:
    field.focus()
    await pilot.pause()
    if isinstance(field, Input):
        field.value = value
    else:
        assert isinstance(field, TextArea)
        field.text = value
    await pilot.pause()
    field.screen.set_focus(None)
    await pilot.pause(0.2)


async def test_every_editable_field_of_every_step_shows_in_corrections(tmp_path):
    from cockpit.export import render_markdown

    ctx = demo_ctx(tmp_path, "en")
    app = CockpitApp(ctx=ctx, start_step="A")
    seen: set[str] = set()
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        for step in STEP_SCREENS:
            app.goto(step)
            await app.workers.wait_for_complete()
            await pilot.pause()
            for field in _bound_fields(app.screen):
                first, second = _values(field)
                await _type_and_leave(pilot, field, first)
                # Not one run of typing with the first value: a later, separate edit.
                for entry in ctx.session.incident.history:
                    entry.at = entry.until = entry.at.replace(year=2000)
                before = len(corrections(ctx.session.incident))
                await _type_and_leave(pilot, field, second)
                inc = ctx.session.incident
                added = corrections(inc)[before:]
                assert added, (step, field.id)
                kept = {str(e.old) for e in added}
                assert (
                    any(first.replace(" ", "T").rstrip("Z") in k for k in kept) or first in kept
                ), (
                    step,
                    field.id,
                    kept,
                )
                seen.add(describe_target(inc, added[-1], "en"))
        text = render_markdown(ctx.session.incident, "en")
    appendix = text.split("Appendix I: Corrections", 1)[1]
    for name in seen:
        assert name in appendix, name
    # The fields the walks found missing are among those checked.
    assert {"Hold (minutes)", "Title", "Start"} <= seen, seen


def test_a_drills_answer_parts_keep_what_they_replaced(tmp_path):
    """A drill's conclusion (layer, scope, suspect, cause, times) is part of the record:
    each part changed keeps its old value in the history, the export's Corrections lists
    it, and F8's restore puts it back."""
    from datetime import UTC, datetime

    from drill_ctx import drill_ctx

    from cockpit.export import render_markdown

    ctx = drill_ctx(tmp_path, "worked_example", "en")
    session = ctx.session
    first = {
        "layer": "hardware",
        "scope": "single",
        "suspect_name": "gpu-node-7",
        "impact_start": datetime(2026, 11, 29, 20, 0, tzinfo=UTC),
    }
    second = {
        "layer": "runtime",
        "scope": "shared",
        "suspect_name": "gpu-node-3",
        "impact_start": datetime(2026, 11, 29, 20, 9, tzinfo=UTC),
    }
    session.set_drill_answer("G", **first)
    for entry in session.incident.history:
        entry.at = entry.until = entry.at.replace(year=2000)
    session.set_drill_answer("G", **second)
    found = {
        h.target.removeprefix("drill.answer."): h
        for h in corrections(session.incident)
        if h.target.startswith("drill.answer.")
    }
    assert set(found) == set(first)
    appendix = render_markdown(session.incident, "en").split("Appendix I: Corrections", 1)[1]
    for entry in found.values():
        assert describe_target(session.incident, entry, "en") in appendix
    assert "gpu-node-7" in appendix
    session.restore(found["layer"].id)
    session.restore(found["impact_start"].id)
    answer = session.incident.drill.answer
    assert answer.layer == "hardware" and answer.impact_start == first["impact_start"]
