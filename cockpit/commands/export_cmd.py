"""``cockpit export ID|latest``: the incident as the handbook's template.

Markdown (default) or JSON (``--format json``, shape in :mod:`cockpit.export`), in the
language the incident was opened in (the one the TUI showed it in) unless ``--lang``
(``COCKPIT_LANG`` or ``lang`` in the configuration) names one. Output goes to stdout, to
``-o FILE`` (written atomically, mode 0600) and/or, with ``--clipboard``, to the clipboard
through OSC 52 (works over ssh and in tmux/screen; see :mod:`cockpit.clipboard`). With
``--clipboard`` and no ``-o`` nothing is printed to stdout.

``ID`` is an incident id, ``latest`` (the most recently updated incident, open or
closed; stderr says which one it took and names the other open ones) or the path of an
incident file.

An existing file is not overwritten unless ``--force`` is given (a postmortem draft edited
by hand would be lost), and a missing directory is not created (a typo in the path is
said, not followed): both exit 2.

Exit status: 0 done; 1 the incident is missing or unreadable, or the copy failed;
2 bad arguments.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from cockpit.i18n import t
from cockpit.incident import Incident
from cockpit.store import CorruptIncident, IncidentStore

from ._record_common import err, settings_or_none, store_from_settings


def register(subparsers: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Add the ``export`` subcommand."""
    p = subparsers.add_parser(
        "export",
        parents=parents,
        help="export an incident as the postmortem template (Markdown or JSON)",
        description="Render an incident as the handbook's minimal incident template: in "
        "the language the incident was opened in by default, in the one --lang (or lang "
        "in the config file) names otherwise.",
    )
    p.add_argument("incident", metavar="ID", help="incident id, 'latest', or an incident file")
    p.add_argument(
        "--format", choices=("md", "json"), default="md", help="output format (default md)"
    )
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE (atomically, mode 0600)")
    p.add_argument("--force", action="store_true", help="overwrite FILE when it exists")
    p.add_argument(
        "--clipboard",
        action="store_true",
        help="copy to the clipboard through OSC 52 (over ssh, tmux and screen too)",
    )
    p.set_defaults(func=run)


def _resolve(store: IncidentStore, ref: str, lang: str) -> Incident | None:
    """The incident ``ref`` names, or ``None`` after printing why not."""
    if ref == "latest":
        incidents = [i for _, i in store.list() if isinstance(i, Incident)]
        if not incidents:
            err(t("export.cmd.no_incidents", lang, dir=str(store.root)))
            return None
        inc = incidents[0]
        # Say which one was taken, and that it was a choice when others are open too.
        err(
            t(
                "export.cmd.took_latest",
                lang,
                id=inc.id,
                title=inc.title or "—",
                updated=f"{inc.updated_at:%Y-%m-%d %H:%M} UTC",
                status=inc.status,
            )
        )
        others = [i.id for i in incidents[1:] if i.status == "open"]
        if others:
            err(t("export.cmd.others_open", lang, n=len(others), ids=", ".join(others)))
        return inc
    candidate = Path(ref)
    try:
        if ("/" in ref or ref.endswith(".json")) and candidate.is_file():
            return store.load_path(candidate)
        return store.load(ref)
    except FileNotFoundError:
        err(t("export.cmd.not_found", lang, id=ref, dir=str(store.root)))
    except CorruptIncident as exc:
        err(exc.message(lang))
    return None


def run(args: argparse.Namespace) -> int:
    """Render and deliver the export; returns the exit status (see the module doc)."""
    from cockpit.clipboard import copy_to_terminal
    from cockpit.export import Lang, render
    from cockpit.store import write_atomic

    settings = settings_or_none(args)
    if settings is None:
        return 2
    ui_lang = settings.resolved_lang()
    store = store_from_settings(settings)
    try:
        incident = _resolve(store, args.incident, ui_lang)
    except ValueError as exc:
        err(str(exc))
        return 2
    for line in store.warning_texts(ui_lang):
        err(line)
    if incident is None:
        return 1
    status = 0
    if args.output and args.output != "-":
        path = Path(args.output).expanduser()
        if path.is_file() and not args.force:
            err(t("export.cmd.exists", ui_lang, path=str(path)))
            return 2
        if not path.parent.is_dir():
            err(t("export.cmd.no_dir", ui_lang, dir=str(path.parent)))
            return 2
    # The language asked for (flag, COCKPIT_LANG or config), else the one the incident was
    # opened in: the export says what the screens said.
    lang: Lang = "en" if (settings.lang or incident.lang) == "en" else "zh"
    text = render(incident, lang, args.format)
    if args.output and args.output != "-":
        try:
            write_atomic(path, text)
        except OSError as exc:
            err(f"{path}: {exc.strerror or exc}")
            return 1
        err(t("export.cmd.written", ui_lang, path=str(path)))
    elif not args.clipboard or args.output == "-":
        print(text, end="")
    if args.clipboard:
        result = copy_to_terminal(text)
        if result.ok:
            err(t("export.cmd.copied", ui_lang, size=result.size, via=result.wrap))
        else:
            err(t("export.cmd.no_tty", ui_lang, reason=result.reason))
            status = 1
    return status
