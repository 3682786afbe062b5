"""The window's entities and what happened to them, from metrics history alone (pure).

Kubernetes keeps events for an hour; Prometheus keeps days. From range queries over the
incident window (kube-state-metrics ``kube_pod_info``/``kube_pod_owner``/
``kube_replicaset_owner``/``kube_pod_labels``, dcgm-exporter's GPU series with
``Hostname``/``hostname``, ``gpu``, ``UUID``, ``pod``; the engine's series per pod) this
module builds the inventory deployment → revision → pod → node → GPU, with when each was
first and last seen, and the change list the history implies: rollouts (a revision
appearing and the previous one disappearing), restarts with the last terminated reason,
readiness flips, allocatable GPU drops, node conditions, Xid codes, series that stopped
reporting, and alerts that fired.

Times are Unix seconds (floats). Presence series are ``timestamp(...)`` range results, so
their values are the real sample times (a range query would otherwise keep a vanished
series for the 5-minute lookback after its last sample).

Sources of the rules:
- A ReplicaSet is a Deployment's revision; its name ends in the ``pod-template-hash``
  (metrics_kb.md §7.0; :mod:`cockpit.analysis.podnames`).
- ``kube_pod_container_status_last_terminated_reason`` and
  ``kube_pod_container_status_restarts_total`` (kube-state-metrics pod-metrics.md).
- The device plugin lowers ``nvidia.com/gpu`` allocatable when it marks a GPU unhealthy
  (k8s-device-plugin, health checks on Xid events); Xid meanings from
  ``cockpit/knowledge/xid.json``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime
from itertools import pairwise
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from cockpit.analysis.changes import ChangeItem, DiffLine
from cockpit.models import Series
from cockpit.models.gpu import GpuNodeSnapshot, XidEvent
from cockpit.models.kube import PodLite

if TYPE_CHECKING:
    from cockpit.analysis.conclusion import Suspect
    from cockpit.analysis.golden import SignalSummary
    from cockpit.analysis.layers import LayerVerdict
from cockpit.models.messages import XID_NAME, Arg, Msg, fmt_number, signal_names

GPU_NODE_LABELS = ("Hostname", "hostname", "node", "kubernetes_node")
GPU_UUID_LABELS = ("UUID", "uuid", "gpu_uuid")
POD_LABELS = ("exported_pod", "pod", "pod_name")
NS_LABELS = ("exported_namespace", "namespace")
"""Where a series names its pod and namespace, ``exported_*`` first: present only when the
scrape did not honour the exporter's labels, it holds the workload's and the plain label
the exporter's own (Prometheus ``scrape_config.honor_labels``)."""
VERSION_LABELS = (
    "label_app_kubernetes_io_version",
    "label_version",
    "label_app_version",
    "label_helm_sh_chart",
)
"""``kube_pod_labels`` labels that carry a release version (present when allowlisted)."""

_RS = re.compile(r"^(?P<deploy>.+)-(?P<hash>[a-z0-9]{5,10})$")
_POD = re.compile(r"^(?P<base>.+)-(?P<hash>[a-z0-9]{5,10})-(?P<suffix>[a-z0-9]{5})$")


def _first(labels: dict[str, str], names: Iterable[str]) -> str:
    for n in names:
        if labels.get(n):
            return labels[n]
    return ""


class Entity(BaseModel):
    """When an entity was seen in the window (Unix seconds; None = never)."""

    first_seen: float | None = None
    last_seen: float | None = None

    def seen(self, t0: float, t1: float) -> None:
        """Extend the seen interval by ``[t0, t1]``."""
        self.first_seen = t0 if self.first_seen is None else min(self.first_seen, t0)
        self.last_seen = t1 if self.last_seen is None else max(self.last_seen, t1)


class GpuEntity(Entity):
    """A GPU: its node, NVML index, UUID, the pods that held it, its last values."""

    uuid: str
    node: str = ""
    index: str = ""
    pods: list[str] = Field(default_factory=list)
    last_values: dict[str, float] = Field(default_factory=dict)
    """Signal id → last value seen (filled for GPUs that went silent)."""


class ContainerRestarts(BaseModel):
    """A container's restarts in the history: ``(time, how many)`` at each step where
    ``kube_pod_container_status_restarts_total`` rose (a counter reset counts its new
    value), and the last terminated reason (``""`` when unknown)."""

    container: str = ""
    increases: list[tuple[float, float]] = Field(default_factory=list)
    reason: str = ""

    def count(self, t0: float | None = None, t1: float | None = None) -> int:
        """Restarts at times in ``[t0, t1]`` (the whole history by default)."""
        return round(
            sum(n for t, n in self.increases if (t0 is None or t >= t0) and (t1 is None or t <= t1))
        )


class RestartCount(BaseModel):
    """The one "restarts in the window" fact of a pod (step B's count, quoted by D and E).

    Attributes:
        pod: The pod.
        n: Container restarts in the window (all containers).
        reason: The last terminated reason of a restarted container (``""``: unknown).
    """

    pod: str
    n: int
    reason: str = ""

    def msg(self) -> Msg:
        """``restarted 19 times in the window (last terminated: Error)``, or ``no
        restarts in the window``."""
        if not self.n:
            return Msg(key="metrics.restarts_none")
        return Msg(
            key="metrics.restarts_in_window", args={"n": self.n, "reason": self.reason or "?"}
        )


class PodEntity(Entity):
    """A pod: placement, revision, version, GPUs; when its serving series last reported;
    its containers' restarts (only when kube-state-metrics reported its restart counter)."""

    name: str
    namespace: str = ""
    node: str = ""
    revision: str = ""
    deployment: str = ""
    version: str = ""
    gpus: list[str] = Field(default_factory=list)
    serving_first: float | None = None
    serving_last: float | None = None
    restarts: list[ContainerRestarts] | None = None


class RevisionEntity(Entity):
    """A revision (ReplicaSet): its Deployment, pod-template hash, version and pods."""

    name: str
    deployment: str = ""
    hash: str = ""
    version: str = ""
    pods: list[str] = Field(default_factory=list)


