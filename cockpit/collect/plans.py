"""Recording plans of the metrics screens (A golden signals, C drilldown, D scope, E
cohort, F load, alerts, I back-test): ``cockpit record`` and the demo build run them so
that an evidence bundle answers exactly the queries the screens and ``cockpit analyze``
make. Registered under the ``cockpit.plans`` entry-point group (see pyproject)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from cockpit.collect.base import BaselineKind, Window, make_window

if TYPE_CHECKING:
    from cockpit.context import AppContext

SCREEN_SPAN = timedelta(hours=2)
"""The window the screens open with (``cockpit.collect.cache.screen_window``)."""


def _windows(
    ctx: AppContext, start: datetime, end: datetime, kinds: tuple[BaselineKind, ...]
) -> list[Window]:
    """The screen window (2 h) and, when different, the recorded window, per baseline."""
    spans = [SCREEN_SPAN]
    if abs((end - start) - SCREEN_SPAN) > timedelta(seconds=1):
        spans.append(end - start)
    return [make_window(end, span, kind) for span in spans for kind in kinds]


def _default_kind(ctx: AppContext) -> BaselineKind:
    b = ctx.settings.baseline
    return "7d" if b == "7d" else "quiet" if b == "quiet" else "1d"


async def _quiet(coro: object) -> None:
    from cockpit.sources.base import SourceError

    try:
        await coro  # type: ignore[misc]
    except SourceError:
        return  # already recorded as a failure; the rest of the plan goes on


async def record_golden(ctx: AppContext, start: datetime, end: datetime) -> None:
    """Screen A: golden signals now vs baseline, the first SLO breach, fired alerts."""
    from cockpit.collect import steps

    for w in _windows(ctx, start, end, (_default_kind(ctx),)):
        await _quiet(steps.golden(ctx, w))


async def record_drilldown(ctx: AppContext, start: datetime, end: datetime) -> None:
    """Steps C, D, E and F as the screens and ``cockpit analyze`` ask for them (every
    baseline the drilldown screen can switch to)."""
    from cockpit.collect import steps
    from cockpit.collect.analyze import run_analysis

    kinds: tuple[BaselineKind, ...] = ("1d", "7d", "quiet")
    for w in _windows(ctx, start, end, kinds):
        await _quiet(steps.drilldown(ctx, w))
    for w in _windows(ctx, start, end, (_default_kind(ctx),)):
        await _quiet(run_analysis(ctx, w))
        await _quiet(steps.scope(ctx, w))
        await _quiet(steps.cohort(ctx, w))
        await _quiet(steps.load(ctx, w))


async def record_backtest(ctx: AppContext, start: datetime, end: datetime) -> None:
    """Step I: the candidate alert expressions over the window (impact start = the first
    SLO breach the golden signals find)."""
    from cockpit.collect import steps
    from cockpit.collect.alerts import collect_backtest

    for w in _windows(ctx, start, end, (_default_kind(ctx),)):
        try:
            g = await steps.golden(ctx, w)
            dd = await steps.drilldown(ctx, w)
        except Exception:
            continue
        breach = g.breach.at if g.breach else None
        await _quiet(collect_backtest(ctx, g.window, dd.drilldown.summaries, breach))


async def record_labels(ctx: AppContext, start: datetime, end: datetime) -> None:
    """``cockpit doctor``'s unified-label report."""
    from cockpit.collect.detect import collect_label_report

    await _quiet(collect_label_report(ctx, end))
