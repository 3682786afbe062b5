"""The incident record: the single source of truth for what the user did and found.

Every field of the handbook's minimal incident template (seed ``000_98f0f2273dcebb14.txt``,
"事故记录最小模板") has a home here, and so has everything the flow collects on the way
(the "先收集" list, hypotheses, experiments, the path through the flowchart). The export
renders from this model alone. Persistence lives in :mod:`cockpit.store`; mutation goes
through :class:`cockpit.session.IncidentSession`, which saves after every change.
"""

from __future__ import annotations

import secrets
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from cockpit.flow import Branch
from cockpit.models import utcnow

SCHEMA_VERSION = 2
"""2: experiments hold ``from_value``/``to_value``/``scope``; the incident keeps a ``history``.
A version-1 file loads as is (see :meth:`Experiment._structure_old_change`)."""


def new_id(prefix: str = "") -> str:
    """A short random identifier (12 hex chars), optionally prefixed."""
    return f"{prefix}{secrets.token_hex(6)}"


class _Model(BaseModel):
    model_config = ConfigDict(validate_assignment=True, extra="forbid")


class ServiceScope(_Model):
    """The service under investigation.

    Attributes:
        namespace: Kubernetes namespace.
        selector: Label selector of its pods (``app=llm``).
        deployment: Deployment/StatefulSet name, when known.
        model: Served model name (the ``model_name`` label of vLLM metrics, say).
    """

    namespace: str = ""
    selector: str = ""
    deployment: str = ""
    model: str = ""

    def describe(self) -> str:
        """One-line description for headers and the export."""
        parts = [p for p in (self.namespace, self.deployment or self.selector, self.model) if p]
        return " / ".join(parts)


class OpenedWith(_Model):
    """How the incident was opened: its investigation clock and its sources, so that
    ``--resume`` reopens it exactly as it was (a flag given on resume overrides one).

    Attributes:
        at: The time investigated as of (``--at``, resolved to UTC); ``None`` when live.
        prometheus_url: The Prometheus query API, without user, password, query string
            or fragment (secrets are never kept); empty when none was used.
        kube_context: The kubeconfig context; empty for the default.
        kubeconfig: The kubeconfig file; empty for the default.
        baseline: The baseline the screens compared with (``1d``, ``7d``, ``quiet``; empty
            before it was kept: the configured one).
    """

    at: datetime | None = None
    prometheus_url: str = ""
    kube_context: str = ""
    kubeconfig: str = ""
    baseline: str = ""


class PagedBy(_Model):
    """The alert the incident was started from (``cockpit --alert``, the alert picker).

    Attributes:
        name: ``alertname``.
        fingerprint: Alertmanager's fingerprint of its labels (16 hex digits).
        source: ``alertmanager`` or ``prometheus``.
        state: ``firing``, ``pending`` or ``resolved`` when it was chosen.
        starts_at: When it started firing (UTC), ``None`` when unknown.
        expr: Its rule's PromQL expression (the paged SLI), empty when unknown.
        sli: The golden signal that expression measures (``serving.e2e_latency:p99``),
            empty when it is none of them.
        pod, node: The pod and node its labels name.
        silences: The silences muting it (``createdBy: comment``); empty when none.
        silenced: Muted by a silence when it was chosen.
        inhibited: Inhibited by another alert when it was chosen.
        labels: Its labels (outside text, secrets masked).
    """

    name: str
    fingerprint: str = ""
    source: str = ""
    state: str = ""
    starts_at: datetime | None = None
    expr: str = ""
    sli: str = ""
    pod: str = ""
    node: str = ""
    silences: list[str] = Field(default_factory=list)
    silenced: bool = False
    inhibited: bool = False
    labels: dict[str, str] = Field(default_factory=dict)

    def sli_text(self, lang: str) -> str:
        """The golden signal it measures, in ``lang``, or why there is none: it measures
        none of them, or its expression is unknown (A's banner and the notice of what
        choosing it filled say the same)."""
        from cockpit.i18n import t
        from cockpit.models.messages import signal_label

        if self.sli:
            return t("alerts.sli", lang, name=signal_label(self.sli, lang))
        return t("alerts.no_sli" if self.expr else "alerts.sli_unknown", lang)

    def parts(self, lang: str) -> list[str]:
        """What to say of it, in ``lang``: name and state, when it started firing, its
        silences and inhibition when muted, then — always the last two — the golden
        signal it measures and its expression."""
        from cockpit.i18n import t

        state = t(f"alerts.state.{self.state}", lang) if self.state else "—"
        out = [f"{self.name} ({state})"]
        if self.starts_at is not None:
            out.append(t("alerts.since", lang, at=f"{self.starts_at:%Y-%m-%d %H:%M:%SZ}"))
        if self.silenced:
            out.append(t("alerts.silenced_by", lang, notes="; ".join(self.silences) or "—"))
        if self.inhibited:
            out.append(t("alerts.inhibited", lang))
        out.append(self.sli_text(lang))
        out.append(
            t("alerts.expr", lang, expr=self.expr) if self.expr else t("alerts.no_expr", lang)
        )
        return out


