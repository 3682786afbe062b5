"""Render an :class:`~cockpit.incident.Incident` as the handbook's minimal incident template.

The template is the one at the end of seed ``000_98f0f2273dcebb14.txt`` ("事故记录最小模板")::

    # 事故：<标题>
    - 影响：
    - 开始 / 检测 / 缓解 / 恢复时间：
    - 用户症状与 SLO：
    - 最近变更：
    - 关键证据：
    - 根因（技术 + 系统性）：
    - 临时缓解：
    - 长期行动项（owner / deadline / 验证方式）：
    - 哪个监控或流程本可更早发现：

Every field is rendered, in that order, from the record alone; an empty one shows the
explicit marker "（未填写）" / "(not filled)" so nothing looks done when it is not. After the
template come the appendices: timeline, hypotheses, experiments, the path through the
flowchart, the collect-first list, playbook findings, the recovery check, the record's
identity and the corrections (what was overwritten, cleared or deleted, with the value
before: :mod:`cockpit.history`). All labels come from ``cockpit/knowledge/i18n/export.toml``;
a status or a kind is named by the one word the screens use for it (``hyp.status.*`` of G,
``playbook.status.*`` of F7 and ``cockpit playbook``, ``timeline.kind.*`` of A).

Two formats:

- **Markdown** (:func:`render_markdown`), the default, for pasting into a postmortem.
- **JSON** (:func:`render_json`): the :class:`ExportDocument` model, dumped with
  ``indent=2``. Its shape is stable within ``format_version`` 1::

      {
        "format": "cockpit.incident-export", "format_version": 1, "lang": "zh"|"en",
        "local_offset": "+08:00",
        "record": {id, status, mode, drill, service{namespace,selector,deployment,model},
                   created_at, updated_at},
        "labels": {"title": "事故", "impact": "影响", ...},   # template order
        "template": {                                           # template order
          "title":             {filled, value},
          "impact":            {filled, value},
          "times":             {filled, start, detect, mitigate, recover,
                                minutes_to_detect, minutes_to_mitigate, minutes_to_recover,
                                order_problems[], paged_by{PagedBy}|null},
          "symptoms_slo":      {filled, symptoms, slo},
          "recent_changes":    {filled, changes[Change, by time], note},
          "key_evidence":      {filled, items[Evidence]},
          "root_cause":        {filled, technical, systemic},
          "mitigation":        {filled, text, actions_taken[TimelineEntry]},
          "long_term_actions": {filled, items[ActionItem]},
          "earlier_detection": {filled, text, alert_rule}
        },
        "appendices": {timeline[TimelineEntry], hypotheses[Hypothesis],
                       experiments[Experiment], path{steps, current_step, scope_branch,
                       scope_verdict, step_notes}, collect_first{CollectFirst},
                       playbooks[PlaybookRecord], recovery{RecoveryCheck},
                       corrections[HistoryEntry]}
      }

  In ``template`` an empty text is ``null`` (never ``""``) and ``filled`` says whether
  any part of the field has content; times are UTC ISO 8601 with ``Z``. Nested objects
  (``Change``, ``Evidence``, …) are the incident record's own models with their own field
  names and defaults (:mod:`cockpit.incident`), so they keep ``""`` for empty strings. ``ExportDocument.model_json_schema()`` is
  the machine-readable schema; ``ExportDocument.model_validate_json(text)`` reads it back.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, tzinfo
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from cockpit import flow
from cockpit.analysis.changes import kind_name, time_order
from cockpit.analysis.playbooks.render import status_text
from cockpit.history import corrections, entry_line
from cockpit.i18n import fmt_number, name_of, t
from cockpit.incident import (
    ActionItem,
    Change,
    CollectFirst,
    Evidence,
    Experiment,
    HistoryEntry,
    Hypothesis,
    Incident,
    ItemStatus,
    Mode,
    PagedBy,
    PlaybookRecord,
    RecoveryCheck,
    ServiceScope,
    TimelineEntry,
    TimelineKind,
    mitigation_in,
    scope_verdict_in,
)
from cockpit.models.messages import unit_text
from cockpit.neutral import json_text, neutralise
from cockpit.session import (
    TIME_FIELDS,
    check_predates,
    check_time_order,
    entry_text,
    recovery_disagrees,
)

EXPORT_FORMAT: Literal["cockpit.incident-export"] = "cockpit.incident-export"
EXPORT_FORMAT_VERSION = 1

TEMPLATE_KEYS: tuple[str, ...] = (
    "title",
    "impact",
    "times",
    "symptoms_slo",
    "recent_changes",
    "key_evidence",
    "root_cause",
    "mitigation",
    "long_term_actions",
    "earlier_detection",
)
"""The template's fields, in the seed's order."""

APPENDIX_KEYS: tuple[str, ...] = (
    "timeline",
    "hypotheses",
    "experiments",
    "path",
    "collect_first",
    "playbooks",
    "recovery",
    "record",
)

Lang = Literal["zh", "en"]
Format = Literal["md", "json"]


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TextField(_Doc):
    """A free-text field: ``value`` is ``None`` when empty."""

    filled: bool
    value: str | None


class TimesField(_Doc):
    """开始 / 检测 / 缓解 / 恢复时间, UTC, with durations from the start in minutes."""

    filled: bool
    start: datetime | None
    detect: datetime | None
    mitigate: datetime | None
    recover: datetime | None
    minutes_to_detect: float | None
    minutes_to_mitigate: float | None
    minutes_to_recover: float | None
    order_problems: list[str]
    """``"detect<start"`` style problems (see :func:`cockpit.session.check_time_order`)."""
    paged_by: PagedBy | None = None
    """The alert the incident was started from (how it was detected); ``None`` when it
    was opened blank."""


class SymptomsField(_Doc):
    """用户症状与 SLO."""

    filled: bool
    symptoms: str | None
    slo: str | None


class ChangesField(_Doc):
    """最近变更: the changes by time as B lists them (suspects marked); the free-text note."""

    filled: bool
    changes: list[Change]
    note: str | None


class EvidenceField(_Doc):
    """关键证据: value, unit, time and query of each pinned observation."""

    filled: bool
    items: list[Evidence]


class RootCauseField(_Doc):
    """根因（技术 + 系统性）."""

    filled: bool
    technical: str | None
    systemic: str | None


class MitigationField(_Doc):
    """临时缓解: the text and the mitigation entries of the timeline."""

    filled: bool
    text: str | None
    actions_taken: list[TimelineEntry]


class ActionsField(_Doc):
    """长期行动项 (owner / deadline / 验证方式)."""

    filled: bool
    items: list[ActionItem]


class EarlierDetectionField(_Doc):
    """哪个监控或流程本可更早发现, with the proposed Prometheus alert rule (YAML)."""

    filled: bool
    text: str | None
    alert_rule: str | None


class Template(_Doc):
    """The template's fields, declared (and dumped) in the seed's order."""

    title: TextField
    impact: TextField
    times: TimesField
    symptoms_slo: SymptomsField
    recent_changes: ChangesField
    key_evidence: EvidenceField
    root_cause: RootCauseField
    mitigation: MitigationField
    long_term_actions: ActionsField
    earlier_detection: EarlierDetectionField


class PathAppendix(_Doc):
    """The path through the flowchart and the answer at D."""

    steps: list[str]
    current_step: str
    scope_branch: str | None
    scope_verdict: str | None
    step_notes: dict[str, str]


class Appendices(_Doc):
    """Everything else the record holds."""

    timeline: list[TimelineEntry]
    hypotheses: list[Hypothesis]
    experiments: list[Experiment]
    path: PathAppendix
    collect_first: CollectFirst
    playbooks: list[PlaybookRecord]
    recovery: RecoveryCheck
    corrections: list[HistoryEntry]
    """What was overwritten, cleared, deleted or put back, with the value before
    (:func:`cockpit.history.corrections`)."""


class RecordInfo(_Doc):
    """Identity of the exported record."""

    id: str
    status: str
    mode: str
    drill: str | None = None
    """The drill's id when the incident is a drill (``cockpit drill NAME``), else ``None``."""
    service: ServiceScope
    created_at: datetime
    updated_at: datetime
    clocks: dict[str, str]
    """The clock each kind of timestamp is on (see :func:`clocks_of`)."""
    clock_at: datetime | None = None
    """The instant the incident clock is frozen at (``--at``), ``None`` when unknown or live."""


