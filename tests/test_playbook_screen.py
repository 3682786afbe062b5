"""Pilot tests: each playbook walked from a step (F7 → scenario), its checks finding the
planted cause, evidence pinned and the results recorded in the incident."""

from __future__ import annotations

from pathlib import Path

import pytest

from cockpit.analysis.playbooks.data import PlaybookData
from cockpit.analysis.playbooks.scope import unknown_model_keys
from cockpit.analysis.playbooks.spec import PLAYBOOK_IDS, load_playbook
from cockpit.app import CockpitApp
from cockpit.context import AppContext
from cockpit.incident import ItemStatus
from cockpit.screens.playbook import PlaybookMenuScreen, PlaybookScreen, parse_model, parse_scope
from playbook_scenarios import PLANTED, SCENARIOS
from testkit import make_ctx


def _ctx(tmp_path: Path, lang: str = "en", scopes: list[str] | None = None) -> AppContext:
    """A context whose playbooks read the planted scenarios; ``scopes`` collects the scope
    each load was asked for."""
    ctx = make_ctx(tmp_path, lang=lang)

    async def loader(_ctx: AppContext, pid: str, scope: str = "") -> PlaybookData:
        if scopes is not None:
            scopes.append(scope)
        return SCENARIOS[pid]()

    ctx.playbook_loader = loader
    return ctx


@pytest.mark.parametrize("pid", PLAYBOOK_IDS)
async def test_walk_playbook_from_a_step(tmp_path: Path, pid: str) -> None:
    ctx = _ctx(tmp_path)
    app = CockpitApp(ctx=ctx, start_step="C")
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        await pilot.press("f7")
        await pilot.pause()
        assert isinstance(app.screen, PlaybookMenuScreen)
        for _ in range(PLAYBOOK_IDS.index(pid)):
            await pilot.press("down")
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, PlaybookScreen) and screen.playbook.id == pid
        await app.workers.wait_for_complete()
        await pilot.pause()
        for item in PLANTED[pid]:
            assert screen.results[item].status is ItemStatus.PROBLEM, item
        # pin the evidence of the first planted item
        book = load_playbook(pid)
        row = [i.id for i in book.items].index(PLANTED[pid][0])
        table = screen.query_one("#pb-table")
        table.move_cursor(row=row)
        await pilot.pause()
        before = len(ctx.session.incident.evidence)
        await pilot.press("alt+p")
        await pilot.pause()
        assert len(ctx.session.incident.evidence) > before
        pinned = ctx.session.incident.evidence[-1]
        assert pinned.source.startswith(f"playbook:{pid}")
        # stamped with when the check ran on the incident clock (the recording's in replay)
        assert pinned.at == ctx.clock.now()
        # answer an "ask" item by hand, then record
        asks = [i.id for i in book.items if i.mode == "ask"]
        if asks:
            table.move_cursor(row=[i.id for i in book.items].index(asks[0]))
            await pilot.pause()
            await pilot.press("alt+o")
        await pilot.press("alt+s")
        await pilot.pause()
        rec = ctx.session.incident.playbooks[pid]
        assert len(rec.items) == len(book.items)
        statuses = {i.item: i.status for i in rec.items}
        for item in PLANTED[pid]:
            text = next(i.en for i in book.items if i.id == item)
            assert statuses[text] == "problem"
        if asks:
            text = next(i.en for i in book.items if i.id == asks[0])
            assert statuses[text] == "ok"
        assert any(i.evidence_ids for i in rec.items)
        await pilot.press("escape")
        await pilot.pause()
        assert app.current_step() == "C"


async def test_command_palette_lists_every_playbook(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, lang="zh")
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for pid in PLAYBOOK_IDS:
            assert any(load_playbook(pid).title.zh in title for title in titles)
        app.open_playbook("pod_pending")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, PlaybookScreen)
        assert app.screen.results["allocatable"].status is ItemStatus.PROBLEM


