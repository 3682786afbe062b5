"""Text typed into a form but not added (a hypothesis without its refutation yet) is kept
with the incident when cockpit quits or is hung up on (SIGHUP, SIGTERM), and put back in its field when the incident is
opened again (``--resume`` reads ``Incident.drafts`` into the context)."""

from __future__ import annotations

from textual.widgets import Input

from cockpit.app import CockpitApp
from cockpit.session import MAX_DRAFT_CHARS
from demo_ctx import demo_ctx


async def _type_hypothesis(app, pilot, text):
    """Step G open, ``text`` typed into the hypothesis field (not added)."""
    await app.workers.wait_for_complete()
    await pilot.pause()
    app.screen.query_one("#hyp-statement", Input).focus()
    await pilot.pause()
    await pilot.press(*text)
    await pilot.pause()


async def test_a_hypothesis_not_added_is_kept_on_quit_and_back_on_reopen(tmp_path):
    ctx = demo_ctx(tmp_path, "en")
    app = CockpitApp(ctx=ctx, start_step="G")
    async with app.run_test(size=(160, 48)) as pilot:
        await _type_hypothesis(app, pilot, "KV cache full on v1.9.0")
        assert not ctx.session.incident.hypotheses
        await app.action_quit()
    drafts = ctx.session.incident.drafts
    assert drafts["G"]["hyp-statement"] == "KV cache full on v1.9.0"
    stored = type(ctx.session.incident).model_validate_json(ctx.session.incident.model_dump_json())
    assert stored.drafts == drafts  # saved with the incident

    again = demo_ctx(tmp_path / "again", "en")
    again.drafts = {step: dict(f) for step, f in stored.drafts.items()}
    app2 = CockpitApp(ctx=again, start_step="G")
    async with app2.run_test(size=(160, 48)) as pilot:
        await app2.workers.wait_for_complete()
        await pilot.pause()
        assert app2.screen.query_one("#hyp-statement", Input).value == "KV cache full on v1.9.0"
        assert not again.session.incident.hypotheses  # put back in its field, not added


def test_a_draft_is_kept_to_its_size_limit(tmp_path):
    ctx = demo_ctx(tmp_path, "en")
    ctx.session.keep_drafts({"G": {"hyp-statement": "x" * (MAX_DRAFT_CHARS + 5), "e": ""}})
    assert ctx.session.incident.drafts == {"G": {"hyp-statement": "x" * MAX_DRAFT_CHARS}}


async def test_a_hypothesis_not_added_is_saved_by_the_exit_guard(tmp_path):
    """An ssh drop (SIGHUP) or a kill (SIGTERM): the exit guard's save takes what was typed
    and not yet added, as quitting does; it is on disk, not only in memory."""
    from cockpit.lifecycle import ExitGuard
    from cockpit.store import IncidentStore

    ctx = demo_ctx(tmp_path, "en")
    app = CockpitApp(ctx=ctx, start_step="G")
    async with app.run_test(size=(160, 48)) as pilot:
        await _type_hypothesis(app, pilot, "NCCL timeout on node 3")
        guard = ExitGuard(lambda: ctx.session, exit_callback=lambda status: None)
        guard.add_flusher(app.keep_typed_drafts)
        assert guard.save_now() and guard.last_error is None
    inc = ctx.session.incident
    on_disk = IncidentStore(ctx.session.store.root).load(inc.id)
    assert on_disk.drafts["G"]["hyp-statement"] == "NCCL timeout on node 3"
    assert not on_disk.hypotheses
