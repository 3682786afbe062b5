"""The incident session: every mutation of the incident goes through here and is saved
at once (see :mod:`cockpit.store`). Screens call these methods; they never write files.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import re
import threading
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from cockpit.flow import Branch
from cockpit.incident import (
    ActionItem,
    Change,
    DrillAnswer,
    ErrorSample,
    Evidence,
    Experiment,
    HistoryEntry,
    HistoryOp,
    Hypothesis,
    HypothesisStatus,
    Incident,
    IncidentStatus,
    PagedBy,
    PlaybookRecord,
    RecoveryCheck,
    ServiceScope,
    TimelineEntry,
    TimelineKind,
    alert_event,
)
from cockpit.models import utcnow
from cockpit.store import IncidentStore

if TYPE_CHECKING:
    from cockpit.analysis.changes import ChangeItem

log = logging.getLogger(__name__)

TIME_FIELDS = ("start", "detect", "mitigate", "recover")
RECORDED_CHANGE_KINDS = ("rollout", "helm", "node", "config")
"""Kinds of B's items that are changes to the service or its nodes (the rest — restarts,
Xid, alerts, events — go on the timeline)."""


def entry_text(entry: TimelineEntry, lang: str) -> str:
    """A timeline entry's text as shown: the four incident times (stored as ``start``,
    ``detect``… by :meth:`IncidentSession.set_time`) by their names in ``lang``; any other
    text as it was written."""
    from cockpit.i18n import t

    if entry.kind is TimelineKind.IMPACT and entry.text in TIME_FIELDS:
        return t(f"times.{entry.text}", lang)
    return entry.text_i18n.get(lang, entry.text)


TEXT_FIELDS = frozenset(
    {
        "title",
        "impact",
        "symptoms",
        "slo",
        "root_cause_technical",
        "root_cause_systemic",
        "mitigation",
        "earlier_detection",
        "scope_verdict",
        "alert_rule",
    }
)
COLLECT_TEXT_FIELDS = frozenset({"time_range", "recent_changes_note", "breakdown", "control_group"})
COLLECT_LIST_FIELDS = frozenset({"affected_models", "affected_tenants", "affected_jobs"})

# Words that join two names in the variable field ("batch and max_num_seqs"): one
# experiment changes one variable (seed 000, "一次改变一个变量"). Only the name is read this
# way; the values and the scope ("on pod a, b") are free text.
_MULTI_VARIABLE = re.compile(r"[,;，；、&+]|\band\b|\bplus\b|和|与|以及|同时", re.IGNORECASE)
# Steps that together are one change: cordon + drain isolates one node (kubectl docs:
# drain cordons first), so "cordon+drain gpu-7" changes one variable, the node's load.
_ONE_CHANGE = re.compile(r"\bcordon\s*(?:[+&,，、]|\band\b|和|与|然后)\s*drain\b", re.IGNORECASE)


_ARROW = re.compile(r"→|->|=>")

# "max_num_seqs: 256 → 128, on pod a, b" (or "max_num_seqs = 256 -> 128 在 pod a"): a change
# typed as one sentence, read into its structure.
_CHANGE_SENTENCE = re.compile(
    r"^\s*(?P<name>[^:：=→]+?)\s*[:：=]\s*(?P<old>[^→]+?)\s*(?:→|->|=>)\s*"
    r"(?P<new>[^,，;；]+?)\s*(?:[,，;；]\s*(?P<scope>.*?))?\s*$"
)
_SCOPE_WORD = re.compile(r"^(?:on|in|at|for|在|于|对)\s*", re.IGNORECASE)


def changes_several_values(change: str) -> bool:
    """True when a from→to text changes several values (``"256→128, 0.9→0.85"``)."""
    return len(_ARROW.findall(change)) > 1


def structure_change(text: str) -> tuple[str, str, str, str] | None:
    """A change typed as one sentence, as ``(variable, from, to, scope)``.

    ``"max_num_seqs: 256 → 128, on pod a, b"`` → ``("max_num_seqs", "256", "128",
    "pod a, b")``. ``None`` when the text is not ``NAME: FROM → TO[, SCOPE]``.
    """
    m = _CHANGE_SENTENCE.match(text)
    if m is None:
        return None
    scope = _SCOPE_WORD.sub("", (m.group("scope") or "").strip())
    return (m.group("name").strip(), m.group("old").strip(), m.group("new").strip(), scope)


class RuleViolation(ValueError):
    """A change the handbook's rules refuse; ``key`` is the i18n key of the reason."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


HOLD_TARGET = "recovery.hold_minutes"
BASELINE_TARGET = "opened_with.baseline"
MAX_DRAFT_CHARS = 20_000
"""The longest text kept of one field's draft (:meth:`IncidentSession.keep_drafts`)."""
"""History target of the baseline the screens compare with (C's Alt+O)."""
"""The history's name of step I's hold period."""
DRILL_TARGET = "drill.answer."
"""The history's prefix of a drill's answer parts (``drill.answer.layer``)."""


def check_time_order(times: dict[str, datetime | None]) -> list[str]:
    """Ordering problems of 开始 ≤ 检测 ≤ 缓解 ≤ 恢复, as ``["detect<start", ...]``.

    Only the times that are set are compared. An empty list means the order is valid.
    """
    problems: list[str] = []
    known = [(name, times.get(name)) for name in TIME_FIELDS]
    for i, (a, ta) in enumerate(known):
        if ta is None:
            continue
        for b, tb in known[i + 1 :]:
            if tb is not None and tb < ta:
                problems.append(f"{b}<{a}")
    return problems


