"""Editing and deleting the rows of a ledger shown as a table above its form (hypotheses on
G, experiments on H, action items on I, the timeline on A).

"Edit" loads the selected row into the form and turns the form's add button into
"Save changes"; "Delete" removes the row (the incident's history keeps it: F8 puts it
back). Both go through :meth:`cockpit.session.IncidentSession.edit_row` /
:meth:`~cockpit.session.IncidentSession.delete_row`, so each change keeps the value it
replaced.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.coordinate import Coordinate
from textual.screen import Screen
from textual.widgets import Button, DataTable, Input
from textual.widgets.data_table import RowDoesNotExist

from cockpit.context import AppContext
from cockpit.i18n import t
from cockpit.ui.buttons import relabel
from cockpit.ui.fields import TextInput, entered_text


def selected_key(table: DataTable[Any]) -> str | None:
    """The key of the table's highlighted row (``None`` when the table is empty)."""
    if table.row_count == 0 or not 0 <= table.cursor_row < table.row_count:
        return None
    key = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
    return str(key) if key is not None else None


def row_buttons(prefix: str, lang: str) -> ComposeResult:
    """The row's buttons under a ledger table: Edit, Delete, and Cancel (while editing)."""
    with Horizontal(classes="ledger-buttons"):
        yield Button(t("ledger.edit", lang), id=f"{prefix}-edit")
        yield Button(t("ledger.delete", lang), id=f"{prefix}-delete", variant="error")
        cancel = Button(t("ledger.cancel", lang), id=f"{prefix}-cancel")
        cancel.display = False
        yield cancel


def load(field: Input, value: str) -> None:
    """Show ``value`` in a form's field as text the user has not typed: a Ctrl+Z there
    undoes only what is typed from now on, never back to another row's text."""
    if isinstance(field, TextInput):
        field.load(value)
    else:
        field.value = value


