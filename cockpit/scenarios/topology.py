"""Who runs where: nodes, GPUs, pods and revisions of a scenario, independent of any
metric naming (the stack emitters turn these into labels)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field


def _hex(seed: str, n: int) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:n]


@dataclass(frozen=True)
class Gpu:
    """One GPU of a node.

    Attributes:
        node: Node name.
        index: NVML index on the node (``gpu`` label of dcgm-exporter).
        uuid: ``GPU-…`` identity (stable across nodes, unlike the index).
        pci_bus_id: ``00000000:18:00.0`` style bus id.
        model_name: Product name (``modelName``).
    """

    node: str
    index: int
    uuid: str
    pci_bus_id: str
    model_name: str


@dataclass(frozen=True)
class Node:
    """A Kubernetes node with GPUs."""

    name: str
    ip: str
    gpus: tuple[Gpu, ...]
    gpu_product: str = "NVIDIA-H100-80GB-HBM3"
    driver_version: str = "550.90.07"


@dataclass(frozen=True)
class Pod:
    """A serving replica.

    Attributes:
        name: Pod name (``<replicaset>-<5 chars>``).
        namespace: Namespace.
        node: Node it runs on.
        ip: Pod IP (scrape ``instance`` is ``ip:port``).
        deployment: Owning Deployment.
        replicaset: Owning ReplicaSet (the revision: pod-template hash).
        revision: Deployment revision number.
        gpus: GPUs assigned to it (device plugin allocation).
        container: Serving container name.
        labels: Pod labels.
        uid: Pod UID.
    """

    name: str
    namespace: str
    node: str
    ip: str
    deployment: str
    replicaset: str
    revision: int
    gpus: tuple[Gpu, ...]
    container: str = "server"
    labels: dict[str, str] = field(default_factory=dict, hash=False)
    uid: str = ""


def make_nodes(
    prefix: str, count: int, gpus_per_node: int, model_name: str, *, subnet: str = "10.0.1"
) -> list[Node]:
    """``count`` nodes named ``<prefix><i>`` with ``gpus_per_node`` GPUs each."""
    nodes = []
    for i in range(count):
        name = f"{prefix}{i + 1}"
        gpus = tuple(
            Gpu(
                node=name,
                index=g,
                uuid=f"GPU-{_hex(name + str(g), 8)}-{_hex('a' + name + str(g), 4)}-"
                f"{_hex('b' + name + str(g), 4)}-{_hex('c' + name + str(g), 4)}-"
                f"{_hex('d' + name + str(g), 12)}",
                pci_bus_id=f"00000000:{0x18 + 0x10 * g:02X}:00.0",
                model_name=model_name,
            )
            for g in range(gpus_per_node)
        )
        nodes.append(Node(name=name, ip=f"{subnet}.{11 + i}", gpus=gpus))
    return nodes


def place_pods(
    *,
    deployment: str,
    namespace: str,
    nodes: list[Node],
    replicas: int,
    gpus_per_pod: int,
    revision: int = 1,
    app_labels: dict[str, str] | None = None,
    container: str = "server",
    subnet: str = "10.244",
) -> list[Pod]:
    """Spread ``replicas`` pods of one revision over ``nodes``, ``gpus_per_pod`` GPUs each,
    filling each node's GPUs in index order."""
    rs_hash = _hex(f"{deployment}/{revision}", 10)
    replicaset = f"{deployment}-{rs_hash}"
    free = [(n, list(n.gpus)) for n in nodes]
    pods = []
    for r in range(replicas):
        node, gpus = next((n, g) for n, g in free if len(g) >= gpus_per_pod)
        taken = tuple(gpus[:gpus_per_pod])
        del gpus[:gpus_per_pod]
        suffix = _hex(f"{replicaset}/{r}", 5).translate(str.maketrans("0123456789", "bcdfghjklm"))
        labels = {"app": deployment, "pod-template-hash": rs_hash, **(app_labels or {})}
        pods.append(
            Pod(
                name=f"{replicaset}-{suffix}",
                namespace=namespace,
                node=node.name,
                ip=f"{subnet}.{nodes.index(node) + 1}.{20 + r}",
                deployment=deployment,
                replicaset=replicaset,
                revision=revision,
                gpus=taken,
                container=container,
                labels=labels,
                uid=f"{_hex(replicaset + str(r), 8)}-{_hex('u' + str(r), 4)}-4{_hex('v' + str(r), 3)}-"
                f"8{_hex('w' + str(r), 3)}-{_hex('x' + replicaset + str(r), 12)}",
            )
        )
    return pods
