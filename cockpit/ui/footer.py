"""The key footer of every screen: the global keys first, whole, at any width; then the keys
of what has focus, as many as fit; compact on narrow terminals."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

COMPACT_BELOW = 110
"""Below this many columns the footer drops the padding around each key and gives the global
keys their short descriptions, so that they fit an 80-column terminal (ssh from a laptop,
tmux split) with room left for the keys of what has focus."""

GLOBAL_ACTIONS = (
    "help",
    "paste",
    "playbooks",
    "history",
    "prev_step",
    "next_step",
    "command_palette",
)
"""The keys shown first on every screen, in this order, whatever has focus: F1 help, F6 paste
evidence, F7 playbooks, F8 history, Alt+←/→ back/next and the command palette (Ctrl+P). The
keys of a focused panel or field come after them and are dropped when there is no room."""

STEP_ACTIONS = ("prev_step", "next_step")
"""Back and Next: one key ``alt+←→`` in a compact footer."""


@dataclass
class _Key:
    binding: Binding
    enabled: bool
    tooltip: str
    display: str
    description: str
    rank: int


def _sort_rank(namespace_index: int, action: str) -> int:
    """Global keys first (in :data:`GLOBAL_ACTIONS` order), then the bindings of the focused
    widget and of its ancestors, nearest first; the app's other keys (F2) last."""
    if action in GLOBAL_ACTIONS:
        return GLOBAL_ACTIONS.index(action)
    return len(GLOBAL_ACTIONS) + namespace_index


class CockpitFooter(Footer):
    """:class:`textual.widgets.Footer` that always shows the global keys (F1, F6, F7, F8,
    Alt+arrows, the palette) first and whole, then the keys of the focused widget and its
    panel and screen while they fit the width, dropping the rest rather than cutting them at
    the right edge. Below ``compact_below`` columns (:data:`COMPACT_BELOW` by default) the
    keys lose their padding and the global keys their long descriptions
    (``key.short.<action>`` in the catalogue)."""

    DEFAULT_CSS = """
    CockpitFooter.-compact FooterKey.-command-palette { margin-right: 0; }
    """

    def __init__(self, compact_below: int = COMPACT_BELOW) -> None:
        super().__init__()
        self.compact_below = compact_below
        self._laid_out_width = 0

    def on_resize(self, event: events.Resize) -> None:
        self.compact = event.size.width < self.compact_below
        if event.size.width != self._laid_out_width and self._bindings_ready:
            self.call_after_refresh(self.recompose)

    def _lang(self) -> str:
        ctx = getattr(self.app, "ctx", None)
        return getattr(ctx, "lang", "en") if ctx is not None else "en"

    def _keys(self) -> list[_Key]:
        """The shown bindings of the screen, one per action, in the order of :func:`_sort_rank`."""
        from cockpit.i18n import catalog, t

        known = catalog()
        lang = self._lang()
        chain = [node for node, _ in self.screen._modal_binding_chain]
        seen: set[str] = set()
        keys: list[_Key] = []
        palette = self.app.COMMAND_PALETTE_BINDING
        for key, (namespace, binding, enabled, tooltip) in self.screen.active_bindings.items():
            is_palette = key == palette and self.app.ENABLE_COMMAND_PALETTE
            if not (binding.show or is_palette) or binding.action in seen:
                continue
            action = "command_palette" if is_palette else binding.action
            seen.add(binding.action)
            description = binding.description
            short = f"key.short.{action}"
            if self.compact and short in known:
                description = t(short, lang)
            rank = _sort_rank(chain.index(namespace) if namespace in chain else len(chain), action)
            keys.append(
                _Key(
                    binding, enabled, tooltip, self.app.get_key_display(binding), description, rank
                )
            )
        keys.sort(key=lambda k: k.rank)
        return self._join_step_keys(keys) if self.compact else keys

    def _join_step_keys(self, keys: list[_Key]) -> list[_Key]:
        """Compact: Back and Next as one key, ``alt+←→ Back/Next``."""
        from cockpit.i18n import t

        steps = [k for k in keys if k.binding.action in STEP_ACTIONS]
        if len(steps) != 2:
            return keys
        back, nxt = steps
        arrows = back.display + nxt.display.rsplit("+", 1)[-1]
        joined = _Key(
            nxt.binding,
            nxt.enabled,
            nxt.tooltip,
            arrows,
            t("key.short.steps", self._lang()),
            back.rank,
        )
        return [joined if k is back else k for k in keys if k is not nxt]

    def _width(self, key: _Key, palette: bool) -> int:
        """Columns the key takes in the footer (Textual's footer CSS: padding around the key
        and after the description, or one column of margin when compact; the palette key
        has a border at its left)."""
        text = cell_len(key.display) + (cell_len(key.description) + 1 if key.description else 0)
        border = 1 if palette else 0
        if self.compact:
            # One column of margin after each key; the palette key, at the right edge, has
            # its border instead.
            return text + 1
        # Non-compact, the palette key also has a column of padding at its right.
        return text + 2 + 2 * border

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        yield from self._fitted()

    def _fitted(self) -> Iterator[FooterKey]:
        width = self.size.width or self.app.size.width
        self._laid_out_width = width
        palette_key = self.app.COMMAND_PALETTE_BINDING
        keys = self._keys()
        free = width
        chosen: list[_Key] = []
        for key in keys:
            need = self._width(key, key.binding.key == palette_key)
            # The global keys are shown whatever the width; the others while they fit.
            if key.rank < len(GLOBAL_ACTIONS) or need <= free:
                chosen.append(key)
                free -= need
        for key in chosen:
            is_palette = key.binding.key == palette_key
            item = FooterKey(
                key.binding.key,
                key.display,
                key.description,
                key.binding.action,
                disabled=not key.enabled,
                tooltip=key.tooltip or (key.binding.tooltip if is_palette else ""),
                classes="-command-palette" if is_palette else "",
            )
            yield item.data_bind(compact=Footer.compact)
