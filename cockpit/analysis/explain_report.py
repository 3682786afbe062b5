"""Render an :class:`~cockpit.analysis.explain.Explanation` as JSON-ready data or text.

Shared by ``cockpit explain`` and the TUI's paste-evidence box. All wording comes from
``cockpit/knowledge/i18n/explain.toml`` (zh and en).

JSON shape (stable; ``schema`` is bumped on any incompatible change)::

    {
      "schema": "cockpit.explain/1",
      "lang": "en",
      "recognised": true,
      "category": "cuda_oom",            # first finding's category, null if none
      "kinds": ["cuda_oom"],             # analyzers that found something, in order
      "input": {"lines": 5, "bytes": 1234, "cut_lines": 0},
      "findings": [
        {
          "kind": "cuda_oom",            # analyzer (registry name)
          "category": "cuda_oom",        # scenario
          "cause": "fragmentation",      # most specific class, or null
          "first_line": 5,               # 1-based line of the evidence, 0 if unknown
          "title": "...",                # what it is (localised)
          "meaning": "...",              # what it means (localised)
          "fields": {...},               # everything the analyzer extracted
          "next_checks": [{"id": "oom.budget", "text": "..."}],
          "mitigations": [{"id": "...", "text": "..."}],
          "long_term": [{"id": "...", "text": "..."}]
        }
      ],
      "looked_for": [{"kind": "cuda_oom", "text": "..."}],
      "errors": [],                      # "<kind>: <ExceptionType>" of failed analyzers
      "unfilled": [{"placeholder": "<pod>", "text": "..."}]  # added by cockpit explain
    }
"""

from __future__ import annotations

import json
import re
from typing import Any

from cockpit.analysis.explain import Explanation, Finding
from cockpit.i18n import catalog, fmt_number, t

SCHEMA = "cockpit.explain/1"


def _text(key: str, lang: str, fallback: str) -> str:
    return t(key, lang) if key in catalog() else fallback


def _items(prefix: str, ids: list[str], lang: str) -> list[dict[str, str]]:
    return [{"id": i, "text": _text(f"{prefix}.{i}", lang, i)} for i in ids]


def finding_json(f: Finding, lang: str) -> dict[str, Any]:
    """One finding as JSON-ready data (see the module docstring)."""
    cause = f.cause or ""
    # Parsers plugged in from elsewhere carry their own words (already in ``lang``).
    meaning = str(f.fields.get("meaning") or cause)
    checks = _items("explain.check", f.next_check_ids, lang) + [
        {"id": "", "text": str(x)} for x in f.fields.get("next_checks_text") or []
    ]
    return {
        "kind": f.kind,
        "category": f.category,
        "cause": f.cause,
        "first_line": f.first_line,
        "title": _text(f"explain.kind.{f.kind}.title", lang, f.kind),
        "meaning": _text(f"explain.cause.{f.kind}.{cause}", lang, meaning),
        "fields": f.fields,
        "next_checks": checks,
        "mitigations": _items(f"explain.mitigate.{f.kind}", f.mitigation_ids, lang),
        "long_term": _items("explain.longterm", f.long_term_ids, lang),
        "role": f.role,
        "consequence_of": f.consequence_of,
        "facts": facts_json(f.fields.get("facts"), lang),
        "evidence": [e.model_dump(mode="json") for e in f.evidence],
    }


def facts_json(facts: Any, lang: str) -> list[dict[str, Any]]:
    """A finding's facts (``{"id", "args", "line"}``) worded in ``lang``."""
    out: list[dict[str, Any]] = []
    for x in facts if isinstance(facts, list) else []:
        if not isinstance(x, dict) or not isinstance(x.get("id"), str):
            continue
        args = {k: _fmt_arg(v) for k, v in (x.get("args") or {}).items()}
        key = f"explain.fact.{x['id']}"
        text = t(key, lang, **args) if key in catalog() else x["id"]
        out.append({"id": x["id"], "text": text, "line": int(x.get("line") or 0)})
    return out


def _fmt_arg(v: Any) -> Any:
    if isinstance(v, float):
        return f"{v:.2f}" if round(v, 2) == v else f"{v:g}"
    if isinstance(v, list):
        return ", ".join(str(_fmt_arg(x)) for x in v)
    return "?" if v is None else v


def to_json(expl: Explanation, lang: str) -> dict[str, Any]:
    """The whole explanation as JSON-ready data (see the module docstring)."""
    return {
        "schema": SCHEMA,
        "lang": lang,
        "recognised": expl.recognised,
        "category": expl.category,
        "kinds": expl.kinds,
        "input": {"lines": expl.lines, "bytes": expl.bytes, "cut_lines": expl.cut_lines},
        "findings": [finding_json(f, lang) for f in expl.findings],
        "looked_for": [
            {"kind": k, "text": _text(f"explain.kind.{k}.looks_for", lang, k)}
            for k in expl.looked_for
        ],
        "errors": expl.errors,
    }


def _scalar(value: Any) -> str:
    if isinstance(value, float):
        return fmt_number(value, 6)
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


# Fields too bulky for the text view (they stay in --json).
_BULKY = {
    "events",
    "series",
    "errors",
    "engine_args",
    "progress",
    "transport_errors",
    "first_timeout",
    "last_watchdog",
    "occurrences",
    "gpus",
    "message",
    "findings",
    "meaning",
    "next_checks_text",
    "commands",
    "facts",
}


_NOT_SHOWN = frozenset(
    {"category", "cause", "first_line", "next_check_ids", "mitigation_ids", "long_term_ids"}
)
"""Fields the finding's heading says already (its meaning, the line it starts at)."""

