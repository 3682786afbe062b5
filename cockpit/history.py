"""The incident's history in words: what each entry changed, named as the screens name it,
and which entries are corrections (a value replaced or cleared, a row deleted or put back).

The entries themselves are written by :class:`cockpit.session.IncidentSession`; the
history screen and the export read them through here, so both say the same.
"""

from __future__ import annotations

import unicodedata
from datetime import datetime

from cockpit.i18n import t
from cockpit.incident import (
    NUMBERED_LEDGERS,
    Change,
    HistoryEntry,
    HistoryOp,
    Incident,
    scope_verdict_in,
)

FIELD_LABELS = {
    "time_range": "field.time_range",
    "affected_models": "field.affected_models",
    "affected_tenants": "field.affected_tenants",
    "affected_jobs": "field.affected_jobs",
    "recent_changes_note": "field.recent_changes_note",
    "breakdown": "field.breakdown",
    "control_group": "field.control_group",
    "title": "field.title",
    "impact": "field.impact",
    "symptoms": "field.symptoms",
    "slo": "field.slo",
    "root_cause_technical": "field.root_cause_technical",
    "root_cause_systemic": "field.root_cause_systemic",
    "mitigation": "field.mitigation",
    "earlier_detection": "field.earlier_detection",
    "scope_verdict": "field.scope_verdict",
    "alert_rule": "history.field.alert_rule",
    "scope_branch": "history.field.scope_branch",
    "recovery.hold_minutes": "verify.hold",
    "opened_with.baseline": "history.field.baseline",
}
"""Template fields by the label their field has on screen."""

ROW_FIELDS = {
    "statement": "hyp.statement",
    "falsifier": "hyp.falsifier",
    "status": "hyp.col.status",
    "evidence_ids": "hyp.col.evidence",
    "variable": "exp.variable",
    "from_value": "exp.from",
    "to_value": "exp.to",
    "scope": "exp.scope",
    "change": "exp.change",
    "sli": "exp.sli",
    "before": "exp.before",
    "after": "exp.after",
    "what": "act.what",
    "owner": "act.owner",
    "deadline": "act.deadline",
    "verification": "act.verification",
    "text": "timeline.text",
    "suspect": "history.field.suspect",
}
"""Fields of ledger rows by their column's label."""

_ROW_TEXT = {
    "hypotheses": "statement",
    "experiments": "variable",
    "actions": "what",
    "timeline": "text",
    "evidence": "label",
    "changes": "summary",
}


def is_correction(entry: HistoryEntry) -> bool:
    """True when ``entry`` replaced or cleared something: a value that was there, a row
    deleted, a row or value put back. Filling an empty field or adding a row is not a
    correction."""
    if entry.op is HistoryOp.ADD:
        return False
    if entry.op is not HistoryOp.SET:
        return True
    return entry.old not in (None, "", False, [])


def corrections(incident: Incident) -> list[HistoryEntry]:
    """The history entries the export lists under "corrected", oldest first."""
    return [h for h in incident.history if is_correction(h)]


def _row_name(incident: Incident, ledger: str, row_id: str, entry: HistoryEntry, lang: str) -> str:
    """``假设 3「碎片化」``: the row's ledger, its stable number where the ledger numbers its
    rows (H3 stays H3 whatever was deleted before it), its text; the row kept in the
    entry names a deleted row the same way. A row's addition names it by the text it was
    added with, whatever it was edited into since."""
    rows = getattr(incident, ledger, None)
    number = ""
    text = ""
    if isinstance(rows, list):
        for row in rows:
            if getattr(row, "id", None) == row_id:
                number = f" {row.number}" if ledger in NUMBERED_LEDGERS else ""
                text = str(getattr(row, _ROW_TEXT.get(ledger, "id"), ""))
                if isinstance(row, Change):
                    text = row.summary_in(lang)  # as B's table names it
    if entry.op is HistoryOp.ADD and isinstance(entry.new, dict):
        added = entry.new.get("row")
        if isinstance(added, dict) and added.get(_ROW_TEXT.get(ledger, "id")):
            text = str(added[_ROW_TEXT.get(ledger, "id")])
    if not text:
        kept = entry.old if isinstance(entry.old, dict) else entry.new
        row = kept.get("row") if isinstance(kept, dict) else None
        if isinstance(row, dict):
            text = str(row.get(_ROW_TEXT.get(ledger, "id"), ""))
            if ledger in NUMBERED_LEDGERS and isinstance(row.get("number"), int):
                number = f" {row['number']}" if row["number"] else ""
    if not number and ledger in NUMBERED_LEDGERS:
        number = _number_in_history(incident, ledger, row_id)
    name = t(f"history.ledger.{ledger}", lang) + number
    if not text:
        return name
    return t("history.row_named", lang, name=name, text=short(text))


