"""kube-state-metrics series for pods, their owners and nodes.

Names and labels: ``kube_pod_info{node,host_ip,pod_ip,created_by_kind,created_by_name}``,
``kube_pod_owner{owner_kind,owner_name}``, ``kube_replicaset_owner``, ``kube_pod_labels``
(only allowlisted labels, as ``label_<sanitised>``), ``kube_pod_status_phase``,
``kube_pod_status_ready``, ``kube_pod_container_status_restarts_total``,
``kube_pod_container_resource_requests{resource="nvidia_com_gpu",unit="integer"}``,
``kube_node_status_allocatable``, ``kube_deployment_*`` (kube-state-metrics
``docs/metrics/workload/pod-metrics.md``, ``deployment-metrics.md``, ``node-metrics.md``).
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
    label_allowlist: Sequence[str] = ("app", "app.kubernetes.io/version"),
) -> None:
    """Identity, ownership, phase/readiness, restarts and GPU requests of ``pods``.

    Args:
        restarts: Per pod name, the restart rate per second (default none).
        label_allowlist: Pod labels exported by ``kube_pod_labels``
            (``--metric-labels-allowlist``).
    """
    one = const(ms.axis, 1.0)
    zero = const(ms.axis, 0.0)
    for p in pods:
        base = {**JOB, "namespace": p.namespace, "pod": p.name, "uid": p.uid}
        ms.gauge(
            "kube_pod_info",
            {
                **base,
                "node": p.node,
                "host_ip": p.ip.rsplit(".", 2)[0] + ".1.1",
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
        for phase in ("Pending", "Running", "Succeeded", "Failed", "Unknown"):
            ms.gauge(
                "kube_pod_status_phase",
                {**base, "phase": phase},
                one if phase == "Running" else zero,
                "The pods current phase.",
            )
        for cond in ("true", "false", "unknown"):
            ms.gauge(
                "kube_pod_status_ready",
                {**base, "condition": cond},
                one if cond == "true" else zero,
                "Describes whether the pod is ready to serve requests.",
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


def emit_replicasets(ms: MetricSet, pods: Sequence[Pod]) -> None:
    """``kube_replicaset_owner`` and the Deployment status series for the pods' owners."""
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
    done: set[str] = set()
    for p in pods:
        if p.deployment in done:
            continue
        done.add(p.deployment)
        lab = {**JOB, "namespace": p.namespace, "deployment": p.deployment}
        n = float(replicas[p.deployment])
        gen = const(ms.axis, float(p.revision))
        ms.gauge(
            "kube_deployment_metadata_generation",
            lab,
            gen,
            "Sequence number representing a specific generation of the desired state.",
        )
        ms.gauge(
            "kube_deployment_status_observed_generation",
            lab,
            gen,
            "The generation observed by the deployment controller.",
        )
        ms.gauge(
            "kube_deployment_spec_replicas",
            lab,
            const(ms.axis, n),
            "Number of desired pods for a deployment.",
        )
        ms.gauge(
            "kube_deployment_status_replicas_available",
            lab,
            const(ms.axis, n),
            "The number of available replicas per deployment.",
        )
        ms.gauge(
            "kube_deployment_status_replicas_updated",
            lab,
            const(ms.axis, n),
            "The number of updated replicas per deployment.",
        )


def emit_nodes(ms: MetricSet, nodes: Sequence[Node]) -> None:
    """Allocatable GPUs, readiness and GPU-feature-discovery labels of ``nodes``."""
    one = const(ms.axis, 1.0)
    zero = const(ms.axis, 0.0)
    for n in nodes:
        lab = {**JOB, "node": n.name}
        ms.gauge(
            "kube_node_status_allocatable",
            {**lab, "resource": "nvidia_com_gpu", "unit": "integer"},
            const(ms.axis, float(len(n.gpus))),
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
