"""``cockpit list``: the incidents in the state directory.

Shows id, title, status, created/updated (UTC) and the current step of each incident,
newest first; closed ones only with ``--all``. Files that cannot be read are always listed,
with their error, never hidden. ``--json`` prints a list of objects::

    [{"id", "path", "title", "status", "created_at", "updated_at", "current_step",
      "drill", "error"}]

where ``drill`` is the drill's id for an incident opened with ``cockpit drill NAME``
(``null`` otherwise; the table marks its title), ``error`` is ``null`` for a readable
incident and the other fields are ``null`` for an unreadable one (``id`` is then the file
name without ``.json``).
"""

from __future__ import annotations

import argparse
import json
import unicodedata
from datetime import datetime
from typing import Any

from cockpit.i18n import t
from cockpit.incident import Incident, IncidentStatus
from cockpit.neutral import json_text
from cockpit.store import CorruptIncident

from ._record_common import err, settings_or_none, store_from_settings

TITLE_WIDTH = 40


def register(subparsers: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Add the ``list`` subcommand."""
    p = subparsers.add_parser(
        "list",
        parents=parents,
        help="list incidents in the state directory",
        description="List incidents (newest first). Unreadable files are always shown.",
    )
    p.add_argument("--all", action="store_true", help="include closed incidents")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _clip(text: str, width: int) -> str:
    out, used = "", 0
    for ch in text:
        w = _width(ch)
        if used + w > width - 1 and _width(text) > width:
            return out + "…"
        out += ch
        used += w
    return out


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - _width(text))


def _stamp(value: datetime) -> str:
    return value.strftime("%Y-%m-%d %H:%M")


def rows(
    entries: list[tuple[Any, Incident | CorruptIncident]], include_closed: bool
) -> list[dict[str, Any]]:
    """The JSON objects of ``cockpit list --json`` (see the module docstring)."""
    out: list[dict[str, Any]] = []
    for path, inc in entries:
        if isinstance(inc, Incident):
            if inc.status is not IncidentStatus.OPEN and not include_closed:
                continue
            out.append(
                {
                    "id": inc.id,
                    "path": str(path),
                    "title": inc.title,
                    "status": inc.status,
                    "created_at": inc.created_at.isoformat().replace("+00:00", "Z"),
                    "updated_at": inc.updated_at.isoformat().replace("+00:00", "Z"),
                    "current_step": inc.current_step,
                    "drill": inc.drill.id if inc.drill is not None else None,
                    "error": None,
                }
            )
        else:
            out.append(
                {
                    "id": path.name.removesuffix(".json"),
                    "path": str(path),
                    "title": None,
                    "status": None,
                    "created_at": None,
                    "updated_at": None,
                    "current_step": None,
                    "drill": None,
                    "error": inc.reason,
                }
            )
    return out


def run(args: argparse.Namespace) -> int:
    """Print the list; returns 0 (unreadable files are reported, not an error)."""
    settings = settings_or_none(args)
    if settings is None:
        return 2
    lang = settings.resolved_lang()
    store = store_from_settings(settings)
    entries = store.list()
    selected = rows(entries, include_closed=args.all)
    if args.json:
        print(json_text(json.dumps(selected, ensure_ascii=False, indent=2)))
        return 0
    if not selected:
        key = "list.none" if args.all or not entries else "list.none_open"
        err(t(key, lang, dir=str(store.root)))
        return 0
    by_path = {str(p): inc for p, inc in entries}
    header = [
        t(f"list.col.{c}", lang) for c in ("id", "title", "status", "created", "updated", "step")
    ]
    table: list[list[str]] = []
    notes: dict[int, str] = {}
    for i, row in enumerate(selected):
        if row["error"] is None:
            status = t(f"export.record.status_{row['status']}", lang)
            title = row["title"] or t("list.untitled", lang)
            if row["drill"]:
                title = t("list.drill_mark", lang, title=title)
            table.append(
                [
                    row["id"],
                    _clip(title, TITLE_WIDTH),
                    status,
                    _stamp(datetime.fromisoformat(row["created_at"])),
                    _stamp(datetime.fromisoformat(row["updated_at"])),
                    row["current_step"],
                ]
            )
        else:
            table.append([row["id"], "", t("list.unreadable", lang), "", "", ""])
            exc = by_path[row["path"]]
            assert isinstance(exc, CorruptIncident)
            notes[i] = exc.message(lang)
    widths = [max(_width(r[c]) for r in [header, *table]) for c in range(len(header))]
    print("  ".join(_pad(h, w) for h, w in zip(header, widths, strict=True)).rstrip())
    for i, r in enumerate(table):
        print("  ".join(_pad(v, w) for v, w in zip(r, widths, strict=True)).rstrip())
        if i in notes:
            print(f"    {notes[i]}")
    return 0
