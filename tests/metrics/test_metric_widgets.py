"""Pilot tests of the metrics widgets against a real Prometheus: drilldown (C), scope (D),
cohort panel (E), shared/load (F) and the golden-signals panel (A)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import Button, DataTable, Input, Static

from cockpit.config import PrometheusSettings, ServiceSettings, Settings
from cockpit.context import AppContext
from cockpit.i18n import t
from cockpit.models import from_epoch
from cockpit.scenarios.promserver import PromServer
from cockpit.sources.base import Sources
from cockpit.sources.prometheus import PrometheusSource
from testkit import make_ctx


class Host(App[None]):
    """Hosts one widget built from the context."""

    def __init__(self, ctx: AppContext, make: Callable[[AppContext], Any]) -> None:
        super().__init__()
        self.ctx = ctx
        self.make = make
        self.messages: list[Any] = []

    def compose(self) -> ComposeResult:
        yield self.make(self.ctx)

    def on_golden_signals_panel_breach_found(self, event: Any) -> None:
        self.messages.append(event)


def ctx_for(srv: PromServer, tmp_path: Path, lang: str = "en", span: str = "1h") -> AppContext:
    settings = Settings(
        prometheus=PrometheusSettings(url=srv.url),
        service=ServiceSettings(namespace=srv.scenario.scope["namespace"]),
    )
    ctx = make_ctx(
        tmp_path,
        lang=lang,
        sources=Sources(metrics=PrometheusSource(settings.prometheus)),
        frozen_at=from_epoch(srv.scenario.now),
        settings=settings,
    )
    ctx.metrics.window_span = span
    return ctx


async def wait_for(pilot: Any, cond: Callable[[], bool], timeout: float = 60.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not cond():
        assert loop.time() < end, "timed out waiting for the widget"
        await pilot.pause(0.1)


def text_of(app: App[None], selector: str) -> str:
    return str(app.query_one(selector, Static).render())


async def test_drilldown_view_layers_rules_and_pin(
    prometheus_scenario: Any, tmp_path: Path
) -> None:
    from cockpit.ui.drilldown_view import DrilldownView

    srv = prometheus_scenario("thermal_replica")
    ctx = ctx_for(srv, tmp_path)
    app = Host(ctx, DrilldownView)
    async with app.run_test(size=(160, 60)) as pilot:
        view = app.query_one(DrilldownView)
        await wait_for(pilot, lambda: view.data is not None or view.failure is not None)
        assert view.failure is None
        layers = text_of(app, "#dd-layers")
        assert "Hardware: anomalous" in layers and "Runtime: normal" in layers
        # SM activity is off in the shipped CSVs: read from graphics-engine activity.
        assert "missing: DCGM_FI_PROF_SM_ACTIVE" not in layers, layers
        assert "missing:" in layers, layers
        rules = text_of(app, "#dd-rules")
        assert "● P50 normal but P99 up" in rules
        table = app.query_one("#dd-table", DataTable)
        assert table.row_count >= 30
        table.focus()
        table.move_cursor(row=table.get_row_index("hardware.temp:value"))
        await pilot.press("alt+p")
        await pilot.pause()
        assert ctx.session is not None
        ev = ctx.session.incident.evidence[-1]
        # a GPU signal's one number says which GPUs it stands for (its query takes the max)
        hottest = "temperature, highest of the service's GPUs"
        assert ev.label == hottest and ev.unit == "°C" and "DCGM_FI_DEV_GPU_TEMP" in ev.query
        # kept in both languages, so an export in the other one speaks its own
        assert ev.label_i18n["en"] == hottest and "温度" in ev.label_i18n["zh"]
        assert "最大值" in ev.label_i18n["zh"]
        # the note quotes the row's reading (value, change, verdict) as C shows it
        assert ev.note_i18n["en"].startswith("temperature ")
        assert "anomalous); baseline " in ev.note_i18n["en"] and "；基线 " in ev.note_i18n["zh"]
        entry = next(e for e in ctx.session.incident.timeline if e.kind.value == "evidence")
        assert entry.text_i18n["en"].startswith(f"{hottest} = ")
        assert float(ev.value) > 85 and ev.step == "C"
        await ctx.sources.close()


async def test_drilldown_shows_every_row_before_the_window_history_and_hardware_waits(
    prometheus_scenario: Any, tmp_path: Path
) -> None:
    """C's rows (value and verdict) are on screen before the window's GPU history is read;
    until it is, the hardware layer reads as pending, never normal; then the lost GPU makes
    it anomalous, on the very same rows."""
    from cockpit.collect.cache import _key, peek, screen_window
    from cockpit.collect.history import collect_history
    from cockpit.ui.drilldown_view import DrilldownView

    srv = prometheus_scenario("gpu_lost")
    ctx = ctx_for(srv, tmp_path / "a", span="2h")
    window = screen_window(ctx)
    # The window's history, held back until the rows have been looked at.
    held: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    ctx.metrics.results[_key("history", window)] = held
    app = Host(ctx, DrilldownView)
    async with app.run_test(size=(160, 60)) as pilot:
        view = app.query_one(DrilldownView)
        await wait_for(pilot, lambda: view.early is not None or view.failure is not None)
        await pilot.pause()
        assert view.failure is None and view.data is None
        early = view.early
        assert not early.window_checked
        table = app.query_one("#dd-table", DataTable)
        assert table.row_count == len(early.drilldown.summaries) > 30
        assert all(table.get_row_at(i)[7] for i in range(table.row_count))
        # the lost GPU shows only in the window's history: the rows alone do not say it
        assert early.drilldown.layer("hardware").verdict != "anomalous"
        hardware = next(x for x in text_of(app, "#dd-layers").splitlines() if "Hardware:" in x)
        assert hardware == "… Hardware: (reading the window's GPU history: lost GPUs, Xid errors…)"
        status = str(app.query_one(".mv-status", Static).render())
        assert "waits for the window's GPU history" in status
        other = ctx_for(srv, tmp_path / "b", span="2h")
        held.set_result(await collect_history(other, window))
        await other.sources.close()
        await wait_for(pilot, lambda: view.data is not None or view.failure is not None)
        await pilot.pause()
        assert view.data is not None and view.data.window_checked and view.early is None
        assert view.data.drilldown.layer("hardware").verdict == "anomalous"
        assert all(
            a is b
            for a, b in zip(view.data.drilldown.summaries, early.drilldown.summaries, strict=True)
        )
        assert "✖ Hardware: anomalous" in text_of(app, "#dd-layers")
        assert "reading the window" not in text_of(app, "#dd-layers")
        assert not app.query_one(".mv-status", Static).display
        # a refresh asks for the rows again and decides the whole report from those
        first = view.data
        view.action_refresh()
        await wait_for(pilot, lambda: view.data is not first or view.failure is not None)
        await pilot.pause()
        assert view.data is not None and view.data.window_checked
        again = peek(ctx, "drilldown.signals", window)
        assert again is not None and again is not early
        assert all(
            a is b
            for a, b in zip(view.data.drilldown.summaries, again.drilldown.summaries, strict=True)
        )
        assert any(
            a is not b
            for a, b in zip(view.data.drilldown.summaries, first.drilldown.summaries, strict=True)
        )
        assert view.data.drilldown.layer("hardware").verdict == "anomalous"
        await ctx.sources.close()


async def test_scope_view_accepts_single_gpu(prometheus_scenario: Any, tmp_path: Path) -> None:
    from cockpit.ui.scope_view import ScopeView

    srv = prometheus_scenario("thermal_replica")
    ctx = ctx_for(srv, tmp_path)
    app = Host(ctx, ScopeView)
    async with app.run_test(size=(160, 50)) as pilot:
        view = app.query_one(ScopeView)
        await wait_for(pilot, lambda: view.data is not None or view.failure is not None)
        assert "a single GPU" in text_of(app, "#scope-verdict")
        assert "E — isolate" in text_of(app, "#scope-verdict")
        assert "√(n−1) = 1.73" in text_of(app, "#scope-lines")
        button = app.query_one("#scope-accept", Button)
        assert not button.disabled
        # press() rather than a click at screen coordinates: under load the layout may not
        # have settled where a click would land.
        button.press()
        await pilot.pause()
        assert ctx.session is not None
        assert ctx.session.incident.scope_branch == "single"
        assert "GPU-" in ctx.session.incident.scope_verdict
        assert ctx.metrics.suspect[1] == "gpu"
        await ctx.sources.close()


async def test_cohort_panel_highlights_and_changes_cohort(
    prometheus_scenario: Any, tmp_path: Path
) -> None:
    from cockpit.plugins.cohort import CohortPanel

    srv = prometheus_scenario("thermal_replica")
    ctx = ctx_for(srv, tmp_path, lang="zh")
    app = Host(ctx, CohortPanel)
    async with app.run_test(size=(160, 50)) as pilot:
        panel = app.query_one(CohortPanel)
        await wait_for(pilot, lambda: panel.data is not None or panel.failure is not None)
        assert panel.failure is None
        assert "所有其他 GPU（3 块）" in text_of(app, "#cohort-def")
        assert "温度" in text_of(app, "#cohort-out")
        table = app.query_one("#cohort-table", DataTable)
        row = table.get_row("hardware.temp:value")
        assert "离群" in str(row[-1])
        table.focus()
        await pilot.press("alt+c")
        await wait_for(
            pilot, lambda: panel.data is not None and panel.data.cohort.kind == "node_gpus"
        )
        assert "同一节点" in text_of(app, "#cohort-def")
        suspect = panel.data.cohort.suspect
        # a name no series carries is said, not compared with nothing
        inp = app.query_one("#cohort-suspect", Input)
        inp.value = "W6"
        inp.focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: "W6" in text_of(app, "#cohort-def"))
        assert "没有任何序列属于 W6" in text_of(app, "#cohort-def")
        assert table.row_count == 0
        # an empty field goes back to the suspect the flow found
        inp.value = ""
        await pilot.press("enter")
        # named as every screen names it: its pod on its node, GPU index, UUID start
        await wait_for(pilot, lambda: f"({suspect[:8]}…)" in text_of(app, "#cohort-def"))
        assert " GPU " in text_of(app, "#cohort-def") and " on gpu-node-b" in text_of(
            app, "#cohort-def"
        )
        assert inp.value == suspect
        await ctx.sources.close()


async def test_shared_view_finds_the_long_prompt_client(
    prometheus_scenario: Any, tmp_path: Path
) -> None:
    from cockpit.ui.shared_view import SharedView

    srv = prometheus_scenario("long_prompts")
    ctx = ctx_for(srv, tmp_path)
    app = Host(ctx, SharedView)
    async with app.run_test(size=(160, 50)) as pilot:
        view = app.query_one(SharedView)
        await wait_for(pilot, lambda: view.data is not None or view.failure is not None)
        findings = text_of(app, "#sh-findings")
        assert "● Prompt-length mix shifted: a new long-prompt client? — matches" in findings
        assert "○ Arrival rate changed" in findings
        await ctx.sources.close()


async def test_golden_panel_rows_sparklines_and_breach(
    prometheus_scenario: Any, tmp_path: Path
) -> None:
    from cockpit.plugins.golden_signals import GoldenRow, GoldenRows, GoldenSignalsPanel, Trend

    srv = prometheus_scenario("worked_example")
    ctx = ctx_for(srv, tmp_path, span="2h")
    app = Host(ctx, GoldenSignalsPanel)
    async with app.run_test(size=(160, 50)) as pilot:
        panel = app.query_one(GoldenSignalsPanel)
        await wait_for(pilot, lambda: panel.data is not None or panel.failure is not None)
        await pilot.pause()
        rows = {r.summary.key: r for r in app.query(GoldenRow)}
        assert list(rows)[:4] == [
            "access.latency:p50",
            "access.latency:p95",
            "access.latency:p99",
            "access.latency:max",
        ]
        assert {
            "access.qps:value",
            "serving.gen_tps:value",
            "serving.prompt_tps:value",
            "access.error_ratio_5xx:value",
            "hardware.gpu_util:value",
        } <= set(rows)
        p99 = rows["access.latency:p99"].summary
        assert abs((p99.now.value or 0) - 620) < 31 and abs((p99.baseline.value or 0) - 180) < 9
        assert len(rows["access.latency:p99"].query(Trend)) == 1
        # The first SLO breach (P99 > 1.5 × baseline) is offered as the impact start.
        await wait_for(pilot, lambda: bool(app.messages))
        at = app.messages[0].at.timestamp()
        assert srv.scenario.incident_start <= at <= srv.scenario.incident_start + 600
        # Both numbers of the breach carry their unit.
        breach = text_of(app, "#golden-breach")
        assert re.search(r"= [0-9.]+ ms, SLO [0-9.]+ ms", breach), breach
        golden_rows = app.query_one("#golden-rows", GoldenRows)
        golden_rows.choose_key("access.latency:p99")
        golden_rows.focus()
        await pilot.press("alt+p")
        await pilot.pause()
        assert ctx.session is not None
        ev = ctx.session.incident.evidence[-1]
        assert (
            ev.unit == "ms"
            and "nginx_ingress_controller_request_duration_seconds_bucket" in ev.query
        )
        await ctx.sources.close()


async def test_golden_panel_says_which_metric_is_missing(
    prometheus_scenario: Any, tmp_path: Path
) -> None:
    from cockpit.plugins.golden_signals import GoldenRow, GoldenSignalsPanel

    srv = prometheus_scenario("half_missing")
    ctx = ctx_for(srv, tmp_path)
    app = Host(ctx, GoldenSignalsPanel)
    async with app.run_test(size=(160, 50)) as pilot:
        panel = app.query_one(GoldenSignalsPanel)
        await wait_for(pilot, lambda: panel.data is not None or panel.failure is not None)
        await pilot.pause()
        rows = {r.summary.key: r for r in app.query(GoldenRow)}
        tps = rows["serving.gen_tps:value"]
        assert tps.has_class("-missing")
        assert "missing: vllm:generation_tokens_total" in str(
            tps.query_one(".g-missing", Static).render()
        )
        lat = rows["serving.e2e_latency:p99"].summary
        assert lat.now.ok and lat.verdict == "anomalous"
        await ctx.sources.close()


async def test_golden_panel_puts_alerts_on_the_timeline_and_offers_detection(
    prometheus_scenario: Any, tmp_path: Path
) -> None:
    from cockpit.incident import TimelineKind
    from cockpit.plugins.golden_signals import GoldenSignalsPanel

    srv = prometheus_scenario("worked_example")
    ctx = ctx_for(srv, tmp_path, span="2h")
    app = Host(ctx, GoldenSignalsPanel)
    async with app.run_test(size=(160, 50)) as pilot:
        panel = app.query_one(GoldenSignalsPanel)
        await wait_for(pilot, lambda: panel.data is not None or panel.failure is not None)
        assert ctx.session is not None
        await wait_for(
            pilot, lambda: any(e.kind == TimelineKind.ALERT for e in ctx.session.incident.timeline)
        )  # type: ignore[union-attr]
        alerts = [e for e in ctx.session.incident.timeline if e.kind == TimelineKind.ALERT]
        assert [a.text.split()[1] for a in alerts] == ["VLLMHighP99Latency", "GPUThermalThrottling"]
        assert "VLLMHighP99Latency" in text_of(app, "#golden-alert")
        use = app.query_one("#golden-use-detect", Button)
        assert use.display
        use.press()
        await pilot.pause()
        assert ctx.session.incident.times.detect == alerts[0].at
        assert abs(alerts[0].at.timestamp() - srv.scenario.detected_at) <= 15
        await ctx.sources.close()


async def test_golden_panel_offers_the_alert_that_paged_not_the_first(
    prometheus_scenario: Any, tmp_path: Path
) -> None:
    """Started from the GPU warning, the panel offers its firing time, not the latency
    alert's that fired first (and the other way round by default, above)."""
    from cockpit.incident import PagedBy
    from cockpit.plugins.golden_signals import GoldenRow, GoldenSignalsPanel
    from cockpit.scenarios import worked_example as we

    srv = prometheus_scenario("worked_example")
    ctx = ctx_for(srv, tmp_path, span="2h")
    assert ctx.session is not None
    gpu = next(a for a in we.ALERTS if a.name == "GPUThermalThrottling")
    labels = {"alertname": gpu.name, "severity": gpu.severity, **gpu.labels}
    ctx.session.incident.paged_by = PagedBy(name=gpu.name, labels=labels)
    app = Host(ctx, GoldenSignalsPanel)
    async with app.run_test(size=(160, 50)) as pilot:
        panel = app.query_one(GoldenSignalsPanel)
        await wait_for(pilot, lambda: panel.data is not None or panel.failure is not None)
        await pilot.pause()
        assert "The alert that paged: GPUThermalThrottling" in text_of(app, "#golden-alert")
        app.query_one("#golden-use-detect", Button).press()
        await pilot.pause()
        detect = ctx.session.incident.times.detect
        assert detect is not None and abs(detect.timestamp() - gpu.firing_at) <= 15
        # its SLI is none of the golden rows: no row is marked
        assert not any(r.has_class("-paged") for r in app.query(GoldenRow))
        # a TTFT P95 alert: the TTFT row (the panel shows its P99)
        ctx.session.incident.paged_by = PagedBy(name="ttft", sli="serving.ttft:p95")
        panel.refresh_data()
        await pilot.pause()
        await wait_for(pilot, lambda: any(r.has_class("-paged") for r in app.query(GoldenRow)))
        marked = [r.summary.key for r in app.query(GoldenRow) if r.has_class("-paged")]
        assert marked == ["serving.ttft:p99"]
        await ctx.sources.close()


