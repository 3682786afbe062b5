"""The structured conclusion of a drill, asked for at G and I.

Layer, scope, cause class and suspect are drop-downs (the suspect's entries come from
the bundle's own inventory, :func:`cockpit.drills.choices.suspect_choices`, fetched in a
worker); the two times are text fields read like the incident times. Every change is
kept in the incident at once (a draft); "Hand in" stamps the time of diagnosis and opens
the scorecard. Keyboard-safe like every field: the drop-downs open on Enter or the
arrows, never on a printable key, and nothing acts on a letter.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Label, Select, Static

from cockpit.context import AppContext
from cockpit.drills.choices import SuspectChoice, parse_value, suspect_choices
from cockpit.i18n import t
from cockpit.knowledge.catalogues import cause_classes
from cockpit.models.signals import LAYERS
from cockpit.session import RuleViolation
from cockpit.timeparse import TimeParseError, fmt_time, parse_time
from cockpit.ui.fields import ValueInput, entered_text, example_times, write_back
from cockpit.ui.metrics_common import MetricsView
from cockpit.ui.select import LocalSelect

TIME_PARTS = ("impact_start", "detected_at")
"""The answer's two times, with the incident time each defaults to."""
INCIDENT_TIME = {"impact_start": "start", "detected_at": "detect"}


