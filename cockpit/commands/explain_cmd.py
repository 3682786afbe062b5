"""``cockpit explain [FILE|-] [--json]``: say what a pasted artifact is and what it means.

Reads a file (or standard input for ``-`` / no argument) line by line as bytes, decodes
UTF-8 with replacement, runs every registered analyzer
(:mod:`cockpit.analysis.explain`) and prints the findings — what it is, what it means,
the extracted fields, the next checks — in zh or en (``--lang``), or as JSON
(``--json``; shape in :mod:`cockpit.analysis.explain_report`). The ``<namespace>`` and
``<deployment>`` of its commands are filled from the configured service (``-n``,
``--deployment``, the config file); a placeholder still left is said so in words after the
text (``unfilled`` in the JSON).

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
    from cockpit.commandline import fill_scope, unfilled, unfilled_words
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
    scope = _scope(args)
    if args.json:
        doc = _filled(to_json(expl, lang), scope)
        left = unfilled(json.dumps(doc, ensure_ascii=False))
        words = unfilled_words(left, lang)[1:]
        doc["unfilled"] = [
            {"placeholder": f"<{name}>", "text": text.strip()}
            for name, text in zip(left, words, strict=True)
        ]
        sys.stdout.write(json_text(json.dumps(doc, ensure_ascii=False, indent=2)) + "\n")
    else:
        sys.stdout.write(fill_scope(to_text(expl, lang), lang, **scope))
    sys.stdout.flush()
    return 0 if expl.recognised else 1


def _scope(args: argparse.Namespace) -> dict[str, str]:
    """The configured service's namespace and deployment (flags over the environment over
    the config file), ``""`` where none is; a configuration that cannot be read is said on
    standard error and the flags alone are used."""
    from cockpit.wiring import BootError, settings_from_args

    try:
        svc = settings_from_args(args).service
    except BootError as exc:
        print(str(exc), file=sys.stderr)
        return {
            "namespace": getattr(args, "namespace", None) or "",
            "deployment": getattr(args, "deployment", None) or "",
        }
    return {"namespace": svc.namespace, "deployment": svc.deployment}


def _filled(value: Any, scope: dict[str, str]) -> Any:
    """``value`` (JSON-ready data) with every string's commands filled (see
    :func:`cockpit.commandline.fill`)."""
    from cockpit.commandline import fill

    if isinstance(value, str):
        return fill(value, **scope)
    if isinstance(value, list):
        return [_filled(v, scope) for v in value]
    if isinstance(value, dict):
        return {k: _filled(v, scope) for k, v in value.items()}
    return value
