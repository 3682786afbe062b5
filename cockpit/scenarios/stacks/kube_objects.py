"""Kubernetes API objects of a scenario: what ``kubectl get -o json`` would answer for its
nodes, pods, revisions, ConfigMaps and events, consistent with the metric series the
other stacks emit for the same :mod:`~cockpit.scenarios.topology` (same pod, node, GPU
and ReplicaSet names, same creation and restart times).

Objects are plain dicts with the fields the official ``kubernetes`` client requires
(``metadata.name``, container ``name``, event ``involvedObject``), shaped like the
API server's answers (Kubernetes API reference v1.31: Pod, Node, Event, ReplicaSet,
Deployment, ConfigMap). A :class:`KubeWorld` is what a local API server serves for the
scenario and what ``make demo-bundle`` / ``make drills`` record through the same
``kube`` recording plan as ``cockpit record``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from cockpit.scenarios.topology import Node, Pod

Obj = dict[str, Any]


@dataclass
class KubeWorld:
    """The Kubernetes side of a scenario.

    Attributes:
        objects: API objects (any kind the local API server serves).
        logs: Pod logs by ``(namespace, pod, container, previous)`` (container ``""``:
            the pod's first container); lines start with a kubelet-style RFC 3339
            timestamp.
    """

    objects: list[Obj] = field(default_factory=list)
    logs: dict[tuple[str, str, str, bool], str] = field(default_factory=dict)

    def add(self, *objs: Obj) -> KubeWorld:
        """Append objects; returns ``self``."""
        self.objects.extend(objs)
        return self

    def log(self, pod: Pod, lines: list[tuple[int, str]], previous: bool = False) -> None:
        """Register ``pod``'s log: ``(Unix seconds, text)`` per line."""
        text = "".join(f"{ts(t)} {line}\n" for t, line in lines)
        self.logs[(pod.namespace, pod.name, "", previous)] = text


def ts(t: float) -> str:
    """RFC 3339 UTC of Unix seconds ``t`` (whole seconds, as the API server writes)."""
    return datetime.fromtimestamp(int(t), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _meta(name: str, namespace: str | None, created: float, **extra: Any) -> Obj:
    m: Obj = {"name": name, "creationTimestamp": ts(created)}
    if namespace is not None:
        m["namespace"] = namespace
    m.update({k: v for k, v in extra.items() if v})
    return m


def node_object(
    node: Node,
    *,
    created: float,
    allocatable_gpus: int | None = None,
    ready: bool = True,
    ready_since: float | None = None,
    heartbeat: float | None = None,
    unschedulable: bool = False,
    taints: list[Obj] | None = None,
) -> Obj:
    """A GPU Node with gpu-feature-discovery labels; allocatable GPUs default to all."""
    gpus = len(node.gpus)
    labels = {
        "kubernetes.io/hostname": node.name,
        "kubernetes.io/os": "linux",
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": node.gpu_product,
        "nvidia.com/gpu.count": str(gpus),
        "nvidia.com/cuda.driver-version.full": node.driver_version,
    }
    capacity = {
        "cpu": "192",
        "memory": "2048Gi",
        "pods": "110",
        "ephemeral-storage": "3500Gi",
        "nvidia.com/gpu": str(gpus),
    }
    allocatable = {
        **capacity,
        "nvidia.com/gpu": str(gpus if allocatable_gpus is None else allocatable_gpus),
    }
    spec: Obj = {}
    if unschedulable:
        spec["unschedulable"] = True
    if taints:
        spec["taints"] = taints
    since = created if ready_since is None else ready_since
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": _meta(node.name, None, created, labels=labels),
        "spec": spec,
        "status": {
            "capacity": capacity,
            "allocatable": allocatable,
            "addresses": [{"type": "InternalIP", "address": node.ip}],
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True" if ready else "False",
                    "reason": "KubeletReady" if ready else "KubeletNotReady",
                    "message": "kubelet is posting ready status"
                    if ready
                    else "PLEG is not healthy",
                    "lastHeartbeatTime": ts(heartbeat if heartbeat is not None else since),
                    "lastTransitionTime": ts(since),
                }
            ],
            "nodeInfo": {
                "machineID": f"m-{node.name}",
                "systemUUID": f"s-{node.name}",
                "bootID": f"b-{node.name}",
                "kernelVersion": "5.15.0-105-generic",
                "osImage": "Ubuntu 22.04.4 LTS",
                "containerRuntimeVersion": "containerd://1.7.13",
                "kubeletVersion": "v1.31.0",
                "kubeProxyVersion": "v1.31.0",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
        },
    }


