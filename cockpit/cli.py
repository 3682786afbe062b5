"""Command line: ``cockpit`` (TUI) and the headless subcommands.

Every subcommand lives in ``cockpit/commands/<name>_cmd.py`` and exposes
``register(subparsers, parents)``. Only the module of the command being run is imported
(a first pass finds the command name with a light parser built from
:data:`COMMANDS`), so ``cockpit`` — the TUI — imports no command module at all before its
first frame, and ``cockpit --help`` stays instant.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

COMMANDS: dict[str, str] = {
    "list": "list incidents in the state directory",
    "export": "export an incident as the postmortem template (Markdown or JSON)",
    "record": "record an evidence bundle from the live sources",
    "doctor": "check configuration, sources, permissions and metric coverage",
    "analyze": "layer verdicts, blast radius, cohort outliers and load findings (steps C–F)",
    "changes": "recent changes: rollouts, Helm, nodes, config, restarts, warnings",
    "pending": "explain why pods are Pending (per-node table, next steps)",
    "gpus": "per-GPU state (NVML here, or DCGM for --node) with decoded reasons",
    "explain": "explain a pasted artifact (OOM, NCCL, Xid, FailedScheduling, engine logs…)",
    "playbook": "a scenario playbook's checklist with its automated checks",
    "logs": "layered logs of the suspect, its cohort and the gateway, as evidence",
    "drill": "practise on a recorded incident and get a scorecard",
    "alerts": "the alerts firing or recently resolved, to start an incident from",
}
"""Every subcommand and its one-line summary (the order of ``cockpit --help``)."""
COMMAND_MODULES = tuple(COMMANDS)


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


def build_parser(only: str | None = None, *, light: bool = False) -> argparse.ArgumentParser:
    """The parser.

    Args:
        only: Register just this command (with its module's full options).
        light: Register every command name without importing its module (the first pass
            of :func:`main`, and ``cockpit --help``).
    """
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
    parser.add_argument(
        "--alert",
        metavar="NAME|FINGERPRINT",
        help="start the incident from this alert (see `cockpit alerts`): its scope, "
        "detection time, paged SLI and title",
    )
    parser.add_argument("--version", action="store_true", help="print the version")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES if only is None else (only,):
        if only is None and light:
            sub.add_parser(name, help=COMMANDS[name], add_help=False)
            continue
        mod = importlib.import_module(f"cockpit.commands.{name}_cmd")
        mod.register(sub, [sub_common])
    return parser


RELATIVE_VALUE_OPTIONS = ("--at", "--window")
"""Options whose value may start with a minus (``--at -6h``): argparse would read such a
value as an option of its own, so it is attached (``--at=-6h``) before parsing."""


def attach_negative_values(argv: list[str]) -> list[str]:
    """``argv`` with ``--at -6h`` rewritten as ``--at=-6h`` (see
    :data:`RELATIVE_VALUE_OPTIONS`); anything else is left as it is."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        nxt = argv[i + 1] if i + 1 < len(argv) else ""
        if a in RELATIVE_VALUE_OPTIONS and len(nxt) > 1 and nxt[0] == "-" and nxt[1].isdigit():
            out.append(f"{a}={nxt}")
            i += 2
            continue
        out.append(a)
        i += 1
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``cockpit`` console script; returns the exit status."""
    argv = attach_negative_values(list(sys.argv[1:] if argv is None else argv))
    first, _ = build_parser(light=True).parse_known_args(
        [a for a in argv if a not in ("-h", "--help")]
    )
    if first.command:
        parser = build_parser(only=first.command)
        args, extra = parser.parse_known_args(argv)
        if extra:
            # Said by the command's own parser, with its usage (the top-level one would
            # print the usage of `cockpit` for an option of the command).
            sub = next(
                a
                for a in parser._subparsers._group_actions  # type: ignore[union-attr]
                if isinstance(a, argparse._SubParsersAction)
            )
            sub.choices[first.command].error(f"unrecognized arguments: {' '.join(extra)}")
    else:
        args = build_parser(light=True).parse_args(argv)
    if args.version:
        from cockpit import __version__

        print(__version__)
        return 0
    from cockpit.neutral import neutral_streams

    # The output boundary of every command (and of the TUI's messages before and after
    # it runs): outside text never reaches the terminal with its control characters.
    with neutral_streams():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    """Run the parsed command, or the TUI; returns the exit status."""
    if args.command:
        func = args.func
        try:
            code = int(func(args) or 0)
        except KeyboardInterrupt:
            return 130
        except BrokenPipeError:
            return 0
        if code or not getattr(args, "open_tui", False):
            return code
        # A command that opens the TUI (``cockpit drill NAME``) prepared ``args`` for it.
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        # Without a terminal the TUI could only write escape codes into a pipe or a file,
        # and would leave an empty incident behind: say what to run instead.
        from cockpit.i18n import t
        from cockpit.wiring import BootError, settings_from_args

        try:
            lang = settings_from_args(args).resolved_lang()
        except BootError:
            lang = "en"
        print(f"cockpit: {t('core.no_terminal', lang)}", file=sys.stderr)
        return 2
    from cockpit.tui import run_tui

    return run_tui(args)


if __name__ == "__main__":
    sys.exit(main())
