"""Who is who: pods, their node, revision (ReplicaSet) and deployment, and GPUs per node.

Built from kube-state-metrics joins (metrics_kb.md §7.0: ``kube_pod_info`` gives pod →
node, ``kube_pod_owner`` pod → ReplicaSet, ``kube_replicaset_owner`` ReplicaSet →
Deployment; the ReplicaSet is a free version proxy) and, when kube-state-metrics is
absent, from the labels on the serving and DCGM series themselves.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from cockpit.analysis.profiles import ENTITY_LABELS
from cockpit.models import InstantVector

NODE_POOL_LABELS = (
    "label_node_pool",
    "label_nodepool",
    "label_cloud_google_com_gke_nodepool",
    "label_eks_amazonaws_com_nodegroup",
    "label_kubernetes_azure_com_agentpool",
    "label_karpenter_sh_nodepool",
)
"""``kube_node_labels`` labels naming a node pool (present only when allowlisted,
metrics_kb.md §8.7)."""

_RS_HASH = re.compile(r"^(?P<deploy>.+)-[a-z0-9]{5,10}$")


class PodInfo(BaseModel):
    """One pod's placement and version."""

    pod: str
    namespace: str = ""
    node: str = ""
    revision: str = ""
    deployment: str = ""


class Inventory(BaseModel):
    """Pods by name, node pools by node, and GPUs (UUID) by node and pod."""

    pods: dict[str, PodInfo] = Field(default_factory=dict)
    node_pool: dict[str, str] = Field(default_factory=dict)
    gpu_node: dict[str, str] = Field(default_factory=dict)
    gpu_pod: dict[str, str] = Field(default_factory=dict)
    ip_pod: dict[str, str] = Field(default_factory=dict)
    """Pod IP → pod name (``kube_pod_info{pod_ip}``): a series scraped by ``static_configs``
    names its pod only by its ``instance`` (``ip:port``)."""

    def pod(self, name: str) -> PodInfo:
        """The pod's info (an empty one when unknown)."""
        return self.pods.get(name) or PodInfo(pod=name)

    def note_pod(self, pod: str, **fields: str) -> None:
        """Fill unknown fields of a pod from series labels."""
        info = self.pods.setdefault(pod, PodInfo(pod=pod))
        for key, value in fields.items():
            if value and not getattr(info, key):
                setattr(info, key, value)

    def note_gpu(self, uuid: str, node: str, pod: str) -> None:
        """Remember a GPU's node and consuming pod (DCGM with --kubernetes)."""
        if node:
            self.gpu_node.setdefault(uuid, node)
        if pod:
            self.gpu_pod.setdefault(uuid, pod)
            if node:
                self.note_pod(pod, node=node)


def first_label(labels: dict[str, str], kind: str) -> str:
    """The entity of ``kind`` (pod/node/gpu/instance) from whichever label carries it."""
    for name in ENTITY_LABELS[kind]:
        value = labels.get(name)
        if value:
            return value
    return ""


def build_inventory(
    pod_info: list[InstantVector],
    pod_owner: list[InstantVector],
    rs_owner: list[InstantVector],
    node_labels: list[InstantVector],
) -> Inventory:
    """Join the kube-state-metrics vectors into an :class:`Inventory`."""
    inv = Inventory()
    for v in pod_info:
        pod = v.labels.get("pod", "")
        if pod:
            inv.note_pod(
                pod, namespace=v.labels.get("namespace", ""), node=v.labels.get("node", "")
            )
            if ip := v.labels.get("pod_ip", ""):
                inv.ip_pod[ip] = pod
    rs_deploy = {
        v.labels.get("replicaset", ""): v.labels.get("owner_name", "")
        for v in rs_owner
        if v.labels.get("owner_kind") == "Deployment"
    }
    for v in pod_owner:
        if v.labels.get("owner_kind") != "ReplicaSet":
            continue
        pod, rs = v.labels.get("pod", ""), v.labels.get("owner_name", "")
        if not pod or not rs:
            continue
        deploy = rs_deploy.get(rs, "")
        if not deploy:
            m = _RS_HASH.match(rs)
            deploy = m.group("deploy") if m else rs
        inv.note_pod(pod, revision=rs, deployment=deploy)
    for v in node_labels:
        node = v.labels.get("node", "")
        for name in NODE_POOL_LABELS:
            if v.labels.get(name):
                inv.node_pool[node] = v.labels[name]
                break
    return inv
