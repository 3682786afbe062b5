"""The JSON knowledge files load through their pydantic models; a malformed entry fails."""

from __future__ import annotations

import json
from importlib import resources

import pytest
from pydantic import ValidationError

from cockpit.knowledge.catalogues import (
    ClockReasonCatalogue,
    XidEntry,
    clock_reason_catalogue,
    xid_catalogue,
)


def test_every_xid_entry_validates_and_has_text_in_both_languages() -> None:
    cat = xid_catalogue()
    assert {13, 31, 48, 79} <= set(cat)
    for xid, e in cat.items():
        assert e.name and e.meaning and e.action, xid
        assert e.zh.name and e.zh.meaning, xid


def test_every_clock_reason_validates() -> None:
    cat = clock_reason_catalogue()
    assert {0x1, 0x4, 0x8, 0x20, 0x40, 0x80} <= set(cat)
    assert all(int(r.bit, 16) == v for v, r in cat.items())


def test_a_misspelt_or_mistyped_field_is_refused() -> None:
    raw = json.loads((resources.files("cockpit.knowledge") / "xid.json").read_text())
    entry = dict(raw["79"])
    XidEntry.model_validate(entry)
    with pytest.raises(ValidationError):
        XidEntry.model_validate({**entry, "meanig": "typo"})
    with pytest.raises(ValidationError):
        XidEntry.model_validate({**entry, "likely": ["hardwre"]})
    clocks = json.loads((resources.files("cockpit.knowledge") / "clock_reasons.json").read_text())
    clocks["reasons"][0] = {**clocks["reasons"][0], "value": "one"}
    with pytest.raises(ValidationError):
        ClockReasonCatalogue.model_validate(clocks)
