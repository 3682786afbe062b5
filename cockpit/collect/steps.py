"""What each screen fetches, through the shared cache: C → D → E, and F."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from cockpit.analysis.blast_radius import (
    BlastRadius,
    access_only,
    decide,
    hidden_outliers,
    note_hidden,
    with_release,
)
from cockpit.analysis.cohort import (
    CohortComparison,
    CohortKind,
    auto_cohort,
    compare,
    compare_revisions,
    with_history,
    with_service,
)
from cockpit.analysis.conclusion import Conclusion
from cockpit.collect.base import Window
from cockpit.collect.breakdown import BreakdownSet, collect_breakdowns
from cockpit.collect.cache import cached
from cockpit.collect.drilldown import DrilldownReport, collect_drilldown, collect_signals
from cockpit.collect.golden import GoldenSignals, collect_golden
from cockpit.collect.load import LoadReport, collect_load
from cockpit.collect.runner import QuerySpec

if TYPE_CHECKING:
    from cockpit.analysis.history import RevisionEntity, WindowInventory
    from cockpit.context import AppContext


async def golden(ctx: AppContext, window: Window, refresh: bool = False) -> GoldenSignals:
    """Screen A's golden signals."""
    return await cached(ctx, "golden", window, lambda: collect_golden(ctx, window), refresh)


async def drilldown(ctx: AppContext, window: Window, refresh: bool = False) -> DrilldownReport:
    """Step C (``refresh`` queries its rows again, :func:`drilldown_signals`)."""
    return await cached(
        ctx, "drilldown", window, lambda: collect_drilldown(ctx, window, refresh), refresh
    )


async def drilldown_signals(
    ctx: AppContext, window: Window, refresh: bool = False
) -> DrilldownReport:
    """Step C's rows before the window's hardware check (the rows :func:`drilldown` reads)."""
    return await cached(
        ctx, "drilldown.signals", window, lambda: collect_signals(ctx, window), refresh
    )


async def breakdowns(ctx: AppContext, window: Window, refresh: bool = False) -> BreakdownSet:
    """Per-entity values of the anomalous signals and of every cohort signal."""

    async def make() -> BreakdownSet:
        from cockpit.collect.base import detection_for
        from cockpit.collect.breakdown import COHORT_SIGNALS
        from cockpit.collect.signals import stats_for

        dd = await drilldown(ctx, window)
        det = await detection_for(ctx, dd.window.end)  # the drilldown's, cached
        anomalous = [s.key for s in dd.drilldown.anomalous() if s.layer != "access"]
        cohort_keys = []
        for sid in COHORT_SIGNALS:
            st = stats_for(det, sid)
            cohort_keys.append(f"{sid}:{'p99' if 'p99' in st else st[0]}")
        return await collect_breakdowns(ctx, window, list(dict.fromkeys(anomalous + cohort_keys)))

    return await cached(ctx, "breakdowns", window, make, refresh)


class ScopeResult(BaseModel):
    """Step D: the blast radius and the anomalous keys it looked at.

    Attributes:
        failed, queried: Signal queries (C's drilldown and the per-entity splits it used)
            that failed, of those run: failed ones decide nothing, so an ``unknown`` blast
            radius with failures is "the metrics source failed", not "no anomaly".
        failure_kind: The class of the first failure (an ``ErrorKind`` value), if any.
        suspect_name: The suspect as every screen names it (its pod, node, GPU index and
            UUID from the window's inventory: :meth:`WindowInventory.name_of`).
    """

    blast_radius: BlastRadius
    anomalous: list[str]
    failed: int = 0
    queried: int = 0
    failure_kind: str = ""
    suspect_name: str = ""