@dataclass(frozen=True)
class Template:
    """The pod template of one revision.

    Attributes:
        image: Container image.
        args: Container arguments.
        gpus: ``nvidia.com/gpu`` requested per pod.
        memory: Memory request and limit.
        configmap: A ConfigMap mounted as a volume (``""`` = none).
        probe_path: HTTP readiness probe path.
    """

    image: str
    args: tuple[str, ...] = ()
    gpus: int = 1
    memory: str = "200Gi"
    configmap: str = ""
    probe_path: str = "/health"

    def spec(self, container: str) -> Obj:
        """The pod spec (``containers``, ``volumes``)."""
        res = {"cpu": "16", "memory": self.memory, "nvidia.com/gpu": str(self.gpus)}
        c: Obj = {
            "name": container,
            "image": self.image,
            "args": list(self.args),
            "ports": [{"containerPort": 8000, "name": "http"}],
            "resources": {"requests": res, "limits": {k: v for k, v in res.items() if k != "cpu"}},
            "readinessProbe": {
                "httpGet": {"path": self.probe_path, "port": 8000},
                "periodSeconds": 5,
                "failureThreshold": 3,
            },
        }
        spec: Obj = {"containers": [c], "restartPolicy": "Always"}
        if self.configmap:
            c["volumeMounts"] = [{"name": "engine-config", "mountPath": "/etc/engine"}]
            spec["volumes"] = [{"name": "engine-config", "configMap": {"name": self.configmap}}]
        return spec


def _owner(kind: str, name: str) -> list[Obj]:
    return [
        {
            "apiVersion": "batch/v1" if kind == "Job" else "apps/v1",
            "kind": kind,
            "name": name,
            "uid": f"uid-{kind.lower()}-{name}",
            "controller": True,
        }
    ]


def pod_object(
    pod: Pod,
    template: Template,
    *,
    created: float,
    ready_at: float | None,
    restarts: int = 0,
    last_terminated: Obj | None = None,
    waiting: tuple[str, str] | None = None,
    pending_message: str = "",
    owner_kind: str = "ReplicaSet",
) -> Obj:
    """A Pod of ``pod`` (its node, labels, UID, owner) on ``template``.

    ``ready_at`` None = not ready; ``waiting`` = ``(reason, message)`` of a container
    that is not running (``CrashLoopBackOff``); ``pending_message`` makes an unscheduled
    Pending pod with the scheduler's ``PodScheduled=False`` message (``pod.node`` unused).
    """
    spec = template.spec(pod.container)
    meta = _meta(
        pod.name,
        pod.namespace,
        created,
        labels=dict(pod.labels),
        uid=pod.uid,
        ownerReferences=_owner(owner_kind, pod.replicaset),
    )
    if pending_message:
        status: Obj = {
            "phase": "Pending",
            "qosClass": "Burstable",
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": pending_message,
                    "lastTransitionTime": ts(created),
                }
            ],
        }
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}
    spec["nodeName"] = pod.node
    state: Obj = {"running": {"startedAt": ts(created + 5)}}
    if waiting is not None:
        state = {"waiting": {"reason": waiting[0], "message": waiting[1]}}
    cstatus: Obj = {
        "name": pod.container,
        "image": template.image,
        "imageID": f"{template.image.split(':')[0]}@sha256:{pod.replicaset[-10:]:0>64}",
        "containerID": f"containerd://{pod.uid.replace('-', '')}",
        "ready": ready_at is not None,
        "restartCount": restarts,
        "started": waiting is None,
        "state": state,
    }
    if last_terminated:
        cstatus["lastState"] = {"terminated": last_terminated}
    conds = [{"type": "PodScheduled", "status": "True", "lastTransitionTime": ts(created)}]
    conds.append(
        {
            "type": "Ready",
            "status": "True" if ready_at is not None else "False",
            "lastTransitionTime": ts(ready_at if ready_at is not None else created),
        }
    )
    status = {
        "phase": "Running",
        "podIP": pod.ip,
        "startTime": ts(created),
        "qosClass": "Burstable",
        "conditions": conds,
        "containerStatuses": [cstatus],
    }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def terminated(reason: str, exit_code: int, started: float, finished: float) -> Obj:
    """A container's ``lastState.terminated``."""
    return {
        "reason": reason,
        "exitCode": exit_code,
        "startedAt": ts(started),
        "finishedAt": ts(finished),
    }


