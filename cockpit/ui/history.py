"""The change history (F8, or "修改历史" in the command palette): every change to the
incident with the value it replaced, newest first; "Restore" puts the selected entry's
earlier value back (a wiped title, a cleared time, a deleted hypothesis)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.coordinate import Coordinate
from textual.screen import ModalScreen
from textual.widgets import Button, DataTable, Static

from cockpit.context import AppContext
from cockpit.history import entry_line
from cockpit.i18n import t
from cockpit.incident import HistoryOp
from cockpit.session import BASELINE_TARGET, RuleViolation
from cockpit.timeparse import fmt_time
from cockpit.ui.keys import localize_bindings
from cockpit.ui.nowhere import SaysWhereTypingGoes
from cockpit.ui.table import PlainTable


class HistoryScreen(SaysWhereTypingGoes, ModalScreen[None]):
    """The incident's history with a Restore button (see :mod:`cockpit.history`)."""

    DIALOG_TITLE_KEY = "history.title"
    """What names the dialog's unnamed stop (its one list, table or text)."""

    DEFAULT_CSS = """
    HistoryScreen { align: center middle; }
    HistoryScreen > Vertical { width: 95%; max-width: 150; height: 90%; border: thick $primary;
        background: $surface; padding: 0 1; }
    HistoryScreen #history-table { height: 1fr; }
    HistoryScreen Horizontal { height: auto; }
    HistoryScreen #history-status { height: auto; }
    """
    BINDINGS = [Binding("escape", "close", "Close")]

    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self.ctx = ctx
        localize_bindings(self, ctx.lang)

    def compose(self) -> ComposeResult:
        lang = self.ctx.lang
        with Vertical():
            yield Static(f"[b]{t('history.title', lang)}[/b]")
            yield Static(t("history.hint", lang), classes="hint", markup=False)
            yield PlainTable(id="history-table", cursor_type="row", zebra_stripes=True)
            yield Static("", id="history-status", markup=False)
            with Horizontal():
                yield Button(t("history.restore", lang), id="history-restore", variant="primary")
                yield Button(t("history.close", lang), id="history-close")

    def on_mount(self) -> None:
        table = self.query_one("#history-table", DataTable)
        table.add_columns(
            t("history.col.at", self.ctx.lang), t("history.col.change", self.ctx.lang)
        )
        self.reload()
        table.focus()

    def reload(self) -> None:
        """Rebuild the table from the incident, newest first."""
        assert self.ctx.session is not None
        inc = self.ctx.session.incident
        table = self.query_one("#history-table", DataTable)
        table.clear()
        for entry in reversed(inc.history):
            table.add_row(fmt_time(entry.at), entry_line(inc, entry, self.ctx.lang), key=entry.id)
        if not inc.history:
            self.query_one("#history-status", Static).update(t("history.none", self.ctx.lang))

    def _selected(self) -> str | None:
        table = self.query_one("#history-table", DataTable)
        if table.row_count == 0 or table.cursor_row < 0:
            return None
        key = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
        return str(key) if key is not None else None

    def restore_selected(self) -> None:
        """Restore the selected entry and say what came back (or why it cannot)."""
        assert self.ctx.session is not None
        status = self.query_one("#history-status", Static)
        entry_id = self._selected()
        if entry_id is None:
            status.update(t("history.pick_row", self.ctx.lang))
            return
        try:
            entry = self.ctx.session.restore(entry_id)
        except RuleViolation as exc:
            status.update(t(exc.key, self.ctx.lang))
            return
        if entry.target == BASELINE_TARGET:
            from cockpit.collect.cache import set_baseline

            set_baseline(self.ctx, self.ctx.session.incident.opened_with.baseline)
        inc = self.ctx.session.incident
        # the restore's own entry reads the way it went (what the field held → what it
        # holds again); the entry restored from reads the other way
        done = inc.history[-1] if inc.history and inc.history[-1].op is HistoryOp.RESTORE else None
        lang = self.ctx.lang
        if done is not None and done.target == entry.target and done.old is not None:
            what = entry_line(inc, done.model_copy(update={"op": HistoryOp.SET}), lang)
        else:
            what = entry_line(inc, entry, lang)  # a row put back: "deleted …" names it
        status.update(t("history.restored", lang, what=what))
        self.reload()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "history-restore":
            self.restore_selected()
        elif event.button.id == "history-close":
            self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)
