"""Why a GPU looks bad, and how it compares with the other GPUs of its node (pure).

Per-GPU rules (each cites its source):

- lost (``GPU_IS_LOST``) → bad: pairs with Xid 79, node reboot (metrics_kb.md §5.5).
- clock-event reasons: HwSlowdown / HwThermal / HwPowerBrake → bad, SwThermal → warn
  (clock_reasons.json, metrics_kb.md §5.1); SwPowerCap → warn only when the GPU is capped
  while most peers are not (metrics_kb.md §5.1 "flag it when only one GPU is capped").
- row remapping: ``remap_failure`` → bad (RMA criterion), ``remap_pending`` → warn (needs
  a GPU reset), uncorrectable remapped rows > 0 → warn (NVIDIA A100 GPU memory error
  management, error-recovery-and-response-flags; metrics_kb.md §5.2).
- ECC: uncorrected volatile count > 0 → bad (an uncorrectable error since driver load;
  Xid 48/94/95 class); retired pages pending → warn (metrics_kb.md §5.2).
- PCIe: current width or generation below the maximum → warn, but only while the GPU is
  busy (util ≥ ``BUSY_UTIL_PCT``) or when the peers run at a higher link, since links train
  down at idle (metrics_kb.md §5.3).
- NVLink: inactive links while peers have them active, or recovery/replay/CRC error
  counts above the peers' → warn (metrics_kb.md §5.3).
- A recent Xid → its catalogue class (hardware → bad, otherwise warn).
- Cohort outliers (see :func:`cohort_view`) → warn.
- A GPU with no finding is "ok" only on what was read: a health check whose readings are
  unseen (:data:`HEALTH_CHECKS`: ECC, row remapping, clock-event reasons, Xid; a field
  the exporter does not export, a failed NVML call: :func:`~cockpit.models.gpu.unseen`) is named as not read in its line and
  marks its state, never counted as healthy. A check that does not apply (ECC disabled,
  NVML's Xids read as events) is not a gap.
- An idle GPU (utilisation ≤ ``IDLE_UTIL_PCT``) is never compared with busy ones: a node
  serving on four GPUs and keeping four spare is not four outliers. It is compared with the
  other idle GPUs only, and says that it is idle (info, not a warning).

Cohort outliers: for each metric, every GPU is compared with the median of its **peers**
(the other GPUs) by the ratio to that median and by the modified z-score
``0.6745·(x − median)/MAD`` with the 3.5 cut-off of Iglewicz & Hoaglin (1993, "How to
Detect and Handle Outliers"). Fixed z-scores are never used: over n values the largest
z-score is at most (n−1)/√n, so with four GPUs no z-score can exceed 1.5. A GPU is an
outlier when it passes the modified z cut-off (or MAD is 0) **and** its ratio to the
peer median is beyond the metric's minimum relative gap (so 61 °C against 60 °C is
never flagged).
"""

from __future__ import annotations

import statistics
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

from cockpit.analysis.clocks import SW_POWER_CAP, ClockSeverity, decode_clock_reasons
from cockpit.analysis.xid import lookup_xid
from cockpit.models import Reading
from cockpit.models.gpu import GpuSnapshot, XidEvent, unseen

BUSY_UTIL_PCT = 30.0
"""Utilisation above which a degraded PCIe link is flagged even without peers (cockpit
default; links train down only when idle, metrics_kb.md §5.3)."""

IDLE_UTIL_PCT = 5.0
"""Utilisation at or below which a GPU counts as idle (cockpit default: a GPU serving any
traffic stays well above it; one holding only a loaded model reads 0 %)."""

HEALTH_CHECKS: dict[str, tuple[str, ...]] = {
    "ecc": ("ecc_uncorrected_volatile",),
    "remap": ("remap_pending", "remap_failure"),
    "clocks": ("clock_reasons",),
    "xid": ("last_xid",),
}
"""The per-GPU health checks a clean verdict speaks for, by the snapshot fields each reads
(metrics_kb.md §5: the error and throttle signals, as opposed to load)."""

MODIFIED_Z_CUTOFF = 3.5
"""Iglewicz & Hoaglin (1993) cut-off for the modified z-score."""

COHORT_METRICS: dict[str, tuple[str, float, float]] = {
    # metric: (attribute, minimum relative gap to the peer median, minimum absolute gap)
    "util": ("util_gpu", 0.25, 15.0),
    "memory": ("mem_used", 0.25, 2048.0),
    "power": ("power_draw", 0.20, 50.0),
    "temp": ("temp_gpu", 0.10, 8.0),
    "sm_clock": ("sm_clock", 0.10, 150.0),
}
"""Cohort metrics with cockpit's minimum gaps (chosen so that normal spread across an
HGX board — a few °C, a few % clocks — is never flagged)."""


