"""Focus never falls to nowhere: a widget about to be hidden or removed hands focus on.

Printable keys are text (see ``help.typing``): with focus on nothing, a sentence typed
after pressing a button that goes away would be lost. :func:`hand_on_focus` moves focus
to the next focusable widget first, so the typing lands in the next field.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Button, Input, TextArea


def hand_on_focus(leaving: Widget) -> None:
    """Before ``leaving`` is hidden or removed: when focus is on it or inside it, focus the
    next focusable widget of the screen's focus chain that is outside it (wrapping round to
    the first). Nothing happens when focus is elsewhere or the widget is not on a screen."""
    try:
        screen = leaving.screen
    except Exception:
        return
    focused = screen.focused
    if focused is None or (focused is not leaving and leaving not in focused.ancestors):
        return
    chain = screen.focus_chain
    start = chain.index(focused) + 1 if focused in chain else 0
    for widget in chain[start:] + chain[:start]:
        if widget is not leaving and leaving not in widget.ancestors:
            widget.focus()
            return


def focus_next_field(after: Widget) -> None:
    """After ``after`` (an action button that stays on screen) did its work: focus the next
    text field of the screen's focus chain (an ``Input`` or ``TextArea``, wrapping round),
    so the next sentence typed lands in a field, after the text it holds, and Enter does not
    press the button again. Nothing happens when focus has already moved elsewhere or the screen has no field."""
    try:
        screen = after.screen
    except Exception:
        return
    if screen.focused is not None and screen.focused is not after:
        return
    # The button's action may have just stored a value in that field (D's verdict): show
    # it before the field takes focus, or what is typed next would replace it (a focused
    # field is never overwritten from the store).
    sync = getattr(screen, "sync_fields", None)
    if callable(sync):
        sync()
    chain = screen.focus_chain
    start = chain.index(after) + 1 if after in chain else 0
    for widget in chain[start:] + chain[:start]:
        if isinstance(widget, Input | TextArea) and not widget.disabled:
            widget.focus()
            cursor_to_end(widget)
            return


def cursor_to_end(field: Input | TextArea) -> None:
    """Put the cursor after the field's text: what is typed next is added to it."""
    if isinstance(field, Input):
        field.cursor_position = len(field.value)
    else:
        field.move_cursor(field.document.end)


class KeepsTextOnFocus(Screen[Any]):
    """A screen whose text fields keep their text when focused: Textual's ``Input`` selects
    all of it on focus, so the first key typed would replace a title or a time. Mixed into
    every screen that holds fields (the cursor goes to where it was, at the end at first)."""

    def set_focus(
        self, widget: Widget | None, scroll_visible: bool = True, from_app_focus: bool = False
    ) -> None:
        if isinstance(widget, Input):
            widget.select_on_focus = False
        super().set_focus(widget, scroll_visible=scroll_visible, from_app_focus=from_app_focus)


class SubmitsOnEnter(Screen[Any]):
    """Enter in a form's one-line field submits that form: it presses the form's button
    (which adds the row when the fields it needs are filled, and otherwise says what is
    missing), never a button or table elsewhere. A form its button emptied starts again
    at its first field.

    Subclasses list their forms in :attr:`FORMS` (a field that is in none of them keeps
    Enter to itself, as a time field does).
    """

    FORMS: ClassVar[tuple[tuple[tuple[str, ...], str], ...]] = ()
    """``((field ids, button id), …)``: the one-line fields of each form, first field
    first, and the button Enter in any of them presses."""
    _submitting: tuple[Input, tuple[str, ...], str] | None = None

    def form_of(self, field_id: str) -> tuple[tuple[str, ...], str] | None:
        """The form ``field_id`` belongs to (its fields and its button), if any."""
        return next((form for form in self.FORMS if field_id in form[0]), None)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        form = self.form_of(event.input.id or "")
        if form is None:
            return
        event.stop()
        fields, button_id = form
        button = self.query_one(f"#{button_id}", Button)
        if button.disabled or not button.display:
            return
        self._submitting = (event.input, fields, button_id)
        button.press()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Runs after the screen's own handler (Textual calls the subclass's first): when
        the press came from Enter in a field and emptied that field (the row was added),
        the next row is typed from the form's first field."""
        submitting, self._submitting = self._submitting, None
        if submitting is None or submitting[2] != event.button.id:
            return
        field, fields, _ = submitting
        if field.has_focus and not field.value:
            first = self.query_one(f"#{fields[0]}", Input)
            if first is not field:
                first.focus()
