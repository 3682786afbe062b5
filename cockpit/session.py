"""The incident session: every mutation of the incident goes through here and is saved
at once (see :mod:`cockpit.store`). Screens call these methods; they never write files.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import re
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from cockpit.incident import (
    ActionItem,
    Change,
    ErrorSample,
    Evidence,
    Experiment,
    Hypothesis,
    HypothesisStatus,
    Incident,
    PlaybookRecord,
    TimelineEntry,
    TimelineKind,
)
from cockpit.models import utcnow
from cockpit.store import IncidentStore

log = logging.getLogger(__name__)

TIME_FIELDS = ("start", "detect", "mitigate", "recover")


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

# Words that join two variables in one experiment ("一次改变一个变量" forbids that).
_MULTI_VARIABLE = re.compile(r"[,;，；、&+]|\band\b|\bplus\b|和|与|以及|同时", re.IGNORECASE)
# Steps that together are one change: cordon + drain isolates one node (kubectl docs:
# drain cordons first), so "cordon+drain gpu-7" changes one variable, the node's load.
_ONE_CHANGE = re.compile(r"\bcordon\s*(?:[+&,，、]|\band\b|和|与|然后)\s*drain\b", re.IGNORECASE)


_ARROW = re.compile(r"→|->|=>")


def changes_several_values(change: str) -> bool:
    """True when a from→to text changes several values (``"256→128, 0.9→0.85"``)."""
    return len(_ARROW.findall(change)) > 1


class RuleViolation(ValueError):
    """A change the handbook's rules refuse; ``key`` is the i18n key of the reason."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


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


