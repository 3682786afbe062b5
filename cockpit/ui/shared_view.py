"""Step F widget: load and shared dependencies — arrival rate, prompt/output-length mix,
gateway vs serving latency (time before the GPU), gateway vs server errors, shared node,
storage and network signals (seed 000 node F; seed 003 §一)."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Static

from cockpit.analysis.golden import change_text
from cockpit.collect.load import LoadReport
from cockpit.i18n import t
from cockpit.models.messages import unit_text
from cockpit.pins import signal_evidence
from cockpit.ui.drilldown_view import bound_hints, value_text
from cockpit.ui.metrics_common import MetricsView, spark_text
from cockpit.ui.table import PlainTable


class SharedView(MetricsView):
    """Findings of step F and the signals behind them."""

    DEFAULT_CSS = """
    SharedView #sh-findings { height: auto; }
    SharedView #sh-table { height: auto; max-height: 20; }
    """

    BINDINGS: ClassVar[list[Any]] = [Binding("alt+p", "pin", "Pin", priority=True)]

    def compose_body(self) -> ComposeResult:
        yield Static(t("metrics.text.load", self.lang), classes="section")
        yield Static("", id="sh-findings", markup=False)
        yield PlainTable(id="sh-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="sh-bounds", classes="hint", markup=False)
        yield Static(t("metrics.view.help_f", self.lang), classes="hint")

    def on_mount(self) -> None:
        lang = self.lang
        self.query_one("#sh-table", DataTable).add_columns(
            *(
                t(f"metrics.view.col_{c}", lang)
                for c in ("signal", "now", "base", "change", "verdict", "trend")
            )
        )
        super().on_mount()

    async def load(self, refresh: bool) -> LoadReport:
        from cockpit.collect import steps
        from cockpit.collect.cache import screen_window

        return await steps.load(self.ctx, screen_window(self.ctx), refresh)

    def show(self, data: LoadReport) -> None:
        lang = self.lang
        lines = []
        for f in data.findings:
            mark = {"fired": "●", "not_fired": "○", "no_data": "·"}[f.status]
            line = f"{mark} {t(f'metrics.load.{f.id}', lang)} — {t(f'metrics.rule_status.{f.status}', lang)}"
            for text in f.text(lang):
                line += f"\n    {text}"
            lines.append(line)
        self.query_one("#sh-findings", Static).update("\n".join(lines))
        table = self.query_one("#sh-table", PlainTable)
        table.clear()
        rows = [
            (
                (
                    s.label(lang) + (f" ({unit_text(s.unit, lang)})" if s.unit else ""),
                    value_text(s, "now", lang),
                    value_text(s, "baseline", lang),
                    change_text(s, lang),  # as A's golden panel and C have it
                    t(f"metrics.verdict.{s.verdict}", lang),
                    spark_text(s.spark),
                ),
                s.key,
            )
            for s in data.summaries
        ]
        # The signal's name and a long value wrap so that the verdict and trend stay in sight.
        table.add_rows_fitted(rows, wrap=(0, 1), minimum=(14, 8))
        hints = bound_hints(data.summaries, lang)
        bounds = self.query_one("#sh-bounds", Static)
        bounds.update(hints)
        bounds.display = bool(hints)

    def action_pin(self) -> None:
        """Pin the selected signal as evidence."""
        table = self.query_one("#sh-table", DataTable)
        s = None
        if self.data is not None and self.ctx.session is not None and table.row_count:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
            s = next((x for x in self.data.summaries if x.key == key), None)
        # pinned as C pins it (the same reading, the window's when the verdict rests on it)
        ev = signal_evidence(s, self.lang, step="F") if s is not None else None
        if ev is None or self.ctx.session is None:
            self.notify(t("metrics.golden.nothing_to_pin", self.lang), markup=False)
            return
        self.ctx.session.pin(ev)
        self.notify(t("metrics.golden.pinned", self.lang, label=ev.label), markup=False)
