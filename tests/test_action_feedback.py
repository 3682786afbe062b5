"""Every action gives visible feedback: a panel's chord pressed while focus is elsewhere
says which panel to Tab into (or that nothing on the step takes it); B's Alt+S marks the
change in the "⚑ = suspect" table; E's Alt+P says what it pinned, or that there is nothing
to pin."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from cockpit.app import CockpitApp
from demo_ctx import demo_ctx


def said(app: CockpitApp) -> list[str]:
    return [n.message for n in app._notifications]


async def _open(tmp_path: Any, step: str) -> tuple[Any, CockpitApp]:
    ctx = demo_ctx(tmp_path, "en")
    return ctx, CockpitApp(ctx=ctx, start_step=step)


async def test_bs_alt_s_says_where_it_works_and_marks_the_change_in_the_table(tmp_path):
    ctx, app = await _open(tmp_path, "B")
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        path = list(ctx.session.incident.path)
        await pilot.press("alt+s")
        await pilot.pause()
        # Focus is nowhere: nothing is marked, and the notice names the panel.
        assert not any(c.suspect for c in ctx.session.incident.changes)
        title = str(screen.query_one("#changes-view").border_title)
        assert any(title in m and "Tab" in m for m in said(app)), said(app)
        changes = screen.query_one("#changes-list")
        changes.focus()
        changes.highlighted = 0
        await pilot.pause()
        await pilot.press("alt+s")
        await pilot.pause(0.5)  # the incident's changes reach the screens after 0.2 s
        [suspect] = [c for c in ctx.session.incident.changes if c.suspect]
        assert any("suspect" in m.lower() for m in said(app)[1:]), said(app)
        table = screen.query_one("#chg-table")
        rows = [table.get_row_at(i) for i in range(table.row_count)]
        assert any(str(r[0]) == "⚑" and suspect.summary in str(r[3]) for r in rows), rows
        assert ctx.session.incident.path == path and app.current_step() == "B"


async def test_es_alt_p_says_what_it_pinned_or_that_nothing_is_there(tmp_path):
    ctx, app = await _open(tmp_path, "E")
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        pinned = len(ctx.session.incident.evidence)
        suspect = screen.query_one("#cohort-suspect")
        suspect.focus()
        await pilot.pause()
        # No suspect yet, so no rows: Alt+P says there is nothing to pin.
        assert screen.query_one("#cohort-table").row_count == 0
        await pilot.press("alt+p")
        await pilot.pause()
        assert any("no value to pin" in m for m in said(app)), said(app)
        assert len(ctx.session.incident.evidence) == pinned
        suspect.value = "gpu-node-a1"
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        table = screen.query_one("#cohort-table")
        assert table.row_count > 0
        table.focus()
        table.move_cursor(row=0)
        await pilot.pause()
        await pilot.press("alt+p")
        await pilot.pause()
        assert len(ctx.session.incident.evidence) == pinned + 1
        label = ctx.session.incident.evidence[-1].label
        assert any("Pinned" in m and label in m for m in said(app)), said(app)


async def test_a_chord_no_panel_of_the_step_takes_says_so(tmp_path):
    ctx, app = await _open(tmp_path, "A")
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        before = ctx.session.incident.model_dump(mode="json")
        title = app.screen.query_one("#input-title")
        title.focus()
        await pilot.pause()
        await pilot.press("alt+s")
        await pilot.pause()
        assert any("Alt+S" in m and "nothing" in m for m in said(app)), said(app)
        after = ctx.session.incident.model_dump(mode="json")
        before.pop("updated_at"), after.pop("updated_at")
        assert after == before


ROLLOUT_LOG = (
    "$ kubectl rollout status deploy/vllm\n"
    "vllm-7d9f-abcde   1/1   Running   0   45s\n"
    "INFO ... Compiling the model with different input shapes ...\n"
    'INFO:     10.0.0.7:53122 - "POST /v1/completions HTTP/1.1" 503 / timeout\n'
)


async def test_f6_fills_a_mitigations_deployment_as_f2_does(tmp_path):
    """F6's explanation of a bad rollout names the Deployment and namespace F2 fills, not
    ``deploy/<name>``."""
    from testkit import make_ctx

    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="B")
    async with app.run_test(size=(140, 48)) as pilot:
        await pilot.pause()
        await pilot.press("f2")
        await pilot.pause()
        f2 = [c for o in app.screen.options for c in o.commands]
        assert any("deployment/vllm-qwen" in c and "-n llm" in c for c in f2), f2
        await pilot.press("escape", "f6")
        await pilot.pause()
        screen = app.screen
        screen.query_one("#paste-text").text = ROLLOUT_LOG
        screen.query_one("#paste-explain").press()
        await app.workers.wait_for_complete()
        await pilot.pause()
        out = " ".join(str(screen.query_one("#paste-output").render()).split())
        assert "kubectl rollout undo deployment/vllm-qwen -n llm" in out, out
        assert "<name>" not in out and "<deployment>" not in out


@pytest.mark.parametrize("step", ["A", "B", "H", "I"])
async def test_time_examples_in_placeholders_are_in_the_incidents_clock(tmp_path, step):
    """Every placeholder that shows a time shows it in the incident's clock (the demo's
    frozen time, as ``--at`` would), never the wall clock nor a fixed example."""
    import re

    from textual.widgets import Input

    from cockpit.ui.fields import example_times

    ctx, app = await _open(tmp_path, step)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        hm = example_times(ctx)["hm"]
        shown = {
            w.id: str(w.placeholder)
            for w in app.screen.query(Input)
            if re.search(r"\b\d{1,2}:\d{2}\b", str(w.placeholder))
        }
        assert shown or step == "H"
        for field, text in shown.items():
            times = re.findall(r"\b\d{1,2}:\d{2}\b", text)
            assert set(times) == {hm}, (field, text, hm)


async def test_bs_enter_on_a_change_shows_its_diff_or_says_it_has_none(tmp_path):
    from textual.widgets import Static

    from cockpit.ui.changes_view import ChangesView

    _ctx, app = await _open(tmp_path, "B")
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        view = app.screen.query_one(ChangesView)
        changes = view.query_one("#changes-list")
        changes.focus()
        kinds = set()
        for i, item in enumerate(view.items):
            before = len(said(app))
            changes.highlighted = i
            await pilot.pause()
            await pilot.press("enter")
            await pilot.pause()
            shown = str(view.query_one(".changes--diff", Static).render())
            if item.detail_text():
                assert shown == item.detail_text(), item
                kinds.add("diff")
            else:
                # an alert or a restart: said on the diff line and in a toast, never blank
                assert shown.startswith("This change (") and "no diff" in shown, shown
                assert said(app)[before:] == [shown], said(app)
                kinds.add("none")
        assert "none" in kinds, kinds  # the demo lists alerts and restarts
        assert app.current_step() == "B"


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_ds_branch_buttons_say_what_they_do_once_a_branch_is_chosen(tmp_path, lang):
    from textual.widgets import Button

    from cockpit.i18n import t

    ctx = demo_ctx(tmp_path, lang)
    app = CockpitApp(ctx=ctx, start_step="D")
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen

        def labels() -> tuple[str, str]:
            single = screen.query_one("#branch-single", Button).label
            shared = screen.query_one("#branch-shared", Button).label
            return str(single), str(shared)

        assert labels() == (t("flow.branch_single", lang), t("flow.branch_shared", lang))
        accept = screen.query_one("#scope-accept", Button)
        assert not accept.disabled
        accept.press()
        await pilot.pause(0.5)  # the incident's changes reach the screens after 0.2 s
        chosen = ctx.session.incident.scope_branch
        assert chosen in ("single", "shared"), chosen
        # the notice names the answer recorded as D and the export name it
        answer = t(f"export.path.branch_{chosen}", lang)
        assert any(answer in str(n.message) for n in app._notifications), answer
        other = "shared" if chosen == "single" else "single"
        want = {
            chosen: t(f"flow.branch_{chosen}_again", lang),
            other: t(f"flow.branch_{other}_switch", lang),
        }
        assert labels() == (want["single"], want["shared"])
        assert not any(x.startswith(("Yes", "No", "是", "否")) for x in labels()), labels()


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_bs_mark_unmark_button_says_which_way_it_went(tmp_path, lang):
    """B's "Mark / unmark suspect": Enter marks the highlighted change and says so, Enter
    again unmarks it and says it is no longer suspect, naming the change each time."""
    from cockpit.i18n import t

    ctx = demo_ctx(tmp_path, lang)
    app = CockpitApp(ctx=ctx, start_step="B")
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause(0.5)
        screen = app.screen
        table = screen.query_one("#chg-table")
        assert table.row_count
        table.focus()
        table.move_cursor(row=0)
        await pilot.pause()
        button = screen.query_one("#chg-suspect")
        for marked, key in ((True, "kube.changes.marked"), (False, "kube.changes.unmarked")):
            button.focus()
            await pilot.pause()
            app.clear_notifications()
            await pilot.press("enter")
            await pilot.pause(0.3)
            suspects = [c for c in ctx.session.incident.changes if c.suspect]
            assert bool(suspects) is marked
            [change] = suspects or ctx.session.incident.changes[-1:]
            want = t(key, lang, summary=change.summary_in(lang))
            assert want in said(app), (want, said(app))
        # Alt+S in the table that shows the ⚑ marks its selected row, as the button does
        # (never "Tab into Recent changes first")
        table.focus()
        table.move_cursor(row=0)
        await pilot.pause()
        app.clear_notifications()
        await pilot.press("alt+s")
        await pilot.pause(0.3)
        [change] = [c for c in ctx.session.incident.changes if c.suspect]
        assert t("kube.changes.marked", lang, summary=change.summary_in(lang)) in said(app)
        assert "⚑" in str(table.get_row_at(0))


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_es_alt_c_says_what_it_switched_or_why_it_cannot(tmp_path, lang):
    """E's Alt+C in the cohort panel: on a GPU it says which cohort it switched to; for a
    release (one cohort: the revision it replaced) and with no suspect yet it says why
    nothing switched."""
    from cockpit.i18n import t

    ctx = demo_ctx(tmp_path, lang)
    app = CockpitApp(ctx=ctx, start_step="E")
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        panel = screen.query_one("CohortPanel")
        table = screen.query_one("#cohort-table")

        async def alt_c() -> list[str]:
            table.focus()
            await pilot.pause()
            app.clear_notifications()
            await pilot.press("alt+c")
            # a switch is said once the comparison it switched to has loaded
            await app.workers.wait_for_complete()
            await pilot.pause()
            return said(app)

        # No suspect yet at E: nothing to switch, said.
        assert panel.suspect is None
        assert t("metrics.cohort.cycle_no_suspect", lang) in await alt_c()
        # A node has one cohort (every other GPU): said, naming it.
        suspect = screen.query_one("#cohort-suspect")
        suspect.focus()
        suspect.value = "gpu-node-a1"
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert panel.suspect is not None and panel.suspect[1] == "node"
        only = await alt_c()
        assert any("gpu-node-a1" in m and m.startswith("Alt+C") for m in only), only
        # A GPU switches between every other GPU and its node's: said which.
        panel.suspect, panel.kind = ("GPU-49f3aa00", "gpu"), "all_gpus"
        switched = await alt_c()
        assert panel.kind == "node_gpus"
        kind = t("metrics.cohort.kind.node_gpus", lang)
        assert any(kind in m for m in switched), switched
        await app.workers.wait_for_complete()
        # A pod switched to the previous revision where its revision replaced none: the
        # panel stays on the replicas and the notice says so, never "now compared with"
        # a previous revision the panel does not show.
        pod = next(iter(panel.inventory.pods)) if panel.inventory is not None else ""
        panel.suspect, panel.kind = (pod, "pod"), "replicas"
        stayed = await alt_c()
        assert panel.data is not None and panel.data.cohort.kind == "replicas"
        kind = t("metrics.cohort.kind.previous_revision", lang)
        want = t(
            "metrics.cohort.cycled_none",
            lang,
            suspect=panel.display_name(pod, "pod"),
            kind=kind,
            actual=t("metrics.cohort.kind.replicas", lang),
        )
        assert [m for m in stayed if kind in m] == [want], stayed
        # A release is compared only with the revision it replaced: said why.
        panel.suspect, panel.kind = ("vllm-qwen-7d9f", "revision"), "previous_revision"
        only = await alt_c()
        assert panel.kind == "previous_revision"
        want = t(
            "metrics.cohort.cycle_only_revision",
            lang,
            suspect="vllm-qwen-7d9f",
            kind=t("metrics.cohort.kind.previous_revision", lang),
        )
        assert want in only, only


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_accepting_the_verdict_again_never_wipes_the_responders_words(tmp_path, lang):
    """D's "Accept verdict" twice: words added after the verdict stay; a field holding other
    text is replaced only with the history keeping it (F8 puts it back), said each time."""
    from textual.widgets import Button, TextArea

    from cockpit.i18n import t
    from cockpit.ui.fields import BoundTextArea

    ctx = demo_ctx(tmp_path, lang)
    app = CockpitApp(ctx=ctx, start_step="D")
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        accept = screen.query_one("#scope-accept", Button)
        accept.press()
        await pilot.pause(0.5)
        inc = ctx.session.incident
        verdict = inc.scope_verdict
        assert verdict
        ctx.session.set_text("scope_verdict", verdict + " — all 6 replicas queue equally")
        app.clear_notifications()
        accept.press()
        await pilot.pause(0.5)
        assert inc.scope_verdict == verdict + " — all 6 replicas queue equally"
        field = t("field.scope_verdict", lang)
        kept = t("metrics.scope.verdict_kept", lang, field=field)
        assert any(kept in str(n.message) for n in app._notifications)
        ctx.session.set_text("scope_verdict", "my own reading: the gateway")
        app.clear_notifications()
        accept.press()
        await pilot.pause(0.5)
        assert inc.scope_verdict == verdict
        replaced = t("metrics.scope.verdict_replaced", lang, field=field)
        assert any(replaced in str(n.message) for n in app._notifications)
        entry = [h for h in inc.history if h.target == "scope_verdict"][-1]
        assert entry.old == "my own reading: the gateway" and entry.new == verdict
        ctx.session.restore(entry.id)
        assert inc.scope_verdict == "my own reading: the gateway"
        await pilot.pause(0.5)
        shown = [b.query_one(TextArea).text for b in screen.query(BoundTextArea)]
        assert "my own reading: the gateway" in shown, shown


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_panel_chord_pressed_elsewhere_names_the_stop_to_tab_into(tmp_path, lang):
    """Alt+O with nothing focused on C: the notice names C's table as the screen titles
    it (never "the focused item" or a kind of box)."""
    from cockpit.i18n import t

    ctx = demo_ctx(tmp_path, lang)
    app = CockpitApp(ctx=ctx, start_step="C")
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        app.screen.set_focus(None)
        await pilot.pause()
        app.clear_notifications()
        await pilot.press("alt+o")
        await pilot.pause()
        [notice] = [str(n.message) for n in app._notifications]
        assert t("metrics.text.signals", lang) in notice, notice
        for kind in ("other", "scroll", "table"):
            assert t(f"focus.kind.{kind}", lang) not in notice, notice


async def test_a_verdict_accepted_in_english_is_exported_in_chinese(tmp_path):
    """D's verdict accepted with the screens in English, the responder's words added after
    it: a Chinese export has cockpit's verdict in Chinese and the responder's words as
    typed; once the responder rewrote the verdict itself, it is exported as typed."""
    from textual.widgets import Button

    from cockpit.export import render
    from cockpit.incident import scope_verdict_in

    ctx = demo_ctx(tmp_path, "en")
    app = CockpitApp(ctx=ctx, start_step="D")
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        app.screen.query_one("#scope-accept", Button).press()
        await pilot.pause(0.5)
    inc = ctx.session.incident
    en, zh = inc.scope_verdict_i18n["en"], inc.scope_verdict_i18n["zh"]
    assert inc.scope_verdict == en and en != zh
    # the responder adds their words a while after accepting (a history entry of its own)
    accepted = inc.history[-1]
    accepted.at = accepted.at - timedelta(minutes=1)
    accepted.until = None
    ctx.session.set_text("scope_verdict", en + " — checked by hand")
    assert scope_verdict_in(inc, "zh") == zh + " — checked by hand"
    md = render(inc, lang="zh", fmt="md")
    assert zh.splitlines()[0] in md and en.splitlines()[0] not in md
    assert "checked by hand" in md
    assert en.splitlines()[0] in render(inc, lang="en", fmt="md")
    # The correction (cockpit's verdict → it with the responder's words) reads the same:
    # cockpit's words in the export's language on both sides, the responder's as typed.
    from cockpit.history import entry_line

    [edit] = [h for h in inc.history if h.target == "scope_verdict" and h.old == en]
    line = entry_line(inc, edit, "zh")
    assert "checked by hand" in line
    assert " ".join(en.split())[-12:] not in line, line
    assert " ".join(zh.split())[-6:] in line, line
    ctx.session.set_text("scope_verdict", "shared: the gateway")
    assert scope_verdict_in(inc, "zh") == "shared: the gateway"