def names_more_than_one_variable(variable: str) -> bool:
    """True when ``variable`` names several variables (``"batch and max_num_seqs"``)."""
    return bool(_MULTI_VARIABLE.search(_ONE_CHANGE.sub("isolate", variable.strip())))


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
        """Set a free-text template field (``impact``, ``symptoms``, ``slo``, …)."""
        if field in TEXT_FIELDS:
            setattr(self.incident, field, value)
        elif field in COLLECT_TEXT_FIELDS:
            setattr(self.incident.collect, field, value)
        elif field in COLLECT_LIST_FIELDS:
            items = [p.strip() for p in re.split(r"[,\n，]", value) if p.strip()]
            setattr(self.incident.collect, field, items)
        else:
            raise KeyError(field)
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

    def set_time(self, which: str, value: datetime | None) -> list[str]:
        """Set one of start/detect/mitigate/recover (``None`` clears it), with its one
        entry on the timeline.

        Returns:
            Ordering problems after the change (see :func:`check_time_order`). The value
            is stored even when the order is wrong, so the user can fix the other one;
            the UI shows the problems.
        """
        if which not in TIME_FIELDS:
            raise KeyError(which)
        setattr(self.incident.times, which, value)
        # One timeline entry per incident time: a corrected or cleared time replaces the
        # entry of the old one instead of leaving it behind.
        self.incident.timeline = [
            e
            for e in self.incident.timeline
            if not (e.kind is TimelineKind.IMPACT and e.text == which and e.source == "user")
        ]
        if value is not None:
            self._timeline(value, TimelineKind.IMPACT, f"{which}", source="user")
        self.save()
        return check_time_order({k: getattr(self.incident.times, k) for k in TIME_FIELDS})

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
        if change.at is not None:
            self._timeline(change.at, TimelineKind.CHANGE, change.summary, source=change.source)
        self.save()
        return change

    def mark_suspect(self, change_id: str, suspect: bool = True) -> None:
        """Mark a change as suspect (or clear the mark)."""
        for change in self.incident.changes:
            if change.id == change_id:
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
        unit = f" {evidence.unit}" if evidence.unit else ""
        self._timeline(
            evidence.at or utcnow(),
            TimelineKind.EVIDENCE,
            f"{evidence.label} = {evidence.value}{unit}",
            source=evidence.source or "user",
            text_i18n={
                lang: f"{label} = {evidence.value}{unit}"
                for lang, label in evidence.label_i18n.items()
            },
        )
        self.save()
        return evidence

    def unpin(self, evidence_id: str) -> None:
        """Remove a pinned piece of evidence (and its links from hypotheses)."""
        self.incident.evidence = [e for e in self.incident.evidence if e.id != evidence_id]
        for hyp in self.incident.hypotheses:
            hyp.evidence_ids = [i for i in hyp.evidence_ids if i != evidence_id]
        self.save()

    def add_timeline(
        self,
        at: datetime,
        text: str,
        kind: TimelineKind = TimelineKind.NOTE,
        source: str = "user",
        text_i18n: dict[str, str] | None = None,
    ) -> TimelineEntry:
        """Add an entry to the timeline (deduplicated on time+kind+text); ``text_i18n``
        is the text in each language when cockpit wrote it."""
        entry = self._timeline(at, kind, text, source, text_i18n)
        self.save()
        return entry

    def _timeline(
        self,
        at: datetime,
        kind: TimelineKind,
        text: str,
        source: str,
        text_i18n: dict[str, str] | None = None,
    ) -> TimelineEntry:
        for existing in self.incident.timeline:
            if (existing.at, existing.kind, existing.text) == (at, kind, text):
                return existing
        entry = TimelineEntry(
            at=at, kind=kind, text=text, source=source, text_i18n=dict(text_i18n or {})
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
        hyp = Hypothesis(statement=statement.strip(), falsifier=falsifier.strip())
        self.incident.hypotheses.append(hyp)
        self.save()
        return hyp

    def set_hypothesis_status(self, hypothesis_id: str, status: HypothesisStatus) -> None:
        """Move a hypothesis to open / supported / refuted."""
        for hyp in self.incident.hypotheses:
            if hyp.id == hypothesis_id:
                hyp.status = status
        self.save()

    def link_evidence(self, hypothesis_id: str, evidence_id: str) -> None:
        """Link pinned evidence to a hypothesis."""
        for hyp in self.incident.hypotheses:
            if hyp.id == hypothesis_id and evidence_id not in hyp.evidence_ids:
                hyp.evidence_ids.append(evidence_id)
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
        if names_more_than_one_variable(experiment.variable) or changes_several_values(
            experiment.change
        ):
            raise RuleViolation("rules.one_variable", "more than one variable")
        if self.incident.experiments and not self.incident.experiments[-1].after.strip():
            raise RuleViolation("rules.experiment_open", "previous experiment has no result")
        self.incident.experiments.append(experiment)
        self._timeline(
            experiment.at,
            TimelineKind.EXPERIMENT,
            f"{experiment.variable}: {experiment.change}".strip(": "),
            source="user",
        )
        self.save()
        return experiment

    def record_experiment_result(self, experiment_id: str, after: str, note: str = "") -> None:
        """Record the SLI value after the change."""
        for exp in self.incident.experiments:
            if exp.id == experiment_id:
                exp.after = after
                if note:
                    exp.note = note
        self.save()

    def add_action(self, what: str, owner: str, deadline: str, verification: str) -> ActionItem:
        """Add a long-term action item (owner / deadline / verification)."""
        item = ActionItem(what=what, owner=owner, deadline=deadline, verification=verification)
        self.incident.actions.append(item)
        self.save()
        return item

    # -- flow --------------------------------------------------------------------------
    def visit(self, step_id: str) -> None:
        """Record that the user is on ``step_id`` (appended to the path when it changes)."""
        self.incident.current_step = step_id
        if not self.incident.path or self.incident.path[-1] != step_id:
            self.incident.path.append(step_id)
        self.save()

    def set_branch(self, branch: str, verdict: str = "") -> None:
        """Record the answer at D (``single`` or ``shared``) and the verdict behind it."""
        self.incident.scope_branch = branch
        if verdict:
            self.incident.scope_verdict = verdict
        self.save()

    def set_step_note(self, step_id: str, note: str) -> None:
        """Free notes for a step (exported with the step)."""
        self.incident.step_notes[step_id] = note
        self.save()

    def record_playbook(self, record: PlaybookRecord) -> None:
        """Store what a scenario playbook found (replaces the previous run of it)."""
        self.incident.playbooks[record.playbook] = record
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
        from cockpit.export import write_atomic

        path = Path(self.store.root) / "exports" / f"{self.incident.id}.{lang}.{fmt}"
        return write_atomic(path, text, follow_links=False)

    def close(self) -> None:
        """Mark the incident closed."""
        self.incident.status = "closed"
        self.save()
