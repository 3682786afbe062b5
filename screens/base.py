"""Base of every flowchart step screen: header, stepper, the seed's guidance for the step,
the step's own body, the plugin panels registered for the step, and notes.

Screens are thin: they compose widgets and panels, call analysis, and write to the session.
They do no I/O of their own.
"""

from __future__ import annotations

import time
from itertools import pairwise
from typing import Any, ClassVar

from textual import events
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from cockpit.context import AppContext
from cockpit.flow import step
from cockpit.i18n import t
from cockpit.incident import Mode
from cockpit.ui.fields import BoundTextArea
from cockpit.ui.focus import KeepsTextOnFocus, SubmitsOnEnter
from cockpit.ui.footer import CockpitFooter
from cockpit.ui.frames import mark_after_paint
from cockpit.ui.keys import localize_bindings
from cockpit.ui.messages import IncidentChanged
from cockpit.ui.nowhere import SaysWhereTypingGoes
from cockpit.ui.stepper import Stepper
from cockpit.ui.worker_errors import ContainsWorkerErrors


class StepNotes(BoundTextArea):
    """Free notes for the step, stored in ``incident.step_notes``."""

    def __init__(self, ctx: AppContext, step_id: str) -> None:
        self.step_id = step_id
        super().__init__(ctx, f"notes-{step_id}", "screen.notes", id=f"notes-{step_id}")

    def read(self) -> str:
        assert self.ctx.session is not None
        return self.ctx.session.incident.step_notes.get(self.step_id, "")

    def write(self, value: str) -> None:
        assert self.ctx.session is not None
        self.ctx.session.set_step_note(self.step_id, value)


NOTICE_S = 4.0
"""How long a notice about a chord that found nothing stays (seconds); the chord pressed
again meanwhile does not stack a second one."""
TITLE_CHARS = 60
TITLE_LEAST = 28
"""On a narrow screen the title keeps at least this many characters: the model's name
leaves the title bar first (:meth:`StepScreen.title_line`)."""
"""The incident title is cut to this many characters in the title bar (the export keeps
it whole)."""


class StepBody(VerticalScroll):
    """The step's scrolled page. Keys that scroll it (Down/Up, PageDown/PageUp,
    Home/End, reaching it from a focused field or button that does not take them)
    scroll at once and then keep focus in sight (:meth:`StepScreen.keep_focus_in_view`)."""

    def _scroll(self, sign: int, scroll: Any) -> None:
        """Scroll at once with ``scroll`` and then keep focus in sight: the regions laid
        out before the scroll, moved by how far it went, say what is in sight now.

        A scroll still under way (focus moved to a field scrolls it to the middle of the
        page, animated) first ends where it was going and the page is laid out there:
        the regions read are then the ones at the position the key scrolls from, never
        a frame of the animation behind it."""
        animator = self.app.animator
        if animator.is_being_animated(self, "scroll_y"):
            animator.force_stop_animation(self, "scroll_y")
            self.call_after_refresh(self._scroll_laid_out, sign, scroll)
            return
        self._scroll_laid_out(sign, scroll)

    def _scroll_laid_out(self, sign: int, scroll: Any) -> None:
        before = self.scroll_y
        screen = self.screen
        laid_out = {w: w.region for w in screen.focus_chain}

        def scrolled() -> None:
            if isinstance(screen, StepScreen):
                screen.keep_focus_in_view(sign, round(self.scroll_y - before), laid_out)

        scroll(animate=False, on_complete=scrolled)

    def action_scroll_down(self) -> None:
        if not self.allow_vertical_scroll:
            raise SkipAction()
        self._scroll(1, self.scroll_down)

    def action_scroll_up(self) -> None:
        if not self.allow_vertical_scroll:
            raise SkipAction()
        self._scroll(-1, self.scroll_up)

    def action_page_down(self) -> None:
        if not self.allow_vertical_scroll:
            raise SkipAction()
        self._scroll(1, self.scroll_page_down)

    def action_page_up(self) -> None:
        if not self.allow_vertical_scroll:
            raise SkipAction()
        self._scroll(-1, self.scroll_page_up)

    def action_scroll_home(self) -> None:
        self._scroll(-1, self.scroll_home)

    def action_scroll_end(self) -> None:
        self._scroll(1, self.scroll_end)


