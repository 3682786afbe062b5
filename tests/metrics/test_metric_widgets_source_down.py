"""Pilot tests of the metrics widgets when Prometheus fails after the first load (fault
proxy in front of a real Prometheus): the golden panel marks what it keeps as stale and
names a failure shortly per cell, the back-test does not conclude from failed queries, D
says why it cannot decide; and the golden sparklines keep the newest samples at 80
columns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.widgets import Static

from cockpit.app import CockpitApp
from cockpit.config import PrometheusSettings, ServiceSettings, Settings
from cockpit.context import AppContext
from cockpit.models import from_epoch
from cockpit.sources.base import Sources
from cockpit.sources.prometheus import PrometheusSource
from cockpit.ui.plugins import PanelLoad
from testkit import make_ctx
from tests.backends.faultproxy import Fault
from tests.metrics.test_metric_widgets import Host, ctx_for, text_of, wait_for


def proxied_ctx(proxy: Any, srv: Any, tmp_path: Path, lang: str = "en") -> AppContext:
    """The worked example through the fault proxy, a 2 h window, no retries to wait for."""
    settings = Settings(
        prometheus=PrometheusSettings(url=proxy.url, timeout_s=5.0),
        service=ServiceSettings(namespace=srv.scenario.scope["namespace"]),
    )
    ctx = make_ctx(
        tmp_path,
        lang=lang,
        sources=Sources(metrics=PrometheusSource(settings.prometheus)),
        frozen_at=from_epoch(srv.scenario.now),
        settings=settings,
    )
    ctx.metrics.window_span = "2h"
    return ctx


def status_of(panel: Any) -> str:
    return str(panel.query_one(".panel--status", Static).render())


async def test_golden_refresh_with_prometheus_down_marks_the_rows_stale(
    prom_fault_proxy: Any, worked_example_prom: Any, tmp_path: Path
) -> None:
    """F5 (``refresh_data``) queries again; when every query fails the old rows stay,
    marked stale, and the panel says the source failed: no old verdict passes as current."""
    from cockpit.plugins.golden_signals import GoldenRow, GoldenSignalsPanel

    ctx = proxied_ctx(prom_fault_proxy, worked_example_prom, tmp_path)
    app = Host(ctx, GoldenSignalsPanel)
    async with app.run_test(size=(160, 50)) as pilot:
        panel = app.query_one(GoldenSignalsPanel)
        await wait_for(pilot, lambda: panel.data is not None or panel.failure is not None)
        assert panel.failure is None and not panel.has_class("-stale")
        prom_fault_proxy.add(Fault(path="/api/v1/query_range", mode="reset"))
        panel.refresh_data()  # what F5 does
        await wait_for(pilot, lambda: panel.failure is not None)
        await pilot.pause()
        assert panel.has_class("-stale")
        status = status_of(panel)
        assert "Backend unavailable" in status and "every query failed" in status
        assert "stale" in status
        assert app.query(GoldenRow)  # the last good rows stay, dimmed

        prom_fault_proxy.clear()
        panel.refresh_data()
        await wait_for(pilot, lambda: panel.failure is None)
        await pilot.pause()
        assert not panel.has_class("-stale") and status_of(panel) == ""
        await ctx.sources.close()


async def test_golden_row_failure_is_a_short_cell_and_one_status_line(
    prom_fault_proxy: Any, worked_example_prom: Any, tmp_path: Path
) -> None:
    from cockpit.i18n import t
    from cockpit.plugins.golden_signals import GoldenRow, GoldenSignalsPanel

    ctx = proxied_ctx(prom_fault_proxy, worked_example_prom, tmp_path, lang="zh")
    app = Host(ctx, GoldenSignalsPanel)
    async with app.run_test(size=(80, 40)) as pilot:
        panel = app.query_one(GoldenSignalsPanel)
        await wait_for(pilot, lambda: panel.data is not None or panel.failure is not None)
        # Only the gateway-request queries (QPS, 5xx ratio) fail; the rest still answers.
        prom_fault_proxy.add(
            Fault(path="/api/v1/query_range", query="nginx_ingress_controller_requests", status=503)
        )
        panel.action_refresh()  # the panel's ``r``
        await wait_for(
            pilot, lambda: panel.data is not None and any(r.failure_kind for r in panel.data.rows)
        )
        await pilot.pause(0.3)
        failed = [r for r in app.query(GoldenRow) if r.summary.failure_kind]
        assert failed and len(failed) < len(panel.data.rows)
        for row in failed:
            cell = row.query_one(".g-now", Static)
            text = str(cell.render())
            assert text == t(f"metrics.golden.failed_cell.{row.summary.failure_kind}", "zh")
            assert cell.size.height == 1 and row.size.height == 1
        status = status_of(panel)
        assert f"个查询中 {len(failed)} 个失败" in status and "injected 503" in status
        assert status.count("injected 503") == 1
        await ctx.sources.close()


async def test_backtest_with_failed_candidates_does_not_conclude(
    prom_fault_proxy: Any, worked_example_prom: Any, tmp_path: Path
) -> None:
    from cockpit.plugins.backtest import BacktestPanel

    ctx = proxied_ctx(prom_fault_proxy, worked_example_prom, tmp_path)
    app = Host(ctx, BacktestPanel)
    async with app.run_test(size=(180, 90)) as pilot:
        panel = app.query_one(BacktestPanel)
        await wait_for(pilot, lambda: panel.data is not None or panel.failure is not None)
        assert panel.data.backtest.best is not None
        prom_fault_proxy.add(Fault(path="/api/v1/query_range", mode="reset"))
        panel.refresh_data()
        await wait_for(
            pilot,
            lambda: all(r.status == "failed" for r in panel.data.backtest.results),
        )
        await pilot.pause()
        best = text_of(app, "#bt-best")
        total = len(panel.data.backtest.results)
        assert "No candidate alert fired" not in best
        assert "Cannot tell whether a candidate alert fired" in best
        assert f"the queries of {total} of {total} candidates failed" in best
        await ctx.sources.close()


async def test_scope_view_says_the_queries_failed(
    prom_fault_proxy: Any, worked_example_prom: Any, tmp_path: Path
) -> None:
    from cockpit.collect.base import detection_for
    from cockpit.collect.cache import screen_window
    from cockpit.ui.scope_view import ScopeView

    ctx = proxied_ctx(prom_fault_proxy, worked_example_prom, tmp_path, lang="zh")
    await detection_for(ctx, screen_window(ctx).end)  # the metric names were read before
    prom_fault_proxy.add(Fault(path="/api/v1/query_range", mode="reset"))
    app = Host(ctx, ScopeView)
    async with app.run_test(size=(160, 50)) as pilot:
        view = app.query_one(ScopeView)
        await wait_for(pilot, lambda: view.data is not None or view.failure is not None)
        verdict = text_of(app, "#scope-verdict")
        assert verdict.startswith("影响范围：无法判断")
        n = view.data.failed
        assert n > 0 and n == view.data.queried
        assert f"{n} 个指标查询中 {n} 个失败：后端不可达" in verdict
        await ctx.sources.close()


async def test_golden_sparklines_end_with_the_newest_samples_at_80_columns(
    prometheus_scenario: Any, tmp_path: Path
) -> None:
    """At 80 columns the trend column is narrow; it must still hold the whole window (the
    P99 spike at the end), never the oldest cells of a sparkline cut by the border."""
    from cockpit.plugins.golden_signals import GoldenRow, GoldenSignalsPanel, Trend

    srv = prometheus_scenario("thermal_replica")
    ctx = ctx_for(srv, tmp_path, lang="zh", span="2h")
    ctx.panels = [
        PanelLoad(name="golden_signals", value="", cls=GoldenSignalsPanel)
    ]  # the real step screen: its margins and scrollbar leave the panel 72 columns
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(80, 24)) as pilot:
        panel = app.screen.query_one(GoldenSignalsPanel)
        await wait_for(pilot, lambda: panel.data is not None or panel.failure is not None)
        await pilot.pause(0.3)
        rows = {r.summary.key: r for r in app.screen.query(GoldenRow)}
        p99 = rows["access.latency:p99"]
        spark = p99.query_one(Trend)
        assert spark.size.width >= 3
        # Wholly inside the row (and so inside the panel's border), not clipped.
        assert spark.region.right <= p99.region.right
        assert p99.region.right <= panel.content_region.right
        cells = spark.render_line(0).text
        assert len(cells) == spark.size.width
        bars = "▁▂▃▄▅▆▇█"
        # The incident is the last 25 min of the 2 h window: the newest cell is high, the
        # oldest lower (bars from zero: the P99 before is still most of the one after).
        assert bars.index(cells[-1]) >= 5 and bars.index(cells[0]) < bars.index(cells[-1])
        await ctx.sources.close()
