"""A drop-down whose own keys are described in the UI language."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import Select
from textual.widgets._select import SelectOverlay

from cockpit.ui.keys import localize_bindings


class LocalSelect(Select[str], inherit_bindings=False):
    """:class:`textual.widgets.Select` whose open menu shows ``esc 关闭菜单`` rather than
    Textual's English ``esc Dismiss menu`` (``binding.dismiss`` of the catalogue).

    Space does not open the menu (Enter and the arrows do): a space is text, and a
    sentence typed while the drop-down has focus must not open it and search its options.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,down,up", "show_overlay", "Show menu", show=False)
    ]

    def on_mount(self) -> None:
        ctx = getattr(self.app, "ctx", None)
        localize_bindings(self.query_one(SelectOverlay), getattr(ctx, "lang", "en"))
