"""kube-state-metrics series for pods, their owners and nodes.

Names and labels: ``kube_pod_info{node,host_ip,pod_ip,created_by_kind,created_by_name}``,
``kube_pod_owner{owner_kind,owner_name}``, ``kube_replicaset_owner``, ``kube_pod_labels``
(only allowlisted labels, as ``label_<sanitised>``), ``kube_pod_status_phase``,
``kube_pod_status_ready``, ``kube_pod_container_status_restarts_total``,
``kube_pod_container_resource_requests{resource="nvidia_com_gpu",unit="integer"}``,
``kube_pod_container_status_last_terminated_reason{reason}``,
``kube_pod_container_status_waiting_reason{reason}`` (present only while it holds),
``kube_node_status_allocatable``, ``kube_replicaset_spec_replicas``, ``kube_deployment_*``
(kube-state-metrics ``docs/metrics/workload/pod-metrics.md``, ``replicaset-metrics.md``,
``deployment-metrics.md``, ``node-metrics.md``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from cockpit.scenarios.metricset import MetricSet
from cockpit.scenarios.signals import Signal, const
from cockpit.scenarios.topology import Node, Pod

JOB = {"job": "kube-state-metrics", "instance": "10.244.0.5:8080"}


def _sanitize(label: str) -> str:
    return "label_" + re.sub(r"[^a-zA-Z0-9_]", "_", label)


def emit_pods(
    ms: MetricSet,
    pods: Sequence[Pod],
    *,
    restarts: dict[str, Signal] | None = None,
    ready: dict[str, Signal] | None = None,
    last_terminated: dict[str, tuple[str, int]] | None = None,
    waiting: dict[str, tuple[str, int, int]] | None = None,
    label_allowlist: Sequence[str] = ("app", "app.kubernetes.io/version"),
) -> None:
    """Identity, ownership, phase/readiness, restarts and GPU requests of ``pods``.

    Args:
        restarts: Per pod name, the restart rate per second (default none).
        ready: Per pod name, 1 while ready and 0 while not (default always ready).
        last_terminated: Per pod name, the container's last terminated reason
            (``Error``, ``OOMKilled`` …) and since when (Unix seconds) it is reported.
        waiting: Per pod name, a waiting reason (``CrashLoopBackOff`` …) with the
            ``[start, end)`` it is reported in.
        label_allowlist: Pod labels exported by ``kube_pod_labels``
            (``--metric-labels-allowlist``).
    """
    one = const(ms.axis, 1.0)
    zero = const(ms.axis, 0.0)
    for p in pods:
        is_ready = (ready or {}).get(p.name, one)
        base = {**JOB, "namespace": p.namespace, "pod": p.name, "uid": p.uid}
        _identity(ms, p, base, label_allowlist, "Running")
        for cond, values in (
            ("true", is_ready),
            ("false", [1.0 - r for r in is_ready]),
            ("unknown", zero),
        ):
            ms.gauge(
                "kube_pod_status_ready",
                {**base, "condition": cond},
                values,
                "Describes whether the pod is ready to serve requests.",
            )
        if p.name in (last_terminated or {}):
            reason, since = (last_terminated or {})[p.name]
            ms.sparse_gauge(
                "kube_pod_container_status_last_terminated_reason",
                {**base, "container": p.container, "reason": reason},
                since,
                ms.axis.end + 1,
                1.0,
                "Describes the last reason the container was in terminated state.",
            )
        if p.name in (waiting or {}):
            reason, lo, hi = (waiting or {})[p.name]
            ms.sparse_gauge(
                "kube_pod_container_status_waiting_reason",
                {**base, "container": p.container, "reason": reason},
                lo,
                hi,
                1.0,
                "Describes the reason the container is currently in waiting state.",
            )
        ms.counter(
            "kube_pod_container_status_restarts_total",
            {**base, "container": p.container},
            (restarts or {}).get(p.name, zero),
            help_="The number of container restarts per container.",
        )
        ms.gauge(
            "kube_pod_container_resource_requests",
            {
                **base,
                "container": p.container,
                "node": p.node,
                "resource": "nvidia_com_gpu",
                "unit": "integer",
            },
            const(ms.axis, float(len(p.gpus))),
            "The number of requested request resource by a container.",
        )


def _identity(
    ms: MetricSet, p: Pod, base: dict[str, str], label_allowlist: Sequence[str], phase: str
) -> None:
    """``kube_pod_info`` (no node or IPs for a pod not scheduled), ``kube_pod_owner``,
    ``kube_pod_labels`` and ``kube_pod_status_phase`` (1 for ``phase``) of ``p``."""
    one = const(ms.axis, 1.0)
    zero = const(ms.axis, 0.0)
    ms.gauge(
        "kube_pod_info",
        {
            **base,
            "node": p.node,
            "host_ip": p.ip.rsplit(".", 2)[0] + ".1.1" if p.ip else "",
            "pod_ip": p.ip,
            "created_by_kind": "ReplicaSet",
            "created_by_name": p.replicaset,
            "priority_class": "",
            "host_network": "false",
        },
        one,
        "Information about pod.",
    )
    ms.gauge(
        "kube_pod_owner",
        {
            **base,
            "owner_kind": "ReplicaSet",
            "owner_name": p.replicaset,
            "owner_is_controller": "true",
        },
        one,
        "Information about the Pod's owner.",
    )
    labels = {_sanitize(k): v for k, v in p.labels.items() if k in label_allowlist}
    ms.gauge(
        "kube_pod_labels",
        {**base, **labels},
        one,
        "Kubernetes labels converted to Prometheus labels.",
    )
    for each in ("Pending", "Running", "Succeeded", "Failed", "Unknown"):
        ms.gauge(
            "kube_pod_status_phase",
            {**base, "phase": each},
            one if each == phase else zero,
            "The pods current phase.",
        )


def emit_pending_pod(
    ms: MetricSet,
    pod: Pod,
    since: int,
    *,
    label_allowlist: Sequence[str] = ("app", "app.kubernetes.io/version"),
) -> None:
    """A pod that exists from ``since`` (Unix s) to the end of the axis and is never
    scheduled (``pod.node`` and ``pod.ip`` empty): identity, phase ``Pending``,
    ``kube_pod_status_unschedulable`` and ``kube_pod_status_scheduled{condition="false"}``
    (kube-state-metrics' pod metrics), one requested GPU per ``pod.gpus`` or one."""
    one = const(ms.axis, 1.0)
    base = {**JOB, "namespace": pod.namespace, "pod": pod.name, "uid": pod.uid}
    with ms.span(since, ms.axis.end + 1):
        _identity(ms, pod, base, label_allowlist, "Pending")
        ms.gauge(
            "kube_pod_status_unschedulable",
            base,
            one,
            "Describes the unschedulable status for the pod.",
        )
        ms.gauge(
            "kube_pod_status_scheduled",
            {**base, "condition": "false"},
            one,
            "Describes the status of the scheduling process for the pod.",
        )
        ms.gauge(
            "kube_pod_container_resource_requests",
            {
                **base,
                "container": pod.container,
                "node": "",
                "resource": "nvidia_com_gpu",
                "unit": "integer",
            },
            const(ms.axis, float(len(pod.gpus) or 1)),
            "The number of requested request resource by a container.",
        )


def emit_replicasets(
    ms: MetricSet,
    pods: Sequence[Pod],
    *,
    spec_replicas: dict[str, Signal] | None = None,
    deployment_series: bool = True,
) -> None:
    """``kube_replicaset_owner``, ``kube_replicaset_spec_replicas`` and (with
    ``deployment_series``) the Deployment status series for the pods' owners.

    Args:
        spec_replicas: Per ReplicaSet name, its desired replicas over time (only these
            ReplicaSets get ``kube_replicaset_spec_replicas``).
        deployment_series: Also emit the owners' Deployment series (constant, at the
            pods' revision; :func:`emit_deployment` for a rollout).
    """
    one = const(ms.axis, 1.0)
    seen: dict[str, Pod] = {}
    for p in pods:
        seen.setdefault(p.replicaset, p)
    replicas: dict[str, int] = {}
    for p in pods:
        replicas[p.deployment] = replicas.get(p.deployment, 0) + 1
    for rs, p in seen.items():
        ms.gauge(
            "kube_replicaset_owner",
            {
                **JOB,
                "namespace": p.namespace,
                "replicaset": rs,
                "owner_kind": "Deployment",
                "owner_name": p.deployment,
                "owner_is_controller": "true",
            },
            one,
            "Information about the ReplicaSet's owner.",
        )
        if spec_replicas and rs in spec_replicas:
            ms.gauge(
                "kube_replicaset_spec_replicas",
                {**JOB, "namespace": p.namespace, "replicaset": rs},
                spec_replicas[rs],
                "Number of desired pods for a ReplicaSet.",
            )
    done: set[str] = set()
    for p in pods:
        if p.deployment in done or not deployment_series:
            continue
        done.add(p.deployment)
        n = const(ms.axis, float(replicas[p.deployment]))
        emit_deployment(ms, p.namespace, p.deployment, const(ms.axis, float(p.revision)), n, n, n)


def emit_deployment(
    ms: MetricSet,
    namespace: str,
    deployment: str,
    generation: Signal,
    spec: Signal,
    updated: Signal,
    available: Signal,
) -> None:
    """A Deployment's generation (observed at once) and replica counts over time."""
    lab = {**JOB, "namespace": namespace, "deployment": deployment}
    for name, values, help_ in (
        (
            "kube_deployment_metadata_generation",
            generation,
            "Sequence number representing a specific generation of the desired state.",
        ),
        (
            "kube_deployment_status_observed_generation",
            generation,
            "The generation observed by the deployment controller.",
        ),
        ("kube_deployment_spec_replicas", spec, "Number of desired pods for a deployment."),
        (
            "kube_deployment_status_replicas_available",
            available,
            "The number of available replicas per deployment.",
        ),
        (
            "kube_deployment_status_replicas_updated",
            updated,
            "The number of updated replicas per deployment.",
        ),
    ):
        ms.gauge(name, lab, values, help_)


def emit_nodes(
    ms: MetricSet, nodes: Sequence[Node], *, allocatable: dict[str, Signal] | None = None
) -> None:
    """Allocatable GPUs, readiness and GPU-feature-discovery labels of ``nodes``.

    Args:
        allocatable: Per node name, its allocatable GPUs over time (default: all of its
            GPUs; the device plugin lowers it when it marks a GPU unhealthy).
    """
    one = const(ms.axis, 1.0)
    zero = const(ms.axis, 0.0)
    for n in nodes:
        lab = {**JOB, "node": n.name}
        ms.gauge(
            "kube_node_status_allocatable",
            {**lab, "resource": "nvidia_com_gpu", "unit": "integer"},
            (allocatable or {}).get(n.name) or const(ms.axis, float(len(n.gpus))),
            "The allocatable for different resources of a node that are available for scheduling.",
        )
        ms.gauge(
            "kube_node_status_capacity",
            {**lab, "resource": "nvidia_com_gpu", "unit": "integer"},
            const(ms.axis, float(len(n.gpus))),
            "The capacity for different resources of a node.",
        )
        for status in ("true", "false", "unknown"):
            ms.gauge(
                "kube_node_status_condition",
                {**lab, "condition": "Ready", "status": status},
                one if status == "true" else zero,
                "The condition of a cluster node.",
            )
        ms.gauge("kube_node_spec_unschedulable", lab, zero, "Whether a node can schedule new pods.")
        ms.gauge(
            "kube_node_labels",
            {
                **lab,
                "label_nvidia_com_gpu_product": n.gpu_product,
                "label_nvidia_com_cuda_driver_version_full": n.driver_version,
            },
            one,
            "Kubernetes labels converted to Prometheus labels.",
        )
