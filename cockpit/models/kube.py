"""Slim pydantic views of the Kubernetes objects cockpit reads.

The Kubernetes source parses the API server's raw JSON into these models instead of the
official client's typed models: those are strict (``events.k8s.io/v1`` rejects
``eventTime: null``, which real servers return for kubelet events) and slow on large
lists. Only the fields the analyses use are kept; everything else is dropped at parse
time. Quantities stay strings (``"16"``, ``"256Gi"``, ``"500m"``); use
:func:`parse_quantity` to compare them.

Field names follow the Kubernetes API (camelCase turned snake_case).
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from cockpit.redact import mask, redact_args, redact_text, secret_name


class _M(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=False)


# -- quantities ----------------------------------------------------------------------------
_SUFFIX = {
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
    "n": 1e-9,
    "u": 1e-6,
    "m": 1e-3,
    "": 1.0,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "E": 1e18,
}
_QTY = re.compile(
    r"^\s*([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)\s*(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?\s*$"
)


@lru_cache(maxsize=4096)
def parse_quantity(text: str | int | float | None) -> float | None:
    """A Kubernetes resource quantity as a float in base units (cores, bytes, devices).

    ``"500m"`` → 0.5, ``"64Gi"`` → 68719476736.0, ``"8"`` → 8.0; ``None`` for an
    unparsable or missing value (never 0). Source: Kubernetes ``resource.Quantity``
    suffixes (k8s.io/apimachinery/pkg/api/resource).
    """
    if text is None:
        return None
    if isinstance(text, int | float):
        return float(text)
    m = _QTY.match(text)
    if not m:
        return None
    return float(m.group(1)) * _SUFFIX[m.group(2) or ""]


def parse_time(value: Any) -> datetime | None:
    """An RFC 3339 timestamp (``2026-03-10T12:00:00Z``, micro-time too) or ``None``."""
    if not value or not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


# -- common ----------------------------------------------------------------------------------
class OwnerRef(_M):
    """``metadata.ownerReferences[]`` (kind and name)."""

    kind: str
    name: str


class Meta(_M):
    """Object metadata.

    Attributes:
        last_update: Newest ``managedFields[].time`` (the object's last write), when sent.
    """

    name: str
    namespace: str = ""
    uid: str = ""
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    created: datetime | None = None
    owners: list[OwnerRef] = Field(default_factory=list)
    last_update: datetime | None = None


def meta_of(obj: dict[str, Any]) -> Meta:
    """Parse ``metadata``."""
    m = obj.get("metadata") or {}
    times = [parse_time(f.get("time")) for f in m.get("managedFields") or []]
    known = [t for t in times if t is not None]
    # Built from parsed JSON with the right types already; validation would only repeat it.
    return Meta.model_construct(
        name=m.get("name", ""),
        namespace=m.get("namespace") or "",
        uid=m.get("uid") or "",
        labels=m.get("labels") or {},
        annotations=m.get("annotations") or {},
        created=parse_time(m.get("creationTimestamp")),
        owners=[
            OwnerRef.model_construct(kind=o.get("kind", ""), name=o.get("name", ""))
            for o in m.get("ownerReferences") or []
        ],
        last_update=max(known) if known else None,
    )


class Condition(_M):
    """A status condition (pods, nodes, PodGroups, Workloads)."""

    type: str
    status: str = ""
    reason: str = ""
    message: str = ""
    last_transition: datetime | None = None


def conditions_of(raw: list[dict[str, Any]] | None) -> list[Condition]:
    """Parse ``status.conditions``."""
    return [
        Condition.model_construct(
            type=c.get("type", ""),
            status=c.get("status", ""),
            reason=c.get("reason") or "",
            message=c.get("message") or "",
            last_transition=parse_time(c.get("lastTransitionTime")),
        )
        for c in raw or []
    ]


# -- pods ----------------------------------------------------------------------------------------
class Toleration(_M):
    """``spec.tolerations[]``; ``operator`` is ``Equal`` (default) or ``Exists``."""

    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""


class Taint(_M):
    """``spec.taints[]`` of a node."""

    key: str
    value: str = ""
    effect: str

    def text(self) -> str:
        """``key=value:Effect`` as ``kubectl describe node`` prints it."""
        return f"{self.key}{'=' + self.value if self.value else ''}:{self.effect}"


class EnvVar(_M):
    """An environment variable; ``value_from`` names the source (``secretKeyRef x/y``)."""

    name: str
    value: str = ""
    value_from: str = ""


class ContainerSpec(_M):
    """The parts of a container spec a rollout diff and the scheduler look at."""

    name: str
    image: str = ""
    command: list[str] = Field(default_factory=list)
    args: list[str] = Field(default_factory=list)
    env: list[EnvVar] = Field(default_factory=list)
    env_from: list[str] = Field(default_factory=list)
    requests: dict[str, str] = Field(default_factory=dict)
    limits: dict[str, str] = Field(default_factory=dict)
    readiness_probe: dict[str, Any] | None = None
    liveness_probe: dict[str, Any] | None = None
    startup_probe: dict[str, Any] | None = None


def _env_source(v: dict[str, Any]) -> str:
    for key, ref in v.items():
        if isinstance(ref, dict):
            name = ref.get("name") or ref.get("fieldPath") or ref.get("resource") or ""
            k = ref.get("key", "")
            return f"{key} {name}{'/' + k if k else ''}".strip()
    return "valueFrom"


def _env_value(name: str, value: Any) -> str:
    return mask(str(value)) if secret_name(name) else redact_text(str(value))


def container_of(c: dict[str, Any]) -> ContainerSpec:
    """Parse one ``spec.containers[]`` entry."""
    res = c.get("resources") or {}
    env_from = []
    for e in c.get("envFrom") or []:
        for key in ("configMapRef", "secretRef"):
            if key in e:
                env_from.append(f"{key} {e[key].get('name', '')}")
    return ContainerSpec(
        name=c.get("name", ""),
        image=c.get("image") or "",
        # Secrets are masked here, where they enter (cockpit.redact).
        command=redact_args([str(x) for x in c.get("command") or []]),
        args=redact_args([str(x) for x in c.get("args") or []]),
        env=[
            EnvVar(
                name=e.get("name", ""),
                value=_env_value(e.get("name", ""), e["value"]) if "value" in e else "",
                value_from=_env_source(e["valueFrom"]) if "valueFrom" in e else "",
            )
            for e in c.get("env") or []
        ],
        env_from=env_from,
        requests={k: str(v) for k, v in (res.get("requests") or {}).items()},
        limits={k: str(v) for k, v in (res.get("limits") or {}).items()},
        readiness_probe=c.get("readinessProbe"),
        liveness_probe=c.get("livenessProbe"),
        startup_probe=c.get("startupProbe"),
    )


class PodSpecLite(_M):
    """The scheduling- and rollout-relevant part of a pod spec (or pod template)."""

    containers: list[ContainerSpec] = Field(default_factory=list)
    init_containers: list[ContainerSpec] = Field(default_factory=list)
    node_name: str = ""
    node_selector: dict[str, str] = Field(default_factory=dict)
    tolerations: list[Toleration] = Field(default_factory=list)
    affinity: dict[str, Any] = Field(default_factory=dict)
    priority_class_name: str = ""
    priority: int | None = None
    scheduler_name: str = "default-scheduler"
    config_maps: list[str] = Field(default_factory=list)
    """ConfigMaps referenced by volumes, ``envFrom`` and ``valueFrom``."""
    pvcs: list[str] = Field(default_factory=list)


def pod_spec_of(spec: dict[str, Any]) -> PodSpecLite:
    """Parse a pod ``spec`` (also the ``template.spec`` of controllers)."""
    cms: list[str] = []
    pvcs: list[str] = []
    for v in spec.get("volumes") or []:
        if "configMap" in v:
            cms.append(v["configMap"].get("name", ""))
        if "persistentVolumeClaim" in v:
            pvcs.append(v["persistentVolumeClaim"].get("claimName", ""))
        for src in (v.get("projected") or {}).get("sources") or []:
            if "configMap" in src:
                cms.append(src["configMap"].get("name", ""))
    conts = [container_of(c) for c in spec.get("containers") or []]
    for c in conts:
        for ref in c.env_from:
            if ref.startswith("configMapRef "):
                cms.append(ref.split(" ", 1)[1])
        for e in c.env:
            if e.value_from.startswith("configMapKeyRef "):
                cms.append(e.value_from.split(" ", 1)[1].split("/")[0])
    return PodSpecLite(
        containers=conts,
        init_containers=[container_of(c) for c in spec.get("initContainers") or []],
        node_name=spec.get("nodeName") or "",
        node_selector=spec.get("nodeSelector") or {},
        tolerations=[
            Toleration(
                key=t.get("key") or "",
                operator=t.get("operator") or "Equal",
                value=t.get("value") or "",
                effect=t.get("effect") or "",
            )
            for t in spec.get("tolerations") or []
        ],
        affinity=spec.get("affinity") or {},
        priority_class_name=spec.get("priorityClassName") or "",
        priority=spec.get("priority"),
        scheduler_name=spec.get("schedulerName") or "default-scheduler",
        config_maps=sorted({c for c in cms if c}),
        pvcs=sorted({p for p in pvcs if p}),
    )


class Termination(_M):
    """``lastState.terminated`` of a container (reason ``OOMKilled``, exit code 137…)."""

    exit_code: int | None = None
    reason: str = ""
    message: str = ""
    started_at: datetime | None = None
    finished_at: datetime | None = None


class ContainerStatus(_M):
    """``status.containerStatuses[]``."""

    name: str
    image: str = ""
    image_id: str = ""
    ready: bool = False
    restart_count: int = 0
    waiting_reason: str = ""
    running_since: datetime | None = None
    last_terminated: Termination | None = None

    @property
    def digest(self) -> str:
        """The image digest (``sha256:…``) from ``imageID``, or ``""``."""
        return self.image_id.split("@", 1)[1] if "@" in self.image_id else ""


def _termination(t: dict[str, Any] | None) -> Termination | None:
    if not t:
        return None
    return Termination(
        exit_code=t.get("exitCode"),
        reason=t.get("reason") or "",
        message=redact_text(t.get("message") or ""),
        started_at=parse_time(t.get("startedAt")),
        finished_at=parse_time(t.get("finishedAt")),
    )


class PodLite(_M):
    """A pod: metadata, the spec parts above, phase, conditions and container statuses."""

    meta: Meta
    spec: PodSpecLite
    phase: str = ""
    conditions: list[Condition] = Field(default_factory=list)
    container_statuses: list[ContainerStatus] = Field(default_factory=list)
    start_time: datetime | None = None

    def condition(self, type_: str) -> Condition | None:
        """The condition of that type, if present."""
        return next((c for c in self.conditions if c.type == type_), None)

    def requests(self) -> dict[str, float]:
        """Effective requests: max(sum of containers, any init container), per resource.

        Source: Kubernetes docs, "Resource sharing within containers" (init containers).
        """
        return effective_requests(self.spec)


def effective_requests(spec: PodSpecLite) -> dict[str, float]:
    """Per-resource effective request of a pod spec (see :meth:`PodLite.requests`)."""
    total: dict[str, float] = {}
    for c in spec.containers:
        for k, v in c.requests.items():
            q = parse_quantity(v)
            if q is not None:
                total[k] = total.get(k, 0.0) + q
        # A limit without a request defaults the request to the limit (extended resources).
        for k, v in c.limits.items():
            if k not in c.requests:
                q = parse_quantity(v)
                if q is not None:
                    total[k] = total.get(k, 0.0) + q
    for c in spec.init_containers:
        for k, v in c.requests.items():
            q = parse_quantity(v)
            if q is not None and q > total.get(k, 0.0):
                total[k] = q
    return total


def pod_of(obj: dict[str, Any]) -> PodLite:
    """Parse a Pod."""
    st = obj.get("status") or {}
    statuses = []
    for s in st.get("containerStatuses") or []:
        state = s.get("state") or {}
        statuses.append(
            ContainerStatus(
                name=s.get("name", ""),
                image=s.get("image") or "",
                image_id=s.get("imageID") or "",
                ready=bool(s.get("ready")),
                restart_count=int(s.get("restartCount") or 0),
                waiting_reason=(state.get("waiting") or {}).get("reason") or "",
                running_since=parse_time((state.get("running") or {}).get("startedAt")),
                last_terminated=_termination((s.get("lastState") or {}).get("terminated")),
            )
        )
    return PodLite(
        meta=meta_of(obj),
        spec=pod_spec_of(obj.get("spec") or {}),
        phase=st.get("phase") or "",
        conditions=conditions_of(st.get("conditions")),
        container_statuses=statuses,
        start_time=parse_time(st.get("startTime")),
    )


# -- nodes ---------------------------------------------------------------------------------------
class NodeInfo(_M):
    """``status.nodeInfo`` versions."""

    kernel_version: str = ""
    os_image: str = ""
    container_runtime_version: str = ""
    kubelet_version: str = ""


class NodeLite(_M):
    """A node: labels, taints, cordon, capacity vs allocatable, conditions, versions."""

    meta: Meta
    taints: list[Taint] = Field(default_factory=list)
    unschedulable: bool = False
    capacity: dict[str, str] = Field(default_factory=dict)
    allocatable: dict[str, str] = Field(default_factory=dict)
    conditions: list[Condition] = Field(default_factory=list)
    info: NodeInfo = Field(default_factory=NodeInfo)

    @property
    def ready(self) -> bool | None:
        """``Ready`` condition: True/False, ``None`` when Unknown or missing."""
        for c in self.conditions:
            if c.type == "Ready":
                return True if c.status == "True" else False if c.status == "False" else None
        return None


def node_of(obj: dict[str, Any]) -> NodeLite:
    """Parse a Node."""
    spec = obj.get("spec") or {}
    st = obj.get("status") or {}
    info = st.get("nodeInfo") or {}
    return NodeLite.model_construct(
        meta=meta_of(obj),
        taints=[
            Taint.model_construct(
                key=t.get("key", ""), value=t.get("value") or "", effect=t.get("effect") or ""
            )
            for t in spec.get("taints") or []
        ],
        unschedulable=bool(spec.get("unschedulable")),
        capacity={k: str(v) for k, v in (st.get("capacity") or {}).items()},
        allocatable={k: str(v) for k, v in (st.get("allocatable") or {}).items()},
        conditions=conditions_of(st.get("conditions")),
        info=NodeInfo.model_construct(
            kernel_version=info.get("kernelVersion") or "",
            os_image=info.get("osImage") or "",
            container_runtime_version=info.get("containerRuntimeVersion") or "",
            kubelet_version=info.get("kubeletVersion") or "",
        ),
    )


class NodeRequests(_M):
    """Sum of effective requests of non-terminated pods bound to each node.

    Attributes:
        by_node: ``{node: {resource: amount}}`` in base units (cores, bytes, devices).
        pods: ``{node: number of pods}``.
        pods_scanned: Pods read to build it.
    """

    by_node: dict[str, dict[str, float]] = Field(default_factory=dict)
    pods: dict[str, int] = Field(default_factory=dict)
    pods_scanned: int = 0


# -- events ------------------------------------------------------------------------------------
class EventLite(_M):
    """A core/v1 Event (``eventTime`` may be null; ``first``/``last`` are the timestamps)."""

    meta: Meta
    kind: str = ""
    """``involvedObject.kind``."""
    name: str = ""
    """``involvedObject.name``."""
    namespace: str = ""
    reason: str = ""
    message: str = ""
    type: str = ""
    count: int = 1
    first: datetime | None = None
    last: datetime | None = None
    component: str = ""

    @property
    def when(self) -> datetime | None:
        """Newest time the event was seen."""
        return self.last or self.first or self.meta.created


def event_of(obj: dict[str, Any]) -> EventLite:
    """Parse a core/v1 Event (or an ``events.k8s.io/v1`` one: regarding/note/deprecated*)."""
    io = obj.get("involvedObject") or obj.get("regarding") or {}
    series = obj.get("series") or {}
    first = parse_time(obj.get("firstTimestamp") or obj.get("deprecatedFirstTimestamp"))
    last = parse_time(
        series.get("lastObservedTime")
        or obj.get("lastTimestamp")
        or obj.get("deprecatedLastTimestamp")
        or obj.get("eventTime")
    )
    src = obj.get("source") or obj.get("deprecatedSource") or {}
    return EventLite(
        meta=meta_of(obj),
        kind=io.get("kind") or "",
        name=io.get("name") or "",
        namespace=io.get("namespace") or "",
        reason=obj.get("reason") or "",
        message=redact_text(obj.get("message") or obj.get("note") or ""),
        type=obj.get("type") or "",
        count=int(obj.get("count") or obj.get("deprecatedCount") or series.get("count") or 1),
        first=first or parse_time(obj.get("eventTime")),
        last=last,
        component=src.get("component")
        or obj.get("reportingComponent")
        or obj.get("reportingController")
        or "",
    )


# -- controllers ---------------------------------------------------------------------------------
class Revision(_M):
    """One revision of a workload: a ReplicaSet (Deployment) or ControllerRevision
    (StatefulSet/DaemonSet).

    Attributes:
        owner_kind / owner: The workload it belongs to.
        revision: ``deployment.kubernetes.io/revision`` or ``ControllerRevision.revision``.
        template: The pod template spec of that revision.
        replicas / ready: Current replica counts (ReplicaSets only; ``None`` otherwise).
        change_cause: ``kubernetes.io/change-cause`` annotation.
        template_hash: ``pod-template-hash`` (pods of this revision carry it).
    """

    meta: Meta
    owner_kind: str = ""
    owner: str = ""
    revision: int = 0
    template: PodSpecLite = Field(default_factory=PodSpecLite)
    template_labels: dict[str, str] = Field(default_factory=dict)
    replicas: int | None = None
    ready: int | None = None
    change_cause: str = ""
    template_hash: str = ""


def replicaset_of(obj: dict[str, Any]) -> Revision:
    """Parse a ReplicaSet as a :class:`Revision`."""
    m = meta_of(obj)
    spec = obj.get("spec") or {}
    tpl = spec.get("template") or {}
    st = obj.get("status") or {}
    owner = next((o for o in m.owners if o.kind == "Deployment"), None)
    try:
        rev = int(m.annotations.get("deployment.kubernetes.io/revision", "0"))
    except ValueError:
        rev = 0
    return Revision(
        meta=m,
        owner_kind="Deployment" if owner else "",
        owner=owner.name if owner else "",
        revision=rev,
        template=pod_spec_of(tpl.get("spec") or {}),
        template_labels=(tpl.get("metadata") or {}).get("labels") or {},
        replicas=int(spec.get("replicas") or 0),
        ready=int(st.get("readyReplicas") or 0),
        change_cause=m.annotations.get("kubernetes.io/change-cause", ""),
        template_hash=m.labels.get("pod-template-hash", ""),
    )


def controller_revision_of(obj: dict[str, Any]) -> Revision:
    """Parse a ControllerRevision (its ``data`` holds a ``spec.template`` patch)."""
    m = meta_of(obj)
    data = obj.get("data") or {}
    tpl = (data.get("spec") or {}).get("template") or {}
    owner = next((o for o in m.owners), None)
    return Revision(
        meta=m,
        owner_kind=owner.kind if owner else "",
        owner=owner.name if owner else "",
        revision=int(obj.get("revision") or 0),
        template=pod_spec_of(tpl.get("spec") or {}),
        template_labels=(tpl.get("metadata") or {}).get("labels") or {},
        template_hash=m.labels.get("controller-revision-hash", m.name),
    )


class Workload(_M):
    """A Deployment or StatefulSet (selector, template, replica counts)."""

    meta: Meta
    kind: str
    selector: dict[str, str] = Field(default_factory=dict)
    template: PodSpecLite = Field(default_factory=PodSpecLite)
    replicas: int = 0
    updated: int | None = None
    ready: int = 0


def workload_of(obj: dict[str, Any]) -> Workload:
    """Parse a Deployment or StatefulSet."""
    spec = obj.get("spec") or {}
    st = obj.get("status") or {}
    return Workload(
        meta=meta_of(obj),
        kind=obj.get("kind") or "",
        selector=(spec.get("selector") or {}).get("matchLabels") or {},
        template=pod_spec_of((spec.get("template") or {}).get("spec") or {}),
        replicas=int(spec.get("replicas") or 0),
        updated=st.get("updatedReplicas"),
        ready=int(st.get("readyReplicas") or 0),
    )


class DaemonSetLite(_M):
    """A DaemonSet's desired/ready counts and selector (the GPU device plugin's health)."""

    meta: Meta
    selector: dict[str, str] = Field(default_factory=dict)
    desired: int = 0
    ready: int = 0
    node_selector: dict[str, str] = Field(default_factory=dict)
    tolerations: list[Toleration] = Field(default_factory=list)


def daemonset_of(obj: dict[str, Any]) -> DaemonSetLite:
    """Parse a DaemonSet."""
    spec = obj.get("spec") or {}
    st = obj.get("status") or {}
    tpl = pod_spec_of((spec.get("template") or {}).get("spec") or {})
    return DaemonSetLite(
        meta=meta_of(obj),
        selector=(spec.get("selector") or {}).get("matchLabels") or {},
        desired=int(st.get("desiredNumberScheduled") or 0),
        ready=int(st.get("numberReady") or 0),
        node_selector=tpl.node_selector,
        tolerations=tpl.tolerations,
    )


# -- config, quota, priority, gangs ------------------------------------------------------------
class HelmRelease(_M):
    """One Helm 3 release revision, decoded from its ``sh.helm.release.v1.*`` Secret."""

    name: str
    namespace: str
    version: int
    status: str = ""
    chart: str = ""
    chart_version: str = ""
    app_version: str = ""
    values: dict[str, Any] = Field(default_factory=dict)
    deployed_at: datetime | None = None
    description: str = ""


class ConfigMapLite(_M):
    """A ConfigMap's identity and last change time (no data: it may hold secrets by mistake)."""

    meta: Meta
    keys: list[str] = Field(default_factory=list)

    @property
    def changed_at(self) -> datetime | None:
        """Newest ``managedFields`` time, else the creation time."""
        return self.meta.last_update or self.meta.created


