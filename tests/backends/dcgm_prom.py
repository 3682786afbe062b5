"""A real Prometheus holding dcgm-exporter series, backfilled with promtool.

Two nodes, one per spelling of the node label (dcgm-exporter PR #655 renamed ``Hostname``
to ``hostname``):

- ``gpu-node-a`` (``Hostname``): 8 × H100 with only the default-counters.csv fields; GPU 5
  is thermally throttled (low SM clock and power, high temperature).
- ``gpu-node-b`` (``hostname``): 4 × H100 with the off-by-default fields enabled (clock-event
  reasons, ECC DBE, NVLink errors, violations, Xid counter, retired pages, PCIe link);
  GPU 0 is mapped to pod ``llm/vllm-0``; GPU 2 reports HW thermal slowdown (0x40).

Samples every 15 s for 10 minutes ending at :data:`DCGM_EVAL_AT`; always query with that
evaluation time (an instant query without ``time=`` would be evaluated at wall-clock now).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

DCGM_EVAL_AT = datetime(2026, 11, 29, 21, 0, tzinfo=UTC)
STEP_S = 15
POINTS = 41

DEFAULT_FIELDS = {
    "DCGM_FI_DEV_GPU_UTIL": 96.0,
    "DCGM_FI_DEV_MEM_COPY_UTIL": 41.0,
    "DCGM_FI_DEV_FB_USED": 71234.0,
    "DCGM_FI_DEV_FB_FREE": 9746.0,
    "DCGM_FI_DEV_FB_RESERVED": 579.0,
    "DCGM_FI_DEV_GPU_TEMP": 63.0,
    "DCGM_FI_DEV_MEMORY_TEMP": 71.0,
    "DCGM_FI_DEV_POWER_USAGE": 640.0,
    "DCGM_FI_DEV_SM_CLOCK": 1980.0,
    "DCGM_FI_DEV_MEM_CLOCK": 2619.0,
    "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": 0.0,
    "DCGM_FI_DEV_XID_ERRORS": 0.0,
    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS": 0.0,
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": 0.0,
    "DCGM_FI_DEV_ROW_REMAP_FAILURE": 0.0,
}
EXTRA_FIELDS = {
    "DCGM_FI_DEV_CLOCKS_EVENT_REASONS": 0.0,
    "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL": 0.0,
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": 0.0,
    "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL": 3.0,
    "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL": 0.0,
    "DCGM_FI_DEV_RETIRED_SBE": 0.0,
    "DCGM_FI_DEV_RETIRED_DBE": 0.0,
    "DCGM_FI_DEV_RETIRED_PENDING": 0.0,
    "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL": 0.0,
    "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL": 0.0,
    "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL": 0.0,
    "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL": 0.0,
    "DCGM_FI_DEV_POWER_VIOLATION": 0.0,
    "DCGM_FI_DEV_THERMAL_VIOLATION": 0.0,
    "DCGM_FI_DEV_PCIE_LINK_GEN": 5.0,
    "DCGM_FI_DEV_PCIE_LINK_WIDTH": 16.0,
    "DCGM_FI_DEV_PCIE_MAX_LINK_GEN": 5.0,
    "DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH": 16.0,
    "DCGM_FI_DEV_MAX_SM_CLOCK": 1980.0,
    "DCGM_FI_DEV_POWER_MGMT_LIMIT": 700.0,
}
BUS = ["18", "2A", "3A", "5D", "9A", "AB", "BA", "DB"]


def _labels(node_label: str, node: str, gpu: int, extra: dict[str, str]) -> str:
    labels = {
        "gpu": str(gpu),
        "UUID": f"GPU-{node[-1]}{gpu:07x}-1111-4222-8333-{gpu:012x}",
        "pci_bus_id": f"00000000:{BUS[gpu]}:00.0",
        "device": f"nvidia{gpu}",
        "modelName": "NVIDIA H100 80GB HBM3",
        node_label: node,
        "DCGM_FI_DRIVER_VERSION": "550.90.07",
        **extra,
    }
    return ",".join(f'{k}="{v}"' for k, v in labels.items())


def openmetrics() -> str:
    """The backfill file (seconds timestamps, series in time order, ``# EOF``)."""
    end = int(DCGM_EVAL_AT.timestamp())
    times = [end - STEP_S * (POINTS - 1 - i) for i in range(POINTS)]
    fams: dict[str, list[str]] = {}

    def add(name: str, lab: str, value: float) -> None:
        lines = fams.setdefault(name, [])
        for t in times:
            lines.append(f"{name}{{{lab}}} {value} {t}")

    for gpu in range(8):
        lab = _labels("Hostname", "gpu-node-a", gpu, {})
        for name, v in DEFAULT_FIELDS.items():
            if gpu == 5:
                v = {
                    "DCGM_FI_DEV_SM_CLOCK": 990.0,
                    "DCGM_FI_DEV_POWER_USAGE": 420.0,
                    "DCGM_FI_DEV_GPU_TEMP": 89.0,
                }.get(name, v)
            add(name, lab, v)
    for gpu in range(4):
        extra = {"namespace": "llm", "pod": "vllm-0", "container": "vllm"} if gpu == 0 else {}
        lab = _labels("hostname", "gpu-node-b", gpu, extra)
        for name, v in {**DEFAULT_FIELDS, **EXTRA_FIELDS}.items():
            if gpu == 2 and name == "DCGM_FI_DEV_CLOCKS_EVENT_REASONS":
                v = 64.0
            if gpu == 3 and name == "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL":
                v = 2.0
            add(name, lab, v)
        add("DCGM_EXP_XID_ERRORS_COUNT", lab + ',xid="0",window_size_in_ms="300000"', 0.0)
    out: list[str] = []
    for name, lines in fams.items():
        # Declared as gauges: an OpenMetrics counter family would force a ``_total`` suffix
        # that dcgm-exporter's own names (DCGM_FI_DEV_PCIE_REPLAY_COUNTER) do not have.
        out.append(f"# TYPE {name} gauge")
        out.extend(lines)
    out.append("# EOF")
    return "\n".join(out) + "\n"


@dataclass
class DcgmProm:
    """A running Prometheus with the DCGM history."""

    url: str
    at: datetime


@pytest.fixture(scope="session")
def dcgm_prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DcgmProm]:
    """Backfill the DCGM history and serve it from a real Prometheus (session-scoped)."""
    from om_prometheus import serve_openmetrics

    with serve_openmetrics(openmetrics(), tmp_path_factory.mktemp("dcgm-prom")) as url:
        yield DcgmProm(url=url, at=DCGM_EVAL_AT)