class Level(StrEnum):
    """Overall state of a GPU, best first."""

    OK = "ok"
    INFO = "info"
    WARN = "warn"
    BAD = "bad"
    LOST = "lost"
    UNKNOWN = "unknown"


_RANK = [Level.OK, Level.INFO, Level.UNKNOWN, Level.WARN, Level.BAD, Level.LOST]


class Finding(BaseModel):
    """One reason a GPU looks bad.

    Attributes:
        key: Stable id (``clock.hw_thermal``, ``remap.failure``, ``cohort.power``…).
        level: warn / bad / lost / info.
        text: The reason in the requested language.
    """

    key: str
    level: Level
    text: str


class GpuVerdict(BaseModel):
    """The "why this GPU looks bad" line.

    Attributes:
        index: GPU index.
        level: Worst finding (``ok`` when there is none).
        findings: Every finding, worst first.
        line: One line of text for the panel (``"ok"`` / ``"正常"`` when healthy; with
            the checks not read when there are some).
        unread: The :data:`HEALTH_CHECKS` whose readings were all unknown (keys), when
            nothing worse than ``info`` was found: the verdict is partial.
    """

    index: int
    level: Level = Level.OK
    findings: list[Finding] = Field(default_factory=list)
    line: str = ""
    unread: list[str] = Field(default_factory=list)

    @property
    def partial(self) -> bool:
        """Healthy on what was read, with some health check not read."""
        return bool(self.unread) and self.level in (Level.OK, Level.INFO)


class CohortCell(BaseModel):
    """One GPU's value of one metric against its peers.

    Attributes:
        value: The GPU's value (``None`` when unknown).
        peer_median: Median of the other GPUs' known values.
        ratio: value / peer_median (``None`` when either is unknown or the median is 0).
        modified_z: 0.6745·(value − peer_median)/MAD of the peers (``None`` when MAD is 0).
        outlier: True when flagged (see the module docstring).
    """

    value: float | None = None
    peer_median: float | None = None
    ratio: float | None = None
    modified_z: float | None = None
    outlier: bool = False


class CohortRow(BaseModel):
    """One GPU across all cohort metrics."""

    index: int
    cells: dict[str, CohortCell] = Field(default_factory=dict)

    @property
    def outlier_metrics(self) -> list[str]:
        """Metrics on which this GPU is an outlier."""
        return [m for m, c in self.cells.items() if c.outlier]


class CohortView(BaseModel):
    """A node's GPUs side by side; ``outliers`` lists the GPU indexes that stand out."""

    rows: list[CohortRow] = Field(default_factory=list)
    outliers: list[int] = Field(default_factory=list)
    peers: int = 0


def _v(r: Reading) -> float | None:
    return r.value if r.ok else None


def is_idle(gpu: GpuSnapshot) -> bool | None:
    """True when the GPU's utilisation is at or below :data:`IDLE_UTIL_PCT`; ``None`` when
    it is not known."""
    util = _v(gpu.util_gpu)
    return None if util is None else util <= IDLE_UTIL_PCT


def same_activity(a: GpuSnapshot, b: GpuSnapshot) -> bool:
    """True unless one GPU is idle and the other busy (unknown matches both)."""
    ia, ib = is_idle(a), is_idle(b)
    return ia is None or ib is None or ia == ib


def cohort_view(gpus: list[GpuSnapshot]) -> CohortView:
    """Compare every GPU with the median of the others (leave-one-out), per metric.

    Lost GPUs and unknown values are left out of the peers, and so are GPUs of the other
    activity (idle ones for a busy GPU, busy ones for an idle GPU: :func:`same_activity`);
    a GPU needs at least two peers with known values to be judged.
    """
    rows: list[CohortRow] = []
    outliers: list[int] = []
    usable = [g for g in gpus if not g.lost]
    for g in gpus:
        row = CohortRow(index=g.index)
        for metric, (attr, min_rel, min_abs) in COHORT_METRICS.items():
            x = None if g.lost else _v(getattr(g, attr))
            peers = [
                v
                for p in usable
                if p.index != g.index
                and same_activity(g, p)
                and (v := _v(getattr(p, attr))) is not None
            ]
            cell = CohortCell(value=x)
            if x is not None and len(peers) >= 2:
                med = statistics.median(peers)
                mad = statistics.median(abs(p - med) for p in peers)
                cell.peer_median = med
                cell.ratio = x / med if med else None
                gap = abs(x - med)
                rel_ok = gap >= min_abs and (med == 0 or gap / abs(med) >= min_rel)
                if mad > 0:
                    cell.modified_z = 0.6745 * (x - med) / mad
                    cell.outlier = rel_ok and abs(cell.modified_z) >= MODIFIED_Z_CUTOFF
                else:
                    cell.outlier = rel_ok
            row.cells[metric] = cell
        if row.outlier_metrics:
            outliers.append(g.index)
        rows.append(row)
    return CohortView(rows=rows, outliers=outliers, peers=len(usable))


