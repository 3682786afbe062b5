"""Actions that do nothing say why, where they were taken, and option lists stop at their
last option (no wrap round into a blank line that chooses nothing)."""

from __future__ import annotations

from typing import Any

from textual.widgets import OptionList, Static

from cockpit.app import CockpitApp
from cockpit.incident import Evidence
from testkit import make_ctx


async def _choose(pilot: Any, select: Any, *keys: str) -> None:
    """Open the drop-down with Enter, then press ``keys`` in its open list."""
    select.focus()
    await pilot.pause()
    await pilot.press("enter")
    for _ in range(20):
        await pilot.pause(0.05)
        if select.expanded:
            break
    await pilot.press(*keys)
    await pilot.pause()
    await pilot.pause()


async def test_link_evidence_stops_at_the_last_option_and_says_what_it_did(tmp_path):
    """G's "Link evidence": Down past the last option stays on it, so Enter links it; the
    panel says what was linked, that it was already linked, or why nothing was."""
    ctx = make_ctx(tmp_path, lang="en")
    ctx.session.pin(Evidence(label="p99", value="620", unit="ms"))
    ctx.session.pin(Evidence(label="KV cache", value="97", unit="%"))
    app = CockpitApp(ctx=ctx, start_step="G")
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        screen = app.screen
        said = screen.query_one("#hyp-link-said", Static)
        select = screen.query_one("#hyp-evidence")
        # No hypothesis yet: choosing evidence links nothing, and says so.
        await _choose(pilot, select, "down", "enter")
        assert "select a hypothesis" in str(said.render()).lower()
        ctx.session.add_hypothesis("the KV cache fills", "usage stays under 90 %")
        app.screen.incident_changed()
        await pilot.pause()
        await _choose(pilot, select, "down", "down", "down", "down")
        overlay = select.query_one(OptionList)
        assert overlay.highlighted == overlay.option_count - 1  # stopped at the last
        await pilot.press("enter")
        await pilot.pause()
        [hyp] = ctx.session.incident.hypotheses
        kv = ctx.session.incident.evidence[1]
        assert hyp.evidence_ids == [kv.id]
        assert "Linked “KV cache = 97 %” to hypothesis 1" in str(said.render())
        # Emptied for the next link: the same evidence again says it is already there.
        assert not isinstance(select.value, str)
        await _choose(pilot, select, *["down"] * 5, "enter")
        assert hyp.evidence_ids == [kv.id]
        assert "already linked" in str(said.render())
        # The blank line chosen on purpose: nothing linked, and it says so.
        await _choose(pilot, select, "up", "up", "up", "up", "enter")
        assert hyp.evidence_ids == [kv.id]
        assert "nothing linked" in str(said.render()).lower()


async def test_an_empty_evidence_list_says_so_before_it_is_opened(tmp_path):
    ctx = make_ctx(tmp_path, lang="zh")
    app = CockpitApp(ctx=ctx, start_step="G")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        select = app.screen.query_one("#hyp-evidence")
        assert "还没有钉住的证据" in str(select.prompt)
        ctx.session.pin(Evidence(label="p99", value="620", unit="ms"))
        app.screen.incident_changed()
        await pilot.pause()
        assert "还没有钉住的证据" not in str(select.prompt)


async def test_every_option_list_stops_at_its_ends(tmp_path):
    """The step menu (Ctrl+G) does not wrap from its last step to its first."""
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="I")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+g")
        await pilot.pause()
        menu = app.screen.query_one("#step-menu", OptionList)
        assert menu.highlighted == 8
        await pilot.press("down", "down")
        await pilot.pause()
        assert menu.highlighted == 8
        await pilot.press("home", "up")
        await pilot.pause()
        assert menu.highlighted == 0


async def _i_did_this(app: CockpitApp, pilot: Any, option: str, open_f2: bool = False) -> str:
    """Press F2's "I did this" of ``option`` (opening F2 first): what the dialog says."""
    if open_f2:
        await pilot.pause()
        await pilot.press("f2")
        await pilot.pause()
    app.screen.query_one(f"#chosen-{option}").press()
    await pilot.pause()
    return str(app.screen.query_one("#protect-said", Static).render())


