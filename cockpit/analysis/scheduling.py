"""Why is a pod Pending? FailedScheduling parsing and the per-node table (pure, no I/O).

The message format is kube-scheduler's ``FitError.Error()`` (kubernetes
``pkg/scheduler/framework``, 1.26+; older wordings too), summarised in
``shared/cases/formats.md`` §A4::

    0/{N} nodes are available: [{PreFilterMsg}.] [{count reason}, ...]. [preemption: 0/{N}
    nodes are available: {count verdict}, ....]

Rules used below, with their sources:

- The newest FailedScheduling event describes the current state; the ``PodScheduled``
  condition message can be older (it is only rewritten on a status update).
- "Preemption is not helpful for scheduling" = unresolvable by evicting pods (taint,
  affinity, request larger than allocatable): fix the spec. "No preemption victims found"
  = resolvable in principle, no lower-priority victims: capacity or priority
  (formats.md §A4, §C.5; Kubernetes docs "Pod Priority and Preemption").
- ``Insufficient nvidia.com/gpu`` on a GPU node whose ``allocatable`` is 0 or missing is
  a device plugin that is not reporting, not exhausted capacity (NVIDIA/k8s-device-plugin
  #348, #430; cases pend-01, pend-04). ``capacity > allocatable`` is GPUs the device
  plugin marked unhealthy (they stay so until the plugin restarts; case xid-01).
- Taints with effect ``NoSchedule``/``NoExecute`` block scheduling unless tolerated;
  ``PreferNoSchedule`` does not (Kubernetes docs "Taints and Tolerations").
- "No preemption victims found for incoming pod" is what ``SelectVictimsOnNode``
  (kubernetes ``pkg/scheduler/framework/plugins/defaultpreemption``) returns, as
  ``UnschedulableAndUnresolvable``, when the node holds no pod of lower priority than the
  incoming one; it is returned before the fit is re-checked, so it says nothing about the
  node's GPUs, and no node is nominated: preemption is not possible either way.
- Volcano writes ``{X}/{Y} tasks in gang unschedulable: ...`` with ``Y = len(job.Tasks)``,
  the member pods the scheduler knows, and ``X = MinAvailable - schedulable`` on the
  PodGroup condition (volcano ``pkg/scheduler/plugins/gang/gang.go``; the pod event of
  ``cache.RecordJobStatusEvent`` puts the pending count in ``X``). ``Y = 0``: Volcano sees
  no member pod — the pods' ``schedulerName`` is not ``volcano`` or their
  ``scheduling.k8s.io/group-name`` annotation names another PodGroup (Volcano docs,
  "PodGroup"; case pend-06).
- The next steps and commands are the handbook's (seed 000, 场景五).
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

from cockpit.commandline import arg, namespace_flag
from cockpit.i18n import t
from cockpit.models.kube import (
    DaemonSetLite,
    EventLite,
    GangLite,
    NodeLite,
    NodeRequests,
    PodLite,
    PriorityClassLite,
    ResourceQuotaLite,
    Taint,
    Toleration,
    effective_requests,
    parse_quantity,
)

GPU = "nvidia.com/gpu"
GPU_SHARED = "nvidia.com/gpu.shared"
MIG_PREFIX = "nvidia.com/mig-"


class ReasonClass(StrEnum):
    """Classes of per-node scheduling failure."""

    INSUFFICIENT_GPU = "insufficient_gpu"
    INSUFFICIENT_GPU_SHARED = "insufficient_gpu_shared"
    INSUFFICIENT_MIG = "insufficient_mig"
    INSUFFICIENT_CPU = "insufficient_cpu"
    INSUFFICIENT_MEMORY = "insufficient_memory"
    INSUFFICIENT_EPHEMERAL = "insufficient_ephemeral_storage"
    INSUFFICIENT_OTHER = "insufficient_other"
    TAINT = "untolerated_taint"
    NODE_AFFINITY = "node_affinity"
    POD_AFFINITY = "pod_affinity"
    POD_ANTI_AFFINITY = "pod_anti_affinity"
    TOPOLOGY_SPREAD = "topology_spread"
    UNSCHEDULABLE = "unschedulable"
    VOLUME = "volume"
    TOO_MANY_PODS = "too_many_pods"
    PORTS = "ports"
    GANG = "gang"
    QUEUE = "queue"
    QUOTA = "quota"
    OTHER = "other"


class PreemptionVerdict(StrEnum):
    """What the scheduler's PostFilter (DefaultPreemption) said."""

    NOT_HELPFUL = "not_helpful"
    NO_VICTIMS = "no_victims"
    OTHER = "other"


class Reason(BaseModel):
    """One histogram entry: ``count`` nodes failed for ``text``.

    Attributes:
        count: Number of nodes (``None`` for a PreFilter message that names no count).
        text: The reason as the scheduler wrote it.
        cls: Its class.
        resource: For ``insufficient_*``: the resource name.
        taint: For ``untolerated_taint``: ``key=value`` (``gpu=`` for ``{gpu: }``).
    """

    count: int | None = None
    text: str
    cls: ReasonClass = ReasonClass.OTHER
    resource: str = ""
    taint: str = ""


class Preemption(BaseModel):
    """One preemption histogram entry."""

    count: int | None = None
    text: str
    verdict: PreemptionVerdict = PreemptionVerdict.OTHER