class IncidentTimes(_Model):
    """开始 / 检测 / 缓解 / 恢复时间 (all aware UTC; ``None`` = not yet known).

    They must be ordered start ≤ detect ≤ mitigate ≤ recover; see
    :func:`cockpit.session.check_time_order`.
    """

    start: datetime | None = None
    detect: datetime | None = None
    mitigate: datetime | None = None
    recover: datetime | None = None


class ErrorSample(_Model):
    """An error sample with its request/job ID (先收集: 错误样本与 request/job ID)."""

    id: str = Field(default_factory=lambda: new_id("err-"))
    text: str
    request_id: str = ""
    job_id: str = ""
    at: datetime | None = None


class CollectFirst(_Model):
    """The handbook's "先收集" list, as fields.

    Attributes:
        time_range: 时间范围, free text (the times themselves live in ``times``).
        affected_models / affected_tenants / affected_jobs: 受影响模型/租户/作业.
        error_samples: 错误样本与 request/job ID.
        recent_changes_note: 代码、模型、配置、镜像、驱动或节点最近变更 (free text).
        breakdown: 请求/step 分解、队列、GPU、网络、存储与 Kubernetes events.
        control_group: 健康对照组 (same-version replicas, other GPUs on the node, old version).
    """

    time_range: str = ""
    affected_models: list[str] = Field(default_factory=list)
    affected_tenants: list[str] = Field(default_factory=list)
    affected_jobs: list[str] = Field(default_factory=list)
    error_samples: list[ErrorSample] = Field(default_factory=list)
    recent_changes_note: str = ""
    breakdown: str = ""
    control_group: str = ""


class Change(_Model):
    """A recent change (最近变更), from Kubernetes, Helm, nodes, config or the user."""

    id: str = Field(default_factory=lambda: new_id("chg-"))
    at: datetime | None = None
    kind: str = "manual"  # rollout | helm | node | config | driver | manual, or a history
    # item's kind (xid, restart, readiness, allocatable, stopped, alert…): named by chg.kind.*
    summary: str
    detail: str = ""
    source: str = "user"
    suspect: bool = False
    event: str = ""
    """The event key of what it records when other sources tell it too
    (:attr:`TimelineEntry.event`); empty otherwise."""
    summary_i18n: dict[str, str] = Field(default_factory=dict)
    """``summary`` in each language (``{"zh": …, "en": …}``) when cockpit wrote it in words
    of its own (a rollout read from the metrics history), so the export speaks its own
    language; empty for what the user typed and for text read from the cluster."""

    def summary_in(self, lang: str) -> str:
        """The summary in ``lang`` where cockpit wrote it and it still reads as written
        (an edit makes it the responder's words), else as it is stored."""
        if self.summary in self.summary_i18n.values():
            return self.summary_i18n.get(lang, self.summary)
        return self.summary

    def in_lang(self, lang: str) -> Change:
        """A copy whose ``summary`` is in ``lang`` (:meth:`summary_in`)."""
        return self.model_copy(update={"summary": self.summary_in(lang)})


