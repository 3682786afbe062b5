"""Textual's command palette with its "no matches" line in the UI language."""

from __future__ import annotations

from typing import Any

from rich.align import Align
from rich.text import Text
from textual.command import CommandList, CommandPalette
from textual.widgets.option_list import Option

from cockpit.i18n import t


class LocalPalette(CommandPalette):
    """:class:`textual.command.CommandPalette` saying "没有匹配的命令" instead of Textual's
    English "No matches found". It re-implements Textual 8.2's
    ``_start_no_matches_countdown`` (the Textual pin, ``<8.3``, keeps the two in step)
    with only that text changed."""

    def __init__(self, lang: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.lang = lang

    def _start_no_matches_countdown(self, search_value: str) -> None:
        self._stop_no_matches_countdown()

        def show_no_matches() -> None:
            if search_value:
                self.query_one(CommandList).add_option(
                    Option(
                        Align.center(
                            Text(t("key.palette_no_matches", self.lang), style="not bold")
                        ),
                        disabled=True,
                        id=self._NO_MATCHES,
                    )
                )
                self._list_visible = True
            else:
                self._list_visible = False

        self._no_matches_timer = self.set_timer(self._NO_MATCHES_COUNTDOWN, show_no_matches)
