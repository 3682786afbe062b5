"""Form fields bound to the incident: every edit goes straight into the session."""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from typing import Any, ClassVar

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widget import Widget
from textual.widgets import Input, Label, Static, TextArea

from cockpit.context import AppContext
from cockpit.i18n import t
from cockpit.session import TIME_FIELDS, check_time_order, recovery_disagrees
from cockpit.timeparse import TimeParseError, fmt_time, parse_time, reads_day_before


def example_times(ctx: AppContext) -> dict[str, str]:
    """Example times for hints, in the incident's clock (UTC, the time under investigation
    with ``--at`` or a replay), a quarter of an hour before it: ``{"hm": "20:45",
    "full": "2026-11-29 20:45"}`` for the message arguments ``{hm}`` and ``{full}``."""
    ex = ctx.clock.now() - timedelta(minutes=15)
    return {"hm": f"{ex:%H:%M}", "full": f"{ex:%Y-%m-%d %H:%M}"}


class TextInput(Input):
    """A one-line input whose edits can be undone (Ctrl+Z) and redone (Ctrl+Y), as
    Textual's ``TextArea`` does for the multi-line fields.

    What is typed key by key during one visit to the field (from focus to focus, however
    slowly) is one step: one Ctrl+Z puts back the text as it was when the field was
    entered. A change that removes or replaces more (select-all then a stray key, a paste
    over the text, a field cleared by a button) is a step of its own, so one Ctrl+Z brings
    the text back. Values set by the program are steps too (a time written out whole),
    except text loaded as the field's start (:meth:`load`: a ledger row to edit, the form
    emptied after a save), which Ctrl+Z never brings back. Leaving the field, a dialog
    opening over it, or Enter ends the step being typed (:meth:`end_burst`); Enter ends it
    at the Enter key itself, so what is typed after it, however fast, is a step of its own
    (a result saved on H, then typed on, is one Ctrl+Z from the saved text).
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+z,super+z", "undo", "Undo", show=False),
        Binding("ctrl+y,super+y,ctrl+shift+z", "redo", "Redo", show=False),
    ]

    UNDO_DEPTH = 200
    """Steps kept per field."""

    FOLLOWS_FOCUS_S = 2.0
    """Seconds after Enter during which what was typed after it follows focus when the
    Enter's form moves focus to another field (its handling takes milliseconds; a
    terminal's keys are all in by then)."""

    def __init__(self, value: str | None = None, *args: Any, **kw: Any) -> None:
        # Set before Input's own __init__, which may already run the value watcher.
        self._undo: list[str] = []
        self._redo: list[str] = []
        self._shown: str | None = None
        self._typing = False
        """The last change was a key typed during this visit (the next one joins its step)."""
        self._replaying = False
        self.entered: str | None = None
        """The text the field held when Enter was pressed, while that Enter's form is
        being saved (keys typed faster than the save are already in the field)."""
        self._own: str | None = None
        """The field's own text after the last Enter (what it held then, or what its form
        left in it); what follows was typed after that Enter. ``None`` once keys typed
        after it can no longer be taken elsewhere."""
        self._own_until = 0.0
        self.follow_to: Widget | None = None
        """The field the last Enter's form moved focus to: a key typed before the move
        that reaches this field after it goes there."""
        self._typed_in = False
        """Text typed after an Enter elsewhere was just put here: it and what is typed
        next are one step, and focus arriving does not end it."""
        super().__init__(value, *args, **kw)
        # The text the field starts with (an empty one runs no watcher): the first edit
        # can be undone back to it.
        self._shown = self.value

    def _watch_value(self, value: str) -> None:
        super()._watch_value(value)
        # A value the program writes (normalised, filled in, restored) leaves the cursor
        # after it, so what is typed next is added at the end, never into the middle of a
        # date. An edit by a key sets its own cursor right after this.
        self.cursor_position = len(value)
        before, self._shown = self._shown, value
        if before is None or value == before or self._replaying:
            return
        one_key = _one_key_apart(before, value)
        if not (self._undo and one_key and self._typing and self.has_focus):
            self._undo.append(before)
            del self._undo[: -self.UNDO_DEPTH]
        self._typing = one_key and self.has_focus
        self._redo.clear()

    def _on_focus(self, event: events.Focus) -> None:
        # A new visit: what is typed now is a new step. (Textual calls Input's own
        # handler as well.) Typing that followed focus here goes on as one step.
        self.follow_to = None
        if self._typed_in:
            self._typed_in = False
            return
        self.end_burst()

    def _on_blur(self, event: events.Blur) -> None:
        self.end_burst()
        self.entered = None

    async def _on_key(self, event: events.Key) -> None:
        target = self.follow_to
        following = target is not None and time.monotonic() <= self._own_until
        if following and target is not None and target.is_mounted and event.is_printable:
            # Typed before the form's Enter moved focus, handled after: it follows.
            event.stop()
            event.prevent_default()
            target.post_message(events.Key(event.key, event.character))
            return
        if not event.is_printable and event.key != "backspace":
            self.keep_typing()
        elif self.has_focus:
            typing_landed(self)

    def keep_typing(self) -> None:
        """What was typed after the last Enter is the field's own from now on: the user
        moved on (a key that is no text, Tab, an arrow, a command, or a click), so no
        focus move takes it elsewhere."""
        self._own = None

    async def action_submit(self) -> None:
        # What Enter submits is the text as it is now: keys typed right after Enter may
        # reach the field before the form's handler reads it. What is typed after the
        # Enter is a Ctrl+Z step of its own, from the very next key.
        self.entered = self.value
        self._own = self.value
        self._own_until = time.monotonic() + self.FOLLOWS_FOCUS_S
        self.end_burst()
        await super().action_submit()

    def rebase(self, own: str) -> str:
        """The form wrote ``own`` into the field while its Enter is handled: what was
        typed after that Enter (returned) stays after it, and still follows focus."""
        rest = self.typed_ahead()
        self.entered = None
        if self._own is not None:
            self._own = own
        return rest

    @property
    def follows_until(self) -> float:
        """Until when what was typed after the last Enter may follow focus."""
        return self._own_until

    def take_typed_ahead(self) -> str:
        """Focus moved on while the last Enter's form was handled: take out of the field
        what was typed after that Enter (returned, to be typed where focus went), as if it
        had never been typed here; keys still on their way here follow too."""
        own = self.own_text()
        self._own = None
        rest = self.value[len(own) :]
        if rest:
            if self._undo and self._undo[-1] == own:
                self._undo.pop()
            self._replay(own)
        return rest

    def own_text(self) -> str:
        """The field's text without what was typed after the last Enter while that
        typing may still follow focus elsewhere (its whole text otherwise)."""
        own = self._own
        if own is None or time.monotonic() > self._own_until or not self.value.startswith(own):
            return self.value
        return own

    def typed_in(self, text: str, until: float) -> None:
        """Put ``text`` typed after an Enter in another field at the cursor, as typing
        (it and the keys typed next are one Ctrl+Z step). Until ``until`` (the Enter's
        time to follow focus), it follows focus on again should the same Enter's handling
        move focus once more (H logs an experiment, then its result field takes focus)."""
        before = self.value
        at_end = self.cursor_position == len(before)
        self.insert_text_at_cursor(text)
        self._typing = True
        self._typed_in = True
        if at_end:
            self._own, self._own_until = before, until

    def typed_ahead(self) -> str:
        """What was typed after the last Enter while its form was being saved (``""``
        when nothing was, or no save is under way)."""
        entered = self.entered
        if entered is None or not self.value.startswith(entered):
            return ""
        return self.value[len(entered) :]

    def end_burst(self) -> None:
        """End the step being typed: what is typed next is a step of its own, one Ctrl+Z
        away from the text as it is now (focus moved, a dialog opened over the field)."""
        self._typing = False

    def load(self, value: str) -> None:
        """Show ``value`` as the field's starting text with no steps to undo: the text
        of another row loaded into a form (or the form emptied after it was saved) is
        not the user's typing in this field, so Ctrl+Z never brings it back here.

        While the text Enter submitted is being saved, what was typed after that Enter
        stays, after ``value``: the form emptied after a save keeps the next row's start."""
        value += self.rebase(value)
        self._replay(value)
        self._undo.clear()
        self._redo.clear()

    def _replay(self, value: str) -> None:
        self._replaying = True
        try:
            self.value = value
        finally:
            self._replaying = False
        self._shown = value
        self.cursor_position = len(value)
        self._typing = False

    def keep_for_undo(self, value: str) -> None:
        """Make ``value`` (the last value that was understood) what the next Ctrl+Z puts
        back, however the text was typed since: a field that could not be read is one
        Ctrl+Z away from its last good value."""
        if value != self.value:
            if not self._undo or self._undo[-1] != value:
                self._undo.append(value)
                del self._undo[: -self.UNDO_DEPTH]
            self._redo.clear()
        self._typing = False

    def action_undo(self) -> None:
        """Put back the text as it was before the last edit (or say there is none)."""
        if not self._undo:
            self.notify(t("field.nothing_to_undo", self._notice_lang()), markup=False)
            return
        self._redo.append(self.value)
        self._replay(self._undo.pop())

    def action_redo(self) -> None:
        """Do again the edit the last Ctrl+Z undid (or say there is none)."""
        if not self._redo:
            self.notify(t("field.nothing_to_redo", self._notice_lang()), markup=False)
            return
        self._undo.append(self.value)
        self._replay(self._redo.pop())

    def _notice_lang(self) -> str:
        ctx = getattr(self.app, "ctx", None)
        return str(getattr(ctx, "lang", None) or "en")


