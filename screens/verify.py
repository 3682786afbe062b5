"""I — verify recovery and record: every signal that was anomalous is back within its
baseline for the hold period (default 15 min), the recovery time, the rest of the
template (root cause, mitigation, actions, earlier detection), and the export."""

from __future__ import annotations

from textual import events, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.notifications import SeverityLevel
from textual.widgets import Button, DataTable, Input, Label, Markdown, Select, Static

from cockpit.analysis.recovery import LineStatus, RecoveryResult
from cockpit.history import short
from cockpit.i18n import t
from cockpit.screens.base import StepScreen
from cockpit.session import check_predates
from cockpit.timeparse import fmt_time
from cockpit.ui.buttons import relabel
from cockpit.ui.drill_form import DrillAnswerForm
from cockpit.ui.fields import BoundTextArea, TextInput, TimesForm, ValueInput
from cockpit.ui.ledger import LedgerEditor, row_buttons
from cockpit.ui.number_field import NumberInput
from cockpit.ui.select import LocalSelect
from cockpit.ui.table import PlainTable
from cockpit.ui.timeguard import confirmed

HOLD_MAX = 24 * 60
"""The longest hold period, in minutes (a day)."""


class VerifyScreen(StepScreen):
    """Step I."""

    STEP = "I"
    FORMS = (
        (("hold",), "verify-check"),
        (("act-what", "act-owner", "act-deadline", "act-verify"), "act-add"),
    )
    REQUIRED = frozenset({"act-what"})

    DEFAULT_CSS = """
    VerifyScreen Horizontal { height: auto; }
    VerifyScreen .cell { width: 1fr; height: auto; }
    VerifyScreen #recovery-lines { height: auto; }
    VerifyScreen #act-table { height: auto; max-height: 10; }
    VerifyScreen #export-box { height: auto; }
    VerifyScreen #export-preview { height: auto; max-height: 40; border: round $primary 30%; }
    VerifyScreen #export-lang, VerifyScreen #export-format { width: 14; margin: 0 1 0 0; }
    VerifyScreen #hold { width: 12; margin: 0 1; }
    VerifyScreen Horizontal > Label { margin-right: 1; }
    VerifyScreen #export-row.-narrow { layout: grid; grid-size: 2; grid-rows: auto; }
    """

    EXPORT_ROW_BELOW = 100
    """Columns under which the export's choices and buttons go two per row: on one row
    they need about 80, and the last button would be cut at an 80-column terminal."""

    def compose_step(self) -> ComposeResult:
        ctx, lang = self.ctx, self.lang
        if ctx.drill:
            yield DrillAnswerForm(ctx, self.STEP)
        yield Static(t("verify.recovery", lang), classes="section")
        with Horizontal():
            yield Label(t("verify.hold", lang))
            assert ctx.session is not None
            yield NumberInput(
                value=str(ctx.session.incident.recovery.hold_minutes),
                low=1,
                high=HOLD_MAX,
                unit_key="number.unit.minutes",
                id="hold",
                compact=True,
            )
            yield Button(t("verify.check", lang), id="verify-check", variant="primary")
            yield Button(t("verify.use_recovery", lang), id="verify-use", disabled=True)
        yield Static(self._recovery_text(), id="recovery-lines")
        yield TimesForm(ctx)
        yield Static(t("section.record", lang), classes="section")
        yield BoundTextArea(ctx, "root_cause_technical", "field.root_cause_technical")
        yield BoundTextArea(ctx, "root_cause_systemic", "field.root_cause_systemic")
        yield BoundTextArea(ctx, "mitigation", "field.mitigation")
        yield Label(t("field.actions", lang))
        with Horizontal():
            yield TextInput(
                placeholder=t("act.what", lang), id="act-what", compact=True, classes="cell"
            )
            yield TextInput(
                placeholder=t("act.owner", lang), id="act-owner", compact=True, classes="cell"
            )
            yield ValueInput(
                placeholder=t("act.deadline", lang), id="act-deadline", compact=True, classes="cell"
            )
            yield TextInput(
                placeholder=t("act.verification", lang),
                id="act-verify",
                compact=True,
                classes="cell",
            )
            yield Button(t("act.add", lang), id="act-add")
        yield Static("", id="act-error", classes="error", markup=False)
        yield PlainTable(id="act-table", cursor_type="row")
        yield from row_buttons("act", lang)
        yield BoundTextArea(ctx, "earlier_detection", "field.earlier_detection")
        yield Static(t("section.export", lang), classes="section")
        with Horizontal(id="export-row"):
            yield LocalSelect(
                [("中文", "zh"), ("English", "en")],
                value=lang,
                id="export-lang",
                allow_blank=False,
                compact=True,
            )
            yield LocalSelect(
                [("Markdown", "md"), ("JSON", "json")],
                value="md",
                id="export-format",
                allow_blank=False,
                compact=True,
            )
            yield Button(t("export.preview", lang), id="export-preview-btn")
            yield Button(t("export.copy", lang), id="export-copy", variant="success")
            yield Button(t("export.file", lang), id="export-file")
        yield Static("", id="export-status", classes="hint", markup=False)
        with Vertical(id="export-box"):
            yield Markdown("", id="export-preview")

    def on_resize(self, event: events.Resize) -> None:
        self.query_one("#export-row").set_class(event.size.width < self.EXPORT_ROW_BELOW, "-narrow")

    def on_mount(self) -> None:
        lang = self.lang
        self.editor = LedgerEditor(
            self,
            self.ctx,
            "actions",
            "act",
            {
                "what": "act-what",
                "owner": "act-owner",
                "deadline": "act-deadline",
                "verification": "act-verify",
            },
            "act.add",
            self.query_one("#act-error", Static).update,
        )
        self.query_one("#act-table", DataTable).add_columns(
            t("act.what", lang),
            t("act.owner", lang),
            t("act.deadline", lang),
            t("act.verification", lang),
        )
        self.query_one("#export-box").display = False
        self.incident_changed()

    def on_input_blurred(self, event: Input.Blurred) -> None:
        """The hold period typed is kept in the incident when its field is left (its old
        value in the history); a value outside 1–1440 is refused and said so."""
        if event.input.id == "hold" and self.ctx.session is not None:
            held = self._hold()
            if held is not None and held != self.ctx.session.incident.recovery.hold_minutes:
                self.ctx.session.set_hold_minutes(held)

    def sync_fields(self) -> None:
        """The hold field shows the hold period stored (F8 may have put one back),
        unless it is being typed in."""
        super().sync_fields()
        if self.ctx.session is None:
            return
        hold = self.query_one("#hold", Input)
        stored = str(self.ctx.session.incident.recovery.hold_minutes)
        if not hold.has_focus and hold.value != stored:
            hold.value = stored

    def incident_changed(self) -> None:
        assert self.ctx.session is not None
        table = self.query_one("#act-table", DataTable)
        table.clear()
        for item in self.ctx.session.incident.actions:
            table.add_row(
                short(item.what, 28),
                short(item.owner, 10),
                short(item.deadline, 10),
                short(item.verification, 20),
                key=item.id,
            )

    # -- recovery -------------------------------------------------------------------------
    def _recovery_text(self) -> str:
        assert self.ctx.session is not None
        rec = self.ctx.session.incident.recovery
        if rec.checked_at is None:
            return t("verify.not_checked", self.lang)
        head = t(
            "verify.result." + {True: "yes", False: "no", None: "unknown"}[rec.recovered],
            self.lang,
            at=fmt_time(rec.checked_at),
            minutes=rec.hold_minutes,
        )
        inc = self.ctx.session.incident
        early = check_predates(rec, inc.times.mitigate, inc.times.recover)
        if early is not None:
            kind, when = early
            head += "\n" + t(
                f"export.recovery.before_{kind}",
                self.lang,
                checked=fmt_time(rec.checked_at),
                at=fmt_time(when),
            )
            if self.ctx.clock.frozen:
                # a replay or an --at investigation: its data ends where its clock stands
                head += "\n" + t("verify.data_ends", self.lang, at=fmt_time(self.ctx.clock.now()))
        # the lines in the screen's language (kept in both when checked)
        return "\n".join([head, *rec.in_lang(self.lang).lines])

    def _hold(self) -> int | None:
        """The hold period typed, in minutes (1–1440); ``None`` when it is none: the field
        shows the stored one again and a notice names the range (never another value
        used in its place)."""
        assert self.ctx.session is not None
        field = self.query_one("#hold", NumberInput)
        return field.number(self.ctx.session.incident.recovery.hold_minutes)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        assert self.ctx.session is not None
        bid = event.button.id
        if bid == "verify-check":
            hold = self._hold()
            if hold is None:
                return
            self.query_one("#recovery-lines", Static).update(t("panel.loading", self.lang))
            self.run_recovery_check(hold)
        elif bid == "verify-use" and self._recovered_at is not None:
            if confirmed(self, "recover", self._recovered_at):
                self.query_one(TimesForm).set_time("recover", self._recovered_at, "prometheus")
        elif self.editor.handle(bid or ""):
            self.incident_changed()
        elif bid == "act-add":
            values = self.editor.values()
            if not values["what"]:
                self.notify(t("act.empty", self.lang), severity="warning", markup=False)
                return
            if self.editor.editing is not None:
                self.editor.save()
            else:
                self.ctx.session.add_action(**values)
                self.editor.end()
            self.incident_changed()
        elif bid in ("export-preview-btn", "export-copy", "export-file"):
            self._export(bid)

    _recovered_at = None

    @work(exclusive=True, group="recovery", exit_on_error=False)
    async def run_recovery_check(self, hold: int) -> None:
        """Fetch the signals (in this worker) and check them."""
        from cockpit.collect.recovery import fetch_recovery
        from cockpit.sources.base import SourceError

        assert self.ctx.session is not None
        try:
            result: RecoveryResult = await fetch_recovery(self.ctx, hold)
        except SourceError as exc:
            self.query_one("#recovery-lines", Static).update(
                f"⚠ {t('error.' + exc.kind.value, self.lang)}: {exc.failure.message}"
            )
            return
        from cockpit.collect.recovery import line_text
        from cockpit.i18n import LANGS

        def lines_in(lang: str) -> list[str]:
            return [line_text(line, lang) for line in result.lines]

        both = {lang: lines_in(lang) for lang in LANGS}
        self.ctx.session.record_recovery(
            result.recovered, both[self.lang], hold, self.ctx.clock.now(), lines_i18n=both
        )
        self._recovered_at = result.recovered_at
        use = self.query_one("#verify-use", Button)
        use.disabled = result.recovered_at is None
        if result.recovered_at is not None:
            relabel(use, t("verify.use_recovery_at", self.lang, at=fmt_time(result.recovered_at)))
        else:
            relabel(use, t("verify.use_recovery", self.lang))
        self.query_one("#recovery-lines", Static).update(self._recovery_text())
        if any(line.status is LineStatus.NO_DATA for line in result.lines):
            self.notify(t("verify.no_data_warning", self.lang), severity="warning")

    # -- export ---------------------------------------------------------------------------
    def export_now(self) -> None:
        """Write the export in the chosen format and language, show its preview, and say
        where the file was written in a notice (the palette's "Export")."""
        self._export("export-preview-btn")
        self._export("export-file", notify=True)

    def _export(self, action: str, notify: bool = False) -> None:
        from cockpit.export import Format, Lang, render

        assert self.ctx.session is not None
        lang: Lang = "en" if self.query_one("#export-lang", Select).value == "en" else "zh"
        fmt: Format = "json" if self.query_one("#export-format", Select).value == "json" else "md"
        text = render(self.ctx.session.incident, lang=lang, fmt=fmt)
        status = self.query_one("#export-status", Static)
        if action == "export-preview-btn":
            box = self.query_one("#export-box")
            box.display = True
            md = text if fmt == "md" else f"```json\n{text}\n```"
            self.query_one("#export-preview", Markdown).update(md)
        elif action == "export-copy":
            self.app.copy_to_clipboard(text)
            status.update(t("export.copied", self.lang))
        else:
            self.write_export(text, lang, fmt, notify)

    @work(thread=True, exclusive=True, group="export-file", exit_on_error=False)
    def write_export(self, text: str, lang: str, fmt: str, notify: bool = False) -> None:
        """Have the session write the export (atomic, 0600), off the event loop; with
        ``notify`` the outcome is a notice as well (the action was not a button of the
        export section, which shows its status line)."""
        assert self.ctx.session is not None
        status = self.query_one("#export-status", Static)
        from cockpit.store import UnsafeIncidentPath

        try:
            path = self.ctx.session.write_export(text, lang, fmt)
        except (UnsafeIncidentPath, OSError) as exc:
            said = exc.message(self.lang) if isinstance(exc, UnsafeIncidentPath) else str(exc)
            self._say(status, f"⚠ {said}", notify, "error")
            return
        self._say(status, t("export.written", self.lang, path=str(path)), notify, "information")

    def _say(self, status: Static, text: str, notify: bool, severity: SeverityLevel) -> None:
        """Show ``text`` in the export's status line (and as a notice) from the worker."""
        self.app.call_from_thread(status.update, text)
        if notify:
            self.app.call_from_thread(self.notify, text, severity=severity, markup=False)
