"""Launching the TUI (imports only Textual before the first frame)."""

from __future__ import annotations

import argparse
import asyncio


def run_tui(args: argparse.Namespace) -> int:
    """Run the app; returns the exit status (1 when start-up failed, 128 + N after signal N).

    SIGHUP (the ssh connection dropped) and SIGTERM save the incident, then ask the app to
    exit so Textual restores the terminal (see :mod:`cockpit.lifecycle`).
    """
    from cockpit.app import CockpitApp
    from cockpit.lifecycle import ExitGuard

    app = CockpitApp(args)

    def exit_app(status: int) -> None:
        # The handler runs on the event loop's thread, between two steps of the loop; a
        # plain call_soon would not wake a loop sleeping in select(), the threadsafe one
        # writes to its self-pipe.
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise SystemExit(status) from None
        loop.call_soon_threadsafe(lambda: app.exit(return_code=status))

    guard = ExitGuard(lambda: app.ctx.session if app.ctx is not None else None, exit_app)
    with guard:
        app.run()
    if app.ctx is not None and app.ctx.session is not None:
        app.ctx.session.stop()
    if guard.received is not None:
        return 128 + guard.received
    if app.boot_error:
        import sys

        print(app.boot_error, file=sys.stderr)
        return 1
    return 0
