"""Xid catalogue lookup and the kernel-log Xid parser (pure; no I/O).

Catalogue: ``cockpit/knowledge/xid.json`` (meaning, likely cause, NVIDIA's immediate
action bucket, recommended action; zh and en), copied from the reference notes that cite
https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html, NVIDIA/NVSentinel's
copy of the catalogue and dcgm-exporter's Xid text table.

Kernel-log formats (``../shared/cases/formats.md`` A3)::

    [<uptime>|<ctime>] NVRM: Xid (PCI:<domain>:<bus>:<dev>): <xid>, pid=<pid|'<unknown>'>, name=<comm>, <message>

with these variants: no ``name=`` (older drivers), no pid/name at all (NVLink 144–150,
13, 154), the preamble ``NVRM: GPU at PCI:…: GPU-<uuid>`` and ``GPU Board Serial Number``,
follow-ons ``… caused by previous Xid N`` (collapsed into the root), Xid 119's two wordings,
the multi-line "fallen off the bus" message without an Xid line (treated as Xid 79),
``RmInitAdapter failed`` (GPU not initialised), and the device plugin's
``XidCriticalError: Xid=N on Device=…`` lines (the unhealthy mark is sticky until the
plugin restarts). A pasted ``kubectl describe node`` (``Capacity:``/``Allocatable:``
``nvidia.com/gpu``) gives the node effect: ``allocatable < capacity`` is the GPUs the
plugin took out (formats.md C.4, case xid-01).

App-versus-hardware test (formats.md C.4, cases xid-04 and xid-05): an application-class
Xid (13, 31, …) repeated on **one GPU by several different processes** points at the GPU
("suspect hardware"); the same Xid on **several GPUs from the same program** points at the
application. ``SUSPECT_HW_MIN_PIDS`` = 3 distinct processes, because two could be one job
restarted by its controller (xid-04 shows three).
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from pydantic import BaseModel, Field

from cockpit.analysis.scheduling import paste_evidence
from cockpit.knowledge.catalogues import xid_catalogue
from cockpit.models.gpu import normalize_pci

SUSPECT_HW_MIN_PIDS = 3
"""Distinct processes hitting one application-class Xid on one GPU before the GPU itself
is suspected (see the module docstring)."""

APP_CLASS_XIDS = frozenset({8, 13, 31, 68, 69, 109})
"""Xids whose default triage is "application bug" (formats.md A3 table, catalogue)."""

FOLLOW_ON_XIDS = frozenset({43, 45, 154})
"""Xids that usually follow another one on the same GPU (catalogue: 43 "often preceded by
13/31", 45 "secondary to another Xid", 154 "emitted together with/after another Xid")."""

PLUGIN_SKIPPED_XIDS = frozenset({13, 31, 43, 45, 68, 109})
"""Xids the NVIDIA device plugin treats as application errors (does not mark the GPU
unhealthy); every other Xid marks it unhealthy until the plugin restarts
(NVIDIA/k8s-device-plugin health.go; formats.md A3, case xid-01)."""


class XidInfo(BaseModel):
    """One catalogue entry in one language.

    Attributes:
        xid: The number.
        known: False when the catalogue has no entry (the number is still reported).
        name / meaning / action: Text.
        likely: Likely causes, most likely first: ``application``, ``driver``,
            ``hardware``, ``informational``.
        cause_class: The catalogue's finer class (``hardware_memory``…).
        bucket: NVIDIA's immediate-action bucket (``RESET_GPU``…).
        severity: A short tag (``contained_ecc``, ``fell_off_bus``, ``mmu_fault``…).
        check / escalate_if: What to look at next, and when to escalate.
        sources: Citations.
    """

    xid: int
    known: bool = True
    name: str = ""
    meaning: str = ""
    action: str = ""
    likely: list[str] = Field(default_factory=list)
    cause_class: str = ""
    bucket: str = ""
    severity: str = ""
    check: str = ""
    escalate_if: str = ""
    sources: list[str] = Field(default_factory=list)


def lookup_xid(xid: int, lang: str = "en") -> XidInfo:
    """The catalogue entry of ``xid`` in ``lang`` (``known=False`` when absent)."""
    e = xid_catalogue().get(xid)
    if e is None:
        unknown = "目录中没有此 Xid" if lang == "zh" else "not in the catalogue"
        hint = (
            "查阅 NVIDIA Xid 目录：https://docs.nvidia.com/deploy/xid-errors/"
            if lang == "zh"
            else "Look it up in NVIDIA's Xid catalog: https://docs.nvidia.com/deploy/xid-errors/"
        )
        return XidInfo(xid=xid, known=False, name=unknown, meaning=unknown, action=hint)
    zh = e.zh if lang == "zh" else None
    return XidInfo(
        xid=xid,
        name=(zh and zh.name) or e.name,
        meaning=(zh and zh.meaning) or e.meaning,
        action=(zh and zh.action) or e.action,
        likely=list(e.likely),
        cause_class=e.cause_class,
        bucket=e.nvidia_immediate_action_bucket,
        severity=e.severity,
        check=(zh and zh.check) or e.check,
        escalate_if=(zh and zh.escalate_if) or e.escalate_if,
        sources=list(e.sources),
    )


# -- parsing ----------------------------------------------------------------------------

_PCI = r"[0-9a-fA-Fx]{1,8}:[0-9a-fA-Fx]{1,2}:[0-9a-fA-Fx]{1,2}(?:\.[0-9a-fA-Fx])?"
_XID_LINE = re.compile(
    rf"^(?P<pre>.*?)NVRM: Xid \(PCI:(?P<pci>{_PCI})\): (?P<xid>\d+)(?:,\s*(?P<rest>.*))?$"
)
_PID = re.compile(r"^pid=(?P<pid>'[^']*'|<[^>]*>|[^,\s]+)\s*(?:,\s*|$)")
_NAME = re.compile(r"^name=(?P<name><[^>]*>|[^,]*?)\s*(?:,\s*|$)")
_CAUSED_BY = re.compile(r"caused by previous Xid (\d+)", re.IGNORECASE)
_GPU_AT = re.compile(rf"NVRM: GPU at PCI:(?P<pci>{_PCI}): (?P<uuid>GPU-[0-9A-Za-z-]+)")
_SERIAL = re.compile(r"NVRM: GPU Board Serial Number: (?P<sn>\S+)")
_INIT_FAIL = re.compile(
    rf"NVRM: GPU (?P<pci>{_PCI}): (?P<what>RmInitAdapter failed!.*|rm_init_adapter failed.*)$"
)
_OFF_BUS_START = re.compile(rf"NVRM: The NVIDIA GPU (?P<pci>{_PCI})\s*$")
_OFF_BUS_END = re.compile(r"fallen off the bus")
_GPU_LOST = re.compile(rf"NVRM: GPU (?P<pci>{_PCI}): GPU is lost")
"""The driver's one-line word that a GPU is gone: the Xid 79 family (fallen off the bus)."""
_PCI_ID = re.compile(r"\(PCI ID: (?P<id>[0-9a-fA-F]{4}:[0-9a-fA-F]{4})\)")
_PLUGIN = re.compile(r"XidCriticalError: Xid=(?P<xid>\d+) on Device=(?P<dev>[^;,\s]+)")
_PLUGIN_UNHEALTHY = re.compile(r"'nvidia\.com/gpu' device marked unhealthy: (?P<dev>\S+)")
_MMU = re.compile(
    r"ENGINE (?P<engine>\S+) (?P<client>\S+) faulted @ \S+\. Fault is of type (?P<type>.+?)\s*$"
)
_TS = re.compile(r"\[(?P<ts>[^\]]+)\]\s*$")


class XidOccurrence(BaseModel):
    """One Xid seen in the text.

    Attributes:
        line: 1-based line number.
        at: The timestamp text before ``NVRM:`` (uptime or ctime), when present.
        pci: Normalised PCI key (``0000:db:00``; placeholders such as ``xx`` kept).
        xid: The number.
        pid: The PID, ``None`` when absent or ``<unknown>``.
        process: ``name=`` value when present and known.
        message: The rest of the line.
        caused_by: The root Xid named by ``caused by previous Xid N``.
        inferred: True when no Xid line was printed (the multi-line "fallen off the
            bus" message is read as Xid 79).
        signature: A fault signature (MMU fault client and type for Xid 31).
    """

    line: int
    at: str | None = None
    pci: str
    xid: int
    pid: int | None = None
    process: str | None = None
    message: str = ""
    caused_by: int | None = None
    inferred: bool = False
    signature: str | None = None


class XidGroup(BaseModel):
    """All occurrences of one root Xid on one GPU, follow-ons folded in.

    Attributes:
        pci / xid / info: The GPU, the root Xid and its catalogue entry.
        count: Occurrences of the root itself.
        pids / processes: Distinct PIDs and process names.
        followons: Follow-on Xids folded into this root, with their counts.
        signatures: Distinct fault signatures.
        inferred: True when the root was inferred (no Xid line).
        likely: ``hardware``, ``suspect_hardware``, ``application_bug``, ``driver`` or
            ``informational``.
        reason: Why ``likely`` was chosen, in words.
        actions: What to do, in order.
        first_line: Line number of the first occurrence.
    """

    pci: str
    xid: int
    info: XidInfo
    count: int = 0
    pids: list[int] = Field(default_factory=list)
    processes: list[str] = Field(default_factory=list)
    followons: dict[int, int] = Field(default_factory=dict)
    signatures: list[str] = Field(default_factory=list)
    inferred: bool = False
    likely: str = ""
    reason: str = ""
    actions: list[str] = Field(default_factory=list)
    first_line: int = 0


class GpuXidReport(BaseModel):
    """Everything the text says about one GPU.

    Attributes:
        pci: Normalised PCI key.
        uuid / serial: From the ``NVRM: GPU at PCI`` preamble, when present.
        pci_id: Vendor:device id (``10de:26b5``) when printed.
        groups: Root Xids on this GPU, most severe first.
        init_failed: ``RmInitAdapter failed`` text when the GPU did not initialise.
        plugin_unhealthy: Xids the device plugin marked this GPU unhealthy for.
        verdict: ``rma_candidate``, ``drain_and_reboot``, ``drain_and_reset``,
            ``reset_when_convenient``, ``suspect_hardware``, ``not_initialized``,
            ``application`` or ``no_action``.
        verdict_text: The verdict in words.
    """

    pci: str
    uuid: str | None = None
    serial: str | None = None
    pci_id: str | None = None
    groups: list[XidGroup] = Field(default_factory=list)
    init_failed: str | None = None
    plugin_unhealthy: list[int] = Field(default_factory=list)
    verdict: str = "no_action"
    verdict_text: str = ""


class PluginMark(BaseModel):
    """A device-plugin line that marked a GPU unhealthy."""

    line: int
    xid: int | None
    device: str


class XidExplanation(BaseModel):
    """The result of :func:`explain_xid_text`.

    Attributes:
        lang: Language of the text fields.
        occurrences: Every Xid seen, in text order.
        root_xids: Distinct root Xids (follow-ons collapsed), in first-seen order.
        gpus: Per GPU, most severe first.
        findings: Cross-GPU statements (same GPU many processes / many GPUs same input).
        plugin_marks: Device-plugin unhealthy marks.
        node_action: The one thing to do for the node, in words.
        gpu_capacity: ``nvidia.com/gpu`` capacity of a pasted ``kubectl describe node``
            (devices; ``None`` when not pasted).
        gpu_allocatable: Its allocatable (devices); below capacity = GPUs the device
            plugin marked unhealthy.
        node_effect: ``allocatable nvidia.com/gpu A/C`` when both were pasted.
        node_effect_text: In words, when allocatable is below capacity.
    """

    lang: str = "en"
    occurrences: list[XidOccurrence] = Field(default_factory=list)
    root_xids: list[int] = Field(default_factory=list)
    gpus: list[GpuXidReport] = Field(default_factory=list)
    findings: list[str] = Field(default_factory=list)
    plugin_marks: list[PluginMark] = Field(default_factory=list)
    node_action: str = ""
    gpu_capacity: int | None = None
    gpu_allocatable: int | None = None
    node_effect: str = ""
    node_effect_text: str = ""

    def gpu(self, pci: str) -> GpuXidReport | None:
        """The report of the GPU at ``pci`` (any spelling of the bus id)."""
        key = _key(pci)
        return next((g for g in self.gpus if g.pci == key), None)

    @property
    def found(self) -> bool:
        """True when the text held anything Xid-related."""
        return bool(self.occurrences or self.gpus or self.plugin_marks)


def _key(pci: str) -> str:
    return normalize_pci(pci)


def _pid(text: str) -> int | None:
    t = text.strip("'\"")
    return int(t) if t.isdigit() else None


def parse_xid_lines(
    text: str,
) -> tuple[list[XidOccurrence], dict[str, dict[str, str]], list[PluginMark]]:
    """Parse kernel-log text into Xid occurrences.

    Returns:
        ``(occurrences, gpu_facts, plugin_marks)`` where ``gpu_facts`` maps a PCI key to
        ``{"uuid", "serial", "init_failed", "pci_id"}`` facts from non-Xid lines.
    """
    occ: list[XidOccurrence] = []
    facts: dict[str, dict[str, str]] = defaultdict(dict)
    marks: list[PluginMark] = []
    last_gpu_at: str | None = None
    pending_off_bus: tuple[str, int, str | None] | None = None
    lost: dict[str, tuple[int, str | None]] = {}
    lines = text.splitlines()
    for n, raw in enumerate(lines, start=1):
        line = raw.rstrip()
        if pending_off_bus is not None:
            pci, start, at = pending_off_bus
            m_id = _PCI_ID.search(line)
            if m_id:
                facts[pci]["pci_id"] = m_id.group("id")
            if _OFF_BUS_END.search(line):
                occ.append(
                    XidOccurrence(
                        line=start,
                        at=at,
                        pci=pci,
                        xid=79,
                        message="GPU has fallen off the bus (multi-line NVRM message, no Xid line)",
                        inferred=True,
                    )
                )
                pending_off_bus = None
                continue
            if n - start > 3:
                pending_off_bus = None
        m = _XID_LINE.search(line)
        if m:
            occ.append(_occurrence(n, m))
            continue
        m2 = _GPU_AT.search(line)
        if m2:
            last_gpu_at = _key(m2.group("pci"))
            facts[last_gpu_at]["uuid"] = m2.group("uuid")
            continue
        m3 = _SERIAL.search(line)
        if m3 and last_gpu_at:
            facts[last_gpu_at]["serial"] = m3.group("sn")
            continue
        m4 = _INIT_FAIL.search(line)
        if m4:
            k = _key(m4.group("pci"))
            facts[k].setdefault("init_failed", m4.group("what").strip())
            continue
        m5 = _OFF_BUS_START.search(line)
        if m5:
            pre = line[: m5.start()]
            ts = _TS.search(pre)
            pending_off_bus = (_key(m5.group("pci")), n, ts.group("ts").strip() if ts else None)
            continue
        m6 = _PLUGIN.search(line)
        if m6:
            marks.append(PluginMark(line=n, xid=int(m6.group("xid")), device=m6.group("dev")))
            continue
        m7 = _PLUGIN_UNHEALTHY.search(line)
        if m7:
            marks.append(PluginMark(line=n, xid=None, device=m7.group("dev")))
            continue
        m8 = _GPU_LOST.search(line)
        if m8:
            ts = _TS.search(line[: m8.start()])
            lost.setdefault(_key(m8.group("pci")), (n, ts.group("ts").strip() if ts else None))
    # A lost GPU with no Xid 79 printed for it is read as one (it is the same fault).
    for pci, (n, at) in lost.items():
        if not any(o.pci == pci and o.xid == 79 for o in occ):
            occ.append(
                XidOccurrence(line=n, at=at, pci=pci, xid=79, message="GPU is lost", inferred=True)
            )
    occ.sort(key=lambda o: o.line)
    return occ, dict(facts), marks


def _occurrence(n: int, m: re.Match[str]) -> XidOccurrence:
    rest = (m.group("rest") or "").strip()
    pid: int | None = None
    name: str | None = None
    pm = _PID.match(rest)
    if pm:
        pid = _pid(pm.group("pid"))
        rest = rest[pm.end() :]
        nm = _NAME.match(rest)
        if nm:
            v = nm.group("name").strip()
            name = None if v.startswith("<") else v or None
            rest = rest[nm.end() :]
    cb = _CAUSED_BY.search(rest)
    sig = None
    mm = _MMU.search(rest)
    if mm:
        sig = f"{mm.group('client')} {mm.group('type')}"
    ts = _TS.search(m.group("pre") or "")
    return XidOccurrence(
        line=n,
        at=ts.group("ts").strip() if ts else None,
        pci=_key(m.group("pci")),
        xid=int(m.group("xid")),
        pid=pid,
        process=name,
        message=rest.strip(),
        caused_by=int(cb.group(1)) if cb else None,
        signature=sig,
    )


# -- analysis ---------------------------------------------------------------------------

_T = {
    "en": {
        "suspect_hw": "same GPU, {n} different processes: suspect the GPU (formats.md C.4; xid-04)",
        "app_many_gpus": "Xid {xid} from the same program on {n} GPUs ({gpus}): application bug, not the cards (xid-05)",
        "app_default": "default triage of Xid {xid}: application bug; the GPU stays usable",
        "hw": "Xid {xid} is a hardware-class error ({cause})",
        "driver": "Xid {xid} is a driver/firmware-class error",
        "info": "Xid {xid} is informational on its own",
        "benign": "the application was stopped or killed; usually benign",
        "act_ab": "A/B the same job on another GPU",
        "act_diag": "dcgmi diag -r 3 on {pci}",
        "act_cordon": "cordon if it reproduces only on this GPU",
        "act_no_drain": "no node action (do not drain); debug the job (compute-sanitizer)",
        "act_plugin": "restart the device-plugin pod after the reset (its unhealthy mark is sticky)",
        "act_restart": "restart the affected workload",
        "act_reset_remap": "schedule drain + GPU reset/reboot to apply the row remap",
        "act_offbus": [
            "cordon+drain the node",
            "power-cycle the node",
            "check BMC SEL / PCIe AER; RMA if it recurs",
        ],
        "act_rma": "cordon+drain the node, reboot once, RMA if it recurs",
        "v_rma": "DBE/remap failure: RMA candidate",
        "v_reboot": "fell off the bus: drain the node and power-cycle it",
        "v_reset": "drain and reset the GPU",
        "act_reset": "reset the GPU (nvidia-smi -r -i <bus id>) before reuse",
        "v_convenient": "reset when convenient (row remap pending)",
        "v_suspect": "suspect hardware: A/B test and diagnose",
        "v_init": "RmInitAdapter failed: GPU not initialized",
        "v_app": "application error; no GPU action",
        "v_none": "nothing to do for the GPU",
        "node_none": "No node action: application-class Xids only.",
        "node_drain": "Cordon and drain the node, then: {what}.",
        "followon": "follow-on of Xid {root}",
        "node_effect": "The node advertises {alloc} of {cap} nvidia.com/gpu: the device plugin took {n} GPU(s) out, and they stay out until the plugin restarts",
        "check": "check: {what}",
        "escalate": "escalate if: {what}",
    },
    "zh": {
        "suspect_hw": "同一块 GPU 上 {n} 个不同进程出错：怀疑 GPU 本身（formats.md C.4；xid-04）",
        "app_many_gpus": "同一程序在 {n} 块 GPU（{gpus}）上都出现 Xid {xid}：是应用 bug，不是卡坏了（xid-05）",
        "app_default": "Xid {xid} 的默认判断：应用 bug；GPU 仍可用",
        "hw": "Xid {xid} 属于硬件类错误（{cause}）",
        "driver": "Xid {xid} 属于驱动/固件类错误",
        "info": "Xid {xid} 单独出现时只是信息",
        "benign": "应用被停止或杀掉；通常无害",
        "act_ab": "把同一个作业放到另一块 GPU 上做 A/B 对比",
        "act_diag": "在 {pci} 上运行 dcgmi diag -r 3",
        "act_cordon": "如果只在这块 GPU 上复现，cordon 节点",
        "act_no_drain": "节点无需处理（不要 drain）；调试作业（compute-sanitizer）",
        "act_plugin": "重置后重启 device-plugin Pod（它的 unhealthy 标记不会自动恢复）",
        "act_restart": "重启受影响的工作负载",
        "act_reset_remap": "安排 drain + 重置 GPU/重启节点，使行重映射生效",
        "act_offbus": [
            "cordon 并 drain 节点",
            "对节点断电重启",
            "检查 BMC SEL / PCIe AER；复发则 RMA",
        ],
        "act_rma": "cordon 并 drain 节点，重启一次，复发则 RMA",
        "v_rma": "DBE/重映射失败：RMA 候选",
        "v_reboot": "从总线上掉线：drain 节点并断电重启",
        "v_reset": "drain 并重置 GPU",
        "act_reset": "重新使用前重置 GPU（nvidia-smi -r -i <bus id>）",
        "v_convenient": "方便时重置（行重映射待生效）",
        "v_suspect": "怀疑硬件：做 A/B 测试和诊断",
        "v_init": "RmInitAdapter 失败：GPU 未初始化",
        "v_app": "应用错误；GPU 无需处理",
        "v_none": "GPU 无需处理",
        "node_none": "节点无需处理：只有应用类 Xid。",
        "node_drain": "cordon 并 drain 节点，然后：{what}。",
        "followon": "Xid {root} 的后续错误",
        "node_effect": "节点只上报 {alloc}/{cap} 个 nvidia.com/gpu：Device Plugin 摘掉了 {n} 块 GPU，插件重启前不会恢复",
        "check": "检查：{what}",
        "escalate": "升级处理的条件：{what}",
    },
}

_VERDICT_RANK = [
    "no_action",
    "application",
    "reset_when_convenient",
    "suspect_hardware",
    "not_initialized",
    "drain_and_reset",
    "drain_and_reboot",
    "rma_candidate",
]


def _tx(lang: str) -> dict[str, Any]:
    return _T.get(lang, _T["en"])


def _collapse(occ: list[XidOccurrence]) -> dict[tuple[str, int], XidGroup]:
    """Group by (GPU, root Xid): follow-ons go to the root they name or, for 43/45/154
    without a named root, to the previous non-follow-on Xid on the same GPU."""
    groups: dict[tuple[str, int], XidGroup] = {}
    last_root: dict[str, int] = {}

    def group(pci: str, xid: int, line: int) -> XidGroup:
        g = groups.get((pci, xid))
        if g is None:
            g = XidGroup(pci=pci, xid=xid, info=lookup_xid(xid), first_line=line)
            groups[(pci, xid)] = g
        return g

    for o in occ:
        root: int | None = o.caused_by
        if root is None and o.xid in FOLLOW_ON_XIDS and o.xid != 43:
            root = last_root.get(o.pci)
        if root is None and o.xid == 43 and last_root.get(o.pci) in (13, 31):
            root = last_root[o.pci]
        if root is not None and root != o.xid:
            g = group(o.pci, root, o.line)
            g.followons[o.xid] = g.followons.get(o.xid, 0) + 1
            if o.pid is not None and o.pid not in g.pids:
                g.pids.append(o.pid)
            continue
        g = group(o.pci, o.xid, o.line)
        g.count += 1
        g.inferred = g.inferred or o.inferred
        if o.pid is not None and o.pid not in g.pids:
            g.pids.append(o.pid)
        if o.process and o.process not in g.processes:
            g.processes.append(o.process)
        if o.signature and o.signature not in g.signatures:
            g.signatures.append(o.signature)
        if o.xid not in FOLLOW_ON_XIDS:
            last_root[o.pci] = o.xid
    return groups


def explain_xid_text(text: str, lang: str = "en") -> XidExplanation:
    """Parse pasted dmesg / journal / device-plugin text and explain every Xid in it.

    Keys everything by PCI address, collapses follow-on Xids into their root, tells
    "same GPU, many processes" (suspect hardware) from "many GPUs, same program"
    (application), and gives per-GPU verdicts and one node action.

    Args:
        text: Any amount of log text (non-Xid lines are ignored).
        lang: ``zh`` or ``en`` for the words.

    Returns:
        An :class:`XidExplanation` (``found`` is False when there was nothing to explain).
    """
    tx = _tx(lang)
    occ, facts, marks = parse_xid_lines(text)
    groups = _collapse(occ)

    # Relocalise catalogue text.
    for g in groups.values():
        g.info = lookup_xid(g.xid, lang)

    # Cross-GPU view: the same application-class Xid from the same program on many GPUs.
    findings: list[str] = []
    by_xid_prog: dict[tuple[int, str], set[str]] = defaultdict(set)
    for g in groups.values():
        for p in g.processes or ["?"]:
            by_xid_prog[(g.xid, p)].add(g.pci)
    app_many: set[tuple[str, int]] = set()
    for (xid, prog), pcis in by_xid_prog.items():
        if xid in APP_CLASS_XIDS and len(pcis) >= 2 and prog != "?":
            findings.append(
                tx["app_many_gpus"].format(xid=xid, n=len(pcis), gpus=", ".join(sorted(pcis)))
            )
            app_many.update((p, xid) for p in pcis)

    for g in groups.values():
        _judge(g, (g.pci, g.xid) in app_many, lang)
        if g.likely == "suspect_hardware":
            findings.append(f"{g.pci}: Xid {g.xid}: " + tx["suspect_hw"].format(n=len(g.pids)))

    # Per GPU.
    gpu_keys = list(dict.fromkeys([g.pci for g in groups.values()] + list(facts)))
    reports: list[GpuXidReport] = []
    for pci in gpu_keys:
        f = facts.get(pci, {})
        gs = sorted(
            (g for g in groups.values() if g.pci == pci),
            key=lambda g: (-_severity_rank(g), g.first_line),
        )
        rep = GpuXidReport(
            pci=pci,
            uuid=f.get("uuid"),
            serial=f.get("serial"),
            pci_id=f.get("pci_id"),
            groups=gs,
            init_failed=f.get("init_failed"),
        )
        _gpu_verdict(rep, lang)
        reports.append(rep)

    # Device-plugin marks: map UUIDs to PCI where the preamble told us.
    uuid_to_pci = {r.uuid: r.pci for r in reports if r.uuid}
    for mk in marks:
        mk_pci = uuid_to_pci.get(mk.device)
        target = next((r for r in reports if r.pci == mk_pci), None) if mk_pci else None
        if target is None and len(reports) == 1:
            target = reports[0]
        if target is not None and mk.xid is not None and mk.xid not in target.plugin_unhealthy:
            target.plugin_unhealthy.append(mk.xid)
    for r in reports:
        if r.plugin_unhealthy or any(
            g.xid not in PLUGIN_SKIPPED_XIDS and g.likely in ("hardware", "driver")
            for g in r.groups
        ):
            for g in r.groups:
                if g.likely in ("hardware", "driver") and tx["act_plugin"] not in g.actions:
                    g.actions.append(tx["act_plugin"])

    reports.sort(key=lambda r: (-_VERDICT_RANK.index(r.verdict), r.pci))
    node = paste_evidence(text)
    cap = node.gpu_capacity[0] if len(node.gpu_capacity) == 1 else None
    alloc = node.gpu_allocatable[0] if len(node.gpu_allocatable) == 1 else None
    node_effect = node_effect_text = ""
    if cap is not None and alloc is not None:
        node_effect = f"allocatable nvidia.com/gpu {alloc}/{cap}"
        if alloc < cap:
            node_effect_text = tx["node_effect"].format(alloc=alloc, cap=cap, n=cap - alloc)
    roots = list(dict.fromkeys(o.caused_by or o.xid for o in occ))
    roots = [x for x in roots if any(g.xid == x for g in groups.values())]
    return XidExplanation(
        lang=lang,
        occurrences=occ,
        root_xids=roots,
        gpus=reports,
        findings=findings,
        plugin_marks=marks,
        node_action=_node_action(reports, lang),
        gpu_capacity=cap,
        gpu_allocatable=alloc,
        node_effect=node_effect,
        node_effect_text=node_effect_text,
    )


def _severity_rank(g: XidGroup) -> int:
    order = {
        "informational": 0,
        "application_bug": 1,
        "driver": 2,
        "suspect_hardware": 3,
        "hardware": 4,
    }
    return order.get(g.likely, 0)


def _judge(g: XidGroup, many_gpus_same_program: bool, lang: str) -> None:
    tx = _tx(lang)
    info = g.info
    first = info.likely[0] if info.likely else "application"
    if g.xid == 43:
        g.likely = "informational"
        g.reason = tx["benign"]
        g.actions = [info.action]
        return
    if g.xid in APP_CLASS_XIDS or first == "application":
        if many_gpus_same_program:
            g.likely = "application_bug"
            g.reason = tx["app_default"].format(xid=g.xid)
            g.actions = [tx["act_no_drain"]]
        elif len(g.pids) >= SUSPECT_HW_MIN_PIDS or len(g.processes) >= SUSPECT_HW_MIN_PIDS:
            g.likely = "suspect_hardware"
            g.reason = tx["suspect_hw"].format(n=max(len(g.pids), len(g.processes)))
            g.actions = [tx["act_ab"], tx["act_diag"].format(pci=g.pci), tx["act_cordon"]]
        else:
            g.likely = "application_bug"
            g.reason = tx["app_default"].format(xid=g.xid)
            g.actions = [tx["act_no_drain"], info.action]
        return
    if first == "hardware":
        g.likely = "hardware"
        g.reason = tx["hw"].format(xid=g.xid, cause=info.cause_class or "hardware")
    elif first == "driver":
        g.likely = "driver"
        g.reason = tx["driver"].format(xid=g.xid)
    else:
        g.likely = "informational"
        g.reason = tx["info"].format(xid=g.xid)
    if g.xid == 79:
        g.actions = list(tx["act_offbus"])
    elif g.xid == 94:
        g.actions = [tx["act_restart"], tx["act_reset_remap"]]
    else:
        g.actions = [info.action]


def _gpu_verdict(rep: GpuXidReport, lang: str) -> None:
    tx = _tx(lang)
    xids = {g.xid for g in rep.groups}
    likely = {g.likely for g in rep.groups}
    if 64 in xids or 140 in xids or (48 in xids and 63 not in xids and 64 in xids):
        rep.verdict, rep.verdict_text = "rma_candidate", tx["v_rma"]
        if 48 in xids:
            rep.verdict_text = "DBE + " + (
                "页退役失败 -> RMA 候选" if lang == "zh" else "retirement failure -> RMA candidate"
            )
    elif 79 in xids:
        rep.verdict, rep.verdict_text = "drain_and_reboot", tx["v_reboot"]
    elif rep.init_failed:
        rep.verdict, rep.verdict_text = "not_initialized", tx["v_init"]
    elif any(
        g.info.bucket in ("RESET_GPU", "RESTART_BM") or g.xid in (48, 95)
        for g in rep.groups
        if g.likely in ("hardware", "driver")
    ):
        rep.verdict, rep.verdict_text = "drain_and_reset", tx["v_reset"]
    elif "suspect_hardware" in likely:
        rep.verdict, rep.verdict_text = "suspect_hardware", tx["v_suspect"]
    elif 94 in xids or 63 in xids or 92 in xids:
        rep.verdict, rep.verdict_text = "reset_when_convenient", tx["v_convenient"]
    elif "application_bug" in likely:
        rep.verdict, rep.verdict_text = "application", tx["v_app"]
    else:
        rep.verdict, rep.verdict_text = "no_action", tx["v_none"]
    if rep.init_failed and rep.verdict != "not_initialized":
        rep.verdict_text += "; " + tx["v_init"]


def _node_action(reports: list[GpuXidReport], lang: str) -> str:
    tx = _tx(lang)
    if not reports:
        return ""
    return str(_node_action_text(reports, tx))


def _node_action_text(reports: list[GpuXidReport], tx: dict[str, Any]) -> Any:
    worst = reports[0].verdict
    if worst in ("rma_candidate", "not_initialized"):
        return tx["node_drain"].format(what=tx["act_rma"].split(",", 1)[-1].strip())
    if worst == "drain_and_reboot":
        return tx["node_drain"].format(what="; ".join(tx["act_offbus"][1:]))
    if worst == "drain_and_reset":
        return tx["node_drain"].format(what=tx["act_reset"])
    if worst == "suspect_hardware":
        return reports[0].verdict_text
    if worst == "reset_when_convenient":
        return tx["v_convenient"]
    return tx["node_none"]


def xid_event_text(
    xid: int, gpu_index: int | None, pci_bus_id: str | None, lang: str = "en"
) -> str:
    """One timeline line for an Xid event: number, GPU, meaning, likely cause, action."""
    from cockpit.i18n import t

    info = lookup_xid(xid, lang)
    where = f"GPU {gpu_index}" if gpu_index is not None else "GPU ?"
    if pci_bus_id:
        where += f" ({normalize_pci(pci_bus_id)})"
    likely = "/".join(t(f"explain.value.{c}", lang) for c in info.likely) if info.likely else "?"
    if lang == "zh":
        return f"Xid {xid} @ {where}：{info.name}；可能原因：{likely}；建议：{info.action}"
    return f"Xid {xid} on {where}: {info.name}; likely: {likely}; action: {info.action}"