class WindowInventory(BaseModel):
    """Who served in the window: deployments → revisions → pods → nodes → GPUs.

    Attributes:
        start, end: The window (Unix seconds).
        grace_s: An entity whose last sample is older than ``end - grace_s`` is silent.
        pods, revisions, gpus: By name / ReplicaSet / UUID (or ``node/gpuN`` without UUID).
        nodes: Node → GPU keys on it.
        sources: Which inputs held data (``kube-state-metrics``, ``dcgm``, ``engine``,
            ``kubernetes``).
    """

    start: float
    end: float
    grace_s: float = 180.0
    pods: dict[str, PodEntity] = Field(default_factory=dict)
    revisions: dict[str, RevisionEntity] = Field(default_factory=dict)
    gpus: dict[str, GpuEntity] = Field(default_factory=dict)
    nodes: dict[str, list[str]] = Field(default_factory=dict)
    sources: list[str] = Field(default_factory=list)

    # -- lookups ------------------------------------------------------------------------------
    def pod(self, name: str) -> PodEntity | None:
        """The pod called ``name`` (None when never seen)."""
        return self.pods.get(name)

    def gpu_at(self, node: str, index: str) -> GpuEntity | None:
        """The GPU with NVML index ``index`` on ``node``."""
        for key in self.nodes.get(node, []):
            g = self.gpus[key]
            if g.index == str(index):
                return g
        return None

    def gpu_of(self, pod: str) -> GpuEntity | None:
        """The (first) GPU ``pod`` held."""
        p = self.pods.get(pod)
        if p is None or not p.gpus:
            return None
        return self.gpus.get(p.gpus[0])

    def deployments(self) -> dict[str, list[RevisionEntity]]:
        """Deployment → its revisions, oldest first."""
        out: dict[str, list[RevisionEntity]] = {}
        for r in self.revisions.values():
            out.setdefault(r.deployment, []).append(r)
        for revs in out.values():
            revs.sort(key=lambda r: (r.first_seen or 0.0, r.name))
        return out

    def previous_revision(self, rs: str) -> RevisionEntity | None:
        """The revision of the same Deployment that served before ``rs`` (by first seen);
        None when ``rs`` is the first the window saw or is unknown."""
        r = self.revisions.get(rs)
        if r is None:
            return None
        revs = self.deployments().get(r.deployment, [])
        i = next((k for k, x in enumerate(revs) if x.name == rs), 0)
        return revs[i - 1] if i > 0 else None

    def is_silent(self, e: Entity) -> bool:
        """Seen in the window but not in its last ``grace_s`` seconds."""
        return e.last_seen is not None and e.last_seen < self.end - self.grace_s

    def pods_now(self, deployment: str) -> list[PodEntity]:
        """The pods of ``deployment`` that still report at the window's end (not silent;
        a crash-looping pod that still exists counts: it holds a replica's slot)."""
        return [
            p
            for p in self.pods.values()
            if p.deployment == deployment and p.last_seen is not None and not self.is_silent(p)
        ]

    def silent_gpus(self) -> list[GpuEntity]:
        """GPUs that reported earlier in the window and are silent now."""
        return [g for g in self.gpus.values() if self.is_silent(g)]

    def silent_pods(self) -> list[PodEntity]:
        """Pods that still exist (kube-state-metrics) but whose serving series stopped."""
        return [
            p
            for p in self.pods.values()
            if p.serving_last is not None
            and p.serving_last < self.end - self.grace_s
            and not self.is_silent(p)
        ]

    def candidates(self) -> list[str]:
        """Every name a suspect field accepts: pods, nodes, ``node/N`` GPU indices, UUIDs
        and revisions (sorted, for completion)."""
        out = set(self.pods) | set(self.nodes) | set(self.revisions)
        for g in self.gpus.values():
            if g.uuid.startswith("GPU-"):
                out.add(g.uuid)
            if g.node and g.index:
                out.add(f"{g.node}/{g.index}")
        return sorted(out)

    def resolve(self, text: str) -> tuple[str, str] | None:
        """What a typed suspect names: ``(kind, key)`` with kind ``pod``, ``node``,
        ``gpu`` (key: the GPU's UUID) or ``revision``; None when nothing in the window
        carries that name. Accepts a pod, a node, ``node/N`` / ``node/gpuN`` /
        ``node GPU N``, a UUID (or its unique prefix) and a ReplicaSet, hash or version."""
        s = text.strip()
        if not s:
            return None
        if s in self.pods:
            return "pod", s
        if s in self.nodes:
            return "node", s
        if s in self.revisions:
            return "revision", s
        m = re.fullmatch(r"(?P<node>[^/\s]+)\s*(?:/\s*(?:gpu)?|\s+gpu\s*)(?P<i>\d+)", s, re.I)
        if m:
            g = self.gpu_at(m.group("node"), m.group("i"))
            if g is not None:
                return "gpu", g.uuid
        if s.upper().startswith("GPU-"):
            hits = [u for u in self.gpus if u.lower().startswith(s.lower())]
            if len(hits) == 1:
                return "gpu", hits[0]
        for r in self.revisions.values():
            if s in (r.hash, r.version):
                return "revision", r.name
        return None

    def restarts_in(
        self, pod: str, t0: float | None = None, t1: float | None = None
    ) -> RestartCount | None:
        """Container restarts of ``pod`` in ``[t0, t1]`` (default: this inventory's
        window); None when no restart counter of that pod was read (unknown, never 0)."""
        p = self.pods.get(pod)
        if p is None or p.restarts is None:
            return None
        lo = self.start if t0 is None else t0
        hi = self.end if t1 is None else t1
        counted = [(c, c.count(lo, hi)) for c in p.restarts]
        n = sum(k for _, k in counted)
        reason = next((c.reason for c, k in counted if k and c.reason), "")
        return RestartCount(pod=pod, n=n, reason=reason)

    def suspect_restarts(
        self, key: str, kind: str, t0: float | None = None, t1: float | None = None
    ) -> RestartCount | None:
        """:meth:`restarts_in` of a suspect: a pod, or the pod that holds (or last held)
        a GPU; None for other kinds or when unknown."""
        if kind == "gpu":
            g = self.gpus.get(key)
            key = g.pods[-1] if g is not None and g.pods else ""
        elif kind != "pod":
            return None
        return self.restarts_in(key, t0, t1) if key else None

    def restart_counts(
        self, t0: float | None = None, t1: float | None = None
    ) -> dict[str, RestartCount]:
        """:meth:`restarts_in` of every pod whose restart counter was read."""
        out = {}
        for name in self.pods:
            rc = self.restarts_in(name, t0, t1)
            if rc is not None:
                out[name] = rc
        return out

    # -- naming -------------------------------------------------------------------------------
    def name(self, *, pod: str = "", node: str = "", gpu: str = "") -> str:
        """The one way every screen, panel, command and export names an entity.

        ``qwen-chat-…-rp2gj on gpu-node-b GPU 0 (GPU-5568…)`` for a pod on a GPU, and for a
        GPU a pod holds (or last held); ``gpu-node-b GPU 3 (GPU-77a1…)`` for an idle GPU;
        ``qwen-chat-…-rp2gj on gpu-node-b`` for a pod without a GPU. ``gpu`` is a UUID or ``node/gpuN``; missing parts are filled
        from the inventory.
        """
        g = self.gpus.get(gpu) if gpu else None
        if g is None and pod:
            g = self.gpu_of(pod)
        if g is not None and not pod and g.pods:
            pod = g.pods[-1]  # a GPU is named with the pod that holds (or last held) it
        p = self.pods.get(pod) if pod else None
        node = node or (g.node if g else "") or (p.node if p else "")
        parts = []
        if pod:
            parts.append(short_pod(pod))
        where = node
        if g is not None:
            where = gpu_text(g.node or node, g.index, g.uuid)
        elif gpu:
            where = gpu_text(node, "", gpu)
        if where:
            parts.append(where)
        return " on ".join(parts)

    def name_msg(self, pod: str = "", gpu: str = "", node: str = "") -> Msg | str:
        """:meth:`name` for a message argument, in the reader's language: a pod on a GPU
        or node reads ``…-rp2gj on gpu-node-b GPU 0`` / ``gpu-node-b GPU 0 上的 …-rp2gj``
        (message ``metrics.entity.on``); a name of one part is that part."""
        return entity_msg(self.name(pod=pod, gpu=gpu, node=node))

    def name_of(self, key: str, kind: str) -> str:
        """A suspect ``key`` of ``kind`` (``pod``, ``gpu``, ``node``, ``revision``) named by
        :meth:`name` / :meth:`revision_name`; the key itself when the window never saw it."""
        if kind == "pod" and key in self.pods:
            return self.name(pod=key)
        if kind == "gpu" and key in self.gpus:
            return self.name(gpu=key)
        if kind == "revision" and key in self.revisions:
            return self.revision_name(key)
        return key

    def revision_name(self, rs: str) -> str:
        """``qwen-chat-899bda8d50 (v1.9.0)``: a revision with its version when known."""
        r = self.revisions.get(rs)
        return f"{rs} ({r.version})" if r is not None and r.version else rs


