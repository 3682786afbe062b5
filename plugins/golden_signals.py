"""Golden signals of the service, now vs baseline, each with a sparkline (steps A and I).

Seed 003 §二 (latency P50/P95/P99/max, QPS and tokens/s, error rate, GPU utilization, read
together in one window) and seed 000 step A (the first SLO breach is offered as the impact
start). Every value can be pinned as evidence with its unit, time and PromQL.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any, ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Static

from cockpit.analysis.alerts import FiredAlert
from cockpit.analysis.golden import Breach, SignalSummary, breach_detail, breach_name, change_text
from cockpit.collect.base import fallback_text
from cockpit.collect.golden import GoldenSignals
from cockpit.context import AppContext
from cockpit.i18n import UNKNOWN, fmt_value, t
from cockpit.incident import Evidence
from cockpit.models.messages import unit_text
from cockpit.pins import signal_evidence
from cockpit.sources.base import ErrorKind, SourceError
from cockpit.ui.focus import hand_on_focus
from cockpit.ui.frames import mark_after_paint
from cockpit.ui.keys import localize_bindings
from cockpit.ui.metrics_common import spark_text
from cockpit.ui.panel import Panel
from cockpit.ui.timeguard import confirmed


def _error_kind(kind: str) -> ErrorKind:
    """The :class:`ErrorKind` named ``kind`` (``unavailable`` for an unknown name)."""
    try:
        return ErrorKind(kind)
    except ValueError:
        return ErrorKind.UNAVAILABLE


def _failure_message(s: SignalSummary) -> str:
    """The backend's words of a failed row, without the ``<kind>: `` prefix."""
    text = s.now.reason or ""
    prefix = f"{s.failure_kind}: "
    return text[len(prefix) :] if text.startswith(prefix) else text


def _base_in_lowest(s: SignalSummary) -> bool:
    """The baseline is below its histogram's lowest bound: an interpolation inside that
    bucket, shown as the bound (as C shows it)."""
    v = s.baseline.value
    return s.baseline.ok and v is not None and s.lowest_bound is not None and v < s.lowest_bound


class Trend(Static):
    """A row's window as a sparkline over the width it is given, drawn as C's and F's
    trend cells are (:func:`cockpit.ui.metrics_common.spark_text`: max per cell, bars from
    zero), so a row reads the same on A as on C."""

    def __init__(self, values: list[float]) -> None:
        super().__init__("", markup=False)
        self.values = values

    def on_resize(self, event: events.Resize) -> None:
        self.update(spark_text(self.values, max(1, event.size.width)))