class SchedulingMessage(BaseModel):
    """A parsed FailedScheduling (or gang/queue) message.

    Attributes:
        raw: The text parsed.
        nodes_total: ``N`` of ``0/N nodes are available`` (``None`` if absent).
        reasons: Per-node reasons with counts, in the scheduler's order.
        preemption: Preemption verdicts with counts (empty when no PostFilter clause).
        recognised: False when nothing in the text was understood (shown raw).
    """

    raw: str
    nodes_total: int | None = None
    reasons: list[Reason] = Field(default_factory=list)
    preemption: list[Preemption] = Field(default_factory=list)
    recognised: bool = False

    def count_of(self, cls: ReasonClass) -> int:
        """Nodes reported for a class (0 when absent)."""
        return sum(r.count or 0 for r in self.reasons if r.cls is cls)

    def classes(self) -> set[ReasonClass]:
        """Classes present."""
        return {r.cls for r in self.reasons}

    @property
    def preemption_helpful(self) -> bool | None:
        """False when every verdict is "not helpful", True when some node had "no
        victims" (resolvable in principle), ``None`` without a preemption clause."""
        if not self.preemption:
            return None
        return any(p.verdict is PreemptionVerdict.NO_VICTIMS for p in self.preemption)


_NODES_AVAIL = re.compile(r"(\d+)/(\d+) nodes are available:?", re.IGNORECASE)
_PREEMPT = re.compile(r"\bpreemption:\s*", re.IGNORECASE)
_COUNTED = re.compile(r"^\s*(\d+)\s+(.+?)\s*$", re.DOTALL)
_SENTENCE = re.compile(r"\.(?:\s+|$)")
_ITEM_SPLIT = re.compile(r",\s*(?=\d+\s)")
_INSUFFICIENT = re.compile(r"Insufficient\s+(\S+?)\.?$", re.IGNORECASE)
_TAINT = re.compile(r"taint\s*\{([^}]*)\}", re.IGNORECASE)
_GANG = re.compile(r"(\d+)/(\d+) tasks in gang unschedulable", re.IGNORECASE)


def _resource_class(resource: str) -> ReasonClass:
    r = resource.lower()
    if r == GPU:
        return ReasonClass.INSUFFICIENT_GPU
    if r == GPU_SHARED:
        return ReasonClass.INSUFFICIENT_GPU_SHARED
    if r.startswith(MIG_PREFIX):
        return ReasonClass.INSUFFICIENT_MIG
    if r == "cpu":
        return ReasonClass.INSUFFICIENT_CPU
    if r == "memory":
        return ReasonClass.INSUFFICIENT_MEMORY
    if r == "ephemeral-storage":
        return ReasonClass.INSUFFICIENT_EPHEMERAL
    return ReasonClass.INSUFFICIENT_OTHER


def classify_reason(text: str, count: int | None = None) -> Reason:
    """Classify one reason string (any wording; unknown text becomes ``other``)."""
    low = text.lower()
    m = _INSUFFICIENT.search(text.strip())
    if m and "insufficient" in low and "quota" not in low:
        res = m.group(1).rstrip(".,")
        return Reason(count=count, text=text, cls=_resource_class(res), resource=res)
    if "taint" in low or "podtoleratesnodetaints" in low.replace(" ", ""):
        tm = _TAINT.search(text)
        taint = ""
        if tm:
            body = tm.group(1)
            k, _, v = body.partition(":")
            taint = f"{k.strip()}={v.strip()}"
        return Reason(count=count, text=text, cls=ReasonClass.TAINT, taint=taint)
    if any(
        w in low
        for w in (
            "persistentvolumeclaim",
            "volume node affinity",
            "persistent volume",
            "volume count",
            "volume",
            "pvc",
        )
    ):
        return Reason(count=count, text=text, cls=ReasonClass.VOLUME)
    if "anti-affinity" in low or "antiaffinity" in low:
        return Reason(count=count, text=text, cls=ReasonClass.POD_ANTI_AFFINITY)
    if "pod affinity" in low or "interpodaffinity" in low or "pod's pod affinity" in low:
        return Reason(count=count, text=text, cls=ReasonClass.POD_AFFINITY)
    if "topology spread" in low:
        return Reason(count=count, text=text, cls=ReasonClass.TOPOLOGY_SPREAD)
    if (
        "affinity/selector" in low
        or "node affinity" in low
        or "nodeselector" in low
        or "matchnodeselector" in low
        or "node selector" in low
    ):
        return Reason(count=count, text=text, cls=ReasonClass.NODE_AFFINITY)
    if "unschedulable" in low and "node" in low:
        return Reason(count=count, text=text, cls=ReasonClass.UNSCHEDULABLE)
    if "too many pods" in low:
        return Reason(count=count, text=text, cls=ReasonClass.TOO_MANY_PODS)
    if "free ports" in low or "ports" in low:
        return Reason(count=count, text=text, cls=ReasonClass.PORTS)
    if "gang" in low or "podgroup" in low or "pod group" in low:
        return Reason(count=count, text=text, cls=ReasonClass.GANG)
    if "clusterqueue" in low or "flavor" in low or "unused quota" in low or 'topology "' in low:
        return Reason(count=count, text=text, cls=ReasonClass.QUEUE)
    if "exceeded quota" in low or "resourcequota" in low:
        return Reason(count=count, text=text, cls=ReasonClass.QUOTA)
    return Reason(count=count, text=text, cls=ReasonClass.OTHER)


