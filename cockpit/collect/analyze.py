"""Steps C, D, E and F in one pass, for ``cockpit analyze`` and the screens.

The JSON shape of :class:`AnalyzeReport` is documented in ``docs/analyze-json.md`` and is
kept stable (``schema`` is bumped on any incompatible change).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from cockpit.analysis.alerts import FiredAlert
from cockpit.analysis.blast_radius import BlastRadius, access_only, decide, with_release
from cockpit.analysis.cohort import (
    CohortComparison,
    auto_cohort,
    compare,
    with_history,
    with_service,
)
from cockpit.analysis.conclusion import Conclusion, conclude
from cockpit.analysis.golden import value_msg
from cockpit.collect.base import Window
from cockpit.collect.breakdown import BreakdownSet, collect_breakdowns
from cockpit.collect.drilldown import DrilldownReport
from cockpit.collect.history import collect_history, collect_history_within, history_specs
from cockpit.collect.load import LoadReport, collect_load
from cockpit.collect.runner import QueryResult, QuerySpec, RunnerStats
from cockpit.models.messages import Msg
from cockpit.sources.base import SourceError, SourceFailure

if TYPE_CHECKING:
    from cockpit.context import AppContext

log = logging.getLogger(__name__)

SCHEMA = 1

GATEWAY_SIGNALS = ("access.error_ratio_5xx", "access.timeouts")
"""The access-layer signals whose anomaly makes the gateway the suspect, named by its
split (:func:`gateway_of`)."""


class Timing(BaseModel):
    """What the run asked of Prometheus (``timing`` of the JSON).

    Attributes:
        stats: The queries the run sent (every step's, each at most once) and the asks
            another step's query answered (:class:`RunnerStats`).
        wall_s: Wall time of the whole run (seconds).
        peak_concurrency: The most queries in flight at once.
    """

    stats: RunnerStats = Field(default_factory=RunnerStats)
    wall_s: float = 0.0
    peak_concurrency: int = 0


class AnalyzeReport(BaseModel):
    """Everything ``cockpit analyze`` found (pure data; rendered as text or JSON)."""

    drilldown: DrilldownReport
    breakdowns: BreakdownSet
    blast_radius: BlastRadius
    cohort: CohortComparison | None = None
    load: LoadReport
    alerts: list[FiredAlert] = Field(default_factory=list)
    alerts_failure: SourceFailure | None = None
    conclusion: Conclusion = Field(default_factory=Conclusion)
    timing: Timing = Field(default_factory=Timing)


async def run_analysis(ctx: AppContext, window: Window) -> AnalyzeReport:
    """Run C, D, E and F against the context's metrics source, the cyclic garbage
    collector held off meanwhile (:func:`~cockpit.collect.gcpause.collector_held`).

    Raises:
        SourceError: when nothing can be planned (metric-name listing failed).
    """
    from cockpit.collect.gcpause import collector_held

    with collector_held():
        return await _run_analysis(ctx, window)


async def _run_analysis(ctx: AppContext, window: Window) -> AnalyzeReport:
    import time

    from cockpit.collect import steps
    from cockpit.collect.alerts import collect_alerts
    from cockpit.collect.base import runner_for
    from cockpit.collect.breakdown import COHORT_SIGNALS
    from cockpit.collect.runner import cancel_all

    t0 = time.perf_counter()
    runner = runner_for(ctx)
    sent0, shared0 = len(runner.stats.log), runner.stats.shared
    from cockpit.collect.base import detection_for
    from cockpit.collect.signals import stats_for

    asked = window  # the cache key every step shares (the drilldown may fall back to quiet)
    det = await detection_for(ctx, window.end)
    cohort_keys = [
        f"{sid}:{'p99' if 'p99' in stats_for(det, sid) else stats_for(det, sid)[0]}"
        for sid in COHORT_SIGNALS
    ]

    async def alerts() -> tuple[list[FiredAlert], SourceFailure | None]:
        try:
            return await collect_alerts(ctx, asked), None
        except SourceError as exc:
            return [], exc.failure

    # What does not depend on step C's verdicts starts with it: the cohort signals' split,
    # the alerts and the window's history (one round trip less on a distant Prometheus).
    # The history is awaited last: the splits and the load of the anomalous signals go on
    # while its later round trips (the nodes, a lost GPU's last values) run.
    # The history's range queries are the heaviest of the round (its pods, nodes and GPUs
    # at a fine step): asked for first, they are not queued at the server behind the
    # light ones, and the history shares their answers.
    early = runner.start(await history_specs(ctx, history_window(asked)))
    history_task = asyncio.ensure_future(collect_history(ctx, history_window(asked)))
    # C's own history (the hardware verdict over the window) is the same series over the
    # later half of that span: read from its answers, not asked for a second time.
    within_task = asyncio.ensure_future(collect_history_within(ctx, asked, history_window(asked)))
    # What depends on C's verdicts is asked for with C, ahead of them (one round trip
    # less on a distant Prometheus): the per-replica splits of every signal C may find
    # anomalous, the length mixes at every baseline C may fall back to, and the
    # gateway's split. The steps below ask for what they need and share these answers
    # (each query is sent once); the rest is dropped unread.
    ahead = runner.start(await _ahead_specs(ctx, asked, cohort_keys))
    # A release's comparison reads the previous revision at the minute of the rollout
    # when its pods are gone: asked for as soon as the history's cheap reads name the
    # revisions, while the heavy queries of this round still run.
    async with _release_asked_ahead(ctx, asked, cohort_keys):
        try:
            dd, cohort_set, (fired, alerts_failure) = await asyncio.gather(
                steps.drilldown(ctx, asked),
                collect_breakdowns(ctx, asked, cohort_keys),
                alerts(),
            )
            anomalous = [s.key for s in dd.drilldown.anomalous() if s.layer != "access"]
            extra = [k for k in dict.fromkeys(anomalous) if k not in cohort_keys]

            async def more() -> BreakdownSet | None:
                return await collect_breakdowns(ctx, asked, extra) if extra else None

            # The gateway's 5xx per controller pod and Ingress names the gateway when it is
            # the suspect.
            extra_set, load, gateway = await asyncio.gather(
                more(), collect_load(ctx, asked), gateway_of(ctx, asked, dd)
            )
            history = await history_task
        finally:
            for task in (history_task, within_task):
                if not task.done():
                    task.cancel()
                elif not task.cancelled():
                    task.exception()  # raised to its caller already (the drilldown shares it)
            cancel_all(ahead)
            cancel_all(early)
        bset = cohort_set
        if extra_set is not None:
            bset = cohort_set.model_copy(
                update={"breakdowns": cohort_set.breakdowns + extra_set.breakdowns}
            )
        anomalous_set = set(anomalous)
        restarts = history.inventory.restart_counts(asked.start.timestamp(), asked.end.timestamp())
        br = decide(
            [b for b in bset.breakdowns if b.key in anomalous_set], bset.inventory, restarts
        )
        br = with_release(br, [i for i in history.items if i.kind == "rollout"], history.inventory)
        if not anomalous and any(s.layer == "access" for s in dd.drilldown.anomalous()):
            br = access_only()
        steps.add_hidden(br, dd, bset)
        cohort = None
        if br.suspect_kind == "revision":
            released = await steps.release_cohort(ctx, asked, bset, br.suspect)
            cohort = None if released is None else with_service(released, dd.drilldown.summaries)
        elif br.suspect and br.suspect_kind in ("pod", "gpu", "node"):
            cdef = auto_cohort(
                br.suspect,
                br.suspect_kind,  # type: ignore[arg-type]
                bset.inventory,
                bset.breakdowns,
                "previous_revision" if br.cohort_kind == "previous_revision" else None,
            )
            cohort = with_history(
                with_service(
                    compare(cdef, bset.breakdowns, bset.inventory), dd.drilldown.summaries
                ),
                history.inventory,
                history.items,
                asked.start.timestamp(),
                asked.end.timestamp(),
            )
        return AnalyzeReport(
            drilldown=dd,
            breakdowns=bset,
            blast_radius=br,
            cohort=cohort,
            load=load,
            alerts=fired,
            alerts_failure=alerts_failure,
            conclusion=conclude(
                dd.drilldown,
                br,
                load.findings,
                history.inventory,
                history.items,
                deployment=ctx.settings.service.deployment,
                gateway=gateway[0],
                gateway_pod=gateway[1],
            ),
            timing=Timing(
                stats=runner.stats.since(sent0, shared0),
                wall_s=time.perf_counter() - t0,
                peak_concurrency=runner.peak_in_flight,
            ),
        )


@contextlib.asynccontextmanager
async def _release_asked_ahead(
    ctx: AppContext, window: Window, cohort_keys: list[str]
) -> AsyncIterator[None]:
    """While inside: once the history's cheap reads name the revisions
    (:func:`~cockpit.collect.history.early_revisions`), what a completed rollout's
    comparison reads at its minute (:func:`~cockpit.collect.steps.release_ahead_specs`)
    is asked for, and kept in flight until the end, when
    :func:`~cockpit.collect.steps.release_cohort` has shared it. Nothing is asked when
    the history holds no completed rollout; a failure here only loses the head start."""
    from cockpit.collect import steps
    from cockpit.collect.base import runner_for
    from cockpit.collect.history import early_revisions
    from cockpit.collect.runner import cancel_all

    asked: dict[str, asyncio.Future[QueryResult]] = {}

    async def ask() -> None:
        rollouts = steps.completed_rollouts(await early_revisions(ctx, history_window(window)))
        if not rollouts:
            return
        keys = cohort_keys + [k for k in await _planned_keys(ctx, window) if k not in cohort_keys]
        specs = await steps.release_ahead_specs(ctx, window, rollouts, keys)
        asked.update(runner_for(ctx).start(specs))

    task = asyncio.ensure_future(ask())
    try:
        yield
    finally:
        if not task.done():
            task.cancel()
        elif not task.cancelled() and task.exception() is not None:
            log.debug("asking ahead for the rollout's minute failed", exc_info=task.exception())
        cancel_all(asked)


async def _ahead_specs(ctx: AppContext, window: Window, cohort_keys: list[str]) -> list[QuerySpec]:
    """The queries :func:`run_analysis` asks for once C has judged, whatever C judges:
    the per-replica split of every planned signal (:func:`breakdown_specs`) beyond
    ``cohort_keys``, the length mixes (:func:`mix_specs`) at the window's baseline (unless
    the server is known to hold nothing there) and at both quiet ones, and the gateway's
    split of its 5xx ratio and timeouts (:func:`gateway_spec`)."""
    from cockpit.collect.base import detection_for, known_empty, scope_for
    from cockpit.collect.breakdown import breakdown_specs, gateway_spec
    from cockpit.collect.load import MIX_REACH, mix_specs
    from cockpit.collect.signals import inside_quiet

    det = await detection_for(ctx, window.end)
    scope = await scope_for(ctx)
    keys = await _planned_keys(ctx, window)
    specs = [p.spec for p in breakdown_specs(det, scope, window, keys) if p.key not in cohort_keys]
    baselines = [window, window.with_baseline("quiet")]
    baselines.append(window.with_baseline("quiet", inside_quiet(window)))
    for i, w in enumerate(baselines):
        if w.baseline != "quiet" and known_empty(
            ctx.metrics.empty_spans, w.baseline_end, w.baseline_end, MIX_REACH
        ):
            continue  # no history there (:func:`empty_history`): the quiet ones serve
        specs += [
            s.model_copy(update={"key": f"ahead{i}:{s.key}"})
            for s in mix_specs(det, scope, w).values()
        ]
    for sid in GATEWAY_SIGNALS:
        gw = gateway_spec(det, scope, window, sid)
        if gw is not None:
            specs.append(gw)
    return specs


async def _planned_keys(ctx: AppContext, window: Window) -> list[str]:
    """The summary keys (``signal:stat``) step C plans a query for."""
    from cockpit.collect.base import detection_for, scope_for
    from cockpit.collect.signals import plan
    from cockpit.models.signals import SIGNALS

    det = await detection_for(ctx, window.end)
    scope = await scope_for(ctx)
    return [p.key for p in plan(det, scope, window, SIGNALS, ctx.lang) if p.query]


def history_window(window: Window) -> Window:
    """The span the conclusion reads history over: the window and as long again before it
    (its quiet baseline), so that a release rolled out just before the impact is seen."""
    from cockpit.collect.base import make_window

    return make_window(window.end, window.span * 2, window.baseline)


async def gateway_of(ctx: AppContext, window: Window, dd: DrilldownReport) -> tuple[str, str]:
    """``(name, controller pod)`` of the gateway whose 5xx ratio or timeouts C found
    anomalous (:func:`~cockpit.analysis.conclusion.gateway_name` of its labels, else the
    detected access stack's name); ``("", "")`` when neither is anomalous."""
    from cockpit.analysis.conclusion import gateway_name
    from cockpit.collect.base import detection_for
    from cockpit.collect.breakdown import gateway_labels

    bad = [s.signal for s in dd.drilldown.anomalous() if s.signal in GATEWAY_SIGNALS]
    if not bad:
        return "", ""
    labels = await gateway_labels(ctx, window, dict.fromkeys(bad))
    det = await detection_for(ctx, window.end)
    return gateway_name(labels) or _gateway_stack(det), labels.get("controller_pod", "")


def _gateway_stack(det: Any) -> str:
    """The name of the detected access-layer stack (``ingress-nginx``), or ``""``."""
    for meta in getattr(det, "metas", {}).values():
        if getattr(meta, "stack", "") == "access":
            return str(getattr(meta, "name", ""))
    return ""


def gateway_names(det: Any, bset: BreakdownSet | None) -> list[str]:
    """What the access layer is called: its detected stack (``ingress-nginx``) and the
    entities (controller pods) its signals were split by, for a trainee to name the
    gateway among (a drill's suspect choices)."""
    names = [_gateway_stack(det)]
    if bset is not None:
        names += [
            v.entity for b in bset.breakdowns if b.key.startswith("access.") for v in b.values
        ]
    return [n for n in dict.fromkeys(names) if n]


def conclusion_json(c: Conclusion, lang: str) -> dict[str, Any]:
    """The ``conclusion`` object of the JSON (see ``docs/analyze-json.md``)."""
    return {
        "primary_layer": c.primary_layer,
        "scope": c.scope,
        "suspect": c.suspect.model_dump(mode="json"),
        "cause": c.cause,
        "confidence": c.confidence,
        "text": c.text(lang),
        "line_msg": c.line().model_dump(mode="json"),
        "evidence": {
            part: {"msgs": _msgs(ms), "text": [m.text(lang) for m in ms]}
            for part, ms in c.evidence.items()
        },
        "alternatives": [
            {
                "cause": a.cause,
                "evidence_msgs": _msgs(a.evidence),
                "evidence_text": [m.text(lang) for m in a.evidence],
            }
            for a in c.alternatives
        ],
    }


def _args(m: Msg | None) -> dict[str, Any] | None:
    """A message's arguments as JSON (nested messages as ``{"key", "args"}``)."""
    return None if m is None else m.model_dump(mode="json")["args"]


def _msgs(ms: list[Msg]) -> list[dict[str, Any]]:
    """Messages as ``[{"key", "args"}]``."""
    return [m.model_dump(mode="json") for m in ms]


def _timing_json(t: Timing) -> dict[str, Any]:
    """The ``timing`` object of the JSON (seconds rounded to the millisecond)."""
    st = t.stats
    return {
        "queries": st.sent,
        "shared": st.shared,
        "own_s": round(st.own_s, 3),
        "wait_s": round(st.wait_s, 3),
        "slowest_s": round(st.slowest_s, 3),
        "slowest_query": st.slowest_query,
        "wall_s": round(t.wall_s, 3),
        "peak_concurrency": t.peak_concurrency,
        "all": [
            {"query": q, "kind": k, "own_s": round(own, 4), "wait_s": round(wait, 4), "ok": ok}
            for q, k, own, wait, ok in st.log
        ],
    }


def to_json(report: AnalyzeReport, lang: str = "en") -> dict[str, Any]:
    """The stable JSON shape (see ``docs/analyze-json.md``)."""
    dd = report.drilldown
    w = dd.window
    return {
        "schema": SCHEMA,
        "window": {
            "start": w.start.isoformat(),
            "end": w.end.isoformat(),
            "step_s": w.step_s,
            "baseline": w.baseline,
            "baseline_start": w.baseline_start.isoformat(),
            "baseline_end": w.baseline_end.isoformat(),
            "baseline_note": dd.baseline_note,
        },
        "profiles": dd.profiles,
        "scope": {
            "namespace": dd.scope.get("namespace", ""),
            "model": dd.scope.get("model", ""),
            "pod_regex": dd.scope.get("pod", ""),
            "not_narrowed": dd.not_narrowed,
            "no_pod_matched": dd.no_pod_matched,
            "selector_workloads": dd.selector_workloads,
            "selector_failure": dd.selector_failure,
            "joined": dd.joined,
            "services": dd.services,
            "analysed_with": dd.analysed_with,
        },
        "layers": [
            {
                "layer": v.layer,
                "verdict": v.verdict,
                "evidence": v.lines,
                "evidence_msgs": _msgs(v.line_msgs),
                "evidence_text": v.lines_text(lang),
                "missing": v.missing,
                "signals_decided": v.signals_decided,
                "signals_total": v.signals_total,
                "busier": v.busier,
                "headline": v.headline(lang),
            }
            for v in dd.drilldown.layers
        ],
        "rules": [
            {
                "id": r.id,
                "status": r.status,
                "evidence": r.evidence,
                "readings_msgs": _msgs(r.readings),
                "readings_text": [m.text(lang) for m in r.readings],
            }
            for r in dd.drilldown.rules
        ],
        "signals": [
            {
                "key": s.key,
                "layer": s.layer,
                "unit": s.unit,
                "now": s.now.value if s.now.ok else None,
                "baseline": s.baseline.value if s.baseline.ok else None,
                "instant": s.instant.value if s.instant.ok else None,
                "window_max": s.window_max.value if s.window_max.ok else None,
                "ratio": s.ratio,
                "ratio_bound": s.ratio_bound,
                "verdict": s.verdict,
                "reason": s.reason,
                "reason_key": s.reason_msg.key if s.reason_msg else None,
                "reason_args": _args(s.reason_msg),
                "reason_text": s.reason_text(lang),
                "missing": s.missing,
                "enable": s.enable_text("en"),
                "query": s.query,
                "slo": s.slo,
                "slo_breach_at": s.slo_breach_at.isoformat() if s.slo_breach_at else None,
                "top_bucket": s.top_bucket,
                "bottom_bucket": s.bottom_bucket,
                "value_text": value_msg(s).text(lang),
            }
            for s in dd.drilldown.summaries
        ],
        "blast_radius": {
            "scope": report.blast_radius.scope,
            "propose": report.blast_radius.propose,
            "suspect": report.blast_radius.suspect,
            "suspect_kind": report.blast_radius.suspect_kind,
            "evidence": report.blast_radius.lines,
            "note": report.blast_radius.max_z_note,
            "evidence_msgs": _msgs(report.blast_radius.line_msgs),
            "note_key": report.blast_radius.max_z_msg.key
            if report.blast_radius.max_z_msg
            else None,
            "note_args": _args(report.blast_radius.max_z_msg),
            "evidence_text": report.blast_radius.lines_text(lang),
            "cohort_kind": report.blast_radius.cohort_kind,
            "previous_revision": report.blast_radius.previous_revision,
            "rollout_start": report.blast_radius.rollout_start,
            "revisions": report.blast_radius.revisions,
            "hidden": [
                {
                    "key": h.key,
                    "entities": h.entities,
                    "outliers": [
                        {
                            "entity": o.entity,
                            "value": o.value,
                            "peer_median": o.peer_median,
                            "ratio": o.ratio,
                            "score": o.score,
                            "peers": o.peers,
                        }
                        for o in h.outliers
                    ],
                }
                for h in report.blast_radius.hidden
            ],
        },
        "cohort": None
        if report.cohort is None
        else {
            "suspect": report.cohort.cohort.suspect,
            "suspect_kind": report.cohort.cohort.suspect_kind,
            "kind": report.cohort.cohort.kind,
            "definition": report.cohort.cohort.definition(lang),
            "members": report.cohort.cohort.members,
            "outliers": report.cohort.outliers,
            "restarts_in_window": None
            if report.cohort.restarts is None
            else {
                "n": report.cohort.restarts.n,
                "reason": report.cohort.restarts.reason,
                "text": report.cohort.restarts.msg().text(lang),
            },
            "rows": [
                {
                    "key": r.key,
                    "unit": r.unit,
                    "suspect": r.suspect,
                    "cohort_median": r.cohort_median,
                    "cohort_n": r.cohort_n,
                    "ratio": r.ratio,
                    "outlier": r.outlier,
                    "changed": r.changed,
                    "window": r.window.text(lang) if r.window is not None else None,
                    "per": r.per,
                    "label": r.label(lang),
                    "service_now": r.service,
                }
                for r in report.cohort.rows
            ],
        },
        "load": [
            {
                "id": f.id,
                "status": f.status,
                "numbers": f.numbers,
                "evidence": f.evidence,
                "note": f.note,
                "note_key": f.note_msg.key if f.note_msg else None,
                "note_args": _args(f.note_msg),
                "detail_msgs": _msgs(f.detail),
                "text": f.text(lang),
            }
            for f in report.load.findings
        ],
        "alerts": [
            {
                "name": a.name,
                "labels": a.labels,
                "first": a.first.isoformat(),
                "last": a.last.isoformat(),
            }
            for a in report.alerts
        ],
        "alerts_error": report.alerts_failure.message if report.alerts_failure else None,
        "timing": _timing_json(report.timing),
        "conclusion": conclusion_json(report.conclusion, lang),
    }
