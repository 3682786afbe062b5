"""The GPU panel driven by Pilot: NVML through the fake library (throttling, a GPU lost
mid-run, NOT_SUPPORTED, Xid events on the timeline), DCGM fallback against the real
Prometheus with its node switcher, pod column and legend, and the dmesg paste box."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from textual.widgets import Select

from cockpit.app import CockpitApp
from cockpit.config import PrometheusSettings
from cockpit.incident import TimelineKind
from cockpit.plugins.gpu import GpuPanel
from cockpit.sources.base import Sources
from cockpit.sources.nvml import NvmlSource
from cockpit.sources.prometheus import PrometheusSource
from cockpit.ui.plugins import PanelLoad
from cockpit.ui.table import PlainTable
from testkit import make_ctx
from tests.backends.dcgm_prom import DcgmProm
from tests.backends.nvml import DRIVER_NOT_LOADED, FakeNvml

PANELS = [PanelLoad(name="gpu", value="cockpit.plugins.gpu:GpuPanel", cls=GpuPanel)]


def _cell(panel: GpuPanel, row: int, col: str) -> str:
    table = panel.query_one("#gpu-table")
    return str(table.get_cell(str(row), col))


def _on_node_a(tmp_path: Any, lang: str, sources: Sources, prom: DcgmProm) -> Any:
    """Step E with the GPU panel on DCGM's gpu-node-a, the clock at the series' time."""
    ctx = make_ctx(tmp_path, lang=lang, sources=sources, panels=PANELS, frozen_at=prom.at)
    ctx.gpu_node = "gpu-node-a"
    return ctx, CockpitApp(ctx=ctx, start_step="E")


async def _until(pilot: Any, cond: Any, timeout: float = 8.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not cond():
        if loop.time() > end:
            raise AssertionError("condition not reached")
        await pilot.pause(0.05)


async def test_nvml_panel_throttle_loss_and_xid(fake_nvml: FakeNvml, tmp_path) -> None:
    fake_nvml.update({f"gpu{i}.util_gpu": 95 for i in range(8)})
    fake_nvml.update({f"gpu{i}.clock_reasons": 0 for i in range(8)})
    fake_nvml.update({"gpu1.fn.nvmlDeviceGetPowerUsage": 3})
    src = NvmlSource()
    ctx = make_ctx(tmp_path, lang="en", sources=Sources(gpu=src), panels=PANELS)
    app = CockpitApp(ctx=ctx, start_step="E")
    try:
        async with app.run_test(size=(200, 60)) as pilot:
            panel = app.screen.query_one(GpuPanel)
            await _until(pilot, lambda: panel.data is not None)
            assert "local NVML" in str(panel.query_one("#gpu-source").render())
            assert _cell(panel, 0, "state") == "OK"
            # NOT_SUPPORTED renders as N/A, never 0.
            assert _cell(panel, 1, "power").startswith("N/A/")
            fake_nvml.update(
                {"gpu5.clock_reasons": 0x40, "gpu5.clock_sm": 990, "gpu5.temp_gpu": 91}
            )
            await _until(pilot, lambda: _cell(panel, 5, "state") == "BAD")
            assert "HW thermal" in _cell(panel, 5, "clocks")
            why = str(panel.query_one("#gpu-why").render())
            assert "GPU 5: clocks cut" in why
            assert "5" in str(panel.query_one("#gpu-cohort").render())
            # A GPU falls off the bus mid-run; the others keep updating.
            fake_nvml.lose_gpu(3)
            fake_nvml.add_xid(3, 79)
            fake_nvml.set(gpu0__util_gpu=42)
            await _until(pilot, lambda: _cell(panel, 3, "state") == "LOST")
            await _until(pilot, lambda: _cell(panel, 0, "util").startswith("42/"))
            await _until(
                pilot,
                lambda: any(e.kind is TimelineKind.XID for e in ctx.session.incident.timeline),
            )
            entry = next(e for e in ctx.session.incident.timeline if e.kind is TimelineKind.XID)
            assert entry.text.startswith("Xid 79 on GPU 3") and entry.source == "nvml"
            assert "GPU has fallen off the bus" in str(panel.query_one("#gpu-xids").render())
            hist = str(panel.query_one("#gpu-history").render())
            assert "GPU 0:" in hist and any(ch in hist for ch in "▁▂▃▄▅▆▇█")
    finally:
        await src.close()


async def test_driver_not_loaded_falls_back_to_dcgm(
    fake_nvml: FakeNvml, dcgm_prometheus: DcgmProm, tmp_path
) -> None:
    fake_nvml.set(init=DRIVER_NOT_LOADED)
    src = NvmlSource(watch_xid=False)
    metrics = PrometheusSource(PrometheusSettings(url=dcgm_prometheus.url))
    _, app = _on_node_a(tmp_path, "zh", Sources(gpu=src, metrics=metrics), dcgm_prometheus)
    try:
        async with app.run_test(size=(200, 60)) as pilot:
            panel = app.screen.query_one(GpuPanel)
            await _until(pilot, lambda: panel.data is not None)
            source = str(panel.query_one("#gpu-source").render())
            assert "dcgm-exporter" in source and "gpu-node-a" in source
            assert "本机 NVML 不可用" in source and "driver not loaded" in source.lower()
            assert "ECC DBE" in source  # the unexported-fields warning
            assert _cell(panel, 0, "clocks") == "N/A"
            assert "离群 GPU：5" in str(panel.query_one("#gpu-cohort").render())
    finally:
        await src.close()
        await metrics.close()


async def test_no_source_at_all_says_so(tmp_path) -> None:
    ctx = make_ctx(
        tmp_path,
        lang="en",
        sources=Sources(missing={"gpu": "no NVML library", "metrics": "no Prometheus URL"}),
        panels=PANELS,
    )
    app = CockpitApp(ctx=ctx, start_step="E")
    async with app.run_test(size=(160, 50)) as pilot:
        panel = app.screen.query_one(GpuPanel)
        await _until(pilot, lambda: panel.failure is not None)
        status = str(panel.query_one(".panel--status").render())
        assert "No GPU source" in status and "no NVML library" in status
        await pilot.pause(0.3)  # let the app's coalesced incident-change timer fire


async def test_paste_box_explains_dmesg(tmp_path) -> None:
    ctx = make_ctx(tmp_path, lang="en", sources=Sources(missing={"gpu": "x"}), panels=PANELS)
    app = CockpitApp(ctx=ctx, start_step="E")
    async with app.run_test(size=(160, 50)) as pilot:
        panel = app.screen.query_one(GpuPanel)
        panel.query_one("#gpu-paste-text").text = (
            "NVRM: Xid (PCI:0000:07:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error\n"
            "NVRM: Xid (PCI:0000:07:00): 64, pid='<unknown>', name=<unknown>, Dynamic Page Retirement: Blacklisting failed.\n"
        )
        panel.query_one("#gpu-explain").press()
        await pilot.pause()
        out = str(panel.query_one("#gpu-explain-out").render())
        assert "0000:07:00: DBE + retirement failure -> RMA candidate" in out
        assert "Node action: Cordon and drain" in out
        await pilot.pause(0.3)  # let the app's coalesced incident-change timer fire


async def test_dcgm_history_sparklines_cover_the_half_hour(
    prometheus_scenario: Any, tmp_path
) -> None:
    """thermal_replica: GPU temperature steps up 25 min before "now"; the history reads 30
    min (61 samples at 30 s) and the sparkline compresses them all into its 12 cells, so
    the step shows (the last 12 samples alone were flat)."""
    from cockpit.analysis.gpu_text import SPARK_METRICS
    from cockpit.models import from_epoch

    srv = prometheus_scenario("thermal_replica")
    metrics = PrometheusSource(PrometheusSettings(url=srv.url))
    ctx = make_ctx(
        tmp_path,
        lang="en",
        sources=Sources(metrics=metrics, missing={"gpu": "no NVML library"}),
        panels=PANELS,
        frozen_at=from_epoch(srv.scenario.now),
    )
    app = CockpitApp(ctx=ctx, start_step="E")
    try:
        async with app.run_test(size=(200, 60)) as pilot:
            panel = app.screen.query_one(GpuPanel)
            await _until(pilot, lambda: panel.data is not None, timeout=30)
            hist = str(panel.query_one("#gpu-history").render()).splitlines()
            temp_at = SPARK_METRICS.index("temp_gpu")
            temps = {
                line.split(":")[0]: line.split(": ", 1)[1].split(" ")[temp_at] for line in hist[1:]
            }
            assert all(len(s) == 12 for s in temps.values())
            bars = "▁▂▃▄▅▆▇█"
            stepped = [
                g for g, s in temps.items() if s[-1] == "█" and bars.index(s[0]) < bars.index(s[-1])
            ]
            assert len(stepped) == 1, temps  # the hot GPU: lower first (bars from zero), then high
            flat = [g for g, s in temps.items() if len(set(s)) == 1]
            assert len(flat) == len(temps) - 1
            assert hist[0].startswith("Last 30 min")
    finally:
        await metrics.close()


async def test_node_switcher_pod_column_and_legend(dcgm_prometheus: DcgmProm, tmp_path) -> None:
    metrics = PrometheusSource(PrometheusSettings(url=dcgm_prometheus.url))
    ctx, app = _on_node_a(tmp_path, "en", Sources(metrics=metrics), dcgm_prometheus)
    try:
        async with app.run_test(size=(200, 60)) as pilot:
            panel = app.screen.query_one(GpuPanel)
            await _until(pilot, lambda: panel.data is not None)
            switcher = panel.query_one("#gpu-node", Select)
            assert switcher.display
            assert [str(o[0]) for o in switcher._options if isinstance(o[1], str)] == [
                "gpu-node-a",
                "gpu-node-b",
            ]
            assert switcher.value == "gpu-node-a"
            assert _cell(panel, 0, "pod") == "—"  # no pod mapping on gpu-node-a
            legend = str(panel.query_one("#gpu-legend").render())
            assert legend.startswith("Pairs: Util% GPU/memory bandwidth")
            switcher.value = "gpu-node-b"
            await _until(
                pilot, lambda: "gpu-node-b" in str(panel.query_one("#gpu-source").render())
            )
            await _until(pilot, lambda: panel.query_one("#gpu-table").row_count == 4)
            assert ctx.gpu_node == "gpu-node-b"
            assert _cell(panel, 0, "pod") == "llm/vllm-0"
    finally:
        await metrics.close()


async def test_verdict_and_readings_fit_80_columns_without_scrolling(
    dcgm_prometheus: DcgmProm, tmp_path
) -> None:
    """On an 80-column terminal the table shows each GPU's state, utilisation, memory,
    temperature and power without scrolling sideways; every column of ``cockpit gpus``
    is still there (the pod and the model name last)."""
    from cockpit.analysis.gpu_text import COLUMNS
    from cockpit.plugins.gpu import TABLE_COLUMNS

    assert sorted(TABLE_COLUMNS) == sorted(COLUMNS)
    src = PrometheusSource(PrometheusSettings(url=dcgm_prometheus.url))
    _, app = _on_node_a(tmp_path, "en", Sources(metrics=src), dcgm_prometheus)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = app.screen.query_one(GpuPanel)
        await _until(pilot, lambda: panel.data is not None)
        await pilot.pause()
        table = panel.query_one("#gpu-table")
        visible = table.scrollable_content_region.width
        shown, x = [], 0
        for column in table.ordered_columns:
            x += column.get_render_width(table)
            if x > visible:
                break
            shown.append(str(column.key.value))
        assert {"gpu", "state", "util", "memory", "temp", "power"} <= set(shown), shown


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_gpu_row_under_the_cursor_is_read_in_full_at_80_columns(
    dcgm_prometheus: DcgmProm, tmp_path: Any, lang: str
) -> None:
    """At 80×24 the SM clock, the links, the pod and the model name do not fit: the table
    takes a row cursor and the pane under it shows that GPU's every column with its header,
    the cells the table shows at 160 columns; the state stays in sight without scrolling.
    At 160×48 every column fits: no cursor, no pane."""
    from cockpit.plugins.gpu import HEADERS, TABLE_COLUMNS
    from cockpit.ui.row_detail import RowDetail, colon

    src = PrometheusSource(PrometheusSettings(url=dcgm_prometheus.url))
    _, app = _on_node_a(tmp_path / "wide", lang, Sources(metrics=src), dcgm_prometheus)
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            panel = app.screen.query_one(GpuPanel)
            await _until(pilot, lambda: panel.data is not None)
            await pilot.pause()
            table = panel.query_one("#gpu-table", PlainTable)
            assert not panel.query_one("#gpu-table-detail", RowDetail).display
            assert table.cursor_type == "none"
            wide = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
    finally:
        await src.close()
    headers = HEADERS.get(lang, HEADERS["en"])

    src = PrometheusSource(PrometheusSettings(url=dcgm_prometheus.url))
    _, app = _on_node_a(tmp_path / "narrow", lang, Sources(metrics=src), dcgm_prometheus)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            panel = app.screen.query_one(GpuPanel)
            await _until(pilot, lambda: panel.data is not None)
            await pilot.pause()
            table = panel.query_one("#gpu-table", PlainTable)
            detail = panel.query_one("#gpu-table-detail", RowDetail)
            table.focus()
            await pilot.pause()
            assert table.cursor_type == "row"
            for _ in range(2):
                await pilot.press("down")
            await pilot.pause()
            assert table.cursor_row == 2 and table.has_focus and not detail.focusable
            shown = str(detail.render())
            for col, cell in zip(TABLE_COLUMNS, wide[2], strict=True):
                if cell.strip():
                    label = " ".join(headers[col].split())
                    assert f"{label}{colon(lang)}{cell.strip()}" in shown, (label, cell, shown)
            assert app.screen.region.contains_region(detail.region), detail.region
            assert table.scroll_x == 0
            upto = TABLE_COLUMNS.index("state") + 1
            used = sum(c.get_render_width(table) for c in table.ordered_columns[:upto])
            assert used <= table.scrollable_content_region.width
    finally:
        await src.close()