CLOCK_KINDS = ("evidence", "logged", "record")
"""The kinds of timestamp of an export: ``evidence`` (what was read: pinned numbers, alerts,
changes, Xid events, the incident times), ``logged`` (what the responder logged doing:
experiments, F2 actions, timeline notes) and ``record`` (created, updated, corrections)."""


def clocks_of(inc: Incident) -> dict[str, str]:
    """Kind of timestamp → its clock: ``wall`` (the wall clock), ``incident`` (frozen at the
    time investigated: ``--at``, or the recording's time in replay and demo) or
    ``incident_running`` (that incident clock running on with the wall time elapsed while
    the responder worked, :meth:`cockpit.clock.Clock.logged`)."""
    frozen = inc.opened_with.at is not None or inc.mode in (Mode.REPLAY, Mode.DEMO)
    return {
        "evidence": "incident" if frozen else "wall",
        "logged": "incident_running" if frozen else "wall",
        "record": "wall",
    }


class ExportDocument(_Doc):
    """The JSON export (see the module docstring for the shape)."""

    format: Literal["cockpit.incident-export"] = EXPORT_FORMAT
    format_version: int = EXPORT_FORMAT_VERSION
    lang: Lang
    local_offset: str
    """Offset of the exporting machine's local time zone, ``+08:00``."""
    record: RecordInfo
    labels: dict[str, str]
    template: Template
    appendices: Appendices


