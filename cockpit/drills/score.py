"""A drill's scorecard: the trainee's record against the drill's answer key (pure).

The scorecard compares, part by part, the structured conclusion handed in at G or I
(:class:`cockpit.incident.DrillAnswer`) with the :class:`~cockpit.drills.key.AnswerKey`,
and reads the rest from the incident record itself: the time from opening the drill to
handing the conclusion in, the steps visited against the expert's path, the hypotheses
with and without a falsifying observation, which decisive evidence was pinned, and what
was missed with where it was on screen. The TUI's scorecard screen and
``cockpit drill score ID [--json]`` render the same :class:`Scorecard`
(``docs/json.md`` documents its JSON).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Literal

from pydantic import BaseModel, Field

from cockpit.drills.key import AnswerKey, KeySuspect
from cockpit.flow import step as flow_step
from cockpit.i18n import t
from cockpit.incident import DrillAnswer, Incident

TIME_TOLERANCE = timedelta(minutes=5)
"""An impact start or detection time within this of the key's counts as right: the
screens read rates over 5-minute windows (``rate(…[5m])``, the window of every query of
step A/C), so no screen places a change closer than that."""

Part = Literal["layer", "scope", "suspect", "cause_class", "impact_start", "detected_at"]
PARTS: tuple[Part, ...] = (
    "layer",
    "scope",
    "suspect",
    "cause_class",
    "impact_start",
    "detected_at",
)
"""The parts of the structured conclusion, in the order the form asks for them."""

PART_WHERE: dict[Part, tuple[str, str]] = {
    "layer": ("C", "drilldown"),
    "scope": ("D", "scope"),
    "suspect": ("D", "scope"),
    "impact_start": ("A", "golden_signals"),
    "detected_at": ("A", "timeline"),
}
"""Where on screen each part is read: C's layer verdicts, D's blast radius (scope and
suspect), A's golden signals (when they left the baseline) and A's timeline (the first
alert). The cause class is read where the key's first decisive evidence is."""


class Where(BaseModel):
    """A place on screen: a flowchart step and a panel or section of its screen."""

    step: str
    panel: str


class PartScore(BaseModel):
    """One part of the conclusion against the key.

    Attributes:
        part: layer / scope / suspect / cause_class / impact_start / detected_at.
        given: The trainee's answer as stored (an id, ``kind:name``, an ISO time); ``""``
            when not answered.
        expected: The key's answer in the same form (suspects: each accepted one,
            joined with ``" | "``).
        correct: ``True``/``False``; ``None`` when not answered.
        where: Where on screen the answer was to be read.
    """

    part: Part
    given: str
    expected: str
    correct: bool | None
    where: Where


class PathScore(BaseModel):
    """The steps visited against the expert's path.

    Attributes:
        visited: Steps in the order first visited.
        expert: The key's path.
        missed: Steps of the expert's path never visited.
        extra: Steps visited that the expert's path does not take.
        in_order: Whether the expert's path appears, in order, within the visits.
    """

    visited: list[str]
    expert: list[str]
    missed: list[str]
    extra: list[str]
    in_order: bool


class HypothesisScore(BaseModel):
    """The hypothesis ledger: how many, with and without a falsifying observation, and
    how many were tested (marked supported or refuted)."""

    total: int
    with_falsifier: int
    without_falsifier: int
    tested: int


class EvidenceScore(BaseModel):
    """A decisive piece of evidence of the key and whether it was pinned."""

    what: str
    where: Where
    text: str
    pinned: bool


class Missed(BaseModel):
    """Something the expert used that the trainee did not, with where it was on screen.

    Attributes:
        kind: ``answer`` (a part wrong or not given), ``evidence`` (decisive evidence not
            pinned) or ``step`` (a step of the expert's path not visited).
        what: The part, the evidence's signal/kind, or the step letter.
        where: Where on screen it was.
        text: What it was, in the scorecard's language.
    """

    kind: Literal["answer", "evidence", "step"]
    what: str
    where: Where
    text: str


class Scorecard(BaseModel):
    """The whole scorecard (the JSON of ``cockpit drill score ID --json``).

    Attributes:
        incident: The incident's id.
        drill, title, difficulty: The drill.
        lang: Language of the texts.
        started_at: When the drill was opened (UTC).
        submitted_at: When the conclusion was handed in (UTC).
        time_to_diagnosis_s: Seconds from opening to handing in.
        answers: Each part against the key.
        correct, total: Parts right, of all parts.
        path, hypotheses, evidence: See their models.
        missed: What was missed, with where it was.
    """

    incident: str
    drill: str
    title: str
    difficulty: str
    lang: str
    started_at: datetime
    submitted_at: datetime
    time_to_diagnosis_s: float
    answers: list[PartScore] = Field(default_factory=list)
    correct: int
    total: int
    path: PathScore
    hypotheses: HypothesisScore
    evidence: list[EvidenceScore] = Field(default_factory=list)
    missed: list[Missed] = Field(default_factory=list)


