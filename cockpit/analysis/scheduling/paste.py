"""A pasted FailedScheduling text explained without cluster access (``cockpit explain``):
what else the paste shows (kubectl tables, YAML, plugin logs) and the verdict it supports
(pure, no I/O)."""

from __future__ import annotations

import contextlib
import re
from typing import Any

from pydantic import BaseModel, Field

from cockpit.analysis.scheduling.message import (
    _NODES_AVAIL,
    GPU,
    PreemptionVerdict,
    ReasonClass,
    SchedulingMessage,
    parse_failed_scheduling,
)
from cockpit.analysis.scheduling.nodes import (
    _toleration_yaml,
    tolerates,
)
from cockpit.commandline import arg, namespace_flag
from cockpit.i18n import t
from cockpit.models.kube import (
    Taint,
    Toleration,
)


# -- explanation without cluster state (cockpit explain) ------------------------------------------
class Finding(BaseModel):
    """A user-facing finding: an i18n key and its parameters (rendered with :meth:`text`)."""

    key: str
    params: dict[str, Any] = Field(default_factory=dict)
    severity: str = "info"  # info | warn | problem

    def text(self, lang: str) -> str:
        """The finding in ``lang``."""
        return t(self.key, lang, **self.params)


class GangMessage(BaseModel):
    """One Volcano ``{X}/{Y} tasks in gang unschedulable: ...`` message.

    Attributes:
        text: The message, from ``X/Y`` to the end of its line (quotes stripped).
        unready: ``X``: pods still missing for ``minAvailable`` (condition form) or
            pending pods (event form).
        tasks_known: ``Y``: member pods (tasks) the scheduler knows; 0 = it sees none.
        min_available: ``minAvailable`` when the message states it (``N minAvailable``),
            or ``X`` when ``Y`` is 0 (no task can be schedulable then); else ``None``.
    """

    text: str
    unready: int
    tasks_known: int
    min_available: int | None = None


class DaemonSetRow(BaseModel):
    """A device-plugin row of a pasted ``kubectl get ds`` table (counts in pods)."""

    name: str
    desired: int
    ready: int | None = None


class PasteEvidence(BaseModel):
    """What a pasted text shows besides the scheduler's message (kubectl output, YAML,
    plugin logs). Every field is empty/``None`` when the paste does not show it.

    Attributes:
        gangs: Volcano gang messages, in paste order.
        scheduler_name: The pod's ``schedulerName`` (last one shown).
        group_name: The pod's ``scheduling.k8s.io/group-name`` (or Volcano's) annotation.
        plugin_daemonsets: NVIDIA device-plugin DaemonSets of a ``kubectl get ds`` table.
        gpu_capacity: ``nvidia.com/gpu`` under ``Capacity:`` of the nodes shown (devices).
        gpu_allocatable: ``nvidia.com/gpu`` under ``Allocatable:`` (devices).
        gpu_request: The pod's ``nvidia.com/gpu`` (devices): the per-container
            ``Limits:`` summed over containers, or the ``Requests:`` summed, whichever is
            larger (the scheduler fits the pod's sum, Kubernetes "Resource Management for
            Pods and Containers").
        gpu_request_per_container: The per-container figures that sum, in paste order.
        node_gpus: ``{node: nvidia.com/gpu}`` of a pasted ``kubectl get nodes -o
            custom-columns=NAME:…,GPU:….allocatable…`` table; ``None`` for ``<none>`` (the
            node advertises no GPU resource at all).
        no_devices_found: The device plugin logged ``No devices found``.
        taints: Node taints shown (``key=value:Effect``).
        tolerations: Tolerations shown as YAML flow maps (``{key: k, operator: Equal, ...}``).
    """

    gangs: list[GangMessage] = Field(default_factory=list)
    scheduler_name: str = ""
    group_name: str = ""
    plugin_daemonsets: list[DaemonSetRow] = Field(default_factory=list)
    gpu_capacity: list[int] = Field(default_factory=list)
    gpu_allocatable: list[int] = Field(default_factory=list)
    gpu_request: int | None = None
    gpu_request_per_container: list[int] = Field(default_factory=list)
    node_gpus: dict[str, int | None] = Field(default_factory=dict)
    no_devices_found: bool = False
    taints: list[Taint] = Field(default_factory=list)
    tolerations: list[Toleration] = Field(default_factory=list)


