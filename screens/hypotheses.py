"""G — falsifiable hypotheses: statement, the observation that would refute it, linked
evidence, status open / supported / refuted (seed 000: 提出可证伪假设).

The ledger's table holds what fits an 80-column screen (number, status, the statement
cut short, how many pieces of evidence); the highlighted row is shown whole, wrapped, in
the pane under it: statement, falsifier and evidence are never off to the right. Rows are
edited in the form above and deleted with the buttons under the table (see
:mod:`cockpit.ui.ledger`)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button, DataTable, Label, Select, Static

from cockpit.history import short
from cockpit.i18n import t
from cockpit.incident import HypothesisStatus
from cockpit.screens.base import StepScreen
from cockpit.session import RuleViolation
from cockpit.ui.drill_form import DrillAnswerForm
from cockpit.ui.fields import TextInput
from cockpit.ui.ledger import LedgerEditor, detail_text, row_buttons, selected_key
from cockpit.ui.likely_view import LikelyView
from cockpit.ui.select import LocalSelect
from cockpit.ui.table import PlainTable

STATEMENT_CELL = 48
"""Columns of the statement shown in the table at least (the pane shows it whole)."""
STATUS_AND_COUNT = 32
"""Columns the number, status and evidence count take with their padding and the scroll bar:
the statement gets the rest of the screen's width."""


