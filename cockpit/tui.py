"""Launching the TUI (imports only Textual before the first frame)."""

from __future__ import annotations

import argparse


def run_tui(args: argparse.Namespace) -> int:
    """Run the app; returns the exit status (1 when start-up failed)."""
    from cockpit.app import CockpitApp

    app = CockpitApp(args)
    app.run()
    if app.ctx is not None and app.ctx.session is not None:
        app.ctx.session.stop()
    if app.boot_error:
        import sys

        print(app.boot_error, file=sys.stderr)
        return 1
    return int(app.return_code or 0)
