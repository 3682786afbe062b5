"""A drop-down whose own keys are described in the UI language, and option lists that
stop at their ends."""

from __future__ import annotations

import time
from typing import ClassVar

from textual import _widget_navigation, events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import OptionList, Select
from textual.widgets._select import SelectCurrent, SelectOverlay

from cockpit.ui.keys import TYPING_RUN_GAP_S, localize_bindings


class StopsAtEnds(OptionList):
    """An option list whose Up and Down stop at its first and last option: Textual's wrap
    round from the last option to the first (a drop-down's blank "choose…" line) would
    make a third Down past the end choose nothing, silently."""

    def _step(self, direction: _widget_navigation.Direction) -> None:
        found = _widget_navigation.find_next_enabled_no_wrap(
            self.options, anchor=self.highlighted, direction=direction
        )
        if found is not None:
            self.highlighted = found
        elif self.highlighted is None:
            super().action_cursor_down() if direction > 0 else super().action_cursor_up()
        else:
            self.app.bell()

    def action_cursor_down(self) -> None:
        self._step(1)

    def action_cursor_up(self) -> None:
        self._step(-1)


class EndOptionList(StopsAtEnds):
    """A plain option list that stops at its first and last option (see
    :class:`StopsAtEnds`)."""

    _key_at = -1e9
    _key_before_at = -1e9

    async def _on_key(self, event: events.Key) -> None:
        if event.is_printable:
            self._key_before_at, self._key_at = self._key_at, time.monotonic()

    def typed_in_a_run(self) -> bool:
        """Whether the printable key being handled came within a run of typing (a digit
        of ``Xid 79 on node 3``), not on its own: such a digit picks nothing."""
        return self._key_at - self._key_before_at < TYPING_RUN_GAP_S


class LocalSelectOverlay(SelectOverlay, StopsAtEnds):
    """A drop-down's open list, stopping at its first and last option."""


class LocalSelect(Select[str], inherit_bindings=False):
    """:class:`textual.widgets.Select` whose open menu shows ``esc 关闭菜单`` rather than
    Textual's English ``esc Dismiss menu`` (``binding.dismiss`` of the catalogue).

    Space does not open the menu (Enter and the arrows do): a space is text, and a
    sentence typed while the drop-down has focus must not open it and search its options.
    Closed, it takes no printable key (its value changes only from its open list, opened
    on purpose with Enter or an arrow); open, its list stops at its last option.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,down,up", "show_overlay", "Show menu", show=False)
    ]

    class Chosen(Message):
        """An option was chosen in the open list (Enter or a click), whether or not it
        changed the value (``Select.Changed`` is not sent for the value already shown):
        ``value`` is the option's value, or ``Select.NULL`` for the blank line."""

        def __init__(self, select: LocalSelect, value: object) -> None:
            super().__init__()
            self.select = select
            self.value = value

    def on_select_overlay_update_selection(self, event: SelectOverlay.UpdateSelection) -> None:
        self.post_message(self.Chosen(self, self._options[event.option_index][1]))

    def compose(self) -> ComposeResult:
        yield SelectCurrent(self.prompt)
        yield LocalSelectOverlay(type_to_search=self._type_to_search).data_bind(
            compact=Select.compact
        )

    def on_mount(self) -> None:
        ctx = getattr(self.app, "ctx", None)
        localize_bindings(self.query_one(SelectOverlay), getattr(ctx, "lang", "en"))