_W: dict[str, dict[str, Any]] = {
    "en": {
        "ok": "ok",
        "ok_unread": "ok on what was read; not read: {what}",
        "list_sep": ", ",
        "unread_tail": "not read: {what}",
        "check": {
            "ecc": "ECC",
            "remap": "row remapping",
            "clocks": "clock-event reasons",
            "xid": "Xid",
        },
        "lost": "GPU is lost (fell off the bus?): drain the node and reboot; check dmesg for Xid 79",
        "unknown": "no readings",
        "idle": f"idle (util ≤ {IDLE_UTIL_PCT:.0f}%): compared with the other idle GPUs only",
        "clock": "clocks cut: {what}",
        "sw_thermal": "SW thermal slowdown: check cooling",
        "power_cap_alone": "power capped while most peers are not",
        "remap_failure": "row remap FAILED: RMA criterion",
        "remap_pending": "row remap pending: reset the GPU to apply it",
        "remap_unc": "{n} uncorrectable remapped rows",
        "ecc_unc": "{n} uncorrected ECC errors since driver load",
        "retired_pending": "retired pages pending: reset needed",
        "pcie": "PCIe link Gen{gen} x{width} (max Gen{gmax} x{wmax})",
        "nvlink_down": "NVLink links down: {links}",
        "nvlink_err": "NVLink errors: {what}",
        "xid": "Xid {xid} ({name})",
        "cohort": "{metric} {value} vs peers {median} (×{ratio})",
        "metric": {
            "util": "util",
            "memory": "memory",
            "power": "power",
            "temp": "temp",
            "sm_clock": "SM clock",
        },
    },
    "zh": {
        "ok": "正常",
        "ok_unread": "已读到的正常；未读到：{what}",
        "list_sep": "、",
        "unread_tail": "未读到：{what}",
        "check": {
            "ecc": "ECC",
            "remap": "行重映射",
            "clocks": "时钟事件原因",
            "xid": "Xid",
        },
        "lost": "GPU 丢失（掉卡？）：drain 节点并重启；查看 dmesg 中的 Xid 79",
        "unknown": "没有读数",
        "idle": f"空闲（利用率 ≤ {IDLE_UTIL_PCT:.0f}%）：只与其他空闲 GPU 比较",
        "clock": "时钟被降：{what}",
        "sw_thermal": "软件温控降频：检查散热",
        "power_cap_alone": "处于功耗上限而多数同伴不是",
        "remap_failure": "行重映射失败：RMA 条件",
        "remap_pending": "行重映射待生效：需重置 GPU",
        "remap_unc": "{n} 行不可纠正错误已重映射",
        "ecc_unc": "驱动加载以来 {n} 个不可纠正 ECC 错误",
        "retired_pending": "页退役待生效：需要重置",
        "pcie": "PCIe 链路 Gen{gen} x{width}（最高 Gen{gmax} x{wmax}）",
        "nvlink_down": "NVLink 链路断开：{links}",
        "nvlink_err": "NVLink 错误：{what}",
        "xid": "Xid {xid}（{name}）",
        "cohort": "{metric} {value}，同伴中位数 {median}（×{ratio}）",
        "metric": {
            "util": "利用率",
            "memory": "显存",
            "power": "功耗",
            "temp": "温度",
            "sm_clock": "SM 时钟",
        },
    },
}


def metric_name(metric: str, lang: str = "en") -> str:
    """The words for a cohort metric key (``sm_clock`` → ``SM clock``)."""
    return str(_W.get(lang, _W["en"])["metric"].get(metric, metric))


def _fmt(v: float) -> str:
    return f"{v:.0f}" if abs(v) >= 10 else f"{v:.1f}"