def _verdict(text: str, count: int | None) -> Preemption:
    low = text.lower()
    if "not helpful" in low:
        v = PreemptionVerdict.NOT_HELPFUL
    elif "no preemption victims" in low or "no victims" in low:
        v = PreemptionVerdict.NO_VICTIMS
    else:
        v = PreemptionVerdict.OTHER
    return Preemption(count=count, text=text, verdict=v)


def _histogram(body: str) -> list[tuple[int | None, str]]:
    out: list[tuple[int | None, str]] = []
    for sentence in _SENTENCE.split(body):
        sentence = sentence.strip()
        if not sentence:
            continue
        items = _ITEM_SPLIT.split(sentence)
        if _COUNTED.match(items[0]):
            for item in items:
                m = _COUNTED.match(item)
                if m:
                    out.append((int(m.group(1)), m.group(2).strip().rstrip(".")))
                elif item.strip():
                    out.append((None, item.strip().rstrip(".")))
        else:
            out.append((None, sentence.rstrip(".")))
    return out


def parse_failed_scheduling(text: str) -> SchedulingMessage:
    """Parse a FailedScheduling message (or a Volcano/Kueue/quota one). Never raises.

    Accepts every wording of ``shared/cases/formats.md`` §A4: the 1.26+ format with or
    without the preemption clause (ending ``..``), pre-1.25 ``had taint {k: v}, that the
    pod didn't tolerate``, old predicate names (``PodToleratesNodeTaints``), a PreFilter
    message without counts, an ``Events:`` line from ``kubectl describe`` with its
    ``Warning FailedScheduling <age>`` prefix, and arbitrary text (kept as ``other``).
    """
    try:
        return _parse(text)
    except Exception:  # a parser must not take a panel down; keep the text
        return SchedulingMessage(raw=text)


def _parse(text: str) -> SchedulingMessage:
    raw = text.strip()
    msg = SchedulingMessage(raw=raw)
    m = _NODES_AVAIL.search(raw)
    gang = _GANG.search(raw)
    if m is None:
        if raw:
            r = classify_reason(raw)
            if gang:
                r.cls = ReasonClass.GANG
            msg.reasons = [r]
            msg.recognised = r.cls is not ReasonClass.OTHER
        return msg
    if gang and gang.start() < m.start():
        msg.reasons = [Reason(text=raw, cls=ReasonClass.GANG)]
        msg.nodes_total = int(m.group(2))
        msg.recognised = True
        return msg
    msg.nodes_total = int(m.group(2))
    rest = raw[m.end() :]
    pm = _PREEMPT.search(rest)
    main, post = (rest[: pm.start()], rest[pm.end() :]) if pm else (rest, "")
    for count, item in _histogram(main):
        msg.reasons.append(classify_reason(item, count))
    if post:
        pm2 = _NODES_AVAIL.search(post)
        body = post[pm2.end() :] if pm2 else post
        for count, item in _histogram(body):
            msg.preemption.append(_verdict(item, count))
    msg.recognised = True
    return msg


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


# -- per-node analysis with cluster state -----------------------------------------------------------
def tolerates(tolerations: list[Any], taint: Any) -> bool:
    """Whether any toleration tolerates the taint (Kubernetes docs "Taints and Tolerations":
    an empty key with ``Exists`` tolerates everything; an empty effect matches all effects)."""
    for tol in tolerations:
        if tol.effect and tol.effect != taint.effect:
            continue
        if tol.operator == "Exists":
            if not tol.key or tol.key == taint.key:
                return True
        elif tol.key == taint.key and (tol.value or "") == (taint.value or ""):
            return True
    return False


def _expr_match(labels: dict[str, str], expr: dict[str, Any]) -> bool:
    key = expr.get("key", "")
    op = expr.get("operator", "In")
    values = [str(v) for v in expr.get("values") or []]
    has = key in labels
    val = labels.get(key, "")
    if op == "In":
        return has and val in values
    if op == "NotIn":
        return not has or val not in values
    if op == "Exists":
        return has
    if op == "DoesNotExist":
        return not has
    if op in ("Gt", "Lt") and has and values:
        try:
            a, b = int(val), int(values[0])
        except ValueError:
            return False
        return a > b if op == "Gt" else a < b
    return False


