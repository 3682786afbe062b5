"""Words for playbook results, and their incident-record forms (pure)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from cockpit.analysis.playbooks.result import CheckEvidence, ItemResult
from cockpit.analysis.playbooks.spec import Playbook
from cockpit.commandline import fill
from cockpit.i18n import catalog, in_both, t
from cockpit.incident import Evidence, ItemStatus, PlaybookItemResult, PlaybookRecord

_STATUS_KEY = {
    ItemStatus.OK: "playbook.status.ok",
    ItemStatus.PROBLEM: "playbook.status.problem",
    ItemStatus.OPEN: "playbook.status.open",
    ItemStatus.NA: "playbook.status.na",
    ItemStatus.NOT_AVAILABLE: "playbook.status.not_available",
}
_ID_ARGS: dict[str, tuple[str, ...]] = {
    "mitigations": ("explain.mitigate.cuda_oom",),
    "long_term": ("explain.longterm",),
    "cause": ("explain.cause.engine_log",),
    "signals": ("playbook.signal",),
    "what": ("playbook.signal", "playbook.release_cause"),
    "likely": ("playbook.oom_class", "kube.likely"),
    "classes": ("playbook.oom_class",),
    "stage": ("playbook.oom_stage",),
    "kind": ("playbook.nccl_error",),
    "pattern": ("playbook.nccl_pattern",),
}
"""Finding and evidence arguments that carry ids (a signal, an analyzer's cause class, a
list of mitigations): ``{argument: catalogue prefixes}``, each id shown as the text of the
first ``<prefix>.<id>`` the catalogue has. A string of ids separated by commas, or a list,
is shown as their texts one after another."""
_SENTENCES = frozenset({"mitigations", "long_term"})
"""Arguments whose ids name whole sentences (joined by ``;``, not ``,``)."""


def status_text(status: ItemStatus, lang: str) -> str:
    """``ok`` / ``problem`` / … in ``lang``."""
    return t(_STATUS_KEY[status], lang)


def signal_name(signal: str, lang: str) -> str:
    """A playbook signal's name in ``lang`` (``queue_time_p99`` → "排队时间 P99"); an id
    without a name in the catalogue (``playbook.signal.*``) is returned as it is."""
    key = f"playbook.signal.{signal}"
    return t(key, lang) if key in catalog() else signal


def _arg(name: str, value: Any, lang: str) -> Any:
    if isinstance(value, dict) and lang in value:
        return value[lang]  # a text another step wrote in both languages
    prefixes = _ID_ARGS.get(name)
    if prefixes is None or not isinstance(value, str | list):
        return value

    def words(v: Any) -> str:
        key = next((f"{p}.{v}" for p in prefixes if f"{p}.{v}" in catalog()), "")
        return (t(key, lang) if key else str(v)).rstrip("。.")

    ids = [v.strip() for v in value.split(",")] if isinstance(value, str) else value
    sep = {("zh", True): "；", ("en", True): "; ", ("zh", False): "、"}.get(
        (lang, name in _SENTENCES), ", "
    )
    return sep.join(words(v) for v in ids if str(v))


def finding_text(result: ItemResult, lang: str) -> str:
    """The finding of ``result`` in ``lang`` (empty when it has none)."""
    if not result.finding_key:
        return ""
    args = {k: _arg(k, v, lang) for k, v in result.finding_args.items()}
    return t(result.finding_key, lang, **args)


def summary(results: list[ItemResult], lang: str) -> str:
    """``2 problems, 3 ok, 0 n/a, 1 open, 0 not available``."""
    count = {s: sum(1 for r in results if r.status is s) for s in ItemStatus}
    return t(
        "playbook.summary",
        lang,
        problems=count[ItemStatus.PROBLEM],
        ok=count[ItemStatus.OK],
        not_applicable=count[ItemStatus.NA],
        open=count[ItemStatus.OPEN],
        na=count[ItemStatus.NOT_AVAILABLE],
    )


def fill_command(command: str, namespace: str = "", deployment: str = "") -> str:
    """A playbook command with the service's namespace and deployment put in for the
    ``<namespace>`` / ``<deployment>`` placeholders when they are known (else kept, for
    the user to fill)."""
    return fill(command, namespace=namespace, deployment=deployment)


def evidence_label(ev: CheckEvidence, lang: str) -> str:
    """The evidence's label in ``lang``."""
    if ev.label_key:
        args = dict(ev.label_args)
        if isinstance(args.get("name"), str):
            args["name"] = signal_name(args["name"], lang)
        return t(ev.label_key, lang, **args)
    return ev.label


def evidence_value(ev: CheckEvidence, lang: str) -> str:
    """The evidence's value in ``lang``: ``value`` as read (a number, a log line), or the
    words of ``value_key`` when the value is an analyzer's id (its arguments named as in
    findings, see :data:`_ID_ARGS`)."""
    if not ev.value_key:
        return ev.value
    return t(ev.value_key, lang, **{k: _arg(k, v, lang) for k, v in ev.value_args.items()})


def to_evidence(
    ev: CheckEvidence,
    playbook_id: str,
    step: str = "",
    lang: str = "en",
    at: datetime | None = None,
) -> Evidence:
    """A check's evidence as an incident :class:`Evidence` (for ``session.pin``); ``at`` is
    when the check ran (None: unknown)."""
    return Evidence(
        at=at,
        label=evidence_label(ev, lang),
        label_i18n=in_both(lambda lng: evidence_label(ev, lng)),
        value=evidence_value(ev, lang),
        value_i18n=in_both(lambda lng: evidence_value(ev, lng)) if ev.value_key else {},
        unit=ev.unit,
        query=ev.query,
        source=f"playbook:{playbook_id}:{ev.source}" if ev.source else f"playbook:{playbook_id}",
        step=step,
    )


def to_record(
    playbook: Playbook,
    results: list[ItemResult],
    lang: str,
    evidence_ids: dict[str, list[str]] | None = None,
) -> PlaybookRecord:
    """What lands in the incident (and its export): one line per checklist item, its
    text, finding and the summary in ``lang`` and in both languages (``*_i18n``), so the
    export speaks its own language."""
    by_item = {r.item: r for r in results}
    items = []
    for item in playbook.items:
        r = by_item.get(item.id)
        status = r.status.value if r else "open"
        findings = in_both(lambda lng, r=r: finding_text(r, lng) if r else "")
        items.append(
            PlaybookItemResult(
                item=item.text(lang),
                item_i18n=in_both(item.text),
                status=status,
                finding=findings[lang],
                finding_i18n=findings if any(findings.values()) else {},
                evidence_ids=list((evidence_ids or {}).get(item.id, [])),
            )
        )
    summaries = in_both(lambda lng: f"{playbook.title.get(lng)}: {summary(results, lng)}")
    return PlaybookRecord(
        playbook=playbook.id, items=items, summary=summaries[lang], summary_i18n=summaries
    )