def typing_landed(field: Widget) -> None:
    """A key typed landed in ``field``: its screen takes down the notices about keys that
    went nowhere (:meth:`~cockpit.ui.nowhere.SaysWhereTypingGoes.typing_landed`)."""
    try:
        landed = getattr(field.screen, "typing_landed", None)
    except Exception:
        return
    if callable(landed):
        landed()


def entered_text(field: Input) -> str:
    """The text a form saves from ``field``: what it held when Enter was pressed while
    that Enter is being handled (not the keys typed since), else its own text now (what
    its form left in it, without what was typed after the Enter)."""
    if isinstance(field, TextInput):
        return field.entered if field.entered is not None else field.own_text()
    return field.value


def empty(field: Input) -> None:
    """Empty ``field`` after its form was saved (one Ctrl+Z brings its text back),
    keeping what was typed after the Enter that saved it."""
    rest = ""
    if isinstance(field, TextInput):
        rest = field.rebase("")
    field.value = rest


def write_back(field: Input, value: str) -> None:
    """Show ``value`` (the text Enter saved, written out in full) in ``field``, followed
    by what was typed after that Enter."""
    rest = ""
    if isinstance(field, TextInput):
        rest = field.rebase(value)
    field.value = value + rest


class ValueInput(TextInput):
    """A field that holds one value (a number of minutes, a time, a date, a setting's
    value), not prose.

    Reached with its value in it (Tab, a click), the first printable key typed, or a
    paste, replaces the value instead of being added to its end, so typing ``10`` into a
    field holding ``15`` gives ``10``, never ``1510``; one Ctrl+Z puts the value back.
    Moving the cursor first (Left, Right, Home, End, a click in the text) or Backspace /
    Delete edits the value in place as any field does.
    """

    def __init__(self, value: str | None = None, *args: Any, **kw: Any) -> None:
        self._replace_next = False
        """Focus arrived with a value in the field and no key was pressed since."""
        super().__init__(value, *args, **kw)

    def _on_focus(self, event: events.Focus) -> None:
        # Text typed after an Enter elsewhere that followed focus here is being typed on.
        self._replace_next = bool(self.value) and not self._typed_in

    def _on_blur(self, event: events.Blur) -> None:
        self._replace_next = False

    async def _on_click(self, event: events.Click) -> None:
        # A click puts the cursor where the value is to be edited.
        self._replace_next = False

    async def _on_key(self, event: events.Key) -> None:
        replace, self._replace_next = self._replace_next, False
        if replace and event.is_printable and event.character is not None:
            event.stop()
            event.prevent_default()
            self._replace_with(event.character)
            typing_landed(self)

    def _on_paste(self, event: events.Paste) -> None:
        replace, self._replace_next = self._replace_next, False
        if replace and event.text:
            event.stop()
            event.prevent_default()
            self._replace_with(event.text.splitlines()[0])

    def _replace_with(self, text: str) -> None:
        """Put ``text`` in place of the value, as the first step of this visit's typing
        (what is typed after it joins that step)."""
        before = self.value
        self.end_burst()
        self.replace(text, 0, len(before))
        if self.value != before:
            self._typing = True