def revision_objects(
    deployment: str,
    namespace: str,
    revisions: list[tuple[Pod, Template, float, int]],
    *,
    replicas: int,
    cause: dict[int, str] | None = None,
) -> list[Obj]:
    """The Deployment and one ReplicaSet per revision.

    Args:
        revisions: ``(a pod of the revision, its template, when the ReplicaSet was
            created, how many pods it runs now)`` per revision, oldest first; the last
            one is the Deployment's current revision.
        cause: ``kubernetes.io/change-cause`` per revision number.
    """
    out: list[Obj] = []
    selector = {"app": deployment}
    for pod, template, created, count in revisions:
        labels = {k: v for k, v in pod.labels.items()}
        ann = {"deployment.kubernetes.io/revision": str(pod.revision)}
        if (cause or {}).get(pod.revision):
            ann["kubernetes.io/change-cause"] = (cause or {})[pod.revision]
        out.append(
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": _meta(
                    pod.replicaset,
                    namespace,
                    created,
                    labels=labels,
                    annotations=ann,
                    ownerReferences=_owner("Deployment", deployment),
                ),
                "spec": {
                    "replicas": count,
                    "selector": {
                        "matchLabels": {
                            **selector,
                            "pod-template-hash": labels["pod-template-hash"],
                        }
                    },
                    "template": {
                        "metadata": {"labels": labels},
                        "spec": template.spec(pod.container),
                    },
                },
                "status": {"replicas": count, "readyReplicas": count, "availableReplicas": count},
            }
        )
    pod, template, _created, _count = revisions[-1]
    first = revisions[0][2]
    tmpl_labels = {k: v for k, v in pod.labels.items() if k != "pod-template-hash"}
    out.append(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": _meta(
                deployment,
                namespace,
                first,
                labels=selector,
                annotations={"deployment.kubernetes.io/revision": str(pod.revision)},
                uid=f"uid-deployment-{deployment}",
            ),
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": selector},
                "template": {
                    "metadata": {"labels": tmpl_labels},
                    "spec": template.spec(pod.container),
                },
            },
            "status": {
                "replicas": replicas,
                "updatedReplicas": replicas,
                "readyReplicas": replicas,
                "availableReplicas": replicas,
            },
        }
    )
    return out


def configmap_object(name: str, namespace: str, data: dict[str, str], *, changed: float) -> Obj:
    """A ConfigMap whose last change (``managedFields`` update time) is ``changed``."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": _meta(
            name,
            namespace,
            changed,
            managedFields=[
                {
                    "manager": "helm",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": ts(changed),
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:data": {}},
                }
            ],
        ),
        "data": data,
    }


def event_object(
    involved: tuple[str, str, str],
    reason: str,
    message: str,
    *,
    first: float,
    last: float,
    count: int = 1,
    warning: bool = True,
    component: str = "kubelet",
) -> Obj:
    """A core/v1 Event about ``(kind, namespace, name)`` (namespace ``""`` for a Node)."""
    kind, namespace, name = involved
    ev_ns = namespace or "default"
    uid_kind = "pods" if kind == "Pod" else kind.lower() + "s"
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": _meta(f"{name}.{int(first):x}", ev_ns, first),
        "involvedObject": {
            "kind": kind,
            "name": name,
            "namespace": namespace,
            "uid": f"uid-{uid_kind}-{namespace}-{name}",
            "apiVersion": "v1",
        },
        "reason": reason,
        "message": message,
        "type": "Warning" if warning else "Normal",
        "count": count,
        "firstTimestamp": ts(first),
        "lastTimestamp": ts(last),
        "eventTime": None,
        "source": {"component": component},
        "reportingComponent": component,
        "reportingInstance": "",
    }