def recovery_disagrees(recover: datetime | None, check: RecoveryCheck) -> bool:
    """True when a recovery time is set and step I's recovery check, run at or after it
    (or at an unknown time), found the signals not recovered: the time stands (a
    warning, not a block) and every place that shows it says what the check found."""
    if recover is None or check.recovered is not False:
        return False
    return check.checked_at is None or check.checked_at >= recover


def check_predates(
    check: RecoveryCheck, mitigate: datetime | None, recover: datetime | None
) -> tuple[Literal["mitigate", "recover"], datetime] | None:
    """``("mitigate", mitigate)`` when step I's recovery check ran before the recorded
    mitigation, ``("recover", recover)`` when (after it) before the recorded recovery,
    else None: such a check tells the state at its own time, not whether the change
    worked, and every place that shows its result says so (a replay frozen before the
    mitigation checks at its clock)."""
    at = check.checked_at
    if at is None or check.recovered is None:
        return None
    if mitigate is not None and at < mitigate:
        return "mitigate", mitigate
    if recover is not None and at < recover:
        return "recover", recover
    return None


def names_more_than_one_variable(variable: str) -> bool:
    """True when the variable's name lists several variables (``"batch and max_num_seqs"``,
    ``"batch, kv"``). Only the name: a sentence with its values and scope is read into its
    structure first (:func:`structure_change`)."""
    sentence = structure_change(variable)
    name = sentence[0] if sentence is not None else variable
    return bool(_MULTI_VARIABLE.search(_ONE_CHANGE.sub("isolate", name.strip())))


def experiment_changes_several(experiment: Experiment) -> bool:
    """True when a structured experiment changes more than one variable: its name lists
    several, or a value or the scope holds another ``from → to``."""
    return (
        names_more_than_one_variable(experiment.variable)
        or changes_several_values(experiment.change)
        or any(
            _ARROW.search(part)
            for part in (experiment.from_value, experiment.to_value, experiment.scope)
        )
    )


TYPING_RUN = timedelta(seconds=10)
"""Edits of one field less than this apart, none removing more than one character, are
one history entry (a run of typing); anything that removes more starts a new one, so a
wiped or replaced value is always kept."""

LEDGERS: dict[str, type[BaseModel]] = {
    "hypotheses": Hypothesis,
    "experiments": Experiment,
    "actions": ActionItem,
    "timeline": TimelineEntry,
    "evidence": Evidence,
    "changes": Change,
}
"""The incident's lists whose rows can be edited and deleted, with their row types."""


def _blank(value: Any) -> bool:
    """True for a value the history shows as empty (nothing, blank text, an empty list)."""
    return value is None or value == [] or (isinstance(value, str) and not value.strip())


def _removes_little(old: Any, new: Any) -> bool:
    """True when going from ``old`` to ``new`` removes at most one character."""
    if not isinstance(old, str) or not isinstance(new, str):
        return False
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end = 0
    while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
        end += 1
    return len(old) - start - end <= 1


def _is_time_entry(row: object) -> bool:
    """True for the timeline entry of one of the four incident times (it follows the
    time field: :meth:`IncidentSession.set_time`)."""
    return (
        isinstance(row, TimelineEntry)
        and row.kind is TimelineKind.IMPACT
        and row.text in TIME_FIELDS
    )