_GANG_MSG = re.compile(r"(\d+)/(\d+) tasks in gang unschedulable\b[^\n]*", re.IGNORECASE)
_MIN_AVAILABLE = re.compile(r"(\d+) minAvailable", re.IGNORECASE)
_SCHEDULER_NAME = re.compile(r"\bschedulerName[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9][\w.-]*)")
_GROUP_NAME = re.compile(
    r"(?:scheduling\.k8s\.io|scheduling\.volcano\.sh)/group-name[\"']?\s*[:=]\s*[\"']?"
    r"([A-Za-z0-9][\w.-]*)"
)
_SECTION = re.compile(r"^(\s*)(Capacity|Allocatable|Limits|Requests):\s*(.*)$", re.IGNORECASE)
_GPU_QTY = re.compile(r"(?<![\w.])nvidia\.com/gpu[\"']?:\s*[\"']?(\d+)\b")
_GPU_COLUMN = re.compile(r"GPU|nvidia\.com", re.IGNORECASE)
_TAINT_TEXT = re.compile(
    r"\btaints?:\s*([A-Za-z0-9][\w./-]*)(?:=([\w.-]*))?:(NoSchedule|NoExecute|PreferNoSchedule)\b",
    re.IGNORECASE,
)
_FLOW_MAP = re.compile(r"\{([^{}]*\boperator:[^{}]*)\}")


def paste_evidence(text: str) -> PasteEvidence:
    """Collect what :class:`PasteEvidence` lists from a pasted text. Never raises.

    Formats: ``kubectl describe node`` (``Capacity:``/``Allocatable:`` blocks, or both on
    one line), ``kubectl describe pod`` (``Limits:``/``Requests:``), ``kubectl get ds``
    (a header with ``NAME`` and ``DESIRED``; ``-A`` adds ``NAMESPACE``), pod YAML/JSON
    (``schedulerName``, group-name annotation), node taints as ``kubectl describe node``
    prints them (``Taints: key=value:Effect``), and Volcano's gang message (module docs).
    """
    ev = PasteEvidence()
    # A helper must not take explain down: keep what was found before an error.
    with contextlib.suppress(Exception):
        _collect(text, ev)
    return ev


def _collect(text: str, ev: PasteEvidence) -> None:
    for m in _GANG_MSG.finditer(text):
        body = m.group(0).strip().rstrip("'\"").strip()
        unready, tasks = int(m.group(1)), int(m.group(2))
        mm = _MIN_AVAILABLE.search(body)
        min_av = int(mm.group(1)) if mm else (unready if tasks == 0 and unready > 0 else None)
        ev.gangs.append(
            GangMessage(text=body, unready=unready, tasks_known=tasks, min_available=min_av)
        )
    names = _SCHEDULER_NAME.findall(text)
    ev.scheduler_name = names[-1] if names else ""
    groups = _GROUP_NAME.findall(text)
    ev.group_name = groups[-1] if groups else ""
    ev.no_devices_found = "no devices found" in text.lower()
    for tm in _TAINT_TEXT.finditer(text):
        ev.taints.append(Taint(key=tm.group(1), value=tm.group(2) or "", effect=tm.group(3)))
    for fm in _FLOW_MAP.finditer(text):
        pairs = {}
        for part in fm.group(1).split(","):
            k, sep, v = part.partition(":")
            if sep:
                pairs[k.strip().strip("\"'")] = v.strip().strip("\"'")
        if "key" in pairs or pairs.get("operator") == "Exists":
            ev.tolerations.append(
                Toleration(
                    key=pairs.get("key", ""),
                    operator=pairs.get("operator") or "Equal",
                    value=pairs.get("value", ""),
                    effect=pairs.get("effect", ""),
                )
            )
    _collect_tables(text, ev)


