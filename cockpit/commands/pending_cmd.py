"""``cockpit pending [POD]``: why a pod (or every Pending pod in scope) is not scheduled.

Prints, per pod: the newest FailedScheduling message parsed into reason classes with
counts, the preemption verdict, the GPU nodes then the CPU nodes (capacity / allocatable /
requested, blocking taints, label match, cordon, device plugin), quotas, findings, the
handbook's checklist and the ``kubectl`` commands to confirm. ``--json`` prints the
:class:`~cockpit.collect.kube_gather.PendingReport`. Exit status: 0 analysed (also when
nothing is Pending), 2 the cluster could not be read.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from cockpit.neutral import json_text
from cockpit.timeparse import fmt_iso_text


def register(subparsers: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Add the ``pending`` subcommand."""
    p = subparsers.add_parser(
        "pending",
        parents=parents,
        help="explain why pods are Pending (per-node table, next steps)",
        description="Explain FailedScheduling for one pod or every Pending pod in scope.",
    )
    p.add_argument("pod", nargs="?", help="pod name (default: every Pending pod)")
    p.add_argument("--all-namespaces", "-A", action="store_true", help="every namespace")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def _f(v: float | None) -> str:
    from cockpit.i18n import fmt_number

    return "?" if v is None else fmt_number(v, 6)


def render_text(report: Any, lang: str) -> str:
    """The report as plain text (what ``cockpit pending`` prints)."""
    from cockpit.i18n import t

    lines: list[str] = []
    if not report.analyses:
        lines.append(t("kube.panel.no_pending", lang, scope=report.scope))
    # Pods with the same explanation and node table (replicas of one workload) print once.
    groups: dict[tuple[Any, ...], list[Any]] = {}
    for a in report.analyses:
        key = (
            a.message.raw if a.message else "",
            tuple(f.text(lang) for f in a.findings),
            id(a.rows),
        )
        groups.setdefault(key, []).append(a)
    for members in groups.values():
        a = members[0]
        req = ", ".join(
            f"{k}={_f(v) if k not in ('memory', 'ephemeral-storage') else _f(v / 2**30) + 'Gi'}"
            for k, v in sorted(a.requests.items())
        )
        lines.append(
            "== "
            + t(
                "kube.panel.pod",
                lang,
                ns=a.namespace,
                pod=a.pod,
                scheduler=a.scheduler,
                requests=req,
            )
        )
        if len(members) > 1:
            names = ", ".join(f"{m.namespace}/{m.pod}" for m in members[1:11])
            more = f" … +{len(members) - 11}" if len(members) > 11 else ""
            lines.append(t("kube.panel.same_as", lang, n=len(members) - 1, pods=names + more))
        if a.message is not None:
            lines.append(
                t(
                    "kube.panel.message_from",
                    lang,
                    source=a.message_source,
                    at=fmt_iso_text(a.message_at) if a.message_at else "?",
                )
            )
            lines.append(f"   {a.message.raw}")
        for f in a.findings:
            mark = {"problem": "✗", "warn": "!", "info": "·"}.get(f.severity, "·")
            lines.append(f" {mark} {f.text(lang)}")
        for title_key, rows in (
            ("kube.panel.gpu_nodes", [r for r in a.rows if r.gpu_node]),
            ("kube.panel.cpu_nodes", [r for r in a.rows if not r.gpu_node]),
        ):
            if not rows:
                continue
            lines.append(t(title_key, lang, count=len(rows)))
            for r in rows[:50]:
                gpu = (
                    f"{_f(r.gpu_capacity)}/{_f(r.gpu_allocatable)}/{_f(r.gpu_requested)}"
                    if r.gpu_node
                    else "-"
                )
                state = []
                if r.cordoned:
                    state.append("cordoned")
                if r.ready is False:
                    state.append("NotReady")
                if r.gpu_unhealthy:
                    state.append(f"{_f(r.gpu_unhealthy)} GPU unhealthy")
                lines.append(
                    f"   {r.name:<24} gpu {gpu:<10} cpu {_f(r.cpu_allocatable)}/{_f(r.cpu_requested)}"
                    f"  taints {','.join(r.taints_blocking) or '-'}  labels {'ok' if r.selector_match else 'no'}"
                    f"  plugin {r.device_plugin}  {' '.join(state)}  {'fits' if r.fits else ','.join(r.blockers)}"
                )
            if len(rows) > 50:
                lines.append(f"   … {len(rows) - 50} more")
        for q in a.quotas:
            lines.append(
                f"   quota {q.quota}: {q.resource} {q.used}/{q.hard}{' EXCEEDED' if q.exceeded else ''}"
            )
        lines.append(
            t("kube.panel.checklist", lang) + ": " + "; ".join(t(k, lang) for k in a.checklist)
        )
        lines.append(t("kube.panel.commands", lang).split("（")[0].split(" (")[0] + ":")
        lines += [f"   $ {c}" for c in a.commands]
    for fl in report.failures:
        lines.append(
            t("kube.panel.partial", lang, what=f"{fl.kind.value}: {fl.message}")
            + (f" — {hint}" if (hint := fl.hint_in(lang)) else "")
        )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run ``cockpit pending``."""
    from cockpit.collect.kube_gather import gather_pending
    from cockpit.config import load_settings
    from cockpit.sources.base import SourceError

    settings = load_settings()
    lang = getattr(args, "lang", None) or settings.resolved_lang()
    from cockpit.commands._kube_common import kube_source

    source, namespace = kube_source(args)
    if source is None:
        return 2
    ns = "*" if args.all_namespaces else namespace

    # The result is handed back through a list, not returned: on Python 3.11,
    # asyncio.run() ends with signal.getsignal(), which formats repr(main task) and with
    # it the whole report (seconds for 100 pods x 300 rows).
    out: list[Any] = []

    async def go() -> None:
        try:
            out.append(await gather_pending(source, args.pod, ns))
        finally:
            await source.close()

    try:
        asyncio.run(go())
        report = out[0]
    except SourceError as exc:
        f = exc.failure
        print(f"cockpit pending: kubernetes: {f.kind.value}: {f.message}", file=sys.stderr)
        if hint := f.hint_in(lang):
            print(f"  {hint}", file=sys.stderr)
        return 2
    if args.json:
        print(json_text(report.model_dump_json(indent=2)))
    else:
        print(render_text(report, lang))
    return 0
