"""``cockpit analyze``: steps C, D, E and F without the UI.

Prints the layer verdicts with their evidence and the seed's reading rules, the blast
radius with the numbers behind it, the cohort outliers and the load findings; ``--json``
prints the stable shape documented in ``docs/analyze-json.md``. Works live, with
``--replay BUNDLE`` and with ``--demo``.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from cockpit.neutral import json_text

if TYPE_CHECKING:
    from cockpit.collect.analyze import AnalyzeReport
    from cockpit.models.messages import Msg


def register(subparsers: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Add the ``analyze`` subcommand."""
    p = subparsers.add_parser(
        "analyze",
        parents=parents,
        help="layer verdicts, blast radius, cohort outliers and load findings (steps C–F)",
    )
    p.add_argument("--window", default="2h", help="window ending now (30m, 2h, 1d; default 2h)")
    p.add_argument(
        "--baseline",
        choices=("1d", "7d", "quiet"),
        help="baseline: same window 1 d / 7 d earlier, or the quiet window before (default: config)",
    )
    p.add_argument(
        "--at",
        metavar="TIME",
        help="end of the window (UTC, e.g. 2026-11-27T12:55; default now)",
        default=argparse.SUPPRESS,  # keep a --at given before the command
    )
    p.add_argument("--json", action="store_true", help="print JSON (docs/analyze-json.md)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the analysis and print it; exit 2 when the metrics source fails outright."""
    import asyncio

    from cockpit.sources.base import SourceError
    from cockpit.wiring import BootError, build_context

    try:
        ctx = build_context(args, with_session=False)
    except BootError as exc:
        print(f"cockpit analyze: {exc}", file=sys.stderr)
        return 2

    async def go() -> AnalyzeReport:
        from cockpit.collect.analyze import run_analysis
        from cockpit.collect.base import MIN_WINDOW, make_window
        from cockpit.timeparse import parse_duration

        kind = args.baseline or ctx.settings.baseline
        if kind not in ("1d", "7d", "quiet"):
            raise ValueError(f"baseline must be 1d, 7d or quiet, not {kind!r}")
        span = parse_duration(args.window)
        if span < MIN_WINDOW:
            from cockpit.i18n import t

            raise ValueError(t("metrics.text.window_too_short", ctx.lang, value=args.window))
        window = make_window(
            ctx.clock.now(),
            span,
            "1d" if kind == "1d" else "7d" if kind == "7d" else "quiet",
        )
        try:
            return await run_analysis(ctx, window)
        finally:
            await ctx.sources.close()

    try:
        report = asyncio.run(go())
    except SourceError as exc:
        f = exc.failure
        print(f"cockpit analyze: {f.source}: {f.kind.value}: {f.message}", file=sys.stderr)
        if hint := f.hint_in(ctx.lang):
            print(f"  {hint}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"cockpit analyze: {exc}", file=sys.stderr)
        return 2
    from cockpit.collect.analyze import to_json

    notes = notes_of(report, ctx)
    if args.json:
        doc = to_json(report, ctx.lang)
        doc["notes"] = [
            {**m.model_dump(mode="json"), "text": m.text(ctx.lang)}
            for part in ("head", "scope", "data")
            for m in notes[part]
        ]
        sys.stdout.write(json_text(json.dumps(doc, ensure_ascii=False, indent=2)) + "\n")
        return 0
    lines = render_text(
        report,
        ctx.lang,
        "\n".join(m.text(ctx.lang) for m in notes["head"]),
        [m.text(ctx.lang) for m in notes["data"]],
    )
    lines[2:2] = [m.text(ctx.lang) for m in notes["scope"]]
    for line in lines:
        print(line)
    return 0


def notes_of(report: AnalyzeReport, ctx: Any) -> dict[str, list[Msg]]:
    """What the report must say beside its verdicts, as messages, by where the text puts
    them: ``head`` (the replayed bundle does not hold this window), ``scope`` (how far
    ``--deployment`` / ``--selector`` narrowed the queries) and ``data`` (nothing matched
    at all; no series of pods named like the deployment). ``--json`` gives them all under
    ``notes``."""
    from cockpit.collect.base import SELECTOR_NO_POD
    from cockpit.collect.drilldown import deploy_command
    from cockpit.i18n import t
    from cockpit.models.messages import msg

    head: list[Msg] = []
    scope: list[Msg] = []
    data: list[Msg] = []
    meta = ctx.bundle_meta
    outside = outside_bundle(report)
    if meta is not None and meta.window_start and meta.window_end and outside:
        span = int((meta.window_end - meta.window_start).total_seconds() // 60)
        head.append(
            msg(
                "metrics.text.not_in_bundle",
                start=f"{meta.window_start:%Y-%m-%d %H:%M}",
                end=f"{meta.window_end:%H:%M}",
                span=f"{span // 60}h" if span % 60 == 0 else f"{span}m",
                at=f"{meta.window_end:%Y-%m-%dT%H:%MZ}",
            )
        )
    svc = ctx.settings.service
    dd = report.drilldown
    stacks = ", ".join(dd.not_narrowed)
    if svc.deployment and dd.not_narrowed:
        scope.append(msg("metrics.text.scope_deployment", name=svc.deployment, stacks=stacks))
    elif svc.selector and not svc.deployment:
        if dd.selector_workloads:
            key = (
                "metrics.text.scope_selector_resolved_wide"
                if dd.not_narrowed
                else "metrics.text.scope_selector_resolved"
            )
            workloads = ", ".join(dd.selector_workloads)
            scope.append(msg(key, selector=svc.selector, workloads=workloads, stacks=stacks))
        else:
            reason = dd.selector_failure or "-"
            if ctx.sources.kube is None:
                reason = ctx.sources.missing_text("kube", ctx.lang, reason)
            elif reason == SELECTOR_NO_POD:
                reason = t("metrics.text.selector_no_pod", ctx.lang)
            scope.append(msg("metrics.text.scope_selector", selector=svc.selector, reason=reason))
    scope += [msg("discovery.joined", source=name) for name in dd.joined]
    if dd.services:
        services = ", ".join(dd.services)
        scope.append(msg("discovery.several", services=services, stack=dd.analysed_with))
    if not head:
        if all(v.verdict == "no_data" for v in dd.drilldown.layers) and not any(
            s.now.value is not None for s in dd.drilldown.summaries
        ):
            data.append(msg("metrics.text.nothing_matched"))
        elif dd.no_pod_matched:
            data.append(
                msg(
                    "metrics.text.no_pod_matched",
                    pattern=dd.scope.get("pod", ""),
                    command=deploy_command(dd.scope.get("namespace", "")),
                )
            )
    return {"head": head, "scope": scope, "data": data}


def outside_bundle(report: AnalyzeReport) -> bool:
    """Every query of the drilldown was missing from the replayed bundle: the window asked
    for is not the one recorded."""
    tried = [s for s in report.drilldown.drilldown.summaries if s.query]
    return bool(tried) and all(
        s.now.value is None and "not in this bundle" in (s.now.reason or "") for s in tried
    )


def _named(report: AnalyzeReport, key: str) -> str:
    """The cohort's suspect ``key`` (a pod, GPU UUID, node or revision) as E and the
    conclusion name it (``qwen-chat-…-gjcjk on gpu-node-a GPU 2 (GPU-49f3…)``) when it is
    the conclusion's suspect; else the key as it is."""
    s = report.conclusion.suspect
    if s is not None and s.name and key in {s.pod, s.uuid, s.node, s.new_revision} - {""}:
        return s.name
    return key


def render_text(
    report: AnalyzeReport, lang: str, bundle_note: str = "", data_notes: list[str] | None = None
) -> list[str]:
    """The human-readable report (zh or en); ``bundle_note``, when set, says that the
    replayed bundle does not hold this window; ``data_notes`` (see :func:`notes_of`) come
    after the layers."""
    from cockpit.analysis.cohort import median_text, suspect_text
    from cockpit.analysis.layers import shown_readings
    from cockpit.analysis.profiles import profile_names
    from cockpit.collect.base import fallback_text
    from cockpit.i18n import t
    from cockpit.models.messages import signal_names

    dd = report.drilldown
    w = dd.window
    out = [
        t(
            "metrics.text.title",
            lang,
            start=w.start.strftime("%Y-%m-%d %H:%M"),
            end=w.end.strftime(
                "%H:%M UTC" if w.end.date() == w.start.date() else "%Y-%m-%d %H:%M UTC"
            ),
            baseline=t(f"metrics.baseline_kind.{w.baseline}", lang),
        ),
        t("metrics.text.profiles", lang, profiles=profile_names(dd.profiles)),
    ]
    if bundle_note:
        out.append(bundle_note)
    elif dd.baseline_note:
        out.append(fallback_text(dd.baseline_from, lang, dd.window))
    out.append("")
    out.append(t("metrics.text.layers", lang))
    for v in dd.drilldown.layers:
        partial = (
            t("metrics.text.partial", lang, decided=v.signals_decided, total=v.signals_total)
            if v.partial
            else ""
        )
        out.append(f"  {t(f'metrics.layer.{v.layer}', lang)}: {v.headline(lang)}{partial}")
        texts = v.lines_text(lang)
        for line in texts[:6]:
            out.append(f"      {line}")
        if len(texts) > 6:
            out.append("      " + t("metrics.text.more_json", lang, n=len(texts) - 6))
        for m in v.missing_in(lang):
            out.append("      " + t("metrics.text.missing", lang, metric=m))
    for note in data_notes or []:
        out.append("  " + note)
    out.append("")
    out.append(t("metrics.text.rules", lang))
    for r, line in zip(dd.drilldown.rules, shown_readings(dd.drilldown.rules, lang), strict=True):
        mark = {"fired": "●", "not_fired": "○", "no_data": "·"}[r.status]
        out.append(
            f"  {mark} {t(f'metrics.rule.{r.id}', lang)} — {t(f'metrics.rule_status.{r.status}', lang)}"
        )
        if line:
            # what the rule was read on, as the table shows it
            out.append(f"      {line}")
    br = report.blast_radius
    out.append("")
    out += report.conclusion.lines(lang)  # as D and G show it
    out.append("")
    out.append(t("metrics.text.blast", lang, scope=t(f"metrics.scope.{br.scope}", lang)))
    for line in br.lines_text(lang):
        out.append(f"  {line}")
    if br.propose_key:
        out.append("  " + t(br.propose_key, lang))
    out.append("")
    if report.cohort is None:
        out.append(t("metrics.text.no_cohort", lang))
    else:
        c = report.cohort
        who = _named(report, c.cohort.suspect)
        out.append(t("metrics.text.cohort", lang, definition=c.cohort.definition(lang)))
        out.append(
            "  "
            + t(
                c.heading_key,
                lang,
                suspect=who,
                names=signal_names(*c.outliers).text(lang) or "-",
            )
        )
        if c.restarts is not None and c.restarts.n:
            out.append(f"  {who}: {c.restarts.msg().text(lang)}")
        for row in c.rows:
            if row.suspect is None and row.cohort_median is None:
                continue
            flag = " ◀" if row.outlier else ""
            out.append(
                "    "
                + t(
                    "evidence.cohort_row",
                    lang,
                    key=row.key,
                    name=row.label(lang),  # per replica or GPU, never C's label
                    suspect=suspect_text(row, lang),  # as E shows it
                    median=median_text(row, lang),
                    n=row.cohort_n,
                )
                + (
                    t("evidence.cohort_service", lang, value=row.service_msg.text(lang))
                    if row.service_msg is not None
                    else ""
                )
                + flag
            )
    out.append("")
    out.append(t("metrics.text.load", lang))
    for f in report.load.findings:
        mark = {"fired": "●", "not_fired": "○", "no_data": "·"}[f.status]
        out.append(
            f"  {mark} {t(f'metrics.load.{f.id}', lang)} — {t(f'metrics.rule_status.{f.status}', lang)}"
        )
        for text in f.text(lang):
            out.append(f"      {text}")
    out.append("")
    if report.alerts:
        out.append(t("metrics.text.alerts", lang))
        for a in report.alerts:
            out.append(f"  {a.first.strftime('%H:%M:%S')} {a.text()}")
    elif (failed := report.alerts_failure) is not None:
        out.append(
            t("metrics.text.alerts_failed", lang, kind=t(f"error.{failed.kind.value}", lang))
            + f": {failed.message}"
        )
    else:
        out.append(t("metrics.text.no_alerts", lang))
    return out
