"""Keys are handled one after another, in the order they were typed.

Textual hands a key to the focused widget's message queue and goes on with the next key
at once; a key the widget does not take itself (Tab, a TextArea's Backspace) bubbles up
to the app, whose bindings act on it only later. A burst of keys (``tmux send-keys``, a
paste over a slow link, a fast typist under load) then reaches the old field after a Tab,
and a Backspace is applied after the characters that followed it. :class:`KeysInOrder`
holds each key until the one before it has gone all the way up (focused widget, its
containers, the screen, the app), so a Tab has moved focus before the next character is
handed on, and edits apply in order.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from textual import events
from textual.app import App
from textual.message_pump import MessagePump
from textual.widget import Widget

KEY_WAIT_S = 1.0
"""Seconds a key may take before the next one is handed on anyway (a key whose handler
opens a dialog and waits on it must not stop the keyboard)."""


class KeysInOrder(App[Any]):
    """An app that hands a key from the terminal on only once the previous one is handled
    (see the module docstring)."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self._key_backlog: deque[events.Key] = deque()
        self._key_busy = 0
        """Number of the key in flight (0: none; -1: the next one is on its way)."""
        self._key_count = 0

    @property
    def keys_pending(self) -> bool:
        """A key from the terminal is still being handled or waits its turn."""
        return bool(self._key_busy or self._key_backlog)

    async def on_event(self, event: events.Event) -> None:
        if not isinstance(event, events.Key) or event.is_forwarded:
            await super().on_event(event)
            return
        if self._key_busy or self._key_backlog:
            self._key_backlog.append(event)
            return
        await self._hand_on_key(event)

    async def _hand_on_key(self, event: events.Key) -> None:
        self._key_count += 1
        token = self._key_busy = self._key_count
        target: Widget = self.focused or self.screen
        await super().on_event(event)
        self.set_timer(KEY_WAIT_S, lambda: self._key_done(token))
        self._follow(list(target.ancestors_with_self), token)

    def _follow(self, chain: list[MessagePump], token: int) -> None:
        """Queue a callback behind the key in each queue it may bubble through, nearest
        first; the last one (the app's) ends the key."""
        while chain:
            head, *rest = chain
            if head.call_later(self._follow, rest, token):
                return
            chain = rest
        self._key_done(token)

    def _key_done(self, token: int) -> None:
        if token != self._key_busy:
            return
        self._key_busy = 0
        if self._key_backlog:
            self._key_busy = -1
            self.call_later(self._hand_on_key, self._key_backlog.popleft())
