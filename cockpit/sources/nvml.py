"""Local GPU state through NVML (``nvidia-ml-py``, module ``pynvml``), read-only.

Every NVML call goes through :meth:`NvmlSource._call`, the one choke point that maps
``NVMLError`` codes (``../shared/reference/metrics_kb.md`` §5.5):

- ``NOT_SUPPORTED`` (3) and ``FUNCTION_NOT_FOUND`` (13, an older driver) → the reading is
  ``unsupported`` and renders as N/A, never as 0; a missing function is logged once;
- ``GPU_IS_LOST`` (15) and ``UNKNOWN`` (999) → the GPU is marked lost for this poll, the
  other GPUs keep updating; it is retried on the next poll;
- anything else → the reading is ``unknown`` with the NVML error text.

Library missing (``LIBRARY_NOT_FOUND``), driver not loaded (``DRIVER_NOT_LOADED``) and a
user-space/kernel version mismatch raise :class:`~cockpit.sources.base.SourceError`
(``UNAVAILABLE``) from :meth:`NvmlSource.snapshot`; callers fall back to DCGM.

Xid events come from NVML's event API (``nvmlEventSetCreate`` →
``nvmlDeviceRegisterEvents(nvmlEventTypeXidCriticalError)`` → ``nvmlEventSetWait_v2``) in
a background thread into a bounded queue that :meth:`NvmlSource.xid_events` drains.

Sync NVML calls run in a small executor with a timeout (a GSP RPC timeout, Xid 119, can
hang NVML calls for seconds).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ctypes
import logging
import re
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import Any

from cockpit.models import Reading, utcnow
from cockpit.models.gpu import (
    GpuNodeSnapshot,
    GpuProcess,
    GpuSnapshot,
    GpuSourceKind,
    NvLinkState,
    XidEvent,
)
from cockpit.models.messages import msg
from cockpit.sources.base import ErrorKind, SourceError

log = logging.getLogger(__name__)

SOURCE = "nvml"

# nvmlReturn_t values (nvml.h; metrics_kb.md §5.5).
NOT_SUPPORTED = 3
NO_PERMISSION = 4
INSUFFICIENT_SIZE = 7
DRIVER_NOT_LOADED = 9
TIMEOUT = 10
LIBRARY_NOT_FOUND = 12
FUNCTION_NOT_FOUND = 13
GPU_IS_LOST = 15
LIB_RM_VERSION_MISMATCH = 18
ARGUMENT_VERSION_MISMATCH = 25
UNKNOWN = 999
INVALID_ARGUMENT = 2
LOST_CODES = frozenset({GPU_IS_LOST, UNKNOWN})

EVENT_XID = 0x8
"""``nvmlEventTypeXidCriticalError``."""

FI_DEV_MEMORY_TEMP = 82
FI_DEV_PCIE_REPLAY_COUNTER = 94
MAX_NVLINKS = 36
"""``NVML_NVLINK_MAX_LINKS`` in nvidia-ml-py 13.615."""

MIB = 1024 * 1024

_missing_logged: set[str] = set()
_missing_lock = threading.Lock()

_POD_UID = re.compile(
    r"pod([0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12})"
)
_CONTAINER_ID = re.compile(r"(?:cri-containerd-|crio-|docker-|/)([0-9a-f]{64})(?:\.scope)?$")


class _Fail:
    """A failed NVML call, as a reading."""

    __slots__ = ("code", "func", "text")

    def __init__(self, code: int, func: str, text: str) -> None:
        self.code = code
        self.func = func
        self.text = text

    def reading(self, unit: str = "") -> Reading:
        if self.code == NOT_SUPPORTED:
            return Reading.unsupported(
                f"N/A: {self.func} not supported", unit=unit, query=self.func
            )
        if self.code == FUNCTION_NOT_FOUND:
            return Reading.unsupported(
                f"N/A: {self.func} not in this driver", unit=unit, query=self.func
            )
        if self.code == NO_PERMISSION:
            return Reading.unknown(f"no permission for {self.func}", unit=unit, query=self.func)
        return Reading.unknown(
            f"{self.func}: {self.text} ({self.code})", unit=unit, query=self.func
        )


_XID_AS_EVENTS = Reading.unsupported("N/A: NVML reports Xids as events (see xid_events)")

_KNOWN_CACHE: dict[tuple[float, str, str], Reading] = {}


def _known(value: float, unit: str, query: str) -> Reading:
    """A known reading, shared between polls when the value repeats.

    Readings are frozen, and most values (limits, maxima, zero counters) are the same
    every poll, so this saves building and validating ~35 models per GPU per poll.
    """
    key = (float(value), unit, query)
    r = _KNOWN_CACHE.get(key)
    if r is None:
        if len(_KNOWN_CACHE) > 8192:
            _KNOWN_CACHE.clear()
        r = _KNOWN_CACHE[key] = Reading.known(key[0], unit, query=query)
    return r


class _GpuLost(Exception):
    def __init__(self, func: str, code: int, text: str) -> None:
        super().__init__(f"{func}: {text} ({code})")
        self.code = code


def map_pid_to_pod(
    pid: int, proc_root: Path
) -> tuple[str | None, str | None, str | None, str | None]:
    """Map a host PID to ``(comm, pod_uid, container_id, note)`` through ``/proc``.

    Kubelet puts each pod in a cgroup whose path holds ``pod<UID>`` (cgroupfs driver:
    ``/kubepods/burstable/pod<uid>/<container>``; systemd driver:
    ``kubepods-burstable-pod<uid_with_underscores>.slice/cri-containerd-<id>.scope``).

    Returns:
        The process name, the pod UID, the container id and, when the pod is unknown, why
        (``cannot map: not on the node``, ``cannot map: no access``, ``not in a pod``).
    """
    base = proc_root / str(pid)
    try:
        cgroup = (base / "cgroup").read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None, None, None, "cannot map: not on the node (PID not visible here)"
    except PermissionError:
        return None, None, None, "cannot map: no access to /proc/<pid>/cgroup"
    except OSError as exc:
        return None, None, None, f"cannot map: {exc.strerror or exc}"
    comm: str | None
    try:
        comm = (base / "comm").read_text(encoding="utf-8", errors="replace").strip() or None
    except OSError:
        comm = None
    for line in cgroup.splitlines():
        path = line.split(":", 2)[-1]
        m = _POD_UID.search(path)
        if m:
            uid = m.group(1).replace("_", "-")
            c = _CONTAINER_ID.search(path)
            return comm, uid, c.group(1) if c else None, None
    return comm, None, None, "not in a Kubernetes pod"


class NvmlSource:
    """NVML-backed per-GPU snapshots of this node.

    Args:
        call_timeout_s: Upper bound on one poll of all GPUs, in seconds.
        proc_root: Where ``/proc`` is (tests point it at a prepared tree).
        xid_queue_size: Capacity of the Xid event queue; the oldest events are dropped
            beyond it (``dropped_xid_events`` counts them).
        watch_xid: Start the Xid event thread on the first snapshot.
        node: Node name to report (default: this host's name).
        clock: Returns "now" (aware UTC); the app passes its clock.
        nvml: The ``pynvml`` module (default: imported on first use).

    Raises:
        SourceError: from :meth:`snapshot` when NVML cannot be used at all (library
            missing, driver not loaded, version mismatch) or a poll timed out.
    """

    name = "nvml"

    def __init__(
        self,
        *,
        call_timeout_s: float = 5.0,
        proc_root: Path | str = "/proc",
        xid_queue_size: int = 256,
        watch_xid: bool = True,
        node: str | None = None,
        clock: Callable[[], datetime] | None = None,
        nvml: ModuleType | None = None,
    ) -> None:
        self.call_timeout_s = call_timeout_s
        self.proc_root = Path(proc_root)
        self.watch_xid = watch_xid
        self.node = node or socket.gethostname()
        self._clock = clock or utcnow
        self._nv: Any = nvml
        self._initialized = False
        self._handles: dict[int, Any] = {}
        self._addr_to_index: dict[int, int] = {}
        self._identity: dict[int, tuple[str | None, str | None, str | None]] = {}
        self._nvlinks: dict[int, int] = {}
        self._pid_cache: dict[int, tuple[str | None, str | None, str | None, str | None]] = {}
        self._driver: str | None = None
        self._warnings: list[str] = []
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self._poll_running = False
        self._xid: collections.deque[XidEvent] = collections.deque(maxlen=xid_queue_size)
        self.dropped_xid_events = 0
        self._xid_thread: threading.Thread | None = None
        self._xid_stop = threading.Event()
        self.xid_watch_error: str | None = None

    # -- the one wrapper ---------------------------------------------------------------
    def _call(self, func: str, *args: Any) -> Any:
        """Call ``pynvml.<func>(*args)``; return its value or a :class:`_Fail`.

        Raises:
            _GpuLost: on ``GPU_IS_LOST`` / ``UNKNOWN``.
        """
        nv = self._nv
        try:
            return getattr(nv, func)(*args)
        except nv.NVMLError as exc:
            code = int(getattr(exc, "value", UNKNOWN))
            text = _err_text(exc)
            if code in LOST_CODES:
                raise _GpuLost(func, code, text) from None
            if code == FUNCTION_NOT_FOUND:
                self._missing_once(func)
            return _Fail(code, func, text)

    def _missing_once(self, func: str) -> None:
        with _missing_lock:
            first = func not in _missing_logged
            _missing_logged.add(func)
        if first:
            log.warning("NVML function %s is missing from this driver; shown as N/A", func)
        note = f"{func} is missing from this driver (shown as N/A)"
        if note not in self._warnings:
            self._warnings.append(note)

    def _scalar(self, func: str, *args: Any, unit: str = "", scale: float = 1.0) -> Reading:
        r = self._call(func, *args)
        if isinstance(r, _Fail):
            return r.reading(unit)
        return _known(float(r) * scale, unit, func)

    # -- init --------------------------------------------------------------------------
    def _ensure_init(self) -> None:
        if self._initialized:
            return
        if self._nv is None:
            try:
                import pynvml
            except ImportError as exc:  # pragma: no cover - dependency is pinned
                raise SourceError.of(
                    SOURCE, ErrorKind.NOT_CONFIGURED, f"nvidia-ml-py is not installed: {exc}"
                ) from exc
            self._nv = pynvml
        nv = self._nv
        try:
            nv.nvmlInit()
        except nv.NVMLError as exc:
            raise _init_error(int(getattr(exc, "value", UNKNOWN)), _err_text(exc)) from None
        self._initialized = True
        drv = self._call("nvmlSystemGetDriverVersion")
        self._driver = None if isinstance(drv, _Fail) else _s(drv)
        count = self._call("nvmlDeviceGetCount")
        if isinstance(count, _Fail):
            raise SourceError.of(
                SOURCE, ErrorKind.UNAVAILABLE, f"nvmlDeviceGetCount failed: {count.text}"
            )
        self._count = int(count)

    def _handle(self, index: int) -> Any:
        h = self._handles.get(index)
        if h is None:
            h = self._call("nvmlDeviceGetHandleByIndex", index)
            if isinstance(h, _Fail):
                raise _GpuLost("nvmlDeviceGetHandleByIndex", h.code, h.text)
            self._handles[index] = h
            self._addr_to_index[_addr(h)] = index
        return h

    # -- one poll ----------------------------------------------------------------------
    def poll(self) -> GpuNodeSnapshot:
        """One consistent snapshot of every GPU (sync; use :meth:`snapshot` from async code).

        Raises:
            SourceError: NVML unusable (library missing, driver not loaded, mismatch).
        """
        with self._lock:
            t0 = time.perf_counter()
            self._ensure_init()
            gpus = [self._read_gpu(i) for i in range(self._count)]
            if self.watch_xid:
                self._start_xid_thread()
            snap = GpuNodeSnapshot(
                source=GpuSourceKind.NVML,
                node=self.node,
                at=self._clock(),
                driver_version=self._driver,
                gpus=gpus,
                warnings=list(self._warnings),
                poll_ms=(time.perf_counter() - t0) * 1000.0,
            )
            if self.xid_watch_error:
                snap.warn(msg("gpu.warn.xid_unavailable", error=self.xid_watch_error))
            return snap

    def _read_gpu(self, index: int) -> GpuSnapshot:
        name, uuid, bus = self._identity.get(index, (None, None, None))
        snap = GpuSnapshot(index=index, name=name, uuid=uuid, pci_bus_id=bus)
        try:
            h = self._handle(index)
            self._fill(snap, h, index)
        except _GpuLost as lost:
            # Keep the identity read before the loss so the user sees which GPU it was.
            reason = f"GPU is lost: {lost}"
            snap.lost = True
            snap.lost_reason = reason
            self._handles.pop(index, None)
            # Values read before the loss come from a dying device: none of them is shown.
            for field in GpuSnapshot.model_fields:
                val = getattr(snap, field)
                if isinstance(val, Reading):
                    setattr(snap, field, Reading.unknown(reason, unit=val.unit))
            snap.nvlink = NvLinkState(
                links=Reading.unknown(reason),
                active=Reading.unknown(reason),
                replay_errors=Reading.unknown(reason),
                recovery_errors=Reading.unknown(reason),
                crc_flit_errors=Reading.unknown(reason),
                crc_data_errors=Reading.unknown(reason),
            )
            snap.processes = None
            snap.processes_note = reason
        return snap

    def _fill(self, s: GpuSnapshot, h: Any, index: int) -> None:
        if index not in self._identity:
            name = self._call("nvmlDeviceGetName", h)
            uuid = self._call("nvmlDeviceGetUUID", h)
            pci = self._call("nvmlDeviceGetPciInfo", h)
            ident = (
                None if isinstance(name, _Fail) else _s(name),
                None if isinstance(uuid, _Fail) else _s(uuid),
                None if isinstance(pci, _Fail) else _s(pci.busId),
            )
            if None not in ident:
                self._identity[index] = ident
            s.name, s.uuid, s.pci_bus_id = ident

        util = self._call("nvmlDeviceGetUtilizationRates", h)
        if isinstance(util, _Fail):
            s.util_gpu = s.util_mem = util.reading("%")
        else:
            q = "nvmlDeviceGetUtilizationRates"
            s.util_gpu = _known(util.gpu, "%", q)
            s.util_mem = _known(util.memory, "%", q)

        self._fill_memory(s, h)

        s.temp_gpu = self._scalar("nvmlDeviceGetTemperature", h, 0, unit="°C")
        fields = self._call(
            "nvmlDeviceGetFieldValues", h, [FI_DEV_MEMORY_TEMP, FI_DEV_PCIE_REPLAY_COUNTER]
        )
        if isinstance(fields, _Fail):
            s.temp_mem = fields.reading("°C")
            s.pci_replays = fields.reading()
        else:
            s.temp_mem = self._field(fields[0], "NVML_FI_DEV_MEMORY_TEMP", "°C")
            s.pci_replays = self._field(fields[1], "NVML_FI_DEV_PCIE_REPLAY_COUNTER", "")

        s.power_draw = self._scalar("nvmlDeviceGetPowerUsage", h, unit="W", scale=1e-3)
        s.power_limit = self._scalar("nvmlDeviceGetEnforcedPowerLimit", h, unit="W", scale=1e-3)
        s.sm_clock = self._scalar("nvmlDeviceGetClockInfo", h, 1, unit="MHz")
        s.sm_clock_max = self._scalar("nvmlDeviceGetMaxClockInfo", h, 1, unit="MHz")
        s.mem_clock = self._scalar("nvmlDeviceGetClockInfo", h, 2, unit="MHz")
        s.mem_clock_max = self._scalar("nvmlDeviceGetMaxClockInfo", h, 2, unit="MHz")
        s.clock_reasons = self._scalar("nvmlDeviceGetCurrentClocksEventReasons", h)

        self._fill_ecc(s, h)

        rows = self._call("nvmlDeviceGetRemappedRows", h)
        if isinstance(rows, _Fail):
            r = rows.reading()
            s.remapped_correctable = s.remapped_uncorrectable = r
            s.remap_pending = s.remap_failure = r
        else:
            q = "nvmlDeviceGetRemappedRows"
            s.remapped_correctable = _known(rows[0], "", q)
            s.remapped_uncorrectable = _known(rows[1], "", q)
            s.remap_pending = _known(rows[2], "", q)
            s.remap_failure = _known(rows[3], "", q)

        for cause, attr in ((0, "retired_sbe"), (1, "retired_dbe")):
            pages = self._call("nvmlDeviceGetRetiredPages", h, cause)
            setattr(
                s,
                attr,
                pages.reading()
                if isinstance(pages, _Fail)
                else _known(len(pages), "", "nvmlDeviceGetRetiredPages"),
            )
        s.retired_pending = self._scalar("nvmlDeviceGetRetiredPagesPendingStatus", h)

        s.pcie_gen = self._scalar("nvmlDeviceGetCurrPcieLinkGeneration", h)
        s.pcie_gen_max = self._scalar("nvmlDeviceGetMaxPcieLinkGeneration", h)
        s.pcie_width = self._scalar("nvmlDeviceGetCurrPcieLinkWidth", h)
        s.pcie_width_max = self._scalar("nvmlDeviceGetMaxPcieLinkWidth", h)

        s.nvlink = self._read_nvlink(h, index)

        mig = self._call("nvmlDeviceGetMigMode", h)
        s.mig_mode = (
            mig.reading() if isinstance(mig, _Fail) else _known(mig[0], "", "nvmlDeviceGetMigMode")
        )

        self._fill_processes(s, h)
        s.last_xid = _XID_AS_EVENTS

    def _fill_memory(self, s: GpuSnapshot, h: Any) -> None:
        nv = self._nv
        mem = self._call("nvmlDeviceGetMemoryInfo", h, nv.nvmlMemory_v2)
        q = "nvmlDeviceGetMemoryInfo_v2"
        if isinstance(mem, _Fail) and mem.code in (FUNCTION_NOT_FOUND, ARGUMENT_VERSION_MISMATCH):
            # Older drivers: v1 has no reserved field (metrics_kb.md §1.3).
            mem = self._call("nvmlDeviceGetMemoryInfo", h)
            q = "nvmlDeviceGetMemoryInfo"
            if not isinstance(mem, _Fail):
                s.mem_total = _known(mem.total / MIB, "MiB", q)
                s.mem_used = _known(mem.used / MIB, "MiB", q)
                s.mem_free = _known(mem.free / MIB, "MiB", q)
                s.mem_reserved = Reading.unsupported(
                    "N/A: v1 memory info has no reserved", unit="MiB"
                )
                return
        if isinstance(mem, _Fail):
            r = mem.reading("MiB")
            s.mem_total = s.mem_used = s.mem_free = s.mem_reserved = r
            return
        s.mem_total = _known(mem.total / MIB, "MiB", q)
        s.mem_reserved = _known(mem.reserved / MIB, "MiB", q)
        s.mem_used = _known(mem.used / MIB, "MiB", q)
        s.mem_free = _known(mem.free / MIB, "MiB", q)

    def _field(self, fv: Any, name: str, unit: str) -> Reading:
        rc = int(fv.nvmlReturn)
        if rc != 0:
            if rc in LOST_CODES:
                raise _GpuLost(name, rc, "field value")
            return _Fail(rc, f"nvmlDeviceGetFieldValues({name})", _code_text(self._nv, rc)).reading(
                unit
            )
        vt = int(fv.valueType)
        v = fv.value
        val: float = {
            0: v.dVal,
            1: v.uiVal,
            2: v.ulVal,
            3: v.ullVal,
            4: v.sllVal,
            5: v.siVal,
            6: v.usVal,
        }.get(vt, v.ullVal)
        return Reading.known(float(val), unit, query=f"nvmlDeviceGetFieldValues({name})")

    def _fill_ecc(self, s: GpuSnapshot, h: Any) -> None:
        mode = self._call("nvmlDeviceGetEccMode", h)
        if isinstance(mode, _Fail):
            s.ecc_mode = mode.reading()
        else:
            s.ecc_mode = _known(mode[0], "", "nvmlDeviceGetEccMode")
            if mode[0] == 0:
                off = Reading.unsupported("N/A: ECC is disabled", query="nvmlDeviceGetEccMode")
                s.ecc_corrected_volatile = s.ecc_uncorrected_volatile = off
                s.ecc_corrected_aggregate = s.ecc_uncorrected_aggregate = off
                return
        f = "nvmlDeviceGetTotalEccErrors"
        s.ecc_corrected_volatile = self._scalar(f, h, 0, 0)
        s.ecc_uncorrected_volatile = self._scalar(f, h, 1, 0)
        s.ecc_corrected_aggregate = self._scalar(f, h, 0, 1)
        s.ecc_uncorrected_aggregate = self._scalar(f, h, 1, 1)

    def _read_nvlink(self, h: Any, index: int) -> NvLinkState:
        known_links = self._nvlinks.get(index)
        limit = known_links if known_links is not None else MAX_NVLINKS
        links = 0
        active = 0
        inactive: list[int] = []
        totals = [0, 0, 0, 0]
        failure: _Fail | None = None
        for link in range(limit):
            st = self._call("nvmlDeviceGetNvLinkState", h, link)
            if isinstance(st, _Fail):
                if st.code == INVALID_ARGUMENT and link > 0:
                    break  # past the last link
                failure = st if link == 0 else failure
                if link == 0:
                    break
                continue
            links += 1
            if not st:
                inactive.append(link)
                continue
            active += 1
            for c in range(4):
                v = self._call("nvmlDeviceGetNvLinkErrorCounter", h, link, c)
                if isinstance(v, _Fail):
                    failure = failure or v
                else:
                    totals[c] += int(v)
        if failure is not None and links == 0:
            r = failure.reading()
            return NvLinkState(
                links=r,
                active=r,
                replay_errors=r,
                recovery_errors=r,
                crc_flit_errors=r,
                crc_data_errors=r,
            )
        self._nvlinks[index] = links
        q = "nvmlDeviceGetNvLinkErrorCounter"
        counters = [failure.reading() if failure is not None else _known(v, "", q) for v in totals]
        return NvLinkState(
            links=_known(links, "", "nvmlDeviceGetNvLinkState"),
            active=_known(active, "", "nvmlDeviceGetNvLinkState"),
            inactive_links=inactive,
            replay_errors=counters[0],
            recovery_errors=counters[1],
            crc_flit_errors=counters[2],
            crc_data_errors=counters[3],
        )

    def _fill_processes(self, s: GpuSnapshot, h: Any) -> None:
        procs = self._call("nvmlDeviceGetComputeRunningProcesses", h)
        if isinstance(procs, _Fail):
            s.processes = None
            s.processes_note = procs.reading().reason
            return
        out: list[GpuProcess] = []
        notes: set[str] = set()
        for p in procs:
            pid = int(p.pid)
            mapped = self._pid_cache.get(pid)
            if mapped is None:
                mapped = map_pid_to_pod(pid, self.proc_root)
                self._pid_cache[pid] = mapped
                if len(self._pid_cache) > 4096:
                    self._pid_cache.clear()
            comm, uid, cid, note = mapped
            used = p.usedGpuMemory
            out.append(
                GpuProcess(
                    pid=pid,
                    used_memory=(
                        _known(used / MIB, "MiB", "nvmlDeviceGetComputeRunningProcesses")
                        if used is not None
                        else Reading.unsupported(
                            "N/A: NVML cannot tell this process's memory", unit="MiB"
                        )
                    ),
                    name=comm,
                    pod_uid=uid,
                    container_id=cid,
                    pod_note=note,
                )
            )
            if note and note.startswith("cannot map"):
                notes.add(note)
        s.processes = out
        s.processes_note = "; ".join(sorted(notes)) or None

    # -- Xid events --------------------------------------------------------------------
    def _start_xid_thread(self) -> None:
        if self._xid_thread is not None:
            return
        self._xid_stop.clear()
        t = threading.Thread(target=self._xid_loop, name="nvml-xid", daemon=True)
        self._xid_thread = t
        t.start()

    def _xid_loop(self) -> None:
        nv = self._nv
        try:
            evset = nv.nvmlEventSetCreate()
        except nv.NVMLError as exc:
            self.xid_watch_error = f"nvmlEventSetCreate: {_err_text(exc)}"
            return
        registered = 0
        handles: dict[int, Any] = {}
        for i in range(self._count):
            try:
                h = nv.nvmlDeviceGetHandleByIndex(i)
                supported = int(nv.nvmlDeviceGetSupportedEventTypes(h))
                if supported & EVENT_XID:
                    nv.nvmlDeviceRegisterEvents(h, EVENT_XID, evset)
                    handles[_addr(h)] = i
                    registered += 1
            except nv.NVMLError as exc:
                log.info("GPU %d: Xid events not registered: %s", i, _err_text(exc))
        if registered == 0:
            self.xid_watch_error = "no GPU supports Xid events"
        try:
            while not self._xid_stop.is_set() and registered:
                try:
                    data = nv.nvmlEventSetWait_v2(evset, 200)
                except nv.NVMLError as exc:
                    code = int(getattr(exc, "value", UNKNOWN))
                    if code == TIMEOUT:
                        continue
                    # GPU_IS_LOST and friends: keep waiting for the other GPUs.
                    self._xid_stop.wait(0.5)
                    continue
                idx = handles.get(_addr(data.device))
                if idx is None:
                    idx = self._addr_to_index.get(_addr(data.device))
                ident = (
                    self._identity.get(idx, (None, None, None))
                    if idx is not None
                    else (None, None, None)
                )
                ev = XidEvent(
                    at=self._clock(),
                    xid=int(data.eventData),
                    gpu_index=idx,
                    uuid=ident[1],
                    pci_bus_id=ident[2],
                    event_type=int(data.eventType),
                    source="nvml",
                )
                if len(self._xid) == self._xid.maxlen:
                    self.dropped_xid_events += 1
                self._xid.append(ev)
        finally:
            with contextlib.suppress(nv.NVMLError):
                nv.nvmlEventSetFree(evset)

    def drain_xid(self) -> list[XidEvent]:
        """Take the Xid events received since the last call (oldest first)."""
        out: list[XidEvent] = []
        while True:
            try:
                ev = self._xid.popleft()
            except IndexError:
                return out
            if ev.gpu_index is not None and ev.uuid is None:
                _, uuid, bus = self._identity.get(ev.gpu_index, (None, None, None))
                ev = ev.model_copy(update={"uuid": uuid, "pci_bus_id": bus})
            out.append(ev)

    # -- async API (what panels, commands and the bundle recorder call) ---------------
    def _pool(self) -> ThreadPoolExecutor:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="nvml")
        return self._executor

    async def snapshot(self) -> GpuNodeSnapshot:
        """Poll every GPU once, in the executor, within ``call_timeout_s``.

        Raises:
            SourceError: ``UNAVAILABLE`` when NVML cannot be used, ``TIMEOUT`` when the poll
                (or the previous one, still stuck in the driver) does not finish in time.
        """
        if self._poll_running:
            raise SourceError.of(
                SOURCE,
                ErrorKind.TIMEOUT,
                "the previous NVML poll has not returned yet",
                hint_key="hint.nvml.hang",
            )
        loop = asyncio.get_running_loop()
        self._poll_running = True
        fut = loop.run_in_executor(self._pool(), self._poll_guarded)
        try:
            return await asyncio.wait_for(asyncio.shield(fut), timeout=self.call_timeout_s)
        except TimeoutError:
            raise SourceError.of(
                SOURCE,
                ErrorKind.TIMEOUT,
                f"NVML poll took longer than {self.call_timeout_s:.0f} s",
                hint_key="hint.nvml.hang",
            ) from None

    def _poll_guarded(self) -> GpuNodeSnapshot:
        try:
            return self.poll()
        finally:
            self._poll_running = False

    async def xid_events(self) -> list[XidEvent]:
        """Xid events received since the last call (oldest first); empty when none."""
        return self.drain_xid()

    async def close(self) -> None:
        """Stop the Xid thread, shut NVML down and release the executor."""
        self._xid_stop.set()
        t = self._xid_thread
        if t is not None:
            await asyncio.get_running_loop().run_in_executor(None, t.join, 2.0)
            self._xid_thread = None
        if self._initialized:
            # NVML may already be gone with the GPU.
            with contextlib.suppress(Exception):
                self._nv.nvmlShutdown()
            self._initialized = False
            self._handles.clear()
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None


def _addr(handle: Any) -> int:
    return int(ctypes.cast(handle, ctypes.c_void_p).value or 0)


def _s(v: Any) -> str:
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)


def _err_text(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return type(exc).__name__


def _code_text(nv: Any, code: int) -> str:
    try:
        return _s(nv.nvmlErrorString(code))
    except Exception:
        return f"error {code}"


def _init_error(code: int, text: str) -> SourceError:
    if code == LIBRARY_NOT_FOUND:
        return SourceError.of(
            SOURCE,
            ErrorKind.UNAVAILABLE,
            "NVML library libnvidia-ml.so.1 not found: no NVIDIA driver on this host",
            hint_key="hint.nvml.no_library",
            code=str(code),
        )
    if code == DRIVER_NOT_LOADED:
        return SourceError.of(
            SOURCE,
            ErrorKind.UNAVAILABLE,
            "NVIDIA driver not loaded (nvmlInit: Driver Not Loaded)",
            hint_key="hint.nvml.driver_not_loaded",
            code=str(code),
        )
    if code == LIB_RM_VERSION_MISMATCH:
        return SourceError.of(
            SOURCE,
            ErrorKind.UNAVAILABLE,
            "NVML/driver version mismatch",
            hint_key="hint.nvml.version_mismatch",
            code=str(code),
        )
    if code == NO_PERMISSION:
        return SourceError.of(
            SOURCE, ErrorKind.ACCESS_DENIED, f"nvmlInit: {text}", hint_key="hint.nvml.denied"
        )
    return SourceError.of(SOURCE, ErrorKind.UNAVAILABLE, f"nvmlInit failed: {text} ({code})")


NO_NVML = "no NVML library (libnvidia-ml.so.1): not a GPU node; use DCGM (--node)"
"""Why there is no local GPU source (``source.missing.no_nvml`` says it in either language)."""


def nvml_source_or_reason(**kwargs: Any) -> tuple[NvmlSource | None, str]:
    """An :class:`NvmlSource` when ``libnvidia-ml.so.1`` can be loaded, else the reason.

    Only the library is loaded here (milliseconds); ``nvmlInit`` runs on the first
    snapshot, so a driver that is not loaded shows up there as a classified error.
    """
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return None, NO_NVML
    return NvmlSource(**kwargs), ""
