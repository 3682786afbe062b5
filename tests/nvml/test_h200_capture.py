"""A real H200 read through ``NvmlSource`` (``tests/data/nvml_h200``), and the fake
``libnvidia-ml.so.1`` scripted from the raw NVML answers of the same board: cockpit must
read both the same way, so the fake stays true to real hardware."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cockpit.analysis.gpu_health import why_gpu
from cockpit.models.gpu import GpuNodeSnapshot
from cockpit.sources.nvml import NvmlSource
from tests.backends.nvml import FakeNvml

DATA = Path(__file__).parent.parent / "data" / "nvml_h200"

# Readings that do not move between the cockpit capture and the probe taken after it.
STATIC = (
    "mem_total",
    "power_limit",
    "sm_clock_max",
    "mem_clock_max",
    "ecc_mode",
    "pcie_gen",
    "pcie_gen_max",
    "pcie_width",
    "pcie_width_max",
    "mig_mode",
    "ecc_uncorrected_volatile",
    "remapped_uncorrectable",
    "remap_pending",
    "remap_failure",
)


def _load(name: str) -> Any:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def _value(raw: dict[str, Any], key: str) -> Any:
    return raw[key]["value"]


def script_from_probe(raw: dict[str, Any]) -> dict[str, Any]:
    """The fake library's script (``tests/backends/nvml.py`` keys) for the probed board:
    every value it answered, and NOT_SUPPORTED where it refused."""
    g = raw["gpus"][0]
    pci = _value(g, "pci")
    mem = _value(g, "mem_v2")
    util = _value(g, "util")
    ecc_now, ecc_pending = _value(g, "ecc_mode")
    corr, unc, pending, failure = _value(g, "remapped_rows")
    mig_now, mig_pending = _value(g, "mig_mode")
    temp_mem, replays = (f["ull"] for f in _value(g, "fields_82_94"))
    script: dict[str, Any] = {
        "count": _value(raw, "count"),
        "driver_version": _value(raw, "driver"),
        "gpu0.name": _value(g, "name"),
        "gpu0.uuid": _value(g, "uuid"),
        "gpu0.domain": pci["domain"],
        "gpu0.bus": pci["bus"],
        "gpu0.pci_device": pci["device"],
        "gpu0.pci_device_id": pci["pciDeviceId"],
        "gpu0.pci_subsystem_id": pci["pciSubSystemId"],
        "gpu0.util_gpu": util["gpu"],
        "gpu0.util_mem": util["memory"],
        "gpu0.mem_total": mem["total"],
        "gpu0.mem_reserved": mem["reserved"],
        "gpu0.mem_used": mem["used"],
        "gpu0.temp_gpu": _value(g, "temp_gpu"),
        "gpu0.temp_mem": temp_mem,
        "gpu0.pcie_replay": replays,
        "gpu0.power_mw": _value(g, "power_mw"),
        "gpu0.power_limit_mw": _value(g, "power_limit_mw"),
        "gpu0.clock_sm": _value(g, "clock_sm"),
        "gpu0.clock_sm_max": _value(g, "clock_sm_max"),
        "gpu0.clock_mem": _value(g, "clock_mem"),
        "gpu0.clock_mem_max": _value(g, "clock_mem_max"),
        "gpu0.clock_reasons": _value(g, "clock_events"),
        "gpu0.pcie_gen": _value(g, "pcie_gen"),
        "gpu0.pcie_gen_max": _value(g, "pcie_gen_max"),
        "gpu0.pcie_width": _value(g, "pcie_width"),
        "gpu0.pcie_width_max": _value(g, "pcie_width_max"),
        "gpu0.ecc_mode": ecc_now,
        "gpu0.ecc_mode_pending": ecc_pending,
        "gpu0.ecc_uncorr_vol": _value(g, "ecc_uncorrected_volatile"),
        "gpu0.ecc_corr_vol": _value(g, "ecc_corrected_volatile"),
        "gpu0.remap_corr": corr,
        "gpu0.remap_unc": unc,
        "gpu0.remap_pending": pending,
        "gpu0.remap_failure": failure,
        "gpu0.mig_mode": mig_now,
        "gpu0.mig_pending": mig_pending,
    }
    # The refusals, as the board gave them.
    assert g["retired_pages_dbe"] == {"error": 3, "text": "Not Supported"}
    script["gpu0.retired_supported"] = 0
    assert g["nvlink0_state"]["error"] == 3
    script["gpu0.nvlink_count"] = 0
    return script


@pytest.mark.parametrize("moment", ["idle", "busy"])
def test_real_h200_snapshot_reads_as_cockpit_models(moment: str) -> None:
    doc = _load(f"cockpit_{moment}.json")
    snap = GpuNodeSnapshot.model_validate(doc["snapshot"])
    (gpu,) = snap.gpus
    assert gpu.name == "NVIDIA H200" and not gpu.lost
    assert gpu.mem_total.value == pytest.approx(143771.0)
    # Readings the board refuses are unsupported (N/A), never 0.
    assert gpu.retired_dbe.value is None and gpu.retired_dbe.status.value == "unsupported"
    # The verdicts cockpit printed then are the ones its analysis gives now.
    fresh = [why_gpu(g, snap.gpus, lang="en") for g in snap.gpus]
    # (captured before verdicts listed the health checks not read: the board read them all)
    assert [v.model_dump(mode="json", exclude={"unread"}) for v in fresh] == doc["verdicts"]
    assert all(v.unread == [] and not v.partial for v in fresh)


def test_full_load_power_cap_is_not_a_fault() -> None:
    doc = _load("cockpit_busy.json")
    snap = GpuNodeSnapshot.model_validate(doc["snapshot"])
    (gpu,) = snap.gpus
    assert gpu.util_gpu.value == 100.0
    assert gpu.clock_reasons.value == 0x4  # SW power cap, at 691 of 700 W
    assert gpu.power_draw.value == pytest.approx(691.7)
    verdict = why_gpu(gpu, snap.gpus, lang="en")
    assert verdict.level.value == "ok" and verdict.findings == []
    (proc,) = gpu.processes
    assert proc.name == "python3" and proc.used_memory.value == pytest.approx(25706.0)


@pytest.mark.parametrize("moment", ["idle", "busy"])
async def test_fake_scripted_from_the_board_reads_like_the_board(
    fake_nvml: FakeNvml, moment: str
) -> None:
    raw = _load(f"raw_{moment}.json")
    real = _load(f"cockpit_{moment}.json")["snapshot"]["gpus"][0]
    fake_nvml.values.clear()
    fake_nvml.update(script_from_probe(raw))
    src = NvmlSource(watch_xid=False)
    try:
        snap = await src.snapshot()
    finally:
        await src.close()
    (gpu,) = snap.gpus
    faked = gpu.model_dump(mode="json")
    for key, value in real.items():
        if isinstance(value, dict) and "status" in value:
            # Which readings the board answers, refuses or cannot tell: identical.
            assert faked[key]["status"] == value["status"], key
            assert faked[key]["unit"] == value["unit"], key
    for key in STATIC:
        assert faked[key]["value"] == pytest.approx(real[key]["value"]), key
    assert faked["nvlink"] == real["nvlink"]
    for key in ("name", "uuid", "pci_bus_id", "lost"):
        assert faked[key] == real[key], key