def why_gpu(
    gpu: GpuSnapshot,
    peers: list[GpuSnapshot] | None = None,
    *,
    cohort: CohortView | None = None,
    xids: list[XidEvent] | None = None,
    lang: str = "en",
) -> GpuVerdict:
    """Findings for one GPU, worst first, and the one-line summary.

    Args:
        gpu: The GPU.
        peers: The other GPUs of the node (for the peer-relative rules).
        cohort: A precomputed :func:`cohort_view` of the node (computed when omitted and
            peers are given).
        xids: Recent Xid events of this node (matched by index, UUID or bus id).
        lang: ``zh`` or ``en``.
    """
    w = _W.get(lang, _W["en"])
    out: list[Finding] = []
    if gpu.lost:
        out.append(Finding(key="lost", level=Level.LOST, text=w["lost"]))
        return _verdict(gpu.index, out, w)
    unread = unread_checks(gpu)
    others = [p for p in (peers or []) if p.index != gpu.index and not p.lost]
    if is_idle(gpu) and any(is_idle(p) is False for p in others):
        out.append(Finding(key="idle", level=Level.INFO, text=w["idle"]))
    # The peer-relative rules compare like with like: a spare GPU is not a busy one's peer.
    alike = [p for p in others if same_activity(gpu, p)]

    mask = _v(gpu.clock_reasons)
    if mask is not None:
        dec = decode_clock_reasons(int(mask), lang)
        hw_bits = [r for r in dec.reasons if r.severity is ClockSeverity.TROUBLE]
        if hw_bits:
            out.append(
                Finding(
                    key="clock." + hw_bits[0].label,
                    level=Level.BAD,
                    text=w["clock"].format(what=", ".join(r.name for r in hw_bits)),
                )
            )
        if any(r.severity is ClockSeverity.WARN for r in dec.reasons):
            out.append(Finding(key="clock.sw_thermal", level=Level.WARN, text=w["sw_thermal"]))
        if int(mask) & SW_POWER_CAP and alike:
            capped = sum(
                1 for p in alike if (m := _v(p.clock_reasons)) is not None and int(m) & SW_POWER_CAP
            )
            if capped * 2 < len(alike):
                out.append(
                    Finding(key="clock.power_cap", level=Level.WARN, text=w["power_cap_alone"])
                )

    if (_v(gpu.remap_failure) or 0) >= 1:
        out.append(Finding(key="remap.failure", level=Level.BAD, text=w["remap_failure"]))
    if (_v(gpu.remap_pending) or 0) >= 1:
        out.append(Finding(key="remap.pending", level=Level.WARN, text=w["remap_pending"]))
    unc_rows = _v(gpu.remapped_uncorrectable) or 0
    if unc_rows > 0:
        out.append(
            Finding(key="remap.unc", level=Level.WARN, text=w["remap_unc"].format(n=int(unc_rows)))
        )
    ecc = _v(gpu.ecc_uncorrected_volatile) or 0
    if ecc > 0:
        out.append(Finding(key="ecc.unc", level=Level.BAD, text=w["ecc_unc"].format(n=int(ecc))))
    if (_v(gpu.retired_pending) or 0) >= 1:
        out.append(Finding(key="retired.pending", level=Level.WARN, text=w["retired_pending"]))

    out.extend(_pcie(gpu, alike, w))
    out.extend(_nvlink(gpu, others, w))

    last_xid = _v(gpu.last_xid)
    if last_xid is not None and last_xid > 0:
        # DCGM_FI_DEV_XID_ERRORS holds the last Xid seen (a gauge; metrics_kb.md §8.1).
        info = lookup_xid(int(last_xid), lang)
        hw_xid = bool(info.likely) and info.likely[0] == "hardware"
        out.append(
            Finding(
                key=f"xid.{int(last_xid)}",
                level=Level.BAD if hw_xid else Level.WARN,
                text=w["xid"].format(xid=int(last_xid), name=info.name),
            )
        )
    for ev in xids or []:
        if ev.gpu_index == gpu.index or (ev.uuid and ev.uuid == gpu.uuid):
            info = lookup_xid(ev.xid, lang)
            hw = bool(info.likely) and info.likely[0] == "hardware"
            out.append(
                Finding(
                    key=f"xid.{ev.xid}",
                    level=Level.BAD if hw else Level.WARN,
                    text=w["xid"].format(xid=ev.xid, name=info.name),
                )
            )

    if cohort is None and others:
        cohort = cohort_view([gpu, *others])
    if cohort is not None:
        row = next((r for r in cohort.rows if r.index == gpu.index), None)
        if row is not None:
            for metric in row.outlier_metrics:
                c = row.cells[metric]
                if c.value is None or c.peer_median is None:
                    continue
                out.append(
                    Finding(
                        key=f"cohort.{metric}",
                        level=Level.WARN,
                        text=w["cohort"].format(
                            metric=w["metric"][metric],
                            value=_fmt(c.value),
                            median=_fmt(c.peer_median),
                            ratio=f"{c.ratio:.2f}" if c.ratio is not None else "?",
                        ),
                    )
                )
    if not out and not any(
        r.ok for r in (gpu.util_gpu, gpu.temp_gpu, gpu.power_draw, gpu.sm_clock, gpu.mem_used)
    ):
        out.append(Finding(key="unknown", level=Level.UNKNOWN, text=w["unknown"]))
    return _verdict(gpu.index, out, w, unread)


