"""``cockpit explain [FILE|-] [--json]``: say what a pasted artifact is and what it means.

Reads a file (or standard input for ``-`` / no argument) line by line as bytes, decodes
UTF-8 with replacement, runs every registered analyzer
(:mod:`cockpit.analysis.explain`) and prints the findings — what it is, what it means,
the extracted fields, the next checks — in zh or en (``--lang``), or as JSON
(``--json``; shape in :mod:`cockpit.analysis.explain_report`).

Exit status: 0 when something was recognised, 1 when nothing was, 2 when the input
could not be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from cockpit.commands._argtypes import positive_int
from cockpit.neutral import json_text


def register(subparsers: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Add the ``explain`` subcommand."""
    p = subparsers.add_parser(
        "explain",
        parents=parents,
        help="explain a pasted artifact (OOM, NCCL, Xid, FailedScheduling, engine logs…)",
        description="Detect the kind(s) of a pasted artifact and explain it.",
    )
    p.add_argument("file", nargs="?", default="-", metavar="FILE", help="file to read, - for stdin")
    p.add_argument("--json", action="store_true", help="print JSON (stable shape)")
    p.add_argument(
        "--world-size",
        type=positive_int,
        default=None,
        metavar="N",
        help="number of distributed ranks (to name ranks that never logged)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; returns the exit status."""
    from cockpit.analysis.explain import explain_stream
    from cockpit.analysis.explain_report import to_json, to_text
    from cockpit.i18n import default_lang, t

    lang = getattr(args, "lang", None) or default_lang()
    world_size = args.world_size if args.world_size and args.world_size > 0 else None
    try:
        if args.file in ("-", None):
            expl = explain_stream(sys.stdin.buffer, world_size=world_size, lang=lang)
        else:
            with open(args.file, "rb") as fh:
                expl = explain_stream(fh, world_size=world_size, lang=lang)
    except OSError as exc:
        print(t("explain.label.read_error", lang, error=str(exc)), file=sys.stderr)
        return 2
    if args.json:
        sys.stdout.write(
            json_text(json.dumps(to_json(expl, lang), ensure_ascii=False, indent=2)) + "\n"
        )
    else:
        sys.stdout.write(to_text(expl, lang))
    sys.stdout.flush()
    return 0 if expl.recognised else 1
