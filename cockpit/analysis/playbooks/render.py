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
# Arguments that are ids of explain's texts (a list of mitigations / long-term fixes, or
# an engine-log cause): shown as those texts.
_ID_ARGS = {
    "mitigations": "explain.mitigate.cuda_oom",
    "long_term": "explain.longterm",
    "cause": "explain.cause.engine_log",
}


def status_text(status: ItemStatus, lang: str) -> str:
    """``ok`` / ``problem`` / … in ``lang``."""
    return t(_STATUS_KEY[status], lang)


def signal_name(signal: str, lang: str) -> str:
    """A playbook signal's name in ``lang`` (``queue_time_p99`` → "排队时间 P99"); an id
    without a name in the catalogue (``playbook.signal.*``) is returned as it is."""
    key = f"playbook.signal.{signal}"
    return t(key, lang) if key in catalog() else signal


def _arg(name: str, value: Any, lang: str) -> Any:
    if name == "signals" and isinstance(value, str):
        sep = "、" if lang == "zh" else ", "
        return sep.join(signal_name(v.strip(), lang) for v in value.split(",") if v.strip())
    prefix = _ID_ARGS.get(name)

    def words(v: Any) -> str:
        key = f"{prefix}.{v}" if prefix else ""
        return (t(key, lang) if key in catalog() else str(v)).rstrip("。.")

    if isinstance(value, list):
        return ("；" if lang == "zh" else "; ").join(words(v) for v in value)
    return words(value) if prefix and isinstance(value, str) else value


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
        value=ev.value,
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
    """What lands in the incident (and its export): one line per checklist item."""
    by_item = {r.item: r for r in results}
    items = []
    for item in playbook.items:
        r = by_item.get(item.id)
        status = r.status.value if r else "open"
        finding = finding_text(r, lang) if r else ""
        items.append(
            PlaybookItemResult(
                item=item.text(lang),
                status=status,
                finding=finding,
                evidence_ids=list((evidence_ids or {}).get(item.id, [])),
            )
        )
    return PlaybookRecord(
        playbook=playbook.id,
        items=items,
        summary=f"{playbook.title.get(lang)}: {summary(results, lang)}",
    )