def _number_in_history(incident: Incident, ledger: str, row_id: str) -> str:
    """`` 3``: the number a row held, from the history's copy of it (an edit of a row
    deleted since names it as it was numbered); empty when the history has none."""
    for entry in incident.history:
        if entry.target == f"{ledger}/{row_id}":
            for kept in (entry.old, entry.new):
                row = kept.get("row") if isinstance(kept, dict) else None
                if isinstance(row, dict) and isinstance(row.get("number"), int) and row["number"]:
                    return f" {row['number']}"
    return ""


def describe_target(incident: Incident, entry: HistoryEntry, lang: str) -> str:
    """What ``entry`` changed, in ``lang``: ``标题``, ``开始时间``, ``C 的笔记``,
    ``假设 2「碎片化」· 能推翻它的观测``."""
    target = entry.target
    if target.startswith("times."):
        return t(f"times.{target.removeprefix('times.')}", lang)
    if target.startswith("notes."):
        return t("history.field.notes", lang, step=target.removeprefix("notes."))
    if target in FIELD_LABELS:
        return t(FIELD_LABELS[target], lang)
    if target.startswith("drill.answer."):
        part = target.removeprefix("drill.answer.")
        part = "suspect" if part.startswith("suspect_") else part
        return t("drill.form.title", lang) + " · " + t(f"drill.part.{part}", lang)
    if "/" in target:
        ledger, rest = target.split("/", 1)
        row_id, _, name = rest.partition(".")
        row = _row_name(incident, ledger, row_id, entry, lang)
        if not name:
            return row
        return f"{row} · {t(ROW_FIELDS[name], lang) if name in ROW_FIELDS else name}"
    return target


def _cells(ch: str) -> int:
    """Terminal columns of one character (wide CJK characters take two)."""
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def short(text: str, width: int = 40) -> str:
    """``text`` on one line, cut to ``width`` terminal columns with an ellipsis (a Chinese
    character counts two columns)."""
    line = " ".join(str(text).split())
    if sum(_cells(c) for c in line) <= width:
        return line
    out, used = [], 1  # the ellipsis
    for ch in line:
        if used + _cells(ch) > width:
            break
        out.append(ch)
        used += _cells(ch)
    return "".join(out) + "…"


def value_text(value: object, lang: str, width: int = 60) -> str:
    """A value kept in the history as shown: text cut to ``width``, an ISO time as
    ``YYYY-MM-DD HH:MM UTC``, a kept row by its text, nothing as ``（空）``/``(empty)``."""
    from cockpit.timeparse import fmt_time

    if value in (None, "", []):
        return t("history.empty", lang)
    if isinstance(value, bool):
        return t("history.yes" if value else "history.no", lang)
    if isinstance(value, dict):
        row = value.get("row")
        if isinstance(row, dict):
            for key in ("statement", "variable", "what", "text", "label", "summary"):
                if row.get(key):
                    return short(str(row[key]), width)
        return t("history.row", lang)
    if isinstance(value, str):
        try:
            at = datetime.fromisoformat(value)
        except ValueError:
            return short(value, width)
        if at.tzinfo is not None and len(value) >= 19:
            return fmt_time(at)
        return short(value, width)
    return short(str(value), width)


def is_row(target: str) -> bool:
    """Whether a history target is a whole ledger row (``hypotheses/h3``), not a field of
    one (``hypotheses/h3.falsifier``) nor of the incident (``times.detect``)."""
    ledger, sep, rest = target.partition("/")
    return bool(sep and ledger and rest) and "." not in rest


