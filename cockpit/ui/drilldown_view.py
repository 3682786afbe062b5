"""Step C widget: five layers × golden signals now vs baseline, per-layer verdicts with their
evidence, and the seed's reading rules (seed 003 §一/§二: 先定位层，再定位点)."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Static

from cockpit.analysis.golden import SignalSummary, change_text, value_msg
from cockpit.analysis.layers import shown_readings
from cockpit.analysis.profiles import profile_names
from cockpit.collect.base import fallback_text
from cockpit.collect.drilldown import DrilldownReport, deploy_command
from cockpit.i18n import UNKNOWN, fmt_value, t
from cockpit.models.messages import unit_text
from cockpit.pins import signal_evidence
from cockpit.ui.metrics_common import MetricsView, spark_text
from cockpit.ui.row_detail import with_detail
from cockpit.ui.table import PlainTable

BASELINES = ("1d", "7d", "quiet")


def value_text(s: SignalSummary, which: str, lang: str = "en") -> str:
    """A cell for ``now``/``instant``/``window_max``/``baseline`` (reason when unknown).

    A quantile at its histogram's top bucket reads ``≥ <bound>``; one inside its lowest
    bucket ``≤ <bound>`` (the value now by :attr:`SignalSummary.bottom_bucket`, the others
    when below :attr:`SignalSummary.lowest_bound`), the unit in the row's name and the
    meaning under the table (:func:`bound_hints`)."""
    r = getattr(s, which)
    if which == "now" and s.window_reading is not None:
        return value_msg(s).text(lang)  # what the verdict rests on: never a bare 0
    if which in ("now", "instant") and s.top_bucket is not None:
        # the bound, short: the row's name carries the unit, :func:`bound_hints` the meaning
        return t("metrics.golden.at_least", lang, value=fmt_value(s.top_bucket))
    if which in ("now", "instant") and s.bottom_bucket is not None:
        return t("metrics.golden.at_most", lang, value=fmt_value(s.bottom_bucket))
    low = s.lowest_bound
    if r.ok and low is not None and r.value is not None and r.value < low:
        # the baseline or window max inside the lowest bucket, as the value now is shown
        return t("metrics.golden.at_most", lang, value=fmt_value(low))
    if r.ok:
        return fmt_value(r.value)
    if which == "now":
        if s.missing:
            # The metric and how to enable it are listed under the layer verdicts.
            return t("metrics.text.missing", lang, metric=s.missing[0])[:40]
        return "n/a" if r.status.value == "unsupported" else UNKNOWN
    return UNKNOWN


def bound_hints(summaries: list[SignalSummary], lang: str) -> str:
    """What "≥" and "≤" in a table's cells mean, once each, for the rows that show one
    (:func:`value_text`); empty when none does."""
    hints = []
    if any(s.top_bucket is not None for s in summaries):
        hints.append(t("metrics.golden.top_bucket_hint", lang))
    if any(
        s.bottom_bucket is not None or value_text(s, "baseline", lang).startswith("≤")
        for s in summaries
    ):
        hints.append(t("metrics.golden.bottom_bucket_hint", lang))
    return "\n".join(hints)


DD_COLUMNS = ("signal", "now", "base", "change", "verdict", "layer", "wmax", "instant", "trend")
"""C's table's columns, in order: what a row's verdict rests on first (the value now, the
baseline, their ratio, the verdict), then the rest."""


class DrilldownView(MetricsView):
    """Layers, rules and the signal table of step C."""

    DEFAULT_CSS = """
    DrilldownView #dd-table { height: auto; }
    DrilldownView .dd-layer { height: auto; }
    DrilldownView .dd-layer.-anomalous { color: $error; }
    DrilldownView .dd-layer.-no_data { color: $warning; }
    """

    BINDINGS: ClassVar[list[Any]] = [
        Binding("alt+p", "pin", "Pin", priority=True),
        Binding("alt+o", "baseline", "Baseline", priority=True),
    ]

    def compose_body(self) -> ComposeResult:
        yield Static("", classes="mv-head", id="dd-head", markup=False)
        yield Static(t("metrics.text.layers", self.lang), classes="section")
        yield Static("", id="dd-layers", classes="dd-layer", markup=False)
        yield Static(t("metrics.text.rules", self.lang), classes="section")
        yield Static("", id="dd-rules", markup=False)
        yield Static(t("metrics.text.signals", self.lang), classes="section")
        yield from with_detail(
            PlainTable(id="dd-table", cursor_type="row", zebra_stripes=True), self.lang
        )
        yield Static("", id="dd-bounds", classes="hint", markup=False)
        yield Static(t("metrics.view.help_c", self.lang), classes="hint")

    def on_mount(self) -> None:
        table = self.query_one("#dd-table", DataTable)
        lang = self.lang
        table.add_columns(*(t(f"metrics.view.col_{c}", lang) for c in DD_COLUMNS))
        super().on_mount()

    async def load_early(self, refresh: bool) -> DrilldownReport | None:
        """Every row with its value and verdict, before the window's hardware check."""
        from cockpit.collect import steps
        from cockpit.collect.cache import forget, peek, screen_window

        window = screen_window(self.ctx)
        if refresh:
            forget(self.ctx, "drilldown", window)  # rebuilt from the rows asked for again
        elif peek(self.ctx, "drilldown", window) is not None:
            return None  # the whole report is there already
        return await steps.drilldown_signals(self.ctx, window, refresh)

    def early_note(self) -> str:
        return t("metrics.view.window_pending", self.lang)

    async def load(self, refresh: bool) -> DrilldownReport:
        from cockpit.collect import steps
        from cockpit.collect.cache import screen_window

        # After load_early: its rows, from the cache, and the window's history.
        return await steps.drilldown(self.ctx, screen_window(self.ctx))

    switched_to: str = ""
    """The baseline Alt+O asked for, until the answers say whether it had data."""

    def show(self, data: DrilldownReport) -> None:
        lang = self.lang
        w = data.window
        if self.switched_to and data.baseline_from == self.switched_to:
            # the baseline asked for had no data: the switch's notice is corrected, not
            # left saying the table compares with it
            self.notify(fallback_text(data.baseline_from, lang, data.window), markup=False)
        if self.switched_to and (data.baseline_from or w.baseline) == self.switched_to:
            self.switched_to = ""
        head = (
            f"{w.start:%m-%d %H:%M}–{w.end:%H:%M} UTC · {t('metrics.golden.baseline', lang)} "
            f"{t(f'metrics.baseline_kind.{w.baseline}', lang)} · "
            f"{t('metrics.text.profiles', lang, profiles=profile_names(data.profiles))}"
        )
        if data.baseline_note:
            head += " · " + fallback_text(data.baseline_from, lang, data.window)
        if data.selector_failure:
            head += " · " + t("metrics.text.selector_unresolved", lang)
        for name in data.joined:
            head += " · " + t("discovery.joined", lang, source=name)
        if data.services:
            services = ", ".join(data.services)
            head += " · " + t(
                "discovery.several", lang, services=services, stack=data.analysed_with
            )
        if data.no_pod_matched:
            head += " · " + t(
                "metrics.text.no_pod_matched",
                lang,
                pattern=data.scope.get("pod", ""),
                command=deploy_command(data.scope.get("namespace", "")),
            )
        self.query_one("#dd-head", Static).update(head)
        lines = []
        for v in data.drilldown.layers:
            mark = v.mark
            verdict = v.headline(lang)
            if v.layer == "hardware" and not data.window_checked:
                # Until the window's history is read, a lost GPU or an Xid may still make
                # it anomalous: never shown as normal (or as no data) before that.
                if v.verdict != "anomalous":
                    mark, verdict = "…", ""
                verdict = (verdict + t("metrics.text.window_pending", lang)).strip()
            wide = (
                " · " + t("metrics.text.namespace_wide", lang)
                if v.layer in data.namespace_wide_layers
                else ""
            )
            partial = (
                t("metrics.text.partial", lang, decided=v.signals_decided, total=v.signals_total)
                if v.partial
                else ""
            )
            lines.append(f"{mark} {t(f'metrics.layer.{v.layer}', lang)}: {verdict}{partial}{wide}")
            texts = v.lines_text(lang)
            lines += [f"    {x}" for x in texts[:4]]
            if len(texts) > 4:
                lines.append("    " + t("metrics.text.more_table", lang, n=len(texts) - 4))
            missing = v.missing_in(lang)
            lines += ["    " + t("metrics.text.missing", lang, metric=m) for m in missing[:4]]
            if len(missing) > 4:
                # the rest is in `cockpit analyze` and `cockpit doctor`, never dropped silently
                lines.append("    " + t("metrics.text.more_missing", lang, n=len(missing) - 4))
        self.query_one("#dd-layers", Static).update("\n".join(lines))
        rules = []
        readings = shown_readings(data.drilldown.rules, lang)
        for r, line in zip(data.drilldown.rules, readings, strict=True):
            mark = {"fired": "●", "not_fired": "○", "no_data": "·"}[r.status]
            rules.append(
                f"{mark} {t(f'metrics.rule.{r.id}', lang)} — {t(f'metrics.rule_status.{r.status}', lang)}"
                + (f"\n    {line}" if line else "")
            )
        self.query_one("#dd-rules", Static).update("\n".join(rules))
        table = self.query_one("#dd-table", PlainTable)
        table.clear()
        rows = []
        for s in data.drilldown.summaries:
            cells = {
                "signal": s.label(lang) + (f" ({unit_text(s.unit, lang)})" if s.unit else ""),
                "now": value_text(s, "now", lang),
                "base": value_text(s, "baseline", lang),
                "change": change_text(s, lang),  # as A's golden panel has it
                "verdict": t(f"metrics.verdict.{s.verdict}", lang),
                "layer": t(f"metrics.layer.{s.layer}", lang) if s.layer else "",
                "wmax": value_text(s, "window_max", lang),
                "instant": value_text(s, "instant", lang),
                "trend": spark_text(s.spark),
            }
            rows.append((tuple(cells[c] for c in DD_COLUMNS), s.key))
        # The signal's name and the value now (a reason for no data)
        # wrap so that the baseline, change and verdict stay in sight at 80 columns; the
        # layer, window max, instant and trend follow, the cursor's row read whole under
        # the table while they do not fit. The name keeps room for most names
        # on one line: the value needs it only for the odd long reason or bound.
        bounds = self.query_one("#dd-bounds", Static)
        bounds.update(bound_hints(data.drilldown.summaries, lang))
        bounds.display = bool(bound_hints(data.drilldown.summaries, lang))
        table.add_rows_fitted(
            rows,
            wrap=(DD_COLUMNS.index("signal"), DD_COLUMNS.index("now")),
            minimum=(24, 8),
            keep=DD_COLUMNS.index("verdict") + 1,
        )

    def selected(self) -> SignalSummary | None:
        """The summary of the table's cursor row."""
        shown = self.displayed
        if shown is None:
            return None
        table = self.query_one("#dd-table", DataTable)
        if table.row_count == 0:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return next((s for s in shown.drilldown.summaries if s.key == key), None)

    def action_pin(self) -> None:
        """Pin the selected row's value (value, unit, time, PromQL) as evidence."""
        s = self.selected()
        ev = None
        if s is not None and self.ctx.session is not None:
            ev = signal_evidence(s, self.lang, step="C")
        if ev is None or self.ctx.session is None:
            self.notify(t("metrics.golden.nothing_to_pin", self.lang), markup=False)
            return
        self.ctx.session.pin(ev)
        self.notify(t("metrics.golden.pinned", self.lang, label=ev.label), markup=False)

    def follow_baseline(self) -> None:
        """Fetch again when what is shown was compared with another baseline than the
        shared window's (one put back from the history)."""
        from cockpit.collect.cache import screen_window

        if self.data is None:
            return
        # The baseline asked for, not the one it fell back to (no data a day earlier:
        # the quiet window): every change to the incident would fetch again otherwise.
        asked = self.data.baseline_from or self.data.window.baseline
        if asked != screen_window(self.ctx).baseline:
            self.start(False)

    def action_baseline(self) -> None:
        """Cycle the baseline 1d → 7d → quiet and fetch again."""
        from cockpit.collect.cache import screen_window, set_baseline

        cur = screen_window(self.ctx).baseline
        new = BASELINES[(BASELINES.index(cur) + 1) % len(BASELINES)]
        shown = self.data
        # What C compared with, as its header says (the quiet window when the one asked
        # had no data): the notice and the incident's history both name that one.
        compared = shown.window.baseline if shown is not None else cur
        set_baseline(self.ctx, new, compared)
        self.switched_to = new
        self.start(False)
        kind = t(f"metrics.baseline_kind.{new}", self.lang)
        old = t(f"metrics.baseline_kind.{cur}", self.lang)
        if shown is not None and shown.baseline_from and compared != cur:
            used = t(f"metrics.baseline_kind.{compared}", self.lang)
            old = t("metrics.baseline_fell_back", self.lang, used=used, asked=old)
        self.notify(t("metrics.baseline_switched", self.lang, baseline=kind, old=old), markup=False)
