"""Focus never falls to nowhere: a widget about to be hidden or removed hands focus on.

Printable keys are text (see ``help.typing``): with focus on nothing, a sentence typed
after pressing a button that goes away would be lost. :func:`hand_on_focus` moves focus
to the next focusable widget first, so the typing lands in the next field.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual import events
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Button, Input, OptionList, TextArea

from cockpit.i18n import t
from cockpit.ui.fields import TextInput, entered_text


def hand_on_focus(leaving: Widget) -> None:
    """Before ``leaving`` is hidden or removed: when focus is on it or inside it, focus the
    next focusable widget of the screen's focus chain that is outside it and is not a field
    holding text (wrapping round to the first). Nothing happens when focus is elsewhere or the widget is not on a screen."""
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
        if widget is not leaving and leaving not in widget.ancestors and not holds_text(widget):
            widget.focus()
            return


def holds_text(widget: Widget) -> bool:
    """Whether ``widget`` is a text field that already holds text: focus moved there by an
    action would glue the next sentence typed onto text the user did not just type."""
    if isinstance(widget, Input):
        return bool(widget.value)
    return isinstance(widget, TextArea) and bool(widget.text)


def focus_next_field(after: Widget) -> None:
    """After ``after`` (an action button that stays on screen) did its work: focus the next
    EMPTY text field of the screen's focus chain (an ``Input`` or ``TextArea``, wrapping
    round), or when every field holds text, the next widget after the button that is not a
    field: the next sentence typed never lands glued onto text the user did not type (a
    verdict the button just wrote), and Enter does not press the button again. Nothing
    happens when focus has already moved elsewhere."""
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
    rest = [w for w in chain[start:] + chain[:start] if w is not after and not w.disabled]
    empty = [w for w in rest if isinstance(w, Input | TextArea) and not holds_text(w)]
    if empty:
        empty[0].focus()
        return
    following = [w for w in chain[start:] if w is not after and not holds_text(w)]
    if following:
        following[0].focus()


def cursor_to_end(field: Input | TextArea) -> None:
    """Put the cursor after the field's text: what is typed next is added to it."""
    if isinstance(field, Input):
        field.cursor_position = len(field.value)
    else:
        field.move_cursor(field.document.end)


class KeepsTextOnFocus(Screen[Any]):
    """A screen whose text fields keep their text when focused: Textual's ``Input`` selects
    all of it on focus, so the first key typed would replace a title or a time. Mixed into
    every screen that holds fields. A field holding text that takes focus (Tab, Escape then
    Tab) has its cursor after its text, never inside it: what is typed next is added at its
    end, where it shows, one Ctrl+Z from the text it had (the rule of ``help.typing``).
    A list that takes focus shows its cursor row (:func:`show_cursor_row`)."""

    def set_focus(
        self, widget: Widget | None, scroll_visible: bool = True, from_app_focus: bool = False
    ) -> None:
        if isinstance(widget, Input):
            widget.select_on_focus = False
        leaving = self.focused
        arriving = widget is not None and widget is not self.focused
        super().set_focus(widget, scroll_visible=scroll_visible, from_app_focus=from_app_focus)
        if arriving and isinstance(widget, Input | TextArea) and holds_text(widget):
            cursor_to_end(widget)
        if arriving and isinstance(leaving, TextInput) and isinstance(widget, Input | TextArea):
            typing_follows_focus(leaving, widget)
        show_cursor_row(widget)

    def _forward_event(self, event: events.Event) -> None:
        # A click moves focus itself: what was typed after an Enter stays where it was.
        if isinstance(event, events.MouseDown) and isinstance(self.focused, TextInput):
            self.focused.keep_typing()
        super()._forward_event(event)

    def on_screen_suspend(self, event: events.ScreenSuspend) -> None:
        """A dialog opened over the screen (F8, F6, F2…): the typing before it is a
        Ctrl+Z step of its own, apart from what is typed when the dialog closes (the
        field keeps focus underneath, so no focus change ends the step)."""
        end_typing_steps(self)


def typing_follows_focus(leaving: TextInput, field: Input | TextArea) -> None:
    """Focus moved from ``leaving`` to ``field``: when the move is the work of the Enter
    just pressed in ``leaving`` (a form that refused takes focus to its missing field, a
    form emptied is typed again from its first), what was typed after that Enter is taken
    out of ``leaving`` and typed at ``field``'s cursor, in order, once; the keys still on
    their way to ``leaving`` follow it. A move the user made (Tab or any key that is no
    text, a click) leaves what was typed where it was typed: that key or click already
    made it the field's own (:meth:`~cockpit.ui.fields.TextInput.keep_typing`)."""
    text = leaving.take_typed_ahead()
    if not text:
        return
    leaving.follow_to = field
    if isinstance(field, TextInput):
        field.typed_in(text, leaving.follows_until)
    elif isinstance(field, Input):
        field.insert_text_at_cursor(text)
    else:
        field.insert(text)


