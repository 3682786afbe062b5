"""G — falsifiable hypotheses: statement, the observation that would refute it, linked
evidence, status open / supported / refuted (seed 000: 提出可证伪假设)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button, DataTable, Input, Label, Select, Static

from cockpit.i18n import t
from cockpit.incident import HypothesisStatus
from cockpit.screens.base import StepScreen
from cockpit.session import RuleViolation
from cockpit.ui.fields import TextInput
from cockpit.ui.select import LocalSelect
from cockpit.ui.table import PlainTable


class HypothesesScreen(StepScreen):
    """The hypothesis ledger."""

    STEP = "G"

    DEFAULT_CSS = """
    HypothesesScreen Horizontal { height: auto; }
    HypothesesScreen #hyp-table { height: auto; max-height: 14; }
    HypothesesScreen Input { width: 1fr; }
    """

    def compose_step(self) -> ComposeResult:
        lang = self.lang
        yield Label(t("hyp.statement", lang))
        yield TextInput(placeholder=t("hyp.statement.hint", lang), id="hyp-statement", compact=True)
        yield Label(t("hyp.falsifier", lang))
        yield TextInput(placeholder=t("hyp.falsifier.hint", lang), id="hyp-falsifier", compact=True)
        yield Button(t("hyp.add", lang), id="hyp-add", variant="primary")
        yield Static("", id="hyp-error", classes="error", markup=False)
        yield Static(t("hyp.ledger", lang), classes="section")
        yield PlainTable(id="hyp-table", cursor_type="row", zebra_stripes=True)
        with Horizontal():
            yield Button(t("hyp.mark_supported", lang), id="hyp-supported", variant="success")
            yield Button(t("hyp.mark_refuted", lang), id="hyp-refuted", variant="error")
            yield Button(t("hyp.mark_open", lang), id="hyp-open")
        yield Static(t("hyp.link_hint", lang), classes="hint")
        yield LocalSelect([], prompt=t("hyp.link", lang), id="hyp-evidence", allow_blank=True)

    def on_mount(self) -> None:
        table = self.query_one("#hyp-table", DataTable)
        lang = self.lang
        table.add_columns(
            t("hyp.col.status", lang),
            t("hyp.statement", lang),
            t("hyp.falsifier", lang),
            t("hyp.col.evidence", lang),
        )
        self.incident_changed()

    def incident_changed(self) -> None:
        assert self.ctx.session is not None
        inc = self.ctx.session.incident
        table = self.query_one("#hyp-table", DataTable)
        cursor = table.cursor_row
        table.clear()
        labels = {e.id: e.label for e in inc.evidence}
        for hyp in inc.hypotheses:
            table.add_row(
                t(f"hyp.status.{hyp.status.value}", self.lang),
                hyp.statement,
                hyp.falsifier,
                ", ".join(labels.get(i, i) for i in hyp.evidence_ids),
                key=hyp.id,
            )
        if inc.hypotheses:
            table.move_cursor(row=min(max(cursor, 0), len(inc.hypotheses) - 1))
        select = self.query_one("#hyp-evidence", Select)
        select.set_options(
            # Text, not a markup string: what the user typed is shown as typed ("[/]" too).
            [(Text(f"{e.label} = {e.value} {e.unit}".strip()), e.id) for e in inc.evidence]
        )

    def _selected_id(self) -> str | None:
        assert self.ctx.session is not None
        hyps = self.ctx.session.incident.hypotheses
        table = self.query_one("#hyp-table", DataTable)
        if not hyps or table.cursor_row < 0 or table.cursor_row >= len(hyps):
            return None
        return hyps[table.cursor_row].id

    def on_button_pressed(self, event: Button.Pressed) -> None:
        assert self.ctx.session is not None
        bid = event.button.id
        if bid == "hyp-add":
            statement = self.query_one("#hyp-statement", Input)
            falsifier = self.query_one("#hyp-falsifier", Input)
            try:
                self.ctx.session.add_hypothesis(statement.value, falsifier.value)
            except RuleViolation as exc:
                self.query_one("#hyp-error", Static).update(t(exc.key, self.lang))
                return
            self.query_one("#hyp-error", Static).update("")
            statement.value = ""
            falsifier.value = ""
            self.incident_changed()
            return
        status = {
            "hyp-supported": HypothesisStatus.SUPPORTED,
            "hyp-refuted": HypothesisStatus.REFUTED,
            "hyp-open": HypothesisStatus.OPEN,
        }.get(bid or "")
        hyp_id = self._selected_id()
        if status is not None and hyp_id is not None:
            self.ctx.session.set_hypothesis_status(hyp_id, status)
            self.incident_changed()

    def on_select_changed(self, event: Select.Changed) -> None:
        assert self.ctx.session is not None
        hyp_id = self._selected_id()
        if hyp_id is None or event.value is Select.BLANK or not isinstance(event.value, str):
            return
        self.ctx.session.link_evidence(hyp_id, event.value)
        self.incident_changed()
