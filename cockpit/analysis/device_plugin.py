"""The node side of GPU scheduling: the NVIDIA device plugin's own start-up log and the
kubelet's admission errors (pure, no I/O).

* Device plugin (``NVIDIA/k8s-device-plugin``, ``cmd/nvidia-device-plugin/main.go`` and
  ``internal/rm``): ``No devices found. Waiting indefinitely.`` — it found no GPU to
  advertise; ``Failed to initialize NVML: could not load NVML library`` / ``If this is a
  GPU node, did you configure the NVIDIA Container Toolkit?`` / ``Incompatible strategy
  detected auto`` / ``nvidia-container-cli: initialization error`` — the plugin's container
  does not see the driver: the container runtime is not set up for GPUs (default runtime
  not ``nvidia``, no RuntimeClass, toolkit missing). Either way the node advertises no
  ``nvidia.com/gpu`` and GPU pods stay Pending with ``Insufficient nvidia.com/gpu``
  (formats.md §A4; pend-01, pend-04; k8s-device-plugin#348, #430).
* Kubelet admission (``pkg/kubelet/cm/devicemanager``): ``UnexpectedAdmissionError`` with
  ``Allocate failed due to requested number of devices unavailable for nvidia.com/gpu.
  Requested: 1, Available: 0, which is unexpected`` — the scheduler counted a GPU the
  kubelet no longer has (a GPU marked unhealthy after an Xid, a plugin restart); the pod
  fails at admission instead of staying Pending.
"""

from __future__ import annotations

import re

from pydantic import Field

from cockpit.analysis.context_facts import Fact, LineKeeper, ReportTail
from cockpit.analysis.logtext import clip, has_keyword, to_int

PLUGIN_KEYWORDS = (
    "no devices found",
    "nvml",
    "container toolkit",
    "incompatible strategy",
    "nvidia-container-cli",
    "device-plugin",
    "device plugin",
)
ADMISSION_KEYWORDS = ("unexpectedadmissionerror", "allocate failed", "devices unavailable")

_NO_DEVICES = re.compile(r"No devices found", re.I)
_RUNTIME = re.compile(
    r"could not load NVML library|Failed to initialize NVML|"
    r"did you configure the NVIDIA Container Toolkit|Incompatible strategy detected|"
    r"nvidia-container-cli: initialization error|detected non-NVML platform",
    re.I,
)
_ADMISSION = re.compile(
    r"UnexpectedAdmissionError|Allocate failed due to requested number of devices unavailable",
    re.I,
)
_REQ_AVAIL = re.compile(r"unavailable for ([\w./-]+)\. Requested: (\d+), Available: (\d+)")


class DevicePluginReport(ReportTail):
    """``cause``: ``container_runtime_not_configured`` (the plugin cannot load NVML: the
    runtime does not hand the driver to its container) or ``device_plugin_no_devices``
    (it runs and finds no GPU). ``category`` ``pod_pending``: the node advertises no GPU."""

    category: str = "pod_pending"
    cause: str
    no_devices_found: bool = False
    runtime_errors: int = 0


class AdmissionReport(ReportTail):
    """``cause`` ``admission_devices_unavailable``: the kubelet refused a pod the scheduler
    had placed, because the node had fewer devices than the scheduler counted.
    ``resource``/``requested``/``available`` as the message states them (devices)."""

    category: str = "pod_pending"
    cause: str = "admission_devices_unavailable"
    resource: str | None = None
    requested: int | None = None
    available: int | None = None
    count: int = 0
    pods: list[str] = Field(default_factory=list)


def detect_plugin_line(line: str) -> bool:
    """A device-plugin start-up failure line."""
    return bool(_NO_DEVICES.search(line) or _RUNTIME.search(line))


def detect_admission_line(line: str) -> bool:
    """A kubelet admission error line."""
    return bool(_ADMISSION.search(line))


class DevicePluginAnalyzer:
    """Streaming analyzer of the device plugin's log: :meth:`feed`, then :meth:`finish`."""

    def __init__(self) -> None:
        self._seen = LineKeeper()
        self._no_devices = False
        self._runtime = 0

    def feed(self, line_no: int, raw: str) -> None:
        """Consume one line (1-based). Never raises on odd input."""
        if not has_keyword(raw, PLUGIN_KEYWORDS):
            return
        line = clip(raw)
        if _RUNTIME.search(line):
            self._runtime += 1
            self._seen.keep(line_no, line)
        elif _NO_DEVICES.search(line):
            self._no_devices = True
            self._seen.keep(line_no, line)

    def finish(self) -> DevicePluginReport | None:
        """The report, or ``None`` when the plugin's failure lines are absent."""
        if not (self._runtime or self._no_devices):
            return None
        cause = "container_runtime_not_configured" if self._runtime else "device_plugin_no_devices"
        r = DevicePluginReport(
            cause=cause,
            no_devices_found=self._no_devices,
            runtime_errors=self._runtime,
            lines=self._seen.lines,
            first_line=self._seen.first,
        )
        r.facts = [Fact(id=f"plugin.{cause}", line=r.first_line), Fact(id="plugin.effect")]
        r.next_check_ids = (
            ["plugin.runtime", "plugin.allocatable", "plugin.logs"]
            if self._runtime
            else ["plugin.driver", "plugin.allocatable", "plugin.logs"]
        )
        r.mitigation_ids = (
            ["configure_runtime", "restart_plugin"]
            if self._runtime
            else ["check_driver", "restart_plugin"]
        )
        return r


_POD_IN = re.compile(r"\bpod/([a-z0-9][a-z0-9.-]{0,252})")


class AdmissionAnalyzer:
    """Streaming analyzer of kubelet admission errors: :meth:`feed`, then :meth:`finish`."""

    def __init__(self) -> None:
        self._seen = LineKeeper()
        self._count = 0
        self._res: tuple[str, int | None, int | None] | None = None
        self._pods: dict[str, None] = {}

    def feed(self, line_no: int, raw: str) -> None:
        """Consume one line (1-based). Never raises on odd input."""
        if not has_keyword(raw, ADMISSION_KEYWORDS):
            return
        line = clip(raw)
        if not _ADMISSION.search(line):
            return
        self._count += 1
        self._seen.keep(line_no, line)
        if self._res is None and (m := _REQ_AVAIL.search(line)):
            self._res = (m.group(1), to_int(m.group(2)), to_int(m.group(3)))
        if (p := _POD_IN.search(line)) and len(self._pods) < 32:
            self._pods[p.group(1)] = None

    def finish(self) -> AdmissionReport | None:
        """The report, or ``None`` when no admission error was seen."""
        if not self._count:
            return None
        res, req, avail = self._res or (None, None, None)
        r = AdmissionReport(
            resource=res,
            requested=req,
            available=avail,
            count=self._count,
            pods=list(self._pods),
            lines=self._seen.lines,
            first_line=self._seen.first,
        )
        r.facts = [
            Fact(
                id="admission.counted",
                args={"resource": res or "?", "requested": req, "available": avail},
                line=r.first_line,
            ),
            Fact(id="admission.why"),
        ]
        r.next_check_ids = ["admission.xid", "plugin.allocatable", "plugin.logs"]
        r.mitigation_ids = ["recreate_pod", "restart_plugin"]
        return r
