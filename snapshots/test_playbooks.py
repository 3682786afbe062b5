"""Snapshots of each playbook screen after its checks ran on a scenario with a planted cause."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cockpit.analysis.playbooks.data import PlaybookData
from cockpit.analysis.playbooks.spec import PLAYBOOK_IDS
from cockpit.app import CockpitApp
from cockpit.context import AppContext
from playbook_scenarios import SCENARIOS
from testkit import make_ctx


def _app(tmp_path: Path, lang: str) -> CockpitApp:
    ctx = make_ctx(tmp_path, lang=lang)

    async def loader(_ctx: AppContext, pid: str, scope: str = "") -> PlaybookData:
        return SCENARIOS[pid]()

    ctx.playbook_loader = loader
    return CockpitApp(ctx=ctx, start_step="A")


def _opener(pid: str) -> Any:
    async def run_before(pilot: Any) -> None:
        await pilot.pause()
        pilot.app.open_playbook(pid)
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    return run_before


@pytest.mark.parametrize("pid", PLAYBOOK_IDS)
def test_playbook_screen_en(snap_compare: Any, tmp_path: Path, pid: str) -> None:
    assert snap_compare(_app(tmp_path, "en"), terminal_size=(140, 40), run_before=_opener(pid))


@pytest.mark.parametrize("pid", ["cuda_oom", "pod_pending"])
def test_playbook_screen_zh(snap_compare: Any, tmp_path: Path, pid: str) -> None:
    assert snap_compare(_app(tmp_path, "zh"), terminal_size=(140, 40), run_before=_opener(pid))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_playbook_items_fit_80_columns(snap_compare: Any, tmp_path: Path, lang: str) -> None:
    """80×24: every column is on screen, cells cut with "…"; the pane shows the item whole."""
    assert snap_compare(
        _app(tmp_path, lang), terminal_size=(80, 24), run_before=_opener("cuda_oom")
    )
