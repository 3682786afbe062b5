"""Command line: ``cockpit`` (TUI) and the headless subcommands.

Every subcommand lives in ``cockpit/commands/<name>.py`` and exposes
``register(subparsers, parents)``; the module list is below. Heavy clients are imported
inside the command functions, never at module import, so ``cockpit --help`` and the TUI's
first frame stay fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

COMMAND_MODULES = (
    "list",
    "export",
    "record",
    "doctor",
    "analyze",
    "changes",
    "pending",
    "gpus",
    "explain",
)


def common_parser(suppress_defaults: bool = False) -> argparse.ArgumentParser:
    """Options every command accepts (also valid before the command name).

    Subcommands get a copy with ``suppress_defaults``: argparse copies a subparser's
    defaults over the values already parsed, so ``cockpit --lang en list`` would lose
    ``--lang`` if the subcommand's copy had defaults of its own.
    """
    p = argparse.ArgumentParser(
        add_help=False, argument_default=argparse.SUPPRESS if suppress_defaults else None
    )
    g = p.add_argument_group("common options")
    g.add_argument("--lang", choices=("zh", "en"), help="UI language (default: from the locale)")
    g.add_argument(
        "--config", metavar="FILE", help="config file (default ~/.config/cockpit/config.toml)"
    )
    g.add_argument("--prometheus-url", metavar="URL", help="Prometheus-compatible query API")
    g.add_argument("--namespace", "-n", metavar="NS", help="namespace of the service")
    g.add_argument("--selector", "-l", metavar="SELECTOR", help="label selector of its pods")
    g.add_argument("--deployment", metavar="NAME", help="Deployment/StatefulSet of the service")
    g.add_argument("--model", metavar="NAME", help="served model name")
    g.add_argument("--context", metavar="CTX", help="kubeconfig context")
    g.add_argument("--kubeconfig", metavar="FILE", help="kubeconfig file")
    g.add_argument("--state-dir", metavar="DIR", help="where incidents are kept")
    mode = g.add_mutually_exclusive_group()
    mode.add_argument("--demo", action="store_true", help="replay the bundled demo incident")
    mode.add_argument("--replay", metavar="BUNDLE", help="replay a recorded evidence bundle")
    return p


def build_parser() -> argparse.ArgumentParser:
    """The full parser, with every available subcommand registered."""
    common = common_parser()
    sub_common = common_parser(suppress_defaults=True)
    parser = argparse.ArgumentParser(
        prog="cockpit",
        parents=[common],
        description="Terminal incident cockpit for GPU inference and training on Kubernetes.",
    )
    parser.add_argument(
        "--resume",
        nargs="?",
        const="latest",
        metavar="ID",
        help="reopen an incident (default: the latest open one)",
    )
    parser.add_argument(
        "--at",
        metavar="TIME",
        help="investigate as of TIME instead of now (UTC; e.g. 2026-11-27T12:55, -6h): "
        "for reviewing an incident after the fact",
    )
    parser.add_argument("--version", action="store_true", help="print the version")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            mod = importlib.import_module(f"cockpit.commands.{name}_cmd")
        except ModuleNotFoundError as exc:
            if exc.name == f"cockpit.commands.{name}_cmd":
                continue
            raise
        mod.register(sub, [sub_common])
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``cockpit`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version:
        from cockpit import __version__

        print(__version__)
        return 0
    if args.command:
        func = args.func
        try:
            return int(func(args) or 0)
        except KeyboardInterrupt:
            return 130
        except BrokenPipeError:
            return 0
    from cockpit.tui import run_tui

    return run_tui(args)


if __name__ == "__main__":
    sys.exit(main())
