"""User-visible text in Chinese and English.

Messages live in ``cockpit/knowledge/i18n/*.toml`` (one file per domain), each entry a
table with a ``zh`` and an ``en`` string::

    [flow.next]
    zh = "下一步"
    en = "Next"

``t("flow.next", "en")`` returns ``"Next"``. Placeholders use ``str.format`` syntax; a
``g`` field never comes out in exponent notation (see :func:`fmt_number`). A count is
written with the words that follow it in the singular or the plural as the count asks:
``{n:plural:problem:problems}`` gives ``1 problem`` and ``3 problems`` (``0 problems``), and
the words may carry the verb: ``{n:plural:pod is:pods are}``. Chinese needs no such form.
A missing key raises ``KeyError`` in tests (see ``tests/test_i18n.py``, which also checks
that every key exists in both languages) and falls back to the key itself at run time.
"""

from __future__ import annotations

import locale
import math
import os
import re
import string
import tomllib
from functools import cache
from importlib import resources
from typing import Any

LARGE = 1e4
"""From here on a ``g``-formatted number is written whole with thousands separators
(``13,360`` rather than ``1.336e+04``)."""

_G_SPEC = re.compile(r"([+\- ]?)(?:\.(\d+))?g")


SMALL = 1e-4
"""Below this (and above zero) :func:`fmt_number` writes four decimals, where ``g`` would
switch to an exponent."""


def fmt_number(value: float, digits: int = 4, sign: str = "") -> str:
    """``value`` as ``format(value, f"{sign},.{digits}g")`` — thousands separated as every
    table cell has them (``8,915``, never ``8915`` beside a cell's ``8,915``) —, except that
    a number that would come out in exponent notation because it is large is written whole:
    ``9,000`` and ``74,120`` rather than ``9e+03`` and ``7.412e+04``; and that a number below
    0.0001 (but not zero) is written to four decimals: ``+0.0000`` rather than ``+8.7e-06``.
    NaN and infinities are left to ``g``."""
    if math.isfinite(value) and abs(value) >= min(10**digits, LARGE):
        return f"{value:{sign},.0f}"
    if 0 < abs(value) < SMALL:
        return f"{value:{sign}.4f}"
    text = f"{value:{sign},.{digits}g}"
    if "e" in text and math.isfinite(value):
        # Rounded up to the next power of ten (9999.7 with four digits): written whole.
        return f"{value:{sign},.0f}"
    return text


UNKNOWN = "—"
"""How every screen shows a value that is not known (never ``0``, never ``?``); the reason,
when there is one, is shown beside it or in the status line."""


def fmt_value(value: float | None, unit: str = "") -> str:
    """A measured value for a table cell: whole with thousands separators from 100 on
    (``1,234 ms``), else three significant digits (``56.7 ms``, ``3.14 %``, ``0.0998 %``,
    ``0``); :data:`UNKNOWN` when ``value`` is ``None`` or not finite. ``unit`` follows
    after a space (already translated, see ``cockpit.models.messages.unit_text``)."""
    if value is None or not math.isfinite(value):
        return UNKNOWN
    text = f"{value:,.0f}" if abs(value) >= 100 else fmt_number(value, 3)
    return f"{text} {unit}".strip()


def spark_floor(low: float) -> float:
    """Where a sparkline's bars start, ``low`` being its lowest value: at zero for values
    that are never negative (a bar's height is its magnitude, so a steady 47.9–48.8 req/s
    draws level instead of as a cliff, and ×3 draws three times as high), else at ``low``."""
    return 0.0 if low >= 0 else low


PLURAL = "plural:"
"""A count field's format spec: ``plural:<singular words>:<plural words>``."""