# -- building the document ---------------------------------------------------------------


def _text(value: str) -> str | None:
    return value if value.strip() else None


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def _minutes(start: datetime | None, end: datetime | None) -> float | None:
    if start is None or end is None:
        return None
    return round((end - start).total_seconds() / 60.0, 1)


def format_offset(tz: tzinfo | None, at: datetime | None = None) -> str:
    """``+08:00`` for the offset of ``tz`` (default: this machine's local zone) at ``at``."""
    moment = at or datetime.now(UTC)
    local = moment.astimezone(tz) if tz is not None else moment.astimezone()
    offset = local.utcoffset()
    seconds = int(offset.total_seconds()) if offset is not None else 0
    sign = "+" if seconds >= 0 else "-"
    seconds = abs(seconds)
    return f"{sign}{seconds // 3600:02d}:{(seconds % 3600) // 60:02d}"


def _sorted_changes(changes: Iterable[Change]) -> list[Change]:
    """Recent changes in B's order: by time (no time last), suspects marked in place."""
    return sorted(changes, key=time_order)


def build_document(
    incident: Incident, lang: Lang = "zh", tz: tzinfo | None = None
) -> ExportDocument:
    """The export of ``incident`` as a model (both formats render from it).

    Args:
        incident: The record.
        lang: ``zh`` (default) or ``en``: the labels, and the texts cockpit wrote into the
            record in both languages (evidence, changes, timeline, playbook findings, the
            recovery check, D's verdict, the mitigation); what was typed stays as typed.
        tz: Local time zone to note next to UTC times (default: this machine's).
    """
    inc = incident
    times = {name: _utc(getattr(inc.times, name)) for name in TIME_FIELDS}
    start = times["start"]
    order = check_time_order(times)
    mitigations = [
        e.model_copy(update={"text": e.text_i18n.get(lang, e.text)})
        for e in inc.timeline
        if e.kind is TimelineKind.MITIGATION
    ]
    template = Template(
        title=TextField(filled=bool(_text(inc.title)), value=_text(inc.title)),
        impact=TextField(filled=bool(_text(inc.impact)), value=_text(inc.impact)),
        times=TimesField(
            filled=any(v is not None for v in times.values()),
            start=start,
            detect=times["detect"],
            mitigate=times["mitigate"],
            recover=times["recover"],
            minutes_to_detect=_minutes(start, times["detect"]),
            minutes_to_mitigate=_minutes(start, times["mitigate"]),
            minutes_to_recover=_minutes(start, times["recover"]),
            order_problems=order,
            paged_by=inc.paged_by,
        ),
        symptoms_slo=SymptomsField(
            filled=bool(_text(inc.symptoms) or _text(inc.slo)),
            symptoms=_text(inc.symptoms),
            slo=_text(inc.slo),
        ),
        recent_changes=ChangesField(
            filled=bool(inc.changes or _text(inc.collect.recent_changes_note)),
            changes=[c.in_lang(lang) for c in _sorted_changes(inc.changes)],
            note=_text(inc.collect.recent_changes_note),
        ),
        key_evidence=EvidenceField(
            filled=bool(inc.evidence), items=[ev.in_lang(lang) for ev in inc.evidence]
        ),
        root_cause=RootCauseField(
            filled=bool(_text(inc.root_cause_technical) or _text(inc.root_cause_systemic)),
            technical=_text(inc.root_cause_technical),
            systemic=_text(inc.root_cause_systemic),
        ),
        mitigation=MitigationField(
            filled=bool(_text(inc.mitigation) or mitigations),
            text=_text(mitigation_in(inc, lang)),
            actions_taken=mitigations,
        ),
        long_term_actions=ActionsField(filled=bool(inc.actions), items=list(inc.actions)),
        earlier_detection=EarlierDetectionField(
            filled=bool(_text(inc.earlier_detection) or _text(inc.alert_rule)),
            text=_text(inc.earlier_detection),
            alert_rule=_text(inc.alert_rule),
        ),
    )
    appendices = Appendices(
        timeline=sorted(
            (e.model_copy(update={"text": e.text_i18n.get(lang, e.text)}) for e in inc.timeline),
            key=lambda e: _utc(e.at) or e.at,
        ),
        hypotheses=list(inc.hypotheses),
        experiments=list(inc.experiments),
        path=PathAppendix(
            steps=list(inc.path),
            current_step=inc.current_step,
            scope_branch=_text(inc.scope_branch),
            scope_verdict=_text(scope_verdict_in(inc, lang)),
            step_notes=dict(inc.step_notes),
        ),
        collect_first=inc.collect.model_copy(deep=True),
        playbooks=[inc.playbooks[k].in_lang(lang) for k in sorted(inc.playbooks)],
        recovery=inc.recovery.in_lang(lang),
        corrections=corrections(inc),
    )
    return ExportDocument(
        lang=lang,
        local_offset=format_offset(tz, inc.updated_at),
        record=RecordInfo(
            id=inc.id,
            status=inc.status,
            mode=inc.mode,
            drill=inc.drill.id if inc.drill is not None else None,
            service=inc.service.model_copy(),
            created_at=inc.created_at,
            updated_at=inc.updated_at,
            clocks=clocks_of(inc),
            clock_at=_utc(inc.opened_with.at),
        ),
        labels={key: t(f"export.field.{key}", lang) for key in TEMPLATE_KEYS},
        template=template,
        appendices=appendices,
    )