class GoldenRow(Horizontal):
    """One golden-signal value: name, now, baseline, change, verdict and sparkline (a row
    of :class:`GoldenRows`, which takes the focus for all of them). The row of the signal
    the alert that paged measures has the class ``-paged`` (its name underlined)."""

    DEFAULT_CSS = """
    GoldenRow { height: 1; }
    GoldenRow > .g-name { width: 22; }
    GoldenRow > .g-now { width: 14; }
    GoldenRow > .g-base { width: 14; }
    GoldenRow > .g-delta { width: 9; }
    GoldenRow > .g-verdict { width: 10; }
    GoldenRow > Trend { width: 1fr; min-width: 0; height: 1; color: $primary; }
    GoldenRow > .-failed { color: $error; }
    GoldenRow.-anomalous > .g-verdict { color: $error; text-style: bold; }
    GoldenRow.-changed > .g-verdict { color: $warning; }
    GoldenRow.-missing > .g-missing { color: $warning; width: 1fr; }
    GoldenRow.-paged > .g-name { color: $warning; text-style: bold underline; }
    """
    """The sparkline takes what the fixed columns leave and may shrink to nothing: a
    minimum width would overflow the row at 80 columns, and the clipped cells would be the
    newest ones."""

    def __init__(self, summary: SignalSummary, lang: str) -> None:
        super().__init__(id=f"golden-{summary.key.replace('.', '-').replace(':', '--')}")
        self.summary = summary
        self.lang = lang

    def compose(self) -> ComposeResult:
        s, lang = self.summary, self.lang
        yield Static(s.label(lang), classes="g-name", markup=False)
        if s.missing or s.now.status.value == "unsupported":
            self.add_class("-missing")
            if s.missing:
                text = t("metrics.text.missing", lang, metric=", ".join(s.missing))
                if s.enable:
                    text += f" — {s.enable}"
            else:
                text = s.reason_text(lang)
            yield Static(text, classes="g-missing", markup=False)
            return
        if s.failure_kind:
            # The short class only: the whole message is in the panel's status line once.
            yield Static(
                t(f"metrics.golden.failed_cell.{s.failure_kind}", lang),
                classes="g-now -failed",
                markup=False,
            )
        else:
            yield Static(
                t(
                    "metrics.golden.at_least",
                    lang,
                    value=fmt_value(s.top_bucket, unit_text(s.unit, lang)),
                )
                if s.top_bucket is not None
                else t(
                    "metrics.golden.at_most",
                    lang,
                    value=fmt_value(s.bottom_bucket, unit_text(s.unit, lang)),
                )
                if s.bottom_bucket is not None
                else fmt_value(s.now.value, unit_text(s.unit, lang))
                if s.now.ok
                else (s.reason_text(lang) or UNKNOWN),
                classes="g-now",
                markup=False,
            )
        yield Static(
            t(
                "metrics.golden.at_most",
                lang,
                value=fmt_value(s.lowest_bound, unit_text(s.unit, lang)),
            )
            if _base_in_lowest(s)
            else fmt_value(s.baseline.value, unit_text(s.unit, lang))
            if s.baseline.ok
            else UNKNOWN,
            classes="g-base",
            markup=False,
        )
        yield Static(change_text(s, lang), classes="g-delta", markup=False)
        yield Static(t(f"metrics.verdict.{s.verdict}", lang), classes="g-verdict")
        self.set_class(s.verdict == "anomalous", "-anomalous")
        self.set_class(s.verdict == "changed", "-changed")
        if s.spark:
            # The whole window, compressed to the width left (max per cell, so a spike
            # stays visible); never clipped: see DEFAULT_CSS.
            yield Trend(s.spark)

    def evidence(self) -> Evidence | None:
        """The pinned form of this value (``None`` when there is no value)."""
        return signal_evidence(self.summary, self.lang)

    def pin(self) -> None:
        """Pin the value as evidence (value, unit, time, PromQL)."""
        ev = self.evidence()
        panel = next((a for a in self.ancestors if isinstance(a, GoldenSignalsPanel)), None)
        if ev is None or panel is None or panel.ctx.session is None:
            self.notify(t("metrics.golden.nothing_to_pin", self.lang), markup=False)
            return
        panel.ctx.session.pin(ev)
        self.notify(t("metrics.golden.pinned", self.lang, label=ev.label), markup=False)


