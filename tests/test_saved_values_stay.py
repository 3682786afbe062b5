"""After Enter saves, a second Enter never silently replaces what was saved: H's result
field keeps showing the saved result (an edit of it is visibly one, and says it replaced
the previous result), and a ledger row saved from "Edit selected" says it was saved and
that the emptied form now adds a new row."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from cockpit.app import CockpitApp
from testkit import make_ctx


def rendered(widget) -> str:
    return str(widget.render())


async def test_hs_result_stays_in_its_field_and_a_second_enter_says_it_replaced_it(tmp_path):
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="H")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        screen.query_one("#exp-variable", Input).focus()
        await pilot.press(*"max_num_seqs", "enter")
        await pilot.pause()
        await pilot.pause()
        after = screen.query_one("#exp-after", Input)
        assert screen.focused is after and after.value == ""
        await pilot.press(*"P99 410 ms", "enter")
        await pilot.pause()
        [exp] = ctx.session.incident.experiments
        assert exp.after == "P99 410 ms"
        # Still in sight under the cursor: typing more is an edit of it.
        assert screen.focused is after and after.value == "P99 410 ms"
        assert "recorded" in rendered(screen.query_one("#exp-error"))
        await pilot.press(*", then 380 ms", "enter")
        await pilot.pause()
        assert exp.after == "P99 410 ms, then 380 ms"
        said = [str(n.message) for n in app._notifications]
        assert any("Experiment 1's result replaced" in m and "history" in m for m in said), said
        [entry] = [
            h for h in ctx.session.incident.history if h.target == f"experiments/{exp.id}.after"
        ][-1:]
        assert entry.old == "P99 410 ms"


async def test_hs_result_field_shows_the_highlighted_experiments_result(tmp_path):
    from cockpit.incident import Experiment

    ctx = make_ctx(tmp_path, lang="en")
    one = ctx.session.add_experiment(Experiment(at=ctx.clock.now(), variable="max_num_seqs"))
    ctx.session.record_experiment_result(one.id, "P99 410 ms")
    ctx.session.add_experiment(Experiment(at=ctx.clock.now(), variable="gpu_memory"))
    app = CockpitApp(ctx=ctx, start_step="H")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        table = screen.query_one("#exp-table")
        after = screen.query_one("#exp-after", Input)
        assert after.value == ""  # experiment 2, highlighted, has no result yet
        table.move_cursor(row=0)
        await pilot.pause()
        assert after.value == "P99 410 ms"
        after.focus()
        await pilot.pause()
        # Shown, not typed: Ctrl+Z has nothing to undo.
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert after.value == "P99 410 ms"


LEDGERS = [
    # (step, ledger, first field, add button, notice)
    ("A", "timeline", "tl-text", "tl-add", "tl-error"),
    ("G", "hypotheses", "hyp-statement", "hyp-add", "hyp-error"),
    ("H", "experiments", "exp-variable", "exp-add", "exp-error"),
    ("I", "actions", "act-what", "act-add", "act-error"),
]


@pytest.mark.parametrize(("step", "ledger", "first", "add", "notice"), LEDGERS)
async def test_a_row_saved_from_edit_says_so_and_the_next_enter_adds_a_new_row(
    tmp_path, step, ledger, first, add, notice
):
    from cockpit.incident import Experiment

    ctx = make_ctx(tmp_path, lang="en")
    session = ctx.session
    if ledger == "timeline":
        session.add_timeline(ctx.clock.now(), "paged by on-call")
    elif ledger == "hypotheses":
        session.add_hypothesis("KV cache fragmentation", "a restart leaves P99 high")
    elif ledger == "experiments":
        exp = session.add_experiment(Experiment(at=ctx.clock.now(), variable="max_num_seqs"))
        session.record_experiment_result(exp.id, "P99 410 ms")
    else:
        session.add_action("queue-time alert", "li", "2026-12-05", "drill")
    rows = getattr(session.incident, ledger)
    app = CockpitApp(ctx=ctx, start_step=step)
    async with app.run_test(size=(120, 48)) as pilot:
        await pilot.pause()
        screen = app.screen
        prefix = add.split("-")[0]
        screen.query_one(f"#{prefix}-edit").press()
        await pilot.pause()
        field = screen.query_one(f"#{first}", Input)
        assert screen.focused is field and field.value
        old = field.value
        await pilot.press(*" v2", "enter")
        await pilot.pause()
        await pilot.pause()
        said = rendered(screen.query_one(f"#{notice}"))
        assert "Saved" in said and "adds a new one" in said, said
        assert [getattr(r, first_field(ledger)) for r in rows] == [old + " v2"]
        # Focus in the emptied form: another sentence and Enter adds a new row.
        screen.query_one(f"#{first}", Input).focus()
        await pilot.pause()
        # (G's row needs its refutation too.)
        await pilot.press(*"next", *(["tab", *"P99 high"] if ledger == "hypotheses" else []))
        await pilot.press("enter")
        await pilot.pause()
        await pilot.pause()
        texts = [getattr(r, first_field(ledger)) for r in getattr(session.incident, ledger)]
        assert old + " v2" in texts and "next" in texts


def first_field(ledger: str) -> str:
    return {
        "timeline": "text",
        "hypotheses": "statement",
        "experiments": "variable",
        "actions": "what",
    }[ledger]


async def test_a_result_typed_and_not_yet_recorded_stays_when_the_incident_changes(tmp_path):
    from cockpit.incident import Experiment

    ctx = make_ctx(tmp_path, lang="en")
    ctx.session.add_experiment(Experiment(at=ctx.clock.now(), variable="max_num_seqs"))
    app = CockpitApp(ctx=ctx, start_step="H")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        after = screen.query_one("#exp-after", Input)
        after.focus()
        await pilot.pause()
        await pilot.press(*"P99 410 ms", "tab")
        await pilot.pause()
        ctx.session.add_hypothesis("KV cache fragmentation", "a restart leaves P99 high")
        screen.incident_changed()
        await pilot.pause()
        assert after.value == "P99 410 ms"