async def test_backtest_panel_answers_which_monitor_was_earlier(
    prometheus_scenario: Any, tmp_path: Path
) -> None:
    from cockpit.plugins.backtest import BacktestPanel

    srv = prometheus_scenario("worked_example")
    ctx = ctx_for(srv, tmp_path, span="2h")
    app = Host(ctx, BacktestPanel)
    async with app.run_test(size=(180, 90)) as pilot:
        panel = app.query_one(BacktestPanel)
        await wait_for(pilot, lambda: panel.data is not None or panel.failure is not None)
        assert panel.failure is None
        bt = panel.data.backtest
        ids = {r.candidate.id for r in bt.results}
        assert {
            "queue_growth",
            "kv_cache_high",
            "preemption_rate",
            "throttle",
            "p99_over_baseline",
            "error_burn",
        } <= ids
        assert bt.impact_start is not None
        # the impact start came from the first SLO breach: its head names the signal
        assert panel.data.breach is not None and panel.data.impact_source == "breach"
        head = str(app.query_one("#bt-head").render())
        assert "(first SLO breach of gateway latency P99)" in head, head
        # The queue grows from the impact start: its rule waits its for: 2m in pending,
        # so it fires 2 min after the impact start, still before the real detection (the
        # first alert, 5.5 min into the incident).
        assert bt.best is not None and bt.best.first_fire is not None
        assert bt.best.candidate.id == "queue_growth"
        assert bt.best.lead_s == -bt.best.candidate.for_s == -120
        assert bt.detected_at is not None
        assert abs(bt.detected_at.timestamp() - srv.scenario.detected_at) <= 15
        assert (bt.best.before_detection_s or 0) >= 120
        best = str(app.query_one("#bt-best").render())
        assert best.startswith("Best: queue growth, 2 min after the impact start"), best
        assert "queue_growth" not in best.splitlines()[0], best
        assert (
            "groups:" in bt.rule_yaml and bt.best.candidate.expr.replace("'", "''") in bt.rule_yaml
        )
        use = app.query_one("#bt-use", Button)
        assert not use.disabled
        use.press()
        await pilot.pause()
        assert ctx.session is not None
        inc = ctx.session.incident
        # named as the panel names it, never by its id; on its side of the impact start
        name = t(f"metrics.backtest.candidate.{bt.best.candidate.id}", "en")
        assert name in inc.earlier_detection and bt.best.candidate.id not in inc.earlier_detection
        assert "after the impact start" in inc.earlier_detection  # lead -2 min: after it
        assert inc.alert_rule == bt.rule_yaml
        await ctx.sources.close()


async def test_drilldown_view_says_how_many_missing_metrics_it_does_not_list(
    prometheus_scenario: Any, tmp_path: Path
) -> None:
    from cockpit.ui.drilldown_view import DrilldownView

    srv = prometheus_scenario("half_missing")
    ctx = ctx_for(srv, tmp_path)
    app = Host(ctx, DrilldownView)
    async with app.run_test(size=(160, 60)) as pilot:
        view = app.query_one(DrilldownView)
        await wait_for(pilot, lambda: view.data is not None or view.failure is not None)
        assert view.failure is None and view.data is not None
        serving = view.data.drilldown.layer("serving")
        assert len(serving.missing) > 4
        layers = text_of(app, "#dd-layers")
        assert f"… {len(serving.missing) - 4} more missing metrics" in layers
        await ctx.sources.close()