def entity_msg(name: str) -> Msg | str:
    """A name of :meth:`WindowInventory.name` as a message argument in the reader's
    language (``…-rp2gj on gpu-node-b GPU 0`` / ``gpu-node-b GPU 0 上的 …-rp2gj``, message
    ``metrics.entity.on``); a name of one part (no `` on ``: names hold no spaces) is that
    part."""
    if " on " not in name:
        return name
    who, where = name.split(" on ", 1)
    return Msg(key="metrics.entity.on", args={"pod": who, "where": where})


def entity_text(name: str, lang: str) -> str:
    """:func:`entity_msg` of ``name`` rendered in ``lang``."""
    m = entity_msg(name)
    return m if isinstance(m, str) else m.text(lang)


def short_pod(pod: str) -> str:
    """``qwen-chat-899bda8d50-rp2gj`` → ``qwen-chat-…-rp2gj`` (a Deployment's pod: the
    ReplicaSet hash elided); other names unchanged."""
    m = _POD.match(pod)
    return f"{m.group('base')}-…-{m.group('suffix')}" if m else pod


def gpu_text(node: str, index: str, uuid: str) -> str:
    """``gpu-node-b GPU 0 (GPU-5568…)``; parts that are unknown are left out."""
    bits = [node] if node else []
    if index != "":
        bits.append(f"GPU {index}")
    if uuid.startswith("GPU-"):
        bits.append(f"({uuid[:8]}…)")
    elif uuid and index == "":
        bits.append(uuid)
    return " ".join(bits)


# -- building ---------------------------------------------------------------------------------


class HistoryInput(BaseModel):
    """Range results over the window (see :mod:`cockpit.collect.history` for the queries).

    Presence inputs (``*_ts``) hold sample timestamps as values (a GPU not the
    service's own: the times of the steps that saw it,
    :func:`cockpit.collect.history._gpus_seen`); the others the metric's values at each
    step.
    """

    start: float
    end: float
    step_s: float = 60.0
    pod_info_ts: list[Series] = Field(default_factory=list)
    pod_owner_ts: list[Series] = Field(default_factory=list)
    rs_owner_ts: list[Series] = Field(default_factory=list)
    pod_labels_ts: list[Series] = Field(default_factory=list)
    gpu_ts: list[Series] = Field(default_factory=list)
    serving_ts: list[Series] = Field(default_factory=list)
    up: list[Series] = Field(default_factory=list)
    xid: list[Series] = Field(default_factory=list)
    restarts: list[Series] = Field(default_factory=list)
    last_terminated: list[Series] = Field(default_factory=list)
    ready: list[Series] = Field(default_factory=list)
    allocatable: list[Series] = Field(default_factory=list)
    node_conditions: list[Series] = Field(default_factory=list)
    alerts: list[Series] = Field(default_factory=list)