def _one_key_apart(before: str, value: str) -> bool:
    """Whether ``value`` is ``before`` with one character inserted or deleted anywhere
    (what one typed key or Backspace does, at the end or in the middle)."""
    short, long = sorted((before, value), key=len)
    if len(long) - len(short) != 1:
        return False
    i = 0
    while i < len(short) and short[i] == long[i]:
        i += 1
    return long[i + 1 :] == short[i:]


class BoundInput(Vertical):
    """A labelled one-line input bound to a session text field (saved on every change)."""

    DEFAULT_CSS = """
    BoundInput { height: auto; margin: 0 0 0 0; }
    BoundInput > Label { color: $text-muted; }
    """

    def __init__(self, ctx: AppContext, field: str, label_key: str, **kw: Any) -> None:
        kw.setdefault("id", f"field-{field}")
        super().__init__(**kw)
        self.ctx = ctx
        self.field = field
        self.label_key = label_key

    def hint(self) -> str:
        """The grey text shown while the field is empty (the label's ``.hint`` message)."""
        return t(f"{self.label_key}.hint", self.ctx.lang, **example_times(self.ctx))

    def compose(self) -> ComposeResult:
        assert self.ctx.session is not None
        yield Label(t(self.label_key, self.ctx.lang))
        yield TextInput(
            value=self.ctx.session.get_text(self.field),
            placeholder=self.hint(),
            id=f"input-{self.field}",
            compact=True,
            classes="saves-as-typed",
        )

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        assert self.ctx.session is not None
        if self.ctx.session.get_text(self.field) != event.value:
            self.ctx.session.set_text(self.field, event.value)

    def sync(self) -> None:
        """Show the stored value when something else wrote it (a restore from the history);
        not while the field has focus (see :meth:`BoundTextArea.sync`)."""
        assert self.ctx.session is not None
        field = self.query_one(f"#input-{self.field}", Input)
        field.placeholder = self.hint()
        stored = self.ctx.session.get_text(self.field)
        if not field.has_focus and field.value != stored:
            field.value = stored