class ResourceQuotaLite(_M):
    """``status.hard`` vs ``status.used`` of a ResourceQuota."""

    meta: Meta
    hard: dict[str, str] = Field(default_factory=dict)
    used: dict[str, str] = Field(default_factory=dict)


class PriorityClassLite(_M):
    """A PriorityClass (value, preemption policy)."""

    name: str
    value: int = 0
    preemption_policy: str = "PreemptLowerPriority"
    global_default: bool = False


class GangLite(_M):
    """A Volcano PodGroup or Kueue Workload.

    Attributes:
        kind: ``PodGroup`` or ``Workload``.
        min_member: PodGroup ``minMember`` (``None`` for Workloads).
        queue: Volcano queue or Kueue LocalQueue.
        phase: PodGroup ``status.phase``; for Workloads ``admitted``/``pending``.
    """

    meta: Meta
    kind: str
    min_member: int | None = None
    queue: str = ""
    phase: str = ""
    conditions: list[Condition] = Field(default_factory=list)


def gang_of(obj: dict[str, Any]) -> GangLite:
    """Parse a PodGroup or Workload."""
    kind = obj.get("kind") or ""
    spec = obj.get("spec") or {}
    st = obj.get("status") or {}
    conds = conditions_of(st.get("conditions"))
    if kind == "PodGroup":
        return GangLite(
            meta=meta_of(obj),
            kind=kind,
            min_member=spec.get("minMember"),
            queue=spec.get("queue") or "",
            phase=st.get("phase") or "",
            conditions=conds,
        )
    admitted = any(c.type == "Admitted" and c.status == "True" for c in conds)
    return GangLite(
        meta=meta_of(obj),
        kind=kind,
        queue=spec.get("queueName") or "",
        phase="admitted" if admitted else "pending",
        conditions=conds,
    )


