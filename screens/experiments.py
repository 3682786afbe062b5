"""H — change one variable at a time (seed 000: 一次改变一个变量). Each entry changes exactly
one variable — its name, its value before and after, and where it was changed — and
records the chosen SLI before and after; a second variable is refused with the seed's
reason. "One variable" is read from these fields, not from the punctuation of the text:
``max_num_seqs: 256 → 128, on pod a, b`` typed into the variable field is one variable
changed on two pods.

The table shows what fits 80 columns; the highlighted experiment is shown whole in the
pane under it. Rows are edited in the form and deleted with the buttons under the table
(see :mod:`cockpit.ui.ledger`)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, DataTable, Label, Select, Static

from cockpit.history import short
from cockpit.i18n import t
from cockpit.incident import Experiment
from cockpit.screens.base import StepScreen
from cockpit.session import RuleViolation
from cockpit.timeparse import fmt_time
from cockpit.ui.fields import TextInput, ValueInput, entered_text
from cockpit.ui.ledger import LedgerEditor, detail_text, row_buttons
from cockpit.ui.select import LocalSelect
from cockpit.ui.table import PlainTable

FORM = {
    "variable": "exp-variable",
    "from_value": "exp-from",
    "to_value": "exp-to",
    "scope": "exp-scope",
    "sli": "exp-sli",
    "before": "exp-before",
}
"""Experiment field → id of its input in the form."""

ONE_VALUE = frozenset({"from_value", "to_value", "before"})
"""Form fields holding one value (``256``, ``620 ms``): typing after Tab replaces it."""

_LABELS = {
    "variable": "exp.variable",
    "from_value": "exp.from",
    "to_value": "exp.to",
    "scope": "exp.scope",
    "sli": "exp.sli",
    "before": "exp.before",
}


class ExperimentsScreen(StepScreen):
    """The experiment log."""

    STEP = "H"
    FORMS = (
        (tuple(FORM.values()), "exp-add"),
        (("exp-after",), "exp-record"),
    )
    REQUIRED = frozenset({"exp-variable", "exp-after"})

    DEFAULT_CSS = """
    ExperimentsScreen Horizontal { height: auto; }
    ExperimentsScreen .cell { width: 1fr; height: auto; }
    ExperimentsScreen #exp-table { height: auto; max-height: 12; }
    ExperimentsScreen #exp-detail { height: auto; border-left: thick $accent; padding: 0 1; }
    ExperimentsScreen #exp-after { width: 1fr; }
    """

    def compose_step(self) -> ComposeResult:
        lang = self.lang
        names = list(FORM)
        for pair in (names[0:2], names[2:4], names[4:6]):
            with Horizontal():
                for name in pair:
                    with Vertical(classes="cell"):
                        yield Label(t(_LABELS[name], lang))
                        kind = ValueInput if name in ONE_VALUE else TextInput
                        yield kind(
                            placeholder=t(f"{_LABELS[name]}.hint", lang),
                            id=FORM[name],
                            compact=True,
                        )
        yield LocalSelect(
            [], prompt=t("exp.hypothesis", lang), id="exp-hypothesis", allow_blank=True
        )
        yield Button(t("exp.add", lang), id="exp-add", variant="primary")
        yield Static("", id="exp-error", classes="error", markup=False)
        yield Static(t("exp.log", lang), classes="section")
        yield PlainTable(id="exp-table", cursor_type="row", zebra_stripes=True)
        yield Static(t("ledger.detail.none", lang), id="exp-detail")
        yield from row_buttons("exp", lang)
        # The label above, the field and its button on one row: the field comes first on
        # screen as in the Tab order.
        yield Label(t("exp.after", lang), id="exp-after-label")
        with Horizontal():
            yield TextInput(placeholder=t("exp.after.hint", lang), id="exp-after", compact=True)
            yield Button(t("exp.record_after", lang), id="exp-record")

    def on_mount(self) -> None:
        lang = self.lang
        self.editor = LedgerEditor(
            self,
            self.ctx,
            "experiments",
            "exp",
            FORM,
            "exp.add",
            self.query_one("#exp-error", Static).update,
        )
        self.query_one("#exp-table", DataTable).add_columns(
            "#",
            t("exp.col.at", lang),
            t("exp.variable.short", lang),
            t("exp.change", lang),
            t("exp.after", lang),
        )
        self.incident_changed()

    def incident_changed(self) -> None:
        assert self.ctx.session is not None
        inc = self.ctx.session.incident
        table = self.query_one("#exp-table", DataTable)
        table.clear()
        # The number, time and result take ~30 columns; the rest is shared out, so the
        # table never runs past the screen's right edge (the pane shows each row whole).
        free = max(self.app.size.width - 32, 40)
        for exp in inc.experiments:
            table.add_row(
                str(exp.number),
                fmt_time(exp.at)[11:16],
                short(exp.variable, free * 2 // 5),
                short(exp.change_text(), free * 3 // 5),
                short(exp.after, 12) or t("exp.pending", self.lang),
                key=exp.id,
            )
        if inc.experiments:
            table.move_cursor(row=len(inc.experiments) - 1)
        self.show_detail()
        select = self.query_one("#exp-hypothesis", Select)
        chosen = select.value
        select.set_options(
            # Text, not a markup string: what the user typed is shown as typed ("[/]" too).
            # Each by the number G's ledger gives it; a long statement is cut with "…"
            # (the highlighted option wraps onto more lines rather than being cut).
            [(Text(f"{h.number}. {short(h.statement, 140)}"), h.id) for h in inc.hypotheses]
        )
        if any(h.id == chosen for h in inc.hypotheses):
            select.value = chosen  # a refresh does not drop the user's choice

    def show_detail(self) -> None:
        """The highlighted experiment in full, wrapped, under the table."""
        assert self.ctx.session is not None
        exp = self.editor.selected()
        pane = self.query_one("#exp-detail", Static)
        self.query_one("#exp-after-label", Label).update(self._after_label())
        self._show_result()
        if exp is None:
            pane.update(t("ledger.detail.none", self.lang))
            return
        hyps = {h.id: h.statement for h in self.ctx.session.incident.hypotheses}
        pairs = [(t("exp.col.at", self.lang), fmt_time(exp.at))]
        pairs += [
            (t(_LABELS[name], self.lang), str(getattr(exp, name)))
            for name in FORM
            # A change written before from/to existed is shown as written, below.
            if getattr(exp, name) or not exp.change
        ]
        if exp.change:
            pairs.append((t("exp.change", self.lang), exp.change))
        pairs.append((t("exp.after", self.lang), exp.after or t("exp.pending", self.lang)))
        if exp.hypothesis_id:
            pairs.append(
                (t("exp.hypothesis", self.lang), hyps.get(exp.hypothesis_id, exp.hypothesis_id))
            )
        pane.update(detail_text(pairs))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "exp-table":
            self.show_detail()

    def _result_of(self) -> Experiment | None:
        """The experiment the "after" field records the result of: the highlighted one,
        else the last one logged."""
        assert self.ctx.session is not None
        exps = self.ctx.session.incident.experiments
        exp: Experiment | None = self.editor.selected() or (exps[-1] if exps else None)
        return exp

    _result_shown = ""
    """What :meth:`_show_result` last put in the "after" field."""

    def _show_result(self) -> None:
        """The "after" field shows the result saved for its experiment (empty while it has
        none): a result saved stays in sight, so typing there again is visibly an edit of
        it. Not while the field has focus, nor over a result typed and not yet recorded
        (what is typed there is the user's)."""
        field = self.query_one("#exp-after", TextInput)
        exp = self._result_of()
        saved = exp.after if exp is not None else ""
        if field.has_focus or field.value not in (saved, self._result_shown):
            return
        if field.value != saved:
            field.load(saved)
        self._result_shown = saved

    def _after_label(self) -> str:
        """The "after" field's label names the experiment its result is recorded for
        (the highlighted one): "After — result of experiment 2 (max_num_seqs)"."""
        exp = self._result_of()
        if exp is None:
            return t("exp.after", self.lang)
        return t(
            "exp.after.of",
            self.lang,
            n=exp.number,
            variable=short(exp.variable, 40),
        )

    def _await_result(self) -> None:
        """The last experiment logged is selected and its "after" field, labelled with the
        experiment's number, has focus, scrolled into sight; a notice says typing goes
        there now."""
        table = self.query_one("#exp-table", DataTable)
        if table.row_count:
            table.move_cursor(row=table.row_count - 1)
        self.show_focused(self.query_one("#exp-after", TextInput))
        self.notify(t("exp.logged_typing_goes", self.lang, label=self._after_label()), markup=False)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        assert self.ctx.session is not None
        err = self.query_one("#exp-error", Static)
        bid = event.button.id or ""
        if self.editor.handle(bid):
            self.incident_changed()
            if bid == "exp-edit" and (exp := self.editor.row(self.editor.editing)) is not None:
                # The hypothesis the row tests goes into the form with its other fields.
                select = self.query_one("#exp-hypothesis", Select)
                select.value = exp.hypothesis_id or Select.NULL
        elif bid == "exp-add":
            hyp = self.query_one("#exp-hypothesis", Select).value
            hypothesis_id = hyp if isinstance(hyp, str) else ""
            try:
                if self.editor.editing is not None:
                    self.editor.save(hypothesis_id=hypothesis_id)
                else:
                    self.ctx.session.add_experiment(
                        Experiment(
                            at=self.ctx.clock.logged(),
                            hypothesis_id=hypothesis_id,
                            **self.editor.values(),
                        )
                    )
                    self.editor.end()
                    # What comes next is its result: the new row is the selected one and
                    # its (empty) "after" field takes focus, not a new draft of another
                    # experiment (which waits for this result anyway).
                    self.call_after_refresh(self._await_result)
            except RuleViolation as exc:
                err.update(t(exc.key, self.lang))
                return
            # The form is empty for the next experiment (the logged one is in the
            # ledger, and the history keeps an edit's previous text).
            self.query_one("#exp-hypothesis", Select).clear()
            self.incident_changed()
        elif bid == "exp-record":
            exps = self.ctx.session.incident.experiments
            after = entered_text(self.query_one("#exp-after", TextInput)).strip()
            if not exps or not after:
                err.update(t("exp.need_after", self.lang))
                return
            exp = self.editor.selected() or exps[-1]
            before = exp.after
            self.ctx.session.record_experiment_result(exp.id, after)
            self._result_shown = after
            # The field keeps the saved result (never emptied under the cursor, where a
            # second sentence and Enter would replace it unseen) and says what was done.
            key = "exp.result_recorded"
            if before and before != after:
                key = "exp.result_replaced"
            elif before == after:
                key = "exp.result_unchanged"
            said = t(key, self.lang, n=exp.number)
            err.update(said)
            self.notify(said, markup=False)
            self.incident_changed()