class HypothesesScreen(StepScreen):
    """The hypothesis ledger."""

    STEP = "G"
    FORMS = ((("hyp-statement", "hyp-falsifier"), "hyp-add"),)
    REQUIRED = frozenset({"hyp-statement", "hyp-falsifier"})

    DEFAULT_CSS = """
    HypothesesScreen Horizontal { height: auto; }
    HypothesesScreen #hyp-table { height: auto; max-height: 12; }
    HypothesesScreen #hyp-detail { height: auto; border-left: thick $accent; padding: 0 1; }
    HypothesesScreen Input { width: 1fr; }
    """

    def compose_step(self) -> ComposeResult:
        lang = self.lang
        if self.ctx.sources.metrics is not None and not self.ctx.drill:
            # What the analysis concludes, to state (and try to refute) as a hypothesis.
            yield LikelyView(self.ctx, id="hyp-likely")
        if self.ctx.drill:
            yield DrillAnswerForm(self.ctx, self.STEP)
        yield Label(t("hyp.statement", lang))
        yield TextInput(placeholder=t("hyp.statement.hint", lang), id="hyp-statement", compact=True)
        yield Label(t("hyp.falsifier", lang))
        yield TextInput(placeholder=t("hyp.falsifier.hint", lang), id="hyp-falsifier", compact=True)
        yield Button(t("hyp.add", lang), id="hyp-add", variant="primary")
        yield Static("", id="hyp-error", classes="error", markup=False)
        yield Static(t("hyp.ledger", lang), classes="section")
        yield PlainTable(id="hyp-table", cursor_type="row", zebra_stripes=True)
        yield Static(t("ledger.detail.none", lang), id="hyp-detail")
        yield from row_buttons("hyp", lang)
        with Horizontal():
            yield Button(t("hyp.mark_supported", lang), id="hyp-supported", variant="success")
            yield Button(t("hyp.mark_refuted", lang), id="hyp-refuted", variant="error")
            yield Button(t("hyp.mark_open", lang), id="hyp-open")
        yield Static(t("hyp.link_hint", lang), classes="hint")
        yield LocalSelect([], prompt=t("hyp.link", lang), id="hyp-evidence", allow_blank=True)
        yield Static("", id="hyp-link-said", classes="hint", markup=False)

    def on_mount(self) -> None:
        self.editor = LedgerEditor(
            self,
            self.ctx,
            "hypotheses",
            "hyp",
            {"statement": "hyp-statement", "falsifier": "hyp-falsifier"},
            "hyp.add",
            self.query_one("#hyp-error", Static).update,
        )
        table = self.query_one("#hyp-table", DataTable)
        lang = self.lang
        table.add_columns(
            "#",
            t("hyp.col.status", lang),
            t("hyp.statement", lang),
            t("hyp.col.evidence", lang),
        )
        self.incident_changed()

    def incident_changed(self) -> None:
        assert self.ctx.session is not None
        inc = self.ctx.session.incident
        table = self.query_one("#hyp-table", DataTable)
        cursor = table.cursor_row
        table.clear()
        for hyp in inc.hypotheses:
            table.add_row(
                str(hyp.number),
                t(f"hyp.status.{hyp.status.value}", self.lang),
                short(hyp.statement, max(self.app.size.width - STATUS_AND_COUNT, STATEMENT_CELL)),
                str(len(hyp.evidence_ids)),
                key=hyp.id,
            )
        if inc.hypotheses:
            table.move_cursor(row=min(max(cursor, 0), len(inc.hypotheses) - 1))
        self.show_detail()
        select = self.query_one("#hyp-evidence", Select)
        select.set_options(
            # Text, not a markup string: what the user typed is shown as typed ("[/]" too).
            [(Text(f"{e.label} = {e.value} {e.unit}".strip()), e.id) for e in inc.evidence]
        )
        # An empty list says so where it is, before it is opened to nothing.
        select.prompt = t("hyp.link" if inc.evidence else "hyp.link.none", self.lang)

    def show_detail(self) -> None:
        """The highlighted hypothesis in full, wrapped, under the table."""
        assert self.ctx.session is not None
        inc = self.ctx.session.incident
        hyp = self.editor.selected()
        pane = self.query_one("#hyp-detail", Static)
        if hyp is None:
            pane.update(t("ledger.detail.none", self.lang))
            return
        labels = {e.id: f"{e.label} = {e.value} {e.unit}".strip() for e in inc.evidence}
        pane.update(
            detail_text(
                [
                    (t("hyp.statement", self.lang), hyp.statement),
                    (t("hyp.falsifier", self.lang), hyp.falsifier),
                    (
                        t("hyp.col.status", self.lang),
                        t(f"hyp.status.{hyp.status.value}", self.lang),
                    ),
                    (
                        t("hyp.col.evidence", self.lang),
                        "; ".join(labels.get(i, i) for i in hyp.evidence_ids),
                    ),
                ]
            )
        )

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "hyp-table":
            self.show_detail()

    def _selected_id(self) -> str | None:
        return selected_key(self.query_one("#hyp-table", DataTable))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        assert self.ctx.session is not None
        bid = event.button.id or ""
        if self.editor.handle(bid):
            self.incident_changed()
            return
        if bid == "hyp-add":
            self._add_or_save()
            return
        status = {
            "hyp-supported": HypothesisStatus.SUPPORTED,
            "hyp-refuted": HypothesisStatus.REFUTED,
            "hyp-open": HypothesisStatus.OPEN,
        }.get(bid)
        hyp_id = self._selected_id()
        if status is not None and hyp_id is None:
            self.query_one("#hyp-error", Static).update(t("ledger.pick_row", self.lang))
        elif status is not None and hyp_id is not None:
            self.ctx.session.set_hypothesis_status(hyp_id, status)
            self.incident_changed()

    def _add_or_save(self) -> None:
        assert self.ctx.session is not None
        error = self.query_one("#hyp-error", Static)
        values = self.editor.values()
        try:
            if self.editor.editing is not None:
                self.editor.save()
            else:
                self.ctx.session.add_hypothesis(values["statement"], values["falsifier"])
                self.editor.end()
        except RuleViolation as exc:
            error.update(t(exc.key, self.lang))
            return
        self.incident_changed()

    def on_local_select_chosen(self, event: LocalSelect.Chosen) -> None:
        """The blank line chosen in the evidence drop-down links nothing, and says so
        (a piece of evidence chosen is linked by :meth:`on_select_changed`)."""
        if event.select.id == "hyp-evidence" and not isinstance(event.value, str):
            self.query_one("#hyp-link-said", Static).update(t("hyp.link.nothing", self.lang))

    def on_select_changed(self, event: Select.Changed) -> None:
        """A piece of evidence chosen is linked to the highlighted hypothesis; the panel
        says what was linked, or why nothing was (no row highlighted, already linked).
        The drop-down is emptied again for the next link."""
        assert self.ctx.session is not None
        if event.select.id != "hyp-evidence" or not isinstance(event.value, str):
            return
        said = self.query_one("#hyp-link-said", Static)
        inc = self.ctx.session.incident
        hyp_id = self._selected_id()
        hyp = next((h for h in inc.hypotheses if h.id == hyp_id), None)
        evidence = next((e for e in inc.evidence if e.id == event.value), None)
        if hyp is None or evidence is None:
            said.update(t("hyp.link.no_row", self.lang))
        else:
            label = f"{evidence.label} = {evidence.value} {evidence.unit}".strip()
            number = inc.hypotheses.index(hyp) + 1
            if evidence.id in hyp.evidence_ids:
                said.update(t("hyp.link.already", self.lang, evidence=label, n=number))
            else:
                self.ctx.session.link_evidence(hyp.id, evidence.id)
                said.update(t("hyp.link.done", self.lang, evidence=label, n=number))
                self.incident_changed()
        event.select.clear()