class DrillAnswerForm(MetricsView):
    """The drill's structured conclusion (see the module docstring)."""

    DEFAULT_CSS = """
    DrillAnswerForm { height: auto; border: round $accent; padding: 0 1; margin: 1 0 0 0; }
    DrillAnswerForm Horizontal { height: auto; }
    DrillAnswerForm .drill-cell { width: 1fr; height: auto; margin: 0 1 0 0; }
    DrillAnswerForm Label { color: $text-muted; }
    DrillAnswerForm #drill-error { color: $error; height: auto; }
    DrillAnswerForm #drill-state { color: $text-muted; height: auto; }
    DrillAnswerForm Input.-invalid { border-left: thick $error; }
    """

    def __init__(self, ctx: AppContext, step: str, **kw: Any) -> None:
        kw.setdefault("id", "drill-form")
        super().__init__(ctx, **kw)
        self.step = step
        self.choices: list[SuspectChoice] = []
        self.shown: dict[str, str] = {}
        """The text each time field got from the record: a field that holds anything else
        is being edited, and :meth:`sync` leaves it."""

    def compose_body(self) -> ComposeResult:
        lang = self.lang
        a = self._answer()
        yield Static(t("drill.form.title", lang), classes="section")
        yield Static(t("drill.form.hint", lang), classes="mv-head")
        with Horizontal():
            with Vertical(classes="drill-cell"):
                yield Label(t("drill.part.layer", lang))
                yield LocalSelect(
                    [(t(f"metrics.layer.{x}", lang), x) for x in LAYERS],
                    prompt=t("drill.form.choose", lang),
                    value=a.layer or Select.NULL,
                    id="drill-layer",
                    compact=True,
                )
            with Vertical(classes="drill-cell"):
                yield Label(t("drill.part.scope", lang))
                yield LocalSelect(
                    [(t(f"drill.scope.{x}", lang), x) for x in ("single", "shared")],
                    prompt=t("drill.form.choose", lang),
                    value=a.scope or Select.NULL,
                    id="drill-scope",
                    compact=True,
                )
        yield Label(t("drill.part.suspect", lang))
        yield LocalSelect(
            [], prompt=t("drill.form.loading_suspects", lang), id="drill-suspect", compact=True
        )
        yield Label(t("drill.part.cause_class", lang))
        yield LocalSelect(
            [(t(f"metrics.cause.{c}", lang), c) for c in cause_classes() if c != "unknown"],
            prompt=t("drill.form.choose", lang),
            value=a.cause_class or Select.NULL,
            id="drill-cause",
            compact=True,
        )
        placeholder = t("times.placeholder", lang, **example_times(self.ctx))
        with Horizontal():
            for part in TIME_PARTS:
                with Vertical(classes="drill-cell"):
                    yield Label(t(f"drill.part.{part}", lang))
                    self.shown[part] = fmt_time(self._time(part))
                    yield ValueInput(
                        value=self.shown[part],
                        placeholder=placeholder,
                        id=f"drill-{part}",
                        compact=True,
                    )
        yield Static("", id="drill-error", markup=False)
        yield Static(self._state_text(), id="drill-state", markup=False)
        with Horizontal():
            yield Button(t("drill.form.hand_in", lang), id="drill-hand-in", variant="success")
            yield Button(t("drill.form.show_card", lang), id="drill-show-card")

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#drill-show-card").display = self._answer().submitted_at is not None

    def sync(self) -> None:
        """Show the stored answer when the other step's form changed it (G and I both
        ask); a field with focus, or a time that could not be read, is left as it is."""
        a = self._answer()
        for sid, value in (
            ("drill-layer", a.layer),
            ("drill-scope", a.scope),
            ("drill-cause", a.cause_class),
        ):
            select = self.query_one(f"#{sid}", Select)
            if not select.has_focus and select.value != (value or Select.NULL):
                with select.prevent(Select.Changed):
                    select.value = value or Select.NULL
        if self.choices:
            self._show_suspect(self.query_one("#drill-suspect", Select))
        for part in TIME_PARTS:
            widget = self.query_one(f"#drill-{part}", Input)
            if widget.has_focus or widget.value != self.shown.get(part):
                continue
            self.shown[part] = fmt_time(self._time(part))
            widget.value = self.shown[part]
        self.query_one("#drill-state", Static).update(self._state_text())
        self.query_one("#drill-show-card").display = a.submitted_at is not None

    def _answer(self) -> Any:
        assert self.ctx.session is not None and self.ctx.session.incident.drill is not None
        return self.ctx.session.incident.drill.answer

    def _time(self, part: str) -> datetime | None:
        """The answer's time, else the incident's (A's times are the first guess)."""
        assert self.ctx.session is not None
        given: datetime | None = getattr(self._answer(), part)
        if given is not None:
            return given
        value: datetime | None = getattr(self.ctx.session.incident.times, INCIDENT_TIME[part])
        return value

    def _state_text(self) -> str:
        a = self._answer()
        if a.submitted_at is None:
            return t("drill.form.draft", self.lang)
        return t("drill.form.handed_in", self.lang, at=fmt_time(a.submitted_at), step=a.step)

    # -- the suspects, from the bundle's inventory ---------------------------------------------
    async def load(self, refresh: bool) -> Any:
        from cockpit.collect import steps
        from cockpit.collect.analyze import history_window
        from cockpit.collect.cache import screen_window
        from cockpit.collect.history import collect_history
        from cockpit.sources.base import SourceError

        window = screen_window(self.ctx)
        hist = await collect_history(self.ctx, history_window(window))
        if not hist.inventory.pods:
            # The history as step D reads it (a bundle may hold only that window).
            hist = await collect_history(self.ctx, window)
        from cockpit.collect.analyze import gateway_names
        from cockpit.collect.base import detection_for

        try:
            bset = await steps.breakdowns(self.ctx, window)
        except SourceError:
            bset = None
        det = await detection_for(self.ctx, window.end)
        return suspect_choices(
            hist.inventory,
            self.ctx.settings.service.deployment,
            bset.inventory if bset is not None else None,
            gateway_names(det, bset),
        )

    def show(self, data: list[SuspectChoice]) -> None:
        self.choices = data
        select = self.query_one("#drill-suspect", Select)
        lang = self.lang
        select.set_options(
            [(f"{t(f'drill.kind.{c.kind}', lang)} · {c.label}", c.value) for c in data]
        )
        select.prompt = t("drill.form.choose", lang)
        self._show_suspect(select)

    def _show_suspect(self, select: Select[str]) -> None:
        """Select the stored suspect among the choices (nothing when it is not one)."""
        a = self._answer()
        chosen = next(
            (
                c.value
                for c in self.choices
                if (c.kind, c.name, c.uuid) == (a.suspect_kind, a.suspect_name, a.suspect_uuid)
            ),
            None,
        )
        if not select.has_focus and select.value != (chosen or Select.NULL):
            with select.prevent(Select.Changed):
                select.value = chosen or Select.NULL

    # -- keeping the draft ---------------------------------------------------------------------
    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        assert self.ctx.session is not None
        value = "" if event.value is Select.NULL else str(event.value)
        sid = event.select.id or ""
        if sid == "drill-suspect":
            kind, name, uuid = parse_value(value) if value else ("", "", "")
            self.ctx.session.set_drill_answer(
                self.step, suspect_kind=kind, suspect_name=name, suspect_uuid=uuid
            )
        elif sid in ("drill-layer", "drill-scope", "drill-cause"):
            part = {"drill-layer": "layer", "drill-scope": "scope", "drill-cause": "cause_class"}
            self.ctx.session.set_drill_answer(self.step, **{part[sid]: value})

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._read_time(event.input)

    def on_input_blurred(self, event: Input.Blurred) -> None:
        event.stop()
        self._read_time(event.input)

    def _read_time(self, widget: Input) -> bool:
        """Keep the time typed in ``widget``; False (and the field marked) when it cannot
        be read."""
        part = (widget.id or "").removeprefix("drill-")
        if part not in TIME_PARTS:
            return True
        assert self.ctx.session is not None
        text = entered_text(widget).strip()
        widget.remove_class("-invalid")
        error = self.query_one("#drill-error", Static)
        error.update("")
        value: datetime | None = None
        if text:
            try:
                value = parse_time(text, self.ctx.clock.logged())
            except TimeParseError:
                widget.add_class("-invalid")
                error.update(
                    t(
                        "times.unparsed_field",
                        self.lang,
                        **example_times(self.ctx),
                        field=t(f"drill.part.{part}", self.lang),
                        text=text,
                    )
                )
                return False
        self.shown[part] = fmt_time(value)
        self.ctx.session.set_drill_answer(self.step, **{part: value})
        write_back(widget, self.shown[part])
        return True

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "drill-show-card":
            event.stop()
            from cockpit.ui.scorecard import open_scorecard

            open_scorecard(self.app, self.ctx)
            return
        if event.button.id != "drill-hand-in":
            return
        event.stop()
        assert self.ctx.session is not None
        for part in TIME_PARTS:
            if not self._read_time(self.query_one(f"#drill-{part}", Input)):
                return
        try:
            self.ctx.session.submit_drill_answer(self.step)
        except RuleViolation as exc:
            self.query_one("#drill-error", Static).update(t(exc.key, self.lang))
            return
        self.query_one("#drill-state", Static).update(self._state_text())
        self.query_one("#drill-show-card").display = True
        from cockpit.ui.scorecard import open_scorecard

        open_scorecard(self.app, self.ctx)
