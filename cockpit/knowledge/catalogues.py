"""The JSON catalogues of ``cockpit/knowledge/``, validated on load.

- ``xid.json``: NVIDIA Xid codes (meaning, likely cause, NVIDIA's immediate-action bucket,
  what to check), English with a ``zh`` translation; sources in its ``_meta`` and per entry.
- ``clock_reasons.json``: the NVML/DCGM clock-event reason bits; sources in its ``_meta``.
- ``causes.toml``: the cause classes a diagnosis concludes, each with its layer (names in
  the i18n entries ``metrics.cause.<id>``); sources in its header.

Every entry is a pydantic model with unknown keys forbidden, so a misspelt field or a
wrong type in a knowledge file fails at load (and in the suite), instead of reading as
missing text.

Raises (both loaders):
    pydantic.ValidationError: a file does not match its model.
"""

from __future__ import annotations

import json
import tomllib
from functools import cache
from importlib import resources
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class XidText(_Entry):
    """The Chinese text of an Xid entry (each field falls back to the English one)."""

    name: str = ""
    meaning: str = ""
    action: str = ""
    check: str = ""
    escalate_if: str = ""


class XidEntry(_Entry):
    """One Xid of ``xid.json``."""

    name: str
    mnemonic: str = ""
    meaning: str
    action: str
    cause_class: str = ""
    likely: list[Literal["application", "driver", "hardware", "informational"]] = Field(
        default_factory=list
    )
    likely_causes: list[str] = Field(default_factory=list)
    nvidia_immediate_action_bucket: str = ""
    fatal_flag: str = ""
    severity: str = ""
    check: str = ""
    escalate_if: str = ""
    sources: list[str] = Field(default_factory=list)
    zh: XidText = Field(default_factory=XidText)


class ClockReasonText(_Entry):
    """The Chinese text of a clock-event reason."""

    name: str = ""
    meaning: str = ""
    interpretation: str = ""


class ClockReasonEntry(_Entry):
    """One bit of ``clock_reasons.json``."""

    bit: str
    value: int = Field(gt=0)
    nvml: str
    dcgm: str
    exporter_label: str
    meaning: str
    interpretation: str
    trouble: bool | Literal["conditional"]
    """Whether the bit means trouble; ``conditional``: only against peers (see ``_meta``)."""
    severity: str
    zh: ClockReasonText = Field(default_factory=ClockReasonText)


class ClockReasonCatalogue(_Entry):
    """``clock_reasons.json``: the bits, and the masks its notes describe."""

    meta: dict[str, Any] = Field(alias="_meta")
    reasons: list[ClockReasonEntry]
    trouble_mask: str
    hw_slowdown_mask: str


def _read(name: str) -> Any:
    return json.loads((resources.files("cockpit.knowledge") / name).read_text(encoding="utf-8"))


@cache
def xid_catalogue() -> dict[int, XidEntry]:
    """``xid.json`` by Xid number (its ``_meta`` block aside)."""
    raw = _read("xid.json")
    return {int(k): XidEntry.model_validate(v) for k, v in raw.items() if k != "_meta"}


@cache
def clock_reason_catalogue() -> dict[int, ClockReasonEntry]:
    """``clock_reasons.json`` by bit value."""
    cat = ClockReasonCatalogue.model_validate(_read("clock_reasons.json"))
    return {r.value: r for r in cat.reasons}


class CauseClass(_Entry):
    """One cause class of ``causes.toml``.

    Attributes:
        id: Its key (``memory_fragmentation``); its name is ``metrics.cause.<id>``.
        layer: The layer of step C it is found in (``""`` for ``unknown``).
    """

    id: str
    layer: Literal["access", "serving", "runtime", "hardware", "infrastructure", ""]


@cache
def cause_classes() -> dict[str, CauseClass]:
    """``causes.toml`` by id, in the file's order."""
    raw = tomllib.loads(
        (resources.files("cockpit.knowledge") / "causes.toml").read_text(encoding="utf-8")
    )
    return {k: CauseClass.model_validate({"id": k, **v}) for k, v in raw.items()}