class Evidence(_Model):
    """A pinned observation (关键证据): a number with its unit, time and the query behind it."""

    id: str = Field(default_factory=lambda: new_id("ev-"))
    label: str
    value: str
    unit: str = ""
    at: datetime | None = None
    query: str = ""
    source: str = ""
    step: str = ""
    note: str = ""
    what: str = ""
    """What it shows, when cockpit pinned it: a canonical signal id
    (``runtime.fragmentation``, :data:`cockpit.models.signals.SIGNALS`) or the kind of a
    pasted or layered-log finding (``cuda_oom``, ``xid``, ``access_errors``…); empty for a
    note. A drill's scorecard matches
    it against the decisive evidence of the answer key."""
    pinned_at: datetime = Field(default_factory=utcnow)
    label_i18n: dict[str, str] = Field(default_factory=dict)
    """``label`` in each language when cockpit wrote it (``{"zh": …, "en": …}``), so the
    export speaks its own language; empty for what the user typed."""
    note_i18n: dict[str, str] = Field(default_factory=dict)
    """``note`` in each language when cockpit wrote it (see :attr:`label_i18n`)."""
    value_i18n: dict[str, str] = Field(default_factory=dict)
    """``value`` in each language when it is words cockpit wrote rather than a number (an
    Xid seen in the window, a series that stopped, a pasted finding's verdict); empty for
    a number."""

    def in_lang(self, lang: str) -> Evidence:
        """A copy whose ``label``, ``value`` and ``note`` are in ``lang`` where cockpit
        wrote them."""
        return self.model_copy(
            update={
                "label": self.label_i18n.get(lang, self.label),
                "value": self.value_i18n.get(lang, self.value),
                "note": self.note_i18n.get(lang, self.note),
            }
        )


class Mode(StrEnum):
    """Where an incident's data comes from."""

    LIVE = "live"
    REPLAY = "replay"
    DEMO = "demo"
    RECORD = "record"
    """``cockpit record``: a headless run teeing the live sources into a bundle."""


class IncidentStatus(StrEnum):
    """Whether an incident is still being worked on."""

    OPEN = "open"
    CLOSED = "closed"


class ItemStatus(StrEnum):
    """Outcome of one playbook checklist item."""

    OK = "ok"
    PROBLEM = "problem"
    OPEN = "open"
    NA = "n/a"
    NOT_AVAILABLE = "not_available"


class TimelineKind(StrEnum):
    """What a timeline entry records."""

    IMPACT = "impact"
    ALERT = "alert"
    CHANGE = "change"
    EVENT = "event"
    XID = "xid"
    MITIGATION = "mitigation"
    NOTE = "note"
    EXPERIMENT = "experiment"
    EVIDENCE = "evidence"
    STEP = "step"


LOGGED_KINDS = frozenset({TimelineKind.MITIGATION, TimelineKind.NOTE, TimelineKind.EXPERIMENT})
"""The timeline entries the responder logs as they do something (an F2 action, a note, an
experiment): stamped when they are logged (:meth:`cockpit.clock.Clock.logged`), unlike
evidence, which is stamped with the time it reads."""


class TimelineEntry(_Model):
    """One point of the incident timeline."""

    id: str = Field(default_factory=lambda: new_id("tl-"))
    at: datetime
    kind: TimelineKind = TimelineKind.NOTE
    text: str
    source: str = "user"
    text_i18n: dict[str, str] = Field(default_factory=dict)
    """``text`` in each language when cockpit wrote it (a pinned value, a mitigation
    chosen in F2), so the export speaks its own language; empty for what the user typed."""
    event: str = ""
    """What happened, when several sources can tell it (:func:`alert_event`): one event at
    one time is one entry; empty for an entry only its source tells."""
    sources: list[str] = Field(default_factory=list)
    """The other sources that told the same event (``source`` told it first)."""
    row: str = ""
    """The ledger row this entry is derived from (``experiments/<id>``): its text follows
    the row's edits, it goes with the row's deletion and comes back with it; empty for an
    entry of its own."""