class NotSubmitted(Exception):
    """The drill's conclusion was not handed in yet: the scorecard would give the answer
    key away."""


def suspect_text(kind: str, name: str) -> str:
    """``kind:name``, how a suspect is stored on the scorecard."""
    return f"{kind}:{name}" if kind or name else ""


def _iso(value: datetime | None) -> str:
    return value.isoformat().replace("+00:00", "Z") if value is not None else ""


def _suspect_right(a: DrillAnswer, suspects: list[KeySuspect]) -> bool:
    return any(s.matches(a.suspect_kind, a.suspect_name, a.suspect_uuid) for s in suspects)


def _time_right(given: datetime | None, expected: datetime) -> bool:
    return given is not None and abs(given - expected) <= TIME_TOLERANCE


def _parts(a: DrillAnswer, key: AnswerKey) -> list[PartScore]:
    given: dict[Part, str] = {
        "layer": a.layer,
        "scope": a.scope,
        "suspect": suspect_text(a.suspect_kind, a.suspect_name),
        "cause_class": a.cause_class,
        "impact_start": _iso(a.impact_start),
        "detected_at": _iso(a.detected_at),
    }
    expected: dict[Part, str] = {
        "layer": key.primary_layer,
        "scope": key.scope,
        "suspect": " | ".join(suspect_text(s.kind, s.name) for s in key.suspects),
        "cause_class": key.cause_class,
        "impact_start": _iso(key.impact_start),
        "detected_at": _iso(key.detected_at),
    }
    right: dict[Part, bool] = {
        "layer": a.layer == key.primary_layer,
        "scope": a.scope == key.scope,
        "suspect": _suspect_right(a, key.suspects),
        "cause_class": a.cause_class == key.cause_class,
        "impact_start": _time_right(a.impact_start, key.impact_start),
        "detected_at": _time_right(a.detected_at, key.detected_at),
    }
    return [
        PartScore(
            part=p,
            given=given[p],
            expected=expected[p],
            correct=right[p] if given[p] else None,
            where=_where(p, key),
        )
        for p in PARTS
    ]


def _where(part: Part, key: AnswerKey) -> Where:
    if part == "cause_class":
        first = key.decisive_evidence[0].where
        return Where(step=first.step.value, panel=first.panel)
    step, panel = PART_WHERE[part]
    return Where(step=step, panel=panel)


def _path(inc: Incident, key: AnswerKey) -> PathScore:
    visited = list(dict.fromkeys(inc.path))
    expert = [s.value for s in key.expert_path]
    rest = iter(inc.path)
    in_order = all(any(v == s for v in rest) for s in expert)
    return PathScore(
        visited=visited,
        expert=expert,
        missed=[s for s in expert if s not in visited],
        extra=[s for s in visited if s not in expert],
        in_order=in_order,
    )


def _hypotheses(inc: Incident) -> HypothesisScore:
    hyps = inc.hypotheses
    with_f = sum(1 for h in hyps if h.falsifier.strip())
    return HypothesisScore(
        total=len(hyps),
        with_falsifier=with_f,
        without_falsifier=len(hyps) - with_f,
        tested=sum(1 for h in hyps if h.status != "open"),
    )


def part_name(part: Part, lang: str) -> str:
    """A part's human name (``drill.part.<part>``)."""
    return t(f"drill.part.{part}", lang)


def score(inc: Incident, key: AnswerKey, lang: str) -> Scorecard:
    """The scorecard of drill incident ``inc`` against ``key``, texts in ``lang``.

    Raises:
        ValueError: ``inc`` is not a drill, or is a drill of another key.
        NotSubmitted: the conclusion was not handed in yet.
    """
    drill = inc.drill
    if drill is None or drill.id != key.id:
        raise ValueError(f"incident {inc.id} is not a drill of {key.id}")
    a = drill.answer
    if a.submitted_at is None:
        raise NotSubmitted(inc.id)
    answers = _parts(a, key)
    pinned = {e.what for e in inc.evidence if e.what}
    evidence = [
        EvidenceScore(
            what=d.what,
            where=Where(step=d.where.step.value, panel=d.where.panel),
            text=d.text.text(lang),
            pinned=d.what in pinned,
        )
        for d in key.decisive_evidence
    ]
    path = _path(inc, key)
    missed = [
        Missed(
            kind="answer",
            what=p.part,
            where=p.where,
            text=part_name(p.part, lang),
        )
        for p in answers
        if not p.correct
    ]
    missed += [
        Missed(kind="evidence", what=e.what, where=e.where, text=e.text)
        for e in evidence
        if not e.pinned
    ]
    missed += [
        Missed(
            kind="step",
            what=s,
            where=Where(step=s, panel="step"),
            text=flow_step(s).title(lang),
        )
        for s in path.missed
    ]
    return Scorecard(
        incident=inc.id,
        drill=key.id,
        title=key.title.text(lang),
        difficulty=key.difficulty,
        lang=lang,
        started_at=drill.started_at,
        submitted_at=a.submitted_at,
        time_to_diagnosis_s=max(0.0, (a.submitted_at - drill.started_at).total_seconds()),
        answers=answers,
        correct=sum(1 for p in answers if p.correct),
        total=len(answers),
        path=path,
        hypotheses=_hypotheses(inc),
        evidence=evidence,
        missed=missed,
    )


