"""Scenario playbooks (seed 000, 场景一–六): one screen per scenario, reachable from any step.

The screen shows the handbook's checklist for the scenario; automated items are checked
from the sources (through :mod:`cockpit.collect.playbooks`, in a worker) with the
evidence behind each finding, which can be pinned to the incident; the user answers the
other items; "record" stores the results in the incident (and so in its export).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, DataTable, Input, OptionList, Static
from textual.widgets.option_list import Option

from cockpit.analysis.playbooks.data import PlaybookData
from cockpit.analysis.playbooks.render import (
    evidence_label,
    evidence_value,
    fill_command,
    finding_text,
    status_text,
    summary,
    to_evidence,
)
from cockpit.analysis.playbooks.render import to_record as record_of
from cockpit.analysis.playbooks.result import ItemResult
from cockpit.analysis.playbooks.run import run_playbook
from cockpit.analysis.playbooks.scope import parse_model, parse_scope, unknown_model_keys
from cockpit.analysis.playbooks.spec import all_playbooks, load_playbook
from cockpit.context import AppContext
from cockpit.history import short
from cockpit.i18n import t
from cockpit.incident import ItemStatus
from cockpit.ui.fields import TextInput
from cockpit.ui.focus import KeepsTextOnFocus
from cockpit.ui.footer import CockpitFooter
from cockpit.ui.keys import localize_bindings
from cockpit.ui.nowhere import SaysWhereTypingGoes
from cockpit.ui.select import EndOptionList
from cockpit.ui.table import PlainTable
from cockpit.ui.worker_errors import ContainsWorkerErrors

STATUS_WIDTH = 14
"""Columns of the status cell (``not available`` is the longest status)."""
MODE_WIDTH = 6
"""Columns of the "how" cell (auto / ask)."""

Loader = Callable[[AppContext, str, str], Awaitable[PlaybookData]]
"""``loader(ctx, playbook_id, scope)``; ``scope`` is what the user typed (pods or a job)."""

_STATUS_STYLE = {
    ItemStatus.OK: "green",
    ItemStatus.PROBLEM: "bold red",
    ItemStatus.OPEN: "yellow",
    ItemStatus.NA: "dim",
    ItemStatus.NOT_AVAILABLE: "dim italic",
}


async def collect(ctx: AppContext, playbook_id: str, scope: str = "") -> PlaybookData:
    """The default loader: fetch from ``ctx.sources`` (pods/job/model from ``scope``)."""
    from cockpit.collect.playbooks import collect_playbook_data

    pods, job = parse_scope(scope)
    return await collect_playbook_data(
        ctx, playbook_id, pods=pods, job=job, model=parse_model(scope)
    )


class PlaybookScreen(ContainsWorkerErrors, SaysWhereTypingGoes, KeepsTextOnFocus):
    """The checklist of one scenario with automated checks and evidence.

    Args:
        ctx: The app context (sources, session, language).
        playbook_id: One of ``cuda_oom``, ``nccl_hang``, ``low_util``, ``ttft_spike``,
            ``pod_pending``, ``bad_rollout``.
        loader: Where the checks' data comes from (default: the sources).
    """

    DEFAULT_CSS = """
    PlaybookScreen #pb-title { height: 1; background: $primary; color: $text; padding: 0 1; }
    PlaybookScreen #pb-intro { color: $text-muted; padding: 0 1; }
    PlaybookScreen #pb-scope { margin: 0 1; }
    PlaybookScreen #pb-table { height: 1fr; min-height: 8; }
    PlaybookScreen #pb-detail { height: 9; border: round $primary 40%; padding: 0 1; }
    PlaybookScreen #pb-status { height: 1; padding: 0 1; }
    PlaybookScreen Horizontal { height: auto; }
    """
    AUTO_FOCUS = "#pb-table"
    BINDINGS = [
        Binding("escape", "close", "Back"),
        # Chords only: a printable key here is text (the scope field), never a command.
        Binding("alt+r", "run", "Run checks", priority=True),
        Binding("alt+p", "pin", "Pin", priority=True),
        Binding("alt+o", "mark('ok')", "OK", priority=True),
        Binding("alt+x", "mark('problem')", "Problem", priority=True),
        Binding("alt+s", "record", "Record", priority=True),
    ]

    def __init__(self, ctx: AppContext, playbook_id: str, loader: Loader | None = None) -> None:
        super().__init__(name=f"playbook-{playbook_id}")
        self.ctx = ctx
        localize_bindings(self, ctx.lang)
        self.playbook = load_playbook(playbook_id)
        self.loader: Loader = loader or collect
        self.results: dict[str, ItemResult] = {}
        self.checked_at: dict[str, datetime] = {}
        """When each automated item was last checked (the incident clock): its evidence's time."""
        self.scope = ""
        self.pinned: dict[str, list[str]] = {}

    # -- layout ----------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        lang = self.ctx.lang
        pb = self.playbook
        yield Static(pb.title.get(lang), id="pb-title", markup=False)
        intro = pb.intro.get(lang)
        if pb.commands:
            intro += "\n" + "\n".join(f"  $ {self._fill(c)}" for c in pb.commands)
        yield Static(intro, id="pb-intro", markup=False)
        yield TextInput(placeholder=t("playbook.scope_hint", lang), id="pb-scope", compact=True)
        with Vertical():
            yield PlainTable(id="pb-table", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="pb-detail"):
                yield Static("", id="pb-evidence", markup=False)
            with Horizontal():
                yield Button(t("playbook.run", lang), id="pb-run", variant="primary")
                yield Button(t("playbook.pin", lang), id="pb-pin")
                yield Button(t("playbook.mark_ok", lang), id="pb-ok")
                yield Button(t("playbook.mark_problem", lang), id="pb-problem")
                yield Button(t("playbook.record", lang), id="pb-record")
                yield Button(t("playbook.close", lang), id="pb-close")
            yield Static("", id="pb-status", markup=False)
        yield CockpitFooter()

    def _text_widths(self) -> tuple[int, int]:
        """Widths of the item and finding columns: the table fits the terminal (80
        columns too), each cell cut with "…"; the pane under it shows the item whole."""
        # Two columns of padding per cell, and the scroll bar.
        free = max(self.app.size.width - STATUS_WIDTH - MODE_WIDTH - 4 * 2 - 2, 24)
        item = free // 2
        return item, free - item

    def _bind_localized(self, lang: str) -> None:
        """Describe this screen's keys in the footer in the UI language."""
        import dataclasses

        words = {  # short forms of the buttons' labels: the footer has room for ~110 columns
            "escape": t("playbook.key.close", lang),
            "r": t("playbook.key.run", lang),
            "p": t("playbook.key.pin", lang),
            "o": t("playbook.key.ok", lang),
            "x": t("playbook.key.problem", lang),
            "s": t("playbook.key.record", lang),
        }
        table = self._bindings.key_to_bindings
        for key, description in words.items():
            table[key] = [
                dataclasses.replace(b, description=description) for b in table.get(key, [])
            ]

    def on_mount(self) -> None:
        lang = self.ctx.lang
        self._bind_localized(lang)
        table = self.query_one("#pb-table", DataTable)
        self.item_width, self.finding_width = self._text_widths()
        table.add_column(t("playbook.col.status", lang), key="status", width=STATUS_WIDTH)
        table.add_column(t("playbook.col.mode", lang), key="mode", width=MODE_WIDTH)
        table.add_column(t("playbook.col.item", lang), key="item", width=self.item_width)
        table.add_column(t("playbook.col.finding", lang), key="finding", width=self.finding_width)
        for item in self.playbook.items:
            table.add_row(
                status_text(ItemStatus.OPEN, lang),
                t(f"playbook.mode.{item.mode}", lang),
                short(item.text(lang), self.item_width),
                "",
                key=item.id,
            )
        self.action_run()

    # -- running -----------------------------------------------------------------------------
    def show_worker_error(self, text: str) -> None:
        """A run that failed unexpectedly, on the playbook's status line; the answers
        given by hand and the last results stay."""
        self.query_one("#pb-status", Static).update(f"⚠ {text}")

    def action_run(self) -> None:
        self.query_one("#pb-status", Static).update(t("playbook.running", self.ctx.lang))
        self._run()

    @work(exclusive=True, group="playbook-run", exit_on_error=False)
    async def _run(self) -> None:
        checked_at = self.ctx.clock.now()
        data = await self.loader(self.ctx, self.playbook.id, self.scope)
        results = run_playbook(self.playbook, data)
        # Keep what the user already answered by hand.
        for r in results:
            prev = self.results.get(r.item)
            if prev is not None and prev.finding_key == "playbook.finding.user":
                continue
            self.results[r.item] = r
            self.checked_at[r.item] = checked_at
        self._show()

    def _show(self) -> None:
        from rich.text import Text

        lang = self.ctx.lang
        table = self.query_one("#pb-table", DataTable)
        for item in self.playbook.items:
            r = self.results.get(item.id)
            if r is None:
                continue
            table.update_cell(
                item.id, "status", Text(status_text(r.status, lang), style=_STATUS_STYLE[r.status])
            )
            table.update_cell(item.id, "finding", short(finding_text(r, lang), self.finding_width))
        self.query_one("#pb-status", Static).update(summary(list(self.results.values()), lang))
        self._show_detail()

    def _current_item(self) -> str | None:
        table = self.query_one("#pb-table", DataTable)
        if table.row_count == 0:
            return None
        row = min(max(table.cursor_row, 0), table.row_count - 1)
        return self.playbook.items[row].id

    def _show_detail(self) -> None:
        lang = self.ctx.lang
        item_id = self._current_item()
        if item_id is None:
            return
        item = next(i for i in self.playbook.items if i.id == item_id)
        r = self.results.get(item_id)
        lines = [item.text(lang)]
        if r is not None:
            found = finding_text(r, lang)
            status = status_text(r.status, lang)
            # "not available: kube" already says its status: not "not available: not …".
            lines.append(f"→ {found}" if found.startswith(status) else f"→ {status}: {found}")
            if r.evidence:
                lines.append(t("playbook.evidence", lang) + ":")
                lines += [
                    f"  • {evidence_label(e, lang)}: {evidence_value(e, lang)}{(' ' + e.unit) if e.unit else ''}"
                    for e in r.evidence
                ]
        if item.commands:
            lines.append(t("playbook.commands", lang) + ":")
            lines += [f"  $ {self._fill(c)}" for c in item.commands]
        self.query_one("#pb-evidence", Static).update("\n".join(lines))

    def _fill(self, command: str) -> str:
        """Put the service's namespace/deployment into a command when they are known."""
        svc = self.ctx.settings.service
        return fill_command(command, svc.namespace, svc.deployment)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "pb-scope":
            self.scope = event.value.strip()
            if bad := unknown_model_keys(self.scope):
                self.notify(
                    t("playbook.unknown_keys", self.ctx.lang, keys=", ".join(bad)),
                    severity="warning",
                    markup=False,
                )
            self.action_run()
            self.query_one("#pb-table", DataTable).focus()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail()

    # -- user actions ------------------------------------------------------------------------
    def on_button_pressed(self, event: Button.Pressed) -> None:
        actions: dict[str, Callable[[], Any]] = {
            "pb-run": self.action_run,
            "pb-pin": self.action_pin,
            "pb-ok": lambda: self.action_mark("ok"),
            "pb-problem": lambda: self.action_mark("problem"),
            "pb-record": self.action_record,
            "pb-close": self.action_close,
        }
        fn = actions.get(event.button.id or "")
        if fn is not None:
            fn()

    def action_pin(self) -> None:
        lang = self.ctx.lang
        item_id = self._current_item()
        r = self.results.get(item_id or "")
        if item_id is None or r is None or not r.evidence or self.ctx.session is None:
            self.notify(t("playbook.nothing_to_pin", lang), markup=False)
            return
        step = getattr(self.app, "current_step", lambda: "")()
        for ev in r.evidence:
            pinned = self.ctx.session.pin(
                to_evidence(ev, self.playbook.id, step, lang, at=self.checked_at.get(item_id))
            )
            self.pinned.setdefault(item_id, []).append(pinned.id)
        self.notify(
            t("playbook.pinned", lang, label=evidence_label(r.evidence[0], lang)), markup=False
        )

    def action_mark(self, status: str) -> None:
        item_id = self._current_item()
        if item_id is None:
            return
        self.results[item_id] = ItemResult(
            item=item_id, status=ItemStatus(status), finding_key="playbook.finding.user"
        )
        self._show()

    def action_record(self) -> None:
        if self.ctx.session is None:
            return
        results = [self.results[i.id] for i in self.playbook.items if i.id in self.results]
        self.ctx.session.record_playbook(
            record_of(self.playbook, results, self.ctx.lang, self.pinned)
        )
        lang = self.ctx.lang
        title = self.playbook.title.get(lang)
        self.notify(t("playbook.recorded", lang, n=len(results), playbook=title), markup=False)

    def action_close(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()


class PlaybookMenuScreen(SaysWhereTypingGoes, ModalScreen[str | None]):
    """Pick one of the six scenarios (opened with F7 from any step)."""

    DIALOG_TITLE_KEY = "playbook.title"
    """What names the dialog's unnamed stop (its one list, table or text)."""

    DEFAULT_CSS = """
    PlaybookMenuScreen { align: center middle; }
    PlaybookMenuScreen > OptionList { width: 70; height: auto; max-height: 12; border: thick $accent; }
    """
    BINDINGS = [
        Binding("escape", "dismiss(None)", "Close"),
        # A number highlights its scenario and Enter opens it: a sentence typed into the
        # list by mistake (``Xid 79 on node 3``) opens nothing.
        *[Binding(str(n), f"pick({n})", show=False) for n in range(1, 10)],
    ]

    def __init__(self, lang: str) -> None:
        super().__init__()
        self.lang = lang
        localize_bindings(self, lang)

    def compose(self) -> ComposeResult:
        yield EndOptionList(
            *[Option(f"{p.order}. {p.title.get(self.lang)}", id=p.id) for p in all_playbooks()],
            id="pb-menu",
        )

    def action_pick(self, number: int) -> None:
        """Highlight the scenario numbered ``number``; Enter opens it. A number past the
        list highlights nothing and says so."""
        menu = self.query_one(OptionList)
        if isinstance(menu, EndOptionList) and menu.typed_in_a_run():
            return  # a digit of a sentence typed into the list picks nothing
        count = len(all_playbooks())
        if 1 <= number <= count:
            self.query_one(OptionList).highlighted = number - 1
        else:
            self.notify(t("playbook.menu.no_number", self.lang, n=number, last=count), markup=False)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)
