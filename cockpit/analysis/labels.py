"""Unified-label report: which of the seed's unified labels the series carry.

Seed 003 §三/§五: every metric and log should carry service, instance, gpu_id, model and
request_id, "otherwise cross-layer correlation is very hard". For each detected stack we
look at one real series and report which equivalents of those labels it has.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from cockpit.analysis.profiles import UNIFIED_LABELS
from cockpit.i18n import t


class StackLabels(BaseModel):
    """One detected stack: the series looked at and the unified labels found on it.

    ``found``: unified label → the label names that carry it (empty list = absent).
    """

    profile: str
    metric: str
    labels: list[str] = Field(default_factory=list)
    found: dict[str, list[str]] = Field(default_factory=dict)
    error: str = ""


class LabelReport(BaseModel):
    """Unified labels per detected stack, and which are absent everywhere."""

    stacks: list[StackLabels] = Field(default_factory=list)

    def absent_everywhere(self) -> list[str]:
        """Unified labels that no stack's series carries."""
        return [
            u for u in UNIFIED_LABELS if not any(s.found.get(u) for s in self.stacks if not s.error)
        ]


def stack_labels(profile: str, metric: str, labels: dict[str, str]) -> StackLabels:
    """Which unified labels one series carries (``labels`` of a sample series)."""
    names = sorted(k for k in labels if k != "__name__")
    found = {u: [n for n in eq if n in labels] for u, eq in UNIFIED_LABELS.items()}
    return StackLabels(profile=profile, metric=metric, labels=names, found=found)


def format_report(report: LabelReport, lang: str) -> list[str]:
    """Lines for ``cockpit doctor`` (and the drilldown screen's header)."""
    lines = [t("metrics.text.labels", lang)]
    for s in report.stacks:
        if s.error:
            lines.append(f"  {s.profile} ({s.metric}): {s.error}")
            continue
        lines.append(f"  {s.profile} ({s.metric}):")
        for u, names in s.found.items():
            if not names and u == "request_id":
                continue  # it belongs in logs and exemplars, not labels: see the hint below
            if names:
                lines.append(
                    "    " + t("metrics.text.label_present", lang, label=u, names=", ".join(names))
                )
            else:
                lines.append("    " + t("metrics.text.label_absent", lang, label=u))
    if "request_id" in report.absent_everywhere():
        lines.append("  " + t("metrics.text.request_id_hint", lang))
    return lines
