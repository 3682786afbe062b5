"""Decode the NVML/DCGM clock-event ("throttle") reason bitmask into words.

Bits and their reading come from ``cockpit/knowledge/clock_reasons.json`` (copied from
the NVML header group ``nvmlClocksEventReasons`` as vendored in NVIDIA/go-dcgm
``dcgm_nvml.h``, and DCGM ``DCGM_CLOCKS_EVENT_REASON_*``; see
https://docs.nvidia.com/deploy/nvml-api/group__nvmlClocksEventReasons.html):

- *normal*: GpuIdle (0x1), ApplicationsClocksSetting (0x2), SyncBoost (0x10),
  DisplayClockSetting (0x100);
- *info*: SwPowerCap (0x4) — normal at full load at the power limit; it becomes a warning
  only when one GPU is capped while its peers are not (done by the cohort analysis);
- *warn*: SwThermalSlowdown (0x20) — cooling problem when persistent;
- *trouble*: HwSlowdown (0x8), HwThermalSlowdown (0x40), HwPowerBrakeSlowdown (0x80) —
  each cuts clocks by 2× or more (metrics_kb.md §5.1).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel

from cockpit.i18n import t
from cockpit.knowledge.catalogues import clock_reason_catalogue


class ClockSeverity(StrEnum):
    """How worrying a reason is, least first."""

    NORMAL = "normal"
    INFO = "info"
    WARN = "warn"
    TROUBLE = "trouble"


_ORDER = [ClockSeverity.NORMAL, ClockSeverity.INFO, ClockSeverity.WARN, ClockSeverity.TROUBLE]

# bit → severity; the knowledge file's "trouble" field is true / false / "conditional".
_SEVERITY = {
    0x1: ClockSeverity.NORMAL,
    0x2: ClockSeverity.NORMAL,
    0x4: ClockSeverity.INFO,
    0x8: ClockSeverity.TROUBLE,
    0x10: ClockSeverity.NORMAL,
    0x20: ClockSeverity.WARN,
    0x40: ClockSeverity.TROUBLE,
    0x80: ClockSeverity.TROUBLE,
    0x100: ClockSeverity.NORMAL,
}

SW_POWER_CAP = 0x4
HW_SLOWDOWN_MASK = 0xC8
"""HwSlowdown | HwThermalSlowdown | HwPowerBrakeSlowdown (clock_reasons.json)."""


class ClockReason(BaseModel):
    """One set bit, in words.

    Attributes:
        bit: The bit value (``0x40`` = 64).
        nvml: NVML constant name.
        label: dcgm-exporter ``clock_event`` label (``hw_thermal``).
        name / meaning / interpretation: Text in the requested language.
        severity: normal / info / warn / trouble.
    """

    bit: int
    nvml: str
    label: str
    name: str
    meaning: str
    interpretation: str
    severity: ClockSeverity


class ClockDecoding(BaseModel):
    """The whole mask decoded.

    Attributes:
        mask: The raw bitmask.
        reasons: One entry per set bit, most severe first.
        unknown_bits: Set bits the catalogue does not know.
        severity: The worst severity (``normal`` when no bit is set: clocks as high as
            possible).
        summary: Short words for a table cell (``"HW thermal, SW power cap"``).
    """

    mask: int
    reasons: list[ClockReason]
    unknown_bits: int = 0
    severity: ClockSeverity = ClockSeverity.NORMAL
    summary: str = ""

    @property
    def trouble(self) -> bool:
        """True when a hardware slowdown bit is set."""
        return self.severity is ClockSeverity.TROUBLE


def short_name(bit: int, lang: str = "en") -> str:
    """A few words for one bit (table cells; ``gpu.clock_short.<bit>`` of the catalogue),
    the bit in hex when the catalogue has no words for it."""
    key = f"gpu.clock_short.{bit}"
    text = t(key, lang)
    return hex(bit) if text == key else text


def decode_clock_reasons(mask: int, lang: str = "en") -> ClockDecoding:
    """Decode ``mask`` (``nvmlDeviceGetCurrentClocksEventReasons`` or
    ``DCGM_FI_DEV_CLOCKS_EVENT_REASONS``) into words with a severity.

    Args:
        mask: The bitmask (non-negative).
        lang: ``zh`` or ``en``.
    """
    cat = clock_reason_catalogue()
    reasons: list[ClockReason] = []
    unknown = 0
    bit = 1
    m = int(mask)
    while bit <= m:
        if m & bit:
            entry = cat.get(bit)
            if entry is None:
                unknown |= bit
            else:
                zh = entry.zh if lang == "zh" else None
                reasons.append(
                    ClockReason(
                        bit=bit,
                        nvml=entry.nvml,
                        label=entry.exporter_label,
                        name=(zh and zh.name) or short_name(bit, "en"),
                        meaning=(zh and zh.meaning) or entry.meaning,
                        interpretation=(zh and zh.interpretation) or entry.interpretation,
                        severity=_SEVERITY.get(bit, ClockSeverity.INFO),
                    )
                )
        bit <<= 1
    reasons.sort(key=lambda r: (-_ORDER.index(r.severity), r.bit))
    worst = max((r.severity for r in reasons), key=_ORDER.index, default=ClockSeverity.NORMAL)
    if unknown and worst is ClockSeverity.NORMAL:
        worst = ClockSeverity.INFO
    summary = ", ".join(short_name(r.bit, lang) for r in reasons)
    if unknown:
        summary = (summary + ", " if summary else "") + hex(unknown)
    if not summary:
        summary = "无（满频）" if lang == "zh" else "none (full clocks)"
    return ClockDecoding(
        mask=m, reasons=reasons, unknown_bits=unknown, severity=worst, summary=summary
    )