def alert_event(name: str) -> str:
    """The event key of an alert firing (:attr:`TimelineEntry.event`): the alert that
    paged, the alerts A found in ``ALERTS`` and B's alert items name it alike."""
    return f"alert:{name}"


class HypothesisStatus(StrEnum):
    """Ledger status of a hypothesis."""

    OPEN = "open"
    SUPPORTED = "supported"
    REFUTED = "refuted"


class Hypothesis(_Model):
    """A falsifiable hypothesis (提出可证伪假设).

    Attributes:
        statement: What we believe.
        falsifier: The observation that would prove it wrong.
        evidence_ids: Linked :class:`Evidence` ids.
        status: open / supported / refuted.
    """

    id: str = Field(default_factory=lambda: new_id("hyp-"))
    number: int = 0
    """Its number in the ledger (H3), given when it is added and never reused or changed:
    H3 stays H3 after H2 is deleted (:func:`number_rows`); 0 until numbered."""
    statement: str
    falsifier: str
    evidence_ids: list[str] = Field(default_factory=list)
    status: HypothesisStatus = HypothesisStatus.OPEN
    created_at: datetime = Field(default_factory=utcnow)


ARROWS = ("→", "->", "=>")
"""What separates the value before from the value after in a change typed as text."""


def split_from_to(change: str) -> tuple[str, str] | None:
    """``"256 → 128"`` as ``("256", "128")``; ``None`` unless the text has exactly one
    arrow with a value on each side."""
    text = change.strip()
    for arrow in ARROWS:
        if text.count(arrow) == 1 and sum(text.count(a) for a in ARROWS) == 1:
            before, after = (p.strip() for p in text.split(arrow))
            return (before, after) if before and after else None
    return None


class Experiment(_Model):
    """One step of "一次改变一个变量": exactly one variable changed, with the SLI before/after.

    The change is structured: one ``variable`` goes ``from_value`` → ``to_value`` on
    ``scope``; that is what makes it one variable (see
    :meth:`cockpit.session.IncidentSession.add_experiment`), whatever punctuation the
    values or the scope hold.

    Attributes:
        variable: The single variable changed (``max_num_seqs``, ``node gpu-7 cordoned``…).
        from_value / to_value: Its value before and after the change (``256`` / ``128``).
        scope: Where it was changed (``pod a, b``; empty = everywhere the service runs).
        change: Free text of the change, for records written before it was structured
            (a lone ``from → to`` there is moved into ``from_value``/``to_value`` on load).
        sli: The SLI watched (label).
        before / after: Its values, as text with unit (``"620 ms"``).
        hypothesis_id: The hypothesis this tests, if any.
    """

    id: str = Field(default_factory=lambda: new_id("exp-"))
    number: int = 0
    """Its number in the ledger (E2), given when it is added and never reused or changed
    (:func:`number_rows`); 0 until numbered."""
    at: datetime = Field(default_factory=utcnow)
    variable: str
    from_value: str = ""
    to_value: str = ""
    scope: str = ""
    change: str = ""
    sli: str = ""
    before: str = ""
    after: str = ""
    hypothesis_id: str = ""
    note: str = ""

    @model_validator(mode="before")
    @classmethod
    def _structure_old_change(cls, data: Any) -> Any:
        """Records of schema 1 held the change as one text (``"256 → 128"``)."""
        if isinstance(data, dict) and not data.get("from_value") and not data.get("to_value"):
            pair = split_from_to(str(data.get("change") or ""))
            if pair is not None:
                data = {**data, "from_value": pair[0], "to_value": pair[1], "change": ""}
        return data

    def change_text(self) -> str:
        """The change in words: ``256 → 128 (pod a, b)``, or the old free text."""
        text = f"{self.from_value} → {self.to_value}" if self.from_value or self.to_value else ""
        text = text or self.change
        if self.scope:
            text = f"{text} ({self.scope})" if text else self.scope
        return text