# -- JSON ---------------------------------------------------------------------------------


_OTHER_LANGUAGES: Any = {
    "template": {
        "key_evidence": {"items": {"__all__": {"label_i18n", "note_i18n", "value_i18n"}}},
        "mitigation": {"actions_taken": {"__all__": {"text_i18n"}}},
        "recent_changes": {"changes": {"__all__": {"summary_i18n"}}},
    },
    "appendices": {
        "recovery": {"lines_i18n"},
        "timeline": {"__all__": {"text_i18n"}},
        "playbooks": {
            "__all__": {"summary_i18n": True, "items": {"__all__": {"item_i18n", "finding_i18n"}}}
        },
    },
}


def render_json(incident: Incident, lang: Lang = "zh", tz: tzinfo | None = None) -> str:
    """The JSON export (shape in the module docstring), ending with a newline."""
    doc = build_document(incident, lang, tz)
    # The other language's copies of cockpit's own texts stay in the incident file.
    return json_text(doc.model_dump_json(indent=2, exclude=_OTHER_LANGUAGES)) + "\n"


# -- Markdown -----------------------------------------------------------------------------


class _Md:
    """Small Markdown writer: list items with indented continuation lines."""

    def __init__(self, lang: Lang, tz: tzinfo | None) -> None:
        self.lang = lang
        self.tz = tz
        self.lines: list[str] = []

    def tr(self, key: str, **kw: object) -> str:
        return t(key, self.lang, **kw)

    @property
    def colon(self) -> str:
        return self.tr("export.colon")

    @property
    def missing(self) -> str:
        return self.tr("export.not_filled")

    def item(self, depth: int, label: str | None, text: str | None) -> None:
        """``- label：text`` at ``depth``; multi-line text continues indented."""
        indent = "  " * depth
        body = text if text is not None and text.strip() else self.missing
        first, *rest = body.strip("\n").split("\n")
        head = f"{label}{self.colon}{first}" if label is not None else first
        self.lines.append(f"{indent}- {head}".rstrip())
        for line in rest:
            self.lines.append(f"{indent}  {line}".rstrip())

    def heading(self, depth: int, label: str) -> None:
        """``- label：`` with sub-items to follow."""
        self.lines.append(f"{'  ' * depth}- {label}{self.colon}".rstrip())

    def code(self, depth: int, text: str, lang: str = "") -> None:
        indent = "  " * depth
        fence = "```"
        while fence in text:
            fence += "`"
        self.lines.append(f"{indent}{fence}{lang}")
        self.lines.extend(f"{indent}{line}".rstrip() for line in text.strip("\n").split("\n"))
        self.lines.append(f"{indent}{fence}")

    def when(self, value: datetime | None, local: bool = False) -> str:
        utc = _utc(value)
        if utc is None:
            return self.missing
        text = utc.strftime("%Y-%m-%dT%H:%M:%SZ")
        if local:
            there = utc.astimezone(self.tz) if self.tz is not None else utc.astimezone()
            stamp = there.strftime("%Y-%m-%d %H:%M:%S") + " " + format_offset(self.tz, utc)
            text += self.tr("export.paren", text=self.tr("export.time.local", local=stamp))
        return text


