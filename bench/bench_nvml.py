"""NVML poll cost and GPU panel CPU use, against the fake ``libnvidia-ml.so.1``.

1. One full :class:`~cockpit.sources.nvml.NvmlSource` poll of 8 GPUs (every field of the
   snapshot, processes with PID→pod mapping), per GPU, next to a bare pynvml loop doing
   the same NVML reads in the same run. Target: ≤ 2× the bare loop.
2. The GPU panel polling every 1 s in a headless app for a few seconds: process CPU time
   over wall time, next to the same app without the panel.

Absolute numbers depend on the fake library (every call takes a mutex, ``stat``s the
script file and formats a key); only the ratios are meaningful.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

GPUS = 8
ROUNDS = 200
PANEL_SECONDS = 6.0


def _setup(tmp: Path) -> None:
    from tests.backends.nvml import FakeNvml, build_fake_nvml

    lib = build_fake_nvml(tmp / "lib")
    ctypes.CDLL(str(lib), mode=ctypes.RTLD_GLOBAL)
    fake = FakeNvml(lib, tmp / "fake.cfg")
    values: dict[str, Any] = {"count": GPUS}
    for i in range(GPUS):
        values[f"gpu{i}.util_gpu"] = 90 + i
        values[f"gpu{i}.mem_used"] = 70000 * 1024 * 1024
        values[f"gpu{i}.power_mw"] = 650000
        values[f"gpu{i}.clock_sm"] = 1980
        values[f"gpu{i}.clock_reasons"] = 0
        values[f"gpu{i}.procs"] = f"{10000 + i}:{60000 * 1024 * 1024},{20000 + i}:1048576"
    fake.update(values)
    os.environ["FAKE_NVML_CONFIG"] = str(fake.config)


def _bare_poll(nv: Any, handles: list[Any], nlinks: int) -> None:
    for h in handles:
        nv.nvmlDeviceGetUtilizationRates(h)
        nv.nvmlDeviceGetMemoryInfo(h, nv.nvmlMemory_v2)
        nv.nvmlDeviceGetTemperature(h, 0)
        nv.nvmlDeviceGetFieldValues(h, [82, 94])
        nv.nvmlDeviceGetPowerUsage(h)
        nv.nvmlDeviceGetEnforcedPowerLimit(h)
        for clk in (1, 2):
            nv.nvmlDeviceGetClockInfo(h, clk)
            nv.nvmlDeviceGetMaxClockInfo(h, clk)
        nv.nvmlDeviceGetCurrentClocksEventReasons(h)
        nv.nvmlDeviceGetEccMode(h)
        for et in (0, 1):
            for ct in (0, 1):
                nv.nvmlDeviceGetTotalEccErrors(h, et, ct)
        nv.nvmlDeviceGetRemappedRows(h)
        for cause in (0, 1):
            with contextlib.suppress(nv.NVMLError):
                nv.nvmlDeviceGetRetiredPages(h, cause)
        with contextlib.suppress(nv.NVMLError):
            nv.nvmlDeviceGetRetiredPagesPendingStatus(h)
        nv.nvmlDeviceGetCurrPcieLinkGeneration(h)
        nv.nvmlDeviceGetMaxPcieLinkGeneration(h)
        nv.nvmlDeviceGetCurrPcieLinkWidth(h)
        nv.nvmlDeviceGetMaxPcieLinkWidth(h)
        for link in range(nlinks):
            nv.nvmlDeviceGetNvLinkState(h, link)
            for c in range(4):
                nv.nvmlDeviceGetNvLinkErrorCounter(h, link, c)
        nv.nvmlDeviceGetMigMode(h)
        nv.nvmlDeviceGetComputeRunningProcesses(h)


def _poll_cost() -> list[str]:
    import pynvml as nv

    from cockpit.sources.nvml import NvmlSource

    src = NvmlSource(watch_xid=False)
    snap = src.poll()  # init, identity, link count, PID map cached as in a live run
    assert len(snap.gpus) == GPUS and not any(g.lost for g in snap.gpus)
    nv.nvmlInit()
    handles = [nv.nvmlDeviceGetHandleByIndex(i) for i in range(GPUS)]
    nlinks = int(snap.gpus[0].nvlink.links.value or 0)
    _bare_poll(nv, handles, nlinks)

    best_src = best_bare = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(ROUNDS // 5):
            _bare_poll(nv, handles, nlinks)
        best_bare = min(best_bare, (time.perf_counter() - t0) / (ROUNDS // 5))
        t0 = time.perf_counter()
        for _ in range(ROUNDS // 5):
            src.poll()
        best_src = min(best_src, (time.perf_counter() - t0) / (ROUNDS // 5))

    async def via_async() -> float:
        await src.snapshot()
        t0 = time.perf_counter()
        for _ in range(ROUNDS // 5):
            await src.snapshot()
        return (time.perf_counter() - t0) / (ROUNDS // 5)

    best_async = asyncio.run(via_async())
    asyncio.run(src.close())
    nv.nvmlShutdown()
    per = 1000.0 / GPUS
    ratio = best_src / best_bare
    return [
        f"bare pynvml loop, same reads: {best_bare * per:.3f} ms/GPU ({best_bare * 1000:.2f} ms per 8-GPU poll)",
        f"NvmlSource.poll (sync):       {best_src * per:.3f} ms/GPU — {ratio:.2f}× bare (target ≤ 2×) "
        + ("OK" if ratio <= 2.0 else "OVER TARGET"),
        f"NvmlSource.snapshot (async, executor): {best_async * per:.3f} ms/GPU — "
        f"{best_async / best_bare:.2f}× bare",
    ]


def _panel_cpu() -> list[str]:
    from textual.app import App, ComposeResult
    from textual.widgets import Static

    from cockpit.clock import Clock
    from cockpit.config import Settings
    from cockpit.context import AppContext
    from cockpit.plugins.gpu import GpuPanel
    from cockpit.sources.base import Sources
    from cockpit.sources.nvml import NvmlSource

    class Host(App[None]):
        def __init__(self, with_panel: bool, ctx: AppContext) -> None:
            super().__init__()
            self.with_panel = with_panel
            self.ctx = ctx

        def compose(self) -> ComposeResult:
            yield Static("bench")
            if self.with_panel:
                yield GpuPanel(self.ctx)

    async def measure(with_panel: bool) -> tuple[float, int, float]:
        src = NvmlSource()
        ctx = AppContext(
            settings=Settings(), sources=Sources(gpu=src), clock=Clock(), lang="en", session=None
        )
        app = Host(with_panel, ctx)
        polls = 0
        async with app.run_test(size=(200, 60)) as pilot:
            await pilot.pause(1.5)

            def kept() -> int:
                if not with_panel:
                    return 0
                panel = app.query_one(GpuPanel)
                return sum(len(h["util_gpu"]) for h in panel._history.values()) // GPUS

            p0 = kept()
            c0, w0 = time.process_time(), time.perf_counter()
            await pilot.pause(PANEL_SECONDS)
            cpu = time.process_time() - c0
            wall = time.perf_counter() - w0
            polls = kept() - p0
        await src.close()
        return cpu / wall, polls, cpu

    base, _, base_cpu = asyncio.run(measure(False))
    with_panel, polls, cpu = asyncio.run(measure(True))
    per_poll = (cpu - base_cpu) / max(polls, 1) * 1000.0
    return [
        f"headless app without the panel: {base * 100:.1f}% of one core",
        f"with the GPU panel at 1 s ({GPUS} GPUs): {with_panel * 100:.1f}% of one core "
        f"(+{(with_panel - base) * 100:.1f} points over the same app without it; "
        f"{polls} polls in {PANEL_SECONDS:.0f} s, {per_poll:.1f} ms CPU per poll incl. render)",
    ]


def main() -> list[str]:
    with tempfile.TemporaryDirectory() as d:
        _setup(Path(d))
        return _poll_cost() + _panel_cpu()


if __name__ == "__main__":
    for line in main():
        print(line)