def _span(s: Series) -> tuple[float, float] | None:
    vals = [x.v for x in s.samples if x.v == x.v]
    return (min(vals), max(vals)) if vals else None


def _gpu_key(labels: dict[str, str]) -> tuple[str, str, str]:
    node = _first(labels, GPU_NODE_LABELS)
    uuid = _first(labels, GPU_UUID_LABELS)
    index = labels.get("gpu", "")
    key = uuid or (f"{node}/gpu{index}" if node and index else "")
    return key, node, index


def _add_restarts(inv: WindowInventory, h: HistoryInput) -> None:
    """Each pod's containers' restarts and last terminated reasons, computed once here
    (B's change list, D's blast radius and E's cohort all read them)."""
    reasons: dict[tuple[str, str], str] = {}
    for s in h.last_terminated:
        if any(x.v > 0 for x in s.samples):
            reasons[(s.labels.get("pod", ""), s.labels.get("container", ""))] = s.labels.get(
                "reason", ""
            )
    for s in h.restarts:
        pod, container = s.labels.get("pod", ""), s.labels.get("container", "")
        if not pod:
            continue
        p = inv.pods.setdefault(pod, PodEntity(name=pod))
        if p.restarts is None:
            p.restarts = []
        p.restarts.append(
            ContainerRestarts(
                container=container,
                increases=_increases(s),
                reason=reasons.get((pod, container), ""),
            )
        )


def build_window_inventory(h: HistoryInput) -> WindowInventory:
    """Join the window's presence series into a :class:`WindowInventory`."""
    inv = WindowInventory(start=h.start, end=h.end, grace_s=max(180.0, 3 * h.step_s))
    rs_deploy = {
        s.labels.get("replicaset", ""): s.labels.get("owner_name", "")
        for s in h.rs_owner_ts
        if s.labels.get("owner_kind", "Deployment") == "Deployment"
    }
    for s in h.pod_info_ts:
        name, span = s.labels.get("pod", ""), _span(s)
        if not name or span is None:
            continue
        p = inv.pods.setdefault(name, PodEntity(name=name))
        p.seen(*span)
        p.namespace = p.namespace or s.labels.get("namespace", "")
        p.node = s.labels.get("node", "") or p.node
        if s.labels.get("created_by_kind") == "ReplicaSet":
            p.revision = p.revision or s.labels.get("created_by_name", "")
    for s in h.pod_owner_ts:
        name, rs = s.labels.get("pod", ""), s.labels.get("owner_name", "")
        if name and rs and s.labels.get("owner_kind", "ReplicaSet") == "ReplicaSet":
            p = inv.pods.setdefault(name, PodEntity(name=name))
            p.revision = rs
            span = _span(s)
            if span is not None and p.first_seen is None:
                p.seen(*span)
    for s in h.pod_labels_ts:
        labelled = inv.pods.get(s.labels.get("pod", ""))
        if labelled is not None:
            labelled.version = labelled.version or _first(s.labels, VERSION_LABELS)
    if inv.pods:
        inv.sources.append("kube-state-metrics")
    for s in h.gpu_ts:
        key, node, index = _gpu_key(s.labels)
        span = _span(s)
        if not key or span is None:
            continue
        g = inv.gpus.setdefault(key, GpuEntity(uuid=key, node=node, index=index))
        g.seen(*span)
        if node:
            keys = inv.nodes.setdefault(node, [])
            if key not in keys:
                keys.append(key)
        pod = _first(s.labels, POD_LABELS)
        if pod:
            if pod not in g.pods:
                g.pods.append(pod)
            p = inv.pods.setdefault(pod, PodEntity(name=pod))
            p.namespace = p.namespace or _first(s.labels, NS_LABELS)
            p.node = p.node or node
            if key not in p.gpus:
                p.gpus.append(key)
            if "kube-state-metrics" not in inv.sources:
                p.seen(*span)
    if inv.gpus:
        inv.sources.append("dcgm")
    for s in h.serving_ts:
        pod, span = _first(s.labels, POD_LABELS), _span(s)
        if not pod or span is None:
            continue
        p = inv.pods.setdefault(pod, PodEntity(name=pod))
        p.serving_first = span[0] if p.serving_first is None else min(p.serving_first, span[0])
        p.serving_last = span[1] if p.serving_last is None else max(p.serving_last, span[1])
        if p.first_seen is None:
            p.seen(*span)
    if h.serving_ts:
        inv.sources.append("engine")
    _add_restarts(inv, h)
    for p in inv.pods.values():
        if p.node:
            inv.nodes.setdefault(p.node, [])
        if not p.revision:
            m = _POD.match(p.name)
            if m:
                p.revision = f"{m.group('base')}-{m.group('hash')}"
        if not p.revision:
            continue
        r = inv.revisions.setdefault(p.revision, RevisionEntity(name=p.revision))
        m = _RS.match(p.revision)
        r.deployment = (
            r.deployment
            or rs_deploy.get(p.revision, "")
            or (m.group("deploy") if m else p.revision)
        )
        r.hash = r.hash or (m.group("hash") if m else "")
        r.version = r.version or p.version
        p.deployment = r.deployment
        r.pods.append(p.name)
        if p.first_seen is not None and p.last_seen is not None:
            r.seen(p.first_seen, p.last_seen)
    return inv


# -- changes ----------------------------------------------------------------------------------


def _dt(t: float) -> datetime:
    return datetime.fromtimestamp(t, UTC)


def _hm(t: float) -> str:
    return _dt(t).strftime("%H:%M:%S")


def _item(
    key: str, at: float, kind: str, message: Msg, severity: str = "warn", **extra: object
) -> ChangeItem:
    return ChangeItem(
        key=key,
        at=_dt(at),
        kind=kind,
        summary=message.text("en"),
        message=message,
        origin="metrics",
        severity=severity,
        **extra,  # type: ignore[arg-type]
    )