def _inline_code(text: str) -> str:
    fence = "`"
    while fence in text:
        fence += "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _evidence_line(md: _Md, ev: Evidence) -> str:
    value = f"{ev.value} {unit_text(ev.unit, md.lang)}".strip()
    parts = [f"{ev.label}{md.colon}{value}"]
    parts.append(f"{md.tr('export.evidence.at')} {md.when(ev.at)}")
    query = _inline_code(_one_line(ev.query)) if ev.query.strip() else md.missing
    parts.append(f"{md.tr('export.evidence.query')} {query}")
    extra = []
    if ev.source:
        extra.append(md.tr("export.source", source=name_of("source.name", ev.source, md.lang)))
    if ev.step:
        extra.append(md.tr("export.evidence.step", step=ev.step))
    if ev.note:
        extra.append(f"{md.tr('export.evidence.note')}{md.colon}{ev.note}")
    line = " · ".join(parts)
    if extra:
        line += md.tr("export.paren", text=md.tr("export.sep").join(extra))
    return line


def _template(md: _Md, doc: ExportDocument) -> None:
    tpl = doc.template
    labels = doc.labels
    title = tpl.title.value if tpl.title.value is not None else md.missing
    md.lines.append(f"# {labels['title']}{md.colon}{_one_line(title)}")
    md.lines.append("")
    if doc.record.drill is not None:
        md.lines += [f"> {md.tr('export.drill_note', drill=doc.record.drill)}", ""]

    md.item(0, labels["impact"], tpl.impact.value)

    md.heading(0, labels["times"])
    for name in TIME_FIELDS:
        when = md.when(getattr(tpl.times, name), local=True)
        if name == "recover" and recovery_disagrees(tpl.times.recover, doc.appendices.recovery):
            when += md.tr("export.paren", text=md.tr("export.time.recover_unconfirmed"))
        md.item(1, md.tr(f"export.time.{name}"), when)
    durations = [
        md.tr(f"export.duration.{name}", minutes=fmt_number(value, 6))
        for name, value in (
            ("detect", tpl.times.minutes_to_detect),
            ("mitigate", tpl.times.minutes_to_mitigate),
            ("recover", tpl.times.minutes_to_recover),
        )
        if value is not None and value >= 0
    ]
    if durations:
        md.item(1, md.tr("export.time.durations"), md.tr("export.sep").join(durations))
    if tpl.times.paged_by is not None:
        md.item(1, md.tr("export.paged_by"), " · ".join(tpl.times.paged_by.parts(md.lang)))
    for problem in tpl.times.order_problems:
        later, earlier = problem.split("<")
        md.item(
            1,
            None,
            "⚠ "
            + md.tr(
                "export.time.order_problem",
                later=md.tr(f"export.time.{later}"),
                earlier=md.tr(f"export.time.{earlier}"),
            ),
        )

    md.heading(0, labels["symptoms_slo"])
    md.item(1, md.tr("export.symptoms"), tpl.symptoms_slo.symptoms)
    md.item(1, md.tr("export.slo"), tpl.symptoms_slo.slo)

    rc = tpl.recent_changes
    if not rc.filled:
        md.item(0, labels["recent_changes"], None)
    else:
        md.heading(0, labels["recent_changes"])
        for change in rc.changes:
            mark = f"**[{md.tr('export.change.suspect')}]** " if change.suspect else ""
            at = md.when(change.at) if change.at else md.tr("export.change.no_time")
            kind = kind_name(change.kind, md.lang)
            line = f"{mark}{at} · {kind} · {_one_line(change.summary)}"
            if change.detail.strip():
                line += f" — {_one_line(change.detail)}"
            if change.source:
                src = name_of("source.name", change.source, md.lang)
                line += md.tr("export.paren", text=md.tr("export.source", source=src))
            md.item(1, None, line)
        if rc.note is not None:
            md.item(1, md.tr("export.change.note"), rc.note)

    ev = tpl.key_evidence
    if not ev.filled:
        md.item(0, labels["key_evidence"], None)
    else:
        md.heading(0, labels["key_evidence"])
        for item in ev.items:
            md.item(1, None, _evidence_line(md, item))

    md.heading(0, labels["root_cause"])
    md.item(1, md.tr("export.root.technical"), tpl.root_cause.technical)
    md.item(1, md.tr("export.root.systemic"), tpl.root_cause.systemic)

    mit = tpl.mitigation
    md.item(0, labels["mitigation"], mit.text)
    if mit.actions_taken:
        md.heading(1, md.tr("export.mitigation.taken"))
        for entry in mit.actions_taken:
            # The option on the line, each command after it on its own line, as code.
            what, *commands = [x for x in entry_text(entry, md.lang).split("\n") if x.strip()]
            md.item(2, None, f"{md.when(entry.at)} · {_one_line(what)}")
            if commands:
                md.code(3, "\n".join(commands), "sh")

    acts = tpl.long_term_actions
    if not acts.filled:
        md.item(0, labels["long_term_actions"], None)
    else:
        md.heading(0, labels["long_term_actions"])
        sep = md.tr("export.sep")
        for action in acts.items:
            details = sep.join(
                f"{md.tr(f'export.action.{name}')}{md.colon}{_one_line(value) or md.missing}"
                for name, value in (
                    ("owner", action.owner),
                    ("deadline", action.deadline),
                    ("verification", action.verification),
                )
            )
            md.item(1, None, f"{_one_line(action.what)} — {details}")

    early = tpl.earlier_detection
    md.item(0, labels["earlier_detection"], early.text)
    if early.alert_rule is not None:
        md.heading(1, md.tr("export.earlier.alert_rule"))
        md.lines.append("")
        md.code(2, early.alert_rule, "yaml")