class LedgerEditor:
    """The editing state of one ledger on one screen.

    Args:
        screen: The step screen holding the table and the form.
        ctx: The app context (session, language).
        ledger: The incident list (``hypotheses``, ``experiments``, ``actions``, ``timeline``).
        prefix: Id prefix of the table (``<prefix>-table``), the row buttons and the form's
            add button (``<prefix>-add``).
        fields: Row field → id of the ``Input`` holding it in the form.
        add_label: i18n key of the add button's label when not editing.
        show: Writes a message for the user (a rule the edit broke, what was deleted).
        table_id: Id of the table when it is not ``<prefix>-table``.
    """

    def __init__(
        self,
        screen: Screen[Any],
        ctx: AppContext,
        ledger: str,
        prefix: str,
        fields: dict[str, str],
        add_label: str,
        show: Callable[[str], None],
        table_id: str = "",
        name_row: Callable[[Any], str] | None = None,
    ) -> None:
        self.name_row = name_row
        """Names a row by its text where the table shows no number (B's changes)."""
        self.table_id = table_id or f"{prefix}-table"
        self.screen = screen
        self.ctx = ctx
        self.ledger = ledger
        self.prefix = prefix
        self.fields = fields
        self.add_label = add_label
        self.show = show
        self.editing: str | None = None
        """Id of the row loaded into the form, ``None`` when the form adds a new row."""
        self.deleted: str | None = None
        """Id of the row the "Deleted (F8 …)" notice is about (``None``: no such notice)."""
        self.draft: dict[str, str] = {}
        """What the form held, unsaved, when a row was loaded into it to edit (input id →
        text): put back in the form when the edit ends, saved or cancelled."""
        editors = getattr(screen, "ledger_editors", None)
        if isinstance(editors, list):
            editors.append(self)  # the step screen syncs it when the incident changes

    @property
    def lang(self) -> str:
        return self.ctx.lang

    def table(self) -> DataTable[Any]:
        return self.screen.query_one(f"#{self.table_id}", DataTable)

    def row(self, row_id: str | None) -> Any:
        """The incident's row with ``row_id`` (``None`` when there is none)."""
        assert self.ctx.session is not None
        rows = getattr(self.ctx.session.incident, self.ledger)
        return next((r for r in rows if r.id == row_id), None)

    def selected(self) -> Any:
        """The row highlighted in the table."""
        return self.row(selected_key(self.table()))

    def handle(self, button_id: str) -> bool:
        """Act on the row buttons; True when ``button_id`` was one of them."""
        if button_id == f"{self.prefix}-edit":
            self.begin()
        elif button_id == f"{self.prefix}-delete":
            self.delete()
        elif button_id == f"{self.prefix}-cancel":
            self.end()
        else:
            return False
        return True

    def begin(self) -> None:
        """Load the selected row into the form; the add button becomes "Save changes"."""
        row = self.selected()
        if row is None:
            self.show(t("ledger.pick_row", self.lang))
            return
        if self.unsaved_edit():
            return
        if self.editing is None:
            # A row of the user's own being typed is kept, never replaced unseen.
            held = {i: self.screen.query_one(f"#{i}", Input).value for i in self.fields.values()}
            self.draft = held if any(text.strip() for text in held.values()) else {}
        self.editing = row.id
        for name, input_id in self.fields.items():
            load(self.screen.query_one(f"#{input_id}", Input), str(getattr(row, name)))
        relabel(self.screen.query_one(f"#{self.prefix}-add", Button), t("ledger.save", self.lang))
        self.screen.query_one(f"#{self.prefix}-cancel", Button).display = True
        first = self.screen.query_one(f"#{next(iter(self.fields.values()))}", Input)
        first.focus()
        # Edits add to the text: the cursor after it, not before it.
        first.cursor_position = len(first.value)
        said = self.editing_said(row)
        if self.draft:
            said += self._gap() + t("ledger.draft_kept", self.lang)
        self.show(said)

    def unsaved_edit(self) -> bool:
        """A row being edited whose form differs from the row (changes not saved yet) is
        never replaced by another row unseen: the notice names the row and the two ways
        out, focus goes to the first changed field (True when it did)."""
        current = self.row(self.editing)
        if current is None:
            return False
        for name, input_id in self.fields.items():
            field = self.screen.query_one(f"#{input_id}", Input)
            if field.value != str(getattr(current, name)):
                field.focus()
                what = t(f"ledger.row.{self.ledger}", self.lang)
                label = (
                    self.name_row(current) if self.name_row is not None else self.number(current)
                )
                self.show(t("ledger.unsaved_edit", self.lang, what=what, n=label))
                return True
        return False

    def _gap(self) -> str:
        return "" if self.lang == "zh" else " "

    def editing_said(self, row: Any) -> str:
        """ "Editing hypothesis 3 — Enter saves, Esc cancels": which row the form holds
        (its number in the ledger) and the two ways out."""
        what = t(f"ledger.row.{self.ledger}", self.lang)
        if self.name_row is not None:
            return t("ledger.editing_named", self.lang, what=what, name=self.name_row(row))
        return t("ledger.editing_row", self.lang, what=what, n=self.number(row))

    def number(self, row: Any) -> int:
        """The row's number as the table shows it: its own (H3, E2), else its place in the
        table, from 1 (the table may order its rows otherwise than the incident keeps them,
        or hold rows the incident does not: B's changes found)."""
        assert self.ctx.session is not None
        own = int(getattr(row, "number", 0) or 0)
        if own:
            return own
        try:
            return self.table().get_row_index(row.id) + 1
        except RowDoesNotExist:
            rows = getattr(self.ctx.session.incident, self.ledger)
            return int(rows.index(row) + 1)

    def cancel_on_escape(self, focused: Any) -> bool:
        """Escape in the form of a row being edited cancels the edit: the row keeps its
        text, the form is empty again and adds rows (True when it did)."""
        if self.editing is None or focused is None or focused.id not in self.fields.values():
            return False
        back = self.end()
        said = t("ledger.edit_cancelled", self.lang)
        self.show(said + (self._gap() + t("ledger.draft_back", self.lang) if back else ""))
        return True

    def values(self) -> dict[str, str]:
        """The form's values, stripped (a field Enter was pressed in: its text at that
        Enter, never the keys typed since)."""
        return {
            name: entered_text(self.screen.query_one(f"#{input_id}", Input)).strip()
            for name, input_id in self.fields.items()
        }

    def save(self, **extra: Any) -> None:
        """Write the form into the row being edited (raises the session's RuleViolation)."""
        assert self.ctx.session is not None and self.editing is not None
        row = self.row(self.editing)
        self.ctx.session.edit_row(self.ledger, self.editing, **self.values(), **extra)
        said = self.saved_said(row) if row is not None else ""
        back = self.end()
        # The form is empty again (or holds the draft kept) and adds rows: said, so the
        # next Enter is known to add a new one, never to overwrite the row just saved.
        if back and row is not None:
            said = self.saved_said(row, draft_back=True)
        self.show(said)

    def saved_said(self, row: Any, draft_back: bool = False) -> str:
        """ "Hypothesis 3 saved …; the form is empty and adds a new one" (``draft_back``:
        "… the form holds your unsaved draft again"); a row the table shows no number for
        is named as :meth:`editing_said` names it (B's change by its text)."""
        what = t(f"ledger.row.{self.ledger}", self.lang)
        rest = "_draft_back" if draft_back else ""
        if self.name_row is not None:
            return t(f"ledger.saved_named{rest}", self.lang, what=what, name=self.name_row(row))
        return t(f"ledger.saved_row{rest}", self.lang, what=what, n=self.number(row))

    def end(self) -> bool:
        """Leave editing: the form is empty again, or holds the draft kept when the edit
        began (True when it does), and adds new rows. When focus is on the form's add or
        cancel button, it goes to the form's first field: the next row is typed there,
        and Enter does not press the button again."""
        buttons = {f"{self.prefix}-add", f"{self.prefix}-cancel"}
        focused = self.screen.focused
        if focused is not None and focused.id in buttons:
            self.screen.query_one(f"#{next(iter(self.fields.values()))}", Input).focus()
        draft = self.draft if self.editing is not None else {}
        self.editing = None
        self.draft = {}
        for input_id in self.fields.values():
            load(self.screen.query_one(f"#{input_id}", Input), draft.get(input_id, ""))
        relabel(self.screen.query_one(f"#{self.prefix}-add", Button), t(self.add_label, self.lang))
        self.screen.query_one(f"#{self.prefix}-cancel", Button).display = False
        self.show(t("ledger.draft_back", self.lang) if draft else "")
        self.deleted = None
        return bool(draft)

    def delete(self) -> None:
        """Delete the selected row; the history keeps it (F8 puts it back)."""
        assert self.ctx.session is not None
        row = self.selected()
        if row is None:
            self.show(t("ledger.pick_row", self.lang))
            return
        from cockpit.session import RuleViolation

        try:
            self.ctx.session.delete_row(self.ledger, row.id)
        except RuleViolation as exc:
            self.show(t(exc.key, self.lang))
            return
        if self.editing == row.id:
            self.end()
        delete = self.screen.query_one(f"#{self.prefix}-delete", Button)
        if delete.has_focus:
            # Enter again must not delete the next row: focus goes to the table.
            self.table().focus()
        self.show(t("ledger.deleted", self.lang))
        self.deleted = row.id

    def sync(self) -> None:
        """The incident changed (F8 may have restored a row): a "Deleted" notice about a
        row that is back is taken down."""
        if self.deleted is not None and self.row(self.deleted) is not None:
            self.deleted = None
            self.show("")


def detail_text(pairs: list[tuple[str, str]]) -> Text:
    """The selected row in full, one ``label: value`` per line (long values wrap in the
    pane instead of running off the table's right edge)."""
    out = Text()
    for i, (label, value) in enumerate(pairs):
        if i:
            out.append("\n")
        out.append(f"{label}: ", style="bold")
        out.append(value or "—")
    return out
