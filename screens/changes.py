"""B — recent changes: code, model, config, image, driver or node (seed 000, 先收集).

Changes found in Kubernetes (rollouts, Helm, nodes, ConfigMaps) and in the metrics
history (rollouts, restarts, readiness, allocatable GPUs, Xid, silent series, alerts)
come from the changes view when either source is configured; the user can add any other
change by hand and mark any change as suspect. Every change lands on the timeline.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.coordinate import Coordinate
from textual.widgets import Button, DataTable, Input, Label, Select, Static

from cockpit.analysis.changes import kind_name, table_changes
from cockpit.i18n import t
from cockpit.incident import Change
from cockpit.screens.base import StepScreen
from cockpit.timeparse import TimeParseError, fmt_time, parse_time
from cockpit.ui.fields import (
    ChangesNoteInput,
    TextInput,
    ValueInput,
    empty,
    entered_text,
    example_times,
)
from cockpit.ui.keys import localize_bindings
from cockpit.ui.ledger import LedgerEditor, row_buttons, selected_key
from cockpit.ui.select import LocalSelect
from cockpit.ui.table import PlainTable

CHANGE_KINDS = ("rollout", "model", "config", "image", "driver", "node", "helm", "manual")


class ChangeTable(PlainTable):
    """B's table of the incident's changes (⚑ = suspect): Alt+S marks or unmarks the
    selected row, as the button under it does and as Alt+S does in "Recent changes"."""

    BINDINGS: ClassVar[list[Any]] = [Binding("alt+s", "toggle_suspect", "Suspect")]

    def on_mount(self) -> None:
        localize_bindings(self, getattr(self.screen, "lang", "en"))

    def action_toggle_suspect(self) -> None:
        screen = self.screen
        if isinstance(screen, ChangesScreen):
            screen.toggle_selected_suspect(by_key=True)


class ChangesScreen(StepScreen):
    """Step B."""

    STEP = "B"
    FORMS = ((("chg-when", "chg-summary"), "chg-add"),)
    REQUIRED = frozenset({"chg-summary"})

    DEFAULT_CSS = """
    ChangesScreen Horizontal { height: auto; }
    ChangesScreen .cell { width: 1fr; height: auto; }
    ChangesScreen #chg-table { height: auto; max-height: 16; }
    """

    def compose_step(self) -> ComposeResult:
        lang = self.lang
        if self.ctx.sources.kube is None and self.ctx.sources.metrics is None:
            reason = self.ctx.sources.missing_text("kube", lang, t("panel.not_configured", lang))
            yield Static(
                t("chg.no_kube", lang, reason=reason),
                id="chg-no-kube",
                classes="error",
                markup=False,
            )
        else:
            from cockpit.ui.changes_view import ChangesView

            yield ChangesView(self.ctx)
        yield Static(t("chg.all", lang), classes="section")
        yield ChangeTable(id="chg-table", cursor_type="row", zebra_stripes=True)
        yield Button(t("chg.toggle_suspect", lang), id="chg-suspect")
        yield from row_buttons("chg", lang)
        yield Static(t("chg.add_title", lang), classes="section")
        with Horizontal():
            with Vertical(classes="cell"):
                yield Label(t("chg.when", lang))
                yield ValueInput(
                    placeholder=t("times.placeholder", lang, **example_times(self.ctx)),
                    id="chg-when",
                    compact=True,
                )
            with Vertical(classes="cell"):
                yield Label(t("chg.kind", lang))
                yield LocalSelect(
                    [(t(f"chg.kind.{k}", lang), k) for k in CHANGE_KINDS],
                    value="manual",
                    id="chg-kind",
                    allow_blank=False,
                )
        yield Label(t("chg.summary", lang))
        yield TextInput(placeholder=t("chg.summary.hint", lang), id="chg-summary", compact=True)
        yield Button(t("chg.add", lang), id="chg-add", variant="primary")
        yield Static("", id="chg-error", classes="error", markup=False)
        yield ChangesNoteInput(self.ctx)

    def on_mount(self) -> None:
        self.editor = LedgerEditor(
            self,
            self.ctx,
            "changes",
            "chg",
            {"summary": "chg-summary"},
            "chg.add",
            self.query_one("#chg-error", Static).update,
            name_row=lambda row: str(row.summary_in(self.lang)),
        )
        self.incident_changed()

    def _hold_selected(self) -> None:
        """A change found (not held by the incident yet) highlighted for Edit or Delete:
        the incident records it first, and the table's cursor stays on it."""
        assert self.ctx.session is not None
        table = self._table()
        key = selected_key(table)
        item = next((i for i in self.found_items() if f"found:{i.key}" == key), None)
        if item is None:
            return
        held = self.ctx.session.add_change(item.to_change()).id
        self.incident_changed()
        rows = [str(k.value) for k in table.rows]
        if held in rows:
            table.move_cursor(row=rows.index(held))

    def _table(self) -> PlainTable:
        """B's table of changes, its columns set the first time it is asked for (the
        changes view may have loaded and asked to fill it before the screen is mounted)."""
        table = self.query_one("#chg-table", PlainTable)
        if not table.columns:
            lang = self.lang
            table.add_columns(
                t("chg.suspect", lang),
                t("chg.when", lang),
                t("chg.kind", lang),
                t("chg.summary", lang),
            )
        return table

    def found_items(self) -> list[Any]:
        """The changes B's changes view found and lists (empty until it has loaded)."""
        from cockpit.ui.changes_view import ChangesView

        views = self.query(ChangesView)
        return list(views.first().items) if views else []

    def incident_changed(self) -> None:
        assert self.ctx.session is not None
        table = self._table()
        cursor = table.cursor_row
        table.clear()
        # Every change found is a row, marked or not: the count B says and the table agree.
        rows = table_changes(self.ctx.session.incident.changes, self.found_items())
        # What changed wraps at 80 columns: the mark, the time and the kind stay whole.
        table.add_rows_fitted(
            [
                (
                    (
                        "⚑" if c.suspect else "",
                        fmt_time(c.at),
                        kind_name(c.kind, self.lang),
                        c.summary_in(self.lang),
                    ),
                    key,
                )
                for key, c in rows
            ],
            wrap=3,
            minimum=16,
        )
        if rows:
            table.move_cursor(row=min(max(cursor, 0), len(rows) - 1))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        assert self.ctx.session is not None
        err = self.query_one("#chg-error", Static)
        bid = event.button.id or ""
        if bid in ("chg-edit", "chg-delete"):
            self._hold_selected()
        if self.editor.handle(bid):
            self.incident_changed()
            return
        if event.button.id == "chg-add" and self.editor.editing is not None:
            if not self.editor.values()["summary"]:
                err.update(t("chg.need_summary", self.lang))
                return
            self.editor.save()
            self.incident_changed()
            return
        if event.button.id == "chg-add":
            summary = self.query_one("#chg-summary", Input)
            when = entered_text(self.query_one("#chg-when", Input)).strip()
            if not entered_text(summary).strip():
                err.update(t("chg.need_summary", self.lang))
                return
            at = None
            if when:
                try:
                    at = parse_time(when, self.ctx.clock.logged())
                except TimeParseError:
                    err.update(t("times.unparsed", self.lang, text=when, **example_times(self.ctx)))
                    # The field to correct takes focus, its text to review after the cursor.
                    self.query_one("#chg-when", Input).focus()
                    return
            kind = self.query_one("#chg-kind", Select).value
            self.ctx.session.add_change(
                Change(at=at, kind=str(kind), summary=entered_text(summary).strip(), source="user")
            )
            # The whole form is empty for the next change (Ctrl+Z in a field brings back
            # its text): no time of the last one is glued to what is typed next.
            empty(summary)
            empty(self.query_one("#chg-when", Input))
            self.query_one("#chg-kind", Select).value = "manual"
            err.update("")
            self.incident_changed()
        elif event.button.id == "chg-suspect":
            self.toggle_selected_suspect()

    def toggle_selected_suspect(self, by_key: bool = False) -> None:
        """Mark or unmark the change selected in the table as suspect (its button, or
        Alt+S in the table that shows the ⚑): a change found but not held yet is recorded
        as it is marked."""
        err = self.query_one("#chg-error", Static)
        table = self.query_one("#chg-table", DataTable)
        session = self.ctx.session
        if session is None:
            return
        if table.row_count == 0 or table.cursor_row < 0:
            err.update(t("ledger.pick_row", self.lang))
            if by_key:
                # Alt+S in the table: said where the key was pressed, not only under the
                # button below
                self.notify(t("ledger.pick_row", self.lang), markup=False)
            return
        key = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
        item = next((i for i in self.found_items() if f"found:{i.key}" == key), None)
        if item is not None:
            # a change found but not held yet: the incident records it as it is marked
            key = session.add_change(item.to_change()).id
        chg = next((c for c in session.incident.changes if c.id == key), None)
        if chg is not None:
            from cockpit.ui.changes_view import ChangesView, toggle_suspect_said

            err.update("")
            toggle_suspect_said(self.ctx, self, chg.id, chg.summary_in(self.lang))
            self.incident_changed()

            for view in self.query(ChangesView):
                if view.report is not None:
                    view.show(view.report)  # its ⚑ follows the mark
