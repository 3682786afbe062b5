"""A context replaying the shipped demo bundle (deterministic: frozen clock, no server)."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from cockpit.context import AppContext
from cockpit.ui.plugins import load_panels
from cockpit.wiring import build_context


def demo_ctx(state_dir: Path, lang: str = "en") -> AppContext:
    """``cockpit --demo`` as the TUI builds it, with every registered panel loaded."""
    args = argparse.Namespace(demo=True, lang=lang, state_dir=str(state_dir))
    ctx = build_context(args)
    assert ctx.session is not None
    ctx.session.incident.id = "inc-demo0000"
    ctx.panels = load_panels()
    return ctx


@contextlib.asynccontextmanager
async def opened_demo(
    ctx: AppContext, step: str, size: tuple[int, int] = (160, 48)
) -> AsyncIterator[tuple[Any, Any]]:
    """The app on ``ctx`` open on ``step`` at ``size``, its panels loaded: ``(app, pilot)``."""
    from cockpit.app import CockpitApp

    app = CockpitApp(ctx=ctx, start_step=step)
    async with app.run_test(size=size) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        yield app, pilot