class ChangesNoteInput(BoundInput):
    """The free-text field for changes beyond those found automatically (A and B).

    Its hint follows what step B's changes view holds (:attr:`AppContext.changes_found`):
    the number it found from any source, that it found none, or, before it has read
    them, only where the found changes are listed. It never says changes were not
    found while B lists some.
    """

    def __init__(self, ctx: AppContext, **kw: Any) -> None:
        super().__init__(ctx, "recent_changes_note", "field.recent_changes_note", **kw)

    def hint(self) -> str:
        found = self.ctx.changes_found
        if found is None:
            return super().hint()
        if found == 0:
            return t("field.recent_changes_note.hint_none", self.ctx.lang)
        return t("field.recent_changes_note.hint_found", self.ctx.lang, count=found)


class BoundTextArea(Vertical):
    """A labelled multi-line field bound to a session text field.

    Subclasses bound to something other than a template field override :meth:`read` and
    :meth:`write` (never the event handler, so exactly one write happens per change).
    """

    DEFAULT_CSS = """
    BoundTextArea { height: auto; }
    BoundTextArea > Label { color: $text-muted; }
    BoundTextArea > TextArea { height: 4; }
    """

    def __init__(self, ctx: AppContext, field: str, label_key: str, **kw: Any) -> None:
        kw.setdefault("id", f"field-{field}")
        super().__init__(**kw)
        self.ctx = ctx
        self.field = field
        self.label_key = label_key

    def read(self) -> str:
        """The stored value."""
        assert self.ctx.session is not None
        return self.ctx.session.get_text(self.field)

    def write(self, value: str) -> None:
        """Store ``value`` (saved at once by the session)."""
        assert self.ctx.session is not None
        self.ctx.session.set_text(self.field, value)

    def input_id(self) -> str:
        """Id of the inner TextArea."""
        return f"input-{self.field}"

    def compose(self) -> ComposeResult:
        yield Label(t(self.label_key, self.ctx.lang))
        area = TextArea(self.read(), id=self.input_id(), soft_wrap=True, show_line_numbers=False)
        # A pause while typing does not split an edit into several Ctrl+Z steps (Textual
        # starts a new one after 2 s or 100 characters); a new line, a paste or leaving
        # the field still does.
        area.history.checkpoint_timer = float("inf")
        area.history.checkpoint_max_characters = 1_000_000
        yield area

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        event.stop()
        if event.text_area.has_focus:
            typing_landed(event.text_area)
        value = event.text_area.text
        if self.read() != value:
            self.write(value)

    def sync(self) -> None:
        """Show the stored value when something else wrote it (a panel's "use this"
        button). Not while the field has focus: what is typed reaches the store through
        the field's Changed message, which may still be queued, so a difference there is
        typing in flight, not another writer."""
        area = self.query_one(f"#{self.input_id()}", TextArea)
        if area.has_focus:
            return
        stored = self.read()
        if area.text != stored:
            area.load_text(stored)