def entry_line(incident: Incident, entry: HistoryEntry, lang: str) -> str:
    """One line: ``标题：「P99 up」→「n」`` / ``删除 假设 2「碎片化」`` / ``恢复 …``."""
    what = describe_target(incident, entry, lang)
    if entry.op is HistoryOp.DELETE:
        return t("history.line.delete", lang, what=what)
    if entry.op is HistoryOp.ADD:
        return t("history.line.add", lang, what=what)
    if entry.op is HistoryOp.RESTORE and entry.old is None and is_row(entry.target):
        return t("history.line.undelete", lang, what=what)
    key = "history.line.restore" if entry.op is HistoryOp.RESTORE else "history.line.set"
    old = _shown(incident, entry, entry.old, lang)
    new = _shown(incident, entry, entry.new, lang)
    if old == new and isinstance(entry.old, str) and isinstance(entry.new, str):
        old, new = around_difference(
            _in_lang(incident, entry, entry.old, lang), _in_lang(incident, entry, entry.new, lang)
        )
    return t(key, lang, what=what, old=old, new=new)


def around_difference(old: str, new: str, width: int = 60) -> tuple[str, str]:
    """``old`` and ``new`` cut to ``width`` columns around where they first differ, so a
    correction never reads the same on both sides (``…13:41-13:50`` → ``…13:41-13:55``)."""
    a, b = " ".join(old.split()), " ".join(new.split())
    first = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    start = max(0, first - width // 3)

    def cut(text: str) -> str:
        part = text[start:]
        return ("…" if start else "") + short(part, width - (1 if start else 0))

    return cut(a), cut(b)


def _evidence_name(incident: Incident, evidence_id: str, lang: str) -> str:
    """A pinned piece of evidence by its label in ``lang`` (the history's copy names one
    unpinned since); its id only when neither knows it."""
    for ev in incident.evidence:
        if ev.id == evidence_id:
            return short(ev.label_i18n.get(lang) or ev.label, 30)
    for entry in incident.history:
        if entry.target == f"evidence/{evidence_id}":
            for kept in (entry.old, entry.new):
                row = kept.get("row") if isinstance(kept, dict) else None
                if isinstance(row, dict) and row.get("label"):
                    labels = row.get("label_i18n")
                    label = labels.get(lang) if isinstance(labels, dict) else None
                    return short(str(label or row["label"]), 30)
    return evidence_id


def _in_lang(incident: Incident, entry: HistoryEntry, value: str, lang: str) -> str:
    """A text value as the reader's language has it: in D's verdict, the words cockpit
    wrote there in ``lang`` (:func:`cockpit.incident.scope_verdict_in`), the responder's
    as typed; any other field's as it is."""
    if entry.target == "scope_verdict":
        return scope_verdict_in(incident, lang, value)
    return value


def _shown(incident: Incident, entry: HistoryEntry, value: object, lang: str) -> str:
    """A value as the screens name it: the answer at D and a hypothesis' status in words
    (``单实例``, ``已推翻``), the evidence linked to a hypothesis by its pins' labels,
    anything else by :func:`value_text`."""
    if entry.target.endswith(".evidence_ids") and isinstance(value, list):
        if not value:
            return t("history.empty", lang)
        names = (_evidence_name(incident, str(i), lang) for i in value)
        return t("history.list_sep", lang).join(
            t("history.quoted", lang, text=name) for name in names
        )
    if entry.target == "opened_with.baseline" and value in ("1d", "7d", "quiet"):
        return t(f"metrics.baseline_kind.{value}", lang)
    if entry.target == "scope_verdict" and isinstance(value, str):
        return value_text(_in_lang(incident, entry, value, lang), lang)
    if entry.target == "scope_branch" and value in ("single", "shared", "release"):
        return t(f"history.branch.{value}", lang)
    if entry.target.endswith(".status") and value in ("open", "supported", "refuted"):
        return t(f"hyp.status.{value}", lang)
    return value_text(value, lang)
