"""Step C collector: every canonical signal the detected stacks define, now vs baseline."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from cockpit.analysis.layers import Drilldown, drilldown
from cockpit.analysis.profiles import Detection, builtin_profiles
from cockpit.collect.base import (
    ScopeResolution,
    Window,
    detection_for,
    runner_for,
    scope_for,
)
from cockpit.collect.signals import collect_summaries, plan
from cockpit.commandline import namespace_flag
from cockpit.models.signals import SIGNALS

if TYPE_CHECKING:
    from cockpit.analysis.golden import SignalSummary
    from cockpit.collect.history import HistoryReport
    from cockpit.context import AppContext


class DrilldownReport(BaseModel):
    """Step C: the drilldown plus the window and detected profiles.

    Attributes:
        baseline_note, baseline_from: Why and from which baseline (``1d``/``7d``) it fell
            back to the quiet window, if it did.
        scope: The scope the queries were narrowed by (``namespace``, ``model``, ``pod``:
            the regex of the deployment's pod names; empty = not narrowed).
        not_narrowed: With a deployment in scope, the detected stacks whose series have no
            pod label, so that they still count the whole namespace.
        no_pod_matched: A deployment is in scope, none of the queries it narrowed found
            a series and at least one of them ran and answered none (a wrong name, or
            pods named otherwise; not a failed query or a window a bundle does not hold).
        namespace_wide_layers: With a deployment in scope, the layers with a signal whose
            series could not be narrowed to it.
        selector_workloads, selector_failure: What ``service.selector`` resolved to
            (``Kind/name``), or why it could not be (see
            :func:`cockpit.collect.base.scope_for`).
        joined: The detected stacks whose series carry no ``namespace``/``pod`` and were
            joined to the scope through ``instance`` → pod IP (``kube_pod_info``), by
            human name.
        services: With several engines serving the scope (no deployment, selector or
            model told them apart), each service as ``workload (stack)``; the analysis
            used the stack with the most pods, ``analysed_with`` (human name).
    """

    drilldown: Drilldown
    window: Window
    baseline_note: str = ""
    baseline_from: str = ""
    profiles: list[str]
    slowest_s: float = 0.0
    queries: int = 0
    scope: dict[str, str] = Field(default_factory=dict)
    not_narrowed: list[str] = Field(default_factory=list)
    no_pod_matched: bool = False
    namespace_wide_layers: list[str] = Field(default_factory=list)
    selector_workloads: list[str] = Field(default_factory=list)
    selector_failure: str = ""
    joined: list[str] = Field(default_factory=list)
    services: list[str] = Field(default_factory=list)
    analysed_with: str = ""
    window_checked: bool = True


def deploy_command(namespace: str) -> str:
    """The kubectl command that lists the deployments a ``--deployment`` name can be
    checked against: of ``namespace``, or of every namespace when it is unknown."""
    return (
        f"kubectl get deploy{namespace_flag(namespace)}" if namespace else "kubectl get deploy -A"
    )


def _no_series(s: SignalSummary) -> bool:
    """The query ran and found no series (as opposed to failing, or a replayed bundle
    not holding it)."""
    return s.reason_msg is not None and s.reason_msg.key == "evidence.reason.no_series"


async def collect_drilldown(
    ctx: AppContext, window: Window, refresh: bool = False
) -> DrilldownReport:
    """Collect all layers × golden signals and decide the layer verdicts, the hardware
    layer's over the window's history.

    The signal rows are :func:`collect_signals`' (through the shared cache, so the rows
    step C shows first are these very objects); the window's history is collected beside
    them. ``refresh`` queries the rows again instead of reading them from the cache.

    Raises:
        SourceError: the metric-name listing failed (per-query failures stay per signal).
    """
    import asyncio

    from cockpit.collect import steps
    from cockpit.collect.history import collect_history

    signals, hist = await asyncio.gather(
        steps.drilldown_signals(ctx, window, refresh), collect_history(ctx, window)
    )
    return with_window_check(signals, hist)


def with_window_check(signals: DrilldownReport, hist: HistoryReport) -> DrilldownReport:
    """``signals`` (a :func:`collect_signals` report) with the hardware verdict made to
    cover the window's history (a lost GPU has no "now" to judge). The rows are the same
    objects; the layers and rules are decided again (pure), so ``signals`` is left as it
    was."""
    from cockpit.analysis.history import apply_hardware_window

    dd = drilldown(signals.drilldown.summaries)
    apply_hardware_window(dd.layer("hardware"), dd.summaries, hist.inventory, hist.items)
    return signals.model_copy(update={"drilldown": dd, "window_checked": True})


async def collect_signals(ctx: AppContext, window: Window) -> DrilldownReport:
    """Step C's rows: every signal now vs baseline, layer verdicts and reading rules, with
    the hardware layer not yet checked against the window's history
    (``window_checked=False``; :func:`collect_drilldown` adds that check).

    Raises:
        SourceError: the metric-name listing failed (per-query failures stay per signal).
    """
    import asyncio

    from cockpit.collect import steps
    from cockpit.collect.golden import golden_plan

    det = await detection_for(ctx, window.end)
    scope = await scope_for(ctx)
    planned = plan(det, scope, window, SIGNALS, ctx.lang)
    # Screen A's rows are the same signals: read them, never compute them twice.
    golden_keys = {p.key for p in golden_plan(det, scope, window, ctx.lang)[0]}
    rest = [p for p in planned if p.key not in golden_keys]
    runner = runner_for(ctx)
    golden, res = await asyncio.gather(
        steps.golden(ctx, window),
        collect_summaries(runner, rest, window, empty=ctx.metrics.empty_spans),
    )
    if res.window.baseline != golden.window.baseline:
        # One fell back to the quiet window and the other did not: one baseline for all.
        res = await collect_summaries(
            runner, rest, golden.window, fallback_quiet=False, empty=ctx.metrics.empty_spans
        )
    by_key = {s.key: s for s in golden.rows} | {s.key: s for s in res.summaries}
    summaries = [by_key[p.key] for p in planned if p.key in by_key]
    pod = scope.get("pod")
    narrowed = [s for s in summaries if pod and _narrowed(s.query)]
    wide = {s.layer for s in summaries if pod and s.query and not _narrowed(s.query)}
    resolution = ctx.metrics.scope
    if not isinstance(resolution, ScopeResolution) or ctx.settings.service.deployment:
        resolution = None
    return DrilldownReport(
        drilldown=drilldown(summaries),
        window=golden.window,
        baseline_note=golden.baseline_note,
        baseline_from=golden.baseline_from,
        profiles=det.profiles,
        slowest_s=max(res.slowest_s, golden.slowest_s),
        queries=res.queries + golden.queries,
        scope=scope,
        not_narrowed=det.unscoped("pod") if scope.get("pod") else [],
        no_pod_matched=bool(narrowed)
        and all(s.now.value is None for s in narrowed)
        and any(_no_series(s) for s in narrowed),
        namespace_wide_layers=sorted(wide),
        selector_workloads=resolution.workloads if resolution else [],
        selector_failure=resolution.failure if resolution else "",
        joined=sorted(det.metas[p].name for p in det.joins if p in det.metas),
        window_checked=False,
        **_ambiguity(ctx, det),
    )


def _ambiguity(ctx: AppContext, det: Detection) -> dict[str, Any]:
    """``services`` and ``analysed_with`` when discovery had to pick between engines."""
    found = ctx.metrics.discovery
    if found is None or not found.ambiguous:
        return {}
    meta = det.metas.get(found.chosen)
    names = {p.id: p.profile.name for p in builtin_profiles()}
    return {
        "services": [f"{s.workload} ({names.get(s.profile, s.profile)})" for s in found.services],
        "analysed_with": meta.name if meta is not None else found.chosen,
    }


def _narrowed(query: str) -> bool:
    """The query is narrowed to the scope's pods: by pod name, or by their IPs."""
    return 'pod=~"' in query or 'instance=~"' in query