def _collect_tables(text: str, ev: PasteEvidence) -> None:
    """The line-oriented parts of a paste: ``kubectl get ds`` and ``get nodes -o
    custom-columns`` tables, ``Capacity``/``Allocatable``/``Limits``/``Requests`` blocks."""
    section, indent = "", -1
    header: list[str] | None = None
    node_header: tuple[int, str] | None = None
    last_cmd = ""
    sums: dict[str, list[int]] = {"Limits": [], "Requests": []}
    for line in text.splitlines():
        # kubectl get ds table
        cols = line.split()
        if line.lstrip().startswith("$"):
            last_cmd = line.lower()
        if "NAME" in cols and "DESIRED" in cols:
            header = cols
            continue
        # kubectl get nodes -o custom-columns=NAME:…,GPU:… (allocatable unless the
        # command shown asks for capacity)
        if cols and cols[0] == "NAME" and len(cols) >= 2 and "DESIRED" not in cols:
            gi = next((i for i, c in enumerate(cols) if _GPU_COLUMN.search(c)), -1)
            node_header = (gi, "capacity" if "capacity" in last_cmd else "allocatable")
            if gi < 0:
                node_header = None
            continue
        if node_header is not None:
            gi, kind = node_header
            if not cols or line.lstrip().startswith(("$", "#")) or len(cols) <= gi:
                node_header = None
            else:
                val = cols[gi]
                n = int(val) if val.isdigit() else None
                if n is not None or val == "<none>":
                    ev.node_gpus[cols[0]] = n
                    if n is not None:
                        (ev.gpu_capacity if kind == "capacity" else ev.gpu_allocatable).append(n)
                continue
        if header is not None:
            if not cols or line.lstrip().startswith(("$", "#")):
                header = None
            elif len(cols) > header.index("DESIRED"):
                name = cols[header.index("NAME")]
                low = name.lower()
                desired = cols[header.index("DESIRED")]
                if desired.isdigit() and (
                    "nvidia-device-plugin" in low or ("device-plugin" in low and "nvidia" in low)
                ):
                    ri = header.index("READY") if "READY" in header else -1
                    ready = cols[ri] if 0 <= ri < len(cols) else ""
                    ev.plugin_daemonsets.append(
                        DaemonSetRow(
                            name=name,
                            desired=int(desired),
                            ready=int(ready) if ready.isdigit() else None,
                        )
                    )
        # Capacity / Allocatable / Limits / Requests blocks
        sm = _SECTION.match(line)
        if sm:
            section, indent = sm.group(2).capitalize(), len(sm.group(1))
            rest = sm.group(3)
        else:
            stripped = line.strip()
            if not stripped or len(line) - len(line.lstrip()) <= indent:
                section, indent = "", -1
            rest = line
        qm = _GPU_QTY.search(rest) if section else None
        if qm:
            n = int(qm.group(1))
            if section == "Capacity":
                ev.gpu_capacity.append(n)
            elif section == "Allocatable":
                ev.gpu_allocatable.append(n)
            else:
                sums[section].append(n)
    best = max(sums.values(), key=sum)
    ev.gpu_request = sum(best) if best else None
    ev.gpu_request_per_container = best


