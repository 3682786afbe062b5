"""Translatable messages returned by the analysis: a message key and its arguments.

The analysis stays free of a UI language: every sentence it builds for a user (a reason,
a note, an evidence line) is a :class:`Msg` — a key of ``cockpit/knowledge/i18n/*.toml``
(``evidence.*``) with the numbers as arguments — and the UI or the ``analyze`` text output
renders it in the user's language with :meth:`Msg.text` (``cockpit.i18n.t``). The English
text fields kept for ``cockpit analyze --json`` are the same messages rendered in ``en``.
"""

from __future__ import annotations

from typing import Union

from pydantic import BaseModel, Field

from cockpit.i18n import _FORMATTER, catalog
from cockpit.i18n import fmt_number as fmt_number  # formatting lives with the catalogue
from cockpit.models.signals import SIGNALS

Arg = Union[str, int, float, "Msg"]
"""A message argument: a number (formatted by the message's own format spec), a string
(an identifier such as a pod name or a unit), or a nested message."""


class Msg(BaseModel):
    """A message key with its arguments.

    Attributes:
        key: Message key (``evidence.blast.outlier``).
        args: ``str.format`` arguments of the message; nested :class:`Msg` values are
            rendered in the same language first.
    """

    key: str
    args: dict[str, Arg] = Field(default_factory=dict)

    def text(self, lang: str) -> str:
        """The message in ``lang`` (``zh`` or ``en``), falling back as ``cockpit.i18n.t``
        does: the other language, then the key itself; a template that does not format
        with the arguments is returned as it is. The key :data:`SIGNAL_NAMES` renders the
        human names of the signal keys in its ``keys`` argument (see :func:`signal_names`);
        a ``unit`` argument is rendered with :func:`unit_text` (it stays a plain string in
        the arguments, which ``analyze --json`` documents), and a template's ``{dunit}``,
        the unit of a difference, is derived from it here (:func:`delta_suffix`)."""
        if self.key in (SIGNAL_NAMES, NAMES):
            keys = str(self.args.get("keys", ""))
            sep = "、" if lang == "zh" else ", "
            name = signal_label if self.key == SIGNAL_NAMES else _message
            return sep.join(name(k, lang) for k in keys.split(",") if k)
        if self.key == XID_NAME:
            return _xid_name(self.args.get("code"), lang)
        if self.key == TEXT_IN:
            return str(self.args.get(lang) or self.args.get("en") or self.args.get("zh") or "")
        entry = catalog().get(self.key)
        if entry is None:
            return self.key
        template = entry.get(lang) or entry.get("en") or entry.get("zh") or self.key
        args = {k: v.text(lang) if isinstance(v, Msg) else v for k, v in self.args.items()}
        if isinstance(args.get("unit"), str):
            args.setdefault("dunit", delta_suffix(str(args["unit"])))
        # the singular only where one number carries the unit (a value, a difference)
        number = {"unit": args.get("value"), "dunit": args.get("delta")}
        for field in ("unit", "dunit"):
            if isinstance(args.get(field), str):
                one = number[field] if template.count("{" + field + "}") == 1 else None
                args[field] = unit_text(str(args[field]), lang, one)
        try:
            return _FORMATTER.format(template, **args)
        except (KeyError, IndexError, ValueError):
            return template


_SINGULAR = {"restarts": "restart", "changes": "change", "pods": "pod", "containers": "container"}
"""English counted units and their singular, for a count of exactly one."""


def unit_text(unit: str, lang: str, count: object = None) -> str:
    """A display unit in ``lang``: counted words (``restarts``, ``pods``, ``changes``…)
    have Chinese forms in ``unit.*`` of the catalogue; symbols (ms, %, MiB, req/s) stay.
    Leading spaces (``" restarts"`` as a number's suffix) are kept. ``count``: the number
    it follows; a count of ±1 takes the English singular (``1 restart``)."""
    word = unit.strip()
    if lang != "zh" and word in _SINGULAR and _is_one(count):
        return unit[: len(unit) - len(unit.lstrip())] + _SINGULAR[word]
    if lang != "zh" or not word:
        return unit
    entry = catalog().get(f"unit.{word}")
    if entry is None or not entry.get("zh"):
        return unit
    return unit[: len(unit) - len(unit.lstrip())] + entry["zh"]


