"""Back-tested alerts (step I): candidate alert expressions evaluated over the incident
window, each with its lead time before the impact start; the best one answers the
template's last question ("哪个监控或流程本可以更早发现") and is offered as a Prometheus
alerting rule for the export."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel
from textual.app import ComposeResult
from textual.widgets import Button, DataTable, Static

from cockpit.analysis.backtest import Backtest, CandidateResult
from cockpit.analysis.golden import Breach, breach_name
from cockpit.context import AppContext
from cockpit.i18n import t
from cockpit.ui.panel import Panel
from cockpit.ui.table import PlainTable


def when_text(best: CandidateResult, lang: str) -> str:
    """When ``best`` fires against the impact start (before, or after once its ``for:``
    has passed) and, when it is earlier, against the actual detection: the one phrase the
    panel and the answer it writes into the incident share."""
    lead = best.lead_s or 0.0
    key = "metrics.backtest.when_before" if lead >= 0 else "metrics.backtest.when_after"
    text = t(key, lang, minutes=abs(lead) / 60)
    if best.before_detection_s and best.before_detection_s > 0:
        text += t("metrics.backtest.when_detect", lang, minutes=best.before_detection_s / 60)
    return text


def answer_text(best: CandidateResult, lang: str) -> str:
    """The answer to "which monitor could have caught it earlier" for ``best``: its human
    name, what it watches, :func:`when_text` and its expression."""
    return t(
        "metrics.backtest.answer",
        lang,
        name=t(f"metrics.backtest.candidate.{best.candidate.id}", lang),
        summary=best.candidate.summary_text(lang),
        when=when_text(best, lang),
        expr=best.candidate.expr,
    )


def with_answer(own: str, answer: str) -> str:
    """The field's text with ``answer`` added under what the user wrote (never over it;
    once only)."""
    own = own.rstrip()
    if not own:
        return answer
    return own if answer in own else f"{own}\n{answer}"


class BacktestData(BaseModel):
    """The back-test and where its impact start came from (``incident`` or ``breach``)."""

    backtest: Backtest
    impact_source: str = ""
    breach: Breach | None = None
    """The first SLO breach the impact start came from (``impact_source`` ``breach``)."""


class BacktestPanel(Panel):
    """Candidate alerts with lead times; the best one can be written to the incident."""

    PANEL_ID = "backtest"
    TITLE: ClassVar[dict[str, str]] = {
        "zh": "回测告警：哪个监控本可以更早发现",
        "en": "Back-tested alerts: which monitor could have caught it earlier",
    }
    STEPS = ("I",)
    SOURCES = ("metrics",)
    POLL_INTERVAL = None
    FETCH_TIMEOUT = 90.0

    DEFAULT_CSS = """
    BacktestPanel #bt-head { height: auto; }
    BacktestPanel #bt-best { height: auto; text-style: bold; }
    BacktestPanel #bt-table { height: auto; max-height: 12; }
    """

    def compose_body(self) -> ComposeResult:
        yield Static("", id="bt-head", markup=False)
        yield PlainTable(id="bt-table", cursor_type="row")
        yield Static("", id="bt-best", markup=False)
        yield Button(t("metrics.backtest.use", self.lang), id="bt-use", disabled=True)

    def on_mount(self) -> None:
        cols = [t(f"metrics.backtest.col.{c}", self.lang) for c in ("alert", "lead", "first")]
        self.query_one("#bt-table", DataTable).add_columns(
            *cols, "", t("metrics.backtest.col.expr", self.lang)
        )
        super().on_mount()

    async def fetch(self, ctx: AppContext) -> BacktestData:
        from cockpit.collect import steps
        from cockpit.collect.alerts import collect_backtest
        from cockpit.collect.cache import screen_window

        g = await steps.golden(ctx, screen_window(ctx))
        impact = ctx.session.incident.times.start if ctx.session is not None else None
        source = "incident" if impact is not None else ""
        if impact is None and g.breach is not None:
            impact, source = g.breach.at, "breach"
        from cockpit.collect.golden import offered_alert

        detected = ctx.session.incident.times.detect if ctx.session is not None else None
        paged = ctx.session.incident.paged_by if ctx.session is not None else None
        offered = offered_alert(g.alerts, paged)
        if detected is None and offered is not None:
            detected = offered.first  # the detection time A offers
        # Thresholds come from the baseline of every drilldown signal (queue, KV cache…).
        dd = await steps.drilldown(ctx, screen_window(ctx))
        bt = await collect_backtest(ctx, g.window, dd.drilldown.summaries, impact, detected)
        breach = g.breach if source == "breach" else None
        return BacktestData(backtest=bt, impact_source=source, breach=breach)

    def render_data(self, data: BacktestData) -> None:
        lang = self.lang
        bt = data.backtest
        if bt.impact_start is None:
            head = t("metrics.backtest.no_impact", lang)
        else:
            src = t(f"metrics.backtest.source_{data.impact_source}", lang)
            if data.breach is not None:
                src = t(
                    "metrics.backtest.source_breach_of", lang, signal=breach_name(data.breach, lang)
                )
            head = t(
                "metrics.backtest.impact",
                lang,
                at=f"{bt.impact_start:%Y-%m-%d %H:%M:%S} UTC",
                source=src,
            )
        self.query_one("#bt-head", Static).update(head)
        table = self.query_one("#bt-table", PlainTable)
        table.clear()
        rows = []
        for r in bt.results:
            if r.lead_s is not None:
                lead = t("metrics.backtest.lead_min", lang, minutes=r.lead_s / 60)
            else:
                lead = t(f"metrics.backtest.status.{r.status}", lang)
            first = f"{r.first_fire:%H:%M}" if r.first_fire else ""
            best = "◀" if bt.best is not None and r.candidate.id == bt.best.candidate.id else ""
            name = t(f"metrics.backtest.candidate.{r.candidate.id}", lang)
            rows.append(((name, lead, first, best, r.candidate.expr), r.candidate.id))
        # The alert's name and its expression wrap: the lead, first firing and mark stay whole.
        table.add_rows_fitted(rows, wrap=(0, 4), minimum=(12, 20))
        button = self.query_one("#bt-use", Button)
        best_box = self.query_one("#bt-best", Static)
        failed = [r for r in bt.results if r.status == "failed"]
        # A failed query is not a silent alert: with failures, "none fired" is unknown.
        failed_note = (
            t(
                "metrics.backtest.failed",
                lang,
                n=len(failed),
                total=len(bt.results),
                error=failed[0].note,
            )
            if failed
            else ""
        )
        if bt.best is not None and bt.best.lead_s is not None:
            text = t(
                "metrics.backtest.best",
                lang,
                name=t(f"metrics.backtest.candidate.{bt.best.candidate.id}", lang),
                when=when_text(bt.best, lang),
            )
            if failed_note:
                text += "\n" + failed_note
            best_box.update(text + "\n" + bt.rule_yaml)
            button.disabled = False
        elif failed:
            best_box.update(t("metrics.backtest.undecided", lang) + "\n" + failed_note)
            button.disabled = True
        else:
            best_box.update(t("metrics.backtest.none", lang))
            button.disabled = True

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Write the best candidate into the incident (answer + alerting rule YAML)."""
        if event.button.id != "bt-use":
            return
        event.stop()
        data: Any = self.data
        if data is None or data.backtest.best is None or self.ctx.session is None:
            return
        best = data.backtest.best
        text = with_answer(
            self.ctx.session.incident.earlier_detection, answer_text(best, self.lang)
        )
        self.ctx.session.set_text("earlier_detection", text)
        self.ctx.session.set_text("alert_rule", data.backtest.rule_yaml)
        self.notify(t("metrics.backtest.used", self.lang), markup=False)