def _appendix_timeline(md: _Md, doc: ExportDocument) -> None:
    entries = doc.appendices.timeline
    if not entries:
        md.item(0, None, None)
    for entry in entries:
        kind = md.tr(f"timeline.kind.{entry.kind.value}")  # as A's timeline names it
        src = ", ".join(
            dict.fromkeys(
                name_of("source.name", s, md.lang) for s in (entry.source, *entry.sources)
            )
        )
        source = md.tr("export.paren", text=md.tr("export.source", source=src))
        md.item(
            0, None, f"{md.when(entry.at)} [{kind}] {_one_line(entry_text(entry, md.lang))}{source}"
        )


def _appendix_hypotheses(md: _Md, doc: ExportDocument) -> None:
    hyps = doc.appendices.hypotheses
    evidence = {e.id: e for e in doc.template.key_evidence.items}
    if not hyps:
        md.item(0, None, None)
    for hyp in hyps:
        md.item(0, None, f"H{hyp.number}. {hyp.statement}")
        md.item(1, md.tr("export.hyp.falsifier"), hyp.falsifier)
        # One word per status: G's table and the history's say the same.
        md.item(1, md.tr("export.hyp.status"), md.tr(f"hyp.status.{hyp.status.value}"))
        if not hyp.evidence_ids:
            md.item(1, md.tr("export.hyp.evidence"), None)
            continue
        md.heading(1, md.tr("export.hyp.evidence"))
        for eid in hyp.evidence_ids:
            ev = evidence.get(eid)
            if ev is None:
                md.item(2, None, md.tr("export.hyp.removed_evidence", id=eid))
            else:
                md.item(2, None, _evidence_line(md, ev))


def _appendix_experiments(md: _Md, doc: ExportDocument) -> None:
    exps = doc.appendices.experiments
    hyp_index = {h.id: h.number for h in doc.appendices.hypotheses}
    if not exps:
        md.item(0, None, None)
    for exp in exps:
        md.item(0, None, f"E{exp.number}. {md.when(exp.at)}")
        md.item(1, md.tr("export.exp.variable"), exp.variable)
        md.item(1, md.tr("export.exp.change"), exp.change_text())
        sli, before, after = exp.sli.strip(), exp.before.strip(), exp.after.strip()
        if not (sli or before or after):
            md.item(1, md.tr("export.exp.sli"), None)  # one "(not filled)", not three
        else:
            values = f"{before or md.missing} → {after or md.missing}" + md.tr(
                "export.paren", text=md.tr("export.exp.before_after")
            )
            md.item(1, md.tr("export.exp.sli"), f"{sli}{md.colon}{values}" if sli else values)
        if exp.hypothesis_id:
            ref = f"H{hyp_index[exp.hypothesis_id]}" if exp.hypothesis_id in hyp_index else ""
            md.item(1, md.tr("export.exp.hypothesis"), ref or exp.hypothesis_id)
        if exp.note.strip():
            md.item(1, md.tr("export.exp.note"), exp.note)


