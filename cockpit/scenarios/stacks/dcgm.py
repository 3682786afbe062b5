"""dcgm-exporter series for GPUs (``shared/reference/metrics_kb.md`` §1).

Labels on every series: ``gpu`` (NVML index), ``UUID``, ``pci_bus_id``, ``device``
(``nvidiaN``), ``modelName``, ``Hostname`` (renamed ``hostname`` by dcgm-exporter PR #655,
May 2026 — ``hostname_label`` chooses), ``DCGM_FI_DRIVER_VERSION``, and with
``--kubernetes`` the GPU-consuming ``pod``/``namespace``/``container``. Target labels
``job``/``instance`` name the exporter pod. Units: clocks MHz, temperatures °C, power W,
memory MiB, energy mJ, violation counters ns, ``DCGM_FI_DEV_CLOCKS_EVENT_REASONS`` the
NVML bitmask (``shared/reference/clock_reasons.json``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cockpit.scenarios.metricset import MetricSet
from cockpit.scenarios.signals import Signal, const
from cockpit.scenarios.topology import Gpu, Node, Pod

SW_POWER_CAP = 0x4
HW_SLOWDOWN = 0x8
SW_THERMAL = 0x20
HW_THERMAL = 0x40
FB_TOTAL_MIB = {"NVIDIA H100 80GB HBM3": 81559.0, "NVIDIA A100-SXM4-80GB": 81920.0}


@dataclass
class GpuSignals:
    """One GPU over time.

    Attributes:
        util: ``DCGM_FI_DEV_GPU_UTIL`` (%).
        temp: ``DCGM_FI_DEV_GPU_TEMP`` (°C).
        mem_temp: ``DCGM_FI_DEV_MEMORY_TEMP`` (°C).
        power: ``DCGM_FI_DEV_POWER_USAGE`` (W).
        sm_clock: ``DCGM_FI_DEV_SM_CLOCK`` (MHz).
        mem_clock: ``DCGM_FI_DEV_MEM_CLOCK`` (MHz).
        clock_reasons: ``DCGM_FI_DEV_CLOCKS_EVENT_REASONS`` bitmask.
        fb_used: ``DCGM_FI_DEV_FB_USED`` (MiB).
        thermal_violation: Fraction of time thermally throttled (counter rate ÷ 1e9 ns).
        power_violation: Fraction of time power throttled.
        sm_active, tensor_active, dram_active: profiling ratios (0–1).
        xid: ``DCGM_FI_DEV_XID_ERRORS`` (last Xid, 0 = none).
    """

    util: Signal
    temp: Signal
    mem_temp: Signal
    power: Signal
    sm_clock: Signal
    mem_clock: Signal
    clock_reasons: Signal
    fb_used: Signal
    thermal_violation: Signal
    power_violation: Signal
    gr_active: Signal
    tensor_active: Signal
    dram_active: Signal
    xid: Signal = field(default_factory=list)


def gpu_labels(
    gpu: Gpu, pod: Pod | None, *, driver: str, hostname_label: str = "Hostname"
) -> dict[str, str]:
    """The label set dcgm-exporter puts on ``gpu`` (with the Kubernetes mapping)."""
    lab = {
        "gpu": str(gpu.index),
        "UUID": gpu.uuid,
        "pci_bus_id": gpu.pci_bus_id,
        "device": f"nvidia{gpu.index}",
        "modelName": gpu.model_name,
        hostname_label: gpu.node,
        "DCGM_FI_DRIVER_VERSION": driver,
    }
    if pod is not None:
        lab.update({"pod": pod.name, "namespace": pod.namespace, "container": pod.container})
    return lab


def emit(
    ms: MetricSet,
    node: Node,
    gpu: Gpu,
    pod: Pod | None,
    sig: GpuSignals,
    *,
    exporter_ip: str,
    hostname_label: str = "Hostname",
) -> None:
    """Every dcgm-exporter series of one GPU."""
    lab = {
        **gpu_labels(gpu, pod, driver=node.driver_version, hostname_label=hostname_label),
        "job": "dcgm-exporter",
        "instance": f"{exporter_ip}:9400",
    }
    total = FB_TOTAL_MIB.get(gpu.model_name, 81559.0)
    reserved = const(ms.axis, 511.0)
    free = [max(0.0, total - u - r) for u, r in zip(sig.fb_used, reserved, strict=True)]
    g = ms.gauge
    g("DCGM_FI_DEV_GPU_UTIL", lab, sig.util, "GPU utilization (in %).")
    g("DCGM_FI_DEV_MEM_COPY_UTIL", lab, [u * 0.45 for u in sig.util], "Memory utilization (in %).")
    g("DCGM_FI_DEV_GPU_TEMP", lab, sig.temp, "GPU temperature (in C).")
    g("DCGM_FI_DEV_MEMORY_TEMP", lab, sig.mem_temp, "Memory temperature (in C).")
    g("DCGM_FI_DEV_POWER_USAGE", lab, sig.power, "Power draw (in W).")
    g("DCGM_FI_DEV_SM_CLOCK", lab, sig.sm_clock, "SM clock frequency (in MHz).")
    g("DCGM_FI_DEV_MEM_CLOCK", lab, sig.mem_clock, "Memory clock frequency (in MHz).")
    g(
        "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
        lab,
        sig.clock_reasons,
        "Current clock event reasons (bitmask).",
    )
    g("DCGM_FI_DEV_FB_USED", lab, sig.fb_used, "Framebuffer memory used (in MiB).")
    g("DCGM_FI_DEV_FB_FREE", lab, free, "Framebuffer memory free (in MiB).")
    g("DCGM_FI_DEV_FB_RESERVED", lab, reserved, "Framebuffer memory reserved (in MiB).")
    g(
        "DCGM_FI_DEV_XID_ERRORS",
        lab,
        sig.xid or const(ms.axis, 0.0),
        "Value of the last XID error encountered.",
    )
    g(
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
        lab,
        sig.gr_active,
        "Ratio of time the graphics engine is active.",
    )
    g(
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
        lab,
        sig.tensor_active,
        "Ratio of cycles the tensor (HMMA) pipe is active.",
    )
    g(
        "DCGM_FI_PROF_DRAM_ACTIVE",
        lab,
        sig.dram_active,
        "Ratio of cycles the device memory interface is active sending or receiving data.",
    )
    ms.cumulative(
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
        lab,
        [p * 1000 for p in sig.power],
        start=8.1e11,
        help_="Total energy consumption since boot (in mJ).",
    )
    ms.cumulative(
        "DCGM_FI_DEV_THERMAL_VIOLATION",
        lab,
        [v * 1e9 for v in sig.thermal_violation],
        help_="Throttling duration due to thermal constraints (in ns).",
    )
    ms.cumulative(
        "DCGM_FI_DEV_POWER_VIOLATION",
        lab,
        [v * 1e9 for v in sig.power_violation],
        help_="Throttling duration due to power constraints (in ns).",
    )
    ms.cumulative(
        "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
        lab,
        const(ms.axis, 0.0),
        help_="Total number of PCIe retries.",
    )
