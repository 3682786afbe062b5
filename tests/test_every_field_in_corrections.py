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
