"""``cockpit alerts [--since 1h] [--json]``: the alerts an incident can start from.

From Alertmanager's API v2 when ``[alertmanager] url`` is configured (firing alerts with
their silences and inhibitions), else from Prometheus's ``ALERTS`` /
``ALERTS_FOR_STATE`` (firing, pending, and resolved within ``--since``), the configured
scope's first, each with its rule's expression and the golden signal it measures
(:mod:`cockpit.collect.paged`). ``--json`` prints the
:class:`~cockpit.collect.paged.AlertList` (``docs/json.md``). ``cockpit --alert
NAME|FINGERPRINT`` opens the TUI on the incident one of them fills.

Exit status 0 when the alerts were read (even none), 2 when no source could be read.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from cockpit.commands._argtypes import add_at
from cockpit.neutral import json_text


def register(subparsers: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Add the ``alerts`` subcommand."""
    p = subparsers.add_parser(
        "alerts",
        parents=parents,
        help="the alerts firing or recently resolved, to start an incident from",
        description="The alerts firing or recently resolved (Alertmanager, else Prometheus ALERTS).",
    )
    p.add_argument(
        "--since", default="1h", help="how far back resolved alerts are listed (default 1h)"
    )
    add_at(p, "list the alerts as of TIME (UTC, e.g. 2026-11-29T15:00; default now)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def render_text(alerts: Any, lang: str) -> str:
    """The list as plain text: a header, one line per alert and its details."""
    from cockpit.collect.paged import alert_details, alert_line, failure_lines
    from cockpit.i18n import t

    lines = [
        t(
            "alerts.header",
            lang,
            source=t(f"alerts.source.{alerts.source}", lang),
            since=f"{alerts.since:%Y-%m-%d %H:%M:%SZ}",
            until=f"{alerts.until:%Y-%m-%d %H:%M:%SZ}",
        )
    ]
    lines += [f"  {line}" for line in failure_lines(alerts, lang)]
    if not alerts.alerts and alerts.read:
        lines.append(t("alerts.none", lang, since=f"{alerts.since:%Y-%m-%d %H:%M:%SZ}"))
    for a in alerts.alerts:
        lines.append(alert_line(a, lang))
        lines += [f"      {d}" for d in alert_details(a, lang)]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run ``cockpit alerts``."""
    from cockpit.collect.paged import collect_paged
    from cockpit.i18n import t
    from cockpit.timeparse import parse_duration
    from cockpit.wiring import BootError, build_context

    try:
        ctx = build_context(args, with_session=False)
        since = parse_duration(args.since)
    except (BootError, ValueError) as exc:
        print(f"cockpit alerts: {exc}", file=sys.stderr)
        return 2
    lang = ctx.lang
    out: list[Any] = []

    async def go() -> None:
        try:
            out.append(await collect_paged(ctx, since))
        finally:
            await ctx.sources.close()

    asyncio.run(go())
    alerts = out[0]
    if not alerts.source:
        print(f"cockpit alerts: {t('alerts.no_source', lang)}", file=sys.stderr)
        return 2
    if args.json:
        print(json_text(alerts.model_dump_json(indent=2)))
    else:
        print(render_text(alerts, lang))
    return 0 if alerts.read else 2
