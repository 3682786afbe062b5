"""Up-front permission check for ``cockpit doctor``: one SelfSubjectAccessReview per
verb/resource cockpit reads (the reviews are POSTs that change nothing)."""

from __future__ import annotations

from typing import Any

from cockpit.models.kube import AccessCheck
from cockpit.sources.base import SourceError
from cockpit.sources.kubernetes import can_i_command

NEEDED: tuple[tuple[str, str, str, str, bool], ...] = (
    # verb, resource, group, subresource, namespaced
    ("list", "pods", "", "", True),
    ("get", "pods", "", "log", True),
    ("list", "events", "", "", True),
    ("list", "nodes", "", "", False),
    ("list", "replicasets", "apps", "", True),
    ("list", "deployments", "apps", "", True),
    ("list", "statefulsets", "apps", "", True),
    ("list", "controllerrevisions", "apps", "", True),
    ("list", "daemonsets", "apps", "", False),
    ("list", "configmaps", "", "", True),
    ("list", "secrets", "", "", True),
    ("list", "resourcequotas", "", "", True),
    ("list", "priorityclasses", "scheduling.k8s.io", "", False),
    ("list", "podgroups", "scheduling.volcano.sh", "", True),
    ("list", "workloads", "kueue.x-k8s.io", "", True),
)
"""Every read cockpit makes. ``secrets`` is only read with ``owner=helm`` (Helm history);
cluster-scoped reads (nodes, DaemonSets of the device plugin, priority classes) are asked
without a namespace."""


async def check_permissions(source: Any, namespace: str | None = None) -> list[AccessCheck]:
    """Ask the API server, for each entry of :data:`NEEDED`, whether this identity may do it.

    Returns one :class:`AccessCheck` per entry, in order; a review that itself fails has
    ``allowed=None`` and the failure in ``reason`` (the rest are still checked).

    Raises:
        SourceError: only when no review could be sent at all (not configured).
    """
    ns = namespace or await source.default_namespace()
    out: list[AccessCheck] = []
    for verb, resource, group, sub, namespaced in NEEDED:
        scope = ns if namespaced else ""
        try:
            out.append(await source.check_access(verb, resource, scope, group, sub))
        except SourceError as exc:
            out.append(
                AccessCheck(
                    verb=verb,
                    resource=resource,
                    group=group,
                    namespace=scope,
                    subresource=sub,
                    allowed=None,
                    reason=f"{exc.kind.value}: {exc.failure.message}",
                    command=can_i_command(verb, resource, scope, group, sub),
                )
            )
    return out
