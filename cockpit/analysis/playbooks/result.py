"""Results of playbook items: status, the finding (an i18n key with arguments), evidence."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from cockpit.incident import ItemStatus


class CheckEvidence(BaseModel):
    """A number or line behind a finding; pinnable as incident evidence.

    Attributes:
        label: What it is, when it needs no translation (a pod name, a metric name).
        value: The value as text (``"3"``, ``"1.27 GiB"``, a log line).
        unit: Unit of ``value`` when numeric.
        source: ``kube``, ``gpu``, ``metrics`` or ``logs``.
        query: The PromQL / Kubernetes request / log location it came from.
        label_key / label_args: The label as an i18n key (``playbook.ev.*``) and its
            arguments, for labels in words.
        value_key / value_args: The value as an i18n key and its arguments when it is an
            analyzer's id rather than a reading (``value`` then keeps the id); shown by
            :func:`cockpit.analysis.playbooks.render.evidence_value`.
    """

    label: str = ""
    value: str
    unit: str = ""
    source: str = ""
    query: str = ""
    label_key: str = ""
    label_args: dict[str, Any] = Field(default_factory=dict)
    value_key: str = ""
    value_args: dict[str, Any] = Field(default_factory=dict)


def L(key: str, **args: Any) -> dict[str, Any]:
    """Keyword arguments of a :class:`CheckEvidence` whose label is the i18n ``key``."""
    return {"label_key": f"playbook.ev.{key}", "label_args": args}


class ItemResult(BaseModel):
    """What a check found for one item.

    Attributes:
        item: Item id (set by ``run_playbook`` from the checklist; a check leaves it empty).
        status: See :class:`ItemStatus`.
        finding_key: i18n key (``playbook.finding.*``) of the finding.
        finding_args: Its format arguments.
        evidence: The numbers and lines behind it.
        missing: Sources that would have been needed (for ``not_available``).
    """

    item: str = ""
    status: ItemStatus
    finding_key: str = ""
    finding_args: dict[str, Any] = Field(default_factory=dict)
    evidence: list[CheckEvidence] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)


def result(
    status: ItemStatus,
    finding_key: str,
    evidence: list[CheckEvidence] | None = None,
    /,
    **finding_args: Any,
) -> ItemResult:
    """A check's result: ``status``, the finding ``finding_key`` (``playbook.finding.*``)
    formatted with ``finding_args``, and the evidence behind it."""
    return ItemResult(
        status=status,
        finding_key=finding_key,
        finding_args=finding_args,
        evidence=list(evidence or []),
    )


def ok(finding_key: str, evidence: list[CheckEvidence] | None = None, /, **args: Any) -> ItemResult:
    """An item checked and found fine (see :func:`result`)."""
    return result(ItemStatus.OK, finding_key, evidence, **args)


def problem(
    finding_key: str, evidence: list[CheckEvidence] | None = None, /, **args: Any
) -> ItemResult:
    """An item checked and found wrong (see :func:`result`)."""
    return result(ItemStatus.PROBLEM, finding_key, evidence, **args)


def still_open(
    finding_key: str, evidence: list[CheckEvidence] | None = None, /, **args: Any
) -> ItemResult:
    """An item the data cannot decide (no signal, no baseline): the user answers it."""
    return result(ItemStatus.OPEN, finding_key, evidence, **args)


def not_available(*sources: str) -> ItemResult:
    """The result of a check whose sources are missing."""
    return ItemResult(
        status=ItemStatus.NOT_AVAILABLE,
        finding_key="playbook.not_available",
        finding_args={"source": ", ".join(sources)},
        missing=list(sources),
    )
