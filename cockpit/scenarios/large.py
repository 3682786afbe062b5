"""Two incidents of a large service: 200 vLLM replicas on 48 nodes.

The same stacks as :mod:`cockpit.scenarios.incidents` (vLLM behind ingress-nginx,
kube-state-metrics, dcgm-exporter with the Kubernetes mapping), scaled up: 48 nodes
(``gpu-node-1`` … ``gpu-node-48``) with eight H100s each, 200 one-GPU replicas spread over
them in turn (replica ``r`` on node ``r % 48``, GPU ``r // 48``: four or five busy GPUs a
node, the others idle). About 35 k series.

To keep the backfill affordable the history is short and coarse: 2 h 15 min sampled every
60 s, enough for a one-hour window (``--window 1h``), its quiet baseline (the hour before)
and the 5-minute rate windows in front of it. There is no data a day earlier.

- ``large_throttled_gpu``: one GPU throttles thermally (SM clock 1980 → 1200 MHz,
  67 → 90 °C); its replica's inter-token and end-to-end latency grow. One replica in 200
  barely moves the service's aggregates: the diagnosis has to find it per entity.
- ``large_overload``: arrivals rise by 60 % on every replica; the KV cache fills, requests
  are preempted, the queue and TTFT grow everywhere (the ``kv_overload`` incident at 200
  replicas).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from cockpit.scenarios import incidents as inc
from cockpit.scenarios import signals as sg
from cockpit.scenarios.base import GroundTruth, Scenario, Suspect, Target
from cockpit.scenarios.metricset import MetricSet
from cockpit.scenarios.stacks import alerts, scrape
from cockpit.scenarios.stacks.replica import ReplicaLoad
from cockpit.scenarios.timeaxis import TimeAxis
from cockpit.scenarios.topology import Node, Pod, make_nodes

NOW = inc.NOW
HISTORY_S = 2 * 3600 + 15 * 60
START = NOW - HISTORY_S
STEP_S = 60
"""Seconds between samples, the whole history (the range-query step of a one-hour
window; a 5-minute rate window holds five samples)."""
REPLICAS = 200
NODES = 48
DEPLOYMENT = "qwen-chat"
WINDOW = "1h"
"""The analysis window the scenario is made for (``--window``)."""

HOT_AT = NOW - 40 * 60
HOT_REPLICA = 137
"""Replica 137: ``gpu-node-42`` GPU 2."""
RISE_AT = NOW - 50 * 60
RISE_S = 35 * 60
FULL_AT = RISE_AT + 15 * 60
"""Arrivals rise from 8 to 12.8 req/s per replica over 35 minutes; the KV cache is full
(over 95 %) about 15 minutes in, and the impact starts there."""


def _axis() -> TimeAxis:
    return TimeAxis(start=START, end=NOW, fine_from=NOW, coarse_step_s=STEP_S)


def _nodes() -> list[Node]:
    return make_nodes("gpu-node-", NODES, inc.GPUS_PER_NODE, inc.GPU_MODEL, subnet="10.0.4")


def _pods(nodes: list[Node]) -> list[Pod]:
    """The replicas of revision 7, spread over the nodes in turn."""
    return inc._pods(DEPLOYMENT, nodes, REPLICAS, revision=7, version="v1.8.2")


def _service(
    ms: MetricSet,
    shape: Callable[[int, Pod, ReplicaLoad], inc.Gpu | None],
    *,
    qps: sg.Signal | None = None,
    preemptions: sg.Signal | None = None,
) -> list[ReplicaLoad]:
    """Every replica, its GPU, the idle GPUs and kube-state-metrics; ``shape(i, pod,
    load)`` may change a replica's load in place and returns its GPU's picture (None:
    from the load)."""
    axis = ms.axis
    nodes = _nodes()
    pods = _pods(nodes)
    index = {n.name: i for i, n in enumerate(nodes)}
    loads = []
    for i, pod in enumerate(pods):
        r = inc._healthy(axis, pod.name, qps or sg.const(axis, inc.QPS_PER_REPLICA))
        gpu = shape(i, pod, r) or inc.Gpu(util=inc._util_of(r))
        inc._emit_vllm(ms, pod, r, sg.const(axis, 0.04), preemptions)
        scrape.emit_up(ms, inc._target(pod), inc._one(axis))
        n_i = index[pod.node]
        sig = inc._gpu_signals(axis, pod.name, gpu)
        inc._emit_dcgm(ms, nodes[n_i], n_i, pod.gpus[0].index, pod, sig)
        loads.append(r)
    inc._emit_idle_gpus(ms, nodes, {p.gpus[0].uuid for p in pods})
    inc._kube(ms, nodes, pods)
    return loads


def build(kind: str) -> MetricSet:
    """The series of ``large_throttled_gpu`` (``kind`` ``throttled``) or ``large_overload``
    (``overload``)."""
    axis = _axis()
    ms = MetricSet(axis)
    if kind == "throttled":
        _throttled(ms)
    else:
        _overload(ms)
    return ms


def _throttled(ms: MetricSet) -> None:
    axis = ms.axis
    sev = sg.step_ramp(axis, HOT_AT, 300)

    def shape(i: int, pod: Pod, r: ReplicaLoad) -> inc.Gpu | None:
        return inc.throttle(axis, sev, r) if i == HOT_REPLICA else None

    loads = _service(ms, shape)
    inc._emit_ingress(ms, DEPLOYMENT, inc._total(loads, axis), loads)
    hot = _pods(_nodes())[HOT_REPLICA]
    alerts.emit(
        ms,
        inc._pod_alert(
            "VLLMHighInterTokenLatency",
            hot,
            HOT_AT + 8 * 60,
            HOT_AT + 13 * 60,
            "Inter-token latency is high.",
        ),
    )


def _overload(ms: MetricSet) -> None:
    axis = ms.axis
    qps, over, shape = inc.overload(axis, sg.step_ramp(axis, RISE_AT, RISE_S))
    loads = _service(ms, shape, qps=qps, preemptions=sg.scale(over, 1.5))
    inc._emit_ingress(ms, DEPLOYMENT, inc._total(loads, axis), loads)
    inc._service_alert(ms, "VLLMKVCacheAlmostFull", FULL_AT, FULL_AT + 5 * 60)
    inc._service_alert(ms, "LLMTimeToFirstTokenHigh", FULL_AT + 6 * 60, FULL_AT + 11 * 60)


def _scenario(
    name: str,
    kind: str,
    description: str,
    times: tuple[int, int],
    targets: list[Target],
    truth: dict[str, str],
    ground_truth: GroundTruth,
) -> Scenario:
    # ``build`` is a partial: its source file cannot be named, so the backfill cache is keyed
    # by every scenario module, this one's helpers in ``incidents`` included.
    build_it = partial(build, kind)
    truth = {"window": WINDOW, **truth}
    return inc._incident(
        name, description, times, DEPLOYMENT, targets, build_it, truth, ground_truth, START
    )


def _scenario_throttled() -> Scenario:
    hot = _pods(_nodes())[HOT_REPLICA]
    uuid = hot.gpus[0].uuid
    return _scenario(
        "large_throttled_gpu",
        "throttled",
        f"vLLM behind ingress-nginx, {REPLICAS} replicas on {NODES} 8-GPU nodes: GPU 2 of "
        "gpu-node-42 throttles thermally (SM clock 1980 to 1200 MHz, 67 to 90 C); its "
        "replica is slow, the other 199 and the idle GPUs are healthy. Analyse with "
        f"--window {WINDOW}.",
        (HOT_AT, HOT_AT + 13 * 60),
        [
            Target("sm_clock", f'DCGM_FI_DEV_SM_CLOCK{{UUID="{uuid}"}}', NOW, 1200, "MHz"),
            Target(
                "replicas",
                f'count(kube_pod_info{{namespace="{inc.NAMESPACE}"}})',
                NOW,
                REPLICAS,
                "pods",
                0.0,
            ),
            Target(
                "nodes",
                'count(kube_node_status_allocatable{resource="nvidia_com_gpu"})',
                NOW,
                NODES,
                "nodes",
                0.0,
            ),
        ],
        {"blast_radius": "single_gpu", "suspect": f"{hot.name} on gpu-node-42 GPU 2"},
        GroundTruth(
            "hardware",
            "single_gpu",
            "thermal_throttle",
            inc._gpu_suspect(hot),
            "cordon_and_delete_pod",
        ),
    )


def _scenario_overload() -> Scenario:
    return _scenario(
        "large_overload",
        "overload",
        f"vLLM behind ingress-nginx, {REPLICAS} replicas on {NODES} 8-GPU nodes: arrivals "
        "rise by 60 % and the KV cache fills (55 % to 99 %) on every replica. Requests "
        "are preempted, the queue and TTFT grow everywhere; the GPUs are busy and healthy. "
        f"Analyse with --window {WINDOW}.",
        (FULL_AT, FULL_AT + 5 * 60),
        [
            Target(
                "kv_usage",
                f'avg(vllm:kv_cache_usage_perc{{namespace="{inc.NAMESPACE}"}})',
                NOW,
                0.99,
                "ratio",
            ),
            Target(
                "qps",
                f'sum(rate(vllm:request_success_total{{namespace="{inc.NAMESPACE}"}}[5m]))',
                NOW,
                inc.QPS_PER_REPLICA * REPLICAS * 1.6,
                "req/s",
            ),
        ],
        {"blast_radius": "everything", "load": "arrivals"},
        GroundTruth(
            "runtime",
            "everything",
            "kv_cache_overload",
            Suspect("service", deployment=DEPLOYMENT),
            "scale_out",
        ),
    )


def scenarios() -> dict[str, Callable[[], Scenario]]:
    """Registry entries of the two large-service incidents."""
    return {
        "large_throttled_gpu": _scenario_throttled,
        "large_overload": _scenario_overload,
    }
