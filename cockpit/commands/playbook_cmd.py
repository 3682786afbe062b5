"""``cockpit playbook [ID] [SCOPE…]``: a scenario playbook's checklist, its automated
checks run against the sources, without the UI.

``ID`` is one of the six playbooks (``cuda_oom``, ``nccl_hang``, ``low_util``,
``ttft_spike``, ``pod_pending``, ``bad_rollout``); without it the command lists them.
``SCOPE`` is what the playbook screen's scope field takes: two or more pod names, or one
job name (PyTorchJob/JobSet/Job), and the model's shape as ``params=70 layers=80
kv_heads=8 head_dim=128`` (see :mod:`cockpit.analysis.playbooks.scope`). Works live, with
``--replay BUNDLE`` and with ``--demo``.

Prints every item of the handbook's checklist with its status, finding, evidence (value,
unit, and the query or log it came from) and the commands to copy; ``--json`` prints the
same as one object (shape in :func:`to_json`). Exit status: 0 when the checks ran; 2 when
the playbook is unknown, the configuration or bundle fails, or no automated item could be
checked because every source it needs is missing (the report is still printed).
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from typing import TYPE_CHECKING, Any

from cockpit.neutral import json_text
from cockpit.timeparse import fmt_iso_text

if TYPE_CHECKING:
    from cockpit.analysis.playbooks.data import PlaybookData
    from cockpit.analysis.playbooks.result import ItemResult
    from cockpit.analysis.playbooks.spec import Playbook

SCHEMA = 1
"""Version of the ``--json`` shape: fields are only added; a change of meaning bumps it."""

_MARK = {"ok": "✓", "problem": "✗", "open": "?", "n/a": "·", "not_available": "–"}


def register(subparsers: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Add the ``playbook`` subcommand."""
    p = subparsers.add_parser(
        "playbook",
        parents=parents,
        help="a scenario playbook's checklist with its automated checks",
        description=(
            "Run a scenario playbook's automated checks (CUDA OOM, NCCL hang, low GPU "
            "utilization, TTFT P99 spike, Pod Pending, bad model release). Without ID, "
            "list the playbooks."
        ),
    )
    p.add_argument("playbook", nargs="?", metavar="ID", help="playbook id (default: list them)")
    p.add_argument(
        "scope",
        nargs="*",
        metavar="SCOPE",
        help="pod names (two or more) or a job name; the model's shape as "
        "params=70 layers=80 kv_heads=8 head_dim=128",
    )
    p.add_argument(
        "--at",
        metavar="TIME",
        help="check as of TIME (UTC, e.g. 2026-11-27T12:55, -6h; default now)",
        default=argparse.SUPPRESS,  # keep a --at given before the command
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def _evidence_json(ev: Any, lang: str) -> dict[str, Any]:
    from cockpit.analysis.playbooks.render import evidence_label, evidence_value

    return {
        "label": evidence_label(ev, lang),
        "value": evidence_value(ev, lang),
        "unit": ev.unit,
        "source": ev.source,
        "query": ev.query,
    }


def to_json(
    book: Playbook,
    results: list[ItemResult],
    data: PlaybookData,
    *,
    lang: str,
    at: datetime,
    scope: dict[str, Any],
    commands: list[list[str]],
    book_commands: list[str] | None = None,
) -> dict[str, Any]:
    """The ``--json`` object.

    Shape::

        {"schema": 1, "playbook": "cuda_oom", "title": "…", "seed": "000_… 场景一",
         "at": "2026-11-27T12:55:00+00:00",         # when the checks ran (incident clock)
         "scope": {"namespace", "selector", "deployment", "pods": [...] | null,
                   "job": str | null, "model": {ModelConfig} | null},
         "pods_checked": ["vllm-0", …],             # the pods the sources returned
         "missing": {"kube": "not configured", …},  # sources not available, and why
         "summary": {"ok": n, "problem": n, "open": n, "n/a": n, "not_available": n},
         "commands": ["kubectl …", …],              # the playbook's own commands to copy
         "items": [{"id", "mode": "auto" | "ask", "text",
                    "status": "ok" | "problem" | "open" | "n/a" | "not_available",
                    "finding", "finding_key", "finding_args",
                    "evidence": [{"label", "value", "unit", "source", "query"}],
                    "missing": [source, …], "commands": ["kubectl …", …]}],
         "closing": "…"}

    Texts (``title``, ``text``, ``finding``, evidence ``label``, an evidence ``value``
    in words, ``closing``) are in ``lang``; ``finding_key`` and ``finding_args`` are the message behind ``finding``
    (catalogue ``cockpit/knowledge/i18n/playbook.toml``).
    """
    from cockpit.analysis.playbooks.render import finding_text

    by_id = {r.item: r for r in results}
    items = []
    for item, cmds in zip(book.items, commands, strict=True):
        r = by_id[item.id]
        items.append(
            {
                "id": item.id,
                "mode": item.mode,
                "text": item.text(lang),
                "status": r.status.value,
                "finding": finding_text(r, lang),
                "finding_key": r.finding_key,
                "finding_args": r.finding_args,
                "evidence": [_evidence_json(e, lang) for e in r.evidence],
                "missing": r.missing,
                "commands": cmds,
            }
        )
    counts = {s: 0 for s in _MARK}
    for r in results:
        counts[r.status.value] += 1
    return {
        "schema": SCHEMA,
        "playbook": book.id,
        "title": book.title.get(lang),
        "seed": book.seed,
        "at": at.isoformat(),
        "scope": scope,
        "pods_checked": [p.meta.name for p in data.pods],
        "missing": dict(sorted(data.missing.items())),
        "summary": counts,
        "commands": list(book_commands or []),
        "items": items,
        "closing": book.closing.get(lang),
    }


def render_text(
    report: dict[str, Any], book: Playbook, results: list[ItemResult], lang: str
) -> str:
    """The report as plain text (what ``cockpit playbook ID`` prints)."""
    from cockpit.analysis.playbooks.render import status_text, summary
    from cockpit.i18n import t

    lines = [report["title"], book.intro.get(lang)]
    scope = report["scope"]
    where = scope["namespace"] or "-"
    if scope["pods"]:
        who = ", ".join(scope["pods"])
    elif scope["job"]:
        who = t("playbook.cli.job", lang, job=scope["job"])
    elif scope["selector"] or scope["deployment"]:
        who = scope["selector"] or scope["deployment"]
    else:
        who = t("playbook.cli.all_pods", lang)
    lines += [f"  $ {c}" for c in report["commands"]]
    at = fmt_iso_text(report["at"])
    lines.append(t("playbook.cli.scope", lang, namespace=where, who=who, at=at))
    if report["pods_checked"]:
        names = report["pods_checked"]
        more = f" … +{len(names) - 10}" if len(names) > 10 else ""
        lines.append(t("playbook.cli.pods", lang, n=len(names), pods=", ".join(names[:10]) + more))
    for source, why in report["missing"].items():
        lines.append(t("playbook.cli.missing", lang, source=source, reason=why))
    lines.append("")
    for item, r in zip(report["items"], results, strict=True):
        status = status_text(r.status, lang)
        lines.append(f" {_MARK[item['status']]} [{status}] {item['text']}")
        found = item["finding"]
        if found:
            lines.append(f"     → {found}")
        for e in item["evidence"]:
            unit = f" {e['unit']}" if e["unit"] else ""
            lines.append(f"     • {e['label']}: {e['value']}{unit}")
            if e["query"]:
                lines.append(f"         {e['query']}")
        for c in item["commands"]:
            lines.append(f"     $ {c}")
    lines.append("")
    lines.append(summary(results, lang))
    if report["closing"] and all(i["text"] != report["closing"] for i in report["items"]):
        lines.append(report["closing"])
    return "\n".join(lines)


def _list(lang: str) -> int:
    from cockpit.analysis.playbooks.spec import all_playbooks
    from cockpit.i18n import t

    for book in all_playbooks():
        print(f"{book.id:<12} {book.title.get(lang)}")
    print(t("playbook.cli.usage", lang))
    return 0


def run(args: argparse.Namespace) -> int:
    """Run ``cockpit playbook``."""
    import asyncio

    from cockpit.analysis.playbooks.render import fill_command
    from cockpit.analysis.playbooks.run import run_playbook
    from cockpit.analysis.playbooks.scope import parse_model, parse_scope, unknown_model_keys
    from cockpit.analysis.playbooks.spec import PLAYBOOK_IDS, load_playbook
    from cockpit.collect.playbooks import collect_playbook_data
    from cockpit.i18n import t
    from cockpit.incident import ItemStatus
    from cockpit.wiring import BootError, build_context

    try:
        ctx = build_context(args, with_session=False)
    except BootError as exc:
        print(f"cockpit playbook: {exc}", file=sys.stderr)
        return 2
    lang = ctx.lang
    if not args.playbook:
        return _list(lang)
    if args.playbook not in PLAYBOOK_IDS:
        print(
            "cockpit playbook: "
            + t("playbook.cli.unknown", lang, id=args.playbook, ids=", ".join(PLAYBOOK_IDS)),
            file=sys.stderr,
        )
        return 2
    text = " ".join(args.scope)
    if bad := unknown_model_keys(text):
        print(
            "cockpit playbook: " + t("playbook.unknown_keys", lang, keys=", ".join(bad)),
            file=sys.stderr,
        )
        return 2
    book = load_playbook(args.playbook)
    pods, job = parse_scope(text)
    model = parse_model(text)
    at = ctx.clock.now().replace(microsecond=0)
    out: list[PlaybookData] = []

    async def go() -> None:
        try:
            out.append(await collect_playbook_data(ctx, book.id, pods=pods, job=job, model=model))
        finally:
            await ctx.sources.close()

    asyncio.run(go())
    data = out[0]
    results = run_playbook(book, data)
    svc = ctx.settings.service
    scope = {
        "namespace": svc.namespace,
        "selector": svc.selector,
        "deployment": svc.deployment,
        "pods": pods,
        "job": job,
        "model": model.model_dump() if model is not None else None,
    }
    commands = [
        [fill_command(c, svc.namespace, svc.deployment) for c in item.commands]
        for item in book.items
    ]
    # The reasons a source is missing, in the run's language where the source said why.
    # A reason that starts with the source's own (the GPU's: no NVML, then why DCGM could
    # not stand in) keeps the rest after it.
    said = {k: ctx.sources.missing.get(k) for k in ("kube", "gpu", "metrics")}
    data.missing = {
        k: ctx.sources.missing_text(k, lang, v) + v[len(own) :]
        if (own := said.get(k)) and v.startswith(own)
        else v
        for k, v in data.missing.items()
    }
    report = to_json(
        book,
        results,
        data,
        lang=lang,
        at=at,
        scope=scope,
        commands=commands,
        book_commands=[fill_command(c, svc.namespace, svc.deployment) for c in book.commands],
    )
    if args.json:
        sys.stdout.write(json_text(json.dumps(report, ensure_ascii=False, indent=2)) + "\n")
    else:
        print(render_text(report, book, results, lang))
    auto = [r for r, i in zip(results, book.items, strict=True) if i.mode == "auto"]
    if auto and all(r.status is ItemStatus.NOT_AVAILABLE for r in auto):
        print(
            "cockpit playbook: "
            + t("playbook.cli.nothing_checked", lang, sources=", ".join(sorted(data.missing))),
            file=sys.stderr,
        )
        return 2
    return 0