async def scope(ctx: AppContext, window: Window, refresh: bool = False) -> ScopeResult:
    """Step D: blast radius of the anomalous signals."""
    from cockpit.collect.analyze import history_window
    from cockpit.collect.history import collect_history

    dd = await drilldown(ctx, window, refresh)
    bset, hist = await asyncio.gather(
        breakdowns(ctx, window, refresh), collect_history(ctx, history_window(window))
    )
    inv = hist.inventory
    keys = {s.key for s in dd.drilldown.anomalous() if s.layer != "access"}
    used = [b for b in bset.breakdowns if b.key in keys]
    t0, t1 = window.start.timestamp(), window.end.timestamp()
    br = decide(used, bset.inventory, inv.restart_counts(t0, t1))
    br = with_release(br, [i for i in hist.items if i.kind == "rollout"], inv)
    if not keys and any(s.layer == "access" for s in dd.drilldown.anomalous()):
        br = access_only()
    add_hidden(br, dd, bset)
    if br.suspect:
        ctx.metrics.suspect = (br.suspect, br.suspect_kind)
        ctx.metrics.cohort_kind = (
            "previous_revision" if br.cohort_kind == "previous_revision" else None
        )
    queried = [s for s in dd.drilldown.summaries if s.query]
    failed = [s for s in queried if s.failure_kind]
    failed_split = [b for b in used if b.failure]
    kind = failed[0].failure_kind if failed else ""
    if not kind and failed_split:
        kind = failed_split[0].failure.split(":", 1)[0]
    return ScopeResult(
        blast_radius=br,
        anomalous=sorted(keys),
        failed=len(failed) + len(failed_split),
        queried=len(queried) + len(used),
        failure_kind=kind,
        suspect_name=inv.name_of(br.suspect, br.suspect_kind) if br.suspect else "",
    )


def add_hidden(br: BlastRadius, dd: DrilldownReport, bset: BreakdownSet) -> None:
    """Name at D the replicas that stand out on a serving signal whose service aggregate is
    within its threshold (C judged it normal or merely changed), from the per-pod splits
    already fetched (:func:`~cockpit.analysis.blast_radius.hidden_outliers`)."""
    within = {s.key for s in dd.drilldown.summaries if s.verdict in ("normal", "changed")}
    note_hidden(br, hidden_outliers(bset.breakdowns, within))


async def cohort(
    ctx: AppContext,
    window: Window,
    suspect: tuple[str, str] | None = None,
    kind: CohortKind | None = None,
    members: list[str] | None = None,
) -> CohortComparison | None:
    """Step E: the suspect (given, chosen at D, or found now) against its cohort."""
    if suspect is None:
        chosen = ctx.metrics.suspect
        if chosen is None:
            res = await scope(ctx, window)
            if not res.blast_radius.suspect:
                return None
            chosen = (res.blast_radius.suspect, res.blast_radius.suspect_kind)
        suspect = chosen
        if kind is None and ctx.metrics.cohort_kind:
            # D concluded "one revision": E compares with the previous revision.
            kind = ctx.metrics.cohort_kind
    from cockpit.collect.analyze import history_window
    from cockpit.collect.history import collect_history

    # the history ``analyze`` and D read (the window and its quiet baseline before it)
    bset, hist = await asyncio.gather(
        breakdowns(ctx, window), collect_history(ctx, history_window(window))
    )
    rows = (await drilldown_signals(ctx, window)).drilldown.summaries
    name, skind = suspect
    if skind == "revision":
        released = await release_cohort(ctx, window, bset, name)
        if released is not None:
            return with_service(released, rows)
        # no earlier revision in the history: one of its pods against the other revision's
        rev = hist.inventory.revisions.get(name)
        if rev is None or not rev.pods:
            return None
        live = [p for p in rev.pods if not hist.inventory.is_silent(hist.inventory.pods[p])]
        name, skind, kind = (live or rev.pods)[0], "pod", "previous_revision"
    sk: Literal["pod", "gpu", "node"] = (
        "gpu" if skind == "gpu" else "node" if skind == "node" else "pod"
    )
    cdef = auto_cohort(name, sk, bset.inventory, bset.breakdowns, kind, members)
    out = with_service(compare(cdef, bset.breakdowns, bset.inventory), rows)
    t0, t1 = window.start.timestamp(), window.end.timestamp()
    return with_history(out, hist.inventory, hist.items, t0, t1)