def rollout_items(inv: WindowInventory) -> list[ChangeItem]:
    """A rollout per new revision that appeared inside the window, from the previous
    revision: start (first new pod), end (last old pod gone; open while old pods remain),
    old → new ReplicaSet, hash and version, and how many pods each had."""
    out = []
    for deploy, revs in inv.deployments().items():
        for old, new in pairwise(revs):
            if new.first_seen is None or new.first_seen <= inv.start + inv.grace_s:
                continue
            done = old.last_seen is not None and inv.is_silent(old)
            end = old.last_seen if done and old.last_seen is not None else None
            args: dict[str, str | int | float | Msg] = {
                "deployment": deploy,
                "old": inv.revision_name(old.name),
                "new": inv.revision_name(new.name),
                "old_pods": len(old.pods),
                "new_pods": len(new.pods),
                "start": _hm(new.first_seen),
                "end": _hm(end) if end is not None else "",
            }
            key = "metrics.change.rollout_done" if end is not None else "metrics.change.rollout"
            diff = [DiffLine(field="revision", old=old.name, new=new.name)]
            if old.hash or new.hash:
                diff.append(DiffLine(field="pod-template-hash", old=old.hash, new=new.hash))
            if old.version or new.version:
                diff.append(DiffLine(field="version", old=old.version, new=new.version))
            out.append(
                _item(
                    f"metrics/rollout/{deploy}/{new.name}",
                    new.first_seen,
                    "rollout",
                    Msg(key=key, args=args),
                    diff=diff,
                    until=_dt(end) if end is not None else None,
                )
            )
    return out


def _increases(s: Series) -> list[tuple[float, float]]:
    """``(time, increase)`` of a counter at each step where it rose (resets counted)."""
    out = []
    for a, b in pairwise(s.samples):
        d = b.v - a.v if b.v >= a.v else b.v
        if d > 0:
            out.append((b.t, d))
    return out


def restart_items(inv: WindowInventory) -> list[ChangeItem]:
    """Restarts per container in the window, with the last terminated reason (read from
    the inventory's one count, :meth:`WindowInventory.restarts_in`)."""
    out = []
    for pod, p in inv.pods.items():
        for c in p.restarts or []:
            ups = [(t, d) for t, d in c.increases if inv.start <= t <= inv.end]
            if not ups:
                continue
            n = c.count(inv.start, inv.end)
            msg = Msg(
                key="metrics.change.restarts",
                args={
                    "pod": inv.name_msg(pod=pod),
                    "container": c.container,
                    "n": n,
                    "reason": c.reason or "?",
                    "first": _hm(ups[0][0]),
                    "last": _hm(ups[-1][0]),
                },
            )
            sev = "problem" if c.reason in ("Error", "OOMKilled") or n >= 3 else "warn"
            out.append(
                _item(
                    f"metrics/restart/{pod}/{c.container}",
                    ups[0][0],
                    "restart",
                    msg,
                    sev,
                    detail="",
                )
            )
    return out


def _flips(s: Series) -> list[tuple[float, float, float]]:
    """``(time, old, new)`` at each change of a gauge's value."""
    return [(b.t, a.v, b.v) for a, b in pairwise(s.samples) if a.v != b.v]


def readiness_items(inv: WindowInventory, h: HistoryInput) -> list[ChangeItem]:
    """A pod that was ready and became not ready (a new pod finishing its warm-up is part
    of its rollout, not a flip)."""
    out = []
    for s in h.ready:
        pod = s.labels.get("pod", "")
        was_ready = False
        for at, old, new in _flips(s):
            if old >= 1 and new < 1:
                was_ready = True
                msg = Msg(key="metrics.change.not_ready", args={"pod": inv.name_msg(pod=pod)})
                out.append(_item(f"metrics/ready/{pod}/{at}", at, "readiness", msg, "problem"))
            elif was_ready and new >= 1:
                msg = Msg(key="metrics.change.ready_again", args={"pod": inv.name_msg(pod=pod)})
                out.append(_item(f"metrics/ready/{pod}/{at}", at, "readiness", msg, "info"))
        if not was_ready and s.samples and s.samples[0].v >= 1 and s.samples[-1].v < 1:
            at = s.samples[-1].t
            msg = Msg(key="metrics.change.not_ready", args={"pod": inv.name_msg(pod=pod)})
            out.append(_item(f"metrics/ready/{pod}/{at}", at, "readiness", msg, "problem"))
    return out


def allocatable_items(h: HistoryInput) -> list[ChangeItem]:
    """A node's allocatable GPUs going down (the device plugin took a GPU out) or up."""
    out = []
    for s in h.allocatable:
        node = s.labels.get("node", "")
        for at, old, new in _flips(s):
            msg = Msg(
                key="metrics.change.allocatable",
                args={"node": node, "old": fmt_number(old), "new": fmt_number(new)},
            )
            sev = "problem" if new < old else "info"
            out.append(_item(f"metrics/alloc/{node}/{at}", at, "allocatable", msg, sev))
    return out


def node_condition_items(h: HistoryInput) -> list[ChangeItem]:
    """Node conditions turning on (pressure, ``Ready`` false): series of
    ``kube_node_status_condition{status="true"}``."""
    out = []
    for s in h.node_conditions:
        node, cond = s.labels.get("node", ""), s.labels.get("condition", "")
        bad_when = 0.0 if cond == "Ready" else 1.0
        for at, _old, new in _flips(s):
            if new != bad_when:
                continue
            msg = Msg(key="metrics.change.node_condition", args={"node": node, "condition": cond})
            out.append(_item(f"metrics/nodecond/{node}/{cond}/{at}", at, "node_condition", msg))
    return out