def selector_match(pod: PodLite, node: NodeLite) -> bool:
    """``nodeSelector`` and required node affinity (terms ORed, expressions ANDed)."""
    labels = node.meta.labels
    for k, v in pod.spec.node_selector.items():
        if labels.get(k) != v:
            return False
    req = (pod.spec.affinity.get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    terms = req.get("nodeSelectorTerms") or []
    if not terms:
        return True
    for term in terms:
        exprs = term.get("matchExpressions") or []
        if all(_expr_match(labels, e) for e in exprs):
            return True
    return False


MAX_ROWS = 300
"""Rows kept per node table (a terminal shows a few dozen; the rest are counted)."""


class NodeRow(BaseModel):
    """One row of the per-node table (numbers are ``None`` when unknown, never 0).

    GPU figures are in devices of the pod's GPU resource (``nvidia.com/gpu`` unless the
    pod asks for a shared or MIG resource); CPU in cores; memory in GiB.
    """

    name: str
    gpu_node: bool
    gpu_resource: str = GPU
    gpu_capacity: float | None = None
    gpu_allocatable: float | None = None
    gpu_requested: float | None = None
    gpu_free: float | None = None
    gpu_unhealthy: float | None = None
    cpu_allocatable: float | None = None
    cpu_requested: float | None = None
    mem_allocatable_gib: float | None = None
    mem_requested_gib: float | None = None
    taints_blocking: list[str] = Field(default_factory=list)
    taints_tolerated: list[str] = Field(default_factory=list)
    selector_match: bool = True
    cordoned: bool = False
    ready: bool | None = None
    device_plugin: str = "n/a"  # ready | not_ready | missing | n/a
    blockers: list[str] = Field(default_factory=list)
    fits: bool = False


class QuotaRow(BaseModel):
    """One resource of a ResourceQuota in the pod's namespace."""

    quota: str
    resource: str
    used: str
    hard: str
    pod_request: float | None = None
    exceeded: bool = False


class PendingAnalysis(BaseModel):
    """Everything the scheduling panel shows for one Pending pod."""

    pod: str
    namespace: str
    scheduler: str = "default-scheduler"
    message: SchedulingMessage | None = None
    message_source: str = "none"  # event | condition | none
    message_at: str = ""
    stale_condition: str = ""
    requests: dict[str, float] = Field(default_factory=dict)
    gpu_resource: str = ""
    priority_class: str = ""
    priority: int | None = None
    rows: list[NodeRow] = Field(default_factory=list)
    gpu_nodes: int = 0
    cpu_nodes: int = 0
    rows_omitted: int = 0
    """Nodes left out of ``rows`` (see ``max_rows``); counted in ``gpu_nodes``/``cpu_nodes``."""
    quotas: list[QuotaRow] = Field(default_factory=list)
    gangs: list[GangLite] = Field(default_factory=list)
    device_plugin_desired: int | None = None
    device_plugin_ready: int | None = None
    likely: str = "unknown"
    findings: list[Finding] = Field(default_factory=list)
    commands: list[str] = Field(default_factory=list)
    checklist: list[str] = Field(default_factory=list)


def newest_failed_scheduling(events: list[EventLite], pod: PodLite) -> EventLite | None:
    """The newest FailedScheduling (or gang/queue) event about this pod."""
    mine = [
        e
        for e in events
        if e.name == pod.meta.name
        and (not e.namespace or e.namespace == pod.meta.namespace)
        and e.reason in ("FailedScheduling", "Unschedulable", "PodGroupNotReady")
    ]
    if not mine:
        return None
    return max(mine, key=lambda e: (e.when is not None, e.when))


def _gpu_resource(req: dict[str, float]) -> str:
    for k in req:
        if k.startswith(MIG_PREFIX) or k == GPU_SHARED:
            return k
    return GPU if GPU in req else ""


def _is_device_plugin(ds: DaemonSetLite) -> bool:
    text = " ".join([ds.meta.name, *ds.meta.labels.values(), *ds.selector.values()]).lower()
    return ("device-plugin" in text and "nvidia" in text) or "nvidia-device-plugin" in text


def analyze_pending(
    pod: PodLite,
    events: list[EventLite],
    nodes: list[NodeLite],
    requests: NodeRequests | None,
    daemonsets: list[DaemonSetLite] | None = None,
    plugin_pods: list[PodLite] | None = None,
    quotas: list[ResourceQuotaLite] | None = None,
    priority_classes: list[PriorityClassLite] | None = None,
    gangs: list[GangLite] | None = None,
    rows_cache: dict[str, Any] | None = None,
    max_rows: int = MAX_ROWS,
) -> PendingAnalysis:
    """The scheduling explanation for one Pending pod, with the per-node table.

    Args:
        pod: The pod.
        events: Events of its namespace (or about it).
        nodes: Every node.
        requests: Requests already bound to each node (``None`` = unknown: the
            requested/free columns stay unknown).
        daemonsets: DaemonSets (the NVIDIA device plugin is found among them).
        plugin_pods: Pods of the device-plugin DaemonSet (health per node).
        quotas: ResourceQuotas of the pod's namespace.
        priority_classes: PriorityClasses of the cluster.
        gangs: PodGroups / Workloads of the pod's namespace.
        rows_cache: Shared between calls for pods of one cluster snapshot: pods with the
            same requests, tolerations, selector and affinity get the same node table
            (computed once — 100 replicas of one Pending Deployment on 5,000 nodes).
        max_rows: Rows kept in the table (GPU nodes first, the closest to fitting
            first); ``rows_omitted`` counts the rest. Counts and verdicts use every node.
    """
    ns = pod.meta.namespace
    out = PendingAnalysis(pod=pod.meta.name, namespace=ns, scheduler=pod.spec.scheduler_name)
    out.requests = effective_requests(pod.spec)
    out.gpu_resource = _gpu_resource(out.requests)
    out.priority_class = pod.spec.priority_class_name
    out.priority = pod.spec.priority
    if out.priority is None and out.priority_class:
        pc = next((p for p in priority_classes or [] if p.name == out.priority_class), None)
        out.priority = pc.value if pc else None

    ev = newest_failed_scheduling(events, pod)
    cond = pod.condition("PodScheduled")
    if ev is not None:
        out.message = parse_failed_scheduling(ev.message)
        out.message_source = "event"
        out.message_at = ev.when.isoformat() if ev.when else ""
        if cond and cond.message and cond.message.strip() != ev.message.strip():
            out.stale_condition = cond.message
    elif cond and cond.message:
        out.message = parse_failed_scheduling(cond.message)
        out.message_source = "condition"
        out.message_at = cond.last_transition.isoformat() if cond.last_transition else ""

    # Device plugin per node.
    plugin_state: dict[str, str] = {}
    dps = [d for d in daemonsets or [] if _is_device_plugin(d)]
    if dps:
        out.device_plugin_desired = sum(d.desired for d in dps)
        out.device_plugin_ready = sum(d.ready for d in dps)
    for p in plugin_pods or []:
        if p.spec.node_name:
            ok = (
                p.phase == "Running"
                and all(s.ready for s in p.container_statuses)
                and bool(p.container_statuses)
            )
            plugin_state[p.spec.node_name] = "ready" if ok else "not_ready"

    gres = out.gpu_resource or GPU
    shape = _shape_key(pod)
    cached = rows_cache.get(shape) if rows_cache is not None else None
    if cached is None:
        rows = [
            _node_row(
                pod,
                node,
                gres,
                requests,
                out.requests,
                plugin_state,
                bool(dps) or plugin_pods is not None,
            )
            for node in nodes
        ]
        rows.sort(
            key=lambda r: (
                not r.gpu_node,
                not r.fits,
                len(r.blockers),
                -(r.gpu_free or 0.0),
                r.name,
            )
        )
        gpu_n = sum(1 for r in rows if r.gpu_node)
        kept = _keep_rows(rows, max_rows, bool(out.gpu_resource))
        stats = row_stats(
            rows, out.requests.get(out.gpu_resource, 0.0) if out.gpu_resource else 0.0
        )
        cached = (kept, gpu_n, len(rows) - gpu_n, len(rows) - len(kept), stats)
        if rows_cache is not None:
            rows_cache[shape] = cached
    out.rows = cached[0]
    stats = cached[4]
    out.gpu_nodes, out.cpu_nodes, out.rows_omitted = cached[1], cached[2], cached[3]

    for q in quotas or []:
        if q.meta.namespace and q.meta.namespace != ns:
            continue
        for res, hard in q.hard.items():
            used = q.used.get(res, "")
            base = res.removeprefix("requests.").removeprefix("limits.")
            req = out.requests.get(base) if res.startswith(("requests.", base)) else None
            h, u = parse_quantity(hard), parse_quantity(used)
            exceeded = h is not None and u is not None and req is not None and u + req > h
            out.quotas.append(
                QuotaRow(
                    quota=q.meta.name,
                    resource=res,
                    used=used or "?",
                    hard=hard,
                    pod_request=req,
                    exceeded=exceeded,
                )
            )

    out.gangs = list(gangs or [])
    _verdict_and_steps(out, pod, stats)
    return out


def _shape_key(pod: PodLite) -> str:
    s = pod.spec
    return json.dumps(
        [
            effective_requests(s),
            [t.model_dump() for t in s.tolerations],
            s.node_selector,
            s.affinity.get("nodeAffinity"),
        ],
        sort_keys=True,
        default=str,
    )


def _keep_rows(rows: list[_Row], max_rows: int, wants_gpu: bool) -> list[NodeRow]:
    return [r.model() for r in _pick_rows(rows, max_rows, wants_gpu)]


def _pick_rows(rows: list[_Row], max_rows: int, wants_gpu: bool) -> list[_Row]:
    if len(rows) <= max_rows:
        return rows
    gpu = [r for r in rows if r.gpu_node]
    cpu = [r for r in rows if not r.gpu_node]
    # Problem nodes are always kept: unhealthy GPUs, plugin not ready, NotReady, cordoned.
    flagged = [
        r
        for r in gpu
        if r.gpu_unhealthy
        or r.device_plugin in ("not_ready", "missing")
        or r.ready is False
        or r.cordoned
    ]
    cpu_quota = 20 if wants_gpu else max_rows // 2
    keep_gpu = max_rows - min(len(cpu), cpu_quota)
    chosen = {id(r) for r in flagged[:keep_gpu]}
    for r in gpu:
        if len(chosen) >= keep_gpu:
            break
        chosen.add(id(r))
    kept = [r for r in gpu if id(r) in chosen] + cpu[: max_rows - len(chosen)]
    return kept


_GPU_RE = re.compile(r"gpu|nvidia|accelerator|pci-10de", re.IGNORECASE)


def looks_like_gpu_node(node: NodeLite) -> bool:
    """A node meant for GPUs even when it advertises none: GPU feature-discovery/NFD labels,
    or a label or taint naming a GPU (``gpu``, ``nvidia.com/gpu=true:NoSchedule``,
    ``workload=gpu``, ``cloud.google.com/gke-accelerator``). Such a node with 0 allocatable
    GPUs is the silent device-plugin case (pend-03, pend-04)."""
    labels = node.meta.labels
    text = " ".join([*labels, *labels.values(), *(t.key for t in node.taints)])
    return _GPU_RE.search(text) is not None


def _node_row(
    pod: PodLite,
    node: NodeLite,
    gres: str,
    requests: NodeRequests | None,
    pod_req: dict[str, float],
    plugin_state: dict[str, str],
    plugin_known: bool,
) -> _Row:
    name = node.meta.name
    cap_keys = node.capacity
    has_gpu_res = (
        GPU in cap_keys
        or GPU_SHARED in cap_keys
        or any(k.startswith(MIG_PREFIX) for k in cap_keys if k[0] == "n")
    )
    gpu_node = has_gpu_res or looks_like_gpu_node(node)
    d: dict[str, Any] = {"name": name, "gpu_node": gpu_node, "gpu_resource": gres}
    used = requests.by_node.get(name, {}) if requests is not None else {}
    if gpu_node:
        cap = parse_quantity(node.capacity.get(gres))
        alloc = parse_quantity(node.allocatable.get(gres))
        # Missing on a GPU node means "the device plugin advertises none": 0 devices.
        d["gpu_capacity"] = cap if cap is not None else 0.0
        d["gpu_allocatable"] = alloc if alloc is not None else 0.0
        if cap is not None and alloc is not None and cap > alloc:
            d["gpu_unhealthy"] = cap - alloc
        d["device_plugin"] = plugin_state.get(name, "missing") if plugin_known else "n/a"
        if requests is not None:
            d["gpu_requested"] = used.get(gres, 0.0)
            d["gpu_free"] = d["gpu_allocatable"] - d["gpu_requested"]
    d["cpu_allocatable"] = parse_quantity(node.allocatable.get("cpu"))
    mem = parse_quantity(node.allocatable.get("memory"))
    d["mem_allocatable_gib"] = mem / 2**30 if mem is not None else None
    if requests is not None:
        d["cpu_requested"] = used.get("cpu", 0.0)
        d["mem_requested_gib"] = used.get("memory", 0.0) / 2**30
    blocking: list[str] = []
    tolerated: list[str] = []
    for taint in node.taints:
        if taint.effect not in ("NoSchedule", "NoExecute"):
            continue
        (tolerated if tolerates(pod.spec.tolerations, taint) else blocking).append(taint.text())
    match = selector_match(pod, node)
    # Blockers, named by the scheduler's reason classes.
    blockers: list[str] = []
    if node.unschedulable:
        blockers.append(ReasonClass.UNSCHEDULABLE.value)
    if blocking and not (
        node.unschedulable
        and all(t.startswith("node.kubernetes.io/unschedulable") for t in blocking)
    ):
        blockers.append(ReasonClass.TAINT.value)
    if not match:
        blockers.append(ReasonClass.NODE_AFFINITY.value)
    for res, amount in pod_req.items():
        if amount <= 0:
            continue
        alloc_r = parse_quantity(node.allocatable.get(res))
        if alloc_r is None:
            if res == gres or res.startswith("nvidia.com/") or "/" in res:
                blockers.append(_resource_class(res).value)
            continue
        if used.get(res, 0.0) + amount > alloc_r + 1e-9:
            blockers.append(_resource_class(res).value)
    ready = node.ready
    if ready is False:
        blockers.append("not_ready")
    blockers = list(dict.fromkeys(blockers))
    d.update(
        taints_blocking=blocking,
        taints_tolerated=tolerated,
        selector_match=match,
        cordoned=node.unschedulable,
        ready=ready,
        blockers=blockers,
        fits=not blockers and requests is not None,
    )
    return _Row(**d)


@dataclass(slots=True)
class _Row:
    """A :class:`NodeRow` while the table is built: every node gets one, and only the
    rows kept (``max_rows``) become pydantic models (5,000 model builds cost ~1 s)."""

    name: str
    gpu_node: bool
    gpu_resource: str = GPU
    gpu_capacity: float | None = None
    gpu_allocatable: float | None = None
    gpu_requested: float | None = None
    gpu_free: float | None = None
    gpu_unhealthy: float | None = None
    cpu_allocatable: float | None = None
    cpu_requested: float | None = None
    mem_allocatable_gib: float | None = None
    mem_requested_gib: float | None = None
    taints_blocking: list[str] = field(default_factory=list)
    taints_tolerated: list[str] = field(default_factory=list)
    selector_match: bool = True
    cordoned: bool = False
    ready: bool | None = None
    device_plugin: str = "n/a"
    blockers: list[str] = field(default_factory=list)
    fits: bool = False

    def model(self) -> NodeRow:
        """As the public :class:`NodeRow` (values already typed: no re-validation)."""
        return NodeRow.model_construct(**{f: getattr(self, f) for f in self.__slots__})


class RowStats(BaseModel):
    """Aggregates over every node row of one pod shape (computed once per shape)."""

    gpu_names: list[str] = Field(default_factory=list)
    """The first GPU nodes' names (for per-node commands)."""
    gpu_count: int = 0
    cpu_count: int = 0
    zero: list[str] = Field(default_factory=list)
    unhealthy: list[str] = Field(default_factory=list)
    taint_blocked: list[str] = Field(default_factory=list)
    plugin_bad: list[str] = Field(default_factory=list)
    max_alloc: float = 0.0
    total_free: float = 0.0
    fitting: int = 0
    cordoned: list[str] = Field(default_factory=list)


def row_stats(rows: list[_Row], need: float) -> RowStats:
    """Aggregate the node rows once (GPU nodes, zero/unhealthy allocatable, free GPUs…)."""
    gpu = [r for r in rows if r.gpu_node]
    return RowStats.model_construct(
        gpu_names=[r.name for r in gpu[:5]],
        gpu_count=len(gpu),
        cpu_count=len(rows) - len(gpu),
        zero=[r.name for r in gpu if not r.gpu_allocatable],
        unhealthy=[
            f"{r.name} ({r.gpu_allocatable:g}/{r.gpu_capacity:g})" for r in gpu if r.gpu_unhealthy
        ],
        taint_blocked=sorted(
            {t for r in gpu if ReasonClass.TAINT.value in r.blockers for t in r.taints_blocking}
        ),
        plugin_bad=[r.name for r in gpu if r.device_plugin in ("not_ready", "missing")],
        max_alloc=max((r.gpu_allocatable or 0.0) for r in gpu) if gpu else 0.0,
        total_free=sum(
            max(0.0, r.gpu_free or 0.0) for r in gpu if r.gpu_free is not None and not r.cordoned
        ),
        fitting=sum(
            1 for r in gpu if r.gpu_free is not None and r.gpu_free >= need and not r.blockers
        ),
        cordoned=[r.name for r in rows if r.cordoned],
    )


def _verdict_and_steps(out: PendingAnalysis, pod: PodLite, st: RowStats) -> None:
    msg = out.message
    wants_gpu = bool(out.gpu_resource)
    f = out.findings
    if out.message_source == "event" and out.stale_condition:
        f.append(
            Finding(
                key="kube.finding.stale_condition",
                params={"old": out.stale_condition[:160]},
                severity="info",
            )
        )
    if msg is not None:
        f.extend(reason_findings(msg))
    elif out.scheduler == "default-scheduler":
        f.append(Finding(key="kube.finding.no_message", severity="warn"))

    likely = _likely_from_message(msg) if msg is not None else "unknown"
    # Gangs: Volcano / Kueue.
    group = pod.meta.annotations.get("scheduling.k8s.io/group-name") or pod.meta.annotations.get(
        "scheduling.volcano.sh/group-name", ""
    )
    for g in out.gangs:
        cond = next((c for c in g.conditions if c.message), None)
        text = cond.message if cond else ""
        if g.kind == "PodGroup" and (not group or g.meta.name == group):
            gm = _GANG.search(text)
            f.append(
                Finding(
                    key="kube.finding.podgroup",
                    params={
                        "name": g.meta.name,
                        "phase": g.phase or "?",
                        "min": g.min_member if g.min_member is not None else "?",
                        "message": text or "-",
                    },
                    severity="warn",
                )
            )
            if gm and gm.group(2) == "0":
                f.append(
                    Finding(
                        key="kube.finding.gang_sees_no_pods",
                        params={"scheduler": out.scheduler},
                        severity="problem",
                    )
                )
                likely = "gang_scheduler_mismatch"
            elif likely == "unknown":
                likely = "gang_not_ready"
        if g.kind == "Workload" and g.phase != "admitted":
            f.append(
                Finding(
                    key="kube.finding.workload",
                    params={"name": g.meta.name, "queue": g.queue or "?", "message": text or "-"},
                    severity="warn",
                )
            )
            if likely in ("unknown",):
                likely = "queue_quota"
    if (
        group
        and out.scheduler not in ("volcano",)
        and not any(g.kind == "PodGroup" for g in out.gangs)
    ):
        f.append(
            Finding(key="kube.finding.group_no_podgroup", params={"group": group}, severity="warn")
        )
    if group and out.scheduler != "volcano":
        f.append(
            Finding(
                key="kube.finding.scheduler_name",
                params={"scheduler": out.scheduler},
                severity="problem",
            )
        )
        likely = "gang_scheduler_mismatch"

    # GPU-specific cross-checks (formats.md §C.5).
    if wants_gpu and st.gpu_count:
        zero = st.zero
        if st.unhealthy:
            f.append(
                Finding(
                    key="kube.finding.gpus_unhealthy",
                    params={"nodes": ", ".join(st.unhealthy[:10])},
                    severity="problem",
                )
            )
        if zero and len(zero) == st.gpu_count:
            if likely == "missing_toleration":
                if out.device_plugin_desired == 0:
                    f.append(Finding(key="kube.finding.plugin_not_scheduled", severity="problem"))
            elif out.device_plugin_desired == 0:
                likely = "device_plugin_not_scheduled"
                f.append(Finding(key="kube.finding.plugin_not_scheduled", severity="problem"))
            else:
                likely = "device_plugin_not_reporting"
                f.append(
                    Finding(
                        key="kube.finding.plugin_not_reporting",
                        params={"nodes": ", ".join(zero[:5])},
                        severity="problem",
                    )
                )
        elif zero:
            f.append(
                Finding(
                    key="kube.finding.some_gpu_nodes_zero",
                    params={"nodes": ", ".join(zero[:5])},
                    severity="warn",
                )
            )
        if st.taint_blocked and likely in (
            "missing_toleration",
            "unknown",
            "device_plugin_not_scheduled",
            "device_plugin_not_reporting",
        ):
            taints = st.taint_blocked
            f.append(
                Finding(
                    key="kube.finding.toleration_fix",
                    params={"taints": ", ".join(taints), "yaml": _toleration_yaml(taints[0])},
                    severity="problem",
                )
            )
            if out.device_plugin_desired == 0:
                f.append(Finding(key="kube.finding.plugin_toleration_too", severity="problem"))
        not_ready_plugins = st.plugin_bad
        if not_ready_plugins and out.device_plugin_desired:
            f.append(
                Finding(
                    key="kube.finding.plugin_pods_unhealthy",
                    params={"nodes": ", ".join(not_ready_plugins[:5])},
                    severity="warn",
                )
            )
        need = out.requests.get(out.gpu_resource, 0.0)
        max_alloc = st.max_alloc
        if need and 0 < max_alloc < need:
            likely = "request_exceeds_node_capacity"
            f.append(
                Finding(
                    key="kube.finding.request_too_large",
                    params={"need": f"{need:g}", "max": f"{max_alloc:g}"},
                    severity="problem",
                )
            )
        if likely in ("capacity_or_priority", "device_plugin_or_capacity") and max_alloc > 0:
            likely = "capacity_exhausted" if not st.fitting else likely
            total_free = st.total_free
            f.append(
                Finding(
                    key="kube.finding.capacity",
                    params={"need": f"{need:g}", "free": f"{total_free:g}", "nodes": st.gpu_count},
                    severity="warn",
                )
            )
    elif wants_gpu and not st.gpu_count and st.cpu_count:
        f.append(Finding(key="kube.finding.no_gpu_nodes", severity="problem"))
        likely = "no_gpu_nodes"
    if (
        wants_gpu
        and st.cpu_count
        and msg is not None
        and msg.count_of(ReasonClass.INSUFFICIENT_GPU)
    ):
        f.append(
            Finding(
                key="kube.finding.cpu_nodes_noise", params={"count": st.cpu_count}, severity="info"
            )
        )
    for q in out.quotas:
        if q.exceeded:
            f.append(
                Finding(
                    key="kube.finding.quota_exceeded",
                    params={
                        "quota": q.quota,
                        "resource": q.resource,
                        "used": q.used,
                        "hard": q.hard,
                        "need": f"{q.pod_request:g}" if q.pod_request is not None else "?",
                    },
                    severity="problem",
                )
            )
            if likely == "unknown":
                likely = "quota_exceeded"
    if msg is not None and msg.preemption_helpful is True and likely.startswith("device_plugin"):
        f.append(Finding(key="kube.finding.old_scheduler_verdict", severity="info"))
    elif msg is not None and msg.preemption_helpful is True:
        f.append(
            Finding(
                key="kube.finding.priority",
                params={
                    "pc": out.priority_class or "-",
                    "prio": out.priority if out.priority is not None else "?",
                },
                severity="warn",
            )
        )
        if likely == "capacity_exhausted":
            likely = "capacity_or_priority"
    cordoned = st.cordoned
    if cordoned:
        f.append(
            Finding(
                key="kube.finding.cordoned",
                params={"nodes": ", ".join(cordoned[:5])},
                severity="info",
            )
        )
    out.likely = likely
    f.append(Finding(key=f"kube.likely.{likely}", severity="problem"))

    gpu_names = st.gpu_names
    cmds = base_commands(out.pod, out.namespace)
    if msg is not None:
        cmds += _class_commands(msg, out.pod, out.namespace, gpu_names)
    if likely.startswith("device_plugin") or st.plugin_bad:
        cmds.append("kubectl get ds -A -l app.kubernetes.io/name=nvidia-device-plugin")
        bad = st.plugin_bad or gpu_names
        if bad:
            cmds.append(
                f"kubectl get pods -A -o wide --field-selector spec.nodeName={arg(bad[0])} | grep -i device-plugin"
            )
        cmds.append(
            "journalctl -u kubelet --since '1 hour ago' | grep -i -E 'device|plugin|nvidia'  # on the GPU node"
        )
    ns = namespace_flag(out.namespace)
    if out.quotas:
        cmds.append(f"kubectl describe resourcequota{ns}")
    if any(g.kind == "PodGroup" for g in out.gangs) or likely.startswith("gang"):
        cmds.append(f"kubectl get podgroups{ns} -o yaml")
        cmds.append(f"kubectl get pod {arg(out.pod)}{ns} -o jsonpath='{{.spec.schedulerName}}'")
    if any(g.kind == "Workload" for g in out.gangs):
        cmds.append(f"kubectl get workloads{ns}")
    out.commands = list(dict.fromkeys(cmds))
    out.checklist = [
        "kube.check.allocatable",
        "kube.check.requests",
        "kube.check.affinity",
        "kube.check.taints",
        "kube.check.quota",
        "kube.check.priority",
        "kube.check.gang",
        "kube.check.device_plugin",
    ]


def _toleration_yaml(taint_text: str) -> str:
    key_value, _, effect = taint_text.partition(":")
    key, _, _value = key_value.partition("=")
    return f"{{key: {key}, operator: Exists, effect: {effect or 'NoSchedule'}}}"
