"""Reading the alerts that may have paged: from Alertmanager when ``[alertmanager] url`` is
configured, else from Prometheus's ``ALERTS`` / ``ALERTS_FOR_STATE`` (see
:mod:`cockpit.analysis.paged`), with the alerting rules' expressions from
``/api/v1/rules`` when the metrics source can list them.

Each read is bounded by its source's timeout and answer-size limit; a failure is kept
in :attr:`AlertList.failures` and never hides what the other reads returned.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from cockpit.analysis.paged import (
    AlertState,
    PagedAlert,
    finish,
    firing_lookback,
    from_alertmanager,
    from_prometheus,
    with_firing_starts,
    with_rules,
)
from cockpit.collect.alerts import ALERTS_QUERY, alert_grid, alerts_step_s
from cockpit.collect.base import Window, runner_for
from cockpit.collect.runner import QuerySpec
from cockpit.incident import PagedBy, ServiceScope
from cockpit.sources.base import ErrorKind, SourceError, SourceFailure

if TYPE_CHECKING:
    from cockpit.context import AppContext

DEFAULT_SINCE = timedelta(hours=1)
"""How far back resolved alerts are listed (``cockpit alerts --since``)."""


class AlertList(BaseModel):
    """The alerts of one read, in the picker's order.

    Attributes:
        source: ``alertmanager`` or ``prometheus``; empty when neither is configured.
        since, until: The window resolved alerts are read from (UTC).
        alerts: The alerts, the configured scope's first (see
            :func:`cockpit.analysis.paged.finish`).
        failures: Reads that failed (the alerts, the silences, the rules).
        resolved_from: Where the alerts resolved inside the window come from:
            ``prometheus`` (``ALERTS``; with Alertmanager too, whose API v2 returns no
            resolved alert), ``""`` when they cannot be listed (Alertmanager without a
            Prometheus: the list holds firing alerts only, and says so).
    """

    source: Literal["alertmanager", "prometheus", ""]
    since: datetime
    until: datetime
    alerts: list[PagedAlert] = Field(default_factory=list)
    failures: list[SourceFailure] = Field(default_factory=list)
    resolved_from: Literal["prometheus", ""] = ""

    @property
    def read(self) -> bool:
        """True when the alerts themselves were read (empty or not)."""
        return bool(self.source) and not any(
            f.detail.get("what") == "alerts" for f in self.failures
        )


def signal_metrics() -> dict[str, list[str]]:
    """Signal id → every metric name the built-in profiles read it from (the first
    profile that names a signal comes first)."""
    from cockpit.analysis.profiles import builtin_profiles

    out: dict[str, list[str]] = {}
    for profile in builtin_profiles():
        for spec in profile.signal:
            out.setdefault(spec.id, []).extend(spec.metrics)
    return out


def _failure(exc: SourceError, what: str) -> SourceFailure:
    return exc.failure.model_copy(update={"detail": {**exc.failure.detail, "what": what}})


async def _rules(ctx: AppContext) -> tuple[list[dict[str, Any]], SourceFailure | None]:
    """The alerting rules, or why they could not be read."""
    metrics = ctx.sources.metrics
    lister = getattr(metrics, "rules", None)
    if metrics is None or lister is None:
        return [], SourceFailure(
            source=getattr(metrics, "name", "prometheus"),
            kind=ErrorKind.NOT_CONFIGURED,
            message="the alerting rules cannot be listed from this source",
            detail={"what": "rules"},
        )
    try:
        return list(await lister()), None
    except SourceError as exc:
        return [], _failure(exc, "rules")


async def collect_paged(
    ctx: AppContext, since: timedelta = DEFAULT_SINCE, at: datetime | None = None
) -> AlertList:
    """The alerts to start an incident from, as of ``at`` (default the context's clock).

    Alertmanager (when configured) gives the firing ones with their silences and
    inhibitions, and ``ALERTS`` (when a Prometheus is configured too) those resolved over
    ``[now - since, now]`` (Alertmanager's API keeps none); otherwise ``ALERTS`` gives
    the firing, pending and resolved ones. Never raises for a source's failure: see
    ``failures``.
    """
    until = at or ctx.clock.now()
    start = until - since
    svc = ctx.settings.service
    am = getattr(ctx.sources, "alerts", None)
    failures: list[SourceFailure] = []
    found: list[PagedAlert] = []
    resolved_from: Literal["prometheus", ""] = ""
    if am is not None:
        source: Literal["alertmanager", "prometheus", ""] = "alertmanager"
        got = await asyncio.gather(am.alerts(), am.silences(), _rules(ctx), return_exceptions=True)
        raw_alerts, raw_silences, rules = got
        if isinstance(raw_alerts, SourceError):
            failures.append(_failure(raw_alerts, "alerts"))
            raw_alerts = []
        if isinstance(raw_silences, SourceError):
            failures.append(_failure(raw_silences, "silences"))
            raw_silences = []
        for item in (raw_alerts, raw_silences):
            if isinstance(item, BaseException):
                raise item
        if isinstance(rules, BaseException):
            raise rules
        found = from_alertmanager(raw_alerts, raw_silences)
        rule_list, rule_failure = rules
        if any(not a.expr for a in found):
            if rule_failure is not None and ctx.sources.metrics is not None:
                failures.append(rule_failure)
            found = with_rules(found, rule_list)
        if ctx.sources.metrics is not None:
            resolved_from = "prometheus"
            held = {(a.name, tuple(sorted(a.labels.items()))) for a in found}
            from_alerts, read_failures = await _prometheus_alerts(ctx, start, until, rule_list)
            failures += [
                f.model_copy(update={"detail": {**f.detail, "what": "resolved"}})
                for f in read_failures
            ]
            found += [
                a
                for a in from_alerts
                if a.state is AlertState.RESOLVED
                and (a.name, tuple(sorted(a.labels.items()))) not in held
            ]
    elif ctx.sources.metrics is not None:
        source = resolved_from = "prometheus"
        found, read_failures = await _prometheus_alerts(ctx, start, until)
        failures += read_failures
    else:
        source = ""
    alerts = finish(found, svc.namespace, svc.deployment, signal_metrics())
    return AlertList(
        source=source,
        since=start,
        until=until,
        alerts=alerts,
        failures=failures,
        resolved_from=resolved_from,
    )


async def _prometheus_alerts(
    ctx: AppContext,
    start: datetime,
    until: datetime,
    rules: list[dict[str, Any]] | None = None,
) -> tuple[list[PagedAlert], list[SourceFailure]]:
    """The alerts of ``ALERTS`` / ``ALERTS_FOR_STATE`` over ``[start, until]`` with their
    rules (``rules``: already read, else read here) and firing starts, and the reads that
    failed."""
    failures: list[SourceFailure] = []
    window = Window(start=start, end=until, step_s=15.0, baseline_start=start, baseline_end=until)
    step = alerts_step_s(window)
    grid = alert_grid(start, step)  # the instants every reader of ALERTS samples
    specs = [
        QuerySpec(key=k, query=k, start=grid, end=until, step_s=step)
        for k in ("ALERTS", "ALERTS_FOR_STATE")
    ]
    if rules is None:
        res, (rule_list, rule_failure) = await asyncio.gather(
            runner_for(ctx).run(specs), _rules(ctx)
        )
    else:
        res, rule_list, rule_failure = await runner_for(ctx).run(specs), rules, None
    for key, what in (("ALERTS", "alerts"), ("ALERTS_FOR_STATE", "for_state")):
        failure = res[key].failure
        if failure is not None:
            failures.append(failure.model_copy(update={"detail": {**failure.detail, "what": what}}))
    found = from_prometheus(
        res["ALERTS"].series, res["ALERTS_FOR_STATE"].series, start, until, step
    )
    if rule_failure is not None:
        failures.append(rule_failure)
    return await _firing_starts(ctx, with_rules(found, rule_list), start, failures), failures


async def _firing_starts(
    ctx: AppContext, alerts: list[PagedAlert], start: datetime, failures: list[SourceFailure]
) -> list[PagedAlert]:
    """The alerts firing since before ``start`` with their firing start read from
    ``ALERTS{alertstate="firing"}`` back to their activation (``ALERTS_FOR_STATE``; see
    :func:`cockpit.analysis.paged.with_firing_starts`); a failed read is added to
    ``failures`` and leaves those starts unknown."""
    since = firing_lookback(alerts, start)
    if since is None:
        return alerts
    window = Window(start=since, end=start, step_s=15.0, baseline_start=since, baseline_end=start)
    step = alerts_step_s(window)
    res = await runner_for(ctx).run(
        [
            QuerySpec(
                key="firing",
                query=ALERTS_QUERY,
                start=alert_grid(since, step),
                end=start + timedelta(seconds=step),
                step_s=step,
            )
        ]
    )
    r = res["firing"]
    if r.failure is not None:
        failures.append(
            r.failure.model_copy(update={"detail": {**r.failure.detail, "what": "firing_starts"}})
        )
        return alerts
    return with_firing_starts(alerts, r.series)


def paged_record(alert: PagedAlert) -> PagedBy:
    """What the incident keeps of the alert it started from."""
    return PagedBy(
        name=alert.name,
        fingerprint=alert.fingerprint,
        source=alert.source,
        state=alert.state.value,
        starts_at=alert.detected_at,
        expr=alert.expr,
        sli=alert.sli,
        pod=alert.scope.pod,
        node=alert.scope.node,
        silences=list(alert.silences),
        silenced=alert.silenced,
        inhibited=alert.inhibited,
        labels=dict(alert.labels),
    )


def apply_alert(ctx: AppContext, alert: PagedAlert) -> list[str]:
    """Start the incident from ``alert``: the service scope (its namespace, and the
    workload its labels name, else the incident's own), the detection time (when it
    started firing), the paged SLI and the title go into the incident; the context's
    scope follows (the metrics state is started afresh, so every screen reads the new
    scope), and the pod or node it names becomes the suspect E acts on.

    Returns:
        Ordering problems of the incident times (see
        :meth:`cockpit.session.IncidentSession.set_time`).
    """
    from cockpit.context import MetricsState

    svc = ctx.settings.service
    current = ctx.session.incident.service if ctx.session is not None else svc
    s = alert.scope
    same_ns = not s.namespace or s.namespace == current.namespace
    deployment = s.deployment or (current.deployment if same_ns else "")
    scope = ServiceScope(
        namespace=s.namespace or current.namespace,
        selector=current.selector if same_ns and deployment == current.deployment else "",
        deployment=deployment,
        model=s.model or (current.model if same_ns else ""),
    )
    ctx.settings = ctx.settings.model_copy(
        update={"service": svc.model_copy(update=scope.model_dump())}
    )
    window_span = ctx.metrics.window_span
    ctx.metrics = MetricsState(window_span=window_span)
    if s.pod:
        ctx.metrics.picked = (s.pod, "pod")
    elif s.node:
        ctx.metrics.picked = (s.node, "node")
    if ctx.session is None:
        return []
    return ctx.session.start_from_alert(
        paged_record(alert), alert.title(), scope, alert.detected_at
    )


def applied_notice(alert: PagedAlert, lang: str) -> str:
    """What choosing ``alert`` filled, in ``lang``, as :func:`apply_alert` fills it: the
    scope and the title always, the detection time when the alert has one, the SLI when
    its expression measures one of ours; else why the SLI was not filled (the words of A's
    banner, :meth:`cockpit.incident.PagedBy.sli_text`)."""
    from cockpit.i18n import t

    record = paged_record(alert)
    filled = ["scope", *(["detect"] if alert.detected_at is not None else [])]
    filled += [*(["sli"] if record.sli else []), "title"]
    parts = t("alerts.part.sep", lang).join(t(f"alerts.part.{p}", lang) for p in filled)
    text = t("alerts.applied", lang, name=alert.name, parts=parts)
    if not record.sli:
        text += t("alerts.applied.no_sli", lang, why=record.sli_text(lang))
    return text


def _at(at: datetime | None) -> str:
    return at.strftime("%Y-%m-%d %H:%M:%SZ") if at is not None else "—"


def alert_marks(alert: PagedAlert, lang: str) -> str:
    """``silenced (who: why)`` / ``inhibited by 1 alert(s)`` / ``other scope``, joined."""
    from cockpit.i18n import t

    marks = []
    if alert.silenced:
        notes = "; ".join(alert.silences) or ", ".join(alert.silenced_by)
        marks.append(t("alerts.silenced_by", lang, notes=notes))
    if alert.inhibited:
        marks.append(t("alerts.inhibited_by", lang, count=len(alert.inhibited_by)))
    if not alert.in_scope:
        marks.append(t("alerts.other_scope", lang))
    return " · ".join(marks)


def alert_line(alert: PagedAlert, lang: str) -> str:
    """One line: state, name, where, since when, marks and fingerprint."""
    from cockpit.i18n import t

    s = alert.scope
    where = "/".join(x for x in (s.namespace, s.deployment or s.pod or s.node) if x)
    if alert.state is AlertState.RESOLVED:
        when = t("alerts.ended", lang, at=_at(alert.ends_at))
    elif alert.state is AlertState.PENDING:
        when = t("alerts.active_since", lang, at=_at(alert.active_at))
    else:
        # Firing: when it fired is the detection time; when it became pending, if known
        # and different, is shown beside it, labelled as such.
        when = (
            t("alerts.since", lang, at=_at(alert.starts_at))
            if alert.starts_at is not None
            else t("alerts.since_unknown", lang)
        )
        if alert.active_at is not None and alert.active_at != alert.starts_at:
            when += " · " + t("alerts.active_since", lang, at=_at(alert.active_at))
    parts = [
        f"[{t(f'alerts.state.{alert.state.value}', lang)}]",
        alert.name,
        where,
        when,
        alert_marks(alert, lang),
        alert.fingerprint,
    ]
    return "  ".join(p for p in parts if p)


def alert_details(alert: PagedAlert, lang: str) -> list[str]:
    """The lines under an alert: summary, expression, the SLI it measures (worded as
    step A words them, :meth:`cockpit.incident.PagedBy.parts`)."""
    sli, expr = paged_record(alert).parts(lang)[-2:]
    return [*([alert.summary] if alert.summary else []), expr, sli]


def failure_lines(alerts: AlertList, lang: str) -> list[str]:
    """Each failed read as a line in ``lang``, and, when resolved alerts cannot be listed
    (Alertmanager alone), a line saying the list holds firing alerts only."""
    from cockpit.i18n import t

    firing_only = (
        [t("alerts.firing_only", lang)]
        if alerts.source == "alertmanager" and not alerts.resolved_from
        else []
    )
    return firing_only + [
        t(
            "alerts.failed",
            lang,
            what=t(f"alerts.what.{f.detail.get('what', 'alerts')}", lang),
            error=f"{f.source}: {f.kind.value}: {f.message}",
        )
        for f in alerts.failures
    ]


def paged_text(paged: PagedBy, lang: str) -> str:
    """Step A's lines about the alert that paged: its name and state, when it started
    firing, silences and inhibition; then the golden signal it measures and its
    expression (see :meth:`cockpit.incident.PagedBy.parts`)."""
    from cockpit.i18n import t

    parts = paged.parts(lang)
    return t("alerts.paged", lang, text=" · ".join(parts[:-2])) + "\n" + " · ".join(parts[-2:])


async def record_paged(ctx: AppContext, start: datetime, end: datetime) -> None:
    """Recording plan (``cockpit record``): the reads of :func:`collect_paged` as of the
    window's end, so that ``--replay`` lists the same alerts (Alertmanager's answers
    when it is configured, the rules, ``ALERTS`` over the last hour)."""
    await collect_paged(ctx, DEFAULT_SINCE, at=end)
