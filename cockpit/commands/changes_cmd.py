"""``cockpit changes [--since 24h] [--at TIME]``: rollouts, Helm upgrades, node and config changes,
restarts and Warning events of the service's namespace, time-ordered, with diffs.

From Kubernetes when it is configured, and from the metrics history when Prometheus is
(rollouts as revisions appearing and disappearing, restarts, readiness, allocatable
GPUs, Xid codes, series that stopped, alerts: :mod:`cockpit.analysis.history`); merged
when both are. ``--json`` prints the :class:`~cockpit.collect.kube_gather.ChangesReport`.
Exit status 0, or 2 when neither source could be read.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from datetime import UTC, datetime
from typing import Any

from cockpit.commands._argtypes import add_at
from cockpit.neutral import json_text


def register(subparsers: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Add the ``changes`` subcommand."""
    p = subparsers.add_parser(
        "changes",
        parents=parents,
        help="recent changes: rollouts, Helm, nodes, config, restarts, warnings",
        description="Recent changes of the service's namespace, time-ordered, with diffs.",
    )
    p.add_argument("--since", default="24h", help="window length before --until (default 24h)")
    p.add_argument(
        "--until", default="", help="end of the window, ISO 8601 UTC (default --at, or now)"
    )
    add_at(
        p,
        "the time under investigation: the window ends there (UTC, e.g. 2026-11-29T15:00; default now)",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def render_text(report: Any, lang: str) -> str:
    """The report as plain text (each change's kind named as B and the export name it)."""
    from cockpit.analysis.changes import kind_name
    from cockpit.i18n import t
    from cockpit.timeparse import fmt_time

    lines = [
        f"{report.namespace} {report.selector}  {fmt_time(report.since)} → {fmt_time(report.until)}"
    ]
    lines += [f"  {n}" for n in report.notes]
    shown = [i for i in report.items if i.in_window]
    if not shown:
        lines.append(t("kube.changes.none", lang, since=fmt_time(report.since)))
    for i in shown:
        at = i.at.strftime("%Y-%m-%d %H:%M:%SZ") if i.at else t("kube.changes.time_unknown", lang)
        lines.append(f"{at}  [{kind_name(i.kind, lang)}] {i.text(lang)}")  # B's names
        for d in i.diff:
            lines.append(f"      {d.text()}")
        if i.detail and i.kind not in ("event",):
            lines.append(f"      {i.detail}")
    for r in report.releases:
        pods = ", ".join(f"{rev}: {n}" for rev, n in r.pods_per_revision.items())
        lines.append(
            t(
                "kube.changes.release_mixed" if r.mixed else "kube.changes.release",
                lang,
                workload=r.workload,
                pods=pods or "—",
                old=r.restarts_old,
                new=r.restarts_new,
            )
        )
        for w in r.warmup:
            if w.early_s is not None and w.early_s > 0:
                lines.append("      " + t("kube.changes.warmup", lang, pod=w.pod, s=w.early_s))
    for fl in report.failures:
        lines.append(t("kube.panel.partial", lang, what=f"{fl.kind.value}: {fl.message}"))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run ``cockpit changes``."""
    from cockpit.collect.history import gather_all_changes
    from cockpit.sources.base import SourceError
    from cockpit.wiring import BootError, build_context

    try:
        ctx = build_context(args, with_session=False)
    except BootError as exc:
        print(f"cockpit changes: {exc}", file=sys.stderr)
        return 2
    lang = getattr(args, "lang", None) or ctx.lang
    try:
        from cockpit.timeparse import parse_duration

        window = parse_duration(args.since)
        until = (
            datetime.fromisoformat(args.until.replace("Z", "+00:00"))
            if args.until
            else ctx.clock.now()
        )
    except ValueError as exc:
        print(f"cockpit changes: {exc}", file=sys.stderr)
        return 2
    if until.tzinfo is None:
        until = until.replace(tzinfo=UTC)
    if ctx.sources.kube is None and ctx.sources.metrics is None:
        from cockpit.i18n import t

        reason = ctx.sources.missing_text("kube", ctx.lang)
        print(
            "cockpit changes: " + t("kube.cli_unavailable", ctx.lang, reason=reason),
            file=sys.stderr,
        )
        return 2
    selector = getattr(args, "selector", None) or ctx.settings.service.selector
    namespace = getattr(args, "namespace", None)
    out: list[Any] = []  # not returned from go(): see pending_cmd.run

    async def go() -> None:
        try:
            out.append(
                await gather_all_changes(ctx, until - window, until, namespace, selector or "")
            )
        finally:
            await ctx.sources.close()

    try:
        asyncio.run(go())
        report = out[0]
    except SourceError as exc:
        print(
            f"cockpit changes: kubernetes: {exc.failure.kind.value}: {exc.failure.message}",
            file=sys.stderr,
        )
        return 2
    print(json_text(report.model_dump_json(indent=2)) if args.json else render_text(report, lang))
    return 0
