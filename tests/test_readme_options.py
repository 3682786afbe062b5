"""The README's account of ``--at`` matches the parser: every subcommand that takes it is
named where the README lists them, and none that does not."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from cockpit.cli import build_parser

README = Path(__file__).resolve().parent.parent / "README.md"


def _subcommands_with(option: str) -> set[str]:
    parser = build_parser()
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {
        name
        for name, sp in subs.choices.items()
        if any(option in a.option_strings for a in sp._actions)
    }


def test_readme_lists_every_subcommand_that_takes_at() -> None:
    text = README.read_text(encoding="utf-8")
    m = re.search(r"`--at TIME` \(on `cockpit` itself and on ([^)]*)\)", text)
    assert m, "the README no longer says which commands take --at"
    listed = set(re.findall(r"`([a-z]+)`", m.group(1)))
    assert listed == _subcommands_with("--at")


def test_readme_usage_lines_show_at_where_taken() -> None:
    text = README.read_text(encoding="utf-8")
    for name in _subcommands_with("--at"):
        lines = [ln for ln in text.splitlines() if ln.startswith(f"cockpit {name} ")]
        assert lines, name
        assert any("--at TIME" in ln for ln in lines), name