def plural(value: object, one: str, other: str) -> str:
    """``"1 item"`` / ``"2 items"``: the count, a space, and ``one`` when the count is exactly
    1 (also given as the text ``"1"``); ``other`` for 0, 2, 1.5, and a count that is not a
    number, such as ``"—"``. A float is written as a ``g`` field is (``3`` for ``3.0``)."""
    number = value
    if isinstance(value, str) and value.strip().isdigit():
        number = int(value)
    single = isinstance(number, int | float) and not isinstance(number, bool) and number == 1
    text = fmt_number(value, 6) if isinstance(value, float) else str(value)
    return f"{text} {one if single else other}"


class _Formatter(string.Formatter):
    """``str.format`` whose ``g`` fields go through :func:`fmt_number`, whose ``v``
    fields are written as a table cell writes a measured value (:func:`fmt_value`: the
    same digits in a sentence as in the row), and whose ``plural:`` fields through
    :func:`plural`."""

    def format_field(self, value: Any, format_spec: str) -> Any:
        if format_spec == "v" and isinstance(value, int | float) and not isinstance(value, bool):
            return fmt_value(float(value))
        if format_spec.startswith(PLURAL):
            one, _, other = format_spec[len(PLURAL) :].partition(":")
            return plural(value, one, other or one)
        m = _G_SPEC.fullmatch(format_spec)
        if m and isinstance(value, int | float) and not isinstance(value, bool):
            return fmt_number(float(value), int(m.group(2) or 6), m.group(1))
        return super().format_field(value, format_spec)


_FORMATTER = _Formatter()


LANGS = ("zh", "en")
DEFAULT_LANG = "zh"


def _flatten(prefix: str, node: dict[str, Any], out: dict[str, dict[str, str]]) -> None:
    if "zh" in node or "en" in node:
        out[prefix] = {k: str(v) for k, v in node.items() if k in LANGS}
    for key, value in node.items():
        if isinstance(value, dict):
            _flatten(f"{prefix}.{key}" if prefix else key, value, out)


@cache
def catalog() -> dict[str, dict[str, str]]:
    """All messages: ``{key: {"zh": ..., "en": ...}}`` merged from every domain file."""
    out: dict[str, dict[str, str]] = {}
    root = resources.files("cockpit.knowledge") / "i18n"
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            _flatten("", tomllib.loads(entry.read_text(encoding="utf-8")), out)
    return out


def t(key: str, lang: str = DEFAULT_LANG, /, **kwargs: object) -> str:
    """The message ``key`` in ``lang``, formatted with ``kwargs``.

    Falls back to the other language, then to the key itself, so a missing translation
    never crashes a screen (the i18n test makes sure none is missing).
    """
    entry = catalog().get(key)
    if entry is None:
        return key
    text = entry.get(lang) or entry.get("en") or entry.get("zh") or key
    if kwargs:
        try:
            return _FORMATTER.format(text, **kwargs)
        except (KeyError, IndexError, ValueError):
            return text
    return text


def name_of(prefix: str, value: str, lang: str = DEFAULT_LANG, /) -> str:
    """The localized name of an identifier stored in English (a change kind, a source, a
    mode): the message ``<prefix>.<value>`` when there is one, else ``value`` itself (a
    free-form value typed by a user or written by a newer version)."""
    key = f"{prefix}.{value}"
    return t(key, lang) if key in catalog() else value


LANGS = ("zh", "en")
"""The languages of every user-visible text."""


def in_both(render: Any) -> dict[str, str]:
    """``{"zh": render("zh"), "en": render("en")}``: a text cockpit writes into the
    incident, kept in both languages so that the export speaks its own."""
    return {lang: render(lang) for lang in LANGS}


def pick(zh: str, en: str, lang: str) -> str:
    """Choose between two inline strings (for data files that carry both)."""
    return zh if lang == "zh" else en


def default_lang() -> str:
    """``zh`` when the locale starts with ``zh``, else ``en``.

    Reads ``LC_ALL``, ``LC_MESSAGES``, ``LANG`` (in that order, as POSIX does), then
    Python's locale module.
    """
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var)
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    try:
        loc = locale.getlocale()[0] or ""
    except ValueError:
        loc = ""
    return "zh" if loc.lower().startswith("zh") else "en"
