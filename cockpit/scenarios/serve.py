"""Serve a scenario from a real Prometheus, to try cockpit's live mode.

``python -m cockpit.scenarios.serve worked_example`` backfills the scenario's history with
``promtool`` (cached after the first run), starts Debian's ``prometheus`` on 127.0.0.1,
prints the URL and the cockpit commands that investigate the scenario as of its "now",
and serves until interrupted. ``--list`` names the scenarios.

Exit status: 0 stopped by Ctrl-C (or after ``--for`` seconds); 2 unknown scenario or
Prometheus/promtool missing or failing.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    from cockpit.scenarios import get_scenario, scenario_registry
    from cockpit.scenarios.promserver import PromServerError, start

    p = argparse.ArgumentParser(
        prog="python -m cockpit.scenarios.serve",
        description="Serve a generated incident from a real Prometheus for cockpit's live mode.",
    )
    p.add_argument("scenario", nargs="?", default="worked_example", help="scenario name")
    p.add_argument("--list", action="store_true", help="list the scenarios and exit")
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
            print(f"  cockpit analyze --prometheus-url {srv.url} --at {at} {flags}")
            print("Ctrl-C stops it.", flush=True)
            deadline = None if args.seconds is None else time.monotonic() + args.seconds
            while deadline is None or time.monotonic() < deadline:
                if srv.process.poll() is not None:
                    print("prometheus exited", file=sys.stderr)
                    return 2
                time.sleep(0.2)
        except KeyboardInterrupt:
            pass
        finally:
            srv.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