def _step_title(step_id: str, lang: Lang) -> str:
    try:
        return f"{step_id} {flow.step(step_id).title(lang)}"
    except (KeyError, ValueError):
        return step_id


def _appendix_path(md: _Md, doc: ExportDocument) -> None:
    path = doc.appendices.path
    md.item(0, md.tr("export.path.taken"), " → ".join(path.steps) if path.steps else None)
    md.item(0, md.tr("export.path.current"), _step_title(path.current_step, md.lang))
    branch = None
    if path.scope_branch in ("single", "shared", "release"):
        branch = md.tr(f"export.path.branch_{path.scope_branch}")
    elif path.scope_branch:
        branch = path.scope_branch
    md.item(0, md.tr("export.path.branch"), branch)
    md.item(0, md.tr("export.path.verdict"), path.scope_verdict)
    if path.step_notes:
        md.heading(0, md.tr("export.path.notes"))
        for step_id in sorted(path.step_notes):
            md.item(1, _step_title(step_id, md.lang), path.step_notes[step_id])
    else:
        md.item(0, md.tr("export.path.notes"), None)


def _appendix_collect(md: _Md, doc: ExportDocument) -> None:
    c = doc.appendices.collect_first
    md.item(0, md.tr("export.collect.time_range"), c.time_range)
    for name in ("affected_models", "affected_tenants", "affected_jobs"):
        values: list[str] = getattr(c, name)
        md.item(0, md.tr(f"export.collect.{name}"), ", ".join(values) if values else None)
    if not c.error_samples:
        md.item(0, md.tr("export.collect.error_samples"), None)
    else:
        md.heading(0, md.tr("export.collect.error_samples"))
        for sample in c.error_samples:
            ids = md.tr("export.sep").join(
                f"{md.tr(f'export.collect.{name}')}{md.colon}{value or md.missing}"
                for name, value in (("request_id", sample.request_id), ("job_id", sample.job_id))
            )
            at = f"{md.when(sample.at)} · " if sample.at else ""
            md.item(1, None, f"{at}{_inline_code(_one_line(sample.text))} — {ids}")
    md.item(0, md.tr("export.collect.recent_changes_note"), c.recent_changes_note)
    md.item(0, md.tr("export.collect.breakdown"), c.breakdown)
    md.item(0, md.tr("export.collect.control_group"), c.control_group)


def _appendix_playbooks(md: _Md, doc: ExportDocument) -> None:
    books = doc.appendices.playbooks
    if not books:
        md.item(0, None, None)
    for book in books:
        updated = f"{md.tr('export.pb.updated')} {md.when(book.updated_at)}"
        md.item(0, None, f"{book.playbook}{md.tr('export.paren', text=updated)}")
        md.item(1, md.tr("export.pb.summary"), book.summary)
        for result in book.items:
            # The word F7 and ``cockpit playbook`` show for the status.
            status = status_text(ItemStatus(result.status), md.lang)
            line = f"[{status}] {_one_line(result.item)}"
            if result.finding.strip():
                line += f"{md.colon}{_one_line(result.finding)}"
            if result.evidence_ids:
                line += md.tr(
                    "export.paren",
                    text=f"{md.tr('export.pb.evidence')} {', '.join(result.evidence_ids)}",
                )
            md.item(1, None, line)


