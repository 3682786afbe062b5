"""A context replaying the shipped demo bundle (deterministic: frozen clock, no server)."""

from __future__ import annotations

import argparse
from pathlib import Path

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