class StepScreen(ContainsWorkerErrors, SaysWhereTypingGoes, SubmitsOnEnter, KeepsTextOnFocus):
    """A flowchart step. Subclasses set ``STEP`` and implement :meth:`compose_step`."""

    DEFAULT_CSS = """
    StepScreen #title-bar {
        height: 1; background: $primary; color: $text; padding: 0 1;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    StepScreen #guide { color: $text-muted; margin: 0 0 1 0; }
    StepScreen #step-body { padding: 0 1; }
    StepScreen .section { text-style: bold; margin: 1 0 0 0; color: $accent; }
    StepScreen .hint { color: $text-muted; }
    StepScreen .error { color: $error; }
    """

    BINDINGS: ClassVar[list[Any]] = [
        Binding("escape", "leave_field", "Leave the field", show=False),
        # With nothing focused the page still scrolls (a focused field passes these keys
        # up to the page itself).
        Binding("pagedown", "page(1)", show=False),
        Binding("pageup", "page(-1)", show=False),
        Binding("down", "line(1)", show=False),
        Binding("up", "line(-1)", show=False),
        # A long step's sections are a key apart (A's timeline note is not thirty Tabs).
        Binding("ctrl+down", "next_section", "Next section", show=False),
        Binding("ctrl+up", "previous_section", "Previous section", show=False),
    ]
    AUTO_FOCUS = ""
    """Nothing has focus when a step opens: the first Tab lands on its first field."""

    STEP: ClassVar[str] = ""
    PANELS_FIRST: ClassVar[bool] = False
    """Show the plugin panels above the step's own widgets (the data comes first)."""

    def __init__(self, ctx: AppContext) -> None:
        super().__init__(name=f"step-{self.STEP}")
        self.ctx = ctx
        self._seen_version: int | None = None
        """The app's ``incident_version`` this screen last showed (``None`` before it was
        first shown)."""
        self._left_field: Widget | None = None
        """The field Escape left last (Tab goes on from it)."""
        self._arriving = False
        """Shown next by navigation: open at the top with nothing focused."""
        self._no_section_said = -NOTICE_S
        """When the "no section further" notice was last shown (monotonic seconds)."""
        self.ledger_editors: list[Any] = []
        """The screen's :class:`~cockpit.ui.ledger.LedgerEditor` s (they add themselves)."""
        localize_bindings(self, ctx.lang)

    @property
    def lang(self) -> str:
        """UI language."""
        return self.ctx.lang

    def title_line(self, width: int | None = None) -> str:
        """``[mode] <incident> · <service> · cockpit``: what matters first. The incident's
        title is cut so that the line fits ``width`` cells (default: the screen's, less
        the bar's padding) with the mode and the service in sight: on a screen too narrow
        for all of it the trailing app name goes first, then the service's model (the
        namespace and deployment stay), so the title keeps :data:`TITLE_LEAST`
        characters."""
        from rich.cells import cell_len
        from rich.text import Text

        assert self.ctx.session is not None
        inc = self.ctx.session.incident
        title = inc.title or inc.id
        if len(title) > TITLE_CHARS:
            # A long title without spaces would not wrap in the one-line bar: it would
            # push the service and mode out of sight.
            title = title[: TITLE_CHARS - 1] + "…"
        full = inc.service.describe()
        mode = f"[{self.mode_text()}] "

        def line(title: str, svc: str, app: bool) -> str:
            rest = [*([svc] if svc else []), *([t("app.title", self.lang)] if app else [])]
            return " · ".join([mode + title, *rest])

        room = (self.size.width - 2) if width is None else width
        if room <= 0 or cell_len(line(title, full, True)) <= room:
            return line(title, full, True)
        # Namespace and deployment are the scope; the model after them is said on A.
        short = " / ".join(full.split(" / ")[:2])
        for svc, least in ((full, TITLE_LEAST), (short, TITLE_LEAST), (short, 8)):
            if cell_len(line("", svc, False)) + least <= room or least == 8:
                break
        cut = Text(title)
        cut.truncate(max(8, room - cell_len(line("", svc, False))), overflow="ellipsis")
        return line(cut.plain, svc, False)

    def mode_text(self) -> str:
        """``live`` / ``replay`` / ``demo`` / ``drill``; with ``--at``, the time being investigated
        (``as of 2026-11-29 20:40 UTC``, after ``replay ·`` for a replay): the data on
        screen is of that time, not live."""
        mode = t("mode.drill" if self.ctx.drill else f"mode.{self.ctx.mode}", self.lang)
        at = self.ctx.at
        if at is None:
            return mode
        when = t("mode.at", self.lang, at=f"{at:%Y-%m-%d %H:%M} UTC")
        return when if self.ctx.mode is Mode.LIVE else f"{mode} · {when}"

    def compose(self) -> ComposeResult:
        assert self.ctx.session is not None
        inc = self.ctx.session.incident
        st = step(self.STEP)
        yield Static(self.title_line(), id="title-bar", markup=False)
        yield Stepper(self.lang, self.STEP, inc.path, inc.scope_branch, id="stepper")
        # Not a Tab stop of its own: Tab goes from field to field (the keys above scroll it).
        with StepBody(id="step-body", can_focus=False):
            yield Static(f"[b]{st.id.value} · {st.title(self.lang)}[/b]", id="step-title")
            yield Static(t(f"step.{self.STEP}.guide", self.lang), id="guide")
            if self.PANELS_FIRST:
                yield from self.compose_panels()
            yield from self.compose_step()
            if not self.PANELS_FIRST:
                yield from self.compose_panels()
            yield StepNotes(self.ctx, self.STEP)
        yield CockpitFooter()

    def compose_step(self) -> ComposeResult:
        """The step's own widgets."""
        yield from ()

    def compose_panels(self) -> ComposeResult:
        """Plugin panels that declare this step (and load failures as notices)."""
        loaded = self.ctx.panels or []
        for item in loaded:
            if item.cls is not None and self.STEP in getattr(item.cls, "STEPS", ()):
                yield item.cls(self.ctx)

    def on_mount(self) -> None:
        """Put back the text typed here before the screen was rebuilt (a language switch:
        see ``CockpitApp._keep_drafts``)."""
        from textual.widgets import Input, TextArea

        drafts = self.ctx.drafts.pop(self.STEP, {})
        for field_id, value in drafts.items():
            for field in self.query(f"#{field_id}"):
                if isinstance(field, Input):
                    field.value = value
                elif isinstance(field, TextArea):
                    field.text = value

    def left_field(self) -> Widget | None:
        """The field Escape left last, on this visit (Tab goes on from it)."""
        return self._left_field

    def _section_heads(self) -> list[int]:
        """Page rows (``y`` on the scrolled page) where the step's sections begin: its
        section titles, its panels and its notes, top to bottom."""
        from cockpit.ui.panel import Panel

        heads = [*self.query(".section"), *self.query(Panel), *self.query(StepNotes)]
        return sorted({y for w in heads if (y := self.page_row(w)) is not None})

    def page_row(self, widget: Widget) -> int | None:
        """The row of ``widget`` on the step's page, however far it is scrolled (``None``
        when it is not laid out)."""
        geometry = self._compositor.full_map.get(widget)
        if geometry is None:
            return None
        body = self.query_one("#step-body", VerticalScroll)
        return geometry.region.y + round(body.scroll_y)

    def action_next_section(self) -> None:
        """Ctrl+Down: the first Tab stop of the next section (see :meth:`to_section`)."""
        self.to_section(1)

    def action_previous_section(self) -> None:
        """Ctrl+Up: the first Tab stop of this section, or of the previous one."""
        self.to_section(-1)

    def to_section(self, direction: int) -> None:
        """Ctrl+Down / Ctrl+Up: focus the first Tab stop of the next / previous section
        that has one (a long step such as A is a few keys deep, not thirty Tabs; a panel
        with nothing to focus is passed over); Ctrl+Up first goes back to the first stop
        of the section focus is in. A notice says when there is no section further."""
        at = self._compositor.full_map
        stops = sorted(
            (
                (y, at[w].region.x, w)
                for w in self.focus_chain
                if w in at and (y := self.page_row(w)) is not None
            ),
            key=lambda stop: (stop[0], stop[1]),
        )
        heads = [-1, *self._section_heads(), 1 << 30]
        rows = {w: y for y, _, w in stops}
        sections = [[w for y, _, w in stops if start <= y < end] for start, end in pairwise(heads)]
        sections = [own for own in sections if own]
        # After Esc nothing is focused: go on from the field Esc left, as Tab does.
        focused = self.focused or self._left_field
        here = next((i for i, own in enumerate(sections) if focused in own), None)
        target: Widget | None = None
        if here is None:
            # Nothing focused (after Esc): from where the page is scrolled to, not its top.
            body = self.query_one("#step-body", VerticalScroll)
            top = body.region.y + round(body.scroll_y)
            below = [own for own in sections if rows[own[0]] >= top]
            above = [own for own in sections if rows[own[0]] < top]
            pool = below if direction > 0 else above or below
            if pool:
                target = (pool[0] if direction > 0 else pool[-1])[0]
        elif direction > 0:
            ahead = sections[here + 1 :]
            target = ahead[0][0] if ahead else None
        else:
            if sections[here][0] is not focused:
                target = sections[here][0]
            elif here > 0:
                target = sections[here - 1][0]
        if target is None:
            # Said once while it is on screen, not stacked by every press of the chord.
            now = time.monotonic()
            if now - self._no_section_said >= NOTICE_S:
                self._no_section_said = now
                self.notify(t("focus.no_section", self.lang), markup=False, timeout=NOTICE_S)
            return
        self._left_field = None
        target.focus()

    def action_page(self, sign: int) -> None:
        body = self.query_one("#step-body", VerticalScroll)
        if sign > 0:
            body.scroll_page_down(animate=False)
        else:
            body.scroll_page_up(animate=False)

    def action_line(self, sign: int) -> None:
        body = self.query_one("#step-body", VerticalScroll)
        if sign > 0:
            body.scroll_down(animate=False)
        else:
            body.scroll_up(animate=False)

    def show_focused(self, widget: Widget) -> None:
        """Focus ``widget`` after an action and scroll it into sight at once, and again
        once what the action changed is laid out (a scroll still running from an earlier
        focus would leave it out of sight)."""
        body = self.query_one("#step-body", VerticalScroll)
        body.scroll_to_widget(widget, animate=False, immediate=True)
        widget.focus(scroll_visible=False)

        def again() -> None:
            if widget.has_focus:
                body.scroll_to_widget(widget, animate=False)

        self.set_timer(0.05, again)

    def keep_focus_in_view(self, sign: int, shift: int, laid_out: dict[Widget, Any]) -> None:
        """After the page scrolled (Down/Up/PageDown/PageUp on a widget that does not take
        them): a focused widget scrolled out of sight hands focus to a Tab stop in sight
        (the top one scrolling down, the bottom one scrolling up; one without text first),
        or to nothing, so what is typed next never lands in a field the eye cannot see. A
        notice names where typing goes now. ``laid_out``: the Tab stops' regions before
        the scroll; ``shift``: the rows it scrolled (they are moved up by it)."""
        from cockpit.ui.focus import holds_text, widget_name
        from cockpit.ui.table import PlainTable

        focused = self.focused
        body = self.query_one("#step-body", VerticalScroll)
        if focused is None or body not in focused.ancestors:
            return
        seen = body.content_region

        def rows(table: PlainTable) -> list[int]:
            return table.rows_in_sight(laid_out[table].translate((0, -shift)), seen)

        def shown(widget: Widget) -> bool:
            region = laid_out.get(widget)
            if region is None or not region.area:
                return False
            if seen.contains_region(region.translate((0, -shift))):
                return True
            # A table is in sight by a row of it in sight (one taller than the window
            # never fits whole); its cursor is put on such a row below.
            return isinstance(widget, PlainTable) and bool(rows(widget))

        def cursor_in_sight(widget: Widget | None) -> None:
            """A table focused here has its cursor on a row in sight (the first scrolling
            down, the last scrolling up): what Enter or Alt+P acts on is what is seen."""
            if not isinstance(widget, PlainTable) or not (in_view := rows(widget)):
                return
            if widget.cursor_row not in in_view:
                widget.move_cursor(row=in_view[0] if sign > 0 else in_view[-1], scroll=False)

        if shown(focused):
            cursor_in_sight(focused)
            return
        in_sight = [w for w in self.focus_chain if body in w.ancestors and shown(w)]
        if sign < 0:
            in_sight.reverse()
        target = next((w for w in in_sight if not holds_text(w)), None)
        target = target or (in_sight[0] if in_sight else None)
        self._left_field = None
        cursor_in_sight(target)
        self.set_focus(target, scroll_visible=False)
        if target is None:
            self.notify(self.nothing_focused_said(), markup=False, timeout=6)
        else:
            name = widget_name(target, self.lang)
            self.notify(t("focus.in_sight", self.lang, name=name), markup=False)

    def action_leave_field(self) -> None:
        """Escape: leave the text field (nothing has focus; typing then does nothing); in
        the form of a ledger row being edited, the edit is cancelled first.
        The next Tab or Shift+Tab goes on from the field left, not from the top of the
        step (see :meth:`focus_next`)."""
        for editor in self.ledger_editors:
            if editor.cancel_on_escape(self.focused):
                break
        self._left_field = self.focused
        self.set_focus(None)

    def _resume_from_left_field(self) -> None:
        left, self._left_field = self._left_field, None
        if self.focused is None and left is not None and left in self.focus_chain:
            self.set_focus(left, scroll_visible=False)

    def tab_starts_from(self) -> None:
        """Tab (see :meth:`SaysWhereTypingGoes.focus_next`): after Escape left a field, it
        goes on from that field."""
        self._resume_from_left_field()

    def focus_previous(self, selector: Any = "*") -> Any:
        """Shift+Tab: the previous widget; after Escape left a field, the one before it."""
        self._resume_from_left_field()
        return super().focus_previous(selector)

    def arrive(self) -> None:
        """The step is being shown by navigation from another step (a jump, Alt+arrows,
        the step bar, the palette), not uncovered by a closing dialog: it opens at its top with
        nothing focused, so nothing typed on arrival lands in a field already filled (E's
        suspect, D's verdict, I's hold time) and the first Tab lands on its first field."""
        self._arriving = True
        # Nothing focused on an earlier visit keeps focus (or takes the keys typed while
        # the step comes up).
        if self.is_mounted:
            self.set_focus(None, scroll_visible=False)

    def on_resize(self, event: events.Resize) -> None:
        """Fit the title bar to the new width (see :meth:`title_line`)."""
        bar = self.query("#title-bar")
        if bar:
            bar.first(Static).update(self.title_line())

    def on_screen_resume(self) -> None:
        assert self.ctx.session is not None
        # Tab goes on from a field left with Escape only on the visit it was left in: a
        # step shown again starts from its first field.
        self._left_field = None
        if self._arriving:
            self._arriving = False
            self.set_focus(None, scroll_visible=False)
            self.query_one("#step-body", VerticalScroll).scroll_home(animate=False)
        # App.goto records the path as steps are asked for; a screen shown another way
        # (the first one) is recorded here.
        if not self.ctx.session.incident.path:
            self.ctx.session.visit(self.STEP)
        self.refresh_stepper()
        self.sync_fields()
        version = getattr(self.app, "incident_version", 0)
        if self._seen_version is not None and self._seen_version != version:
            # Changed while another screen was on top (F8 restored a row, H added one).
            self.incident_changed()
            self._sync_ledgers()
        self._seen_version = version
        mark_after_paint(self, "COCKPIT_STEP_FRAME_FILE", self.STEP)

    def refresh_stepper(self) -> None:
        """Redraw the stepper and title from the incident."""
        assert self.ctx.session is not None
        inc = self.ctx.session.incident
        try:
            self.query_one(Stepper).set_state(self.STEP, inc.path, inc.scope_branch)
            self.query_one("#title-bar", Static).update(self.title_line())
        except Exception:
            return

    def on_incident_changed(self, event: IncidentChanged) -> None:
        self._seen_version = getattr(self.app, "incident_version", 0)
        self.refresh_stepper()
        self.sync_fields()
        self.incident_changed()
        self._sync_ledgers()

    def _sync_ledgers(self) -> None:
        for editor in self.ledger_editors:
            editor.sync()

    def sync_fields(self) -> None:
        """Fields that other screens or panels may have written show what is stored."""
        from cockpit.ui.drill_form import DrillAnswerForm
        from cockpit.ui.fields import BoundInput, BoundTextArea, TimesForm

        for drill_form in self.query(DrillAnswerForm):
            drill_form.sync()
        for field in self.query(BoundTextArea):
            field.sync()
        for line in self.query(BoundInput):
            line.sync()
        for form in self.query(TimesForm):
            form.sync()

    def incident_changed(self) -> None:
        """Hook: the incident changed (refresh lists shown from it)."""