# -- text ---------------------------------------------------------------------------------


def where_text(where: Where, lang: str) -> str:
    """``C · SLI drilldown, layer drilldown table``: a place on screen in words."""
    return t(
        "drill.where",
        lang,
        step=where.step,
        title=flow_step(where.step).title(lang),
        panel=t(f"drill.panel.{where.panel}", lang),
    )


def value_text(part: Part, raw: str, lang: str) -> str:
    """A stored answer (``runtime``, ``pod:name``, an ISO time, ``a | b``) in words."""
    if not raw:
        return t("drill.card.none", lang)
    if " | " in raw:
        return " / ".join(value_text(part, one, lang) for one in raw.split(" | "))
    if part == "layer":
        return t(f"metrics.layer.{raw}", lang)
    if part == "scope":
        return t(f"drill.scope.{raw}", lang)
    if part == "cause_class":
        return t(f"metrics.cause.{raw}", lang)
    if part == "suspect":
        kind, _, name = raw.partition(":")
        return f"{t(f'drill.kind.{kind}', lang)} {name}" if kind else name
    when = datetime.fromisoformat(raw)
    return f"{when:%Y-%m-%d %H:%M:%S} UTC"


def duration_text(seconds: float, lang: str) -> str:
    """``12 min 5 s``."""
    m, s = divmod(round(seconds), 60)
    return t("drill.card.duration", lang, m=m, s=s)


def card_sections(card: Scorecard, lang: str) -> list[tuple[str, list[str]]]:
    """The scorecard as titled sections of lines, in ``lang``: the conclusion part by
    part, the steps, the hypotheses, the decisive evidence and what was missed (the TUI's
    screen and ``cockpit drill score`` print the same)."""
    answers = []
    for p in card.answers:
        args = {
            "part": part_name(p.part, lang),
            "given": value_text(p.part, p.given, lang),
            "expected": value_text(p.part, p.expected, lang),
            "where": where_text(p.where, lang),
        }
        key = {True: "right", False: "wrong", None: "unanswered"}[p.correct]
        answers.append(t(f"drill.card.{key}", lang, **args))
    none = t("drill.card.none", lang)
    path = card.path
    steps = [
        t(
            "drill.card.path_line",
            lang,
            visited=" ".join(path.visited) or none,
            expert=" ".join(path.expert),
        ),
        t("drill.card.path_in_order" if path.in_order else "drill.card.path_out_of_order", lang),
    ]
    if path.missed:
        steps.append(t("drill.card.path_missed", lang, steps=" ".join(path.missed)))
    if path.extra:
        steps.append(t("drill.card.path_extra", lang, steps=" ".join(path.extra)))
    h = card.hypotheses
    hyps = [
        t(
            "drill.card.hypotheses",
            lang,
            total=h.total,
            with_f=h.with_falsifier,
            without_f=h.without_falsifier,
            tested=h.tested,
        )
    ]
    evidence = [
        t(
            "drill.card.pinned" if e.pinned else "drill.card.not_pinned",
            lang,
            text=e.text,
            where=where_text(e.where, lang),
        )
        for e in card.evidence
    ]
    missed = [
        t(f"drill.card.missed.{m.kind}", lang, text=m.text, where=where_text(m.where, lang))
        for m in card.missed
    ] or [t("drill.card.nothing_missed", lang)]
    summary = t(
        "drill.card.summary",
        lang,
        correct=card.correct,
        total=card.total,
        duration=duration_text(card.time_to_diagnosis_s, lang),
    )
    return [
        (summary, answers),
        (t("drill.card.path", lang), steps),
        ("", hyps),
        (t("drill.card.evidence", lang), evidence),
        (t("drill.card.missed", lang), missed),
    ]


def card_text(card: Scorecard, lang: str) -> str:
    """The scorecard as plain text (``cockpit drill score ID``)."""
    out = [t("drill.card.title", lang, title=card.title)]
    for title, lines in card_sections(card, lang):
        out.append("")
        if title:
            out.append(title)
        out += [f"  {line}" for line in lines]
    return "\n".join(out) + "\n"
