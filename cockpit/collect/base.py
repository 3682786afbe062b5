"""Shared collector plumbing: the time window and its baseline, the service scope as label
matchers, the query runner of a context, and profile detection (cached per context)."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from cockpit.analysis.profiles import Detection, detect_profiles, load_profiles
from cockpit.collect.runner import QueryRunner
from cockpit.incident import Mode
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


MIN_WINDOW = timedelta(minutes=5)
"""Shortest window the drilldown compares with a baseline: the signals are rates over
5 minutes (``render(window="5m")``, metrics_kb.md §7), so a shorter window's values all
reach back into its "quiet" baseline (the window just before) and the two would measure
the same minutes."""


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
    regex of the pod names of ``service.deployment``, or of the workloads a
    ``service.selector`` resolved to, see :func:`scope_for`; applied to the stacks whose
    profile maps a pod label; see :mod:`cockpit.analysis.podnames`)."""
    from cockpit.analysis.podnames import workload_pod_regex

    svc = ctx.settings.service
    resolved = ctx.metrics.scope
    if resolved is not None and resolved.key == _scope_key(ctx):
        pod = resolved.pod_regex
    else:
        pod = workload_pod_regex(svc.deployment)
    return {"namespace": svc.namespace, "model": svc.model, "pod": pod}


SELECTOR_NO_POD = "no pod matches the selector now"
""":attr:`ScopeResolution.failure` when the selector's pod list is empty."""

SELECTOR_TIMEOUT_S = 10.0
"""How long resolving ``service.selector`` through Kubernetes may take (one pod list)."""


class ScopeResolution(BaseModel):
    """How ``service.selector`` narrowed the metrics (when no deployment is set).

    Attributes:
        key: The service settings it was resolved for.
        pod_regex: Pod names of the workloads the selector's pods belong to (``""``: not
            narrowed).
        workloads: ``Kind/name`` of those workloads.
        failure: Why the selector could not be resolved (no Kubernetes, a failed list),
            in English; empty when it was.
    """

    key: tuple[str, ...]
    pod_regex: str = ""
    workloads: list[str] = Field(default_factory=list)
    failure: str = ""


def _scope_key(ctx: AppContext) -> tuple[str, ...]:
    svc = ctx.settings.service
    return (svc.namespace, svc.selector, svc.deployment, svc.model)


async def scope_for(ctx: AppContext) -> dict[str, str]:
    """:func:`scope_labels`, after resolving ``service.selector`` through Kubernetes when
    no deployment is set: the selector's pods are listed once (cached per scope) and the
    metrics are narrowed to the generated names of their Deployments/StatefulSets, every
    revision included (a label selector cannot be matched against series, which carry
    pod names, not pod labels). Without Kubernetes, or when the list fails, nothing is
    narrowed and :class:`ScopeResolution` says why."""
    svc = ctx.settings.service
    key = _scope_key(ctx)
    resolved = ctx.metrics.scope
    if svc.selector and not svc.deployment and not (resolved is not None and resolved.key == key):
        ctx.metrics.scope = await _resolve_selector(ctx, key)
    return scope_labels(ctx)


async def _resolve_selector(ctx: AppContext, key: tuple[str, ...]) -> ScopeResolution:
    from cockpit.analysis.podnames import owner_workload, workloads_pod_regex

    svc = ctx.settings.service
    kube = ctx.sources.kube
    if kube is None:
        reason = ctx.sources.missing.get("kube", "no Kubernetes source")
        return ScopeResolution(key=key, failure=reason)
    try:
        pods = await asyncio.wait_for(
            kube.list_pods(svc.namespace or None, label_selector=svc.selector),
            SELECTOR_TIMEOUT_S,
        )
    except (SourceError, TimeoutError) as exc:
        reason = str(exc) or f"no answer within {SELECTOR_TIMEOUT_S:g} s"
        return ScopeResolution(key=key, failure=reason)
    workloads = [
        owner_workload(p.meta.name, [(o.kind, o.name) for o in p.meta.owners]) for p in pods
    ]
    if not workloads:
        return ScopeResolution(key=key, failure=SELECTOR_NO_POD)
    return ScopeResolution(
        key=key,
        pod_regex=workloads_pod_regex(workloads),
        workloads=sorted({f"{kind}/{name}" for kind, name in workloads}),
    )


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
    runner = ctx.metrics.runner
    if runner is not None and runner.source is ctx.sources.metrics:
        return runner
    prom = ctx.settings.prometheus
    runner = QueryRunner(require_metrics(ctx), prom.max_concurrency, prom.timeout_s)
    ctx.metrics.runner = runner
    return runner