class PodLog(_M):
    """A pod log excerpt.

    Attributes:
        text: The log text (UTF-8, undecodable bytes replaced).
        container: Container it came from ("" = the default one).
        previous: From the previous (terminated) instance.
        tail_lines: Lines asked for.
        since_time: The ``sinceTime`` asked for (``None``: the whole log).
        limit_bytes: The ``limitBytes`` asked for (``None``: no limit).
        truncated: The answer reached ``limit_bytes``: the log goes on past it.
        size: The answer's size in bytes as the API server sent it (before decoding and
            redaction); ``None`` when not known (a bundle recorded without it).
    """

    namespace: str
    pod: str
    container: str = ""
    previous: bool = False
    tail_lines: int | None = None
    since_time: datetime | None = None
    limit_bytes: int | None = None
    truncated: bool = False
    text: str = ""
    size: int | None = None


class AccessCheck(_M):
    """One SelfSubjectAccessReview answer.

    Attributes:
        verb / resource / group / namespace / subresource: What was asked.
        allowed: The API server's answer; ``None`` when the review itself failed.
        reason: The server's reason, or why the review failed.
        command: The ``kubectl auth can-i`` line that checks the same thing.
    """

    verb: str
    resource: str
    group: str = ""
    namespace: str = ""
    subresource: str = ""
    allowed: bool | None = None
    reason: str = ""
    command: str = ""
