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

if TYPE_CHECKING:
    from cockpit.collect.analyze import AnalyzeReport
    from cockpit.context import AppContext


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
    p.add_argument("--json", action="store_true", help="print JSON (docs/analyze-json.md)")
    p.set_defaults(func=run)


def build_context(args: argparse.Namespace) -> AppContext:
    """Settings, sources and clock from the common flags (live, ``--replay`` or ``--demo``).

    Raises:
        SystemExit: with a message when the bundle cannot be opened.
    """
    import os

    from cockpit.clock import Clock
    from cockpit.config import load_settings
    from cockpit.context import AppContext, Sources

    if getattr(args, "config", None):
        os.environ["COCKPIT_CONFIG"] = args.config
    overrides: dict[str, Any] = {}
    if getattr(args, "prometheus_url", None):
        overrides["prometheus"] = {"url": args.prometheus_url}
    svc = {
        k: getattr(args, k, None)
        for k in ("namespace", "selector", "deployment", "model")
        if getattr(args, k, None)
    }
    if svc:
        overrides["service"] = svc
    if getattr(args, "lang", None):
        overrides["lang"] = args.lang
    settings = load_settings(**overrides)
    lang = settings.resolved_lang()
    bundle = getattr(args, "replay", None)
    if getattr(args, "demo", False):
        try:
            from cockpit.scenarios import demo_bundle_path  # type: ignore[attr-defined]
        except ImportError:
            raise SystemExit("the demo bundle is not part of this build") from None
        bundle = str(demo_bundle_path())
    if bundle:
        from cockpit.sources.bundle import BundleError, epoch_window, open_replay  # type: ignore[import-not-found,unused-ignore]

        try:
            replay = open_replay(bundle)
        except (BundleError, OSError) as exc:
            raise SystemExit(f"cannot open bundle {bundle}: {exc}") from None
        _, end = epoch_window(replay.meta)
        return AppContext(
            settings=settings,
            sources=replay.build_sources(),
            clock=Clock(frozen_at=end),
            lang=lang,
            mode="demo" if getattr(args, "demo", False) else "replay",
        )
    sources = Sources()
    if settings.prometheus.url:
        from cockpit.sources.prometheus import PrometheusSource  # type: ignore[import-not-found,unused-ignore]

        sources.metrics = PrometheusSource(settings.prometheus)
    else:
        sources.missing["metrics"] = "no Prometheus URL configured"
    return AppContext(settings=settings, sources=sources, clock=Clock(), lang=lang)


def run(args: argparse.Namespace) -> int:
    """Run the analysis and print it; exit 2 when the metrics source fails outright."""
    import asyncio

    from cockpit.sources.base import SourceError

    ctx = build_context(args)

    async def go() -> AnalyzeReport:
        from cockpit.collect.analyze import run_analysis
        from cockpit.collect.base import make_window, parse_duration

        kind = args.baseline or ctx.settings.baseline
        if kind not in ("1d", "7d", "quiet"):
            raise ValueError(f"baseline must be 1d, 7d or quiet, not {kind!r}")
        window = make_window(
            ctx.clock.now(),
            parse_duration(args.window),
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
        if f.hint:
            print(f"  {f.hint}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"cockpit analyze: {exc}", file=sys.stderr)
        return 2
    from cockpit.collect.analyze import to_json

    if args.json:
        json.dump(to_json(report, ctx.lang), sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
        return 0
    for line in render_text(report, ctx.lang):
        print(line)
    return 0


def _fmt(v: float | None, unit: str = "") -> str:
    if v is None:
        return "—"
    return f"{v:.4g}{(' ' + unit) if unit else ''}"


def render_text(report: AnalyzeReport, lang: str) -> list[str]:
    """The human-readable report (zh or en)."""
    from cockpit.i18n import t

    dd = report.drilldown
    w = dd.window
    out = [
        t(
            "metrics.text.title",
            lang,
            start=w.start.strftime("%Y-%m-%d %H:%M"),
            end=w.end.strftime("%H:%M UTC"),
            baseline=w.baseline,
        ),
        t("metrics.text.profiles", lang, profiles=", ".join(dd.profiles) or "-"),
    ]
    if dd.baseline_note:
        out.append(t("metrics.text.baseline_fallback", lang))
    out.append("")
    out.append(t("metrics.text.layers", lang))
    for v in dd.drilldown.layers:
        out.append(
            f"  {t(f'metrics.layer.{v.layer}', lang)}: {t(f'metrics.verdict.{v.verdict}', lang)}"
        )
        for line in v.lines[:6]:
            out.append(f"      {line}")
        for m in v.missing:
            out.append("      " + t("metrics.text.missing", lang, metric=m))
    out.append("")
    out.append(t("metrics.text.rules", lang))
    for r in dd.drilldown.rules:
        mark = {"fired": "●", "not_fired": "○", "no_data": "·"}[r.status]
        out.append(
            f"  {mark} {t(f'metrics.rule.{r.id}', lang)} — {t(f'metrics.rule_status.{r.status}', lang)}"
        )
    br = report.blast_radius
    out.append("")
    out.append(t("metrics.text.blast", lang, scope=t(f"metrics.scope.{br.scope}", lang)))
    for line in br.lines:
        out.append(f"  {line}")
    if br.max_z_note:
        out.append(f"  ({br.max_z_note})")
    if br.propose:
        out.append("  " + t(f"metrics.propose.{br.propose}", lang))
    out.append("")
    if report.cohort is None:
        out.append(t("metrics.text.no_cohort", lang))
    else:
        c = report.cohort
        out.append(t("metrics.text.cohort", lang, definition=c.cohort.definition(lang)))
        out.append(
            "  "
            + t(
                "metrics.text.cohort_outliers",
                lang,
                suspect=c.cohort.suspect,
                keys=", ".join(c.outliers) or "-",
            )
        )
        for row in c.rows:
            if row.suspect is None and row.cohort_median is None:
                continue
            flag = " ◀" if row.outlier else ""
            out.append(
                f"    {row.key}: {_fmt(row.suspect, row.unit)} vs {_fmt(row.cohort_median, row.unit)}"
                f" (n={row.cohort_n}){flag}"
            )
    out.append("")
    out.append(t("metrics.text.load", lang))
    for f in report.load.findings:
        mark = {"fired": "●", "not_fired": "○", "no_data": "·"}[f.status]
        nums = ", ".join(f"{k}={v:.4g}" for k, v in f.numbers.items())
        out.append(f"  {mark} {t(f'metrics.load.{f.id}', lang)}" + (f" ({nums})" if nums else ""))
    out.append("")
    if report.alerts:
        out.append(t("metrics.text.alerts", lang))
        for a in report.alerts:
            out.append(f"  {a.first.strftime('%H:%M:%S')} {a.text()}")
    else:
        out.append(t("metrics.text.no_alerts", lang))
    return out
