"""Step C collector: every canonical signal the detected stacks define, now vs baseline."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel

from cockpit.analysis.layers import Drilldown, drilldown
from cockpit.analysis.profiles import SIGNALS
from cockpit.collect.base import Window, detection_for, runner_for, scope_labels
from cockpit.collect.signals import collect_summaries, plan

if TYPE_CHECKING:
    from cockpit.context import AppContext


class DrilldownReport(BaseModel):
    """Step C: the drilldown plus the window and detected profiles."""

    drilldown: Drilldown
    window: Window
    baseline_note: str = ""
    profiles: list[str]
    slowest_s: float = 0.0
    queries: int = 0


async def collect_drilldown(ctx: AppContext, window: Window) -> DrilldownReport:
    """Collect all layers × golden signals and decide the layer verdicts.

    Raises:
        SourceError: the metric-name listing failed (per-query failures stay per signal).
    """
    det = await detection_for(ctx, window.end)
    planned = plan(det, scope_labels(ctx), window, SIGNALS, ctx.lang)
    res = await collect_summaries(runner_for(ctx), planned, window)
    return DrilldownReport(
        drilldown=drilldown(res.summaries),
        window=res.window,
        baseline_note=res.baseline_note,
        profiles=det.profiles,
        slowest_s=res.slowest_s,
        queries=res.queries,
    )
