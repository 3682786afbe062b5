"""Snapshots of the GPU panel: healthy node, a throttling GPU, a lost GPU (NVML through the
fake libnvidia-ml.so.1), and the DCGM fallback (real Prometheus, backfilled series)."""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import pytest

# The fake NVML and Prometheus helpers live under tests/backends (importable as ``tests``
# when the whole suite runs; also when this folder is run on its own).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from panel_host import PanelHost

from cockpit.clock import Clock
from cockpit.config import PrometheusSettings, Settings
from cockpit.context import AppContext
from cockpit.plugins.gpu import GpuPanel
from cockpit.sources.base import Sources
from cockpit.sources.nvml import NvmlSource
from cockpit.sources.prometheus import PrometheusSource
from tests.backends.dcgm_prom import DcgmProm, dcgm_prometheus  # noqa: F401
from tests.backends.nvml import DRIVER_NOT_LOADED, FakeNvml, load_fake_nvml

FROZEN = datetime(2026, 11, 29, 21, 0, tzinfo=UTC)
SIZE = (180, 52)


class OnceGpuPanel(GpuPanel):
    """Fetches once, so the history (sparklines) is the same on every run."""

    POLL_INTERVAL: ClassVar[float | None] = None


@pytest.fixture
def fake(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Any:
    lib = load_fake_nvml(tmp_path_factory.mktemp("fake-nvml-snap"))
    fk = FakeNvml(lib, tmp_path / "fake.cfg")
    old = os.environ.get("FAKE_NVML_CONFIG")
    os.environ["FAKE_NVML_CONFIG"] = str(fk.config)
    busy: dict[str, Any] = {}
    for i in range(8):
        busy.update(
            {
                f"gpu{i}.util_gpu": 94 + i % 3,
                f"gpu{i}.util_mem": 38 + i % 2,
                f"gpu{i}.mem_used": (70000 + 100 * i) * 1024 * 1024,
                f"gpu{i}.power_mw": 640000 + 5000 * (i % 3),
                f"gpu{i}.temp_gpu": 62 + i % 3,
                f"gpu{i}.temp_mem": 70 + i % 2,
                f"gpu{i}.clock_sm": 1980 - 15 * (i % 2),
                f"gpu{i}.clock_reasons": 0,
            }
        )
    fk.update(busy)
    yield fk
    if old is None:
        os.environ.pop("FAKE_NVML_CONFIG", None)
    else:
        os.environ["FAKE_NVML_CONFIG"] = old


def _ctx(sources: Sources, lang: str, at: datetime = FROZEN) -> AppContext:
    ctx = AppContext(settings=Settings(), sources=sources, clock=Clock(frozen_at=at), lang=lang)
    return ctx


async def _loaded(pilot: Any) -> None:
    panel = pilot.app.query_one(GpuPanel)
    for _ in range(200):
        if panel.data is not None or panel.failure is not None:
            break
        await pilot.pause(0.05)
    # Freeze on this poll: a later one (the panel polls every second) refilling the table
    # while the screenshot is taken would catch the header before its widths are redone.
    panel.POLL_INTERVAL = None
    if panel._timer is not None:
        panel._timer.stop()
    await pilot.app.workers.wait_for_complete()
    # Let the table and statics lay out before the screenshot: under load the column
    # widths are computed a few idle cycles after the rows land.
    from textual.widgets import DataTable

    tables = list(panel.query(DataTable))
    for _ in range(100):
        if all(t.row_count > 0 for t in tables) or panel.failure is not None:
            break
        await pilot.pause(0.05)
    for _ in range(3):
        await pilot.pause(0.1)
        await pilot.wait_for_scheduled_animations()
    # The header row can stay rendered at the label-only widths of before the rows
    # arrived (DataTable keeps it in a render cache); toggling the cursor clears those
    # caches, so the screenshot shows what a repaint shows.
    for table in tables:
        table.show_cursor = not table.show_cursor
        table.show_cursor = not table.show_cursor
    await pilot.pause(0.1)
    await pilot.pause()


def _nvml() -> NvmlSource:
    return NvmlSource(watch_xid=False, node="gpu-node-a", clock=lambda: FROZEN)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_healthy_node(snap_compare: Any, fake: FakeNvml, lang: str) -> None:
    app = PanelHost(_ctx(Sources(gpu=_nvml()), lang), OnceGpuPanel)
    assert snap_compare(app, terminal_size=SIZE, run_before=_loaded)


def test_throttling_gpu(snap_compare: Any, fake: FakeNvml) -> None:
    fake.update(
        {
            "gpu5.clock_reasons": 0x40,
            "gpu5.clock_sm": 990,
            "gpu5.temp_gpu": 91,
            "gpu5.power_mw": 410000,
            "gpu2.fn.nvmlDeviceGetPowerUsage": 3,
        }
    )
    app = PanelHost(_ctx(Sources(gpu=_nvml()), "en"), OnceGpuPanel)
    assert snap_compare(app, terminal_size=SIZE, run_before=_loaded)


def test_lost_gpu(snap_compare: Any, fake: FakeNvml) -> None:
    src = _nvml()
    src.poll()  # the GPU was seen healthy once (its identity is kept)
    fake.lose_gpu(3)
    app = PanelHost(_ctx(Sources(gpu=src), "en"), OnceGpuPanel)
    assert snap_compare(app, terminal_size=SIZE, run_before=_loaded)


def test_dcgm_fallback(snap_compare: Any, fake: FakeNvml, dcgm_prometheus: DcgmProm) -> None:  # noqa: F811
    fake.set(init=DRIVER_NOT_LOADED)
    metrics = PrometheusSource(PrometheusSettings(url=dcgm_prometheus.url))
    ctx = _ctx(Sources(gpu=_nvml(), metrics=metrics), "en", at=dcgm_prometheus.at)
    ctx.gpu_node = "gpu-node-a"
    assert snap_compare(PanelHost(ctx, OnceGpuPanel), terminal_size=SIZE, run_before=_loaded)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_dcgm_node_switcher_and_pods(
    snap_compare: Any,
    dcgm_prometheus: DcgmProm,  # noqa: F811
    lang: str,
    size: tuple[int, int],
) -> None:
    """DCGM at 80×24 and 160×48: the node switcher, the pod column (gpu-node-b's GPU 0 is
    held by llm/vllm-0) and the legend of the pairs."""
    metrics = PrometheusSource(PrometheusSettings(url=dcgm_prometheus.url))
    ctx = _ctx(Sources(metrics=metrics), lang, at=dcgm_prometheus.at)
    ctx.gpu_node = "gpu-node-b"
    assert snap_compare(PanelHost(ctx, OnceGpuPanel), terminal_size=size, run_before=_loaded)
