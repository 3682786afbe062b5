"""A draft typed in a ledger's form is never lost to "Edit": the row to edit takes the
form, a notice says the draft is kept, and once the edit is saved or cancelled the draft
is back in the form, to be added as a new row."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from cockpit.app import CockpitApp
from cockpit.incident import Experiment
from testkit import make_ctx
from tests.test_typed_after_enter import _type

# step, the ledger's prefix, a row put in, the draft typed (field → text), the field
# edited and what is added to it
LEDGERS = {
    "G": (
        "hyp",
        lambda c: c.session.add_hypothesis("KV cache fragmentation", "a restart leaves P99 high"),
        {"hyp-statement": "node b lost a GPU", "hyp-falsifier": "P99 stays after cordon"},
        "hyp-statement",
    ),
    "H": (
        "exp",
        lambda c: c.session.add_experiment(
            Experiment(at=c.clock.logged(), variable="max_num_seqs")
        ),
        {"exp-variable": "cordon node b", "exp-scope": "gpu-node-b"},
        "exp-variable",
    ),
    "I": (
        "act",
        lambda c: c.session.add_action("Alert on Xid 79", "sre", "", ""),
        {"act-what": "Add a drill", "act-owner": "oncall"},
        "act-what",
    ),
}


def _values(app, ids) -> dict[str, str]:
    return {i: app.screen.query_one(f"#{i}", Input).value for i in ids}


async def _draft_then_edit(app, pilot, prefix: str, draft: dict[str, str]) -> None:
    for fid, text in draft.items():
        app.screen.query_one(f"#{fid}", Input).focus()
        await pilot.pause()
        await _type(pilot, text)
    app.screen.query_one(f"#{prefix}-table").move_cursor(row=0)
    app.screen.query_one(f"#{prefix}-edit").press()
    await pilot.pause()


@pytest.mark.parametrize("how", ["escape", "cancel", "save"])
@pytest.mark.parametrize("step", list(LEDGERS))
async def test_a_draft_in_the_form_is_back_once_the_edit_ends(tmp_path, step, how):
    prefix, add_row, draft, edited = LEDGERS[step]
    ctx = make_ctx(tmp_path, lang="en")
    add_row(ctx)
    app = CockpitApp(ctx=ctx, start_step=step)
    async with app.run_test(size=(140, 48)) as pilot:
        await pilot.pause()
        await _draft_then_edit(app, pilot, prefix, draft)
        said = str(app.screen.query_one(f"#{prefix}-error").render())
        assert "draft" in said and "kept" in said, said
        assert _values(app, draft) != draft  # the form holds the row now
        if how == "escape":
            await pilot.press("escape")
        elif how == "cancel":
            app.screen.query_one(f"#{prefix}-cancel").press()
        else:
            app.screen.query_one(f"#{edited}", Input).focus()
            await pilot.pause()
            await _type(pilot, " 2")
            await pilot.press("enter")
        await pilot.pause()
        assert _values(app, draft) == draft
        said = str(app.screen.query_one(f"#{prefix}-error").render())
        assert "unsaved draft again" in said, said
        rows = getattr(ctx.session.incident, LEDGER_OF[step])
        assert len(rows) == 1
        if how == "save":
            assert getattr(rows[0], FIRST_OF[step]).endswith(" 2")


LEDGER_OF = {"G": "hypotheses", "H": "experiments", "I": "actions"}
FIRST_OF = {"G": "statement", "H": "variable", "I": "what"}


async def test_an_empty_form_edited_and_saved_is_empty_again(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    ctx.session.add_hypothesis("KV cache fragmentation", "a restart leaves P99 high")
    app = CockpitApp(ctx=ctx, start_step="G")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.screen.query_one("#hyp-edit").press()
        await pilot.pause()
        said = str(app.screen.query_one("#hyp-error").render())
        assert "draft" not in said, said
        await pilot.press("enter")
        await pilot.pause()
        assert _values(app, ("hyp-statement", "hyp-falsifier")) == {
            "hyp-statement": "",
            "hyp-falsifier": "",
        }
        assert "form is empty" in str(app.screen.query_one("#hyp-error").render())


@pytest.mark.parametrize("step", list(LEDGERS))
async def test_unsaved_changes_to_a_row_are_not_replaced_by_editing_another(tmp_path, step):
    """Edit row 1, change it, then Edit on row 2: row 1's changes stay in the form, the
    notice says they are not saved and how to leave; Enter then saves them to row 1."""
    prefix, add_row, _draft, edited = LEDGERS[step]
    ctx = make_ctx(tmp_path, lang="en")
    add_row(ctx)
    if step == "H":  # the next experiment starts once the last one has its result
        ctx.session.incident.experiments[0].after = "P99 unchanged"
    add_row(ctx)
    app = CockpitApp(ctx=ctx, start_step=step)
    async with app.run_test(size=(140, 48)) as pilot:
        await pilot.pause()
        table = app.screen.query_one(f"#{prefix}-table")
        table.move_cursor(row=0)
        app.screen.query_one(f"#{prefix}-edit").press()
        await pilot.pause()
        app.screen.query_one(f"#{edited}", Input).focus()
        await pilot.pause()
        await _type(pilot, " changed")
        typed = app.screen.query_one(f"#{edited}", Input).value
        table.move_cursor(row=1)
        app.screen.query_one(f"#{prefix}-edit").press()
        await pilot.pause()
        assert app.screen.query_one(f"#{edited}", Input).value == typed
        said = str(app.screen.query_one(f"#{prefix}-error").render())
        assert "not saved" in said and " 1 " in said, said
        assert app.screen.focused is app.screen.query_one(f"#{edited}", Input)
        await pilot.press("enter")
        await pilot.pause()
        rows = getattr(ctx.session.incident, LEDGER_OF[step])
        assert getattr(rows[0], FIRST_OF[step]).endswith(" changed")
        assert not getattr(rows[1], FIRST_OF[step]).endswith(" changed")
        # unchanged, the next Edit loads the other row at once
        table.move_cursor(row=1)
        app.screen.query_one(f"#{prefix}-edit").press()
        await pilot.pause()
        app.screen.query_one(f"#{prefix}-edit").press()
        await pilot.pause()
        said = str(app.screen.query_one(f"#{prefix}-error").render())
        assert "Editing" in said, said