class GoldenRows(Vertical, can_focus=True):
    """The golden-signal rows as one Tab stop: ↑/↓ (Home/End) choose a row, Alt+P pins it.

    A table is one stop in the Tab order, not one per row (Tab reaches the fields after it
    at once); the chosen row is highlighted while the rows have focus.
    """

    DEFAULT_CSS = """
    GoldenRows { height: auto; }
    GoldenRows:focus { outline-left: thick $accent; }
    GoldenRows:focus > GoldenRow.-current { background: $accent 40%; text-style: bold; }
    """

    BINDINGS: ClassVar[list[Any]] = [
        Binding("up", "move(-1)", show=False),
        Binding("down", "move(1)", show=False),
        Binding("home", "move(-1000)", show=False),
        Binding("end", "move(1000)", show=False),
        Binding("alt+p", "pin", "Pin", priority=True),
    ]

    def __init__(self, lang: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.cursor = 0
        """Index of the chosen row."""
        self.can_focus = False  # a Tab stop once there are rows
        self.lang = lang
        localize_bindings(self, lang)

    def rows(self) -> list[GoldenRow]:
        """The rows, top to bottom."""
        return [w for w in self.children if isinstance(w, GoldenRow)]

    def current(self) -> GoldenRow | None:
        """The chosen row (``None`` without rows)."""
        rows = self.rows()
        return rows[self.cursor] if rows else None

    def choose(self, index: int) -> None:
        """Choose row ``index`` (clamped to the rows there are) and show it."""
        rows = self.rows()
        self.can_focus = bool(rows)
        self.cursor = max(0, min(index, len(rows) - 1)) if rows else 0
        for i, row in enumerate(rows):
            row.set_class(i == self.cursor, "-current")
        if rows and self.has_focus:
            rows[self.cursor].scroll_visible()  # not when the panel loads: the page stays

    def choose_key(self, key: str) -> None:
        """Choose the row of signal ``key`` (``access.latency:p99``)."""
        keys = [r.summary.key for r in self.rows()]
        if key in keys:
            self.choose(keys.index(key))

    def action_move(self, delta: int) -> None:
        self.choose(self.cursor + delta)

    def action_pin(self) -> None:
        """Pin the chosen row's value as evidence."""
        row = self.current()
        if row is None:
            self.notify(t("metrics.golden.nothing_to_pin", self.lang), markup=False)
            return
        row.pin()

    def on_click(self, event: Any) -> None:
        """A click chooses the row under the pointer."""
        widget = getattr(event, "widget", None)
        row = widget if isinstance(widget, GoldenRow) else None
        if row is None and widget is not None:
            row = next((a for a in widget.ancestors if isinstance(a, GoldenRow)), None)
        if row is not None and row in self.rows():
            self.choose(self.rows().index(row))


class GoldenSignalsPanel(Panel):
    """The service's golden signals now vs baseline (steps A and I)."""

    PANEL_ID = "golden_signals"
    TITLE: ClassVar[dict[str, str]] = {
        "zh": "黄金指标：现在 vs 基线",
        "en": "Golden signals: now vs baseline",
    }
    STEPS = ("A", "I")
    SOURCES = ("metrics",)
    POLL_INTERVAL = None
    FETCH_TIMEOUT = 60.0

    DEFAULT_CSS = """
    GoldenSignalsPanel #golden-head { color: $text-muted; height: auto; }
    GoldenSignalsPanel #golden-breach { color: $warning; height: auto; }
    GoldenSignalsPanel #golden-rows { height: auto; }
    GoldenSignalsPanel.-stale #golden-rows { opacity: 50%; }
    GoldenSignalsPanel #golden-alert-row { height: auto; }
    GoldenSignalsPanel #golden-alert { width: 1fr; height: auto; margin: 0 1 0 0; }
    """

    BINDINGS: ClassVar[list[Any]] = [Binding("alt+r", "refresh", "Refresh", priority=True)]

    class BreachFound(Message):
        """The first SLO breach in the data (the screen offers it as the impact start).

        Attributes:
            at: Time of the first breaching sample (UTC).
            detail: What breached (signal, value, SLO), in the UI language.
            breach: The breach itself (its row names the signal in either language).
        """

        def __init__(self, at: datetime, detail: str, breach: Breach | None = None) -> None:
            super().__init__()
            self.at = at
            self.detail = detail
            self.breach = breach

    def __init__(self, ctx: AppContext, **kwargs: Any) -> None:
        super().__init__(ctx, **kwargs)
        self._rows_generation = 0
        self._rows_lock = asyncio.Lock()

    class AlertsFound(Message):
        """Alerts fired in the window (earliest first); they go onto the timeline."""

        def __init__(self, alerts: list[FiredAlert]) -> None:
            super().__init__()
            self.alerts = alerts

    def compose_body(self) -> ComposeResult:
        yield Static("", id="golden-head", markup=False)
        yield GoldenRows(self.lang, id="golden-rows")
        yield Static("", id="golden-breach", markup=False)
        with Horizontal(id="golden-alert-row"):
            yield Static("", id="golden-alert", markup=False)
            use = Button(
                t("metrics.golden.use_detect", self.lang), id="golden-use-detect", compact=True
            )
            use.display = False  # shown when an alert fired (and only then in the tab order)
            yield use
        yield Static(t("metrics.golden.pin_help", self.lang), classes="hint")

    async def fetch(self, ctx: AppContext) -> GoldenSignals:
        """The golden signals (shared with other panels through the cache; F5 and ``r``
        query again).

        Raises:
            SourceError: when every row that has a query failed: that is a failed fetch
                (the last good rows stay, marked stale), not rows of "no data".
        """
        from cockpit.collect import steps
        from cockpit.collect.cache import forget, screen_window

        refresh, self.refresh_requested = self.refresh_requested, False
        window = screen_window(ctx)
        data = await steps.golden(ctx, window, refresh)
        queried = [s for s in data.rows if s.query]
        failed = [s for s in queried if s.failure_kind]
        if failed and len(failed) == len(queried):
            # Not worth sharing: the next reader (the back-test on I) queries again.
            forget(ctx, "golden", window)
            first = failed[0]
            raise SourceError.of(
                "prometheus",
                _error_kind(first.failure_kind),
                t(
                    "metrics.golden.all_failed",
                    self.lang,
                    n=len(failed),
                    message=_failure_message(first),
                ),
            )
        return data

    def action_refresh(self) -> None:
        """Re-run the queries, said."""
        from cockpit.ui.focus import widget_name

        self.refresh_data()
        self.notify(
            t("panel.refreshing", self.lang, names=widget_name(self, self.lang)), markup=False
        )

    async def _replace_rows(self, data: GoldenSignals, generation: int) -> None:
        """Swap the rows, one swap at a time: the old rows must be gone before rows with
        the same ids are mounted (fast refreshes would otherwise collide)."""
        async with self._rows_lock:
            if generation != self._rows_generation:
                return  # a newer render is queued; it will do the swap
            rows = self.query_one("#golden-rows", GoldenRows)
            await rows.remove_children()
            new = [GoldenRow(s, self.lang) for s in data.rows]
            paged = self._paged_row(data)
            for row in new:
                row.set_class(row.summary.key == paged, "-paged")
            await rows.mount_all(new)
            if any(s.now.ok for s in data.rows):
                columns = max((len(r.children) for r in new), default=0)
                mark_after_paint(
                    self, "COCKPIT_USEFUL_FRAME_FILE", f"{len(new)}x{columns}", exit_after=True
                )
            if any(s.top_bucket is not None for s in data.rows):
                # "≥" in a narrow cell: say once what it means
                await rows.mount(
                    Static(t("metrics.golden.top_bucket_hint", self.lang), classes="hint")
                )
            if any(s.bottom_bucket is not None or _base_in_lowest(s) for s in data.rows):
                await rows.mount(
                    Static(t("metrics.golden.bottom_bucket_hint", self.lang), classes="hint")
                )
            rows.choose(rows.cursor)

    def render_data(self, data: GoldenSignals) -> None:
        lang = self.lang
        w = data.window
        head = (
            f"{w.start:%m-%d %H:%M}–{w.end:%H:%M} UTC · "
            f"{t('metrics.golden.baseline', lang)} {t(f'metrics.baseline_kind.{w.baseline}', lang)}"
            f" ({w.baseline_start:%m-%d %H:%M}–{w.baseline_end:%H:%M})"
        )
        if data.baseline_note:
            head += " · " + fallback_text(data.baseline_from, lang, data.window)
        if data.profiles:
            head += " · " + ", ".join(data.profiles)
        self.query_one("#golden-head", Static).update(head)
        failed = [r for r in data.rows if r.failure_kind]
        if failed:
            # Once for the panel; the cells name only the class of failure.
            kind = failed[0].failure_kind
            self._set_status(
                t(
                    "metrics.golden.some_failed",
                    lang,
                    n=len(failed),
                    total=len([r for r in data.rows if r.query]),
                    kind=t(f"error.{kind}", lang),
                    message=_failure_message(failed[0]),
                ),
                "-error",
            )
        self._rows_generation += 1
        self.call_later(self._replace_rows, data, self._rows_generation)
        self._render_alerts(data)
        breach = self.query_one("#golden-breach", Static)
        if data.breach is None:
            breach.update(t("metrics.golden.no_breach", lang))
            return
        b = data.breach
        unit = "%" if b.signal == "error_ratio" else "ms"  # Breach: ms or % (see its docs)
        detail = breach_detail(b, lang)
        text = t(
            "metrics.golden.breach",
            lang,
            at=f"{(b.crossed_at or b.at):%Y-%m-%d %H:%M:%S} UTC",
            signal=breach_name(b, lang),
            value=b.value,
            slo=b.slo,
            unit=unit,
            derived=t("metrics.golden.derived", lang) if b.derived else "",
        )
        if b.alert:
            # The impact cannot start after it was detected: the first alert's time is offered.
            moved = t("metrics.golden.start_at_alert", lang, name=b.alert, at=f"{b.at:%H:%M:%S}")
            text += "\n" + moved
            detail += " · " + moved
        breach.update(text)
        self.post_message(self.BreachFound(b.at, detail, b))

    def _render_alerts(self, data: GoldenSignals) -> None:
        lang = self.lang
        label = self.query_one("#golden-alert", Static)
        button = self.query_one("#golden-use-detect", Button)
        if data.alerts_error:
            label.update(t("metrics.golden.alerts_error", lang, error=data.alerts_error))
            hand_on_focus(button)
            button.display = False
            return
        if not data.alerts:
            label.update(t("metrics.text.no_alerts", lang))
            hand_on_focus(button)
            button.display = False
            return
        first = self._offered_alert(data)
        paged = self.ctx.session.incident.paged_by if self.ctx.session is not None else None
        label.update(
            t(
                "alerts.golden_offer"
                if paged is not None and paged.name == first.name
                else "metrics.golden.first_alert",
                lang,
                name=first.name,
                at=f"{first.first:%Y-%m-%d %H:%M:%S} UTC",
            )
        )
        button.display = True
        self.post_message(self.AlertsFound(data.alerts))

    def _paged_row(self, data: GoldenSignals) -> str:
        """The key of the row the alert that paged measures (``paged_by.sli``; with
        another statistic or none, the signal's first row), empty when none."""
        session = self.ctx.session
        paged = session.incident.paged_by if session is not None else None
        if paged is None or not paged.sli:
            return ""
        keys = [r.key for r in data.rows]
        if paged.sli in keys:
            return paged.sli
        sid = paged.sli.partition(":")[0]
        return next((k for k in keys if k.partition(":")[0] == sid), "")

    def _offered_alert(self, data: GoldenSignals) -> FiredAlert:
        """The alert whose time is offered as the detection time: the one the incident
        started from (``paged_by``) when it fired in the window, else the first one."""
        from cockpit.collect.golden import offered_alert

        session = self.ctx.session
        paged = session.incident.paged_by if session is not None else None
        offered = offered_alert(data.alerts, paged)
        assert offered is not None  # called only with alerts
        return offered

    def on_golden_signals_panel_alerts_found(self, event: GoldenSignalsPanel.AlertsFound) -> None:
        """Put the fired alerts on the incident timeline (deduplicated by the session),
        except the alert that paged when choosing it already put it there."""
        from cockpit.collect.golden import timeline_alerts
        from cockpit.incident import TimelineKind, alert_event

        session = self.ctx.session
        if session is None:
            return
        inc = session.incident
        for a in timeline_alerts(event.alerts, inc.paged_by, inc.timeline):
            session.add_timeline(
                a.first,
                a.text(),
                TimelineKind.ALERT,
                source="prometheus",
                event=alert_event(a.name),
            )

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Use the first alert as the detection time."""
        if event.button.id != "golden-use-detect":
            return
        event.stop()
        data = self.data
        if data is None or not data.alerts or self.ctx.session is None:
            return
        offered = self._offered_alert(data)
        if not confirmed(self, "detect", offered.first):
            return
        self.ctx.session.set_time("detect", offered.first, source="alert")
        self.notify(t("metrics.golden.detect_set", self.lang, name=offered.name), markup=False)