class TimesForm(Vertical):
    """开始 / 检测 / 缓解 / 恢复时间 with parsing and ordering validation.

    Each time is a labelled, bordered field; a time that cannot be read keeps the typed
    text in its field, is not saved, and says so right under that field (and, with the
    forms it may be written in, in the line under the row).
    """

    DEFAULT_CSS = """
    TimesForm { height: auto; }
    TimesForm Horizontal { height: auto; }
    TimesForm.-narrow #times-row { layout: grid; grid-size: 2; grid-rows: auto; }
    TimesForm .time-cell Input { padding: 0 1; }
    TimesForm .time-cell { width: 1fr; height: auto; margin: 0 1 0 0; }
    TimesForm .time-cell Label { color: $text-muted; }
    TimesForm .time-cell Input { width: 1fr; }
    TimesForm .time-cell .time-refused { color: $error; height: auto; }
    TimesForm #times-problems { color: $error; height: auto; }
    TimesForm #times-problems.-ok { color: $success; }
    TimesForm Input.-invalid { border: tall $error; }
    """

    NARROW_BELOW = 104
    """Columns under which the four times are shown two per row (each needs 20 for the
    time, 2 for padding, 2 for the border and 2 between)."""

    def __init__(self, ctx: AppContext, **kw: Any) -> None:
        kw.setdefault("id", "times-form")
        super().__init__(**kw)
        self.ctx = ctx
        self.unparsed: dict[str, str] = {}
        self.day_before: dict[str, tuple[str, datetime]] = {}
        """Times of day typed later than the incident clock, read as the day before's:
        ``{field: (typed, read as)}``, said under the fields until the next edit."""
        """Times typed but not understood (kept on screen as errors, not saved)."""

    def compose(self) -> ComposeResult:
        assert self.ctx.session is not None
        times = self.ctx.session.incident.times
        placeholder = t("times.placeholder", self.ctx.lang, **example_times(self.ctx))
        with Horizontal(id="times-row"):
            for name in TIME_FIELDS:
                with Vertical(classes="time-cell"):
                    yield Label(t(f"times.{name}", self.ctx.lang))
                    # Bordered (not compact) so the four times read as fields to type into.
                    yield ValueInput(
                        value=fmt_time(getattr(times, name)),
                        placeholder=placeholder,
                        id=f"time-{name}",
                        classes="saves-as-typed",
                    )
                    yield Static(
                        "", id=f"time-{name}-refused", classes="time-refused", markup=False
                    )
        yield Static("", id="times-problems", markup=False)

    def on_mount(self) -> None:
        self._show_problems()

    def on_resize(self, event: events.Resize) -> None:
        # Four times side by side need NARROW_BELOW columns to show a whole
        # "2026-11-29 12:40:00Z"; narrower, they go two by two.
        self.set_class(event.size.width < self.NARROW_BELOW, "-narrow")
        self.call_after_refresh(self._fit_placeholders)

    def _fit_placeholders(self) -> None:
        """Each field's example is the longest form that fits the field whole (all three
        forms, then the full time, then the time of day): an example is never cut."""
        examples = example_times(self.ctx)
        forms = [
            t(key, self.ctx.lang, **examples)
            for key in ("times.placeholder", "times.placeholder_full", "times.placeholder_hm")
        ]
        for name in TIME_FIELDS:
            field = self.query_one(f"#time-{name}", Input)
            room = field.content_region.width
            if room <= 0:
                continue
            field.placeholder = next((f for f in forms if cell_len(f) < room), forms[-1])

    def sync(self) -> None:
        """Show the stored times when another screen changed them (A and I both show
        them); a field being edited, or holding text that could not be read, is left."""
        assert self.ctx.session is not None
        times = self.ctx.session.incident.times
        for name in TIME_FIELDS:
            widget = self.query_one(f"#time-{name}", Input)
            if widget.has_focus or name in self.unparsed:
                continue
            shown = fmt_time(getattr(times, name))
            if widget.value != shown:
                widget.value = shown
        self._show_problems()

    def set_time(self, name: str, value: datetime | None, source: str) -> None:
        """Set a time programmatically (e.g. the first SLO breach) and show it; ``source``
        is where cockpit read it (:meth:`cockpit.session.IncidentSession.set_time`)."""
        assert self.ctx.session is not None
        self.ctx.session.set_time(name, value, source=source)
        self.query_one(f"#time-{name}", Input).value = fmt_time(value)
        self._show_problems()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self._apply(event.input)

    def on_input_changed(self, event: Input.Changed) -> None:
        # Ctrl+Z back to the stored time: the text is understood again.
        name = (event.input.id or "")[5:]
        if name not in self.unparsed or self.ctx.session is None:
            return
        if event.value.strip() == fmt_time(getattr(self.ctx.session.incident.times, name)):
            self.unparsed.pop(name)
            event.input.remove_class("-invalid")
            self._show_problems()

    def on_input_blurred(self, event: Input.Blurred) -> None:
        self._apply(event.input)

    def _apply(self, widget: Input) -> None:
        if not (widget.id or "").startswith("time-"):
            return
        assert self.ctx.session is not None
        name = (widget.id or "")[5:]
        text = entered_text(widget).strip()
        current = getattr(self.ctx.session.incident.times, name)
        self.unparsed.pop(name, None)
        self.day_before.pop(name, None)
        widget.remove_class("-invalid")
        if not text:
            if current is not None:
                self.ctx.session.set_time(name, None)
            self._show_problems()
            return
        try:
            # A time of day is read on the incident clock (the instant investigated,
            # running on): "15:11" typed at its 15:12 is today's, not yesterday's.
            clock = self.ctx.clock.logged()
            value = parse_time(text, clock)
        except TimeParseError:
            self.unparsed[name] = text
            widget.add_class("-invalid")
            if isinstance(widget, TextInput):
                widget.keep_for_undo(fmt_time(current))
            self._show_problems()
            return
        if reads_day_before(text, clock):
            self.day_before[name] = (text, value)
        if value != current:
            self.ctx.session.set_time(name, value)
        write_back(widget, fmt_time(value))
        self._show_problems()

    def _show_problems(self) -> None:
        assert self.ctx.session is not None
        for name in TIME_FIELDS:
            refused = self.query_one(f"#time-{name}-refused", Static)
            text = self.unparsed.get(name)
            refused.update("" if text is None else t("times.refused", self.ctx.lang, text=text))
            refused.display = text is not None
        times = self.ctx.session.incident.times
        problems = check_time_order({k: getattr(times, k) for k in TIME_FIELDS})
        lines = [
            t(
                "times.unparsed_field",
                self.ctx.lang,
                **example_times(self.ctx),
                field=t(f"times.{name}", self.ctx.lang),
                text=text,
            )
            for name, text in self.unparsed.items()
        ]
        lines += [
            t(
                "times.day_before",
                self.ctx.lang,
                field=t(f"times.{name}", self.ctx.lang),
                text=typed,
                at=fmt_time(value),
                now=fmt_time(self.ctx.clock.logged()),
            )
            for name, (typed, value) in self.day_before.items()
            if getattr(times, name) == value  # not replaced since (a button, F8)
        ]
        inc = self.ctx.session.incident
        if recovery_disagrees(times.recover, inc.recovery):
            checked = fmt_time(inc.recovery.checked_at) or "—"
            lines.append(t("times.recover_unconfirmed", self.ctx.lang, at=checked))
        if problems or lines:
            for p in problems:
                later, earlier = p.split("<")
                lines.append(
                    t(
                        "times.order_problem",
                        self.ctx.lang,
                        later=t(f"times.{later}", self.ctx.lang),
                        earlier=t(f"times.{earlier}", self.ctx.lang),
                    )
                )
            self._show("⚠ " + "; ".join(lines), ok=False)
        else:
            self._show("", ok=True)

    def _show(self, text: str, ok: bool) -> None:
        widget = self.query_one("#times-problems", Static)
        widget.update(text)
        widget.display = bool(text)
        widget.set_class(ok, "-ok")
