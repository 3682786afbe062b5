"""Layered-logs panel (steps D and E): the logs of the suspect the flow reached, of its
cohort and of the gateway, read as evidence (seed 003 §三: golden signals combined with
layered logs get from symptom to root cause).

One fetch reads and analyses everything (:func:`cockpit.collect.logs.gather_logs`, the
same as ``cockpit logs``): per layer its counts, first error and what the ``explain``
engine found, each finding a row with its time on the incident timeline; the highlighted
finding's lines below the table; whether a request ID was followed from the gateway into
the serving pods. Alt+P pins the highlighted finding (its first line's time puts it on the
incident timeline).
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Static

from cockpit.collect.logs import LogReport, finding_title, read_line, when_text
from cockpit.context import AppContext
from cockpit.i18n import t
from cockpit.ui.panel import Panel
from cockpit.ui.table import PlainTable

MAX_ROWS = 40
"""Findings listed (the earliest first within each layer)."""
TITLE_CHARS = 90
"""A finding's name in its row is cut there (the whole of it is shown below the table)."""


class LayeredLogsPanel(Panel):
    """Access, service, runtime and system logs of the suspect and its cohort."""

    PANEL_ID = "layered_logs"
    TITLE: ClassVar[dict[str, str]] = {"zh": "分层日志", "en": "Layered logs"}
    STEPS = ("D", "E")
    SOURCES = ("kube",)
    POLL_INTERVAL = None
    FETCH_TIMEOUT = 120.0

    BINDINGS: ClassVar[list[Any]] = [Binding("alt+p", "pin", "Pin", priority=True)]

    DEFAULT_CSS = """
    LayeredLogsPanel .logs--summary { height: auto; }
    LayeredLogsPanel #logs-findings { height: auto; max-height: 16; }
    LayeredLogsPanel .logs--detail { height: auto; color: $text-muted; }
    LayeredLogsPanel .logs--ids { height: auto; }
    """

    def __init__(self, ctx: AppContext, **kwargs: Any) -> None:
        super().__init__(ctx, **kwargs)
        self.data: LogReport | None = None

    async def fetch(self, ctx: AppContext) -> LogReport:
        from cockpit.collect.logs import gather_logs

        return await gather_logs(ctx)

    def on_mount(self) -> None:
        super().on_mount()
        if self.missing_sources():
            for w in self.query(".logs--body"):
                w.display = False

    def compose_body(self) -> ComposeResult:
        yield Static("", classes="logs--summary logs--body", markup=False)
        yield PlainTable(id="logs-findings", cursor_type="row", classes="logs--body")
        yield Static("", classes="logs--detail logs--body", markup=False)
        yield Static("", classes="logs--ids logs--body", markup=False)

    def render_data(self, data: LogReport) -> None:
        from cockpit.collect.logs import scope_text

        lang = self.lang
        start = data.incident_start
        lines = [scope_text(data, lang)]
        lines += [read_line(r, lang) for r in data.reads]
        for fl in data.failures:
            lines.append("⚠ " + t("logs.text.listing_failed", lang, what=fl.message))
        for lay in data.layers:
            name = t(f"logs.layer_short.{lay.layer}", lang)
            if not lay.read:
                why = t(f"logs.not_read.{lay.not_read or 'failed'}", lang, **lay.not_read_args)
                lines.append(f"{name}: {why}")
                continue
            text = t("logs.text.counts", lang, lines=lay.lines, errors=lay.error_lines)
            if lay.first_error is not None:
                fe = lay.first_error
                text += "; " + t(
                    "logs.text.first_error", lang, when=when_text(fe.at, start, lang), pod=fe.pod
                ).rstrip(":：")
            lines.append(f"{name}: {text}")
        self.query_one(".logs--summary", Static).update("\n".join(lines))
        table = self.query_one("#logs-findings", PlainTable)
        table.clear(columns=True)
        table.add_columns(
            t("logs.col.layer", lang),
            t("logs.col.first", lang),
            t("logs.col.lines", lang),
            t("logs.col.finding", lang),
            t("logs.col.pods", lang),
        )
        findings = [f for lay in data.layers for f in lay.findings][:MAX_ROWS]
        rows: list[tuple[tuple[str, ...], str | None]] = []
        for f in findings:
            title = finding_title(f, lang, short=True)
            cells = (
                t(f"logs.layer_short.{f.layer}", lang),
                when_text(f.first_at, start, lang),
                str(f.count),
                title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1] + "…",
                ", ".join(f.pods),
            )
            rows.append((cells, f.key))
        if not findings:
            rows.append((("", "", "", t("logs.text.no_findings", lang), ""), None))
        # When, the finding and its pods wrap at 80 columns: the layer and the count stay whole.
        table.add_rows_fitted(rows, wrap=(1, 3, 4), minimum=(10, 16, 12))
        ids = data.request_ids
        id_lines = [
            t("logs.text.request_ids", lang),
            t(f"logs.request_ids.{ids.status}", lang, n=ids.access_ids),
        ]
        for tr in ids.followed[:2]:
            id_lines.append(f"{tr.request_id} → {tr.status}")
            id_lines.append(f"  {tr.access.pod}: {tr.access.text}")
            id_lines += [f"  {hop.pod}: {hop.text}" for hop in tr.serving[:2]]
        self.query_one(".logs--ids", Static).update("\n".join(id_lines))
        self._show_detail()

    def _highlighted(self) -> Any:
        data = self.data
        if data is None:
            return None
        table = self.query_one("#logs-findings", DataTable)
        if table.row_count == 0:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return next((f for lay in data.layers for f in lay.findings if f.key == key), None)

    def _show_detail(self) -> None:
        f = self._highlighted()
        detail = self.query_one(".logs--detail", Static)
        if f is None:
            detail.update("")
            return
        out = [finding_title(f, self.lang)]
        for ln in f.lines[:4]:
            at = ln.at.strftime("%H:%M:%S") if ln.at else "--:--:--"
            prev = " ⟲" if ln.previous else ""
            out.append(f"{at} {ln.pod}{prev}: {ln.text}")
        out.append(t("logs.panel.pin_hint", self.lang))
        detail.update("\n".join(out))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self._show_detail()

    def action_pin(self) -> None:
        """Pin the highlighted finding as evidence (on the incident timeline at its first
        line's time)."""
        from cockpit.collect.logs import finding_evidence

        f = self._highlighted()
        if f is None or self.data is None or self.ctx.session is None:
            self.notify(t("logs.panel.nothing_to_pin", self.lang), markup=False)
            return
        step = str(getattr(self.screen, "STEP", "") or "E")
        ev = self.ctx.session.pin(finding_evidence(f, self.data, step))
        self.notify(
            t("logs.panel.pinned", self.lang, label=ev.label_i18n.get(self.lang, ev.label)),
            markup=False,
        )
