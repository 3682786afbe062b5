"""What a scenario is: a named metric history with its ground truth.

A scenario builds a :class:`~cockpit.scenarios.metricset.MetricSet` (the series) and
declares its *targets*: PromQL expressions with the value each must return at a given
evaluation time. Tests and the demo build check the targets against a real Prometheus
backfilled with the scenario, so the numbers on screen always come from PromQL over the
generated data, never from constants in the app.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from cockpit.models import from_epoch
from cockpit.scenarios.metricset import MetricSet

if TYPE_CHECKING:
    from cockpit.scenarios.stacks.kube_objects import KubeWorld


@dataclass(frozen=True)
class Target:
    """A number the scenario promises, and how to measure it.

    Attributes:
        name: Short id (``p99_latency``, ``qps`` …).
        query: PromQL; evaluates to exactly one series.
        at: Evaluation time, Unix seconds.
        expected: The promised value, in ``unit``.
        unit: ``s``, ``req/s``, ``ratio``, ``%``, ``°C``, ``MHz``, ``requests``, ``tokens/s``.
        rel_tol: Relative tolerance (noise and rounding in the generated data).
        phase: ``baseline`` or ``incident``.
    """

    name: str
    query: str
    at: int
    expected: float
    unit: str
    rel_tol: float = 0.05
    phase: str = "incident"


@dataclass(frozen=True)
class Suspect:
    """The entity an incident's diagnosis must name (empty fields do not apply).

    Attributes:
        kind: ``gpu`` (one GPU: pod, node, index and UUID set), ``revision`` (a release:
            old and new ReplicaSet and version set), ``gateway`` (the ingress controller
            pod), ``client`` (a caller the metrics do not name), ``pod`` (a pod that cannot
            be scheduled: pod and the node that blocks it set) or ``service`` (the whole
            service: capacity).
        deployment: The Deployment in scope.
        pod: The pod (``kind`` ``gpu``: the pod that held the GPU).
        node: The node.
        gpu_index: NVML index of the GPU on its node (dcgm-exporter's ``gpu`` label).
        uuid: The GPU's ``GPU-…`` UUID.
        old_revision, new_revision: ReplicaSet names before and after a release.
        old_version, new_version: The pods' ``app.kubernetes.io/version`` label values.
    """

    kind: str
    deployment: str = ""
    pod: str = ""
    node: str = ""
    gpu_index: int | None = None
    uuid: str = ""
    old_revision: str = ""
    new_revision: str = ""
    old_version: str = ""
    new_version: str = ""


@dataclass(frozen=True)
class GroundTruth:
    """What a correct diagnosis of the scenario concludes, in the analysis' own words.

    Attributes:
        primary_layer: ``access``, ``serving``, ``runtime``, ``hardware`` or
            ``infrastructure`` (the layers of step C).
        scope: A blast-radius scope of step D (``single_gpu``, ``revision``,
            ``everything`` …).
        cause: ``gpu_lost``, ``release``, ``long_prompts``, ``thermal_throttle``,
            ``gateway_errors``, ``kv_cache_overload`` or ``demand_surge`` (the cause
            classes of ``cockpit/knowledge/causes.toml``).
        suspect: The entity to act on.
        mitigation: The first mitigation (``cordon_and_delete_pod``, ``rollback``,
            ``rate_limit_client``, ``check_gateway``, ``scale_out``).
    """

    primary_layer: str
    scope: str
    cause: str
    suspect: Suspect
    mitigation: str = ""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (``suspect`` nested; ``gpu_index`` null when not a GPU)."""
        return asdict(self)


@dataclass
class Scenario:
    """A metric history with its ground truth.

    Attributes:
        name: Registry name.
        description: One paragraph: what happens, which metric stands for what.
        now: The scenario's "now" (last sample), Unix seconds; replay freezes the clock here.
        start: First sample, Unix seconds.
        incident_start: Ground-truth start of the impact, Unix seconds.
        detected_at: When the first alert fired, Unix seconds (None without alerts).
        scope: The service in scope (``namespace``, ``deployment``, ``selector``, ``model``).
        targets: Promised values (see :class:`Target`).
        truth: Further ground truth (blast radius, root cause …) as text.
        ground_truth: The structured diagnosis the scenario stands for (None for the
            older scenarios, which only state ``truth``).
        build: Builds the series (expensive: call once).
        kube: Builds the scenario's Kubernetes objects and pod logs, consistent with the
            series (None: the scenario has no Kubernetes API side).
    """

    name: str
    description: str
    now: int
    start: int
    incident_start: int
    detected_at: int | None
    scope: dict[str, str]
    targets: list[Target]
    build: Callable[[], MetricSet]
    truth: dict[str, str] = field(default_factory=dict)
    ground_truth: GroundTruth | None = None
    kube: Callable[[], KubeWorld] | None = None

    @property
    def now_dt(self) -> datetime:
        """``now`` as an aware UTC datetime."""
        return from_epoch(self.now)

    @property
    def incident_start_dt(self) -> datetime:
        """``incident_start`` as an aware UTC datetime."""
        return from_epoch(self.incident_start)

    def target(self, name: str, phase: str = "incident") -> Target:
        """The target called ``name`` in ``phase``.

        Raises:
            KeyError: when there is none.
        """
        for t in self.targets:
            if t.name == name and t.phase == phase:
                return t
        raise KeyError(f"{self.name}: no {phase} target {name!r}")