SHARE_FIELDS = frozenset({"kv_usage", "kv_usage_first", "kv_usage_last"})
"""Fields holding a 0–1 share that every screen shows in percent (KV cache usage: the
engine logs ``71.1%``, DCGM and C say ``71.1 %``)."""

_IN_MEANING = frozenset({"node_effect_text", "node_action"})
"""Fields whose text the finding's meaning already carries (Xid's effect on the node and
what to do with it, :func:`cockpit.analysis.explain._explain_xid`)."""


_IDENT = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")
"""A value that is an analyzer's class name (``hardware``, ``fell_off_bus``), not words."""


def _human_value(value: Any, lang: str) -> str | None:
    """``value`` in words in ``lang``, ``None`` when it has none (a class name without an
    ``explain.value.<name>`` entry, a record): such a field stays in ``--json``."""
    if value is True:
        return t("explain.value.yes", lang)
    if isinstance(value, str):
        if _IDENT.fullmatch(value):
            key = f"explain.value.{value}"
            return t(key, lang) if key in catalog() else None
        return value
    if isinstance(value, int | float):
        return _scalar(value)
    if isinstance(value, list):
        parts = [_human_value(x, lang) for x in value]
        if any(x is None for x in parts):
            return None
        return ", ".join(x for x in parts if x is not None)
    return None


def field_lines(fields: dict[str, Any], limit: int = 40, lang: str = "en") -> list[str]:
    """``name: value`` lines for the non-empty, non-bulky fields of a finding, named and
    valued in ``lang``: a field shows only with a name in the catalogue
    (``explain.field.<key>``) and a value in words (see :func:`_human_value`); the rest
    stays in ``--json``."""
    out: list[str] = []
    for key, value in fields.items():
        if key in _BULKY or value is None or value == [] or value == {} or value is False:
            continue
        if key in _NOT_SHOWN or f"explain.field.{key}" not in catalog():
            continue
        if key in _IN_MEANING or (isinstance(value, str) and not value.strip()):
            continue  # said in the finding's meaning already; an empty text says nothing
        if isinstance(value, dict) and "text" in value and "line" in value:
            text: str | None = f"{_line_ref(int(value.get('line') or 0), lang)}: {value['text']}"
        elif key in SHARE_FIELDS and isinstance(value, int | float) and not isinstance(value, bool):
            text = f"{value * 100:.1f} %"
        else:
            text = _human_value(value, lang)
        if text is None or not text.strip():
            continue
        if len(text) > 240:
            text = text[:239] + "…"
        out.append(f"{t(f'explain.field.{key}', lang)}: {text}")
        if len(out) >= limit:
            break
    return out


def _line_ref(line: int, lang: str) -> str:
    return t("explain.label.line", lang, line=line)


def _evidence_text(e: dict[str, Any]) -> str:
    tags = [
        x
        for x in (
            e.get("time"),
            f"rank {e['rank']}" if e.get("rank") is not None else None,
            f"GPU {e['gpu']}" if e.get("gpu") else None,
            e.get("source"),
        )
        if x
    ]
    text = e["text"] if len(e["text"]) <= 160 else e["text"][:159] + "…"
    return f"L{e['line']} [{', '.join(tags)}] {text}"


def to_text(expl: Explanation, lang: str) -> str:
    """A human-readable report in ``lang``."""
    data = to_json(expl, lang)
    lines: list[str] = [
        t("explain.label.input", lang, lines=expl.lines, bytes=expl.bytes),
    ]
    if expl.cut_lines:
        lines.append(t("explain.label.cut_lines", lang, n=expl.cut_lines))
    if not expl.recognised:
        lines.append("")
        lines.append(t("explain.label.not_recognised", lang))
        lines.append(t("explain.label.looked_for", lang) + ":")
        lines += [f"  - {x['text']}" for x in data["looked_for"]]
    for i, f in enumerate(data["findings"], 1):
        lines.append("")
        where = t("explain.label.line", lang, line=f["first_line"]) if f["first_line"] else ""
        lines.append(f"[{i}] {f['title']}  {where}".rstrip())
        if f["role"] == "consequence":
            what = ", ".join(_text(f"explain.kind.{k}.title", lang, k) for k in f["consequence_of"])
            lines.append(f"  {t('explain.label.consequence_of', lang, what=what)}")
        lines.append(f"  {t('explain.label.means', lang)}: {f['meaning']}")
        if f["facts"]:
            lines.append(f"  {t('explain.label.facts', lang)}:")
            lines += [
                f"    - {x['text']}" + (f" ({_line_ref(x['line'], lang)})" if x["line"] else "")
                for x in f["facts"]
            ]
        if f["evidence"]:
            lines.append(f"  {t('explain.label.evidence', lang)}:")
            lines += [f"    {_evidence_text(e)}" for e in f["evidence"][:6]]
        flines = field_lines(f["fields"], lang=lang)
        if flines:
            lines.append(f"  {t('explain.label.fields', lang)}:")
            lines += [f"    {x}" for x in flines]
        for label, key in (
            ("explain.label.next", "next_checks"),
            ("explain.label.mitigate", "mitigations"),
            ("explain.label.longterm", "long_term"),
        ):
            if f[key]:
                lines.append(f"  {t(label, lang)}:")
                lines += [f"    - {x['text']}" for x in f[key]]
    if expl.errors:
        lines.append("")
        lines.append(t("explain.label.errors", lang, errors=", ".join(expl.errors)))
    return "\n".join(lines) + "\n"
