"""Shared collector plumbing: the time window and its baseline, the service scope as label
matchers, the query runner of a context, and profile detection (cached per context)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from cockpit.analysis.profiles import Detection, detect_profiles, load_profiles
from cockpit.collect.runner import QueryRunner
from cockpit.sources.base import ErrorKind, MetricsSource, SourceError

if TYPE_CHECKING:
    from cockpit.context import AppContext

BaselineKind = Literal["1d", "7d", "quiet"]

BASELINE_POINTS = 30
"""Points of a baseline range query (see :attr:`Window.baseline_step_s`)."""

OFFSETS: dict[str, timedelta] = {"1d": timedelta(days=1), "7d": timedelta(days=7)}


class Window(BaseModel):
    """The incident window and its baseline window (same length).

    Attributes:
        start, end: The window (UTC); ``end`` is "now" (frozen in replay/demo).
        step_s: Range-query resolution in seconds.
        rate_window: PromQL rate window (``5m``: ≥ 4× a 15–60 s scrape, metrics_kb.md §7).
        baseline: ``1d``/``7d`` (same window one day/week earlier) or ``quiet`` (the quiet
            hours before the impact).
        baseline_start, baseline_end: The baseline window.
        recent_s: "Now" is the mean of the last ``recent_s`` seconds of the window.
    """

    start: datetime
    end: datetime
    step_s: float
    rate_window: str = "5m"
    baseline: BaselineKind = "1d"
    baseline_start: datetime
    baseline_end: datetime
    recent_s: float = 600.0

    @property
    def span(self) -> timedelta:
        """Length of the window."""
        return self.end - self.start

    @property
    def baseline_step_s(self) -> float:
        """Resolution of the baseline range queries (seconds): a multiple of ``step_s``
        giving about :data:`BASELINE_POINTS` points.

        The baseline is only summarised by its median (no sparkline is drawn from it), and
        consecutive points of a ``rate(…[5m])`` are strongly correlated, so 30 points read
        the same median as 120 at a quarter of the samples to fetch, encode and decode.
        """
        factor = max(1, int(self.span.total_seconds() / BASELINE_POINTS // self.step_s))
        return self.step_s * factor

    def with_baseline(
        self,
        kind: BaselineKind,
        quiet: tuple[datetime, datetime] | None = None,
    ) -> Window:
        """The same window with another baseline (``quiet`` defaults to the span before it)."""
        if kind == "quiet":
            qs, qe = quiet if quiet is not None else (self.start - self.span, self.start)
        else:
            qs, qe = self.start - OFFSETS[kind], self.end - OFFSETS[kind]
        return self.model_copy(update={"baseline": kind, "baseline_start": qs, "baseline_end": qe})


def make_window(
    end: datetime,
    span: timedelta = timedelta(hours=2),
    baseline: BaselineKind = "1d",
    quiet: tuple[datetime, datetime] | None = None,
    points: int = 120,
) -> Window:
    """A window ending at ``end`` with about ``points`` samples (step ≥ 15 s)."""
    step = max(15.0, round(span.total_seconds() / points / 15.0) * 15.0)
    start = end - span
    w = Window(start=start, end=end, step_s=step, baseline_start=start, baseline_end=end)
    return w.with_baseline(baseline, quiet)


def scope_labels(ctx: AppContext) -> dict[str, str]:
    """The service scope as profile-neutral keys: ``namespace``, ``model``, and ``pod`` (a
    regex of the pod names of ``service.deployment``, applied to the stacks whose profile
    maps a pod label; see :mod:`cockpit.analysis.podnames`)."""
    from cockpit.analysis.podnames import workload_pod_regex

    svc = ctx.settings.service
    return {
        "namespace": svc.namespace,
        "model": svc.model,
        "pod": workload_pod_regex(svc.deployment),
    }


def require_metrics(ctx: AppContext) -> MetricsSource:
    """The context's metrics source.

    Raises:
        SourceError: ``not_configured`` with the reason when there is none.
    """
    src = ctx.sources.metrics
    if src is None:
        raise SourceError.of(
            "prometheus",
            ErrorKind.NOT_CONFIGURED,
            ctx.sources.missing.get("metrics", "no Prometheus URL configured"),
            hint_key="hint.prom.no_url",
        )
    return src


def runner_for(ctx: AppContext) -> QueryRunner:
    """A runner bounded by the configured concurrency and per-query timeout (shared per ctx)."""
    runner = ctx.extras.get("metrics.runner")
    if isinstance(runner, QueryRunner) and runner.source is ctx.sources.metrics:
        return runner
    prom = ctx.settings.prometheus
    runner = QueryRunner(require_metrics(ctx), prom.max_concurrency, prom.timeout_s)
    ctx.extras["metrics.runner"] = runner
    return runner


async def detection_for(ctx: AppContext, at: datetime) -> Detection:
    """Detect profiles from the target's metric names (cached in ``ctx.extras``).

    Raises:
        SourceError: the metric-name listing failed.
    """
    cached = ctx.extras.get("metrics.detection")
    if isinstance(cached, Detection):
        return cached
    failed = ctx.extras.get("metrics.detection_failure")
    if ctx.mode == "record" and isinstance(failed, SourceError):
        raise failed  # one failed listing per recording is enough evidence
    src = require_metrics(ctx)
    try:
        names = await src.metric_names(at)
    except SourceError as exc:
        ctx.extras["metrics.detection_failure"] = exc
        raise
    ps = ctx.settings.profiles
    det = detect_profiles(
        names,
        load_profiles(ps.extra_files, ps.disable),
        force=ps.force,
        lang=ctx.lang,
    )
    ctx.extras["metrics.detection"] = det
    ctx.extras["metrics.names"] = sorted(names)
    return det


def fallback_text(baseline_from: str, lang: str) -> str:
    """ "No data a day/week earlier: the baseline is the quiet window…" for a baseline
    that fell back from ``baseline_from`` (``1d``/``7d``), in ``lang``."""
    from cockpit.i18n import t

    kind = baseline_from if baseline_from in OFFSETS else "1d"
    return t(
        "metrics.text.baseline_fallback", lang, when=t(f"metrics.baseline_earlier.{kind}", lang)
    )