def _json(value: Any) -> Any:
    """A row field as the history keeps it (JSON: times as ISO text, enums as values)."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, StrEnum):
        return value.value
    return value


class IncidentSession:
    """Owns one :class:`Incident` and its store; saves after every mutation.

    Args:
        store: Where to persist.
        incident: The incident (new or loaded).
        on_change: Called after each change is saved or queued (the UI refreshes from it).
        background: When true (the TUI), each save snapshots the incident in the calling
            thread (a deep copy, fast) and a single writer thread persists the snapshots in
            order, so the event loop never waits on ``fsync``. :meth:`flush` waits for the
            writer; SIGHUP/SIGTERM handlers and app exit call it. When false (headless
            commands, tests), :meth:`save` writes synchronously.
        on_save_result: Called from the writer thread with the exception when a
            background write fails, and with ``None`` when writing works again (the UI
            says so at once).

    In synchronous mode every mutating method raises the save's error (``OSError``,
    :class:`~cockpit.store.CorruptIncident` …). In background mode the writer never dies:
    any exception is kept in :attr:`last_save_error`, reported at once through
    ``on_save_result``, and the newest state is written again with the next change and
    every :attr:`RETRY_S` seconds until a write succeeds (the file repaired, the disk
    freed), so nothing the user typed is dropped.
    """

    RETRY_S = 2.0
    """Seconds between retries of a failed background write when nothing new comes."""

    def __init__(
        self,
        store: IncidentStore,
        incident: Incident,
        on_change: Callable[[Incident], None] | None = None,
        *,
        background: bool = False,
        on_save_result: Callable[[BaseException | None], None] | None = None,
    ) -> None:
        self.store = store
        self.incident = incident
        self.on_change = on_change
        self.on_save_result = on_save_result
        self._lock = threading.RLock()
        self.last_save_error: BaseException | None = None
        self._queue: queue.Queue[Incident | None] | None = None
        self._writer: threading.Thread | None = None
        self._pending = 0
        self._restoring = False
        self._idle = threading.Condition(self._lock)
        if background:
            self.start_background()

    def start_background(self) -> None:
        """Switch to background saving (the TUI does this after a first synchronous save
        has proved that the state directory is writable)."""
        if self._queue is not None:
            return
        self._queue = queue.Queue()
        self._writer = threading.Thread(
            target=self._write_loop, name="cockpit-incident-writer", daemon=True
        )
        self._writer.start()

    # -- persistence -------------------------------------------------------------------
    def save(self) -> None:
        """Persist the current state (atomic). Raises the store's error on failure (sync
        mode); in background mode it only queues the write."""
        self.incident.updated_at = utcnow()
        if self._queue is not None:
            snapshot = self.incident.model_copy(deep=True)
            with self._lock:
                self._pending += 1
            self._queue.put(snapshot)
        else:
            with self._lock:
                try:
                    self.store.save(self.incident)
                except Exception as exc:
                    self.last_save_error = exc
                    raise
                self.last_save_error = None
        if self.on_change is not None:
            self.on_change(self.incident)

    def _write_loop(self) -> None:
        assert self._queue is not None
        failed: Incident | None = None  # the newest snapshot not yet on disk
        while True:
            try:
                item = self._queue.get(timeout=self.RETRY_S if failed is not None else None)
            except queue.Empty:
                # Nothing new: write the failed snapshot again, unless a flush has saved
                # the newer state meanwhile (under the lock, so it cannot happen between).
                with self._lock:
                    if self.last_save_error is not None and failed is not None:
                        failed = self._write(failed)
                    else:
                        failed = None
                continue
            if item is None:
                return
            # Coalesce: only the newest queued snapshot needs to reach the disk.
            skipped = 0
            with contextlib.suppress(queue.Empty):
                while True:
                    newer = self._queue.get_nowait()
                    if newer is None:
                        self._queue.put(None)
                        break
                    item = newer
                    skipped += 1
            failed = self._write(item)
            with self._lock:
                self._pending -= 1 + skipped
                self._idle.notify_all()

    def _write(self, item: Incident) -> Incident | None:
        """One background write; returns ``item`` when it failed (kept for the retry).
        Never raises: an exception here would end the writer and every later edit."""
        before = self.last_save_error
        try:
            self.store.save(item)
        except Exception as exc:
            self.last_save_error = exc
            if before is None or str(before) != str(exc):
                self._report(exc)
            return item
        self.last_save_error = None
        if before is not None:
            self._report(None)
        return None

    def _report(self, error: BaseException | None) -> None:
        if self.on_save_result is None:
            return
        try:
            self.on_save_result(error)
        except Exception:  # the UI may be gone (exit): the error stays in last_save_error
            log.debug("save result not delivered", exc_info=True)

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every queued save is on disk; True when done within ``timeout``.

        In background mode a failed write is retried once here with the current state.
        """
        if self._queue is None:
            return True
        with self._lock:
            done = self._idle.wait_for(lambda: self._pending <= 0, timeout=timeout)
        if self.last_save_error is not None:
            try:
                with self._lock:
                    self.store.save(self.incident)
                self.last_save_error = None
            except Exception as exc:
                self.last_save_error = exc
                return False
        return done

    def stop(self) -> None:
        """Flush and stop the writer thread (background mode)."""
        self.flush()
        if self._queue is not None and self._writer is not None:
            self._queue.put(None)
            self._writer.join(timeout=5)
            self._queue = None

    # -- template fields ---------------------------------------------------------------
    def set_text(self, field: str, value: str) -> None:
        """Set a free-text template field (``impact``, ``symptoms``, ``slo``, …), keeping
        the value it replaces in the history (a run of typing is one entry)."""
        old = self.get_text(field)
        if field in TEXT_FIELDS:
            setattr(self.incident, field, value)
        elif field in COLLECT_TEXT_FIELDS:
            setattr(self.incident.collect, field, value)
        elif field in COLLECT_LIST_FIELDS:
            items = [p.strip() for p in re.split(r"[,\n，]", value) if p.strip()]
            setattr(self.incident.collect, field, items)
        else:
            raise KeyError(field)
        self._record(field, old, self.get_text(field), typing=True)
        self.save()

    def get_text(self, field: str) -> str:
        """Current value of a text field (lists joined with ``, ``)."""
        if field in TEXT_FIELDS:
            return str(getattr(self.incident, field))
        if field in COLLECT_TEXT_FIELDS:
            return str(getattr(self.incident.collect, field))
        if field in COLLECT_LIST_FIELDS:
            return ", ".join(getattr(self.incident.collect, field))
        raise KeyError(field)

    def set_time(self, which: str, value: datetime | None, source: str = "user") -> list[str]:
        """Set one of start/detect/mitigate/recover (``None`` clears it), with its one
        entry on the timeline; ``source`` is where the value came from, as that entry (and
        the export's timeline) says: ``user`` when typed, ``alert`` when filled from the
        alert that paged or the first alert firing, ``prometheus`` when taken from what
        cockpit read there (A's first SLO breach, I's recovery check).

        Returns:
            Ordering problems after the change (see :func:`check_time_order`). The value
            is stored even when the order is wrong, so the user can fix the other one;
            the UI shows the problems.
        """
        if which not in TIME_FIELDS:
            raise KeyError(which)
        old = getattr(self.incident.times, which)
        self._record(
            f"times.{which}",
            old.isoformat() if old is not None else None,
            value.isoformat() if value is not None else None,
        )
        setattr(self.incident.times, which, value)
        # One timeline entry per incident time: a corrected or cleared time replaces the
        # entry of the old one instead of leaving it behind.
        self.incident.timeline = [
            e for e in self.incident.timeline if not _is_time_entry(e) or e.text != which
        ]
        if value is not None:
            self._timeline(value, TimelineKind.IMPACT, f"{which}", source=source)
        self.save()
        return check_time_order({k: getattr(self.incident.times, k) for k in TIME_FIELDS})

    def start_from_alert(
        self, paged: PagedBy, title: str, scope: ServiceScope, detect: datetime | None
    ) -> list[str]:
        """Fill the incident from the alert that paged: the title, the service scope, the
        detection time (with its timeline entry) and :attr:`Incident.paged_by`; the
        alert's firing is put on the timeline. Title and time keep the values they
        replace in the history.

        Returns:
            Ordering problems of the times after the change (see :meth:`set_time`).
        """
        inc = self.incident
        inc.paged_by = paged
        inc.service = scope
        if title:
            self.set_text("title", title)
        if paged.starts_at is not None:
            self._timeline(
                paged.starts_at,
                TimelineKind.ALERT,
                f"ALERT {paged.name}",
                "alert",
                event=alert_event(paged.name),
            )
        if detect is not None:
            return self.set_time("detect", detect, source="alert")
        self.save()
        return check_time_order({k: getattr(inc.times, k) for k in TIME_FIELDS})

    def add_error_sample(
        self, text: str, request_id: str = "", job_id: str = "", at: datetime | None = None
    ) -> ErrorSample:
        """Add an error sample with its request/job ID, stamped ``at`` (the incident clock:
        the recording's time in replay and demo); the wall clock when not given."""
        sample = ErrorSample(
            text=text, request_id=request_id, job_id=job_id, at=at if at is not None else utcnow()
        )
        self.incident.collect.error_samples.append(sample)
        self.save()
        return sample

    def add_change(self, change: Change) -> Change:
        """Add a recent change (deduplicated on kind+summary+time) and put it on the timeline."""
        for existing in self.incident.changes:
            if (existing.kind, existing.summary, existing.at) == (
                change.kind,
                change.summary,
                change.at,
            ):
                return existing
        self.incident.changes.append(change)
        if change.source == "user":
            self._added("changes", change)
        if change.at is not None:
            self._timeline(
                change.at,
                TimelineKind.CHANGE,
                change.summary,
                change.source,
                text_i18n=change.summary_i18n,
                event=change.event,
            )
        self.save()
        return change

    def record_changes(self, items: Iterable[ChangeItem]) -> dict[str, str]:
        """Put the changes step B lists into the incident's recent changes (最近变更): each
        rollout, Helm release, node or config change in the window, from Kubernetes or
        from the metrics history (a rollout Kubernetes no longer remembers), once. The
        export's "Recent changes" then holds what B shows.

        Returns:
            ``{item key: change id}`` of the changes recorded (or already there).
        """
        out = {}
        for item in items:
            if item.kind in RECORDED_CHANGE_KINDS and item.in_window and item.at is not None:
                out[item.key] = self.add_change(item.to_change()).id
        return out

    def mark_suspect(self, change_id: str, suspect: bool = True) -> None:
        """Mark a change as suspect (or clear the mark)."""
        for change in self.incident.changes:
            if change.id == change_id:
                self._record(f"changes/{change_id}.suspect", change.suspect, suspect)
                change.suspect = suspect
        self.save()

    def pin(self, evidence: Evidence) -> Evidence:
        """Pin a number as evidence (value, unit, time, query) and note it on the timeline.

        Pinning the same observation twice (same label, value, unit, time and query)
        returns the existing entry.
        """
        key = (evidence.label, evidence.value, evidence.unit, evidence.at, evidence.query)
        for existing in self.incident.evidence:
            if (existing.label, existing.value, existing.unit, existing.at, existing.query) == key:
                return existing
        self.incident.evidence.append(evidence)
        self._added("evidence", evidence)
        unit = f" {evidence.unit}" if evidence.unit else ""
        self._timeline(
            evidence.at or utcnow(),
            TimelineKind.EVIDENCE,
            f"{evidence.label} = {evidence.value}{unit}",
            source=evidence.source or "user",
            text_i18n={
                lang: f"{label} = {evidence.value_i18n.get(lang, evidence.value)}{unit}"
                for lang, label in evidence.label_i18n.items()
            },
        )
        self.save()
        return evidence

    def unpin(self, evidence_id: str) -> None:
        """Remove a pinned piece of evidence (and its links from hypotheses); the history
        keeps it, links included, for :meth:`restore`."""
        self.delete_row("evidence", evidence_id)

    def record_mitigation(
        self,
        at: datetime,
        text_i18n: dict[str, str],
        name: dict[str, str],
        lang: str,
        acts: bool = True,
    ) -> str:
        """F2's "I did this": the option and its commands on the timeline at ``at`` (a
        mitigation entry, ``text_i18n`` in each language); for an option that acts on the
        service (``acts``; keeping the evidence does not), ``name`` (the option, in each
        language) becomes the mitigation text when it is still empty, and ``at`` the Mitigate time when that is still empty
        and ``at`` keeps the order of the times the user entered (开始 ≤ 检测 ≤ 缓解 ≤ 恢复):
        an action never overwrites an incident time, nor sets one that contradicts another.

        Returns:
            What became of the Mitigate time: ``"set"`` (it is ``at`` now, the empty value
            kept in the history), ``"kept"`` (it was already set: unchanged), ``"conflict"``
            (``at`` would be out of order with another time: unchanged, still empty) or
            ``""`` (the option does not act on the service).
        """
        self.add_timeline(at, text_i18n[lang], kind=TimelineKind.MITIGATION, text_i18n=text_i18n)
        if not acts:
            return ""
        if not self.incident.mitigation:
            self.incident.mitigation_i18n = dict(name)
            self.set_text("mitigation", name.get(lang) or next(iter(name.values()), ""))
        times = {k: getattr(self.incident.times, k) for k in TIME_FIELDS}
        if times["mitigate"] is not None:
            return "kept"
        if check_time_order({**times, "mitigate": at}) != check_time_order(times):
            return "conflict"
        self.set_time("mitigate", at)
        return "set"

    def add_timeline(
        self,
        at: datetime,
        text: str,
        kind: TimelineKind = TimelineKind.NOTE,
        source: str = "user",
        text_i18n: dict[str, str] | None = None,
        event: str = "",
    ) -> TimelineEntry:
        """Add an entry to the timeline (deduplicated on time+kind+text, and on time+event
        where ``event`` names one: see :meth:`_timeline`); ``text_i18n`` is the text in each
        language when cockpit wrote it."""
        count = len(self.incident.timeline)
        entry = self._timeline(at, kind, text, source, text_i18n, event)
        if len(self.incident.timeline) > count and source == "user":
            self._added("timeline", entry)
        self.save()
        return entry

    def _timeline(
        self,
        at: datetime,
        kind: TimelineKind,
        text: str,
        source: str,
        text_i18n: dict[str, str] | None = None,
        event: str = "",
        row: str = "",
    ) -> TimelineEntry:
        """The entry for ``text`` at ``at``: an event (``event``, e.g. an alert firing) that
        another source already put there at that time is one entry naming both sources.
        An entry derived from a ledger row (``row``) is that row's own."""
        for existing in self.incident.timeline:
            if event and (existing.at, existing.event) == (at, event):
                if kind is TimelineKind.ALERT and existing.kind is not TimelineKind.ALERT:
                    # The row of an alert firing is the alert's, whoever told it first.
                    existing.sources = [existing.source, *existing.sources]
                    existing.source, existing.kind, existing.text = source, kind, text
                    existing.text_i18n = dict(text_i18n or {})
                if source != existing.source and source not in existing.sources:
                    existing.sources.append(source)
                return existing
            if (existing.at, existing.kind, existing.text, existing.row) == (at, kind, text, row):
                return existing
        entry = TimelineEntry(
            at=at,
            kind=kind,
            text=text,
            source=source,
            text_i18n=dict(text_i18n or {}),
            event=event,
            row=row,
        )
        self.incident.timeline.append(entry)
        self.incident.timeline.sort(key=lambda e: e.at)
        return entry

    # -- hypotheses and experiments ------------------------------------------------------
    def add_hypothesis(self, statement: str, falsifier: str) -> Hypothesis:
        """Add a hypothesis. Both the statement and its falsifying observation are required.

        Raises:
            RuleViolation: when ``falsifier`` is empty (a hypothesis that nothing could
                refute is not falsifiable — seed 000, "提出可证伪假设").
        """
        if not statement.strip():
            raise RuleViolation("rules.hypothesis_empty", "statement is empty")
        if not falsifier.strip():
            raise RuleViolation("rules.hypothesis_not_falsifiable", "no falsifying observation")
        hyp = Hypothesis(
            statement=statement.strip(),
            falsifier=falsifier.strip(),
            number=self.incident.highest_number("hypotheses") + 1,
        )
        self.incident.hypotheses.append(hyp)
        self._added("hypotheses", hyp)
        self.save()
        return hyp

    DRILL_ANSWER_PARTS = (
        "layer",
        "scope",
        "suspect_kind",
        "suspect_name",
        "suspect_uuid",
        "cause_class",
        "impact_start",
        "detected_at",
    )
    """What :meth:`set_drill_answer` may set (see :class:`cockpit.incident.DrillAnswer`)."""

    def set_drill_answer(self, step: str, **parts: Any) -> None:
        """Set parts of a drill's structured conclusion, given at ``step`` (G or I).

        Raises:
            RuleViolation: ``drill.not_a_drill`` when the incident is not a drill.
            KeyError: a part that is not one of :data:`DRILL_ANSWER_PARTS`.
        """
        drill = self.incident.drill
        if drill is None:
            raise RuleViolation("drill.not_a_drill", "this incident is not a drill")
        unknown = set(parts) - set(self.DRILL_ANSWER_PARTS)
        if unknown:
            raise KeyError(sorted(unknown)[0])
        before = drill.answer.model_dump(mode="json")
        drill.answer = DrillAnswer.model_validate(
            {**drill.answer.model_dump(), **parts, "step": step}
        )
        after = drill.answer.model_dump(mode="json")
        for part in parts:
            # Each part keeps the value it replaces, as a template field does.
            self._record(f"{DRILL_TARGET}{part}", before.get(part), after.get(part), typing=True)
        self.save()

    def submit_drill_answer(self, step: str) -> None:
        """Hand the drill's conclusion in (the scorecard reads it): stamps the time of
        diagnosis. Handing it in again (after a correction) moves that time.

        Raises:
            RuleViolation: ``drill.not_a_drill``; ``drill.answer_empty`` when no part of the
                conclusion is given.
        """
        drill = self.incident.drill
        if drill is None:
            raise RuleViolation("drill.not_a_drill", "this incident is not a drill")
        a = drill.answer
        if not any(getattr(a, p) for p in self.DRILL_ANSWER_PARTS):
            raise RuleViolation("drill.answer_empty", "no part of the conclusion is given")
        drill.answer = a.model_copy(update={"step": step, "submitted_at": utcnow()})
        self.save()

    def set_hypothesis_status(self, hypothesis_id: str, status: HypothesisStatus) -> None:
        """Move a hypothesis to open / supported / refuted."""
        for hyp in self.incident.hypotheses:
            if hyp.id == hypothesis_id:
                self._record(f"hypotheses/{hyp.id}.status", hyp.status.value, status.value)
                hyp.status = status
        self.save()

    def link_evidence(self, hypothesis_id: str, evidence_id: str) -> None:
        """Link pinned evidence to a hypothesis; the history keeps the links it had (F8
        lists the link, and restoring it takes the link back)."""
        for hyp in self.incident.hypotheses:
            if hyp.id == hypothesis_id and evidence_id not in hyp.evidence_ids:
                before = list(hyp.evidence_ids)
                hyp.evidence_ids.append(evidence_id)
                self._record(f"hypotheses/{hyp.id}.evidence_ids", before, list(hyp.evidence_ids))
        self.save()

    def add_experiment(self, experiment: Experiment) -> Experiment:
        """Log an experiment that changes exactly one variable.

        Raises:
            RuleViolation: ``rules.one_variable`` when ``variable`` names several variables,
                ``rules.experiment_open`` when the previous experiment has no "after" value
                yet (changing a second variable before measuring the first confounds both;
                seed 000, "一次改变一个变量"), ``rules.experiment_empty`` when no variable.
        """
        if not experiment.variable.strip():
            raise RuleViolation("rules.experiment_empty", "no variable")
        if not (experiment.from_value or experiment.to_value or experiment.change):
            sentence = structure_change(experiment.variable)
            if sentence is not None:
                name, old, new, scope = sentence
                experiment = experiment.model_copy(
                    update={
                        "variable": name,
                        "from_value": old,
                        "to_value": new,
                        "scope": experiment.scope or scope,
                    }
                )
        if experiment_changes_several(experiment):
            raise RuleViolation("rules.one_variable", "more than one variable")
        if self.incident.experiments and not self.incident.experiments[-1].after.strip():
            raise RuleViolation("rules.experiment_open", "previous experiment has no result")
        experiment = experiment.model_copy(
            update={"number": self.incident.highest_number("experiments") + 1}
        )
        self.incident.experiments.append(experiment)
        self._timeline(
            experiment.at,
            TimelineKind.EXPERIMENT,
            f"{experiment.variable}: {experiment.change_text()}".strip(": "),
            source="user",
            row=f"experiments/{experiment.id}",
        )
        self._added("experiments", experiment)
        self.save()
        return experiment

    def record_experiment_result(self, experiment_id: str, after: str, note: str = "") -> None:
        """Record the SLI value after the change."""
        for exp in self.incident.experiments:
            if exp.id == experiment_id:
                self._record(f"experiments/{exp.id}.after", exp.after, after)
                exp.after = after
                if note:
                    exp.note = note
        self.save()

    def add_action(self, what: str, owner: str, deadline: str, verification: str) -> ActionItem:
        """Add a long-term action item (owner / deadline / verification)."""
        item = ActionItem(what=what, owner=owner, deadline=deadline, verification=verification)
        self.incident.actions.append(item)
        self._added("actions", item)
        self.save()
        return item

    # -- editing and deleting ledger rows -----------------------------------------------
    def _rows(self, ledger: str) -> list[Any]:
        if ledger not in LEDGERS:
            raise KeyError(ledger)
        rows: list[Any] = getattr(self.incident, ledger)
        return rows

    def _row(self, ledger: str, row_id: str) -> Any:
        for row in self._rows(ledger):
            if row.id == row_id:
                return row
        raise KeyError(f"{ledger}/{row_id}")

    def edit_row(self, ledger: str, row_id: str, **fields: Any) -> None:
        """Change fields of one ledger row (``edit_row("actions", id, owner="li")``); each
        changed field keeps its previous value in the history.

        Raises:
            KeyError: no such ledger, row or field.
            RuleViolation: the edit breaks the ledger's rule (a hypothesis without its
                falsifying observation, an experiment changing several variables).
        """
        row = self._row(ledger, row_id)
        for name in fields:
            if name not in type(row).model_fields or name in ("id", "number"):
                raise KeyError(name)
        edited = type(row).model_validate({**row.model_dump(), **fields})
        if isinstance(edited, Hypothesis):
            if not edited.statement.strip():
                raise RuleViolation("rules.hypothesis_empty", "statement is empty")
            if not edited.falsifier.strip():
                raise RuleViolation("rules.hypothesis_not_falsifiable", "no falsifier")
        if isinstance(edited, Experiment):
            if not edited.variable.strip():
                raise RuleViolation("rules.experiment_empty", "no variable")
            if experiment_changes_several(edited):
                raise RuleViolation("rules.one_variable", "more than one variable")
        if isinstance(edited, ActionItem) and not edited.what.strip():
            raise RuleViolation("act.empty", "no action")
        if _is_time_entry(row):
            raise RuleViolation("history.time_entry", "an incident time's entry")
        derived = self._experiment_entries(row) if isinstance(row, Experiment) else []
        for name, value in fields.items():
            before = getattr(row, name)
            self._record(f"{ledger}/{row_id}.{name}", _json(before), _json(value))
            setattr(row, name, value)
        if isinstance(row, TimelineEntry) and "text" in fields:
            # The user's words now, not the texts cockpit wrote in each language.
            row.text_i18n = {}
        for entry in derived:
            entry.text = f"{row.variable}: {row.change_text()}".strip(": ")
            entry.row = f"experiments/{row.id}"
        if ledger == "timeline":
            self.incident.timeline.sort(key=lambda e: e.at)
        self.save()

    def _experiment_entries(self, experiment: Experiment) -> list[TimelineEntry]:
        """The timeline entry :meth:`add_experiment` wrote for ``experiment``, found by the
        row it is derived from (two experiments logged at the same time have one entry
        each). An entry of a record written before entries named their row is matched by
        its time and text."""
        ref = f"experiments/{experiment.id}"
        text = f"{experiment.variable}: {experiment.change_text()}".strip(": ")
        return [
            e
            for e in self.incident.timeline
            if e.kind is TimelineKind.EXPERIMENT
            and (
                e.row == ref
                or (not e.row and e.at == experiment.at and e.source == "user" and e.text == text)
            )
        ]

    def delete_row(self, ledger: str, row_id: str) -> None:
        """Delete one ledger row; the history keeps it whole (and what hung on it: the
        links to a piece of evidence, an experiment's timeline entry) for :meth:`restore`.

        Raises:
            KeyError: no such ledger or row.
            RuleViolation: the row is an incident time's timeline entry (cleared with the
                time itself).
        """
        rows = self._rows(ledger)
        row = self._row(ledger, row_id)
        if _is_time_entry(row):
            raise RuleViolation("history.time_entry", "an incident time's entry")
        kept: dict[str, Any] = {"row": row.model_dump(mode="json"), "index": rows.index(row)}
        if isinstance(row, Evidence):
            linked = [h.id for h in self.incident.hypotheses if row.id in h.evidence_ids]
            for hyp in self.incident.hypotheses:
                hyp.evidence_ids = [i for i in hyp.evidence_ids if i != row.id]
            kept["links"] = linked
        if isinstance(row, Experiment):
            entries = self._experiment_entries(row)
            self.incident.timeline = [e for e in self.incident.timeline if e not in entries]
            kept["timeline"] = [e.model_dump(mode="json") for e in entries]
        rows.remove(row)
        self._record(f"{ledger}/{row_id}", kept, None, op=HistoryOp.DELETE)
        self.save()

    # -- history -------------------------------------------------------------------------
    def _added(
        self,
        ledger: str,
        row: Hypothesis | Experiment | ActionItem | TimelineEntry | Change | Evidence,
    ) -> None:
        """Keep the addition of ``row`` to ``ledger`` in the history (F8 lists every row
        added, not only the ones edited or deleted later)."""
        self._record(
            f"{ledger}/{row.id}",
            None,
            {"row": row.model_dump(mode="json")},
            op=HistoryOp.ADD,
        )

    def _record(
        self,
        target: str,
        old: Any,
        new: Any,
        op: HistoryOp = HistoryOp.SET,
        *,
        typing: bool = False,
    ) -> None:
        """Keep ``old`` in the history before ``target`` becomes ``new``.

        With ``typing``, an edit of the same field within :data:`TYPING_RUN` of the last
        one that removes at most one character joins that entry (one entry per run of
        typing, its ``old`` the value before the run).
        """
        if op is HistoryOp.SET and (old == new or (_blank(old) and _blank(new))):
            return
        if self._restoring:
            op, typing = HistoryOp.RESTORE, False
        history = self.incident.history
        now = utcnow()
        if typing and history:
            last = history[-1]
            if (
                last.target == target
                and last.op is HistoryOp.SET
                and now - (last.until or last.at) <= TYPING_RUN
                and _removes_little(last.new, new)
            ):
                last.new = new
                last.until = now
                if last.old == new or (_blank(last.old) and _blank(new)):
                    history.pop()  # typed and taken back: nothing changed
                return
        history.append(HistoryEntry(at=now, target=target, op=op, old=old, new=new))

    def restore(self, entry_id: str) -> HistoryEntry:
        """Bring back what a history entry replaced: the value a field had before it, or
        the row it deleted. The restore is itself a history entry, so it can be undone
        the same way.

        Returns:
            The entry restored from.

        Raises:
            KeyError: no such entry.
            RuleViolation: ``history.row_gone`` when the row the field belonged to was
                deleted since (restore the row first), ``history.already_back`` when a
                deleted row is there again.
        """
        entry = next((h for h in self.incident.history if h.id == entry_id), None)
        if entry is None:
            raise KeyError(entry_id)
        self._restoring = True
        try:
            self._restore(entry)
        finally:
            self._restoring = False
        return entry

    def _restore(self, entry: HistoryEntry) -> None:
        target, old = entry.target, entry.old
        if entry.op is HistoryOp.DELETE:
            self._undelete(entry)
            return
        if entry.op is HistoryOp.ADD:
            raise RuleViolation("history.nothing_before", f"{target} was added")
        if target.startswith("times."):
            value = datetime.fromisoformat(old) if isinstance(old, str) else None
            self.set_time(target.removeprefix("times."), value)
        elif target.startswith("notes."):
            self.set_step_note(target.removeprefix("notes."), str(old or ""))
        elif target.startswith(DRILL_TARGET) and self.incident.drill is not None:
            step = self.incident.drill.answer.step or "G"
            self.set_drill_answer(step, **{target.removeprefix(DRILL_TARGET): old})
        elif target == HOLD_TARGET:
            if isinstance(old, int):
                self.set_hold_minutes(old)
        elif target == BASELINE_TARGET:
            self.keep_baseline(str(old or "1d"))
        elif target == "scope_branch":
            self.set_branch(Branch(str(old)) if old else "")
        elif target.startswith("changes/"):
            change_id = target.removeprefix("changes/").removesuffix(".suspect")
            self.mark_suspect(change_id, bool(old))
        elif "/" in target:
            ledger, rest = target.split("/", 1)
            row_id, _, name = rest.partition(".")
            try:
                self.edit_row(ledger, row_id, **{name: old})
            except KeyError as exc:
                raise RuleViolation("history.row_gone", f"{ledger}/{row_id} is gone") from exc
        else:
            self.set_text(target, str(old or ""))

    def _undelete(self, entry: HistoryEntry) -> None:
        ledger, row_id = entry.target.split("/", 1)
        rows = self._rows(ledger)
        if any(r.id == row_id for r in rows):
            raise RuleViolation("history.already_back", f"{entry.target} is there")
        kept = entry.old if isinstance(entry.old, dict) else {}
        row = LEDGERS[ledger].model_validate(kept.get("row"))
        index = kept.get("index")
        rows.insert(index if isinstance(index, int) else len(rows), row)
        links = kept.get("links")
        for hyp in self.incident.hypotheses:
            if isinstance(links, list) and hyp.id in links and row_id not in hyp.evidence_ids:
                hyp.evidence_ids.append(row_id)
        timeline = kept.get("timeline")
        present = {e.id for e in self.incident.timeline}
        for raw in timeline if isinstance(timeline, list) else []:
            back = TimelineEntry.model_validate(raw)
            if back.id not in present:
                self.incident.timeline.append(back)
        self.incident.timeline.sort(key=lambda e: e.at)
        self._record(entry.target, None, kept, op=HistoryOp.RESTORE)
        self.save()

    # -- flow --------------------------------------------------------------------------
    def visit(self, step_id: str) -> None:
        """Record that the user is on ``step_id`` (appended to the path when it changes)."""
        self.incident.current_step = step_id
        if not self.incident.path or self.incident.path[-1] != step_id:
            self.incident.path.append(step_id)
        self.save()

    def set_branch(
        self,
        branch: Branch | Literal[""],
        verdict: str = "",
        verdict_i18n: dict[str, str] | None = None,
    ) -> str:
        """Record the answer at D (``single`` or ``shared``) and the verdict behind it.

        The verdict goes into the "scope verdict" field unless the field holds it already
        (the responder's words added to it are kept); text it replaces is kept in the
        history (F8 puts it back). ``verdict_i18n`` is the verdict in each language, for
        the export (:func:`cockpit.incident.scope_verdict_in`). Returns what happened to
        the field: ``""`` (no verdict given), ``set`` (it was empty), ``kept`` or
        ``replaced``."""
        self._record("scope_branch", self.incident.scope_branch, branch)
        self.incident.scope_branch = branch
        said = ""
        if verdict:
            old = self.incident.scope_verdict
            if verdict.strip() in old:
                said = "kept"
            else:
                said = "replaced" if old.strip() else "set"
                self._record("scope_verdict", old, verdict)
                self.incident.scope_verdict = verdict
            self.incident.scope_verdict_i18n = dict(verdict_i18n or {})
        self.save()
        return said

    def set_step_note(self, step_id: str, note: str) -> None:
        """Free notes for a step (exported with the step)."""
        self._record(
            f"notes.{step_id}", self.incident.step_notes.get(step_id, ""), note, typing=True
        )
        self.incident.step_notes[step_id] = note
        self.save()

    def record_playbook(self, record: PlaybookRecord) -> None:
        """Store what a scenario playbook found (replaces the previous run of it)."""
        self.incident.playbooks[record.playbook] = record
        self.save()

    def set_hold_minutes(self, minutes: int) -> None:
        """Step I's hold period (minutes every recovered signal must stay within its
        baseline), keeping the value it replaces in the history."""
        rec = self.incident.recovery
        self._record(HOLD_TARGET, rec.hold_minutes, minutes)
        rec.hold_minutes = minutes
        self.save()

    def keep_drafts(self, drafts: dict[str, dict[str, str]]) -> None:
        """Keep the text typed into the screens' fields (by step and field id) with the
        incident, so that ``--resume`` puts it back; each text at most
        :data:`MAX_DRAFT_CHARS` characters."""
        kept = {
            step: {fid: text[:MAX_DRAFT_CHARS] for fid, text in fields.items() if text}
            for step, fields in drafts.items()
        }
        kept = {step: fields for step, fields in kept.items() if fields}
        if kept != self.incident.drafts:
            self.incident.drafts = kept
            self.save()

    def keep_baseline(self, kind: str, compared_with: str = "") -> None:
        """The baseline the screens now compare with, so that ``--resume`` reopens the
        incident on it. The switch is kept in the history (F8 can put the previous baseline
        back) with the baseline the screens compared with before it: ``compared_with``
        when the one asked had no data and they fell back to it (the export's
        corrections then say ``quiet → 7d``, not the ``1d → 7d`` no screen showed)."""
        was = self.incident.opened_with.baseline
        if was != kind:
            # A switch to the baseline the screens already fell back to still changes the
            # setting: kept as the setting it replaces, so the history ends where it is.
            replaced = compared_with if compared_with and compared_with != kind else was
            self._record(BASELINE_TARGET, replaced, kind)
            self.incident.opened_with.baseline = kind
            self.save()

    def record_recovery(
        self,
        recovered: bool | None,
        lines: list[str],
        hold_minutes: int,
        at: datetime,
        lines_i18n: dict[str, list[str]] | None = None,
    ) -> None:
        """Store the outcome of step I's recovery check (with the numbers, as lines in the
        UI language, and in each language when given, for the export)."""
        rec = self.incident.recovery
        rec.checked_at = at
        rec.recovered = recovered
        self._record(HOLD_TARGET, rec.hold_minutes, hold_minutes)
        rec.hold_minutes = hold_minutes
        rec.lines = list(lines)
        rec.lines_i18n = {k: list(v) for k, v in (lines_i18n or {}).items()}
        self.save()

    def write_export(self, text: str, lang: str, fmt: str) -> Path:
        """Write a rendered export next to the incident (``exports/<id>.<lang>.<fmt>``,
        atomic, 0600) and return its path.

        Raises:
            UnsafeIncidentPath: that path is a symbolic link (never followed).
            OSError: when the file cannot be written.
        """
        from cockpit.store import write_atomic

        path = Path(self.store.root) / "exports" / f"{self.incident.id}.{lang}.{fmt}"
        return write_atomic(path, text, follow_links=False)

    def close(self) -> None:
        """Mark the incident closed."""
        self.incident.status = IncidentStatus.CLOSED
        self.save()