def _appendix_recovery(md: _Md, doc: ExportDocument) -> None:
    rec = doc.appendices.recovery
    md.item(
        0, md.tr("export.recovery.checked_at"), md.when(rec.checked_at) if rec.checked_at else None
    )
    md.item(
        0, md.tr("export.recovery.hold"), md.tr("export.recovery.minutes", minutes=rec.hold_minutes)
    )
    result = None
    if rec.recovered is not None:
        result = md.tr("export.recovery.yes" if rec.recovered else "export.recovery.no")
    md.item(0, md.tr("export.recovery.result"), result)
    times = doc.template.times
    early = check_predates(rec, times.mitigate, times.recover)
    if early is not None and rec.checked_at is not None:
        kind, when = early
        text = md.tr(
            f"export.recovery.before_{kind}", checked=md.when(rec.checked_at), at=md.when(when)
        )
        md.item(0, None, text)
    if rec.lines:
        md.heading(0, md.tr("export.recovery.details"))
        for line in rec.lines:
            md.item(1, None, line)
    else:
        md.item(0, md.tr("export.recovery.details"), None)


def _appendix_record(md: _Md, doc: ExportDocument) -> None:
    r = doc.record
    md.item(0, md.tr("export.record.id"), r.id)
    status = (
        md.tr(f"export.record.status_{r.status}") if r.status in ("open", "closed") else r.status
    )
    md.item(0, md.tr("export.record.status"), status)
    mode = name_of("mode", r.mode, md.lang)
    if r.mode == "live" and r.clock_at is not None:
        # a live source read as of an earlier time (--at): what the title bar says
        mode += md.tr("export.paren", text=md.tr("mode.at", at=md.when(r.clock_at)))
    md.item(0, md.tr("export.record.mode"), mode)
    if r.drill is not None:
        md.item(0, md.tr("export.record.drill"), r.drill)
    md.item(0, md.tr("export.record.service"), r.service.describe() or None)
    md.item(0, md.tr("export.record.created"), md.when(r.created_at))
    md.item(0, md.tr("export.record.updated"), md.when(r.updated_at))
    md.item(0, None, md.tr("export.record.times_note", offset=doc.local_offset))
    if set(r.clocks.values()) == {"wall"}:
        md.item(0, None, md.tr("export.clock.all_wall"))
        return
    at = md.when(r.clock_at) if r.clock_at is not None else md.tr("export.clock.recording")
    for kind in CLOCK_KINDS:
        clock = md.tr(f"export.clock.{r.clocks[kind]}", at=at)
        md.item(0, md.tr(f"export.clock_kind.{kind}"), clock)


def _appendix_corrections(md: _Md, doc: ExportDocument, incident: Incident) -> None:
    entries = doc.appendices.corrections
    if not entries:
        md.item(0, None, md.tr("export.corrections.none"))
    for entry in entries:
        md.item(0, None, f"{md.when(entry.at)} {_one_line(entry_line(incident, entry, md.lang))}")


_APPENDICES = (
    ("timeline", _appendix_timeline),
    ("hypotheses", _appendix_hypotheses),
    ("experiments", _appendix_experiments),
    ("path", _appendix_path),
    ("collect_first", _appendix_collect),
    ("playbooks", _appendix_playbooks),
    ("recovery", _appendix_recovery),
    ("record", _appendix_record),
)


def render_markdown(incident: Incident, lang: Lang = "zh", tz: tzinfo | None = None) -> str:
    """The Markdown export: the template, then the appendices; ends with a newline.

    Args:
        incident: The record.
        lang: ``zh`` (default) or ``en``.
        tz: Local zone noted next to the four incident times (default: this machine's).
    """
    doc = build_document(incident, lang, tz)
    md = _Md(lang, tz)
    _template(md, doc)
    for key, render in _APPENDICES:
        md.lines.append("")
        md.lines.append(f"## {md.tr(f'export.appendix.{key}')}")
        md.lines.append("")
        render(md, doc)
    md.lines += ["", f"## {md.tr('export.appendix.corrections')}", ""]
    _appendix_corrections(md, doc, incident)
    # The output boundary of the Markdown export: outside text (names, messages, values
    # pasted into the record) keeps no control character; cockpit's own text has none.
    return neutralise("\n".join(md.lines)) + "\n"


def render(
    incident: Incident, lang: Lang = "zh", fmt: Format = "md", tz: tzinfo | None = None
) -> str:
    """Render in ``fmt`` (``md`` or ``json``); see :func:`render_markdown`, :func:`render_json`.

    Raises:
        ValueError: unknown ``fmt`` or ``lang``.
    """
    if lang not in ("zh", "en"):
        raise ValueError(f"unknown language {lang!r} (zh or en)")
    if fmt == "md":
        return render_markdown(incident, lang, tz)
    if fmt == "json":
        return render_json(incident, lang, tz)
    raise ValueError(f"unknown format {fmt!r} (md or json)")