class ActionItem(_Model):
    """长期行动项 (owner / deadline / 验证方式)."""

    id: str = Field(default_factory=lambda: new_id("act-"))
    what: str
    owner: str = ""
    deadline: str = ""
    verification: str = ""


class RecoveryCheck(_Model):
    """Result of step I: every anomalous signal back within baseline for ``hold_minutes``."""

    checked_at: datetime | None = None
    hold_minutes: int = 15
    recovered: bool | None = None
    lines: list[str] = Field(default_factory=list)
    lines_i18n: dict[str, list[str]] = Field(default_factory=dict)
    """``lines`` in each language (``{"zh": [...], "en": [...]}``), for the export."""

    def in_lang(self, lang: str) -> RecoveryCheck:
        """A copy whose ``lines`` are in ``lang`` when they were stored in both."""
        return self.model_copy(update={"lines": list(self.lines_i18n.get(lang, self.lines))})


class PlaybookItemResult(_Model):
    """One checklist item of a scenario playbook, checked automatically or by the user.

    Attributes:
        item: The checklist item's text, in the language it was recorded in.
        status: What the check found.
        finding: What it saw, in that language (empty when nothing).
        evidence_ids: The pins it made.
        item_i18n, finding_i18n: ``item`` and ``finding`` in each language
            (``{"zh": …, "en": …}``), so the export speaks its own; empty in a record
            written before they were kept (the export then shows the stored text).
    """

    item: str
    status: ItemStatus = ItemStatus.OPEN
    finding: str = ""
    evidence_ids: list[str] = Field(default_factory=list)
    item_i18n: dict[str, str] = Field(default_factory=dict)
    finding_i18n: dict[str, str] = Field(default_factory=dict)

    def in_lang(self, lang: str) -> PlaybookItemResult:
        """A copy whose ``item`` and ``finding`` are in ``lang`` where both were kept."""
        return self.model_copy(
            update={
                "item": self.item_i18n.get(lang, self.item),
                "finding": self.finding_i18n.get(lang, self.finding),
            }
        )


class PlaybookRecord(_Model):
    """What a scenario playbook found (lands in the export).

    Attributes:
        playbook: The playbook's id (``ttft_spike``).
        items: One result per checklist item, in the checklist's order.
        summary: ``<title>: <counts>``, in the language it was recorded in.
        summary_i18n: ``summary`` in each language (empty in an older record).
        updated_at: When it was recorded.
    """

    playbook: str
    items: list[PlaybookItemResult] = Field(default_factory=list)
    summary: str = ""
    summary_i18n: dict[str, str] = Field(default_factory=dict)
    updated_at: datetime = Field(default_factory=utcnow)

    def in_lang(self, lang: str) -> PlaybookRecord:
        """A copy whose summary and items are in ``lang`` where both were kept."""
        return self.model_copy(
            update={
                "summary": self.summary_i18n.get(lang, self.summary),
                "items": [item.in_lang(lang) for item in self.items],
            }
        )


class DrillAnswer(_Model):
    """The trainee's conclusion of a drill, in the answer key's terms
    (:class:`cockpit.drills.key.AnswerKey`); empty / ``None`` = not answered yet.

    Attributes:
        layer: The primary layer (``access`` … ``infrastructure``).
        scope: The answer at D: ``single`` or ``shared``.
        suspect_kind, suspect_name, suspect_uuid: The suspect chosen from the bundle's
            inventory (a GPU is ``node/index`` with its UUID).
        cause_class: A cause id of ``cockpit/knowledge/causes.toml``.
        impact_start, detected_at: When the impact began and when it was detected (UTC).
        step: The step where it was last changed (``G`` or ``I``).
        submitted_at: When the trainee said "this is my diagnosis" (wall clock, UTC);
            ``None`` while still a draft.
    """

    layer: str = ""
    scope: Branch | Literal[""] = ""
    suspect_kind: str = ""
    suspect_name: str = ""
    suspect_uuid: str = ""
    cause_class: str = ""
    impact_start: datetime | None = None
    detected_at: datetime | None = None
    step: str = ""
    submitted_at: datetime | None = None


