"""One worker-error policy: an unexpected exception in any step's worker (C, D, F, I's
recovery check, a playbook run, F6, a panel) is shown where it belongs, logged under the
state dir, and the app stays up with the record intact.

The failure is real, not a mocked Textual: the demo incident's metrics source answers
every query by raising an exception no code path expects (as a buggy or hostile
Prometheus-compatible backend could make a parser do)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cockpit.app import CockpitApp
from cockpit.store import IncidentStore
from demo_ctx import demo_ctx

BOOM = "answer in a shape no code path expects"


class ExplodingMetrics:
    """The demo's replayed metrics source, except that every query raises."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    async def instant(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(BOOM)

    async def range(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(BOOM)

    async def metric_names(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(BOOM)

    async def close(self) -> None:
        await self._inner.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _broken_ctx(tmp_path: Path) -> Any:
    ctx = demo_ctx(tmp_path / "state", "en")
    ctx.sources.metrics = ExplodingMetrics(ctx.sources.metrics)
    ctx.session.set_text("impact", "typed before the failure")
    return ctx


def _screen_text(app: CockpitApp) -> str:
    from textual.widgets import Static

    parts = [str(w.render()) for w in app.screen.query(Static)]
    parts += [n.message for n in app._notifications]
    return "\n".join(parts)


async def _settle(app: CockpitApp, pilot: Any) -> None:
    for _ in range(3):
        await app.workers.wait_for_complete()
        await pilot.pause()


def _assert_contained(app: CockpitApp, ctx: Any, tmp_path: Path) -> None:
    assert app.is_running
    text = _screen_text(app)
    assert "Unexpected error: RuntimeError" in text and BOOM in text, text[-3000:]
    log = tmp_path / "state" / "logs" / "errors.log"
    assert log.is_file() and BOOM in log.read_text()
    assert ctx.session.incident.impact == "typed before the failure"


def _assert_saved(ctx: Any) -> None:
    ctx.session.flush()
    stored = IncidentStore(ctx.session.store.root).load(ctx.session.incident.id)
    assert stored.impact == "typed before the failure"
    assert stored.symptoms == "typed after the failure"


@pytest.mark.parametrize("step", ["C", "D", "F"])
async def test_a_step_worker_that_raises_is_contained(tmp_path: Path, step: str) -> None:
    ctx = _broken_ctx(tmp_path)
    app = CockpitApp(ctx=ctx, start_step=step)
    async with app.run_test(size=(160, 50)) as pilot:
        await _settle(app, pilot)
        _assert_contained(app, ctx, tmp_path)
        ctx.session.set_text("symptoms", "typed after the failure")
        await pilot.press("ctrl+g", "1", "enter")  # the app still navigates
        await pilot.pause()
        assert app.current_step() == "A"
    _assert_saved(ctx)


async def test_the_recovery_check_that_raises_is_contained(tmp_path: Path) -> None:
    ctx = _broken_ctx(tmp_path)
    app = CockpitApp(ctx=ctx, start_step="I")
    async with app.run_test(size=(160, 60)) as pilot:
        await _settle(app, pilot)
        app.screen.query_one("#verify-check").press()
        await _settle(app, pilot)
        _assert_contained(app, ctx, tmp_path)
        ctx.session.set_text("symptoms", "typed after the failure")
    _assert_saved(ctx)


async def test_a_playbook_run_that_raises_is_contained(tmp_path: Path) -> None:
    """The playbook collector turns a failing query into "not available"; the loader
    that feeds the screen failing as a whole is what reaches the worker."""
    ctx = _broken_ctx(tmp_path)

    async def loader(_ctx: Any, pid: str, scope: str = "") -> Any:
        raise RuntimeError(BOOM)

    ctx.playbook_loader = loader
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(160, 50)) as pilot:
        await _settle(app, pilot)
        app.open_playbook("ttft_spike")
        await _settle(app, pilot)
        _assert_contained(app, ctx, tmp_path)
        ctx.session.set_text("symptoms", "typed after the failure")
    _assert_saved(ctx)


async def test_f6_paste_analysis_that_raises_is_contained(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """F6 reads no source: its analysis of the pasted text is made to fail instead."""
    import cockpit.analysis.explain as explain

    def explode(text: str, lang: str = "en") -> Any:
        raise RuntimeError(BOOM)

    monkeypatch.setattr(explain, "explain_text", explode)
    ctx = _broken_ctx(tmp_path)
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(160, 50)) as pilot:
        await _settle(app, pilot)
        await pilot.press("f6")
        await pilot.pause()
        app.screen.query_one("#paste-text").text = "CUDA out of memory"
        app.screen.query_one("#paste-explain").press()
        await _settle(app, pilot)
        _assert_contained(app, ctx, tmp_path)
        assert app.screen.query_one("#paste-text").text == "CUDA out of memory"
        ctx.session.set_text("symptoms", "typed after the failure")
    _assert_saved(ctx)