def end_typing_steps(screen: Screen[Any]) -> None:
    """End the Ctrl+Z step being typed in every field of ``screen``."""
    for field in screen.query(TextInput):
        field.end_burst()
    for area in screen.query(TextArea):
        area.history.checkpoint()


def show_cursor_row(widget: Widget | None) -> None:
    """A list that takes focus shows its cursor row at once: an ``OptionList`` highlights
    nothing until an arrow key is pressed, so a row action (Alt+S marks a change) would act
    on no row, or on one the eye cannot see. The first row is the cursor until one is
    chosen. (A ``DataTable``'s cursor row is always drawn.)"""
    if isinstance(widget, OptionList) and widget.highlighted is None and widget.option_count:
        widget.action_first()


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
    _before_press: tuple[str, list[str]] | None = None
    """The button being pressed and its form's text just before any handler ran."""

    def form_text(self, fields: tuple[str, ...]) -> list[str]:
        """What each field of a form holds for saving (its text at Enter, see
        :func:`~cockpit.ui.fields.entered_text`)."""
        return [entered_text(self.query_one(f"#{fid}", Input)) for fid in fields]

    async def _on_message(self, message: Message) -> None:
        # The form's text before the screen's own handler saves (and empties) it: only a
        # form left as it was refused, and only that one says what it is missing.
        if isinstance(message, Button.Pressed):
            form = next((f for f in self.FORMS if f[1] == message.button.id), None)
            self._before_press = None
            if form is not None:
                self._before_press = (form[1], self.form_text(form[0]))
        await super()._on_message(message)

    def form_of(self, field_id: str) -> tuple[tuple[str, ...], str] | None:
        """The form ``field_id`` belongs to (its fields and its button), if any."""
        return next((form for form in self.FORMS if field_id in form[0]), None)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        form = self.form_of(event.input.id or "")
        if form is None:
            from cockpit.ui.enter_saves import say_saved

            say_saved(self, event.input, str(getattr(self, "lang", "en")))
            return
        event.stop()
        fields, button_id = form
        button = self.query_one(f"#{button_id}", Button)
        if button.disabled or not button.display:
            return
        self._submitting = (event.input, fields, button_id)
        button.press()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Runs after the screen's own handler (Textual calls the subclass's first). When
        focus is in the form or on its button: a form its button emptied (the row was
        added) is typed again from its first field, and a form that refused (a required
        field is missing) takes focus to that missing field, so what is typed next fills
        it instead of being added to the text of another."""
        submitting, self._submitting = self._submitting, None
        before, self._before_press = self._before_press, None
        form = next((f for f in self.FORMS if f[1] == event.button.id), None)
        if form is None:
            return
        fields, button_id = form
        now = self.form_text(fields)
        if submitting is not None and isinstance(submitting[0], TextInput):
            submitting[0].entered = None  # the Enter is handled: the field's text is its own
        focused = self.focused
        inputs = [self.query_one(f"#{fid}", Input) for fid in fields]
        if focused is not event.button and focused not in inputs:
            return
        # A form its button changed was taken (the row added, the form emptied): only a
        # form left as it was is missing something.
        taken = before is not None and before[0] == button_id and before[1] != now
        missing = [
            w
            for w, text in zip(inputs, now, strict=True)
            if w.id in self.REQUIRED and not text.strip()
        ]
        if missing and not taken:
            self.show_missing(missing[0])
            return
        if missing:
            # The row was added and the form emptied: the next one is typed from its first
            # empty required field, without a notice (nothing was refused); what was
            # typed after the Enter follows focus there (:func:`typing_follows_focus`).
            if self.focused is not missing[0]:
                missing[0].focus()
            return
        if submitting is not None and submitting[2] == button_id:
            field = submitting[0]
            if field.has_focus and not entered_text(field) and inputs[0] is not field:
                inputs[0].focus()

    REQUIRED: ClassVar[frozenset[str]] = frozenset()
    """Ids of the form fields a row cannot be added without (its first empty one takes
    focus after the button is pressed)."""

    def show_missing(self, field: Input) -> None:
        """A form refused for want of ``field``: it takes focus, scrolled into sight
        however far down the step the form is, and a notice names it."""
        show = getattr(self, "show_focused", None)
        if callable(show):
            show(field)
        else:
            field.focus()
        lang = str(getattr(self, "lang", "en"))
        self.notify(
            t("form.missing_field", lang, field=stop_name(field)),
            severity="warning",
            markup=False,
        )


def stop_name(widget: Widget) -> str:
    """The name a person reads on screen for a Tab stop: a button's label, a field's own
    label (the ``Label`` just above it, or its border title), else its grey example
    text; a table or list's border title or the section title above it. Cut to 60
    characters; ``""`` when nothing on screen names it."""
    from textual.containers import ScrollableContainer
    from textual.widgets import DataTable, Label, Select, Static
    from textual.widgets._collapsible import CollapsibleTitle

    name = ""
    if isinstance(widget, Button):
        name = str(widget.label)
    if isinstance(widget, CollapsibleTitle):
        name = str(widget.label)
    if not name and widget.border_title:
        name = str(widget.border_title)
    is_field = isinstance(widget, Input | TextArea)
    if not name:
        node: Widget | None = widget
        # The label just above the widget or above the box it sits in (H's cells).
        for _ in range(3):
            if node is None or node.parent is None:
                break
            siblings = list(node.parent.children)
            before = siblings[: siblings.index(node)]
            shown = [w for w in before if isinstance(w, Label | Static) and w.display]
            others = [w for w in before if w.display and not isinstance(w, Label | Static)]
            if others and shown and before.index(others[-1]) > before.index(shown[-1]):
                # Another stop (a table) sits between the field and the text above: that
                # text names it, not the field (A's note field under the timeline).
                break
            if shown and isinstance(shown[-1], Label):
                name = str(shown[-1].render()).strip()
                break
            if shown and "section" in shown[-1].classes:
                name = str(shown[-1].render()).strip()
                break
            titles = [w for w in shown if "section" in w.classes]
            if titles and isinstance(widget, DataTable) and node is widget:
                # A table under its section's text (F's findings above its rows): the
                # section's title names it.
                name = str(titles[-1].render()).strip()
                break
            node = node.parent if isinstance(node.parent, Widget) else None
            if node is not None and is_field and _holds_other_fields(node, widget):
                # A row of fields under one label (I's action items, A's error sample):
                # that label names the row, each field is named by its own words.
                break
    if not name and isinstance(widget, Input):
        name = widget.placeholder
    if not name and isinstance(widget, Select):
        name = str(widget.prompt)  # what the drop-down shows while nothing is chosen
    if not name and isinstance(widget, ScrollableContainer) and widget.parent is not None:
        # A box that takes focus only to scroll: named by the title above it.
        siblings = list(widget.parent.children)
        labels = [w for w in siblings[: siblings.index(widget)] if isinstance(w, Label)]
        if labels and labels[-1].display:
            name = str(labels[-1].render()).strip()
    if not name:
        # A stop inside a titled panel (the golden-signal rows): the panel's title.
        for outer in widget.ancestors:
            if isinstance(outer, Widget) and outer.border_title:
                name = str(outer.border_title)
                break
    title_key = getattr(widget.screen, "DIALOG_TITLE_KEY", "") if widget.is_attached else ""
    if not name and title_key:
        # The one list or table of a dialog: the dialog's title (F8's changes, Ctrl+G's
        # steps).
        from cockpit.i18n import t

        ctx = getattr(widget.app, "ctx", None)
        name = t(title_key, str(getattr(ctx, "lang", None) or "en"))
    name = " ".join(name.split())
    return name if len(name) <= 60 else name[:59] + "…"


def _holds_other_fields(box: Widget, field: Widget) -> bool:
    """Whether ``box`` holds a text field other than ``field``."""
    return any(w is not field for w in box.query(Input)) or any(
        w is not field for w in box.query(TextArea)
    )


def widget_name(widget: Widget, lang: str) -> str:
    """The name a notice gives ``widget``: what the screen shows for it
    (:func:`stop_name`), else what kind of widget it is, in ``lang`` ("the button",
    "表格"). Never a class name or an id."""
    from textual.containers import ScrollableContainer
    from textual.widgets import Checkbox, DataTable, RadioButton, Select, Switch

    from cockpit.i18n import t

    name = stop_name(widget)
    if name:
        return name
    kinds: list[tuple[type[Widget] | tuple[type[Widget], ...], str]] = [
        (Button, "button"),
        (DataTable, "table"),
        (OptionList, "list"),
        (Select, "dropdown"),
        ((Checkbox, RadioButton, Switch), "checkbox"),
        ((Input, TextArea), "field"),
        (ScrollableContainer, "scroll"),
    ]
    kind = next((k for cls, k in kinds if isinstance(widget, cls)), "other")
    return t(f"focus.kind.{kind}", lang)
