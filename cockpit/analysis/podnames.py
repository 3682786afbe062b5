"""The pod names of a workload, as Kubernetes generates them.

Metrics carry the pod's name, not its owner, so a Deployment or StatefulSet is matched by
the names its controller gives its pods:

- Deployment ``D`` → ReplicaSet ``D-<pod-template-hash>`` (the hash is at most 10
  characters: ``controller.ComputeHash`` encoded by ``rand.SafeEncodeString``, Kubernetes
  ``pkg/controller/deployment/sync.go``) → pod ``D-<hash>-<5 characters>`` (the pod's
  ``generateName``; ``k8s.io/apiserver/pkg/storage/names``, ``randomLength = 5``).
- StatefulSet ``D`` → pod ``D-<ordinal>`` (Kubernetes docs, "StatefulSets: Pod identity").

A ``generateName`` base longer than 58 characters (63 − 5) is cut before the random part
is added, so for long workload names only the ``D-`` prefix is required.
"""

from __future__ import annotations

import re

_META = re.compile(r"([.^$*+?()\[\]{}|\\])")

MAX_GENERATED_BASE = 58
"""``maxGeneratedNameLength`` = 63 − ``randomLength`` (k8s.io/apiserver names.go)."""


def workload_pod_regex(name: str) -> str:
    """A fully anchored RE2/Python regex (as PromQL's ``=~`` applies it) for the pods of
    the Deployment or StatefulSet ``name``.

    ``vllm`` matches ``vllm-7d9f8c6b5-x2x4z`` and ``vllm-0``, not ``vllm-embed-7d9f8c6b5-x2x4z``
    (another Deployment whose name starts the same). Returns ``""`` for an empty name.
    """
    if not name:
        return ""
    # Kubernetes names are DNS labels/subdomains ([a-z0-9.-]); anything else a user typed
    # is escaped too, so the name is always matched literally.
    esc = _META.sub(r"\\\1", name)
    if len(name) + 1 + 10 + 1 > MAX_GENERATED_BASE:
        return f"{esc}-.+"
    return f"{esc}-[a-z0-9]{{1,10}}-[a-z0-9]{{5}}|{esc}-[0-9]+"


def is_workload_pod(pod: str, name: str) -> bool:
    """Whether ``pod`` is named like a pod of the workload ``name`` (see
    :func:`workload_pod_regex`)."""
    pattern = workload_pod_regex(name)
    return bool(pattern) and re.fullmatch(pattern, pod) is not None


def owner_workload(pod: str, owners: list[tuple[str, str]]) -> tuple[str, str]:
    """The workload a pod's names come from, as ``(kind, name)``: ``Deployment`` for a
    pod of a ReplicaSet (whose name is ``<deployment>-<pod-template-hash>``),
    ``StatefulSet`` for its pods, else ``Pod`` and the pod's own name.

    Args:
        pod: The pod's name.
        owners: ``metadata.ownerReferences`` as ``(kind, name)`` pairs.
    """
    for kind, name in owners:
        if kind == "ReplicaSet" and "-" in name:
            return "Deployment", name.rsplit("-", 1)[0]
        if kind == "StatefulSet":
            return "StatefulSet", name
    return "Pod", pod


def workloads_pod_regex(workloads: list[tuple[str, str]]) -> str:
    """One regex for the pods of several workloads (see :func:`owner_workload`): the
    generated names of each Deployment/StatefulSet (every revision), and other pods by
    their exact name. ``""`` for none."""
    parts = []
    for kind, name in sorted(set(workloads)):
        parts.append(workload_pod_regex(name) if kind != "Pod" else _META.sub(r"\\\1", name))
    return "|".join(parts)
