"""NvmlSource against nvidia-ml-py loading the fake libnvidia-ml.so.1 (tests/backends/nvml.py)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cockpit.models import Availability
from cockpit.sources.base import ErrorKind, SourceError
from cockpit.sources.nvml import NvmlSource, map_pid_to_pod
from tests.backends.nvml import DRIVER_NOT_LOADED, FakeNvml


async def test_healthy_node_defaults(fake_nvml: FakeNvml) -> None:
    src = NvmlSource(watch_xid=False)
    try:
        snap = await src.snapshot()
    finally:
        await src.close()
    assert snap.source == "nvml"
    assert len(snap.gpus) == 8
    g = snap.gpus[0]
    assert g.name == "NVIDIA H100 80GB HBM3"
    assert g.pci_bus_id == "00000000:18:00.0"
    assert g.pci_key == "0000:18:00"
    assert g.uuid and g.uuid.startswith("GPU-")
    assert g.mem_total.value == pytest.approx(81559.0)
    assert g.mem_reserved.value == pytest.approx(579.0)
    assert g.mem_total.value == pytest.approx(
        g.mem_used.value + g.mem_free.value + g.mem_reserved.value
    )
    assert g.power_limit.value == pytest.approx(700.0)
    assert g.power_limit.unit == "W"
    assert g.sm_clock_max.value == 1980
    assert g.clock_reasons.value == 1
    assert g.pcie_gen.value == 5 and g.pcie_width_max.value == 16
    assert g.nvlink.links.value == 18 and g.nvlink.active.value == 18
    assert g.nvlink.crc_flit_errors.value == 0
    assert g.mig_mode.value == 0
    assert g.temp_mem.value == 40
    assert g.ecc_uncorrected_volatile.value == 0
    # H100 has no page retirement (row remapping replaced it): N/A, never 0.
    assert g.retired_dbe.status is Availability.UNSUPPORTED
    assert g.retired_dbe.value is None
    assert g.processes == []
    assert not g.lost
    assert snap.driver_version == "550.90.07"


async def test_values_and_processes(fake_nvml: FakeNvml, tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    uid = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
    (proc / "4242").mkdir(parents=True)
    (proc / "4242" / "cgroup").write_text(
        "0::/kubepods.slice/kubepods-burstable.slice/"
        f"kubepods-burstable-pod{uid.replace('-', '_')}.slice/cri-containerd-{'ab' * 32}.scope\n"
    )
    (proc / "4242" / "comm").write_text("python3\n")
    (proc / "77").mkdir()
    (proc / "77" / "cgroup").write_text("0::/system.slice/sshd.service\n")
    fake_nvml.update(
        {
            "gpu2.util_gpu": 97,
            "gpu2.mem_used": 70000 * 1024 * 1024,
            "gpu2.power_mw": 695000,
            "gpu2.clock_reasons": 0x4,
            "gpu2.procs": f"4242:{60000 * 1024 * 1024},77:1048576,9999:2097152",
            "gpu2.ecc_corr_agg": 12,
            "gpu2.remap_pending": 1,
            "gpu2.nvlink3.state": 0,
            "gpu2.nvlink5.err2": 17,
            "gpu2.pcie_width": 8,
        }
    )
    src = NvmlSource(watch_xid=False, proc_root=proc)
    try:
        g = (await src.snapshot()).gpus[2]
    finally:
        await src.close()
    assert g.util_gpu.value == 97
    assert g.mem_used.value == pytest.approx(70000)
    assert g.power_draw.value == pytest.approx(695.0)
    assert g.clock_reasons.value == 4
    assert g.ecc_corrected_aggregate.value == 12
    assert g.remap_pending.value == 1
    assert g.nvlink.active.value == 17 and g.nvlink.inactive_links == [3]
    assert g.nvlink.crc_flit_errors.value == 17
    assert g.pcie_width.value == 8
    assert g.processes is not None
    by_pid = {p.pid: p for p in g.processes}
    assert by_pid[4242].pod_uid == uid
    assert by_pid[4242].container_id == "ab" * 32
    assert by_pid[4242].name == "python3"
    assert by_pid[4242].used_memory.value == pytest.approx(60000)
    assert by_pid[77].pod_uid is None and by_pid[77].pod_note == "not in a Kubernetes pod"
    assert by_pid[9999].pod_note and by_pid[9999].pod_note.startswith("cannot map: not on the node")
    assert g.processes_note and "not on the node" in g.processes_note


async def test_not_supported_is_na_never_zero(fake_nvml: FakeNvml) -> None:
    fake_nvml.not_supported("nvmlDeviceGetPowerUsage", gpu=1)
    fake_nvml.not_supported("nvmlDeviceGetFieldValues")
    fake_nvml.not_supported("nvmlDeviceGetNvLinkState")
    src = NvmlSource(watch_xid=False)
    try:
        snap = await src.snapshot()
    finally:
        await src.close()
    g1 = snap.gpus[1]
    assert g1.power_draw.status is Availability.UNSUPPORTED
    assert g1.power_draw.value is None
    assert "not supported" in (g1.power_draw.reason or "")
    assert snap.gpus[0].power_draw.ok
    for g in snap.gpus:
        assert g.temp_mem.status is Availability.UNSUPPORTED
        assert g.nvlink.links.status is Availability.UNSUPPORTED
        assert g.nvlink.crc_flit_errors.value is None


async def test_gpu_lost_mid_run_others_keep_updating(fake_nvml: FakeNvml) -> None:
    src = NvmlSource(watch_xid=False)
    try:
        first = await src.snapshot()
        assert not any(g.lost for g in first.gpus)
        uuid3 = first.gpus[3].uuid
        fake_nvml.lose_gpu(3)
        fake_nvml.set(gpu0__util_gpu=55)
        second = await src.snapshot()
        lost = second.gpus[3]
        assert lost.lost
        assert "GPU is lost" in (lost.lost_reason or "")
        assert lost.uuid == uuid3  # identity kept from before the loss
        assert lost.util_gpu.value is None and lost.util_gpu.status is Availability.UNKNOWN
        assert second.gpus[0].util_gpu.value == 55
        assert [g.index for g in second.gpus if g.lost] == [3]
        # The GPU comes back (after a reset): next poll reads it again.
        fake_nvml.unset("gpu3.err")
        third = await src.snapshot()
        assert not third.gpus[3].lost and third.gpus[3].util_gpu.ok
    finally:
        await src.close()


async def test_gpu_lost_in_the_middle_of_its_own_read(fake_nvml: FakeNvml) -> None:
    # The first calls succeed, then the device stops answering part-way through.
    fake_nvml.set(**{"gpu5.fn.nvmlDeviceGetRemappedRows": 15})
    src = NvmlSource(watch_xid=False)
    try:
        snap = await src.snapshot()
    finally:
        await src.close()
    g = snap.gpus[5]
    assert g.lost
    # Readings taken before the loss are not shown either.
    assert g.util_gpu.value is None and g.power_draw.value is None
    assert not snap.gpus[4].lost and not snap.gpus[6].lost


async def test_driver_not_loaded_is_a_classified_error(fake_nvml: FakeNvml) -> None:
    fake_nvml.set(init=DRIVER_NOT_LOADED)
    src = NvmlSource(watch_xid=False)
    with pytest.raises(SourceError) as err:
        await src.snapshot()
    assert err.value.kind is ErrorKind.UNAVAILABLE
    assert "driver not loaded" in err.value.failure.message.lower()
    assert "DCGM" in err.value.failure.hint
    # Not fatal: once the driver is back, the same source works.
    fake_nvml.unset("init")
    try:
        snap = await src.snapshot()
        assert len(snap.gpus) == 8
    finally:
        await src.close()


def test_library_missing_subprocess(fake_nvml: FakeNvml, tmp_path: Path) -> None:
    code = (
        "import asyncio, json\n"
        "from cockpit.sources.nvml import NvmlSource\n"
        "from cockpit.sources.base import SourceError\n"
        "async def main():\n"
        "    try:\n"
        "        await NvmlSource(watch_xid=False).snapshot()\n"
        "    except SourceError as e:\n"
        "        print(json.dumps(e.failure.model_dump(mode='json')))\n"
        "asyncio.run(main())\n"
    )
    env = fake_nvml.env()
    env["LD_LIBRARY_PATH"] = str(tmp_path / "empty")
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    failure = json.loads(out.stdout.strip().splitlines()[-1])
    assert failure["kind"] == "unavailable"
    assert "libnvidia-ml.so.1 not found" in failure["message"]


def test_subprocess_with_ld_library_path(fake_nvml: FakeNvml) -> None:
    fake_nvml.set(count=2, gpu1__name="NVIDIA H200")
    code = (
        "import asyncio\n"
        "from cockpit.sources.nvml import NvmlSource\n"
        "async def main():\n"
        "    s = NvmlSource(watch_xid=False)\n"
        "    snap = await s.snapshot()\n"
        "    await s.close()\n"
        "    print(snap.model_dump_json())\n"
        "asyncio.run(main())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=fake_nvml.env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    snap = json.loads(out.stdout)
    assert [g["name"] for g in snap["gpus"]] == ["NVIDIA H100 80GB HBM3", "NVIDIA H200"]


async def test_xid_events_through_the_event_api(fake_nvml: FakeNvml) -> None:
    fake_nvml.add_xid(2, 79)
    src = NvmlSource(watch_xid=True)
    try:
        await src.snapshot()
        events = []
        deadline = time.monotonic() + 5
        while not events and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            events = await src.xid_events()
        assert [(e.gpu_index, e.xid) for e in events] == [(2, 79)]
        assert events[0].pci_bus_id == "00000000:3A:00.0"
        # A second event scripted while running arrives too, once.
        fake_nvml.add_xid(0, 94)
        more = []
        deadline = time.monotonic() + 5
        while not more and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            more = await src.xid_events()
        assert [(e.gpu_index, e.xid) for e in more] == [(0, 94)]
        await asyncio.sleep(0.3)
        assert await src.xid_events() == []
    finally:
        await src.close()


async def test_xid_queue_is_bounded(fake_nvml: FakeNvml) -> None:
    fake_nvml.set(events=",".join(f"1:8:{x}" for x in range(13, 23)))
    src = NvmlSource(watch_xid=True, xid_queue_size=4)
    try:
        await src.snapshot()
        deadline = time.monotonic() + 5
        while src.dropped_xid_events < 6 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        events = await src.xid_events()
    finally:
        await src.close()
    assert [e.xid for e in events] == [19, 20, 21, 22]
    assert src.dropped_xid_events == 6


def test_pid_mapping_without_access(tmp_path: Path) -> None:
    (tmp_path / "12").mkdir()
    cg = tmp_path / "12" / "cgroup"
    cg.write_text(
        "12:devices:/kubepods/burstable/pod0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0/" + "c" * 64
    )
    _comm, uid, cid, note = map_pid_to_pod(12, tmp_path)
    assert uid == "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0" and cid == "c" * 64 and note is None
    assert map_pid_to_pod(13, tmp_path)[3] == "cannot map: not on the node (PID not visible here)"


async def test_missing_function_falls_back_and_is_logged_once(
    fake_nvml: FakeNvml, caplog: pytest.LogCaptureFixture
) -> None:
    # FUNCTION_NOT_FOUND (13) is what pynvml raises for a symbol an old driver lacks.
    fake_nvml.set(**{"fn.nvmlDeviceGetMemoryInfo_v2": 13, "fn.nvmlDeviceGetMigMode": 13})
    import cockpit.sources.nvml as nvml_mod

    nvml_mod._missing_logged.clear()
    src = NvmlSource(watch_xid=False)
    try:
        with caplog.at_level("WARNING", logger="cockpit.sources.nvml"):
            snap = await src.snapshot()
            await src.snapshot()
    finally:
        await src.close()
    g = snap.gpus[0]
    assert g.mem_total.value == pytest.approx(81559.0)  # from the v1 call
    assert g.mem_reserved.status is Availability.UNSUPPORTED
    assert g.mig_mode.status is Availability.UNSUPPORTED
    assert "not in this driver" in (g.mig_mode.reason or "")
    logged = [r.getMessage() for r in caplog.records if "missing" in r.getMessage()]
    assert sorted(logged) == sorted(
        [
            "NVML function nvmlDeviceGetMemoryInfo is missing from this driver; shown as N/A",
            "NVML function nvmlDeviceGetMigMode is missing from this driver; shown as N/A",
        ]
    )
    assert any("nvmlDeviceGetMigMode" in w for w in snap.warnings)


async def test_hung_driver_times_out_without_blocking(fake_nvml: FakeNvml) -> None:
    fake_nvml.set(count=2, delay_ms=200)
    src = NvmlSource(watch_xid=False, call_timeout_s=0.3)
    try:
        t0 = time.monotonic()
        with pytest.raises(SourceError) as err:
            await src.snapshot()
        assert err.value.kind is ErrorKind.TIMEOUT
        assert time.monotonic() - t0 < 1.0
        # The stuck poll is still inside the driver: no second one is piled on it.
        with pytest.raises(SourceError) as again:
            await src.snapshot()
        assert "previous NVML poll" in again.value.failure.message
        fake_nvml.unset("delay_ms")
        deadline = time.monotonic() + 30
        while True:
            try:
                snap = await src.snapshot()
                break
            except SourceError:
                assert time.monotonic() < deadline
                await asyncio.sleep(0.2)
        assert len(snap.gpus) == 2
    finally:
        await src.close()
