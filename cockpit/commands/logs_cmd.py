"""``cockpit logs [POD|--suspect] [--layer access|service|runtime] [--since 1h] [--json]``:
the layered logs of the suspect (or of one pod), its cohort and the gateway, read as
evidence (:func:`cockpit.collect.logs.gather_logs`, the same as the layered-logs panel).

Through the shared wiring: ``--replay BUNDLE`` answers from a bundle that
``cockpit record`` filled (its ``logs`` plan reads what this command reads by default).
Exit status: 0 read and analysed; 1 no log could be read; 2 no Kubernetes source, a bad
``--since``, or the pod cannot be read.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from cockpit.neutral import json_text

SCHEMA = "cockpit.logs/1"


def register(subparsers: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Add the ``logs`` subcommand."""
    p = subparsers.add_parser(
        "logs",
        parents=parents,
        help="layered logs of the suspect, its cohort and the gateway, as evidence",
        description="Read the access, service and runtime logs of the suspect step D finds "
        "(or of POD), its cohort and the gateway, and say what they show.",
    )
    who = p.add_mutually_exclusive_group()
    who.add_argument("pod", nargs="?", help="read this pod (default: the suspect)")
    who.add_argument(
        "--suspect", action="store_true", help="the suspect step D finds, and its cohort (default)"
    )
    p.add_argument(
        "--layer", choices=("access", "service", "runtime"), help="only this layer (default: all)"
    )
    p.add_argument("--since", metavar="DURATION", help="read from this long ago (default 1h)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def to_json(report: Any, lang: str) -> dict[str, Any]:
    """The report as ``docs/json.md`` documents it: the model, with each layer's and
    finding's human name and the request-ID sentence in ``lang``."""
    from cockpit.collect.logs import finding_title, layer_name, scope_text
    from cockpit.i18n import t

    doc: dict[str, Any] = {"schema": SCHEMA, "lang": lang}
    doc.update(report.model_dump(mode="json"))
    doc["scope_text"] = scope_text(report, lang)
    for lay_doc, lay in zip(doc["layers"], report.layers, strict=True):
        lay_doc["name"] = layer_name(lay.layer, lang)
        lay_doc["not_read_text"] = (
            t(f"logs.not_read.{lay.not_read}", lang, **lay.not_read_args) if lay.not_read else ""
        )
        for f_doc, f in zip(lay_doc["findings"], lay.findings, strict=True):
            f_doc["title"] = finding_title(f, lang)
    ids = report.request_ids
    doc["request_ids"]["text"] = t(f"logs.request_ids.{ids.status}", lang, n=ids.access_ids)
    return doc


def run(args: argparse.Namespace) -> int:
    """Run ``cockpit logs``."""
    from cockpit.collect.logs import gather_logs, render_lines
    from cockpit.commands.record_cmd import parse_window
    from cockpit.i18n import t
    from cockpit.sources.base import SourceError
    from cockpit.wiring import BootError, build_context

    try:
        ctx = build_context(args, with_session=False)
    except BootError as exc:
        print(f"cockpit logs: {exc}", file=sys.stderr)
        return 2
    lang = ctx.lang
    since = None
    if args.since:
        try:
            since = parse_window(args.since)
        except ValueError:
            print(f"cockpit logs: {t('logs.bad_since', lang, value=args.since)}", file=sys.stderr)
            return 2
    if ctx.sources.kube is None:
        reason = ctx.sources.missing_text("kube", lang)
        print("cockpit logs: " + t("kube.cli_unavailable", lang, reason=reason), file=sys.stderr)
        return 2
    out: list[Any] = []

    async def go() -> None:
        try:
            out.append(await gather_logs(ctx, pod=args.pod, layer=args.layer, since=since))
        finally:
            await ctx.sources.close()

    try:
        asyncio.run(go())
    except SourceError as exc:
        f = exc.failure
        print(f"cockpit logs: {f.source}: {f.kind.value}: {f.message}", file=sys.stderr)
        if hint := f.hint_in(lang):
            print(f"  {hint}", file=sys.stderr)
        return 2
    report = out[0]
    if args.json:
        import json

        print(json_text(json.dumps(to_json(report, lang), ensure_ascii=False, indent=2)))
    else:
        print("\n".join(render_lines(report, lang)))
    read = [r for r in report.reads if r.failure is None]
    return 0 if read else 1
