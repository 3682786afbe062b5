"""A printable key that goes nowhere is said, on a step and in a dialog alike.

Printable keys are text (see ``help.typing``): typed with nothing focused, or on a button,
table or list, they land in no field. :class:`SaysWhereTypingGoes` says so once per burst
and names where Tab goes. That name is read from the very focus chain Tab moves along
(:func:`tab_goes_to`), and always in human words (:func:`widget_name`): the notice can
neither name another widget than the one Tab reaches nor fall back to an internal name.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from textual import events
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, TextArea

from cockpit.i18n import t
from cockpit.ui.focus import widget_name

NOWHERE_QUIET_S = 3.0
"""Seconds of quiet after which a key typed that went nowhere is said again."""
NOWHERE_NOTICE_S = 6.0
"""How long a notice about keys that went nowhere stays on screen (seconds)."""


def _types_text(widget: Widget) -> bool:
    return isinstance(widget, Input | TextArea)


def tab_goes_to(screen: Screen[Any], after: Widget | None, step: int = 1) -> Widget | None:
    """The widget Tab (``step=1``) or Shift+Tab (``-1``) focuses from ``after`` on
    ``screen``, as Textual moves focus: the next stop of the screen's focus chain
    (wrapping round; a maximized widget's own stops only), or with ``after`` not in it
    (nothing focused), the first stop."""
    chain = screen.focus_chain
    if screen.maximized is not None:
        inside = set(screen.maximized.walk_children(with_self=True))
        chain = [w for w in chain if w in inside]
    if not chain:
        return None
    if after is None or after not in chain:
        return chain[0]
    return chain[(chain.index(after) + step) % len(chain)]


if TYPE_CHECKING:
    _ScreenMixin = Screen[Any]
else:
    _ScreenMixin = object  # mixed into screens: no Screen of its own in their styles' MRO


class SaysWhereTypingGoes(_ScreenMixin):
    """A screen (a step, a dialog) on which a printable key that lands in no field is not
    lost silently: a notice says it went nowhere and where Tab goes, once per burst.
    Mixed in before the screen class (``class HistoryScreen(SaysWhereTypingGoes,
    ModalScreen[None])``)."""

    _nowhere_said_at = -1e9
    """When (monotonic seconds) a key that went nowhere was last said."""
    _nowhere_shown: tuple[str, ...] = ()
    """The notices saying keys went nowhere that may still be on screen."""
    _tab_promise: tuple[Widget | None, Widget, float] | None = None
    """What the last such notice said Tab goes to: ``(focus then, the stop named, when)``.
    Tab keeps that word while the notice may be on screen and focus has not moved, even
    when the stops changed since (a button enabled once its data came)."""

    @property
    def notice_lang(self) -> str:
        """The language of the notices (the incident's UI language)."""
        ctx = getattr(self, "ctx", None)
        return str(getattr(ctx, "lang", None) or getattr(self, "lang", None) or "en")

    def left_field(self) -> Widget | None:
        """The field Escape left last, that Tab goes on from (``None``: none; a step
        screen keeps it)."""
        return None

    def on_key(self, event: events.Key) -> None:
        """A printable key with focus on no field is no command and no text: a notice
        says where typing goes (Tab: the fields), once per burst."""
        focused = self.focused
        if not event.is_printable or (focused is not None and _types_text(focused)):
            return
        if focused is not None and (
            event.key in self.active_bindings or event.character in self.active_bindings
        ):
            return  # a key the widget acts on (a check box's space)
        now = time.monotonic()
        quiet, self._nowhere_said_at = now - self._nowhere_said_at < NOWHERE_QUIET_S, now
        if not quiet:
            said = self.nowhere_said()
            self._nowhere_shown = (*self._nowhere_shown, said)
            self.notify(said, markup=False, timeout=NOWHERE_NOTICE_S)
            named = self._tab_named()
            self._tab_promise = None if named is None else (focused, named, now)

    def _tab_named(self) -> Widget | None:
        """The stop :meth:`nowhere_said` names as the one Tab goes to."""
        focused = self.focused
        if focused is not None:
            return tab_goes_to(self, focused)
        left = self.left_field()
        if left is not None and left in self.focus_chain:
            return tab_goes_to(self, left)
        return tab_goes_to(self, None)

    def promised_tab(self) -> Widget | None:
        """The stop the last notice said Tab goes to, while that still holds: the notice
        may still be on screen, focus is where it was then, and the stop can take focus
        (taken once: the next Tab moves on as usual)."""
        promise, self._tab_promise = self._tab_promise, None
        if promise is None:
            return None
        was, named, at = promise
        if time.monotonic() - at > NOWHERE_NOTICE_S or self.focused is not was:
            return None
        return named if named in self.focus_chain else None

    def focus_next(self, selector: Any = "*") -> Any:
        """Tab: where the notice about keys that went nowhere said, else the next stop
        (from where :meth:`tab_starts_from` puts focus first)."""
        named = self.promised_tab()
        if named is not None:
            self.set_focus(named)
            return named
        self.tab_starts_from()
        return super().focus_next(selector)

    def tab_starts_from(self) -> None:
        """Before a Tab no notice decided: put focus where Tab goes on from (a step
        screen: the field Escape left)."""

    def typing_landed(self) -> None:
        """A key typed landed in a field: the notices saying keys went nowhere no longer
        apply and are taken down at once, and a key that goes nowhere next is said again
        at once (a new burst)."""
        self._tab_promise = None
        if not self._nowhere_shown:
            return
        shown, self._nowhere_shown = set(self._nowhere_shown), ()
        self._nowhere_said_at = -1e9
        app = self.app
        for notification in list(app._notifications):
            if notification.message in shown:
                app._unnotify(notification)

    def nowhere_said(self) -> str:
        """What a printable key that went nowhere says: on a button, table or list, that
        it takes no text and where Tab goes (and, when that is no field, the next field
        to type in); with nothing focused, where Tab goes (on from the field Escape left,
        named, or the first stop)."""
        lang, focused = self.notice_lang, self.focused
        if focused is not None:
            target = tab_goes_to(self, focused)
            said = t(
                "focus.no_text",
                lang,
                here=widget_name(focused, lang),
                next=widget_name(target, lang) if target is not None else "-",
            )
            if target is not None and not _types_text(target):
                chain = self.focus_chain
                index = chain.index(focused) if focused in chain else -1
                field = next((w for w in chain[index + 1 :] if _types_text(w)), None)
                if field is not None:
                    gap = "" if lang == "zh" else " "
                    said += gap + t("focus.next_field", lang, field=widget_name(field, lang))
            return said
        left = self.left_field()
        if left is not None and left in self.focus_chain:
            after, before = tab_goes_to(self, left), tab_goes_to(self, left, -1)
            assert after is not None and before is not None
            return t(
                "focus.nowhere_left",
                lang,
                left=widget_name(left, lang),
                next=widget_name(after, lang),
                previous=widget_name(before, lang),
            )
        return self.nothing_focused_said()

    def nothing_focused_said(self) -> str:
        """With nothing focused: typing goes nowhere, and Tab goes to the first stop."""
        lang = self.notice_lang
        first = tab_goes_to(self, None)
        if first is None:
            return t("focus.nowhere_no_stop", lang)
        return t("focus.nowhere", lang, next=widget_name(first, lang))
