"""A signal's reading pinned as evidence, the same way from A's golden row and C's table.

The pin quotes the row as every screen shows it (:func:`cockpit.analysis.golden.value_msg`
and :func:`~cockpit.analysis.golden.reading_msg`: the value now — a top-bucket quantile as
its lower bound —, the change against the baseline and the verdict), so the export's key
evidence says what the screens said.
"""

from __future__ import annotations

import re

from cockpit.analysis.golden import SignalSummary, bound_number, reading_msg
from cockpit.i18n import UNKNOWN, fmt_value, in_both, t
from cockpit.incident import Evidence
from cockpit.models.messages import fmt_number, unit_text

_AGG = re.compile(r"^\s*(avg|max|min|sum)\s+by\s*\(")
"""The aggregation a service-wide gauge's query starts with
(:func:`cockpit.analysis.profiles.render`: ``avg by () (DCGM_FI_DEV_FB_RESERVED{…})``)."""


def pin_label(s: SignalSummary, lang: str) -> str:
    """The pin's label: the signal's human name, and for a GPU signal (layer
    ``hardware``) which GPUs the one number stands for — the service's, averaged, summed,
    highest or lowest as its query aggregates them (``memory reserved, average of the
    service's GPUs``): a bare "memory reserved = 511 MiB" says of no GPU or pod."""
    if s.layer != "hardware":
        return s.label(lang)
    m = _AGG.match(s.query)
    return t(f"evidence.pin_gpus.{m.group(1) if m else 'all'}", lang, name=s.label(lang))


def signal_evidence(s: SignalSummary, lang: str, step: str = "") -> Evidence | None:
    """The pinned form of ``s`` at ``step`` (``A``, ``C``; ``""``: the step's own);
    None when it has no value now (nothing to pin: "no data" is never pinned as a number).
    A verdict that rests on the window pins the window's reading it rests on
    (:attr:`~cockpit.analysis.golden.SignalSummary.window_reading`: ``in the window: Xid 79
    (13:40:00)``), as the row shows it, never the value now beside it."""
    window = s.window_reading
    if window is None and (not s.now.ok or s.now.value is None):
        return None
    if window is not None:
        value = window.text(lang)
    else:
        value = bound_number(s.top_bucket, s.bottom_bucket) or fmt_number(s.now.value or 0.0)

    def note(lang: str) -> str:
        base = fmt_value(s.baseline.value, unit_text(s.unit, lang)) if s.baseline.ok else UNKNOWN
        return t(
            "evidence.pin_reading",
            lang,
            reading=reading_msg(s).text(lang),
            baseline=base,
            reason=s.reason_text(lang),
        )

    return Evidence(
        label=pin_label(s, lang),
        value=value,
        unit="" if window is not None else s.unit,
        at=s.at,
        query=s.query,
        source="prometheus",
        step=step,
        what=s.signal,
        note=note(lang),
        label_i18n=in_both(lambda lang: pin_label(s, lang)),
        note_i18n=in_both(note),
        value_i18n=in_both(window.text) if window is not None else {},
    )