def unread_checks(gpu: GpuSnapshot) -> list[str]:
    """The :data:`HEALTH_CHECKS` of ``gpu`` whose every field was not read
    (:func:`~cockpit.models.gpu.unseen`), in the table's order."""
    out = []
    for check, fields in HEALTH_CHECKS.items():
        readings = [getattr(gpu, f) for f in fields]
        if all(unseen(r) for r in readings):
            out.append(check)
    return out


def _pcie(gpu: GpuSnapshot, others: list[GpuSnapshot], w: dict[str, Any]) -> list[Finding]:
    gen, gmax = _v(gpu.pcie_gen), _v(gpu.pcie_gen_max)
    width, wmax = _v(gpu.pcie_width), _v(gpu.pcie_width_max)
    if None in (gen, gmax, width, wmax):
        return []
    assert gen is not None and gmax is not None and width is not None and wmax is not None
    if gen >= gmax and width >= wmax:
        return []
    busy = (_v(gpu.util_gpu) or 0) >= BUSY_UTIL_PCT
    peer_better = any(
        (_v(p.pcie_width) or 0) > width or (_v(p.pcie_gen) or 0) > gen for p in others
    )
    if not (busy or peer_better):
        return []
    return [
        Finding(
            key="pcie.degraded",
            level=Level.WARN,
            text=w["pcie"].format(gen=int(gen), width=int(width), gmax=int(gmax), wmax=int(wmax)),
        )
    ]


def _nvlink(gpu: GpuSnapshot, others: list[GpuSnapshot], w: dict[str, Any]) -> list[Finding]:
    out: list[Finding] = []
    nv = gpu.nvlink
    if nv.inactive_links:
        peers_active = [_v(p.nvlink.active) for p in others]
        known = [a for a in peers_active if a is not None]
        mine = _v(nv.active)
        if not known or (mine is not None and mine < statistics.median(known)):
            links = ",".join(str(i) for i in nv.inactive_links[:8])
            out.append(
                Finding(
                    key="nvlink.down", level=Level.WARN, text=w["nvlink_down"].format(links=links)
                )
            )
    errs = []
    for name, r in (
        ("recovery", nv.recovery_errors),
        ("replay", nv.replay_errors),
        ("CRC flit", nv.crc_flit_errors),
        ("CRC data", nv.crc_data_errors),
    ):
        v = _v(r)
        if v is None or v <= 0:
            continue
        attr = {
            "recovery": "recovery_errors",
            "replay": "replay_errors",
            "CRC flit": "crc_flit_errors",
            "CRC data": "crc_data_errors",
        }[name]
        peer_vals = [pv for p in others if (pv := _v(getattr(p.nvlink, attr))) is not None]
        if not peer_vals or v > 2 * max(statistics.median(peer_vals), 1.0):
            errs.append(f"{name} {int(v)}")
    if errs:
        out.append(
            Finding(
                key="nvlink.errors",
                level=Level.WARN,
                text=w["nvlink_err"].format(what=", ".join(errs)),
            )
        )
    return out


def _verdict(
    index: int, findings: list[Finding], w: dict[str, Any], unread: list[str] | None = None
) -> GpuVerdict:
    findings.sort(key=lambda f: -_RANK.index(f.level))
    level = findings[0].level if findings else Level.OK
    line = "; ".join(f.text for f in findings) if findings else w["ok"]
    gaps = list(unread or []) if level in (Level.OK, Level.INFO) else []
    if gaps:
        what = w["list_sep"].join(w["check"][c] for c in gaps)
        line = (
            w["ok_unread"].format(what=what)
            if not findings
            else line + "; " + w["unread_tail"].format(what=what)
        )
    return GpuVerdict(index=index, level=level, findings=findings, line=line, unread=gaps)