async def detection_for(ctx: AppContext, at: datetime) -> Detection:
    """Detect profiles from the target's metric names, then discover where each source
    keeps the workload's labels and which serving stack the scope is (cached in
    ``ctx.metrics`` per service scope; :mod:`cockpit.collect.discover`).

    Only the chosen serving stack's profile is kept: another engine's names are never
    queried for this service. When discovery fails (a query refused, or a recording
    that holds no answer to it), the detection from the names is used as it is and
    ``ctx.metrics.discovery.failure`` says why.

    Raises:
        SourceError: the metric-name listing failed.
    """
    cached = ctx.metrics.detection
    key = _scope_key(ctx)
    if cached is not None and ctx.metrics.detection_key == key:
        return cached
    failed = ctx.metrics.detection_failure
    if ctx.mode is Mode.RECORD and failed is not None:
        raise failed  # one failed listing per recording is enough evidence
    src = require_metrics(ctx)
    probe = asyncio.ensure_future(empty_history(src, at))
    # never left with an exception nobody reads, whichever way the detection ends
    probe.add_done_callback(lambda t: t.cancelled() or t.exception())
    try:
        names = await src.metric_names(at)
    except SourceError as exc:
        probe.cancel()
        ctx.metrics.detection_failure = exc
        raise
    from cockpit.analysis.discovery import apply
    from cockpit.collect.discover import discover

    ps = ctx.settings.profiles
    profiles = load_profiles(ps.extra_files, ps.disable)
    det = detect_profiles(names, profiles, force=ps.force, lang=ctx.lang)
    scope = await scope_for(ctx)
    found = await discover(runner_for(ctx), det, set(names), at, scope)
    if found.chosen:
        forced = set(ps.force)
        keep = [
            p
            for p in profiles
            if p.profile.stack != "serving" or p.id == found.chosen or p.id in forced
        ]
        det = detect_profiles(names, keep, force=ps.force, lang=ctx.lang)
    apply(det, found, scope)
    ctx.metrics.empty_spans = await probe
    ctx.metrics.discovery = found
    ctx.metrics.detection = det
    ctx.metrics.detection_key = key
    return det


HISTORY_PROBE_DAYS = 7
"""How far before each baseline offset the detection looks for history
(:func:`empty_history`): the offset baselines of windows up to about a week long lie
inside what it probes."""
HISTORY_PROBE_SLACK = timedelta(hours=1)
"""The probe reaches this far past ``at`` minus the offset: the baselines of windows that
end up to an hour after the detection (a refresh on a live clock) lie inside it too."""


async def empty_history(src: MetricsSource, at: datetime) -> list[tuple[datetime, datetime]]:
    """The spans of time the server is known to hold no sample in: for each baseline
    offset (:data:`OFFSETS`, a day and a week), ``[at - offset - 7d, at - offset + 1h]``
    (:data:`HISTORY_PROBE_DAYS`, :data:`HISTORY_PROBE_SLACK`) when one label-values
    listing lists no metric name there (a history shorter than the offset: a Prometheus
    started today, a short retention). The listings go out together, beside the
    detection's own. An offset baseline inside such a span is known to have no data before
    it is asked (:func:`cockpit.collect.signals.collect_summaries` goes to the quiet window
    at once, with the same note). A source without ``names_between``, or a listing that
    fails in any way or takes over 10 s, knows nothing: no span. Never raises.

    Prometheus answers label values from the blocks that overlap the range
    (https://prometheus.io/docs/prometheus/latest/querying/api/#querying-label-values), so
    an empty answer means no sample there; a non-empty one may be a block that only
    overlaps, and the baseline is asked as usual."""
    names_between = getattr(src, "names_between", None)
    if names_between is None:
        return []

    async def empty(lo: datetime, hi: datetime) -> tuple[datetime, datetime] | None:
        try:
            names = await asyncio.wait_for(names_between(lo, hi), 10)
        except Exception:  # a probe that fails knows nothing, whatever broke
            # (a SourceError, a timeout, the client's session closed under it)
            return None
        return None if names else (lo, hi)

    spans = [
        (at - off - timedelta(days=HISTORY_PROBE_DAYS), at - off + HISTORY_PROBE_SLACK)
        for off in OFFSETS.values()
    ]
    found = await asyncio.gather(*(empty(lo, hi) for lo, hi in spans))
    return [s for s in found if s is not None]


def known_empty(
    spans: list[tuple[datetime, datetime]], start: datetime, end: datetime, reach: timedelta
) -> bool:
    """Whether ``[start - reach, end]`` (a range query's bounds, and how far before its
    first step it reads: the rate window or the 5-minute lookback) lies inside one of the
    ``spans`` of :func:`empty_history`."""
    return any(lo <= start - reach and end <= hi for lo, hi in spans)


def fallback_text(baseline_from: str, lang: str, window: Window | None = None) -> str:
    """ "No data a day/week earlier: the baseline is the quiet window…" for a baseline
    that fell back from ``baseline_from`` (``1d``/``7d``), in ``lang``; when the
    ``window``'s baseline lies inside it (nothing before the window had data either), the
    span it reads."""
    from cockpit.i18n import t

    kind = baseline_from if baseline_from in OFFSETS else "1d"
    when = t(f"metrics.baseline_earlier.{kind}", lang)
    if window is not None and window.baseline_start >= window.start:
        return t(
            "metrics.text.baseline_inside",
            lang,
            when=when,
            start=f"{window.baseline_start:%H:%M}",
            end=f"{window.baseline_end:%H:%M}",
        )
    return t("metrics.text.baseline_fallback", lang, when=when)
