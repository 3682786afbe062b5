"""Per-GPU state from dcgm-exporter series in Prometheus (for the bastion, where NVML is
not available), as the same :class:`~cockpit.models.gpu.GpuNodeSnapshot`.

Facts (``../shared/reference/metrics_kb.md`` §1):

- Every series carries ``gpu``, ``UUID``, ``pci_bus_id``, ``device``, ``modelName`` and the
  node as ``Hostname`` — renamed to lowercase ``hostname`` in dcgm-exporter PR #655
  (2026-05), so both spellings are queried. With ``--kubernetes`` the GPU-consuming pod is
  in ``pod``/``namespace`` (legacy ``pod_name``/``pod_namespace``).
- Units: FB_* in MiB, power in W, clocks in MHz, temperatures in °C, GPU_UTIL in %.
- Off by default in ``default-counters.csv``: throttle violations (POWER/THERMAL_VIOLATION),
  ECC SBE/DBE totals, retired pages, NVLink error totals, the Xid counter
  (``DCGM_EXP_XID_ERRORS_COUNT``), clock-event reasons, PCIe link gen/width, max clocks,
  enforced power limit, row-remap pending. Whatever this node's exporter does not export
  is listed in ``GpuNodeSnapshot.unexported`` and in a warning, and the readings are
  ``unsupported`` ("not exported"), never 0.
- ``DCGM_FI_DEV_XID_ERRORS`` is the value of the *last* Xid (a gauge), not a count.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime

from cockpit.models import InstantVector, Reading, utcnow
from cockpit.models.gpu import (
    GpuNodeSnapshot,
    GpuSnapshot,
    GpuSourceKind,
    NvLinkState,
    not_exported,
)
from cockpit.models.messages import NAMES, msg
from cockpit.sources.base import ErrorKind, MetricsSource, SourceError

SOURCE = "dcgm"

# snapshot attribute → (metric names, newest spelling first; unit; scale)
FIELDS: dict[str, tuple[tuple[str, ...], str, float]] = {
    "util_gpu": (("DCGM_FI_DEV_GPU_UTIL",), "%", 1.0),
    "util_mem": (("DCGM_FI_DEV_MEM_COPY_UTIL",), "%", 1.0),
    "mem_used": (("DCGM_FI_DEV_FB_USED",), "MiB", 1.0),
    "mem_free": (("DCGM_FI_DEV_FB_FREE",), "MiB", 1.0),
    "mem_reserved": (("DCGM_FI_DEV_FB_RESERVED",), "MiB", 1.0),
    "mem_total": (("DCGM_FI_DEV_FB_TOTAL",), "MiB", 1.0),
    "temp_gpu": (("DCGM_FI_DEV_GPU_TEMP",), "°C", 1.0),
    "temp_mem": (("DCGM_FI_DEV_MEMORY_TEMP",), "°C", 1.0),
    "power_draw": (("DCGM_FI_DEV_POWER_USAGE",), "W", 1.0),
    "power_limit": (("DCGM_FI_DEV_POWER_MGMT_LIMIT", "DCGM_FI_DEV_ENFORCED_POWER_LIMIT"), "W", 1.0),
    "sm_clock": (("DCGM_FI_DEV_SM_CLOCK",), "MHz", 1.0),
    "mem_clock": (("DCGM_FI_DEV_MEM_CLOCK",), "MHz", 1.0),
    "sm_clock_max": (("DCGM_FI_DEV_MAX_SM_CLOCK",), "MHz", 1.0),
    "mem_clock_max": (("DCGM_FI_DEV_MAX_MEM_CLOCK",), "MHz", 1.0),
    "clock_reasons": (
        ("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"),
        "",
        1.0,
    ),
    "ecc_corrected_volatile": (("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",), "", 1.0),
    "ecc_uncorrected_volatile": (("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",), "", 1.0),
    "ecc_corrected_aggregate": (("DCGM_FI_DEV_ECC_SBE_AGG_TOTAL",), "", 1.0),
    "ecc_uncorrected_aggregate": (("DCGM_FI_DEV_ECC_DBE_AGG_TOTAL",), "", 1.0),
    "remapped_correctable": (("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",), "", 1.0),
    "remapped_uncorrectable": (("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",), "", 1.0),
    "remap_failure": (("DCGM_FI_DEV_ROW_REMAP_FAILURE",), "", 1.0),
    "remap_pending": (("DCGM_FI_DEV_ROW_REMAP_PENDING",), "", 1.0),
    "retired_sbe": (("DCGM_FI_DEV_RETIRED_SBE",), "", 1.0),
    "retired_dbe": (("DCGM_FI_DEV_RETIRED_DBE",), "", 1.0),
    "retired_pending": (("DCGM_FI_DEV_RETIRED_PENDING",), "", 1.0),
    "pcie_gen": (("DCGM_FI_DEV_PCIE_LINK_GEN",), "", 1.0),
    "pcie_width": (("DCGM_FI_DEV_PCIE_LINK_WIDTH",), "", 1.0),
    "pcie_gen_max": (("DCGM_FI_DEV_PCIE_MAX_LINK_GEN",), "", 1.0),
    "pcie_width_max": (("DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH",), "", 1.0),
    "pci_replays": (("DCGM_FI_DEV_PCIE_REPLAY_COUNTER",), "", 1.0),
    "last_xid": (("DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_XID_ERROR"), "", 1.0),
}

NVLINK_FIELDS: dict[str, str] = {
    "replay_errors": "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL",
    "recovery_errors": "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL",
    "crc_flit_errors": "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
    "crc_data_errors": "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL",
}

OFF_BY_DEFAULT: dict[str, tuple[str, ...]] = {
    "throttle_violations": ("DCGM_FI_DEV_POWER_VIOLATION", "DCGM_FI_DEV_THERMAL_VIOLATION"),
    "ecc_dbe": ("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL"),
    "retired_pages": (
        "DCGM_FI_DEV_RETIRED_SBE",
        "DCGM_FI_DEV_RETIRED_DBE",
        "DCGM_FI_DEV_RETIRED_PENDING",
    ),
    "nvlink_errors": tuple(NVLINK_FIELDS.values()),
    "xid_counter": ("DCGM_EXP_XID_ERRORS_COUNT",),
    "clock_event_reasons": (
        "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
        "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
    ),
}
"""Groups of fields that are commented out of dcgm-exporter's default-counters.csv
(metrics_kb.md §1.2); reported by group in the warning."""

HISTORY_SPAN_S = 30 * 60.0
HISTORY_STEP_S = 30.0
"""The recent past the GPU panel starts its sparklines with (60 points, as many as it
keeps from its own polls)."""

NODE_LABELS = ("Hostname", "hostname")
"""Both spellings of the node label (dcgm-exporter PR #655 renamed it)."""

POD_LABELS = (
    ("namespace", "pod"),
    ("exported_namespace", "exported_pod"),
    ("pod_namespace", "pod_name"),
)
"""Label pairs a pod's GPU series may carry it in: ``--kubernetes``, the same through the
chart's ServiceMonitor (``honorLabels: false``), and the older exporters' names."""

_ALL_NAMES = sorted(
    {n for names, _, _ in FIELDS.values() for n in names}
    | set(NVLINK_FIELDS.values())
    | {n for names in OFF_BY_DEFAULT.values() for n in names}
)
_NAME_RE = "|".join(_ALL_NAMES)


def _esc(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"')


class DcgmSource:
    """Per-GPU snapshots from dcgm-exporter series.

    Args:
        metrics: A Prometheus-compatible :class:`~cockpit.sources.base.MetricsSource`.
        clock: Returns "now" (the evaluation time when none is passed).

    Raises:
        SourceError: from every method, classified by the metrics source; ``NOT_FOUND``
            when no dcgm-exporter series match the node or pod.
    """

    name = "dcgm"

    def __init__(
        self, metrics: MetricsSource, *, clock: Callable[[], datetime] | None = None
    ) -> None:
        self.metrics = metrics
        self._clock = clock or utcnow

    async def node_snapshot(self, node: str, at: datetime | None = None) -> GpuNodeSnapshot:
        """The GPUs of ``node`` (matched on ``Hostname`` or ``hostname``) at ``at``."""
        at = at or self._clock()
        queries = [f'{{__name__=~"{_NAME_RE}", {label}="{_esc(node)}"}}' for label in NODE_LABELS]
        results = await asyncio.gather(*(self.metrics.instant(q, at) for q in queries))
        vectors = [v for r in results for v in r]
        if not vectors:
            raise SourceError.of(
                SOURCE,
                ErrorKind.NOT_FOUND,
                f"no dcgm-exporter series for node {node!r} (labels Hostname/hostname)",
                hint_key="hint.dcgm.no_node",
                query=" or ".join(queries),
            )
        return _build(vectors, at, node=node, query_hint=queries[0])

    async def pod_snapshot(
        self, namespace: str, pod: str, at: datetime | None = None
    ) -> GpuNodeSnapshot:
        """The GPUs a pod uses, from the exporter's pod mapping (``--kubernetes``)."""
        at = at or self._clock()
        queries = [
            f'{{__name__=~"{_NAME_RE}", {ns_l}="{_esc(namespace)}", {pod_l}="{_esc(pod)}"}}'
            for ns_l, pod_l in POD_LABELS
        ]
        results = await asyncio.gather(*(self.metrics.instant(q, at) for q in queries))
        vectors = [v for r in results for v in r]
        if not vectors:
            raise SourceError.of(
                SOURCE,
                ErrorKind.NOT_FOUND,
                f"no dcgm-exporter series for pod {namespace}/{pod}",
                hint_key="hint.dcgm.no_pod",
            )
        nodes = {_node_of(v.labels) for v in vectors} - {None}
        node = sorted(n for n in nodes if n)[0] if nodes else None
        return _build(vectors, at, node=node, query_hint=queries[0])

    async def history(
        self,
        node: str,
        attrs: tuple[str, ...],
        at: datetime | None = None,
        span_s: float = HISTORY_SPAN_S,
        step_s: float = HISTORY_STEP_S,
    ) -> dict[str, dict[str, list[float | None]]]:
        """The recent past of some per-GPU fields of ``node``: one range query per node
        label spelling, ``span_s`` seconds before ``at`` every ``step_s`` seconds.

        Args:
            attrs: Snapshot attributes (keys of :data:`FIELDS`: ``temp_gpu``…).

        Returns:
            ``{GPU key: {attr: values oldest first}}``, the key being the GPU's ``UUID``
            label, else ``#<gpu index>``; a missing sample is ``None``, never 0.

        Raises:
            SourceError: a query failed (no data is an empty dict).
        """
        from datetime import timedelta

        at = at or self._clock()
        names = {m: attr for attr in attrs for m in FIELDS[attr][0]}
        name_re = "|".join(sorted(names))
        queries = [f'{{__name__=~"{name_re}", {label}="{_esc(node)}"}}' for label in NODE_LABELS]
        start = at - timedelta(seconds=span_s)
        results = await asyncio.gather(*(self.metrics.range(q, start, at, step_s) for q in queries))
        steps = int(span_s // step_s) + 1
        t0 = start.timestamp()
        out: dict[str, dict[str, list[float | None]]] = {}
        for series in (s for r in results for s in r):
            attr = names.get(series.labels.get("__name__", ""))
            if attr is None:
                continue
            key = series.labels.get("UUID") or f"#{series.labels.get('gpu', '?')}"
            values: list[float | None] = [None] * steps
            for t, v in series.samples:
                i = round((t - t0) / step_s)
                if 0 <= i < steps and v == v:
                    values[i] = v * FIELDS[attr][2]
            out.setdefault(key, {})[attr] = values
        return out

    async def service_nodes(
        self, namespace: str, pod_regex: str = "", at: datetime | None = None
    ) -> list[str]:
        """Nodes whose GPUs the exporter maps (``--kubernetes``) to pods of ``namespace``
        (whose names match ``pod_regex`` when given), in any of :data:`POD_LABELS`'
        spellings: a service's GPU nodes without Kubernetes."""
        at = at or self._clock()
        queries = []
        for ns_l, pod_l in POD_LABELS:
            sel = f'{ns_l}="{_esc(namespace)}"' + (
                f', {pod_l}=~"{_esc(pod_regex)}"' if pod_regex else f', {pod_l}!=""'
            )
            queries.append(f"count by ({', '.join(NODE_LABELS)}) (DCGM_FI_DEV_GPU_TEMP{{{sel}}})")
        results = await asyncio.gather(*(self.metrics.instant(q, at) for q in queries))
        return sorted({n for r in results for v in r if (n := _node_of(v.labels))})

    async def nodes(self, at: datetime | None = None) -> list[str]:
        """Nodes that export DCGM GPU series (either label spelling)."""
        at = at or self._clock()
        out: set[str] = set()
        for label in NODE_LABELS:
            for v in await self.metrics.instant(f"count by ({label}) (DCGM_FI_DEV_GPU_TEMP)", at):
                if v.labels.get(label):
                    out.add(v.labels[label])
        return sorted(out)

    async def close(self) -> None:
        """Nothing of its own to release (the metrics source is shared)."""


def _node_of(labels: dict[str, str]) -> str | None:
    for label in NODE_LABELS:
        if labels.get(label):
            return labels[label]
    return None


def _build(
    vectors: list[InstantVector], at: datetime, *, node: str | None, query_hint: str
) -> GpuNodeSnapshot:
    by_gpu: dict[str, dict[str, InstantVector]] = {}
    meta: dict[str, dict[str, str]] = {}
    seen_names: set[str] = set()
    for v in vectors:
        labels = v.labels
        name = labels.get("__name__", "")
        # MIG instances are separate series of one GPU; key on GPU and instance.
        key = labels.get("UUID") or labels.get("uuid") or labels.get("gpu", "?")
        if labels.get("GPU_I_ID"):
            key += f"/mig{labels['GPU_I_ID']}"
        by_gpu.setdefault(key, {})[name] = v
        meta.setdefault(key, {}).update(labels)
        seen_names.add(name)

    unexported_groups = [
        group for group, names in OFF_BY_DEFAULT.items() if not any(n in seen_names for n in names)
    ]
    if "xid_counter" in unexported_groups and any(n in seen_names for n in FIELDS["last_xid"][0]):
        # Xid events are still read, from the last-Xid gauge: say so, or the warning
        # reads as if the panel under it could show no Xid at all.
        unexported_groups[unexported_groups.index("xid_counter")] = "xid_counter_gauge_read"
    unexported = sorted(
        n
        for names, _, _ in FIELDS.values()
        if not any(x in seen_names for x in names)
        for n in names[:1]
    )
    gpus: list[GpuSnapshot] = []
    for key, series in by_gpu.items():
        lab = meta[key]
        try:
            index = int(lab.get("gpu", "-1"))
        except ValueError:
            index = -1
        s = GpuSnapshot(
            index=index,
            name=lab.get("modelName"),
            uuid=lab.get("UUID") or lab.get("uuid"),
            pci_bus_id=lab.get("pci_bus_id"),
        )
        for attr, (names, unit, scale) in FIELDS.items():
            hit = next((series[n] for n in names if n in series), None)
            if hit is not None:
                setattr(s, attr, Reading.known(hit.v * scale, unit, query=names[0]))
            elif any(n in seen_names for n in names):
                setattr(
                    s,
                    attr,
                    Reading.unknown(
                        f"no {names[0]} sample for this GPU", unit=unit, query=names[0]
                    ),
                )
            else:
                setattr(s, attr, not_exported(names[0], unit))
        # Derived: total = used + free + reserved (metrics_kb.md §1.3) when FB_TOTAL is off.
        if not s.mem_total.ok and s.mem_used.ok and s.mem_free.ok:
            parts = [s.mem_used.value or 0.0, s.mem_free.value or 0.0]
            if s.mem_reserved.ok:
                parts.append(s.mem_reserved.value or 0.0)
            s.mem_total = Reading.known(
                sum(parts), "MiB", query="DCGM_FI_DEV_FB_USED + FB_FREE + FB_RESERVED"
            )
        nv: dict[str, Reading] = {}
        for attr, metric in NVLINK_FIELDS.items():
            hit = series.get(metric)
            nv[attr] = (
                Reading.known(hit.v, query=metric) if hit is not None else not_exported(metric)
            )
        na = Reading.unsupported("N/A: DCGM does not export NVLink link state")
        s.nvlink = NvLinkState(links=na, active=na, **nv)
        s.mig_mode = (
            Reading.known(1.0, query="GPU_I_ID label")
            if lab.get("GPU_I_ID")
            else Reading.unsupported("N/A: MIG mode is not exported (no GPU_I_ID label)")
        )
        pod = lab.get("pod") or lab.get("pod_name")
        ns = lab.get("namespace") or lab.get("pod_namespace")
        s.processes = None
        s.pod = f"{ns}/{pod}" if pod and ns else pod or None
        s.processes_note = (
            f"pod {ns}/{pod} (dcgm-exporter --kubernetes); no per-process list from DCGM"
            if pod
            else "DCGM lists no processes; cannot map: not on the node"
        )
        gpus.append(s)
    gpus.sort(key=lambda g: (g.index, g.uuid or ""))
    warning_msgs = (
        [
            msg(
                "gpu.warn.unexported",
                groups=msg(NAMES, keys=",".join(f"gpu.group.{g}" for g in unexported_groups)),
            )
        ]
        if unexported_groups
        else []
    )
    return GpuNodeSnapshot(
        source=GpuSourceKind.DCGM,
        node=node,
        at=at,
        driver_version=next(
            (
                m.get("DCGM_FI_DRIVER_VERSION")
                for m in meta.values()
                if m.get("DCGM_FI_DRIVER_VERSION")
            ),
            None,
        ),
        gpus=gpus,
        warnings=[m.text("en") for m in warning_msgs],
        warning_msgs=warning_msgs,
        unexported=unexported,
    )