def rollout_window(window: Window, first_seen: float | None) -> Window:
    """The window a release's comparison reads the previous revision at once it has gone:
    ``window``'s span and baseline, ending at the minute (floored) the new revision's
    first pod appeared (``first_seen``, Unix seconds; ``window``'s start when unknown)."""
    import math

    from cockpit.collect.base import make_window
    from cockpit.models import from_epoch

    start = first_seen if first_seen is not None else window.start.timestamp()
    end = from_epoch(math.floor(start / 60) * 60)
    return make_window(end, window.span, window.baseline)


def completed_rollouts(inv: WindowInventory) -> list[RevisionEntity]:
    """The revisions of ``inv`` whose previous revision is silent at its end: rollouts that
    completed, whose comparison :func:`release_cohort` reads at the rollout's minute."""
    out = []
    for rev in inv.revisions.values():
        old = inv.previous_revision(rev.name)
        if old is not None and inv.is_silent(old):
            out.append(rev)
    return out


async def release_ahead_specs(
    ctx: AppContext, window: Window, rollouts: list[RevisionEntity], keys: list[str]
) -> list[QuerySpec]:
    """What :func:`release_cohort` will ask for each of ``rollouts``
    (:func:`completed_rollouts` of the window's history, read early with
    :func:`~cockpit.collect.history.early_revisions`), to be asked in the round of the
    rest (one round trip less on a distant Prometheus): the per-replica split of ``keys``
    and the inventory at :func:`rollout_window`."""
    from cockpit.collect.base import detection_for, scope_for
    from cockpit.collect.breakdown import breakdown_specs, inventory_specs

    det = await detection_for(ctx, window.end)
    scope = await scope_for(ctx)
    specs: list[QuerySpec] = []
    for rev in rollouts:
        then = rollout_window(window, rev.first_seen)
        specs += [p.spec for p in breakdown_specs(det, scope, then, keys)]
        specs += inventory_specs(scope, then)
    return specs


async def release_cohort(
    ctx: AppContext, window: Window, bset: BreakdownSet, revision: str
) -> CohortComparison | None:
    """Step E for a release: ``revision``'s replicas now against the previous revision's
    (:meth:`WindowInventory.previous_revision`, from the metrics history over the
    conclusion's span), read now while both serve, else with the same per-replica queries
    at the minute the new revision's first pod appeared (:func:`rollout_window`). None
    when the history knows no previous revision."""
    from cockpit.collect.analyze import history_window
    from cockpit.collect.history import collect_history

    inv = (await collect_history(ctx, history_window(window))).inventory
    new, old = inv.revisions.get(revision), inv.previous_revision(revision)
    if new is None or old is None:
        return None
    if any(v.revision == old.name for b in bset.breakdowns for v in b.values):
        then, at = bset.breakdowns, ""
    else:
        earlier = rollout_window(window, new.first_seen)
        keys = [b.key for b in bset.breakdowns]
        then = (await collect_breakdowns(ctx, earlier, keys)).breakdowns
        at = f"{earlier.end:%H:%M}"
    return compare_revisions(
        new.name, old.name, bset.breakdowns, then, deployment=new.deployment, at=at
    )


async def load(ctx: AppContext, window: Window, refresh: bool = False) -> LoadReport:
    """Step F."""
    return await cached(ctx, "load", window, lambda: collect_load(ctx, window), refresh)


async def likely(ctx: AppContext, window: Window, refresh: bool = False) -> Conclusion:
    """The one "most likely" conclusion of steps D and G (the same as ``cockpit analyze``'s):
    from C, D and F through the shared cache and the window's history."""

    async def make() -> Conclusion:
        from cockpit.analysis.conclusion import conclude
        from cockpit.collect.analyze import gateway_of, history_window
        from cockpit.collect.history import collect_history

        dd = await drilldown(ctx, window, refresh)
        res, ld, hist, gateway = await asyncio.gather(
            scope(ctx, window),
            load(ctx, window),
            collect_history(ctx, history_window(window)),
            gateway_of(ctx, window, dd),
        )
        return conclude(
            dd.drilldown,
            res.blast_radius,
            ld.findings,
            hist.inventory,
            hist.items,
            deployment=ctx.settings.service.deployment,
            gateway=gateway[0],
            gateway_pod=gateway[1],
        )

    return await cached(ctx, "likely", window, make, refresh)