def _edit_distance(a: str, b: str) -> int:
    """Damerau–Levenshtein distance (optimal string alignment), for short names."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[-1]


VOLCANO = "volcano"
TYPO_DISTANCE = 2
"""A ``schedulerName`` at most this many edits (insertions, deletions, substitutions,
adjacent swaps) from ``volcano`` is reported as a typo of it (``vocalno``: 2). Two edits
catch one swapped pair plus one slip while no real scheduler name in common use
(``default-scheduler``, ``yunikorn``, ``kai-scheduler``, ``koord-scheduler``) comes that
close."""


class SchedulingExplanation(BaseModel):
    """What a FailedScheduling text says on its own (for ``cockpit explain``).

    Attributes:
        category: Always ``pod_pending``.
        subtype: ``gang_not_ready`` for a Volcano gang message, else ``None``.
        message: The parsed message (the scheduler's own line, not the whole paste).
        reasons: ``{reason text: node count}``.
        classes: ``{class: node count}``.
        preemption: ``{verdict text: node count}``.
        preemption_helpful: Whether evicting lower-priority pods could make room: False
            when the message has a preemption clause (both verdicts are
            ``UnschedulableAndUnresolvable`` upstream, module docs), ``None`` without one.
        preemption_possible: Same value, under the name the cases use.
        min_available: The gang's ``minAvailable`` (pods), when a gang message shows it.
        tasks_known: Member pods the gang scheduler knows (``Y`` of ``X/Y tasks``).
        scheduler_name: The pod's ``schedulerName`` when the paste shows it.
        device_plugin_desired: Desired pods of the device-plugin DaemonSet(s) in a pasted
            ``kubectl get ds`` table (``None`` when not pasted).
        gpu_allocatable: ``nvidia.com/gpu`` allocatable of the pasted nodes (devices).
        likely: Most likely cause code (``device_plugin_or_capacity``, ``missing_toleration``…).
        findings: Explanations, in order.
        commands: Commands to confirm (from the handbook and the classes found).
    """

    category: str = "pod_pending"
    subtype: str | None = None
    message: SchedulingMessage
    reasons: dict[str, int] = Field(default_factory=dict)
    classes: dict[str, int] = Field(default_factory=dict)
    preemption: dict[str, int] = Field(default_factory=dict)
    preemption_helpful: bool | None = None
    preemption_possible: bool | None = None
    min_available: int | None = None
    tasks_known: int | None = None
    scheduler_name: str | None = None
    device_plugin_desired: int | None = None
    gpu_allocatable: list[int] = Field(default_factory=list)
    likely: str = "unknown"
    findings: list[Finding] = Field(default_factory=list)
    commands: list[str] = Field(default_factory=list)


def _likely_from_message(msg: SchedulingMessage) -> str:
    classes = msg.classes()
    if ReasonClass.GANG in classes:
        return "gang_not_ready"
    if ReasonClass.QUEUE in classes:
        return "queue_quota"
    if ReasonClass.QUOTA in classes:
        return "quota_exceeded"
    if ReasonClass.TAINT in classes and not (classes & _INSUFFICIENT_CLASSES):
        return "missing_toleration"
    if classes & {
        ReasonClass.INSUFFICIENT_GPU,
        ReasonClass.INSUFFICIENT_GPU_SHARED,
        ReasonClass.INSUFFICIENT_MIG,
    }:
        if msg.preemption_helpful is True:
            return "capacity_or_priority"
        return "device_plugin_or_capacity"
    if classes & _INSUFFICIENT_CLASSES:
        return "capacity_or_priority" if msg.preemption_helpful else "insufficient_resources"
    if ReasonClass.NODE_AFFINITY in classes:
        return "node_selector_mismatch"
    if ReasonClass.UNSCHEDULABLE in classes:
        return "nodes_cordoned"
    if ReasonClass.VOLUME in classes:
        return "volume_binding"
    if classes & {
        ReasonClass.POD_AFFINITY,
        ReasonClass.POD_ANTI_AFFINITY,
        ReasonClass.TOPOLOGY_SPREAD,
    }:
        return "pod_affinity"
    if ReasonClass.TOO_MANY_PODS in classes:
        return "too_many_pods"
    return "unknown"


_INSUFFICIENT_CLASSES = {
    ReasonClass.INSUFFICIENT_GPU,
    ReasonClass.INSUFFICIENT_GPU_SHARED,
    ReasonClass.INSUFFICIENT_MIG,
    ReasonClass.INSUFFICIENT_CPU,
    ReasonClass.INSUFFICIENT_MEMORY,
    ReasonClass.INSUFFICIENT_EPHEMERAL,
    ReasonClass.INSUFFICIENT_OTHER,
}


def reason_findings(msg: SchedulingMessage) -> list[Finding]:
    """One finding per reason class present, plus the preemption verdict."""
    out: list[Finding] = []
    for r in msg.reasons:
        params: dict[str, Any] = {
            "count": r.count if r.count is not None else "?",
            "resource": r.resource,
            "taint": r.taint or "?",
            "text": r.text,
        }
        out.append(Finding(key=f"kube.reason.{r.cls.value}", params=params, severity="problem"))
    helpful = msg.preemption_helpful
    if helpful is False:
        out.append(Finding(key="kube.preemption.not_helpful", severity="problem"))
    elif helpful is True:
        out.append(Finding(key="kube.preemption.no_victims", severity="warn"))
    return out


def base_commands(pod: str = "<pod>", namespace: str = "") -> list[str]:
    """The handbook's three commands (seed 000, 场景五), with the pod filled in."""
    ns = namespace_flag(namespace)
    return [
        f"kubectl describe pod {arg(pod)}{ns}",
        "kubectl get nodes -o custom-columns=NAME:.metadata.name,GPU:.status.allocatable.nvidia\\.com/gpu",
        f"kubectl get events{ns} --sort-by=.lastTimestamp",
    ]


# A row of an events table: ``kubectl get events`` (``LAST SEEN TYPE REASON OBJECT
# MESSAGE``) or the ``Events:`` of ``kubectl describe`` (``Type Reason Age From Message``).
EVENT_ROW = re.compile(r"^\s*(?:\S+\s+){0,2}(Normal|Warning)\s+([A-Z][A-Za-z]+)\b")
# Scheduler-side messages besides ``N/M nodes are available`` (quota, Kueue).
_OTHER_MESSAGE = re.compile(
    r"couldn't assign flavors|insufficient unused quota|exceeded quota|"
    r"is forbidden: exceeded quota",
    re.IGNORECASE,
)
# Kueue admitted the workload after all (kueue ``QuotaReserved`` / ``Admitted`` events).
_QUOTA_RESERVED = re.compile(r"\b(QuotaReserved|Admitted)\b")


def event_rows(text: str) -> list[tuple[int, str, str, str]]:
    """``(line index, type, reason, row text)`` of every events-table row of a paste."""
    out = []
    for i, ln in enumerate(text.splitlines()):
        m = EVENT_ROW.match(ln)
        if m:
            out.append((i, m.group(1), m.group(2), ln.strip()))
    return out


def _message_of(text: str, ev: PasteEvidence) -> str:
    """The scheduler's own message inside a paste: the gang message that says the most
    (``Y = 0`` first), else the last ``N/M nodes are available`` line (the newest event
    in ``kubectl describe``/``get events`` order), else the last quota / Kueue message,
    with the lines that continue it up to a blank line, a ``$`` command, a ``#`` comment
    or the next events-table row (each row is one event); else the whole text."""
    if ev.gangs:
        return next((g for g in ev.gangs if g.tasks_known == 0), ev.gangs[0]).text
    lines = text.splitlines()
    hits = [i for i, ln in enumerate(lines) if _NODES_AVAIL.search(ln)] or [
        i for i, ln in enumerate(lines) if _OTHER_MESSAGE.search(ln)
    ]
    if not hits:
        return text
    out = [lines[hits[-1]]]
    for ln in lines[hits[-1] + 1 :]:
        if (
            not ln.strip()
            or ln.lstrip().startswith(("$", "#"))
            or _SECTION.match(ln)
            or EVENT_ROW.match(ln)
        ):
            break
        out.append(ln)
    return "\n".join(out)


_GPU_SHORT = {
    ReasonClass.INSUFFICIENT_GPU,
    ReasonClass.INSUFFICIENT_GPU_SHARED,
    ReasonClass.INSUFFICIENT_MIG,
}


def explain_failed_scheduling(text: str) -> SchedulingExplanation:
    """Explain a pasted FailedScheduling message without cluster access. Never raises.

    The paste may hold more than the message (``kubectl describe``, ``kubectl get ds``,
    YAML, plugin logs); :func:`paste_evidence` reads it and the ``likely`` cause uses it
    the way the live ``pending`` analysis uses the cluster (formats.md §A4, §C.5):

    - a Volcano ``X/0 tasks`` message, or a ``schedulerName`` other than ``volcano`` next
      to a gang message: ``gang_scheduler_mismatch`` (module docs);
    - ``Insufficient nvidia.com/gpu`` with a pasted device-plugin DaemonSet at
      ``DESIRED 0``: ``device_plugin_not_scheduled``;
    - with pasted node ``Allocatable nvidia.com/gpu`` all 0, or the plugin's
      ``No devices found``: ``device_plugin_not_reporting``; allocatable > 0 below the
      pasted request: ``request_exceeds_node_capacity``; allocatable > 0 otherwise:
      ``capacity_or_priority``;
    - with nothing pasted about the nodes, ``Insufficient nvidia.com/gpu`` on every node
      and one preemption verdict for all of them: ``device_plugin_not_reporting`` (a
      silent plugin produces no error of its own and shows up exactly so, formats.md
      §A4; "No preemption victims" only says no lower-priority pod runs there, module
      docs). Mixed verdicts on a scheduler that tells them apart mean some nodes have
      allocatable ≥ the request: ``capacity_or_priority``. Otherwise
      ``device_plugin_or_capacity`` (only ``allocatable`` tells the two apart).
    """
    ev = paste_evidence(text)
    msg = parse_failed_scheduling(_message_of(text, ev))
    exp = SchedulingExplanation(message=msg)
    if msg.preemption:
        exp.preemption_helpful = exp.preemption_possible = False
    for r in msg.reasons:
        exp.reasons[r.text] = exp.reasons.get(r.text, 0) + (r.count or 0)
        exp.classes[r.cls.value] = exp.classes.get(r.cls.value, 0) + (r.count or 0)
    for p in msg.preemption:
        exp.preemption[p.text] = exp.preemption.get(p.text, 0) + (p.count or 0)
    exp.scheduler_name = ev.scheduler_name or None
    exp.gpu_allocatable = ev.gpu_allocatable
    if ev.plugin_daemonsets:
        exp.device_plugin_desired = sum(d.desired for d in ev.plugin_daemonsets)
    exp.findings = reason_findings(msg)
    exp.likely = _paste_verdict(msg, ev, exp, _likely_from_message(msg))
    if exp.likely in ("queue_quota", "quota_exceeded"):
        reserved = [r for r in event_rows(text) if _QUOTA_RESERVED.fullmatch(r[2])]
        if reserved:
            # The paste shows the quota reserved after all: "quota used up" is contradicted.
            exp.findings.append(
                Finding(
                    key="kube.finding.quota_reserved",
                    params={"reason": reserved[-1][2], "line": reserved[-1][0] + 1},
                    severity="warn",
                )
            )
            exp.likely = "quota_reserved_since"
    exp.findings.append(Finding(key=f"kube.likely.{exp.likely}", severity="problem"))
    exp.commands = base_commands() + _class_commands(msg, "<pod>", "", [])
    if exp.likely.startswith("device_plugin"):
        exp.commands.append("kubectl get ds -A -l app.kubernetes.io/name=nvidia-device-plugin")
    if exp.likely.startswith("gang"):
        exp.commands += [
            "kubectl get podgroups -A -o yaml",
            "kubectl get pod <pod> -o jsonpath='{.spec.schedulerName} "
            "{.metadata.annotations.scheduling\\.k8s\\.io/group-name}'",
        ]
    exp.commands = list(dict.fromkeys(exp.commands))
    return exp


def _paste_verdict(
    msg: SchedulingMessage, ev: PasteEvidence, exp: SchedulingExplanation, likely: str
) -> str:
    """Refine the message-only ``likely`` with what else the paste shows (see
    :func:`explain_failed_scheduling`); appends the findings that support it."""
    f = exp.findings
    if ev.gangs:
        exp.subtype = "gang_not_ready"
        primary = next((g for g in ev.gangs if g.tasks_known == 0), ev.gangs[0])
        exp.tasks_known = primary.tasks_known
        exp.min_available = primary.min_available
        if primary.tasks_known == 0:
            f.append(
                Finding(
                    key="kube.finding.gang_sees_no_pods",
                    params={"scheduler": ev.scheduler_name or "?"},
                    severity="problem",
                )
            )
            likely = "gang_scheduler_mismatch"
        name = ev.scheduler_name
        if name and name != VOLCANO:
            f.append(
                Finding(
                    key="kube.finding.scheduler_name",
                    params={"scheduler": name},
                    severity="problem",
                )
            )
            if _edit_distance(name.lower(), VOLCANO) <= TYPO_DISTANCE:
                f.append(
                    Finding(
                        key="kube.finding.scheduler_name_typo",
                        params={"scheduler": name, "expected": VOLCANO},
                        severity="problem",
                    )
                )
            likely = "gang_scheduler_mismatch"
        if ev.group_name:
            f.append(
                Finding(
                    key="kube.finding.group_name", params={"group": ev.group_name}, severity="info"
                )
            )
    if msg.classes() & _GPU_SHORT:
        likely = _gpu_verdict(msg, ev, f, likely)
    for taint in ev.taints:
        if taint.effect not in ("NoSchedule", "NoExecute"):
            continue
        for tol in ev.tolerations:
            if tol.key == taint.key and not tolerates([tol], taint):
                f.append(
                    Finding(
                        key="kube.finding.toleration_mismatch",
                        params={
                            "taint": taint.text(),
                            "toleration": f"{{key: {tol.key}, operator: {tol.operator}, "
                            f"value: {tol.value}}}",
                            "yaml": _toleration_yaml(taint.text()),
                        },
                        severity="problem",
                    )
                )
    return likely


def _gpu_verdict(msg: SchedulingMessage, ev: PasteEvidence, f: list[Finding], likely: str) -> str:
    dead = [d for d in ev.plugin_daemonsets if d.desired == 0]
    if dead:
        f.append(
            Finding(
                key="kube.finding.plugin_ds_desired_zero",
                params={"names": ", ".join(d.name for d in dead)},
                severity="problem",
            )
        )
        return "device_plugin_not_scheduled"
    alloc = ev.gpu_allocatable
    if (alloc and max(alloc) == 0) or (ev.no_devices_found and not any(alloc)):
        f.append(
            Finding(
                key="kube.finding.plugin_not_reporting",
                params={
                    "nodes": f"{GPU}: " + ", ".join(str(a) for a in alloc)
                    if alloc
                    else "No devices found"
                },
                severity="problem",
            )
        )
        return "device_plugin_not_reporting"
    if alloc:
        need = ev.gpu_request
        if len(ev.gpu_request_per_container) > 1:
            parts = ev.gpu_request_per_container
            f.append(
                Finding(
                    key="kube.finding.request_summed",
                    params={"parts": " + ".join(map(str, parts)), "total": sum(parts)},
                    severity="info",
                )
            )
        if ev.node_gpus:
            f.append(
                Finding(
                    key="kube.finding.plugin_reporting",
                    params={
                        "nodes": ", ".join(
                            f"{k}={'none' if v is None else v}" for k, v in ev.node_gpus.items()
                        )
                    },
                    severity="info",
                )
            )
        if need and max(alloc) < need:
            f.append(
                Finding(
                    key="kube.finding.request_too_large",
                    params={"need": need, "max": max(alloc)},
                    severity="problem",
                )
            )
            return "request_exceeds_node_capacity"
        f.append(
            Finding(
                key="kube.finding.insufficient_vs_table",
                params={"max": max(alloc), "need": need or "?"},
                severity="warn",
            )
        )
        return "capacity_or_priority"
    verdicts = {p.verdict for p in msg.preemption}
    gpu_nodes = sum(msg.count_of(c) for c in _GPU_SHORT)
    if (
        msg.nodes_total is not None
        and gpu_nodes >= msg.nodes_total
        and len(verdicts) <= 1
        and PreemptionVerdict.OTHER not in verdicts
    ):
        f.append(Finding(key="kube.finding.no_gpu_evidence", severity="warn"))
        return "device_plugin_not_reporting"
    return likely


def _class_commands(
    msg: SchedulingMessage, pod: str, namespace: str, gpu_nodes: list[str]
) -> list[str]:
    ns = namespace_flag(namespace)
    cmds: list[str] = []
    cls = msg.classes()
    node = arg(gpu_nodes[0] if gpu_nodes else "", "node")
    pod = arg(pod, "pod")
    if cls & {
        ReasonClass.INSUFFICIENT_GPU,
        ReasonClass.INSUFFICIENT_GPU_SHARED,
        ReasonClass.INSUFFICIENT_MIG,
    }:
        cmds.append(f"kubectl get node {node} -o jsonpath='{{.status.allocatable}}'")
        cmds.append("kubectl get ds -A | grep -i device-plugin")
        cmds.append("kubectl logs -n <device-plugin-namespace> <device-plugin-pod> --tail=50")
    if ReasonClass.TAINT in cls:
        cmds.append("kubectl get nodes -o custom-columns=NAME:.metadata.name,TAINTS:.spec.taints")
        cmds.append(f"kubectl get pod {pod}{ns} -o jsonpath='{{.spec.tolerations}}'")
    if ReasonClass.NODE_AFFINITY in cls:
        cmds.append(
            f"kubectl get pod {pod}{ns} -o jsonpath='{{.spec.nodeSelector}} {{.spec.affinity.nodeAffinity}}'"
        )
        cmds.append("kubectl get nodes --show-labels")
    if ReasonClass.UNSCHEDULABLE in cls:
        cmds.append("kubectl get nodes | grep SchedulingDisabled")
    if ReasonClass.VOLUME in cls:
        cmds.append(f"kubectl get pvc{ns}")
    if msg.preemption_helpful is True:
        cmds.append("kubectl get priorityclass")
        cmds.append(
            f"kubectl get pod {pod}{ns} -o jsonpath='{{.spec.priorityClassName}} {{.spec.priority}}'"
        )
    if ReasonClass.GANG in cls:
        cmds.append(f"kubectl get podgroups{ns} -o wide")
    if ReasonClass.QUEUE in cls:
        cmds.append(f"kubectl get workloads{ns}")
    if ReasonClass.QUOTA in cls:
        cmds.append(f"kubectl describe resourcequota{ns}")
    return cmds
