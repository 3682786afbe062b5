"""DcgmSource against a real Prometheus with backfilled dcgm-exporter series
(tests/backends/dcgm_prom.py): both node-label spellings, unexported-field warnings."""

from __future__ import annotations

import pytest

from cockpit.analysis.gpu_health import Level, cohort_view, why_gpu
from cockpit.config import PrometheusSettings
from cockpit.models import Availability
from cockpit.sources.base import ErrorKind, SourceError
from cockpit.sources.dcgm import DcgmSource
from cockpit.sources.prometheus import PrometheusSource
from tests.backends.dcgm_prom import DcgmProm


@pytest.fixture
async def dcgm(dcgm_prometheus: DcgmProm):
    metrics = PrometheusSource(PrometheusSettings(url=dcgm_prometheus.url))
    yield DcgmSource(metrics, clock=lambda: dcgm_prometheus.at)
    await metrics.close()


async def test_node_with_capital_hostname_label(dcgm: DcgmSource) -> None:
    snap = await dcgm.node_snapshot("gpu-node-a")
    assert snap.source == "dcgm" and snap.node == "gpu-node-a"
    assert [g.index for g in snap.gpus] == list(range(8))
    g = snap.gpus[0]
    assert g.name == "NVIDIA H100 80GB HBM3" and g.pci_bus_id == "00000000:18:00.0"
    assert g.util_gpu.value == 96 and g.mem_used.value == 71234
    assert g.mem_total.value == pytest.approx(71234 + 9746 + 579)
    assert g.power_draw.unit == "W" and g.power_draw.value == 640
    assert snap.driver_version == "550.90.07"
    # Off-by-default fields are N/A with the reason, never 0.
    assert g.clock_reasons.status is Availability.UNSUPPORTED
    assert "not exported" in (g.clock_reasons.reason or "")
    assert g.ecc_uncorrected_volatile.value is None
    assert g.nvlink.crc_flit_errors.status is Availability.UNSUPPORTED
    (warning,) = snap.warnings
    for group in (
        "throttle violations",
        "ECC DBE",
        "retired pages",
        "NVLink errors",
        "Xid counter",
    ):
        assert group in warning
    # The last-Xid gauge is exported: the warning says where Xid events come from.
    assert "Xid events come from the last-Xid field" in warning
    (zh,) = (m.text("zh") for m in snap.warning_msgs)
    assert "退役页" in zh and "NVLink 错误" in zh and "retired pages" not in zh
    assert "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL" in snap.unexported


async def test_node_with_lowercase_hostname_label(dcgm: DcgmSource) -> None:
    snap = await dcgm.node_snapshot("gpu-node-b")
    assert len(snap.gpus) == 4
    assert snap.warnings == []
    g2 = snap.gpus[2]
    assert g2.clock_reasons.value == 64
    assert g2.nvlink.crc_flit_errors.value == 0
    assert snap.gpus[3].ecc_uncorrected_volatile.value == 2
    assert snap.gpus[0].processes_note and "llm/vllm-0" in snap.gpus[0].processes_note
    assert g2.power_limit.value == 700
    verdict = why_gpu(g2, snap.gpus)
    assert verdict.level is Level.BAD and verdict.findings[0].key == "clock.hw_thermal"
    assert why_gpu(snap.gpus[3], snap.gpus).level is Level.BAD


async def test_throttled_gpu_stands_out_in_the_cohort(dcgm: DcgmSource) -> None:
    snap = await dcgm.node_snapshot("gpu-node-a")
    view = cohort_view(snap.gpus)
    assert view.outliers == [5]
    assert why_gpu(snap.gpus[5], snap.gpus, cohort=view).level is Level.WARN


async def test_pod_gpus_and_nodes(dcgm: DcgmSource) -> None:
    snap = await dcgm.pod_snapshot("llm", "vllm-0")
    assert [g.index for g in snap.gpus] == [0] and snap.node == "gpu-node-b"
    assert await dcgm.nodes() == ["gpu-node-a", "gpu-node-b"]


async def test_unknown_node_is_not_found(dcgm: DcgmSource) -> None:
    with pytest.raises(SourceError) as err:
        await dcgm.node_snapshot("no-such-node")
    assert err.value.kind is ErrorKind.NOT_FOUND


async def test_recent_past_per_gpu_for_the_sparklines(dcgm: DcgmSource) -> None:
    """The node's last half hour, per GPU and field: the series exist for the last 10
    minutes only, so the older points are None (no data), never 0."""
    past = await dcgm.history("gpu-node-a", ("temp_gpu", "sm_clock"))
    snap = await dcgm.node_snapshot("gpu-node-a")
    assert set(past) == {g.uuid for g in snap.gpus} and len(past) == 8
    hot = next(g.uuid for g in snap.gpus if g.index == 5)
    temps = past[hot]["temp_gpu"]
    assert len(temps) == 61 and temps[-1] == 89.0
    assert temps[0] is None and all(v == 89.0 for v in temps[-20:])
    assert {v for v in past[hot]["sm_clock"] if v is not None} == {990.0}
    assert await dcgm.history("no-such-node", ("temp_gpu",)) == {}


async def test_a_gpu_is_ok_only_on_what_its_exporter_exports(dcgm: DcgmSource) -> None:
    """Default counters export no ECC or clock-event fields: a GPU with no
    finding is healthy on what was read, and its line, state and the legend say what was
    not; a node exporting them all reads plainly ok."""
    from cockpit.analysis.gpu_text import gpu_row, legend

    snap = await dcgm.node_snapshot("gpu-node-a")
    cohort = cohort_view(snap.gpus)
    verdicts = [why_gpu(g, snap.gpus, cohort=cohort, lang="en") for g in snap.gpus]
    fine = [v for v in verdicts if v.level in (Level.OK, Level.INFO)]
    assert fine
    for v in fine:
        assert v.partial and v.unread == ["ecc", "clocks"]
        assert v.line.endswith("not read: ECC, clock-event reasons")
        g = next(g for g in snap.gpus if g.index == v.index)
        assert gpu_row(g, v, cohort, "en").cells["state"].text == "OK*"
        assert gpu_row(g, v, cohort, "zh").cells["state"].text == "正常*"
    assert "OK* ok on what was read" in legend(verdicts, "en")
    zh = why_gpu(snap.gpus[fine[0].index], snap.gpus, cohort=cohort, lang="zh")
    assert zh.line.endswith("未读到：ECC、时钟事件原因")

    full = await dcgm.node_snapshot("gpu-node-b")
    ok = [why_gpu(g, full.gpus) for g in full.gpus]
    assert any(v.level is Level.OK for v in ok)
    assert all(not v.partial and v.unread == [] for v in ok)
    assert "OK*" not in legend(ok, "en")
