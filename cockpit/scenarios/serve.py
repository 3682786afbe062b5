"""Serve a scenario from a real Prometheus, to try cockpit's live mode.

``python -m cockpit.scenarios.serve worked_example`` backfills the scenario's history with
``promtool`` (cached after the first run), starts Debian's ``prometheus`` on 127.0.0.1,
prints the URL and the cockpit commands that investigate the scenario as of its "now",
and serves until interrupted. ``--list`` names the scenarios; ``--truth NAME`` prints the
scenario's ground truth as JSON (``name``, ``now``, ``start``, ``incident_start``,
``detected_at``, ``scope`` and ``ground_truth``: ``primary_layer``, ``scope``, ``cause``,
``mitigation``, ``suspect``; see ``docs/scenarios.md``) without serving.

SIGTERM and SIGHUP stop it like Ctrl-C: Prometheus (and any running promtool) is
stopped and the temporary directory removed.

Exit status: 0 stopped by Ctrl-C, SIGTERM or SIGHUP (or after ``--for`` seconds), or
``--list``/``--truth`` printed; 2 unknown scenario, a ``--truth`` scenario without a
structured ground truth, or Prometheus/promtool missing or failing.
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Any

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""Signals that stop the server: Ctrl-C's SIGINT too, trapped here even when the server was
started with it ignored (a background job of a non-interactive shell inherits SIGINT
ignored, and Python then installs no KeyboardInterrupt for it)."""


class _Stopped(BaseException):
    """A stop signal arrived (raised in the main thread, like KeyboardInterrupt)."""


def _trap_stop_signals() -> dict[int, Any]:
    """Make :data:`STOP_SIGNALS` raise :class:`_Stopped` (once: a second one while
    cleaning up is ignored, so the clean-up finishes); returns the previous handlers."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    fired = False

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal fired
        if not fired:
            fired = True
            raise _Stopped(signum)

    return {sig: signal.signal(sig, stop) for sig in STOP_SIGNALS}


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    from cockpit.scenarios import get_scenario, scenario_registry

    p = argparse.ArgumentParser(
        prog="python -m cockpit.scenarios.serve",
        description="Serve a generated incident from a real Prometheus for cockpit's live mode.",
    )
    p.add_argument("scenario", nargs="?", default="worked_example", help="scenario name")
    p.add_argument("--list", action="store_true", help="list the scenarios and exit")
    p.add_argument(
        "--truth", action="store_true", help="print the scenario's ground truth as JSON and exit"
    )
    p.add_argument(
        "--for", dest="seconds", type=float, default=None, help="stop after this many seconds"
    )
    args = p.parse_args(argv)
    registry = scenario_registry()
    if args.list:
        for name in sorted(registry):
            text = " ".join(registry[name]().description.split()).replace("``", "")
            print(f"{name}: {text.split('. ')[0].removeprefix('Story: ')}")
        return 0
    try:
        scenario = get_scenario(args.scenario)
    except KeyError as exc:
        print(exc.args[0], file=sys.stderr)
        return 2
    if args.truth:
        return _print_truth(scenario)
    previous = _trap_stop_signals()
    try:
        return _serve(scenario, args.seconds)
    except (KeyboardInterrupt, _Stopped):
        return 0  # the clean-up ran on the way out
    finally:
        for sig, handler in previous.items():
            if handler is not None:
                signal.signal(sig, handler)


def _print_truth(scenario: Any) -> int:
    """Print ``scenario``'s ground truth as one JSON object; 2 when it has none."""
    import json

    if scenario.ground_truth is None:
        print(f"{scenario.name} states no structured ground truth", file=sys.stderr)
        return 2
    doc = {
        "name": scenario.name,
        "now": scenario.now,
        "start": scenario.start,
        "incident_start": scenario.incident_start,
        "detected_at": scenario.detected_at,
        "scope": scenario.scope,
        "ground_truth": scenario.ground_truth.as_dict(),
    }
    print(json.dumps(doc, indent=2, sort_keys=True))
    return 0


def _serve(scenario: Any, seconds: float | None) -> int:
    """Serve until ``seconds`` pass or Prometheus exits; Ctrl-C or a stop signal raises
    through here, stopping Prometheus and removing the temporary directory."""
    from cockpit.scenarios.promserver import PromServerError, start

    with tempfile.TemporaryDirectory(prefix="cockpit-scenario-") as tmp:
        try:
            srv = start(scenario, Path(tmp))
        except PromServerError as exc:
            print(f"cannot serve {scenario.name}: {exc}", file=sys.stderr)
            return 2
        try:
            at = scenario.now_dt.strftime("%Y-%m-%dT%H:%MZ")
            flags = " ".join(
                f"--{k} {v}" for k, v in scenario.scope.items() if v and k != "selector"
            )
            print(f'{scenario.name} served at {srv.url} ("now" = {at})')
            print(f"  cockpit --prometheus-url {srv.url} --at {at} {flags}")
            # a scenario made for another window than the default says so (truth["window"])
            window = scenario.truth.get("window", "")
            span = f" --window {window}" if window else ""
            print(f"  cockpit analyze --prometheus-url {srv.url} --at {at} {flags}{span}")
            print(f"  cockpit changes --prometheus-url {srv.url} --at {at} {flags}")
            print("Ctrl-C stops it.", flush=True)
            deadline = None if seconds is None else time.monotonic() + seconds
            while deadline is None or time.monotonic() < deadline:
                if srv.process.poll() is not None:
                    print("prometheus exited", file=sys.stderr)
                    return 2
                time.sleep(0.2)
        finally:
            srv.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
