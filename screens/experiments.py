"""H — change one variable at a time (seed 000: 一次改变一个变量). Each entry changes exactly
one variable and records the chosen SLI before and after; a second variable is refused
with the seed's reason."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, DataTable, Input, Label, Select, Static

from cockpit.i18n import t
from cockpit.incident import Experiment
from cockpit.screens.base import StepScreen
from cockpit.session import RuleViolation
from cockpit.timeparse import fmt_time
from cockpit.ui.fields import TextInput
from cockpit.ui.select import LocalSelect
from cockpit.ui.table import PlainTable


class ExperimentsScreen(StepScreen):
    """The experiment log."""

    STEP = "H"

    DEFAULT_CSS = """
    ExperimentsScreen Horizontal { height: auto; }
    ExperimentsScreen .cell { width: 1fr; height: auto; }
    ExperimentsScreen #exp-table { height: auto; max-height: 14; }
    """

    def compose_step(self) -> ComposeResult:
        lang = self.lang
        with Horizontal():
            with Vertical(classes="cell"):
                yield Label(t("exp.variable", lang))
                yield TextInput(
                    placeholder=t("exp.variable.hint", lang), id="exp-variable", compact=True
                )
            with Vertical(classes="cell"):
                yield Label(t("exp.change", lang))
                yield TextInput(
                    placeholder=t("exp.change.hint", lang), id="exp-change", compact=True
                )
        with Horizontal():
            with Vertical(classes="cell"):
                yield Label(t("exp.sli", lang))
                yield TextInput(placeholder=t("exp.sli.hint", lang), id="exp-sli", compact=True)
            with Vertical(classes="cell"):
                yield Label(t("exp.before", lang))
                yield TextInput(
                    placeholder=t("exp.before.hint", lang), id="exp-before", compact=True
                )
        yield LocalSelect(
            [], prompt=t("exp.hypothesis", lang), id="exp-hypothesis", allow_blank=True
        )
        yield Button(t("exp.add", lang), id="exp-add", variant="primary")
        yield Static("", id="exp-error", classes="error", markup=False)
        yield Static(t("exp.log", lang), classes="section")
        yield PlainTable(id="exp-table", cursor_type="row", zebra_stripes=True)
        with Horizontal():
            with Vertical(classes="cell"):
                yield Label(t("exp.after", lang))
                yield TextInput(placeholder=t("exp.after.hint", lang), id="exp-after", compact=True)
            yield Button(t("exp.record_after", lang), id="exp-record")

    def on_mount(self) -> None:
        lang = self.lang
        self.query_one("#exp-table", DataTable).add_columns(
            t("exp.col.at", lang),
            t("exp.variable", lang),
            t("exp.change", lang),
            t("exp.sli", lang),
            t("exp.before", lang),
            t("exp.after", lang),
        )
        self.incident_changed()

    def incident_changed(self) -> None:
        assert self.ctx.session is not None
        inc = self.ctx.session.incident
        table = self.query_one("#exp-table", DataTable)
        table.clear()
        for exp in inc.experiments:
            table.add_row(
                fmt_time(exp.at),
                exp.variable,
                exp.change,
                exp.sli,
                exp.before,
                exp.after or t("exp.pending", self.lang),
                key=exp.id,
            )
        if inc.experiments:
            table.move_cursor(row=len(inc.experiments) - 1)
        self.query_one("#exp-hypothesis", Select).set_options(
            # Text, not a markup string: what the user typed is shown as typed ("[/]" too).
            [(Text(h.statement[:60]), h.id) for h in inc.hypotheses]
        )

    def on_button_pressed(self, event: Button.Pressed) -> None:
        assert self.ctx.session is not None
        err = self.query_one("#exp-error", Static)
        if event.button.id == "exp-add":
            hyp = self.query_one("#exp-hypothesis", Select).value
            exp = Experiment(
                at=self.ctx.clock.now(),
                variable=self.query_one("#exp-variable", Input).value.strip(),
                change=self.query_one("#exp-change", Input).value.strip(),
                sli=self.query_one("#exp-sli", Input).value.strip(),
                before=self.query_one("#exp-before", Input).value.strip(),
                hypothesis_id=hyp if isinstance(hyp, str) else "",
            )
            try:
                self.ctx.session.add_experiment(exp)
            except RuleViolation as exc:
                err.update(t(exc.key, self.lang))
                return
            err.update("")
            for wid in ("#exp-variable", "#exp-change", "#exp-before"):
                self.query_one(wid, Input).value = ""
            self.incident_changed()
        elif event.button.id == "exp-record":
            exps = self.ctx.session.incident.experiments
            table = self.query_one("#exp-table", DataTable)
            after = self.query_one("#exp-after", Input).value.strip()
            if not exps or not after:
                err.update(t("exp.need_after", self.lang))
                return
            row = table.cursor_row if 0 <= table.cursor_row < len(exps) else len(exps) - 1
            self.ctx.session.record_experiment_result(exps[row].id, after)
            self.query_one("#exp-after", Input).value = ""
            err.update("")
            self.incident_changed()
