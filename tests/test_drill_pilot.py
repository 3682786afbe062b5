"""Every shipped drill answered through the TUI (Pilot), once right (from its key) and once
wrong (another layer and another suspect), with the scorecard that comes back; the drill
form at G and I is keyboard-safe."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from drill_ctx import drill_ctx
from textual.widgets import DataTable, Input, Select

from cockpit.app import CockpitApp
from cockpit.drills.catalogue import catalogue, get_drill
from cockpit.drills.key import AnswerKey
from cockpit.incident import Evidence
from cockpit.models.signals import LAYERS
from cockpit.timeparse import fmt_time
from cockpit.ui.drill_form import DrillAnswerForm
from cockpit.ui.scorecard import ScorecardScreen

DRILLS = list(catalogue())
TABLES = {
    "drilldown": ("C", "#dd-table", "DrilldownView"),
    "shared": ("F", "#sh-table", "SharedView"),
}
"""The tables a decisive signal is pinned from in this test: (step, table id, view)."""


async def _until(pilot: Any, cond: Any, what: str, tries: int = 400) -> None:
    for _ in range(tries):
        if cond():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"not reached: {what}")


async def _pin_on_screen(app: CockpitApp, pilot: Any, key: AnswerKey) -> set[str]:
    """Pin each decisive signal the key places in C's or F's table from that table (its
    row selected, the pin action run); returns what was pinned so."""
    pinned: set[str] = set()
    tables = {
        "drilldown": ("C", "#dd-table", "DrilldownView"),
        "shared": ("F", "#sh-table", "SharedView"),
    }
    for d in key.decisive_evidence:
        if d.where.panel not in tables:
            continue
        step, table_id, view_name = tables[d.where.panel]
        app.goto(step)
        await pilot.pause()
        view = next(w for w in app.screen.query("*") if type(w).__name__ == view_name)
        await _until(pilot, lambda v=view: v.data is not None, f"{view_name} data")
        table = view.query_one(table_id, DataTable)
        rows = [r.value for r in table.rows]
        summaries = view.data.drilldown.summaries if step == "C" else view.data.summaries
        row = next(
            (
                i
                for i, k in enumerate(rows)
                if any(s.key == k and s.signal == d.what for s in summaries)
            ),
            None,
        )
        if row is None:
            continue
        table.move_cursor(row=row)
        view.action_pin()
        pinned.add(d.what)
    return pinned


async def _answer(app: CockpitApp, pilot: Any, key: AnswerKey, right: bool) -> None:
    form = app.screen.query_one(DrillAnswerForm)
    await _until(pilot, lambda: bool(form.choices), "the suspects from the inventory")
    layer = key.primary_layer if right else next(x for x in LAYERS if x != key.primary_layer)
    if right:
        suspect = next(
            c for c in form.choices if any(s.matches(c.kind, c.name, c.uuid) for s in key.suspects)
        )
    else:
        suspect = next(
            c
            for c in form.choices
            if not any(s.matches(c.kind, c.name, c.uuid) for s in key.suspects)
        )
    form.query_one("#drill-layer", Select).value = layer
    form.query_one("#drill-scope", Select).value = key.scope.value
    form.query_one("#drill-suspect", Select).value = suspect.value
    form.query_one("#drill-cause", Select).value = key.cause_class
    form.query_one("#drill-impact_start", Input).value = fmt_time(key.impact_start)
    form.query_one("#drill-detected_at", Input).value = fmt_time(key.detected_at)
    await pilot.pause()
    form.query_one("#drill-hand-in").press()
    await _until(pilot, lambda: isinstance(app.screen, ScorecardScreen), "the scorecard")
    await _until(pilot, lambda: app.screen.card is not None, "the scorecard's data")


@pytest.mark.parametrize("right", [True, False], ids=["right", "wrong"])
@pytest.mark.parametrize("name", DRILLS)
async def test_a_drill_answered_through_the_tui_is_scored(
    tmp_path: Path, name: str, right: bool
) -> None:
    key = get_drill(name).key
    ctx = drill_ctx(tmp_path, name, "en")
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        pinned: set[str] = set()
        if right:
            pinned = await _pin_on_screen(app, pilot, key)
            on_tables = {d.what for d in key.decisive_evidence if d.where.panel in TABLES}
            assert pinned == on_tables, "a decisive signal is not in the table the key names"
            for d in key.decisive_evidence:
                if d.what not in pinned:
                    # Pinned from a panel or a paste that this test does not drive.
                    ctx.session.pin(Evidence(label=d.what, value="seen", what=d.what))
            ctx.session.add_hypothesis("the key's cause", "its decisive signal stays normal")
            for st in key.expert_path:
                app.goto(st.value)
                await pilot.pause()
                assert not app.screen.query("LikelyView"), f"{st}: 'most likely' in a drill"
        else:
            for st in ("A", "C", "G"):
                app.goto(st)
                await pilot.pause()
        app.goto("G")
        await pilot.pause()
        await _answer(app, pilot, key, right)
        card = app.screen.card
        assert card is not None and card.drill == name
        got = {p.part: p.correct for p in card.answers}
        shown = "\n".join(str(w.render()) for w in app.screen.query(".card-lines"))
        if right:
            assert all(got.values()), got
            assert card.correct == card.total == 6
            assert all(e.pinned for e in card.evidence)
            assert card.path.missed == [] and card.path.in_order
            assert card.missed == []
            assert card.hypotheses.with_falsifier == 1
            assert "Nothing missed." in shown
        else:
            assert got["layer"] is False and got["suspect"] is False, got
            assert got["scope"] and got["cause_class"] and got["impact_start"], got
            assert card.correct == 4
            missed = {(m.kind, m.what) for m in card.missed}
            assert {("answer", "layer"), ("answer", "suspect")} <= missed
            assert all(("evidence", e.what) in missed for e in card.evidence)
            assert "✗ Primary layer" in shown and "✗ Suspect" in shown
        await pilot.press("escape")
        await pilot.pause()
        assert app.current_step() == "G"
        # I asks for the same conclusion, as handed in at G, and shows the scorecard again.
        app.goto("I")
        await pilot.pause()
        form = app.screen.query_one(DrillAnswerForm)
        await _until(pilot, lambda: bool(form.choices), "I's suspects")
        assert (
            form.query_one("#drill-layer", Select).value == ctx.session.incident.drill.answer.layer
        )
        assert form.query_one("#drill-suspect", Select).value != Select.NULL
        form.query_one("#drill-show-card").press()
        await _until(pilot, lambda: isinstance(app.screen, ScorecardScreen), "the scorecard again")
        await _until(pilot, lambda: app.screen.card is not None, "its data")
        assert app.screen.card.correct == card.correct
    stored = ctx.session.incident.drill
    assert stored is not None and stored.answer.submitted_at is not None


@pytest.mark.parametrize("step", ["G", "I"])
async def test_typing_on_every_widget_of_the_drill_form_only_types(
    tmp_path: Path, step: str
) -> None:
    from tests.test_typing_is_not_navigation import _check_focus_on

    ctx = drill_ctx(tmp_path, "worked_example", "en")
    app = CockpitApp(ctx=ctx, start_step=step)
    async with app.run_test(size=(160, 48)) as pilot:
        form = app.screen.query_one(DrillAnswerForm)
        await _until(pilot, lambda: bool(form.choices), "the suspects from the inventory")
        fields = [w for w in form.query("*") if w.focusable]
        assert {w.id for w in fields} >= {
            "drill-layer",
            "drill-scope",
            "drill-suspect",
            "drill-cause",
            "drill-impact_start",
            "drill-detected_at",
            "drill-hand-in",
        }
        for widget in fields:
            await _check_focus_on(app, pilot, widget)
        assert ctx.session.incident.drill is not None
        assert ctx.session.incident.drill.answer.submitted_at is None
        assert not app.screen.query("LikelyView"), "a drill states no 'most likely' answer"


async def test_every_field_of_the_drill_form_shows_its_focus(tmp_path: Path) -> None:
    from tests.test_typing_is_not_navigation import _look

    ctx = drill_ctx(tmp_path, "worked_example", "en")
    app = CockpitApp(ctx=ctx, start_step="G")
    async with app.run_test(size=(80, 24)) as pilot:
        form = app.screen.query_one(DrillAnswerForm)
        await _until(pilot, lambda: bool(form.choices), "the suspects from the inventory")
        for widget in [w for w in form.query("*") if w.focusable]:
            app.screen.set_focus(None)
            await pilot.pause()
            plain = _look(widget)
            widget.focus()
            await pilot.pause()
            assert _look(widget) != plain, repr(widget)


async def test_the_conclusion_is_given_with_the_keyboard(tmp_path: Path) -> None:
    """Enter opens a drop-down, the arrows move, Enter chooses; a time is typed and kept
    when focus leaves; Enter on the button hands the conclusion in."""
    ctx = drill_ctx(tmp_path, "worked_example", "en")
    app = CockpitApp(ctx=ctx, start_step="G")
    async with app.run_test(size=(120, 40)) as pilot:
        form = app.screen.query_one(DrillAnswerForm)
        await _until(pilot, lambda: bool(form.choices), "the suspects from the inventory")
        form.query_one("#drill-layer").focus()
        await pilot.press("x", "enter", "down", "down", "enter")
        await pilot.pause()
        answer = lambda: ctx.session.incident.drill.answer  # noqa: E731
        assert answer().layer == "serving"
        form.query_one("#drill-impact_start").focus()
        await pilot.press(*"2026-11-27 12:11", "tab")
        await pilot.pause()
        assert answer().impact_start is not None and answer().impact_start.minute == 11
        form.query_one("#drill-hand-in").focus()
        await pilot.press("enter")
        await _until(pilot, lambda: isinstance(app.screen, ScorecardScreen), "the scorecard")
        await _until(pilot, lambda: app.screen.card is not None, "its data")
        got = {p.part: p.correct for p in app.screen.card.answers}
        assert got["layer"] is False and got["impact_start"] is True and got["scope"] is None
