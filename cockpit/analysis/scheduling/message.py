"""kube-scheduler's FailedScheduling message parsed into reasons with counts and the
preemption verdicts (pure, no I/O; formats in :mod:`cockpit.analysis.scheduling`)."""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import BaseModel, Field

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
