"""Snapshots of a drill's scorecard at 80×24 and 160×48 in zh and en: two parts wrong,
one not answered, steps missed, decisive evidence pinned and not, what was missed and
where it was on screen."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from cockpit.app import CockpitApp
from cockpit.incident import DrillAnswer, DrillRun, Evidence, Hypothesis, Incident
from cockpit.ui.scorecard import ScorecardScreen
from testkit import FROZEN, make_ctx

SIZES = [(80, 24), (160, 48)]
STARTED = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def drill_incident() -> Incident:
    inc = Incident(
        id="inc-0000dril",
        title="Evening peak",
        created_at=FROZEN,
        updated_at=FROZEN,
        path=["A", "B", "C", "D", "G"],
        current_step="G",
    )
    inc.drill = DrillRun(
        id="worked_example",
        started_at=STARTED,
        answer=DrillAnswer(
            layer="hardware",
            scope="shared",
            suspect_kind="node",
            suspect_name="gpu-node-a1",
            cause_class="memory_fragmentation",
            impact_start=datetime(2026, 11, 27, 12, 12, tzinfo=UTC),
            step="G",
            submitted_at=STARTED + timedelta(minutes=21, seconds=30),
        ),
    )
    inc.evidence.append(
        Evidence(
            id="ev-1", label="fragmentation", value="34", unit="%", what="runtime.fragmentation"
        )
    )
    inc.hypotheses.append(
        Hypothesis(
            id="hyp-1",
            statement="the GPUs throttle",
            falsifier="SM clock stays at 1980 MHz",
            created_at=FROZEN,
        )
    )
    return inc


async def _card(pilot: Any) -> None:
    app = pilot.app
    app.push_screen(ScorecardScreen(app.ctx))
    for _ in range(200):
        await pilot.pause(0.02)
        if isinstance(app.screen, ScorecardScreen) and app.screen.card is not None:
            break
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_scorecard(snap_compare: Any, tmp_path: Path, lang: str, size: Any) -> None:
    app = CockpitApp(ctx=make_ctx(tmp_path, lang=lang, incident=drill_incident()), start_step="G")
    assert snap_compare(app, terminal_size=size, run_before=_card)


async def _form(pilot: Any) -> None:
    """The drill form at G, its suspects loaded, scrolled into view."""
    from cockpit.ui.drill_form import DrillAnswerForm

    app = pilot.app
    for _ in range(400):
        await pilot.pause(0.05)
        forms = app.screen.query(DrillAnswerForm)
        if forms and forms.first().choices:
            break
    await app.workers.wait_for_complete()
    app.screen.query_one(DrillAnswerForm).scroll_visible(animate=False, top=True)
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_drill_form_at_g(snap_compare: Any, tmp_path: Path, lang: str, size: Any) -> None:
    from drill_ctx import drill_ctx

    ctx = drill_ctx(tmp_path, "worked_example", lang)
    ctx.session.incident.id = "inc-0000dril"
    assert snap_compare(CockpitApp(ctx=ctx, start_step="G"), terminal_size=size, run_before=_form)
