"""Per-GPU state as one consistent snapshot, whatever the source (NVML on the node, or
dcgm-exporter series in Prometheus on the bastion).

Every scalar is a :class:`~cockpit.models.Reading`: known, unknown (with the reason) or
unsupported (NVML ``NOT_SUPPORTED``, or a field the exporter does not export). A value
that could not be read is never a 0.

Units: memory in MiB (DCGM ``FB_*`` are MiB; NVML bytes are converted), power in W
(NVML reports mW), clocks in MHz, temperatures in °C, utilisation in %.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, Field

from cockpit.models import Reading
from cockpit.models.messages import Msg


class GpuSourceKind(StrEnum):
    """Where a snapshot came from."""

    NVML = "nvml"
    DCGM = "dcgm"


_NOT_READ = Reading.unknown("not read")

NOT_EXPORTED = "not exported by dcgm-exporter"
"""The reason every field the node's dcgm-exporter does not export carries (off in its
counters CSV: the GPU may well support it, cockpit only cannot see it)."""


def not_exported(metric: str, unit: str = "") -> Reading:
    """An ``unsupported`` reading for ``metric`` that the exporter does not export."""
    return Reading.unsupported(f"N/A: {metric} {NOT_EXPORTED}", unit=unit, query=metric)


def unseen(r: Reading) -> bool:
    """Whether ``r`` was not read: unknown, or a field the exporter does not export (as
    opposed to one the GPU or driver refuses, or that does not apply)."""
    return r.status.value == "unknown" or (
        r.status.value == "unsupported" and (r.reason or "").endswith(NOT_EXPORTED)
    )


def _na() -> Reading:
    # Readings are frozen, so every unset field can share one instance (no validation
    # per field and per poll).
    return _NOT_READ


class NvLinkState(BaseModel):
    """NVLink state of one GPU, summed over its links.

    Attributes:
        links: Number of links the device reports (H100 SXM: 18).
        active: Links in the active state.
        inactive_links: Indexes of links that are not active.
        replay_errors / recovery_errors / crc_flit_errors / crc_data_errors: Error counter
            totals over all links (``nvmlDeviceGetNvLinkErrorCounter``, DL_REPLAY=0,
            DL_RECOVERY=1, DL_CRC_FLIT=2, DL_CRC_DATA=3; counts since driver load).
    """

    links: Reading = Field(default_factory=_na)
    active: Reading = Field(default_factory=_na)
    inactive_links: list[int] = Field(default_factory=list)
    replay_errors: Reading = Field(default_factory=_na)
    recovery_errors: Reading = Field(default_factory=_na)
    crc_flit_errors: Reading = Field(default_factory=_na)
    crc_data_errors: Reading = Field(default_factory=_na)


class GpuProcess(BaseModel):
    """A compute process on a GPU.

    Attributes:
        pid: Host PID as NVML reports it.
        used_memory: GPU memory the process uses, MiB (unknown when NVML cannot tell).
        name: ``/proc/<pid>/comm`` when readable.
        pod_uid: Kubernetes pod UID from ``/proc/<pid>/cgroup`` (kubepods slice/path).
        container_id: Container ID from the same cgroup path, when present.
        pod_note: Why the pod could not be mapped (not on the node, no access, not a pod).
    """

    pid: int
    used_memory: Reading
    name: str | None = None
    pod_uid: str | None = None
    container_id: str | None = None
    pod_note: str | None = None


class GpuSnapshot(BaseModel):
    """One GPU at one poll.

    Attributes:
        index: NVML index on the node (DCGM ``gpu`` label); not stable across nodes.
        name: Product name (``NVIDIA H100 80GB HBM3``).
        uuid: ``GPU-…`` identity (stable).
        pci_bus_id: Bus id as NVML prints it (``00000000:18:00.0``).
        lost: True when the GPU stopped answering (``GPU_IS_LOST``/``UNKNOWN``); the
            readings then keep their reason and the why-line says so.
        lost_reason: The NVML error text that marked it lost.
        mem_*: Framebuffer memory in MiB from ``nvmlDeviceGetMemoryInfo_v2``
            (total = reserved + used + free).
        clock_reasons: The clock-event reason bitmask
            (``nvmlDeviceGetCurrentClocksEventReasons``); decode with
            :func:`cockpit.analysis.clocks.decode_clock_reasons`.
        ecc_*: Volatile (since driver load) and aggregate (lifetime) ECC error counts.
        remapped_*: Row remapper counters (Ampere+); ``remap_pending`` needs a GPU reset,
            ``remap_failure`` is an RMA criterion (NVIDIA A100 memory error management).
        retired_*: Retired pages (pre-Ampere page retirement).
        mig_mode: 1 when MIG is enabled.
        processes: Compute processes, ``None`` when they could not be listed.
        processes_note: Why processes or their pods are missing.
        pod: The pod holding the GPU, ``namespace/name``, from dcgm-exporter's pod mapping
            (``--kubernetes``: ``pod``/``namespace`` labels); ``None`` when not known (NVML
            knows the processes' pod UIDs only: see ``processes``).
        pci_replays: PCIe replay counter (``NVML_FI_DEV_PCIE_REPLAY_COUNTER``).
    """

    index: int
    name: str | None = None
    uuid: str | None = None
    pci_bus_id: str | None = None
    lost: bool = False
    lost_reason: str | None = None
    util_gpu: Reading = Field(default_factory=_na)
    util_mem: Reading = Field(default_factory=_na)
    mem_total: Reading = Field(default_factory=_na)
    mem_reserved: Reading = Field(default_factory=_na)
    mem_used: Reading = Field(default_factory=_na)
    mem_free: Reading = Field(default_factory=_na)
    temp_gpu: Reading = Field(default_factory=_na)
    temp_mem: Reading = Field(default_factory=_na)
    power_draw: Reading = Field(default_factory=_na)
    power_limit: Reading = Field(default_factory=_na)
    sm_clock: Reading = Field(default_factory=_na)
    sm_clock_max: Reading = Field(default_factory=_na)
    mem_clock: Reading = Field(default_factory=_na)
    mem_clock_max: Reading = Field(default_factory=_na)
    clock_reasons: Reading = Field(default_factory=_na)
    ecc_mode: Reading = Field(default_factory=_na)
    ecc_corrected_volatile: Reading = Field(default_factory=_na)
    ecc_uncorrected_volatile: Reading = Field(default_factory=_na)
    ecc_corrected_aggregate: Reading = Field(default_factory=_na)
    ecc_uncorrected_aggregate: Reading = Field(default_factory=_na)
    remapped_correctable: Reading = Field(default_factory=_na)
    remapped_uncorrectable: Reading = Field(default_factory=_na)
    remap_pending: Reading = Field(default_factory=_na)
    remap_failure: Reading = Field(default_factory=_na)
    retired_sbe: Reading = Field(default_factory=_na)
    retired_dbe: Reading = Field(default_factory=_na)
    retired_pending: Reading = Field(default_factory=_na)
    pcie_gen: Reading = Field(default_factory=_na)
    pcie_gen_max: Reading = Field(default_factory=_na)
    pcie_width: Reading = Field(default_factory=_na)
    pcie_width_max: Reading = Field(default_factory=_na)
    pci_replays: Reading = Field(default_factory=_na)
    nvlink: NvLinkState = Field(default_factory=NvLinkState)
    mig_mode: Reading = Field(default_factory=_na)
    processes: list[GpuProcess] | None = None
    processes_note: str | None = None
    pod: str | None = None
    last_xid: Reading = Field(default_factory=_na)

    @property
    def pci_key(self) -> str | None:
        """Bus id normalised to ``dddd:bb:dd`` (lower case), the key Xid lines use."""
        return normalize_pci(self.pci_bus_id) if self.pci_bus_id else None


class XidEvent(BaseModel):
    """An Xid reported by NVML's event API (``nvmlEventTypeXidCriticalError``), the
    kernel log, or DCGM.

    Attributes:
        at: When cockpit received it (UTC).
        xid: The Xid number (NVML reports 999 when unknown).
        gpu_index / uuid / pci_bus_id: The GPU, as far as the source tells.
        event_type: NVML event type bit (0x8 for Xid).
        source: ``nvml``, ``kernel`` or ``dcgm``.
    """

    at: datetime
    xid: int
    gpu_index: int | None = None
    uuid: str | None = None
    pci_bus_id: str | None = None
    event_type: int = 8
    source: str = "nvml"


class GpuNodeSnapshot(BaseModel):
    """All GPUs of one node at one poll.

    Attributes:
        source: ``nvml`` (local) or ``dcgm`` (Prometheus).
        node: Node hostname (NVML: this host; DCGM: the ``Hostname``/``hostname`` label).
        at: Poll time (UTC).
        driver_version: Driver version when known.
        gpus: One snapshot per GPU, by index.
        warnings: Things the user must know to read the numbers (fields the exporter does
            not export, functions missing from an old driver, PID→pod mapping limits), in
            English; ``warning_msgs`` holds the ones that have a message, for
            :meth:`warnings_in`.
        unexported: DCGM field names that are not exported by this exporter's config.
        poll_ms: How long the poll took, in milliseconds.
    """

    source: GpuSourceKind
    node: str | None = None
    at: datetime
    driver_version: str | None = None
    gpus: list[GpuSnapshot] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    warning_msgs: list[Msg] = Field(default_factory=list)
    unexported: list[str] = Field(default_factory=list)
    poll_ms: float | None = None

    def warn(self, m: Msg) -> None:
        """Add a warning (its English text to :attr:`warnings`, the message beside it)."""
        self.warnings.append(m.text("en"))
        self.warning_msgs.append(m)

    def warnings_in(self, lang: str) -> list[str]:
        """:attr:`warnings` in ``lang`` (those without a message stay as they are)."""
        by_en = {m.text("en"): m for m in self.warning_msgs}
        return [by_en[w].text(lang) if w in by_en else w for w in self.warnings]


def normalize_pci(bus_id: str) -> str:
    """``00000000:18:00.0`` / ``0000:18:00.0`` / ``0000:18:00`` → ``0000:18:00``.

    Xid kernel lines print the PCI id without ``.function`` and with a 4-digit domain
    (``../shared/cases/formats.md`` A3); NVML prints an 8-digit domain.
    """
    s = bus_id.strip().lower()
    if s.startswith("pci:"):
        s = s[4:]
    if "." in s:
        s = s.rsplit(".", 1)[0]
    parts = s.split(":")
    if len(parts) == 3:
        dom, bus, dev = parts
        dom = dom[-4:].rjust(4, "0")
        return f"{dom}:{bus.rjust(2, '0')}:{dev.rjust(2, '0')}"
    if len(parts) == 2:
        return f"0000:{parts[0].rjust(2, '0')}:{parts[1].rjust(2, '0')}"
    return s
