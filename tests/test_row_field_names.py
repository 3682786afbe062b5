"""A field in a row of fields under one label (I's action items, A's error sample) is
named in notices by its own words, never by the label of the whole row."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from cockpit.app import CockpitApp
from cockpit.i18n import t
from cockpit.ui.focus import widget_name
from testkit import make_ctx
from tests.test_typed_after_enter import _type

ROWS = {
    "I": ("field.actions", ("act-what", "act-owner", "act-deadline", "act-verify")),
    "A": ("field.error_samples", ("err-text", "err-request", "err-job")),
}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("step", list(ROWS))
async def test_each_field_of_a_row_is_named_by_its_own_words(tmp_path, step, lang):
    row_label, ids = ROWS[step]
    ctx = make_ctx(tmp_path, lang=lang)
    app = CockpitApp(ctx=ctx, start_step=step)
    async with app.run_test(size=(140, 48)) as pilot:
        await pilot.pause()
        for fid in ids:
            field = app.screen.query_one(f"#{fid}", Input)
            assert widget_name(field, lang) == field.placeholder
            assert widget_name(field, lang) != t(row_label, lang)


async def test_is_action_missing_is_named_action_not_the_section(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="I")
    async with app.run_test(size=(140, 48)) as pilot:
        await pilot.pause()
        app.screen.query_one("#act-owner", Input).focus()
        await pilot.pause()
        await _type(pilot, "sre")
        app.clear_notifications()
        await pilot.press("enter")
        await pilot.pause()
        said = [str(n.message) for n in app._notifications]
        assert any(m.startswith("“Action” is missing") for m in said), said
        assert not any("Long-term actions" in m for m in said), said