class DrillRun(_Model):
    """An incident opened as a drill (``cockpit drill NAME``).

    Attributes:
        id: The drill's id (its answer key stays in the package, never in the record).
        started_at: When the drill was opened (wall clock, UTC): time to diagnosis counts
            from here to :attr:`DrillAnswer.submitted_at`.
        answer: The trainee's structured conclusion.
    """

    id: str
    started_at: datetime = Field(default_factory=utcnow)
    answer: DrillAnswer = Field(default_factory=DrillAnswer)


class HistoryOp(StrEnum):
    """What a :class:`HistoryEntry` records."""

    SET = "set"
    """A field was given another value (``old`` → ``new``)."""
    DELETE = "delete"
    """A ledger row was deleted (``old`` is the whole row, ``new`` is ``None``)."""
    RESTORE = "restore"
    """A deleted row was put back, or a field got an earlier value back from the history."""
    ADD = "add"
    """A ledger row was added (``old`` is ``None``, ``new`` is the row as a JSON object)."""


class HistoryEntry(_Model):
    """One change of the incident with the value it replaced, so that nothing typed over,
    cleared or deleted is lost: the history screen restores it, the export lists it.

    Attributes:
        at: When the change was made (wall clock, UTC).
        target: What changed: a template field (``title``, ``collect.breakdown``,
            ``times.start``, ``notes.C``) or a ledger row (``hypotheses/<id>``,
            ``hypotheses/<id>.falsifier``, ``actions/<id>``, ``timeline/<id>``…).
        op: set / delete / restore / add.
        old: The value before (a string, an ISO time, or a deleted row as a JSON object;
            ``None`` when there was none).
        new: The value after (``None`` for a deletion).
        until: When the last keystroke folded into this entry landed: a run of typing in
            one field is one entry (see :meth:`cockpit.session.IncidentSession.set_text`).
    """

    id: str = Field(default_factory=lambda: new_id("h-"))
    at: datetime = Field(default_factory=utcnow)
    target: str
    op: HistoryOp = HistoryOp.SET
    old: JsonValue = None
    new: JsonValue = None
    until: datetime | None = None


NUMBERED_LEDGERS = ("hypotheses", "experiments")
"""The ledgers whose rows carry a stable number (H1, E2) that every rendering shows."""


def number_rows(rows: list[Any], used: int = 0) -> None:
    """Give each row of a numbered ledger still without a number (0) the next one after the
    highest in use (``used``: the highest a deleted row held), in list order. Numbers
    already given are kept, so a deletion never renumbers the rows after it."""
    top = max([used, *(r.number for r in rows)])
    for row in rows:
        if not row.number:
            top += 1
            row.number = top


def mitigation_in(incident: Incident, lang: str) -> str:
    """The incident's mitigation text in ``lang`` where cockpit wrote it (and nobody has
    edited it since), else as it was typed."""
    if incident.mitigation in incident.mitigation_i18n.values():
        return incident.mitigation_i18n.get(lang, incident.mitigation)
    return incident.mitigation


def scope_verdict_in(incident: Incident, lang: str, text: str | None = None) -> str:
    """The incident's scope verdict (or ``text``, a value the field held: the history's
    copy of one replaced) with the text cockpit wrote at D in ``lang`` where it still
    holds that text as written (words the responder added before or after it stay as
    typed), else as it was typed."""
    if text is None:
        text = incident.scope_verdict
    for written in incident.scope_verdict_i18n.values():
        if written and written in text:
            return text.replace(written, incident.scope_verdict_i18n.get(lang, written), 1)
    return text


