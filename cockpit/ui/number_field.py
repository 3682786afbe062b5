"""A field that takes one whole number in a range (I's hold period in minutes).

Words typed into it are never turned into a number: a key that is no digit is refused
with a notice that says what the field takes and where text goes, and the digits typed
with it in the same run of keys (``Cordoned node 10 at 7:93``) are taken back and
refused with it, so the number is the one it had before that sentence. A number outside
the range is refused as well, said with the range, and never quietly replaced by the
nearest one allowed.
"""

from __future__ import annotations

import time
from typing import Any

from textual import events
from textual.widgets import Input, TextArea

from cockpit.i18n import t
from cockpit.ui.fields import ValueInput, entered_text, write_back
from cockpit.ui.keys import TYPING_RUN_GAP_S


class NumberInput(ValueInput):
    """A one-value field holding a whole number from ``low`` to ``high``, counted in the
    unit named by the i18n key ``unit_key`` ("minutes")."""

    RUN_GAP_S = TYPING_RUN_GAP_S
    """A refused key refuses the digits of its run of typing too."""

    def __init__(
        self, value: str | None = None, *, low: int, high: int, unit_key: str, **kw: Any
    ) -> None:
        self.low, self.high, self.unit_key = low, high, unit_key
        self._last_key_at = -1e9
        self._run_start: str | None = None
        """The value before the run of keys being typed."""
        self._refusing_until = -1e9
        """Keys until then are refused: the rest of a sentence typed into the field."""
        self._refused = ""
        """The key (or pasted text) being refused, to name it in the notice."""
        self._replace_at_run_start = False
        """Whether the run's first key was to replace the value: a refused run counts for
        nothing, so the next number typed still replaces it (``10``, never ``1510``)."""
        super().__init__(value, type="integer", **kw)

    @property
    def _lang(self) -> str:
        return self._notice_lang()

    async def _on_key(self, event: events.Key) -> None:
        if not (event.is_printable and event.character is not None):
            return
        now = time.monotonic()
        if now - self._last_key_at > self.RUN_GAP_S:
            self._run_start = self.value
            self._replace_at_run_start = self._replace_next
        self._last_key_at = now
        if now <= self._refusing_until:
            # The rest of a sentence refused a moment ago: its digits are not a number.
            event.stop()
            event.prevent_default()
            self._refusing_until = now + self.RUN_GAP_S
            return
        self._refused = event.character

    def _on_paste(self, event: events.Paste) -> None:
        self._run_start = self.value
        self._replace_at_run_start = self._replace_next
        self._refused = event.text.splitlines()[0] if event.text else ""

    def restricted(self) -> None:
        """A key (or a paste) that would make the text no whole number: refused, the
        digits typed with it in the same run are taken back, and a notice says so (once
        per run)."""
        now = time.monotonic()
        said = now <= self._refusing_until
        self._refusing_until = now + self.RUN_GAP_S
        if self._run_start is not None and self.value != self._run_start:
            self.value = self._run_start  # one Ctrl+Z brings the digits back
        if self._run_start is not None and self.value == self._run_start:
            self._replace_next = self._replace_at_run_start
        if said:
            return
        lang = self._lang
        from cockpit.ui.focus import widget_name

        text_field = self._next_text_field()
        where = (
            t("number.text_goes", lang, next=widget_name(text_field, lang))
            if text_field is not None
            else ""
        )
        self.notify(
            t(
                "number.refused_key",
                lang,
                field=widget_name(self, lang),
                unit=t(self.unit_key, lang),
                low=self.low,
                high=self.high,
                key=self._refused,
                value=self.value or "—",
            )
            + ("" if lang == "zh" or not where else " ")
            + where,
            severity="warning",
            markup=False,
        )

    def _next_text_field(self) -> Input | TextArea | None:
        """The next field of the screen's focus chain that takes words (not one value)."""
        try:
            chain = self.screen.focus_chain
        except Exception:
            return None
        start = chain.index(self) + 1 if self in chain else 0
        for widget in chain[start:] + chain[:start]:
            if isinstance(widget, TextArea) or (
                isinstance(widget, Input) and not isinstance(widget, ValueInput)
            ):
                return widget
        return None

    def number(self, kept: int) -> int | None:
        """The number the field holds, or ``None`` when it is no number in the range: then
        a notice names the range, the field shows ``kept`` again (one Ctrl+Z brings the
        text typed back) and ``kept`` stays the value."""
        text = entered_text(self).strip()
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is not None and self.low <= value <= self.high:
            return value
        from cockpit.ui.focus import widget_name

        lang = self._lang
        write_back(self, str(kept))
        self.notify(
            t(
                # an emptied field is no number outside the range: it is no number at all
                "number.empty" if not text else "number.out_of_range",
                lang,
                field=widget_name(self, lang),
                unit=t(self.unit_key, lang),
                low=self.low,
                high=self.high,
                text=text,
                value=kept,
            ),
            severity="warning",
            markup=False,
        )
        return None