def _is_one(count: object) -> bool:
    """Whether ``count`` is a number of exactly ±1."""
    return isinstance(count, int | float) and not isinstance(count, bool) and abs(count) == 1


def _xid_name(code: Arg | None, lang: str) -> str:
    from cockpit.knowledge.catalogues import xid_catalogue

    e = (
        xid_catalogue().get(int(code))
        if isinstance(code, int | str) and str(code).isdigit()
        else None
    )
    if e is None:
        return "目录中没有此 Xid" if lang == "zh" else "not in the catalogue"
    return (e.zh.name if lang == "zh" and e.zh and e.zh.name else "") or e.name


def _message(key: str, lang: str) -> str:
    return Msg(key=key).text(lang)


NAMES = "names"
"""Message key of a list of names, each a catalogue key, joined in the language's way
(``msg(NAMES, keys="gpu.group.ecc_dbe,gpu.group.nvlink")`` → ``ECC DBE, NVLink errors``)."""

XID_NAME = "xid.name"
"""Message key of an Xid's name in the catalogue (``xid.json``) for its ``code`` argument,
in the reader's language (``GPU has fallen off the bus`` / ``GPU 从总线上掉线``)."""

TEXT_IN = "text.in"
"""Message key of a text given in each language by its source (a profile's TOML, a
plugin): ``msg(TEXT_IN, zh="…", en="…")`` renders the reader's, else English, else
Chinese."""

SIGNAL_NAMES = "signal.names"
"""Message key of :func:`signal_names` (rendered from the signal catalogue, not a template)."""


def signal_label(key: str, lang: str) -> str:
    """Human name of a signal key: ``serving.ttft:p99`` → ``TTFT P99`` / ``TTFT（首 token 时间） P99``.

    ``max`` of a histogram is written ``≈max`` (the upper bound of the highest bucket
    observed, not an exact maximum). An unknown signal id is returned as it is.
    """

    sid, _, stat = key.partition(":")
    info = SIGNALS.get(sid)
    if info is None:
        return key
    name = info.zh if lang == "zh" else info.en
    if stat in ("value", ""):
        return name
    return f"{name} {'≈max' if stat == 'max' else stat.upper()}"


def signal_names(*keys: str) -> Msg:
    """The human names of signal keys as a message (joined with ``、`` in zh, ``, `` in en).

    Analysis results keep the identifiers in their arguments (``key``/``keys``) for
    scripts; templates show this ``name``/``names`` argument to people.
    """
    return Msg(key=SIGNAL_NAMES, args={"keys": ",".join(keys)})


def msg(key: str, /, **args: Arg) -> Msg:
    """Shorthand for ``Msg(key=key, args=args)``."""
    return Msg(key=key, args=args)


def unit_suffix(unit: str) -> str:
    """`` ms`` for ``ms``; empty for no unit; ``%``, ``×`` and ``/s`` stick to the number."""
    if not unit:
        return ""
    return unit if unit in ("%", "×", "/s") else f" {unit}"


def delta_suffix(unit: str) -> str:
    """The suffix of a *difference* of two values in ``unit``: a difference of two
    percentages is in percentage points (`` pp``, 个百分点 in Chinese: ``unit.pp``), so
    that +8.5 pp of GPU utilisation (72 % → 80.5 %) is not read as a relative +8.5 %;
    other units as :func:`unit_suffix`. Accepts the unit or its suffix."""
    return " pp" if unit.strip() == "%" else unit_suffix(unit.strip())
