"""A drop-down whose own keys are described in the UI language."""

from __future__ import annotations

from textual.widgets import Select
from textual.widgets._select import SelectOverlay

from cockpit.ui.keys import localize_bindings


class LocalSelect(Select[str]):
    """:class:`textual.widgets.Select` whose open menu shows ``esc 关闭菜单`` rather than
    Textual's English ``esc Dismiss menu`` (``binding.dismiss`` of the catalogue)."""

    def on_mount(self) -> None:
        ctx = getattr(self.app, "ctx", None)
        localize_bindings(self.query_one(SelectOverlay), getattr(ctx, "lang", "en"))
