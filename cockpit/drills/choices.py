"""What a trainee chooses from when naming the suspect: the entities of the bundle's own
inventory (pure; no answer key involved, so the list gives nothing away)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from cockpit.analysis.history import WindowInventory, gpu_text, short_pod
from cockpit.analysis.inventory import Inventory


@dataclass(frozen=True)
class SuspectChoice:
    """One entity to choose.

    Attributes:
        kind: pod / node / gpu / revision / service (the kinds of
            :data:`cockpit.drills.key.SuspectKind`).
        name: How the answer key names it (a GPU: ``node/index``, its UUID when the
            index is not known).
        uuid: A GPU's UUID, else ``""``.
        label: How the screens name it (:meth:`WindowInventory.name`,
            :meth:`WindowInventory.revision_name`).
    """

    kind: str
    name: str
    uuid: str
    label: str

    @property
    def value(self) -> str:
        """A one-string form for a drop-down (``kind␟name␟uuid``)."""
        return "\x1f".join((self.kind, self.name, self.uuid))


def parse_value(value: str) -> tuple[str, str, str]:
    """:attr:`SuspectChoice.value` back as ``(kind, name, uuid)``.

    Raises:
        ValueError: not such a value.
    """
    kind, name, uuid = value.split("\x1f")
    return kind, name, uuid


def suspect_choices(
    inv: WindowInventory,
    deployment: str = "",
    series: Inventory | None = None,
    gateways: Iterable[str] = (),
) -> list[SuspectChoice]:
    """Every gateway, service (the Deployments seen, and ``deployment`` in scope),
    revision, pod, node and GPU of the window, in that order, each sorted by name, without
    repeats.

    Args:
        inv: The window's inventory from the metrics history.
        deployment: The Deployment in scope.
        series: The inventory read from the labels of the step-D breakdown series, for
            what the history did not see (a bundle recorded without it).
        gateways: The access layer's names: its detected stack (``ingress-nginx``) and the
            controller pods its series were split by.
    """
    pods = {p: inv.name(pod=p) for p in inv.pods}
    nodes = set(inv.nodes)
    revisions = {rs: inv.revision_name(rs) for rs in inv.revisions}
    services = {d for d in inv.deployments() if d} | ({deployment} if deployment else set())
    gpus = {
        g.uuid or key: (g.node, g.index, g.uuid, inv.name(gpu=key)) for key, g in inv.gpus.items()
    }
    if series is not None:
        for name, p in series.pods.items():
            pods.setdefault(name, f"{short_pod(name)} on {p.node}" if p.node else short_pod(name))
            nodes |= {p.node} - {""}
            services |= {p.deployment} - {""}
            if p.revision:
                revisions.setdefault(p.revision, p.revision)
        nodes |= {n for n in series.node_pool if n} | {n for n in series.gpu_node.values() if n}
        for uuid, node in series.gpu_node.items():
            gpus.setdefault(uuid, (node, "", uuid, gpu_text(node, "", uuid)))
    out = [SuspectChoice("gateway", g, "", g) for g in sorted(set(gateways) - {""})]
    out += [SuspectChoice("service", d, "", d) for d in sorted(services)]
    out += [SuspectChoice("revision", rs, "", label) for rs, label in sorted(revisions.items())]
    out += [SuspectChoice("pod", p, "", label) for p, label in sorted(pods.items())]
    out += [SuspectChoice("node", n, "", n) for n in sorted(nodes)]
    out += [
        SuspectChoice("gpu", f"{node}/{index}" if index else uuid, uuid, label)
        for node, index, uuid, label in sorted(
            gpus.values(), key=lambda g: (g[0], g[1].zfill(3), g[2])
        )
    ]
    return out
