"""Pilot tests: each playbook walked from a step (F7 → scenario), its checks finding the
planted cause, evidence pinned and the results recorded in the incident."""

from __future__ import annotations

from pathlib import Path

import pytest
from playbook_scenarios import PLANTED, SCENARIOS
from testkit import make_ctx

from cockpit.analysis.playbooks.data import PlaybookData
from cockpit.analysis.playbooks.result import ItemStatus
from cockpit.analysis.playbooks.spec import PLAYBOOK_IDS, load_playbook
from cockpit.app import CockpitApp
from cockpit.context import AppContext
from cockpit.screens.playbook import PlaybookMenuScreen, PlaybookScreen


def _ctx(tmp_path: Path, lang: str = "en") -> AppContext:
    ctx = make_ctx(tmp_path, lang=lang)

    async def loader(_ctx: AppContext, pid: str) -> PlaybookData:
        return SCENARIOS[pid]()

    ctx.extras["playbook_loader"] = loader
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
        await pilot.press("p")
        await pilot.pause()
        assert len(ctx.session.incident.evidence) > before
        pinned = ctx.session.incident.evidence[-1]
        assert pinned.source.startswith(f"playbook:{pid}")
        # answer an "ask" item by hand, then record
        asks = [i.id for i in book.items if i.mode == "ask"]
        if asks:
            table.move_cursor(row=[i.id for i in book.items].index(asks[0]))
            await pilot.pause()
            await pilot.press("o")
        await pilot.press("s")
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
        assert statuses["before_gpu"] is ItemStatus.OPEN
