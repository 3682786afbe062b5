"""NvmlSource teed into an evidence bundle and replayed through the same API."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from cockpit.models.gpu import GpuNodeSnapshot
from cockpit.sources.bundle import BundleMeta, BundleWriter, Recorder, open_replay
from cockpit.sources.nvml import NvmlSource
from tests.backends.nvml import FakeNvml

AT = datetime(2026, 11, 29, 21, 0, tzinfo=UTC)


async def test_record_and_replay_nvml(fake_nvml: FakeNvml, tmp_path: Path) -> None:
    fake_nvml.update({"count": 2, "gpu1.clock_reasons": 0x40})
    fake_nvml.not_supported("nvmlDeviceGetPowerUsage", gpu=0)
    path = tmp_path / "gpu.jsonl.gz"
    src = NvmlSource(watch_xid=False, node="gpu-node-a", clock=lambda: AT)
    with BundleWriter(path, BundleMeta(recorded_at=AT)) as writer:
        rec = Recorder(src, "gpu", writer)
        live = await rec.snapshot()
        await rec.xid_events()
    await src.close()
    replay = open_replay(path)
    again = await replay.source("gpu").snapshot()
    assert isinstance(again, GpuNodeSnapshot)
    assert again == live
    assert again.gpus[0].power_draw.value is None and again.gpus[0].power_draw.reason
    assert await replay.source("gpu").xid_events() == []