async def test_missing_sources_show_not_available(tmp_path: Path) -> None:
    """With the real collector and no sources, automated items say "not available"."""
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        app.open_playbook("ttft_spike")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, PlaybookScreen)
        statuses = {k: r.status for k, r in screen.results.items()}
        assert statuses["queue"] is ItemStatus.NOT_AVAILABLE
        # F's comparison needs the metrics too: not available, never guessed
        assert statuses["before_gpu"] is ItemStatus.NOT_AVAILABLE
        assert statuses["scaling"] is ItemStatus.NOT_AVAILABLE


async def test_scope_lists_the_ranks_pods(tmp_path: Path) -> None:
    """The NCCL playbook re-runs on the pods the user lists (the ranks of a job)."""
    scopes: list[str] = []
    ctx = _ctx(tmp_path, scopes=scopes)
    app = CockpitApp(ctx=ctx, start_step="E")
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        app.open_playbook("nccl_hang")
        await pilot.pause()
        await app.workers.wait_for_complete()
        screen = app.screen
        assert isinstance(screen, PlaybookScreen)
        assert screen.focused is screen.query_one("#pb-table")
        screen.query_one("#pb-scope").focus()
        await pilot.press(*"train-worker-0,train-worker-1", "enter")
        await pilot.pause()
        await app.workers.wait_for_complete()
        assert scopes == ["", "train-worker-0,train-worker-1"]
        assert screen.results["first_rank"].status is ItemStatus.PROBLEM


def test_parse_scope() -> None:
    assert parse_scope("w-0, w-1  w-2") == (["w-0", "w-1", "w-2"], None)
    assert parse_scope(" train-llama ") == (None, "train-llama")
    assert parse_scope("") == (None, None)
    assert parse_scope("params=70 layers=80") == (None, None)
    m = parse_model("params=70 layers=80 kv_heads=8 head_dim=128 kv_dtype_bytes=1")
    assert m is not None and m.params_b == 70 and m.num_layers == 80 and m.kv_dtype_bytes == 1
    assert parse_model("w-0") is None
    assert unknown_model_keys("params=70 layer=80 heads=8 w-0") == ["layer", "heads"]
    assert unknown_model_keys("params=70 layers=80 kv_heads=8 head_dim=128") == []


async def test_a_mistyped_model_key_is_said(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    app = CockpitApp(ctx=ctx, start_step="C")
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        app.open_playbook("cuda_oom")
        await pilot.pause()
        await app.workers.wait_for_complete()
        app.screen.query_one("#pb-scope").focus()
        await pilot.press(*"params=70 layer=80", "enter")
        await pilot.pause()
        assert any("layer" in str(n.message) for n in app._notifications)


async def test_rollback_command_is_filled_in(tmp_path: Path) -> None:
    """The handbook's "stop the spread or roll back first" with the exact command."""
    from cockpit.config import ServiceSettings, Settings

    ctx = _ctx(tmp_path)
    ctx.settings = Settings(service=ServiceSettings(namespace="llm", deployment="vllm-qwen"))
    app = CockpitApp(ctx=ctx, start_step="B")
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        app.open_playbook("bad_rollout")
        await pilot.pause()
        await app.workers.wait_for_complete()
        screen = app.screen
        assert isinstance(screen, PlaybookScreen)
        row = [i.id for i in screen.playbook.items].index("stop_spread")
        screen.query_one("#pb-table").move_cursor(row=row)
        await pilot.pause()
        detail = str(screen.query_one("#pb-evidence").render())
        assert "kubectl rollout undo deployment/vllm-qwen -n llm" in detail


async def test_the_number_of_a_scenario_highlights_it_and_enter_opens_it(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    app = CockpitApp(ctx=ctx, start_step="C")
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        await pilot.press("f7")
        await pilot.pause()
        assert isinstance(app.screen, PlaybookMenuScreen)
        # A sentence typed into the list by mistake opens nothing.
        await pilot.press(*"Xid 79 on node 3")
        await pilot.pause()
        assert isinstance(app.screen, PlaybookMenuScreen)
        await pilot.pause(0.6)  # a digit on its own, not one of the sentence's
        await pilot.press("4")
        await pilot.pause()
        assert isinstance(app.screen, PlaybookMenuScreen)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, PlaybookScreen)
        assert app.screen.playbook.id == PLAYBOOK_IDS[3] == "ttft_spike"
