"""Snapshots of the data-driven steps (A, C, D, E, F, I) replaying the shipped demo bundle:
deterministic (frozen clock, no server) and exactly what ``cockpit --demo`` shows."""

from __future__ import annotations

import pytest

from cockpit.app import CockpitApp
from demo_ctx import demo_ctx


async def _loaded(pilot) -> None:
    for _ in range(5):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


@pytest.mark.parametrize(
    ("step", "lang"),
    [
        ("A", "zh"),
        ("A", "en"),
        ("C", "en"),
        ("D", "zh"),
        ("E", "en"),
        ("F", "en"),
        ("I", "zh"),
        ("I", "en"),
    ],
)
def test_demo_step(snap_compare, tmp_path, step, lang, monkeypatch):
    # One fetch per panel: a 1 s poll would make the history sparklines depend on timing.
    from cockpit.ui.panel import Panel

    for cls in Panel.__subclasses__():
        monkeypatch.setattr(cls, "POLL_INTERVAL", None)
    app = CockpitApp(ctx=demo_ctx(tmp_path, lang), start_step=step)
    assert snap_compare(app, terminal_size=(160, 60), run_before=_loaded)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("step", ["A", "C", "G", "H"])
def test_demo_step_at_terminal_sizes(snap_compare, tmp_path, step, lang, size, monkeypatch):
    """A, C, G and H as an on-call terminal shows them: the smallest (80×24) and a large
    one, in both languages; the first Tab has put focus on the step's first field."""
    from cockpit.ui.panel import Panel

    for cls in Panel.__subclasses__():
        monkeypatch.setattr(cls, "POLL_INTERVAL", None)

    async def loaded_then_tab(pilot) -> None:
        await _loaded(pilot)
        await pilot.press("tab")
        await pilot.pause()

    app = CockpitApp(ctx=demo_ctx(tmp_path, lang), start_step=step)
    assert snap_compare(app, terminal_size=size, run_before=loaded_then_tab)
