"""Step F collector: load and shared-dependency signals, plus the length mixes."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from cockpit.analysis.golden import SignalSummary
from cockpit.analysis.load import Bucket, Finding, LengthMix, analyze_load
from cockpit.analysis.profiles import Detection
from cockpit.collect.base import Window, detection_for, runner_for, scope_for
from cockpit.collect.runner import QueryResult, QuerySpec
from cockpit.collect.signals import plan

if TYPE_CHECKING:
    from cockpit.context import AppContext

LOAD_SIGNALS = (
    "access.qps",
    "serving.qps",
    "access.latency",
    "serving.e2e_latency",
    "serving.queue_time",
    "access.error_ratio_5xx",
    "access.error_ratio_4xx",
    "access.timeouts",
    "serving.error_ratio",
    "serving.rejected_ratio",
    "serving.api_error_ratio",
    "serving.prompt_tps",
    "serving.gen_tps",
    "infra.node_cpu",
    "infra.mem_pressure",
    "infra.net_errors",
    "infra.cpu_throttle",
)
OPTIONAL_LOAD_SIGNALS = frozenset({"serving.rejected_ratio", "serving.api_error_ratio"})
"""Read by step F only where exported (the API server's failures before the engine): a
stack without them has its engine's error ratio, and step F's table no empty row."""
MIX_WINDOW = "30m"
"""Length mixes compare the last 30 minutes with the same 30 minutes of the baseline."""
MIX_REACH = timedelta(minutes=35)
"""How far before its evaluation time a mix reads: :data:`MIX_WINDOW` and the 5-minute
lookback."""


class LoadReport(BaseModel):
    """What step F shows."""

    findings: list[Finding] = Field(default_factory=list)
    summaries: list[SignalSummary] = Field(default_factory=list)
    prompt_mix: LengthMix | None = None
    output_mix: LengthMix | None = None
    window: Window


def mix_specs(det: Detection, scope: dict[str, str], window: Window) -> dict[str, QuerySpec]:
    """Bucket queries (now and baseline) for prompt and output length histograms."""
    out: dict[str, QuerySpec] = {}
    for sid in ("serving.prompt_len", "serving.output_len"):
        r = det.get(sid)
        if r is None or not r.available or r.spec.kind != "histogram":
            continue
        sel = det.selector_for(r, scope)
        q = f"sum by (le) (increase({r.metric}_bucket{{{sel}}}[{MIX_WINDOW}]))"
        out[f"{sid}/now"] = QuerySpec(key=f"mix:{sid}/now", query=q, kind="instant", end=window.end)
        out[f"{sid}/base"] = QuerySpec(
            key=f"mix:{sid}/base", query=q, kind="instant", end=window.baseline_end
        )
    return out


def _buckets(res: QueryResult | None) -> list[Bucket]:
    if res is None or not res.ok:
        return []
    out = []
    for v in res.vector:
        try:
            le = float(v.labels.get("le", "nan"))
        except ValueError:
            continue
        if le == le and v.v == v.v:
            out.append(Bucket(le=le, count=v.v))
    return out


async def collect_load(ctx: AppContext, window: Window) -> LoadReport:
    """Collect and analyse step F."""
    det = await detection_for(ctx, window.end)
    scope = await scope_for(ctx)
    wanted = {
        "access.latency": ("p50", "p99"),
        "serving.e2e_latency": ("p99",),
        "serving.queue_time": ("p99",),
    }
    # Quantiles only where the stack has a histogram: a mean (Triton's cumulative
    # duration ÷ count) keeps its own "avg" key and is never read as a P99.
    stats = {
        sid: st
        for sid, st in wanted.items()
        if (r := det.get(sid)) is None or r.spec.kind == "histogram"
    }
    ids = [
        sid
        for sid in LOAD_SIGNALS
        if sid not in OPTIONAL_LOAD_SIGNALS or ((r := det.get(sid)) is not None and r.available)
    ]
    planned = plan(det, scope, window, ids, ctx.lang, stats)
    runner = runner_for(ctx)
    # Step C's values and verdicts, read (shared), never computed a second time.
    from cockpit.collect import steps

    dd = await steps.drilldown(ctx, window)
    by_key = {s.key: s for s in dd.drilldown.summaries}
    summaries = [by_key[p.key] for p in planned if p.key in by_key]
    # The baseline may have fallen back to the quiet window: mixes use the same one.
    mixes = mix_specs(det, scope, dd.window)
    mix_res = await runner.run(mixes.values())
    mix_models: dict[str, LengthMix] = {}
    for sid in ("serving.prompt_len", "serving.output_len"):
        if f"{sid}/now" in mixes:
            mix_models[sid] = LengthMix(
                signal=sid,
                query=mixes[f"{sid}/now"].query,
                now=_buckets(mix_res.get(f"mix:{sid}/now")),
                base=_buckets(mix_res.get(f"mix:{sid}/base")),
            )
    findings = analyze_load(
        summaries,
        mix_models.get("serving.prompt_len"),
        mix_models.get("serving.output_len"),
        drilldown=dd.drilldown.summaries,
    )
    return LoadReport(
        findings=findings,
        summaries=summaries,
        prompt_mix=mix_models.get("serving.prompt_len"),
        output_mix=mix_models.get("serving.output_len"),
        window=dd.window,
    )
