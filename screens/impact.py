"""A — impact and timeline: the handbook's collect-first list as fields, the four times
with ordering validation, the golden signals now vs baseline (panel), and the timeline."""

from __future__ import annotations

from datetime import datetime

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, DataTable, Input, Label, Static

from cockpit.analysis.golden import Breach, breach_detail
from cockpit.i18n import t
from cockpit.incident import TimelineKind
from cockpit.screens.base import StepScreen
from cockpit.session import RuleViolation
from cockpit.timeparse import fmt_time
from cockpit.ui.fields import (
    BoundInput,
    BoundTextArea,
    ChangesNoteInput,
    TextInput,
    TimesForm,
    empty,
    entered_text,
)
from cockpit.ui.focus import hand_on_focus
from cockpit.ui.ledger import LedgerEditor, row_buttons
from cockpit.ui.table import PlainTable
from cockpit.ui.timeguard import confirmed
from cockpit.ui.timeline import TimelineTable


class ImpactScreen(StepScreen):
    """Step A."""

    STEP = "A"
    PANELS_FIRST = True
    FORMS = (
        (("err-text", "err-request", "err-job"), "err-add"),
        (("tl-text",), "tl-add"),
    )
    REQUIRED = frozenset({"err-text", "tl-text"})

    DEFAULT_CSS = """
    ImpactScreen Horizontal { height: auto; }
    ImpactScreen .cell { width: 1fr; height: auto; }
    ImpactScreen #err-table { height: auto; max-height: 8; }
    ImpactScreen #breach-offer { height: auto; display: none; }
    ImpactScreen #paged-by { height: auto; border-left: thick $warning; padding: 0 1; }
    ImpactScreen #breach-offer.-shown { display: block; }
    """

    def __init__(self, *a: object, **kw: object) -> None:
        super().__init__(*a, **kw)  # type: ignore[arg-type]
        self._breach: datetime | None = None
        self._breach_found: Breach | None = None
        self._paged_text: str | None = None

    def compose_panels(self) -> ComposeResult:
        """The alert that paged (its SLI and expression) above the golden signals."""
        yield Static("", id="paged-by", markup=False)
        yield from super().compose_panels()

    def _show_paged(self) -> None:
        assert self.ctx.session is not None
        from cockpit.collect.paged import paged_text

        paged = self.ctx.session.incident.paged_by
        text = paged_text(paged, self.lang) if paged is not None else ""
        if text == self._paged_text:
            return  # typing into a field changes the incident: nothing to redraw here
        self._paged_text = text
        line = self.query_one("#paged-by", Static)
        line.display = paged is not None
        line.update(text)

    def compose_step(self) -> ComposeResult:
        ctx, lang = self.ctx, self.lang
        yield BoundInput(ctx, "title", "field.title")
        yield BoundTextArea(ctx, "impact", "field.impact")
        yield Static(t("section.times", lang), classes="section")
        yield TimesForm(ctx)
        with Vertical(id="breach-offer"):
            yield Static("", id="breach-text", markup=False)
            yield Button(t("breach.use", lang), id="breach-use", variant="warning")
        yield Static(t("section.collect", lang), classes="section")
        yield BoundInput(ctx, "time_range", "field.time_range")
        with Horizontal():
            yield BoundInput(ctx, "affected_models", "field.affected_models", classes="cell")
            yield BoundInput(ctx, "affected_tenants", "field.affected_tenants", classes="cell")
            yield BoundInput(ctx, "affected_jobs", "field.affected_jobs", classes="cell")
        yield Label(t("field.error_samples", lang))
        with Horizontal():
            yield TextInput(
                placeholder=t("err.text", lang), id="err-text", compact=True, classes="cell"
            )
            yield TextInput(
                placeholder=t("err.request_id", lang),
                id="err-request",
                compact=True,
                classes="cell",
            )
            yield TextInput(
                placeholder=t("err.job_id", lang), id="err-job", compact=True, classes="cell"
            )
            yield Button(t("err.add", lang), id="err-add")
        yield PlainTable(id="err-table", cursor_type="row")
        yield ChangesNoteInput(ctx)
        yield BoundInput(ctx, "breakdown", "field.breakdown")
        yield BoundInput(ctx, "control_group", "field.control_group")
        yield BoundTextArea(ctx, "symptoms", "field.symptoms")
        yield BoundInput(ctx, "slo", "field.slo")
        yield Static(t("section.timeline", lang), classes="section")
        yield TimelineTable(ctx)
        with Horizontal():
            yield TextInput(
                placeholder=t("timeline.note.hint", lang),
                id="tl-text",
                compact=True,
                classes="cell",
            )
            yield Button(t("timeline.note.add", lang), id="tl-add")
        yield Static("", id="tl-error", classes="error", markup=False)
        yield from row_buttons("tl", lang)

    def on_mount(self) -> None:
        lang = self.lang
        self.query_one("#err-table", DataTable).add_columns(
            t("err.text", lang), t("err.request_id", lang), t("err.job_id", lang)
        )
        self.timeline_editor = LedgerEditor(
            self,
            self.ctx,
            "timeline",
            "tl",
            {"text": "tl-text"},
            "timeline.note.add",
            self.query_one("#tl-error", Static).update,
            table_id="timeline",
        )
        self.incident_changed()

    def incident_changed(self) -> None:
        assert self.ctx.session is not None
        table = self.query_one("#err-table", DataTable)
        table.clear()
        for sample in self.ctx.session.incident.collect.error_samples:
            table.add_row(sample.text, sample.request_id, sample.job_id, key=sample.id)
        self.query_one(TimelineTable).reload()
        self._show_paged()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        assert self.ctx.session is not None
        if self.timeline_editor.handle(event.button.id or ""):
            self.incident_changed()
        elif event.button.id == "tl-add":
            self._add_or_save_note()
        elif event.button.id == "err-add":
            text = self.query_one("#err-text", Input)
            req = self.query_one("#err-request", Input)
            job = self.query_one("#err-job", Input)
            sample, request_id, job_id = (entered_text(w).strip() for w in (text, req, job))
            if not sample:
                self.notify(t("err.empty", self.lang), severity="warning", markup=False)
                return
            self.ctx.session.add_error_sample(sample, request_id, job_id, at=self.ctx.clock.now())
            for field in (text, req, job):
                empty(field)
            self.incident_changed()
        elif event.button.id == "breach-use" and self._breach is not None:
            if not confirmed(self, "start", self._breach):
                return
            self.query_one(TimesForm).set_time("start", self._breach, "prometheus")
            if self._breach_found is not None:
                # the timeline (so the export) says which SLI crossed which SLO
                b = self._breach_found
                at = b.crossed_at or b.at
                said = {
                    lang: t("breach.found", lang, at=fmt_time(at), detail=breach_detail(b, lang))
                    for lang in ("en", "zh")
                }
                self.ctx.session.add_timeline(
                    at, said["en"], TimelineKind.EVIDENCE, source="prometheus", text_i18n=said
                )
            offer = self.query_one("#breach-offer")
            hand_on_focus(offer)
            offer.set_class(False, "-shown")

    def _add_or_save_note(self) -> None:
        """A note on the timeline at the incident clock's now, or the edited entry saved."""
        assert self.ctx.session is not None
        editor = self.timeline_editor
        text = editor.values()["text"]
        if not text:
            editor.show(t("timeline.note.empty", self.lang))
            return
        try:
            if editor.editing is not None:
                editor.save()
            else:
                self.ctx.session.add_timeline(self.ctx.clock.logged(), text)
                editor.end()
        except RuleViolation as exc:
            editor.show(t(exc.key, self.lang))
            return
        self.incident_changed()

    def on_golden_signals_panel_breach_found(self, event: object) -> None:
        """The golden-signals panel found the first SLO breach: offer it as the start."""
        at = getattr(event, "at", None)
        self._breach_found = getattr(event, "breach", None)
        if isinstance(at, datetime):
            self.offer_breach(at, str(getattr(event, "detail", "")))

    def offer_breach(self, at: datetime, detail: str) -> None:
        """Offer the first SLO breach found in the data as the impact start."""
        assert self.ctx.session is not None
        self._breach = at
        current = self.ctx.session.incident.times.start
        text = t("breach.found", self.lang, at=fmt_time(at), detail=detail)
        if current is not None:
            text += "  " + t("breach.current", self.lang, at=fmt_time(current))
        self.query_one("#breach-text", Static).update(text)
        offer = self.query_one("#breach-offer")
        if current == at:
            hand_on_focus(offer)
        offer.set_class(current != at, "-shown")
