"""Profile detection and the unified-label report (``cockpit doctor`` prints it)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from cockpit.analysis.discovery import Discovery
from cockpit.analysis.labels import LabelReport, format_report, stack_labels
from cockpit.analysis.profiles import Detection, profile_names
from cockpit.collect.base import detection_for, runner_for
from cockpit.collect.runner import QuerySpec

if TYPE_CHECKING:
    from cockpit.context import AppContext

LABEL_LOOKBACK = "1h"
"""Look for a sample series up to an hour back (a stale exporter still tells its labels)."""


def _probe_metric(det: Detection, profile: str) -> str:
    meta = det.metas[profile]
    names = set()
    for r in det.signals.values():
        if r.profile == profile and r.available and r.metric:
            names.add(r.spec.presence_names()[r.spec.metrics.index(r.metric)])
    for d in meta.detect:
        if d in names or not names:
            return d
    return sorted(names)[0]


def label_specs(det: Detection, at: datetime) -> list[QuerySpec]:
    """One ``topk(1, last_over_time(m[1h]))`` per detected stack."""
    return [
        QuerySpec(
            key=f"labels:{p}",
            query=f"topk(1, last_over_time({_probe_metric(det, p)}[{LABEL_LOOKBACK}]))",
            kind="instant",
            end=at,
        )
        for p in det.profiles
    ]


async def collect_label_report(ctx: AppContext, at: datetime) -> tuple[Detection, LabelReport]:
    """Detect the stacks and report the unified labels on one series of each.

    Raises:
        SourceError: the metric-name listing failed.
    """
    det = await detection_for(ctx, at)
    specs = label_specs(det, at)
    res = await runner_for(ctx).run(specs)
    report = LabelReport()
    for spec in specs:
        prof = spec.key.split(":", 1)[1]
        metric = spec.query.split("(")[2].split("[")[0]
        r = res[spec.key]
        if r.failure is not None:
            from cockpit.analysis.labels import StackLabels

            report.stacks.append(StackLabels(profile=prof, metric=metric, error=r.failure.message))
            continue
        labels = r.vector[0].labels if r.vector else {}
        report.stacks.append(stack_labels(prof, metric, labels))
    return det, report


async def doctor_lines(ctx: AppContext, at: datetime) -> list[str]:
    """What ``cockpit doctor`` prints for the metrics side: stacks, missing signals, labels.

    Raises:
        SourceError: the metric-name listing failed.
    """
    from cockpit.i18n import t
    from cockpit.models.messages import signal_label

    det, report = await collect_label_report(ctx, at)
    lines = [t("metrics.text.profiles", ctx.lang, profiles=profile_names(det.profiles))]
    if not det.profiles:
        # Metric names are listed for the hour before `at`: none known means no data to
        # analyse here, whatever answered the ping.
        lines.append("⚠ " + t("metrics.text.no_stack", ctx.lang))
    for sid, r in sorted(det.signals.items()):
        if not r.available:
            hint = det.enable_hint(r, ctx.lang)
            miss = ", ".join(r.missing)
            lines.append(
                "  "
                + t("metrics.text.missing", ctx.lang, metric=miss)
                + (f" — {hint}" if hint else "")
            )
        elif r.alias:
            lines.append(
                f"  {sid}: {r.metric} ({r.spec.alias_note_zh if ctx.lang == 'zh' else r.spec.alias_note_en})"
            )
    for sid, r in sorted(det.signals.items()):
        # Names no exporter emits are said to be a convention, never offered as standard.
        src = det.metas[r.profile].source_of(r.metric or r.spec.presence_names()[0])
        if src is not None and src.convention:
            lines.append(
                "  "
                + t(
                    "metrics.text.convention",
                    ctx.lang,
                    signal=signal_label(sid, ctx.lang),
                    metric=", ".join(src.metrics),
                    note=src.note_zh if ctx.lang == "zh" else src.note_en,
                )
            )
    for sid, reason in sorted(det.unsupported.items()):
        lines.append(f"  {sid}: {reason}")
    found = ctx.metrics.discovery
    if found is not None:
        lines += discovery_lines(found, det, ctx.settings.service.namespace, ctx.lang)
    lines += format_report(report, ctx.lang)
    return lines


def discovery_lines(found: Discovery, det: Detection, namespace: str, lang: str) -> list[str]:
    """``cockpit doctor``'s lines on discovery: where each source keeps the workload's
    labels, the services of the namespace with their stack, and the stack in use."""
    from cockpit.analysis.profiles import builtin_profiles
    from cockpit.i18n import t

    names = {p.id: p.profile.name for p in builtin_profiles()}
    names.update({pid: m.name for pid, m in det.metas.items()})

    def name(pid: str) -> str:
        return names.get(pid, pid)

    if found.not_recorded:
        return ["  " + t("discovery.not_recorded", lang)]
    if found.failure:
        return ["⚠ " + t("discovery.failed", lang, reason=found.failure)]
    lines = [t("discovery.title", lang)] if found.sources else []
    for pid, src in found.sources.items():
        lines.append(
            "  " + t(f"discovery.mode.{src.mode}", lang, source=name(pid), count=len(src.pod_ips))
        )
    if namespace:
        if found.services:
            lines.append(t("discovery.services", lang, namespace=namespace))
        else:
            lines.append("  " + t("discovery.no_service", lang, namespace=namespace))
    for svc in found.services:
        models = t("discovery.models", lang, models=", ".join(svc.models)) if svc.models else ""
        lines.append(
            "  "
            + t(
                "discovery.service",
                lang,
                workload=svc.workload,
                stack=name(svc.profile),
                pods=len(svc.pods),
                models=models,
            )
        )
    if found.chosen and found.services:
        lines.append("  " + t("discovery.chosen", lang, stack=name(found.chosen)))
    if found.ambiguous:
        lines.append("⚠ " + t("discovery.ambiguous", lang, stack=name(found.chosen)))
    return lines
