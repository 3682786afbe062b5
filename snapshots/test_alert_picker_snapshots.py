"""Snapshots of the alert picker over step A (zh and en), and of step A's paged line once
an alert is chosen: Alertmanager answers fixed in ``tests/lib/alert_answers.py`` (a
page, a silenced warning, an inhibited one, another team's alert), the clock frozen."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from alert_answers import alert_list
from cockpit.app import CockpitApp
from testkit import make_ctx


def _app(tmp_path: Path, lang: str) -> CockpitApp:
    return CockpitApp(ctx=make_ctx(tmp_path, lang=lang), start_step="A")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_alert_picker(snap_compare: Any, tmp_path: Path, lang: str) -> None:
    async def open_picker(pilot: Any) -> None:
        await pilot.pause()
        pilot.app.show_alert_picker(alert_list())
        await pilot.pause()

    assert snap_compare(_app(tmp_path, lang), terminal_size=(130, 34), run_before=open_picker)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_step_a_paged_by_a_silenced_alert(snap_compare: Any, tmp_path: Path, lang: str) -> None:
    async def choose(pilot: Any) -> None:
        await pilot.pause()
        pilot.app.show_alert_picker(alert_list())
        await pilot.pause()
        await pilot.press(*"SlowFirst", "enter")
        await pilot.pause()
        await pilot.pause()

    assert snap_compare(_app(tmp_path, lang), terminal_size=(130, 34), run_before=choose)