def xid_items(inv: WindowInventory, h: HistoryInput) -> list[ChangeItem]:
    """Each Xid code a GPU reported in the window, first time seen, with its meaning: the
    value of ``DCGM_FI_DEV_XID_ERRORS`` (the last Xid), or the ``xid`` label of
    ``DCGM_EXP_XID_ERRORS_COUNT`` where its count is above zero (maximum per step either
    way, so a 30-second burst is not missed)."""
    out = []
    for s in h.xid:
        key, node, index = _gpu_key(s.labels)
        label = s.labels.get("xid", "")
        first: dict[int, float] = {}
        for x in s.samples:
            if x.v == x.v and x.v > 0:
                first.setdefault(int(label) if label.isdigit() else int(x.v), x.t)
        for code, at in first.items():
            msg = Msg(
                key="metrics.change.xid",
                args={
                    "gpu": inv.name_msg(gpu=key, node=node) or gpu_text(node, index, key),
                    "code": code,
                    "meaning": Msg(key=XID_NAME, args={"code": code}),
                },
            )
            out.append(
                _item(
                    f"metrics/xid/{key}/{code}",
                    at,
                    "xid",
                    msg,
                    "problem",
                    detail=f"err_code={code}",
                )
            )
    return out


def stopped_items(inv: WindowInventory, h: HistoryInput) -> list[ChangeItem]:
    """Series that stopped reporting: a GPU's DCGM series, a live pod's serving series,
    a scrape target whose ``up`` went to 0."""
    out = []
    for g in inv.silent_gpus():
        assert g.last_seen is not None
        msg = Msg(key="metrics.change.gpu_silent", args={"gpu": inv.name_msg(gpu=g.uuid)})
        out.append(_item(f"metrics/silent/gpu/{g.uuid}", g.last_seen, "stopped", msg, "problem"))
    for p in inv.silent_pods():
        assert p.serving_last is not None
        msg = Msg(key="metrics.change.pod_silent", args={"pod": inv.name_msg(pod=p.name)})
        out.append(_item(f"metrics/silent/pod/{p.name}", p.serving_last, "stopped", msg, "problem"))
    for s in h.up:
        target = s.labels.get("pod", "") or s.labels.get("instance", "")
        for at, old, new in _flips(s):
            if old >= 1 and new < 1:
                msg = Msg(
                    key="metrics.change.target_down",
                    args={"target": inv.name_msg(pod=target) if target in inv.pods else target},
                )
                out.append(_item(f"metrics/up/{target}/{at}", at, "stopped", msg, "problem"))
    return out


def alert_items(inv: WindowInventory, h: HistoryInput) -> list[ChangeItem]:
    """Alerts that fired in the window (``ALERTS{alertstate="firing"}``), first firing."""
    out = []
    for s in h.alerts:
        name = s.labels.get("alertname", "")
        if not name or not s.samples:
            continue
        at = s.samples[0].t
        pod = s.labels.get("pod", "")
        where = inv.name(pod=pod) if pod else s.labels.get("node") or s.labels.get("namespace", "")
        msg = Msg(key="metrics.change.alert", args={"alert": name, "where": where})
        out.append(_item(f"metrics/alert/{name}/{where}", at, "alert", msg))
    return out


def metric_changes(h: HistoryInput, inv: WindowInventory | None = None) -> list[ChangeItem]:
    """Every change the window's metrics history shows, time-ordered."""
    from cockpit.analysis.changes import timeline

    inv = inv or build_window_inventory(h)
    items = [
        *rollout_items(inv),
        *restart_items(inv),
        *readiness_items(inv, h),
        *allocatable_items(h),
        *node_condition_items(h),
        *xid_items(inv, h),
        *stopped_items(inv, h),
        *alert_items(inv, h),
    ]
    return timeline(items)


def merge_changes(kube: list[ChangeItem], metrics: list[ChangeItem]) -> list[ChangeItem]:
    """Kubernetes' changes plus the metric-derived ones Kubernetes does not already tell:
    a metric rollout of a Deployment Kubernetes lists a rollout for, and a metric restart
    of a pod Kubernetes lists restarts for, are dropped (Kubernetes has the diff and the
    exit code); everything else (Xid, allocatable drops, silent series, alerts, changes
    older than Kubernetes' one-hour event retention) is kept. Time-ordered."""
    from cockpit.analysis.changes import timeline

    rolled = {i.key.split("/")[3] for i in kube if i.kind == "rollout" and i.key.count("/") >= 3}
    restarted = {i.key.split("/")[2] for i in kube if i.kind == "restart" and i.key.count("/") >= 2}
    kept = [
        i
        for i in metrics
        if not (i.kind == "rollout" and i.key.split("/")[2] in rolled)
        and not (i.kind == "restart" and i.key.split("/")[2] in restarted)
    ]
    return timeline([*kube, *kept])


# -- absence ----------------------------------------------------------------------------------


def silent_gpu_msg(inv: WindowInventory, g: GpuEntity) -> Msg:
    """``qwen-chat-…-lfdea on gpu-node-b GPU 0 (GPU-0588…) stopped reporting at 13:40:15;
    last values: 84 %, 69 °C, 540 W, Xid 79``: a GPU present earlier in the window and
    silent now (named with the pod that last held it)."""
    last = []
    units = {
        "hardware.gpu_util": " %",
        "hardware.temp": " °C",
        "hardware.power": " W",
        "hardware.fb_used": " MiB",
    }
    for sid, unit in units.items():
        v = g.last_values.get(sid)
        if v is not None:
            last.append(f"{fmt_number(v, 3)}{unit}")
    xid = g.last_values.get("hardware.xid")
    if xid:
        last.append(f"Xid {int(xid)}")
    return Msg(
        key="metrics.absence.gpu",
        args={
            "gpu": inv.name_msg(gpu=g.uuid),
            "at": _hm(g.last_seen or inv.end),
            "last": ", ".join(last) or "-",
        },
    )


def absent_msgs(inv: WindowInventory) -> dict[str, list[Msg]]:
    """Layer → the entities of that layer that reported earlier in the window and are
    silent now (``hardware``: each lost GPU, :func:`silent_gpu_msg`): what step I says is
    absent, never recovered."""
    gpus = [silent_gpu_msg(inv, g) for g in inv.silent_gpus()]
    return {"hardware": gpus} if gpus else {}


