"""``cockpit changes [--since 24h]``: rollouts, Helm upgrades, node and config changes,
restarts and Warning events of the service's namespace, time-ordered, with diffs.

``--json`` prints the :class:`~cockpit.collect.kube_gather.ChangesReport`. Exit status 0,
or 2 when the cluster could not be read.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from datetime import UTC, datetime
from typing import Any


def register(subparsers: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Add the ``changes`` subcommand."""
    p = subparsers.add_parser(
        "changes",
        parents=parents,
        help="recent changes: rollouts, Helm, nodes, config, restarts, warnings",
        description="Recent changes of the service's namespace, time-ordered, with diffs.",
    )
    p.add_argument("--since", default="24h", help="window length before --until (default 24h)")
    p.add_argument("--until", default="", help="end of the window, ISO 8601 UTC (default now)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def render_text(report: Any, lang: str) -> str:
    """The report as plain text."""
    from cockpit.i18n import t

    lines = [
        f"{report.namespace} {report.selector}  {report.since.isoformat()} → {report.until.isoformat()}"
    ]
    shown = [i for i in report.items if i.in_window]
    if not shown:
        lines.append(t("kube.changes.none", lang, since=report.since.isoformat()))
    for i in shown:
        at = i.at.strftime("%Y-%m-%d %H:%M:%SZ") if i.at else "time unknown"
        lines.append(f"{at}  [{i.kind}] {i.summary}")
        for d in i.diff:
            lines.append(f"      {d.text()}")
        if i.detail and i.kind not in ("event",):
            lines.append(f"      {i.detail}")
    for r in report.releases:
        lines.append(
            f"release {r.workload}: pods per revision {r.pods_per_revision}{' (mixed versions)' if r.mixed else ''}, restarts old {r.restarts_old} / new {r.restarts_new}"
        )
        for w in r.warmup:
            if w.early_s is not None and w.early_s > 0:
                lines.append(
                    f"      {w.pod}: Ready {w.early_s:.0f} s before the server logged ready"
                )
    for fl in report.failures:
        lines.append(t("kube.panel.partial", lang, what=f"{fl.kind.value}: {fl.message}"))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run ``cockpit changes``."""
    from cockpit.collect.kube_gather import gather_changes
    from cockpit.config import load_settings
    from cockpit.sources.base import SourceError

    settings = load_settings()
    lang = getattr(args, "lang", None) or settings.resolved_lang()
    try:
        from cockpit.timeparse import parse_duration

        window = parse_duration(args.since)
        until = (
            datetime.fromisoformat(args.until.replace("Z", "+00:00"))
            if args.until
            else datetime.now(UTC)
        )
    except ValueError as exc:
        print(f"cockpit changes: {exc}", file=sys.stderr)
        return 2
    if until.tzinfo is None:
        until = until.replace(tzinfo=UTC)
    from cockpit.commands._kube_common import kube_source

    source = kube_source(args)
    if source is None:
        return 2
    selector = getattr(args, "selector", None) or settings.service.selector

    out: list[Any] = []  # not returned from go(): see pending_cmd.run

    async def go() -> None:
        try:
            out.append(
                await gather_changes(
                    source, until - window, until, getattr(args, "namespace", None), selector or ""
                )
            )
        finally:
            await source.close()

    try:
        asyncio.run(go())
        report = out[0]
    except SourceError as exc:
        print(
            f"cockpit changes: kubernetes: {exc.failure.kind.value}: {exc.failure.message}",
            file=sys.stderr,
        )
        return 2
    print(report.model_dump_json(indent=2) if args.json else render_text(report, lang))
    return 0
