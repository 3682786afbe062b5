"""Step I: which monitor could have caught it earlier — candidate alert expressions
back-tested over the incident window, with their lead time before the impact start.

Seed 000 template, last field ("哪个监控或流程本可以更早发现"), and seed 003 §五: alert
thresholds are based on the baseline, not fixed values — the baseline-relative
candidates embed thresholds computed from the baseline window (× 1.5 for P99, × 2 for
the queue), so the rule reads the way it was back-tested.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from cockpit.models import Series, from_epoch, to_epoch
from cockpit.models.messages import Msg

SUSTAIN_SAMPLES = 2
"""The condition must hold for two consecutive samples (one scrape spike is not an alert)."""

KV_CACHE_CEILING_PCT = 95.0
"""KV cache ≥ 95 %: vLLM starts preempting near a full cache (metrics_kb.md §2.1, §2.5)."""


class Candidate(BaseModel):
    """A candidate alert.

    Attributes:
        id: ``queue_growth``, ``kv_cache_high``, ``preemption_rate``, ``xid``,
            ``throttle``, ``p99_over_baseline``, ``error_burn``.
        expr: PromQL that returns series only while the condition holds.
        for_s: ``for:`` duration of the rule (seconds).
        summary: Human description (English; the rule annotation).
        summary_msg: The same as a message (``evidence.alert.*``) for the UI's language.
    """

    id: str
    expr: str
    for_s: float = 120.0
    summary: str = ""
    summary_msg: Msg | None = None

    def summary_text(self, lang: str) -> str:
        """:attr:`summary` in ``lang``."""
        return self.summary_msg.text(lang) if self.summary_msg is not None else self.summary


class CandidateResult(BaseModel):
    """How one candidate did over the window.

    ``lead_s``: seconds before the impact start (negative: after it);
    ``before_detection_s``: seconds before the incident was actually detected (first alert).
    ``status``: ``lead`` (fired at or before the impact start), ``late`` (fired after it),
    ``noisy`` (already firing at the window start, so it would not have told the start
    apart), ``silent`` (never fired), ``failed`` (query failed) or ``no_impact`` (no
    impact start to measure against).
    """

    candidate: Candidate
    status: str
    first_fire: datetime | None = None
    lead_s: float | None = None
    before_detection_s: float | None = None
    note: str = ""


class Backtest(BaseModel):
    """All candidates, the best one and its alerting rule."""

    impact_start: datetime | None = None
    detected_at: datetime | None = None
    results: list[CandidateResult] = Field(default_factory=list)
    best: CandidateResult | None = None
    rule_yaml: str = ""


def first_run(
    series: list[Series],
    sustain: int = SUSTAIN_SAMPLES,
    step_s: float = 60.0,
    for_s: float = 0.0,
) -> tuple[float, float] | None:
    """When the rule first fires (Unix s), with when the condition of that firing began:
    the first sample of any series at which its condition has held for ``sustain``
    consecutive steps and for at least ``for_s`` seconds since the run of steps began —
    the ``for:`` duration a Prometheus alerting rule waits in ``pending`` before it fires
    (https://prometheus.io/docs/prometheus/latest/configuration/alerting_rules/).
    ``None`` when it never does."""
    best: tuple[float, float] | None = None
    for s in series:
        ts = [p.t for p in s.samples if p.v == p.v]
        run_start, prev, run = 0.0, None, 0
        for t in ts:
            if prev is not None and t - prev <= step_s * 1.5:
                run += 1
            else:
                run, run_start = 1, t
            prev = t
            if run >= sustain and t - run_start >= for_s:
                if best is None or t < best[1]:
                    best = (run_start, t)
                break
    return best


def evaluate(
    candidate: Candidate,
    series: list[Series] | None,
    window_start: datetime,
    impact_start: datetime | None,
    step_s: float,
    failure: str = "",
) -> CandidateResult:
    """Lead time of one candidate from the range result of its ``expr``: from when it
    fires, its ``for:`` duration after the condition began to hold (:func:`first_run`)."""
    if failure or series is None:
        return CandidateResult(candidate=candidate, status="failed", note=failure)
    run = first_run(series, step_s=step_s, for_s=candidate.for_s)
    if run is not None and run[0] <= to_epoch(window_start) + step_s:
        # true since the window started: it would not have told the start apart
        return CandidateResult(
            candidate=candidate,
            status="noisy",
            first_fire=from_epoch(run[1]),
            note="already firing at the window start",
        )
    return evaluate_at(
        candidate, run[1] if run is not None else None, window_start, impact_start, step_s
    )


def evaluate_at(
    candidate: Candidate,
    t: float | None,
    window_start: datetime,
    impact_start: datetime | None,
    step_s: float,
) -> CandidateResult:
    """Lead time of one candidate that first fires at ``t`` (Unix seconds; None: never)."""
    if t is None:
        return CandidateResult(candidate=candidate, status="silent")
    fire = from_epoch(t)
    if t <= to_epoch(window_start) + step_s:
        return CandidateResult(
            candidate=candidate,
            status="noisy",
            first_fire=fire,
            note="already firing at the window start",
        )
    if impact_start is None:
        return CandidateResult(candidate=candidate, status="no_impact", first_fire=fire)
    lead = to_epoch(impact_start) - t
    return CandidateResult(
        candidate=candidate,
        status="lead" if lead >= 0 else "late",
        first_fire=fire,
        lead_s=lead,
    )


def choose_best(results: list[CandidateResult]) -> CandidateResult | None:
    """The candidate with the longest lead, if it fired no later than the impact start or
    before the actual detection; ``None`` when no candidate would have helped."""
    timed = [r for r in results if r.status in ("lead", "late") and r.lead_s is not None]
    if not timed:
        return None
    best = max(timed, key=lambda r: r.lead_s or 0.0)
    helped = (best.lead_s or 0.0) >= 0 or (best.before_detection_s or 0.0) > 0
    return best if helped else None


def rule_yaml(result: CandidateResult, service: str = "", lang: str = "en") -> str:
    """A Prometheus alerting rule (YAML) for a candidate, ready for a rules file, its
    annotations (what the alert says when it fires, and how it did over the window) in
    ``lang``."""
    from cockpit.i18n import t

    c = result.candidate
    name = "Cockpit" + "".join(p.capitalize() for p in c.id.split("_"))
    lead = ""
    if result.lead_s is not None:
        side = "before" if result.lead_s >= 0 else "after"
        lead = t(
            f"evidence.alert.rule_fired_{side}", lang, minutes=f"{abs(result.lead_s) / 60:.0f}"
        )
        if result.before_detection_s is not None and result.before_detection_s > 0:
            lead += t(
                "evidence.alert.rule_before_detection",
                lang,
                minutes=f"{result.before_detection_s / 60:.0f}",
            )
        lead += t("evidence.alert.rule_end", lang)
    expr = c.expr.replace("'", "''")
    svc = service.replace("'", "''")
    summary = c.summary_text(lang)
    return (
        "groups:\n"
        "  - name: cockpit-backtested\n"
        "    rules:\n"
        f"      - alert: {name}\n"
        f"        expr: '{expr}'\n"
        f"        for: {int(c.for_s // 60)}m\n"
        "        labels:\n"
        "          severity: warning\n"
        "        annotations:\n"
        f"          summary: '{summary.replace(chr(39), chr(39) * 2)}'\n"
        f"          description: '{(svc + ': ') if svc else ''}{lead.strip()}'\n"
    )


def backtest(
    candidates: list[Candidate],
    results: dict[str, tuple[list[Series] | None, str]],
    window_start: datetime,
    impact_start: datetime | None,
    step_s: float,
    service: str = "",
    detected_at: datetime | None = None,
    events: dict[str, float | None] | None = None,
    lang: str = "en",
) -> Backtest:
    """Evaluate every candidate (``results``: id → (series, failure text)); with
    ``detected_at`` (the first alert) also how much earlier than the real detection.

    ``events`` gives, per candidate id, when the event it alerts on first happened as the
    window's history tells it (``xid``: the first Xid of the change list, on the 15 s grid
    every screen uses; None: none in the window): that time is read, not a range query at
    the window's coarser step that a 30-second event can fall between. A candidate whose
    own query failed stays failed (the source fails now: unknown, never silent)."""
    out = Backtest(impact_start=impact_start, detected_at=detected_at)
    for c in candidates:
        series, failure = results.get(c.id, (None, "not run"))
        if events is not None and c.id in events and series is not None and not failure:
            r = evaluate_at(c, events[c.id], window_start, impact_start, step_s)
        else:
            r = evaluate(c, series, window_start, impact_start, step_s, failure)
        if detected_at is not None and r.first_fire is not None:
            r.before_detection_s = to_epoch(detected_at) - to_epoch(r.first_fire)
        out.results.append(r)
    out.best = choose_best(out.results)
    if out.best is not None:
        out.rule_yaml = rule_yaml(out.best, service, lang)
    return out