async def test_i_did_this_never_overwrites_or_contradicts_an_entered_time(tmp_path):
    """F2's "I did this" puts the mitigation on the timeline; the Mitigate time it would
    set is not written over a time entered, nor set after the Recover time entered: the
    dialog says what became of it, and the history has no change of it."""
    from datetime import timedelta

    from cockpit.incident import TimelineKind

    ctx = make_ctx(tmp_path, lang="en")
    now = ctx.clock.now()
    ctx.session.set_time("recover", now - timedelta(minutes=10))
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(120, 48)) as pilot:
        said = await _i_did_this(app, pilot, "rollback", open_f2=True)
        inc = ctx.session.incident
        assert inc.times.mitigate is None
        assert inc.times.recover == now - timedelta(minutes=10)
        assert "Mitigate time not set" in said
        assert not [h for h in inc.history if h.target == "times.mitigate"]
        assert any(e.kind is TimelineKind.MITIGATION for e in inc.timeline)
        # A Mitigate time entered is kept as entered.
        entered = now - timedelta(minutes=20)
        ctx.session.set_time("mitigate", entered)
        said = await _i_did_this(app, pilot, "rate_limit")
        assert inc.times.mitigate == entered
        assert "kept" in said
        # it names what it put on the timeline
        from cockpit.i18n import t

        assert said.startswith(f"Recorded on the timeline: {t('protect.rate_limit', 'en')}."), said
        assert [h for h in inc.history if h.target == "times.mitigate"][
            -1
        ].new == entered.isoformat()
    # With no time in its way, it sets the Mitigate time and says so (history keeps None).
    ctx = make_ctx(tmp_path / "b", lang="en")
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(120, 48)) as pilot:
        said = await _i_did_this(app, pilot, "rollback", open_f2=True)
        # the time it was done: the incident clock running on from its frozen instant
        [done] = [e for e in ctx.session.incident.timeline if e.kind == "mitigation"]
        assert ctx.session.incident.times.mitigate == done.at
        assert ctx.clock.now() <= done.at < ctx.clock.now() + timedelta(minutes=1)
        assert "Mitigate time set to" in said
        [change] = [h for h in ctx.session.incident.history if h.target == "times.mitigate"]
        assert change.old is None


async def test_a_use_this_time_button_asks_before_replacing_an_entered_time(tmp_path):
    """A's "Use as start" and the golden panel's "use as detection time" with a time
    already entered there: the first press changes nothing and says what it would
    replace; the second press replaces it, the entered time kept in the history."""
    from datetime import timedelta

    from demo_ctx import demo_ctx, opened_demo

    ctx = demo_ctx(tmp_path, "en")
    entered = ctx.clock.now() - timedelta(hours=3)
    ctx.session.set_time("start", entered)
    ctx.session.set_time("detect", entered + timedelta(minutes=1))
    async with opened_demo(ctx, "A") as (app, pilot):
        times = ctx.session.incident.times
        for button_id, which in (("#breach-use", "start"), ("#golden-use-detect", "detect")):
            old = getattr(times, which)
            app.screen.query_one(button_id).press()
            await pilot.pause()
            assert getattr(times, which) == old, button_id
            said = [str(n.message) for n in app._notifications]
            assert any("Press again to replace" in s for s in said), (button_id, said)
            app.clear_notifications()
            app.screen.query_one(button_id).press()
            await pilot.pause()
            assert getattr(times, which) != old, button_id
            olds = [h.old for h in ctx.session.incident.history if h.target == f"times.{which}"]
            assert olds[-1] == old.isoformat()


async def test_a_number_past_the_scenario_list_says_so(tmp_path):
    """F7's list: a number past its last scenario highlights nothing and says so."""
    from cockpit.analysis.playbooks.spec import all_playbooks

    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("f7")
        await pilot.pause()
        menu = app.screen.query_one("#pb-menu", OptionList)
        await pilot.press("2")
        await pilot.pause()
        assert menu.highlighted == 1
        past = len(all_playbooks()) + 1
        await pilot.pause(0.6)  # a digit on its own, not one of a run of typing
        await pilot.press(str(past))
        await pilot.pause()
        assert menu.highlighted == 1
        said = [str(n.message) for n in app._notifications]
        assert any(f"No scenario numbered {past}" in s for s in said), said


async def test_the_digits_of_a_sentence_typed_into_f7_highlight_no_scenario(tmp_path):
    """``Xid 79 on node 3`` typed into F7's list: its 3 is part of the text, not a pick —
    the highlighted scenario stays; a digit typed on its own still highlights."""
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("f7")
        await pilot.pause()
        menu = app.screen.query_one("#pb-menu", OptionList)
        before = menu.highlighted
        await pilot.press(*"Xid 79 on node 3")
        await pilot.pause()
        assert menu.highlighted == before
        said = [str(n.message) for n in app._notifications]
        assert not any("No scenario numbered" in s for s in said), said
        await pilot.pause(0.6)
        await pilot.press("4")
        await pilot.pause()
        assert menu.highlighted == 3
