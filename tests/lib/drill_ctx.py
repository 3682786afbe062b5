"""A context opening a shipped drill as ``cockpit drill NAME`` does (deterministic)."""

from __future__ import annotations

import argparse
from pathlib import Path

from cockpit.context import AppContext
from cockpit.drills.catalogue import get_drill
from cockpit.ui.plugins import load_panels
from cockpit.wiring import build_context


def drill_args(state_dir: Path, name: str, lang: str = "en") -> argparse.Namespace:
    """The arguments ``cockpit drill NAME`` hands the TUI."""
    return argparse.Namespace(
        replay=str(get_drill(name).bundle), drill=name, lang=lang, state_dir=str(state_dir)
    )


def drill_ctx(state_dir: Path, name: str, lang: str = "en") -> AppContext:
    """Drill ``name`` as the TUI opens it, with every registered panel loaded."""
    ctx = build_context(drill_args(state_dir, name, lang))
    assert ctx.session is not None
    ctx.panels = load_panels()
    return ctx