class Incident(_Model):
    """The whole incident. Field order follows the handbook's template where it can.

    Template fields (in the export's order): ``title``, ``impact``, ``times``,
    ``symptoms`` + ``slo``, ``changes``, ``evidence``, ``root_cause_technical`` +
    ``root_cause_systemic``, ``mitigation``, ``actions``, ``earlier_detection``.
    """

    schema_version: int = SCHEMA_VERSION
    id: str = Field(default_factory=lambda: new_id("inc-"))
    title: str = ""
    status: IncidentStatus = IncidentStatus.OPEN
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    mode: Mode = Mode.LIVE
    bundle: str = ""
    """The evidence bundle a replay incident was opened on (``--resume`` reopens it)."""
    opened_with: OpenedWith = Field(default_factory=OpenedWith)
    """The investigation clock and sources it was opened with (``--resume`` reuses them)."""
    drafts: dict[str, dict[str, str]] = Field(default_factory=dict)
    """Text typed into the step screens' fields when cockpit was closed, by step and field
    id (a hypothesis not yet added, say): ``--resume`` puts it back in its field."""
    drill: DrillRun | None = None
    """Set when the incident is a drill (a replayed incident with an answer key)."""
    lang: str = "zh"
    service: ServiceScope = Field(default_factory=ServiceScope)
    paged_by: PagedBy | None = None
    """The alert the incident started from; ``None`` when it was opened blank."""

    impact: str = ""
    times: IncidentTimes = Field(default_factory=IncidentTimes)
    symptoms: str = ""
    slo: str = ""
    changes: list[Change] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    root_cause_technical: str = ""
    root_cause_systemic: str = ""
    mitigation: str = ""
    mitigation_i18n: dict[str, str] = Field(default_factory=dict)
    """``mitigation`` in each language when cockpit wrote it (F2's option taken): the
    export speaks its own language while the text is still the one cockpit wrote."""
    actions: list[ActionItem] = Field(default_factory=list)
    earlier_detection: str = ""

    collect: CollectFirst = Field(default_factory=CollectFirst)
    timeline: list[TimelineEntry] = Field(default_factory=list)
    hypotheses: list[Hypothesis] = Field(default_factory=list)
    experiments: list[Experiment] = Field(default_factory=list)
    recovery: RecoveryCheck = Field(default_factory=RecoveryCheck)
    playbooks: dict[str, PlaybookRecord] = Field(default_factory=dict)

    path: list[str] = Field(default_factory=list)
    current_step: str = "A"
    scope_branch: Branch | Literal[""] = ""
    """The answer at D (single instance/node or shared); empty until answered."""
    scope_verdict: str = ""
    scope_verdict_i18n: dict[str, str] = Field(default_factory=dict)
    """The verdict cockpit wrote into ``scope_verdict`` at D (Accept verdict), in each
    language: the export speaks its own language for that text while the field still
    holds it, the responder's words around it kept as typed (:func:`scope_verdict_in`)."""
    step_notes: dict[str, str] = Field(default_factory=dict)
    alert_rule: str = ""
    history: list[HistoryEntry] = Field(default_factory=list)
    """Every change with the value it replaced, oldest first (see :class:`HistoryEntry`)."""

    def last_logged(self) -> datetime | None:
        """When the responder last logged an entry (:data:`LOGGED_KINDS`), ``None`` before
        the first."""
        times = [e.at for e in self.timeline if e.kind in LOGGED_KINDS and e.source == "user"] + [
            e.at for e in self.experiments
        ]
        return max(times, default=None)

    def highest_number(self, ledger: str) -> int:
        """The highest number a row of ``ledger`` ever held, deleted rows included (the
        history keeps them), so a new row never takes a deleted one's number."""
        top: int = max([0, *(int(r.number) for r in getattr(self, ledger))])
        for entry in self.history:
            if entry.target.startswith(f"{ledger}/"):
                for kept in (entry.old, entry.new):
                    row = kept.get("row") if isinstance(kept, dict) else None
                    number = row.get("number") if isinstance(row, dict) else None
                    if isinstance(number, int):
                        top = max(top, number)
        return top

    @model_validator(mode="after")
    def _number_old_rows(self) -> Incident:
        """Records written before rows were numbered get their numbers in list order."""
        for ledger in NUMBERED_LEDGERS:
            rows = getattr(self, ledger)
            if any(not r.number for r in rows):
                number_rows(rows, self.highest_number(ledger))
        return self