def with_lost_gpus(snap: GpuNodeSnapshot, inv: WindowInventory) -> list[Msg]:
    """Add to a DCGM snapshot of a node every GPU of that node that reported earlier in
    the window and is silent now, marked lost (its series vanished: no data is never
    healthy), in index order; returns one :func:`silent_gpu_msg` line per GPU added."""
    from cockpit.models.gpu import GpuSnapshot

    present = {g.uuid for g in snap.gpus if g.uuid} | {str(g.index) for g in snap.gpus}
    lines = []
    for g in inv.silent_gpus():
        if g.node != snap.node or g.uuid in present or not g.index.isdigit():
            continue
        if g.index in present and not g.uuid.startswith("GPU-"):
            continue
        holder = inv.pods.get(g.pods[-1]) if g.pods else None
        snap.gpus.append(
            GpuSnapshot(
                index=int(g.index),
                uuid=g.uuid if g.uuid.startswith("GPU-") else None,
                pod=f"{holder.namespace}/{holder.name}" if holder and holder.namespace else None,
                lost=True,
                lost_reason=silent_gpu_msg(inv, g).text("en"),
            )
        )
        lines.append(silent_gpu_msg(inv, g))
    snap.gpus.sort(key=lambda x: x.index)
    return lines


def xid_events(inv: WindowInventory, items: list[ChangeItem], node: str) -> list[XidEvent]:
    """The Xid codes the window's history saw on ``node`` (first time each), as events."""
    from cockpit.models.gpu import XidEvent as Event

    out = []
    for i in items:
        if i.kind != "xid" or i.at is None:
            continue
        uuid = i.key.split("/")[2]
        g = inv.gpus.get(uuid)
        if g is None or g.node != node:
            continue
        code = int(i.key.rsplit("/", 1)[1])
        out.append(
            Event(
                at=i.at,
                xid=code,
                gpu_index=int(g.index) if g.index.isdigit() else None,
                uuid=uuid if uuid.startswith("GPU-") else None,
                source="dcgm",
            )
        )
    return out


def xids_of(
    items: list[ChangeItem], gpus: Iterable[str], t0: float | None = None
) -> list[ChangeItem]:
    """The Xid items (:func:`xid_items`) of the GPUs ``gpus`` (UUIDs or ``node/gpuN``) at or
    after ``t0``, first seen first: the one "Xid seen in the window" fact of an entity."""
    keys = set(gpus)
    return [
        i
        for i in items
        if i.kind == "xid"
        and i.at is not None
        and i.key.split("/")[2] in keys
        and (t0 is None or i.at.timestamp() >= t0)
    ]


def xid_msg(found: list[ChangeItem]) -> Msg:
    """``Xid 79 at 13:39:45`` (the codes of :func:`xids_of`, each with when it was first
    seen)."""
    return Msg(
        key="metrics.window.xid",
        args={
            "xids": ", ".join(
                f"Xid {i.key.rsplit('/', 1)[1]} ({_hm(i.at.timestamp())})"
                for i in found
                if i.at is not None
            )
        },
    )


# -- the hardware layer over the window --------------------------------------------------------

BUSY_SIGNALS = (
    "hardware.gpu_util",
    "hardware.sm_active",
    "hardware.fb_used",
    "hardware.fb_reserved",
    "hardware.power",
)
"""Hardware signals that rise with the load: a GPU doing more work, not a faulty one."""

FAULT_SIGNALS = ("hardware.throttle", "hardware.xid")
"""Step C's hardware signals that say a GPU is faulty (with a lost GPU, which the
window's inventory tells): "busier, not faulty" names those it could read."""


def window_faults(inv: WindowInventory, items: list[ChangeItem]) -> list[Msg]:
    """What the window's history says is wrong with the hardware, whatever "now" shows:
    each Xid seen, each GPU that went silent (with its last values), each allocatable GPU
    drop."""
    out: list[Msg] = []
    for i in items:
        if i.kind == "xid" and i.message is not None and i.at is not None:
            out.append(
                Msg(key="metrics.window.at", args={"at": _hm(i.at.timestamp()), "what": i.message})
            )
    out += [silent_gpu_msg(inv, g) for g in inv.silent_gpus()]
    for i in items:
        if i.kind == "allocatable" and i.severity == "problem" and i.message and i.at:
            out.append(
                Msg(key="metrics.window.at", args={"at": _hm(i.at.timestamp()), "what": i.message})
            )
    return out


def _xid_row_from_window(summaries: list[SignalSummary], items: list[ChangeItem]) -> None:
    """The ``hardware.xid`` row reads the window too: an Xid seen in the window (a lost
    GPU's Xid 79 has no "now", so the service's count now is +0) makes a row that reads
    normal anomalous, its reason the Xids and when they were seen — the row then says
    what the layer's verdict, E's cohort and ``analyze`` say, and shows and pins that reading
    (:attr:`~cockpit.analysis.golden.SignalSummary.window_reading`). A row without data stays
    without data (the counter is not exported: absence is not "no Xid")."""
    xids = [i for i in items if i.kind == "xid" and i.at is not None]
    if not xids:
        return
    for s in summaries:
        if s.signal == "hardware.xid" and s.verdict == "normal":
            s.verdict = "anomalous"
            s.set_reason(xid_msg(xids))
            s.window_reading = xid_msg(xids)  # shown and pinned instead of the +0 now


