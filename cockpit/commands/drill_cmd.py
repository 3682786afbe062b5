"""``cockpit drill``: practise on a recorded incident.

``cockpit drill NAME`` opens the drill in the TUI like ``cockpit --replay`` of its bundle
(the clock frozen at the incident's "now"), as an incident marked as a drill: steps G and
I ask for the conclusion in structured form and the scorecard compares it with the
drill's answer key. ``cockpit --resume`` reopens it like any incident.

``cockpit drill --list [--json]`` lists the drills shipped in the package: id, title,
difficulty and what each teaches, never its answers. ``--json`` prints::

    [{"id", "title", "difficulty", "teaches"}]

(titles and what it teaches in ``--lang``). Exit status 0; 2 when the configuration
cannot be loaded or a shipped drill is broken (the message names its file).

``cockpit drill score ID|latest [--json]`` prints the scorecard of a drill incident (the
same as the TUI's scorecard screen); ``--json`` prints :class:`cockpit.drills.score.Scorecard`
(documented in ``docs/json.md``). Exit status 0; 1 when the conclusion was not handed in
yet (the scorecard would give the key away); 2 for an unknown incident, one that is not a
drill, or a configuration that cannot be loaded.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from cockpit.i18n import t
from cockpit.neutral import json_text

from ._record_common import err, settings_or_none


def register(subparsers: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Add the ``drill`` subcommand."""
    p = subparsers.add_parser(
        "drill",
        parents=parents,
        help="practise on a recorded incident and get a scorecard",
        description="Drills: recorded incidents with an answer key, shipped in the package.",
    )
    p.add_argument(
        "name", nargs="?", metavar="NAME", help="the drill to open (see --list), or 'score'"
    )
    p.add_argument(
        "incident", nargs="?", metavar="ID", help="with 'score': the drill incident, or 'latest'"
    )
    p.add_argument("--list", action="store_true", help="list the drills (no answers)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``cockpit drill``; returns the exit status."""
    from cockpit.drills.catalogue import DrillError, catalogue

    settings = settings_or_none(args)
    if settings is None:
        return 2
    lang = settings.resolved_lang()
    try:
        drills = catalogue()
    except DrillError as exc:
        err(str(exc))
        return 2
    if args.name == "score" and not args.list:
        return _score(args, settings, lang, drills)
    if args.name and not args.list:
        return _open(args, lang, drills)
    listing = [d.key.listing(lang) for d in drills.values()]
    if args.json:
        print(json_text(json.dumps(listing, ensure_ascii=False, indent=2)))
        return 0
    for row in listing:
        level = t(f"drill.difficulty.{row['difficulty']}", lang)
        print(f"{row['id']}  [{level}]  {row['title']}")
        print(f"    {row['teaches']}")
    return 0


def _open(args: argparse.Namespace, lang: str, drills: dict[str, Any]) -> int:
    """Ask the command line to open drill ``args.name`` in the TUI (it sets
    ``args.open_tui``; the command line owns the TUI); 2 for an unknown drill."""
    drill = drills.get(args.name)
    if drill is None:
        err(t("drill.unknown", lang, id=args.name, ids=", ".join(drills)))
        return 2
    args.replay = str(drill.bundle)
    args.demo = False
    args.drill = drill.id
    args.resume = None
    args.at = None
    args.open_tui = True
    return 0


def _score(args: argparse.Namespace, settings: Any, lang: str, drills: dict[str, Any]) -> int:
    """Print the scorecard of drill incident ``args.incident`` (see the module doc)."""
    from cockpit.drills.score import NotSubmitted, card_text, score

    from ._record_common import store_from_settings
    from .export_cmd import _resolve

    if not args.incident:
        err(t("drill.score_needs_id", lang))
        return 2
    inc = _resolve(store_from_settings(settings), args.incident, lang)
    if inc is None:
        return 2
    if inc.drill is None or inc.drill.id not in drills:
        err(t("drill.not_a_drill_id", lang, id=inc.id))
        return 2
    try:
        card = score(inc, drills[inc.drill.id].key, lang)
    except NotSubmitted:
        err(t("drill.not_submitted", lang, id=inc.id))
        return 1
    if args.json:
        print(json_text(card.model_dump_json(indent=2)))
    else:
        print(card_text(card, lang), end="")
    return 0
