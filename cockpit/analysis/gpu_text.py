"""Per-GPU table rows as plain text with a level per cell (pure), shared by the GPU panel
and ``cockpit gpus``. Unknown values render as ``?`` and unsupported ones as ``N/A`` —
never as 0 (metrics_kb.md §5.5: NOT_SUPPORTED is "n/a", not an error).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel, Field

from cockpit.analysis.clocks import ClockSeverity, decode_clock_reasons
from cockpit.analysis.gpu_health import CohortView, GpuVerdict, Level
from cockpit.i18n import UNKNOWN, spark_floor, t
from cockpit.models import Availability, Reading
from cockpit.models.gpu import GpuSnapshot, XidEvent

COLUMNS = (
    "gpu",
    "name",
    "pod",
    "util",
    "memory",
    "temp",
    "power",
    "sm_clock",
    "clocks",
    "ecc",
    "pcie",
    "nvlink",
    "state",
)

HEADERS = {
    "en": {
        "gpu": "GPU",
        "name": "Name",
        "pod": "Pod",
        "util": "Util%",
        "memory": "Mem GiB",
        "temp": "Temp°C",
        "power": "Power W",
        "sm_clock": "SM MHz",
        "clocks": "Clock reasons",
        "ecc": "ECC/remap",
        "pcie": "PCIe",
        "nvlink": "NVLink",
        "state": "State",
    },
    "zh": {
        "gpu": "GPU",
        "name": "型号",
        "pod": "Pod",
        "util": "利用率%",
        "memory": "显存 GiB",
        "temp": "温度°C",
        "power": "功耗 W",
        "sm_clock": "SM MHz",
        "clocks": "降频原因",
        "ecc": "ECC/重映射",
        "pcie": "PCIe",
        "nvlink": "NVLink",
        "state": "状态",
    },
}

STATE_WORDS = {
    "en": {
        "ok": "OK",
        "info": "OK",
        "partial": "OK*",
        "warn": "WARN",
        "bad": "BAD",
        "lost": "LOST",
        "unknown": "?",
    },
    "zh": {
        "ok": "正常",
        "info": "正常",
        "partial": "正常*",
        "warn": "注意",
        "bad": "异常",
        "lost": "丢失",
        "unknown": "?",
    },
}

SPARK_METRICS = ("util_gpu", "mem_used", "power_draw", "temp_gpu", "sm_clock")
_BLOCKS = "▁▂▃▄▅▆▇█"


class Cell(BaseModel):
    """One table cell: its text and how worrying it is."""

    text: str
    level: Level = Level.OK
    missing: bool = False


class GpuRow(BaseModel):
    """One GPU as table cells, keyed by :data:`COLUMNS`."""

    index: int
    cells: dict[str, Cell] = Field(default_factory=dict)


def fmt(r: Reading, digits: int = 0) -> str:
    """``N/A`` (unsupported), :data:`~cockpit.models.messages.UNKNOWN` or the number."""
    if r.status is Availability.UNSUPPORTED:
        return "N/A"
    if not r.ok or r.value is None:
        return UNKNOWN
    return f"{r.value:.{digits}f}"


def _pair(a: Reading, b: Reading, digits: int = 0, scale: float = 1.0) -> str:
    def one(r: Reading) -> str:
        if r.ok and r.value is not None:
            return f"{r.value * scale:.{digits}f}"
        return fmt(r)

    return f"{one(a)}/{one(b)}"


def _missing(*rs: Reading) -> bool:
    return all(not r.ok for r in rs)


POD_CHARS = 28
"""Columns of the pod cell; a longer ``namespace/name`` keeps its end (the replica)."""


def pod_text(g: GpuSnapshot) -> str:
    """Which pod holds the GPU: ``namespace/name`` (DCGM's pod mapping), the pod UIDs of
    its processes (NVML, ``uid 0d7c4e1a``), or ``—`` when nothing says."""
    if g.pod:
        return g.pod if len(g.pod) <= POD_CHARS else "…" + g.pod[-(POD_CHARS - 1) :]
    uids = sorted({p.pod_uid[:8] for p in g.processes or [] if p.pod_uid})
    return ", ".join(f"uid {u}" for u in uids) if uids else "—"


def gpu_row(
    g: GpuSnapshot, verdict: GpuVerdict, cohort: CohortView | None, lang: str = "en"
) -> GpuRow:
    """Cells of one GPU; levels come from the verdict's findings and the cohort."""
    keys = {f.key for f in verdict.findings}
    outl: set[str] = set()
    if cohort is not None:
        row = next((r for r in cohort.rows if r.index == g.index), None)
        if row is not None:
            outl = set(row.outlier_metrics)

    def lvl(*conds: tuple[bool, Level]) -> Level:
        for c, level in conds:
            if c:
                return level
        return Level.OK

    cells: dict[str, Cell] = {}
    cells["gpu"] = Cell(text=str(g.index))
    cells["name"] = Cell(text=(g.name or "?").replace("NVIDIA ", ""))
    cells["pod"] = Cell(text=pod_text(g), missing=not g.pod)
    if g.lost:
        for col in COLUMNS[3:]:
            cells[col] = Cell(text="—", level=Level.LOST, missing=True)
        cells["state"] = Cell(
            text=STATE_WORDS.get(lang, STATE_WORDS["en"])["lost"], level=Level.LOST
        )
        return GpuRow(index=g.index, cells=cells)
    cells["util"] = Cell(
        text=f"{fmt(g.util_gpu)}/{fmt(g.util_mem)}",
        level=lvl(("util" in outl, Level.WARN)),
        missing=_missing(g.util_gpu),
    )
    cells["memory"] = Cell(
        text=_pair(g.mem_used, g.mem_total, 1, 1 / 1024),
        level=lvl(("memory" in outl, Level.WARN)),
        missing=_missing(g.mem_used),
    )
    cells["temp"] = Cell(
        text=f"{fmt(g.temp_gpu)}/{fmt(g.temp_mem)}",
        level=lvl(
            ("clock.hw_thermal" in keys, Level.BAD),
            ("clock.sw_thermal" in keys or "temp" in outl, Level.WARN),
        ),
        missing=_missing(g.temp_gpu),
    )
    cells["power"] = Cell(
        text=_pair(g.power_draw, g.power_limit),
        level=lvl(
            ("clock.hw_power_brake" in keys, Level.BAD),
            ("clock.power_cap" in keys or "power" in outl, Level.WARN),
        ),
        missing=_missing(g.power_draw),
    )
    cells["sm_clock"] = Cell(
        text=_pair(g.sm_clock, g.sm_clock_max),
        level=lvl(("sm_clock" in outl, Level.WARN)),
        missing=_missing(g.sm_clock),
    )
    if g.clock_reasons.ok and g.clock_reasons.value is not None:
        dec = decode_clock_reasons(int(g.clock_reasons.value), lang)
        cl = {
            ClockSeverity.TROUBLE: Level.BAD,
            ClockSeverity.WARN: Level.WARN,
            ClockSeverity.INFO: Level.INFO,
        }.get(dec.severity, Level.OK)
        if "clock.power_cap" in keys and cl is Level.INFO:
            cl = Level.WARN
        cells["clocks"] = Cell(text=dec.summary, level=cl)
    else:
        cells["clocks"] = Cell(text=fmt(g.clock_reasons), missing=True)
    ecc_bad = bool(keys & {"ecc.unc", "remap.failure"})
    ecc_warn = bool(keys & {"remap.pending", "remap.unc", "retired.pending"})
    unc = g.ecc_uncorrected_volatile
    rows = g.remapped_uncorrectable
    cells["ecc"] = Cell(
        text=f"{fmt(unc)}/{fmt(rows)}"
        + (" P" if (g.remap_pending.value or 0) >= 1 else "")
        + (" F" if (g.remap_failure.value or 0) >= 1 else ""),
        level=lvl((ecc_bad, Level.BAD), (ecc_warn, Level.WARN)),
        missing=_missing(unc, rows),
    )
    if g.pcie_gen.ok and g.pcie_width.ok:
        cells["pcie"] = Cell(
            text=f"G{fmt(g.pcie_gen)}x{fmt(g.pcie_width)}",
            level=lvl(("pcie.degraded" in keys, Level.WARN)),
        )
    else:
        cells["pcie"] = Cell(text=fmt(g.pcie_gen), missing=True)
    nv = g.nvlink
    if nv.links.ok:
        cells["nvlink"] = Cell(
            text=f"{fmt(nv.active)}/{fmt(nv.links)}",
            level=lvl((bool(keys & {"nvlink.down", "nvlink.errors"}), Level.WARN)),
        )
    else:
        cells["nvlink"] = Cell(text=fmt(nv.links), missing=True)
    # "OK*": healthy on what was read, a health check not read (the why line names it).
    cells["state"] = Cell(
        text=STATE_WORDS.get(lang, STATE_WORDS["en"])[
            "partial" if verdict.partial else verdict.level.value
        ],
        level=verdict.level,
    )
    return GpuRow(index=g.index, cells=cells)


def legend(verdicts: Sequence[GpuVerdict], lang: str) -> str:
    """The table's legend, with what "OK*" means when a GPU's verdict is partial."""
    out = t("gpu.legend", lang)
    if any(v.partial for v in verdicts):
        out += " · " + t("gpu.legend.partial", lang)
    return out


def sparkline(values: Sequence[float | None], width: int = 16, top: float | None = None) -> str:
    """Unicode block sparkline of all ``values`` (oldest first) in at most ``width`` cells.

    More values than cells are compressed, never cut: the values are split into ``width``
    runs of consecutive samples (as equal as possible, the newest always in the last cell)
    and each cell shows the **mean** of the known values of its run, so that a step either
    way (temperature up, SM clock down) shows as a step; a run with no known value is a
    space (a gap, never 0). Fewer values than cells give one cell per value. Heights are
    scaled from :func:`cockpit.i18n.spark_floor` (zero, unless a cell is negative) to the
    largest: a bar's height is its magnitude, so noise on a steady value never draws as a
    cliff. ``top``: the value a full bar stands for when sparklines are read side by side
    (every GPU's power on one scale, :func:`shared_tops`, so an idle 70 W never draws
    as high as a busy 550 W); at least the largest value drawn.
    """
    vals = list(values)
    if len(vals) > width > 0:
        runs = [vals[i * len(vals) // width : (i + 1) * len(vals) // width] for i in range(width)]
        cells: list[float | None] = []
        for run in runs:
            known_run = [v for v in run if v is not None]
            cells.append(sum(known_run) / len(known_run) if known_run else None)
        vals = cells
    known = [v for v in vals if v is not None]
    if not known:
        return ""
    lo, hi = spark_floor(min(known)), max(known)
    if top is not None and math.isfinite(top):
        hi = max(hi, top)
    span = hi - lo
    out = []
    for v in vals:
        if v is None:
            out.append(" ")
        elif span <= 0:
            out.append(_BLOCKS[0])
        else:
            out.append(_BLOCKS[min(7, int((v - lo) / span * 7.999))])
    return "".join(out)


def shared_tops(histories: Iterable[Mapping[str, Iterable[float | None]]]) -> dict[str, float]:
    """Per metric, the largest known value over every GPU's history (``{metric: values}``
    each): the :func:`sparkline` ``top`` that puts one metric of all GPUs on one scale."""
    out: dict[str, float] = {}
    for h in histories:
        for metric, values in h.items():
            known = [v for v in values if v is not None and math.isfinite(v)]
            if known:
                out[metric] = max(out.get(metric, known[0]), *known)
    return out


def cohort_none_text(gpus: list[GpuSnapshot], lang: str) -> str:
    """What to say when the cohort finds no outlier: that none stands out from its peers,
    or, with fewer than three readable GPUs (a GPU needs two peers to be judged, see
    :func:`cockpit.analysis.gpu_health.cohort_view`), that there are too few to compare."""
    from cockpit.i18n import t

    usable = [g for g in gpus if not g.lost]
    if len(usable) < 3:
        return t("gpu.cohort_too_few", lang, n=len(usable))
    return t("gpu.cohort_none", lang)


def cohort_lines(gpus: list[GpuSnapshot], cohort: CohortView, lang: str) -> tuple[list[str], bool]:
    """The node cohort's lines, as the GPU panel and ``cockpit gpus`` show them, and
    whether some GPU stands out: a lost GPU first (it stands out by being lost: its series
    vanished, so it has no value to compare and :func:`~cockpit.analysis.gpu_health.cohort_view`
    leaves it out of the peers), then the outliers among the others with the metrics they
    stand out on; when none of the others stands out, that is said of the others only
    (never "no GPU stands out" beside a lost one)."""
    from cockpit.analysis.gpu_health import metric_name
    from cockpit.i18n import t

    lost = [g.index for g in gpus if g.lost]
    lines = []
    if lost:
        lines.append(t("gpu.cohort_lost", lang, gpus=", ".join(map(str, lost))))
    if cohort.outliers:
        lines.append(t("gpu.cohort_outliers", lang, gpus=", ".join(map(str, cohort.outliers))))
        for r in cohort.rows:
            if r.index in cohort.outliers:
                parts = [
                    f"{metric_name(m, lang)} ×{r.cells[m].ratio:.2f}"
                    for m in r.outlier_metrics
                    if r.cells[m].ratio is not None
                ]
                lines.append(f"  GPU {r.index}: " + ", ".join(parts))
    elif lost:
        usable = [g for g in gpus if not g.lost]
        if len(usable) < 3:
            lines.append(t("gpu.cohort_too_few", lang, n=len(usable)))
        else:
            lines.append(t("gpu.cohort_none_others", lang))
    else:
        lines.append(cohort_none_text(gpus, lang))
    return lines, bool(lost or cohort.outliers)


def xid_lines(xids: Sequence[XidEvent], lang: str, last: int = 5) -> list[str]:
    """The Xid events section as the GPU panel and ``cockpit gpus`` show it: its heading
    and the ``last`` events (``13:40:00 Xid 79 on GPU 0 …``), or that there were none."""
    from cockpit.analysis.xid import xid_event_text
    from cockpit.i18n import t

    if not xids:
        return [t("gpu.no_xids", lang)]
    return [t("gpu.xids", lang)] + [
        f"{e.at:%H:%M:%S} " + xid_event_text(e.xid, e.gpu_index, e.pci_bus_id, lang)
        for e in list(xids)[-last:]
    ]
