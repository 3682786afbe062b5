"""The frame markers ``make bench`` times: step A's golden signals with values, and every
step's first frame after a jump (``cockpit/ui/frames.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cockpit.app import CockpitApp
from demo_ctx import demo_ctx


def _labels(path: Path) -> list[str]:
    if not path.exists():
        return []
    return [line.split(" ", 1)[1] for line in path.read_text().splitlines()]


async def test_useful_and_step_frames_are_marked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    useful, steps = tmp_path / "useful", tmp_path / "steps"
    monkeypatch.setenv("COCKPIT_USEFUL_FRAME_FILE", str(useful))
    monkeypatch.setenv("COCKPIT_STEP_FRAME_FILE", str(steps))
    monkeypatch.delenv("COCKPIT_FIRST_FRAME_EXIT", raising=False)
    app = CockpitApp(ctx=demo_ctx(tmp_path / "state", "en"), start_step="A")
    async with app.run_test(size=(160, 50)) as pilot:
        for _ in range(100):
            await pilot.pause(0.05)
            if useful.exists():
                break
        # The demo's step A: one row per golden signal, name/now/baseline/change/verdict/spark.
        rows, cols = _labels(useful)[0].split("x")
        assert int(rows) >= 4 and int(cols) == 6
        await pilot.press("ctrl+g", "3", "enter")
        for _ in range(40):
            await pilot.pause(0.05)
            if "C" in _labels(steps):
                break
        # A again as the list of steps closes over it, then C.
        assert _labels(steps)[0] == "A" and _labels(steps)[-1] == "C"