def apply_hardware_window(
    layer: LayerVerdict,
    summaries: list[SignalSummary],
    inv: WindowInventory,
    items: list[ChangeItem],
) -> None:
    """Make step C's hardware verdict cover the window, and separate faulty from busier.

    A fault seen in the window (:func:`window_faults`) makes the layer anomalous even when
    the GPUs that still report look normal now (a lost GPU has no "now"); its lines come
    first, and an Xid seen in the window makes the Xid row anomalous too. When every anomalous hardware signal is one that rises with the load
    (:data:`BUSY_SIGNALS`) and nothing faulty was seen, a line says the GPUs are busier,
    not faulty.
    """
    faults = window_faults(inv, items)
    _xid_row_from_window(summaries, items)
    if faults:
        layer.verdict = "anomalous"
        layer.line_msgs = [*faults, *layer.line_msgs]
        layer.lines = [m.text("en") for m in layer.line_msgs]
        return
    bad = {s.signal for s in summaries if s.layer == "hardware" and s.verdict == "anomalous"}
    if bad and bad <= set(BUSY_SIGNALS):
        # What "not faulty" rests on: the fault signals read in the window; one the
        # exporter does not export is not seen, and absence is not "no" (ECC is read by
        # no step-C signal at all).
        read = {s.signal for s in summaries if s.verdict != "no_data"}
        seen = [k for k in FAULT_SIGNALS if k in read]
        unseen = [k for k in FAULT_SIGNALS if k not in read]
        args: dict[str, Arg] = {"names": signal_names(*sorted(bad))}
        key = "metrics.window.busier"
        if seen:
            args["seen"] = signal_names(*seen)
        if unseen:
            args["unseen"] = signal_names(*unseen)
            key = "metrics.window.busier_unseen" if seen else "metrics.window.busier_blind"
        note = Msg(key=key, args=args)
        layer.busier = "not_ruled_out" if unseen else "not_faulty"
        layer.line_msgs = [*layer.line_msgs, note]
        layer.lines = [m.text("en") for m in layer.line_msgs]


class SuspectTargets(BaseModel):
    """What a command needs to act on a suspect: its node, pod and Deployment, and the
    suspect's name as every screen writes it; ``restarted``: whether that pod's
    containers restarted in the history read (``None``: unknown, no restart counter)."""

    kind: str
    name: str
    node: str = ""
    pod: str = ""
    deployment: str = ""
    restarted: bool | None = None


def suspect_targets(inv: WindowInventory | None, key: str, kind: str) -> SuspectTargets:
    """The node, pod and Deployment of a suspect (``kind`` ``pod``, ``gpu`` — a UUID or
    ``node/gpuN`` —, ``node`` or ``revision``); parts the inventory does not know stay
    empty (F2 then keeps its ``<NODE>``/``<POD>``/``<DEPLOYMENT>`` placeholders)."""
    out = SuspectTargets(kind=kind, name=key)
    if kind == "node":
        out.node = key
        return out
    if kind == "gpu":
        g = inv.gpus.get(key) if inv is not None else None
        if g is not None:
            out.node, out.name = g.node, inv.name(gpu=key)  # type: ignore[union-attr]
            out.pod = g.pods[-1] if g.pods else ""
        elif "/gpu" in key:
            out.node = key.split("/gpu", 1)[0]
    if kind == "pod":
        out.pod = key
    if kind == "revision" and inv is not None and key in inv.revisions:
        out.deployment = inv.revisions[key].deployment
        out.name = inv.revision_name(key)
    if out.pod:
        p = inv.pods.get(out.pod) if inv is not None else None
        if p is not None:
            out.node = out.node or p.node
            out.deployment = p.deployment
            if kind == "pod":
                out.name = inv.name(pod=out.pod)  # type: ignore[union-attr]
        rc = inv.restarts_in(out.pod) if inv is not None else None
        out.restarted = None if rc is None else rc.n > 0
    return out


def conclusion_targets(inv: WindowInventory | None, suspect: Suspect) -> SuspectTargets | None:
    """:func:`suspect_targets` of a conclusion's suspect (a release: its new revision,
    named as the conclusion names the release, ``old → new``; a service or a client: the
    Deployment only); None when it names nothing."""
    key = {
        "pod": suspect.pod,
        "gpu": suspect.uuid,
        "node": suspect.node,
        "revision": suspect.new_revision,
    }.get(suspect.kind, "")
    if key:
        out = suspect_targets(inv, key, suspect.kind)
        if suspect.kind == "revision" and suspect.name:
            out.name = suspect.name  # the release as D and G name it: old → new
        return out
    if not suspect.kind:
        return None
    return SuspectTargets(kind=suspect.kind, name=suspect.name, deployment=suspect.deployment)


KUBE_VERSION_LABELS = ("app.kubernetes.io/version", "version", "app.version")
"""Pod labels that carry a release version, read from the Kubernetes API."""


def merge_kube_pods(inv: WindowInventory, pods: list[PodLite]) -> None:
    """Add what the Kubernetes API says about the pods that exist now: node, owning
    ReplicaSet (the revision), ``pod-template-hash`` and version labels, and creation time
    as the first time seen when the metrics did not go back that far. Metrics keep the
    pods that are gone; the API fills what kube-state-metrics does not export."""
    for pod in pods:
        name = pod.meta.name
        p = inv.pods.setdefault(name, PodEntity(name=name))
        p.namespace = p.namespace or pod.meta.namespace
        p.node = p.node or pod.spec.node_name
        rs = next((o.name for o in pod.meta.owners if o.kind == "ReplicaSet"), "")
        p.revision = p.revision or rs
        p.version = p.version or _first(pod.meta.labels, KUBE_VERSION_LABELS)
        created = pod.meta.created.timestamp() if pod.meta.created else None
        if created is not None and (p.first_seen is None or created < p.first_seen):
            p.first_seen = max(created, inv.start)
        p.last_seen = inv.end
        if p.node:
            inv.nodes.setdefault(p.node, [])
        if p.revision:
            r = inv.revisions.setdefault(p.revision, RevisionEntity(name=p.revision))
            m = _RS.match(p.revision)
            r.deployment = r.deployment or (m.group("deploy") if m else p.revision)
            r.hash = (
                r.hash
                or pod.meta.labels.get("pod-template-hash", "")
                or (m.group("hash") if m else "")
            )
            r.version = r.version or p.version
            p.deployment = p.deployment or r.deployment
            if name not in r.pods:
                r.pods.append(name)
            r.seen(p.first_seen or inv.start, inv.end)
    if pods and "kubernetes" not in inv.sources:
        inv.sources.append("kubernetes")
