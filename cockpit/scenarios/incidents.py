"""Seven incidents over a 6-hour window, each with its structured ground truth.

Every one runs a service on two nodes (``gpu-node-a``, ``gpu-node-b``) with eight H100s
each, one GPU per replica (the other GPUs idle), behind ingress-nginx, with
kube-state-metrics (pod info, labels, owners, readiness, restarts, last terminated and
waiting reasons, allocatable GPUs, ReplicaSets and the Deployment), dcgm-exporter with the
Kubernetes mapping (``Hostname``, ``gpu``, ``UUID``, ``pod``, ``namespace``) and the
engine's own series. There is no data a day earlier: the one-day baseline falls back to
the quiet time before the incident.

- ``gpu_lost``: GPU 0 of ``gpu-node-b`` reports Xid 79 (fell off the bus) for 30 s, then
  every one of its DCGM series vanishes; its pod's engine dies and the container
  crash-loops (restarts, last terminated ``Error``, ``CrashLoopBackOff``, not ready,
  ``up`` 0); the node's allocatable ``nvidia.com/gpu`` drops 8 → 7; the five survivors
  absorb its traffic (busier, not faulty).
- ``bad_release``: a rolling update (revision 4 → 5, version v1.8.2 → v1.9.0) completes
  inside the window; the new revision stops honouring end-of-sequence:
  ``finished_reason="length"`` 4 % → 60 % and output tokens per request 310 → 720. The old
  pods are gone at "now"; the new pods run on other GPUs.
- ``sglang_long_prompts``: an SGLang service; a client starts sending long prompts
  (prompt P95 ~4.4 k → ~27 k tokens in ``sglang:prompt_tokens_histogram``): TTFT and the
  queue grow, the inter-token latency stays flat.
- ``throttled_gpu``: one GPU throttles thermally (HW + SW thermal slowdown, SM clock
  1980 → 1200 MHz, 67 → 90 °C); its replica is slow, the others are healthy.
- ``gateway_burst``: ingress-nginx answers 502/503/504 for 9 % of requests while the vLLM
  servers behind it are healthy.
- ``kv_overload``: arrivals rise by 60 %; the KV cache fills (55 % → 99 %), requests are
  preempted, the queue and TTFT grow on every replica, and so does the end-to-end latency
  the engine and the gateway measure (it includes the time in the queue).
- ``pod_pending``: the same rise in arrivals; when the KV cache fills the Deployment is
  scaled 6 → 7 and the seventh replica stays Pending (``Insufficient nvidia.com/gpu``:
  ``gpu-node-a`` has three GPUs, all held; ``gpu-node-b``, the only node with free GPUs,
  carries ``dedicated=batch:NoSchedule``, which the pod does not tolerate). The metrics show
  the shortfall (7 wanted, 6 available, one pod Pending and unschedulable, the taint); the
  Kubernetes side has the Pending pod, its FailedScheduling event and the tainted node.

Each scenario's ``ground_truth`` (:class:`~cockpit.scenarios.base.GroundTruth`) names the
primary layer, scope, suspect entity and cause a correct diagnosis concludes;
``python -m cockpit.scenarios.serve --truth NAME`` prints it as JSON.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from cockpit.scenarios import signals as sg
from cockpit.scenarios.base import GroundTruth, Scenario, Suspect, Target
from cockpit.scenarios.histogram import Shape, exact_shape, lognormal_shape, shifted
from cockpit.scenarios.metricset import MetricSet
from cockpit.scenarios.stacks import (
    alerts,
    dcgm,
    ingress_nginx,
    kube_state,
    scrape,
    sglang,
    vllm,
    vllm_lengths,
)
from cockpit.scenarios.stacks import kube_objects as ko
from cockpit.scenarios.stacks.replica import ReplicaLoad
from cockpit.scenarios.timeaxis import TimeAxis
from cockpit.scenarios.topology import Node, Pod, make_nodes, place_pods

NOW = int(datetime(2026, 11, 29, 15, 0, tzinfo=UTC).timestamp())
HISTORY_S = 6 * 3600
START = NOW - HISTORY_S
FINE_FROM = NOW - 150 * 60
"""Samples every 15 s over the last 2.5 h (an Xid lasting 30 s is two samples), every
60 s before."""
END = NOW + 1
NAMESPACE = "llm"
MODEL = "qwen2.5-14b-instruct"
GPU_MODEL = "NVIDIA H100 80GB HBM3"
GPUS_PER_NODE = 8
VLLM_REPLICAS = 6
QPS_PER_REPLICA = 8.0
VERSION_LABEL = "app.kubernetes.io/version"

LENGTH_BUCKETS = vllm_lengths.LENGTH_BUCKETS
BUSY_FB_MIB = 74000.0


# ---------------------------------------------------------------- topology


def _nodes() -> list[Node]:
    """``gpu-node-a`` and ``gpu-node-b``, eight GPUs each."""
    out = []
    for i, letter in enumerate("ab"):
        name = f"gpu-node-{letter}"
        n = make_nodes(name, 1, GPUS_PER_NODE, GPU_MODEL, subnet="10.0.3")[0]
        gpus = tuple(replace(g, node=name) for g in n.gpus)
        out.append(replace(n, name=name, ip=f"10.0.3.{11 + i}", gpus=gpus))
    return out


def _pods(
    deployment: str,
    nodes: list[Node],
    replicas: int,
    *,
    revision: int,
    version: str,
    first_gpu: int = 0,
    container: str = "vllm",
) -> list[Pod]:
    """``replicas`` one-GPU pods of one revision, alternating between the nodes
    (replica ``r`` on node ``r % 2``, GPU ``first_gpu + r // 2``)."""
    base = place_pods(
        deployment=deployment,
        namespace=NAMESPACE,
        nodes=nodes,
        replicas=replicas,
        gpus_per_pod=1,
        revision=revision,
        app_labels={VERSION_LABEL: version},
        container=container,
    )
    out = []
    for r, p in enumerate(base):
        n_i = r % len(nodes)
        gpu = nodes[n_i].gpus[first_gpu + r // len(nodes)]
        ip = f"10.244.{n_i + 1}.{20 + first_gpu * 2 + r}"
        out.append(replace(p, node=nodes[n_i].name, gpus=(gpu,), ip=ip))
    return out


# ---------------------------------------------------------------- shapes

E2E_OK = lognormal_shape(vllm.E2E_BUCKETS, 5.5, 16.0)
TTFT_OK = exact_shape(vllm.TTFT_BUCKETS, {0.5: 0.045, 0.95: 0.09, 0.99: 0.15})
ITL_OK = lognormal_shape(vllm.ITL_BUCKETS, 0.017, 0.04)
QUEUE_OK = lognormal_shape(vllm.QUEUE_BUCKETS, 0.004, 0.03)
PROMPT_OK = lognormal_shape(LENGTH_BUCKETS, 600, 3500)
GEN_OK = lognormal_shape(LENGTH_BUCKETS, 250, 1100)


def _one(axis: TimeAxis) -> sg.Signal:
    return sg.const(axis, 1.0)


def _healthy(axis: TimeAxis, seed: str, qps: sg.Signal) -> ReplicaLoad:
    """A healthy vLLM replica serving ``qps`` (requests per second)."""
    q = sg.around(qps, sg.noise(axis, "q" + seed, 0.02))
    return ReplicaLoad(
        ok=sg.scale(q, 0.998),
        failed=sg.scale(q, 0.002),
        prompt_tokens=sg.const(axis, 850.0),
        gen_tokens=sg.const(axis, 310.0),
        running=sg.around(sg.scale(qps, 3.0), sg.noise(axis, "r" + seed, 0.03)),
        waiting=sg.around(sg.const(axis, 1.0), sg.noise(axis, "w" + seed, 0.2)),
        kv_usage=sg.around(sg.const(axis, 0.5), sg.noise(axis, "k" + seed, 0.02)),
        e2e=[(E2E_OK, _one(axis))],
        ttft=[(TTFT_OK, _one(axis))],
        itl=[(ITL_OK, _one(axis))],
        queue=[(QUEUE_OK, _one(axis))],
        prompt_len=[(PROMPT_OK, _one(axis))],
        gen_len=[(GEN_OK, _one(axis))],
    )


def _blend(ok: Shape, bad: Shape, w: sg.Signal) -> list[tuple[Shape, sg.Signal]]:
    return [(ok, [1 - x for x in w]), (bad, list(w))]


@dataclass
class Gpu:
    """One GPU's DCGM picture over time (the stack's signals plus who holds it)."""

    util: sg.Signal
    temp: sg.Signal | None = None
    sm_clock: sg.Signal | None = None
    power: sg.Signal | None = None
    reasons: sg.Signal | None = None
    thermal: sg.Signal | None = None
    xid: sg.Signal | None = None
    fb_used: sg.Signal | None = None


def _gpu_signals(axis: TimeAxis, seed: str, g: Gpu) -> dcgm.GpuSignals:
    """DCGM signals: busy GPUs heat and draw power with their utilisation; a GPU at 0 %
    idles (SM clock 345 MHz, clock-event reason GPU idle)."""
    util = [
        float(round(min(100.0, max(0.0, u))))
        for u in sg.add(g.util, sg.noise(axis, "u" + seed, 1.0))
    ]
    util = [0.0 if base <= 0 else u for u, base in zip(util, g.util, strict=True)]
    idle = [u <= 0 for u in g.util]
    temp = g.temp or [33.0 if i else 52.0 + 0.2 * u for i, u in zip(idle, g.util, strict=True)]
    power = g.power or [70.0 if i else 150.0 + 5.0 * u for i, u in zip(idle, g.util, strict=True)]
    clock = g.sm_clock or [345.0 if i else 1980.0 for i in idle]
    reasons = g.reasons or [1.0 if i else 0.0 for i in idle]
    fb = g.fb_used or [0.0 if i else BUSY_FB_MIB for i in idle]
    return dcgm.GpuSignals(
        util=util,
        temp=[round(t) for t in sg.add(temp, sg.noise(axis, "t" + seed, 0.4))],
        mem_temp=[round(t - 4) for t in temp],
        power=power,
        sm_clock=[round(c / 15) * 15 for c in clock],
        mem_clock=sg.const(axis, 2619.0),
        clock_reasons=reasons,
        fb_used=fb,
        thermal_violation=g.thermal or sg.const(axis, 0.0),
        power_violation=sg.const(axis, 0.0),
        gr_active=[u / 100 * 0.93 for u in util],
        tensor_active=[u / 100 * 0.45 for u in util],
        dram_active=[u / 100 * 0.6 for u in util],
        xid=g.xid or [],
    )


def _util_of(r: ReplicaLoad) -> sg.Signal:
    """GPU utilisation of a replica's GPU: its batch against a batch of ~35 at 100 %."""
    return [min(99.0, 30.0 + 1.75 * x) for x in r.running]


# ---------------------------------------------------------------- emitters


def _emit_vllm(
    ms: MetricSet,
    pod: Pod,
    r: ReplicaLoad,
    length_share: sg.Signal,
    preemptions: sg.Signal | None = None,
) -> None:
    """vLLM's series of one replica; ``length_share`` of the successes end on
    ``finished_reason="length"``, the rest on ``stop``."""
    finished = {
        "stop": [o * (1 - s) for o, s in zip(r.ok, length_share, strict=True)],
        "length": [o * s for o, s in zip(r.ok, length_share, strict=True)],
        "abort": r.failed,
    }
    vllm.emit(
        ms,
        pod,
        MODEL,
        vllm.VllmSignals(
            finished=finished,
            prompt_tokens_per_req=r.prompt_tokens,
            gen_tokens_per_req=r.gen_tokens,
            running=r.running,
            waiting=r.waiting,
            kv_cache_usage=r.kv_usage,
            preemptions=preemptions or sg.const(ms.axis, 0.0),
            e2e=r.e2e,
            ttft=r.ttft,
            itl=r.itl,
            queue=r.queue,
        ),
    )
    vllm_lengths.emit(ms, pod, MODEL, r)


def _emit_dcgm(
    ms: MetricSet,
    node: Node,
    n_i: int,
    gpu_index: int,
    holder: Pod | None,
    sig: dcgm.GpuSignals,
) -> None:
    dcgm.emit(
        ms,
        node,
        node.gpus[gpu_index],
        holder,
        sig,
        exporter_ip=f"10.244.{n_i + 1}.5",
    )


def _emit_idle_gpus(ms: MetricSet, nodes: list[Node], busy: set[str]) -> None:
    """The GPUs no pod holds at any time of the window."""
    axis = ms.axis
    for n_i, node in enumerate(nodes):
        for gpu in node.gpus:
            if gpu.uuid in busy:
                continue
            sig = _gpu_signals(axis, gpu.uuid, Gpu(util=sg.const(axis, 0.0)))
            _emit_dcgm(ms, node, n_i, gpu.index, None, sig)


GATEWAY_OVERHEAD_S = 0.004
"""The proxy's own time per request (s): the gateway records the server's time plus this."""


def gateway_mix(
    loads: list[ReplicaLoad], bounds: tuple[float, ...], by: float
) -> list[tuple[Shape, sg.Signal]]:
    """The latency the gateway records for the requests the servers answered: each
    replica's end-to-end mix shifted by ``by`` (s) onto the gateway's ``bounds``, weighted
    by the requests that replica finished, so that the gateway's quantiles are the
    servers' plus the proxy's time and never below them."""
    out: list[tuple[Shape, sg.Signal]] = []
    for r in loads:
        tot = [sum(w[i] for _, w in r.e2e) or 1.0 for i in range(len(r.ok))]
        for shape, w in r.e2e:
            weight = [q * x / t for q, x, t in zip(r.ok, w, tot, strict=True)]
            out.append((shifted(shape, bounds, by), weight))
    return out


def gateway_signals(
    served: sg.Signal, loads: list[ReplicaLoad], errors: dict[str, sg.Signal] | None = None
) -> ingress_nginx.IngressSignals:
    """ingress-nginx in front of the replicas ``loads``: ``served`` answers 200 with the
    servers' latency plus the proxy's overhead (:func:`gateway_mix`; its upstream time is
    the servers' own), ``errors`` extra 5xx per second by status, answered fast by the
    proxy itself."""
    bounds = ingress_nginx.LLM_BUCKETS
    fast = lognormal_shape(bounds, 0.004, 0.02)
    by_status: dict[str, sg.Signal] = {"200": served}
    latency: dict[str, list[tuple[Shape, sg.Signal]]] = {
        "200": gateway_mix(loads, bounds, GATEWAY_OVERHEAD_S)
    }
    upstream: dict[str, list[tuple[Shape, sg.Signal]]] = {"200": gateway_mix(loads, bounds, 0.0)}
    for status, rate in (errors or {}).items():
        by_status[status] = rate
        latency[status] = upstream[status] = [(fast, [1.0] * len(rate))]
    return ingress_nginx.IngressSignals(by_status, latency, upstream)


def _emit_ingress(
    ms: MetricSet,
    service: str,
    served: sg.Signal,
    loads: list[ReplicaLoad],
    errors: dict[str, sg.Signal] | None = None,
) -> None:
    """ingress-nginx in front of ``service`` (:func:`gateway_signals`)."""
    ingress_nginx.emit(
        ms,
        ingress_nginx.Ingress(NAMESPACE, f"{service}-gw", service, "llm.example.internal"),
        gateway_signals(served, loads, errors),
    )


def _kube(
    ms: MetricSet,
    nodes: list[Node],
    pods: list[Pod],
    *,
    restarts: dict[str, sg.Signal] | None = None,
    ready: dict[str, sg.Signal] | None = None,
    last_terminated: dict[str, tuple[str, int]] | None = None,
    waiting: dict[str, tuple[str, int, int]] | None = None,
    allocatable: dict[str, sg.Signal] | None = None,
) -> None:
    """kube-state-metrics for a service whose pods live the whole window."""
    kube_state.emit_pods(
        ms, pods, restarts=restarts, ready=ready, last_terminated=last_terminated, waiting=waiting
    )
    kube_state.emit_replicasets(ms, pods)
    kube_state.emit_nodes(ms, nodes, allocatable=allocatable)


def _axis() -> TimeAxis:
    return TimeAxis(start=START, end=NOW, fine_from=FINE_FROM)


def _total(loads: list[ReplicaLoad], axis: TimeAxis) -> sg.Signal:
    out = sg.const(axis, 0.0)
    for r in loads:
        out = sg.add(out, r.total())
    return out


def _pod_alert(name: str, pod: Pod, pending: int, firing: int, summary: str) -> alerts.Alert:
    return alerts.Alert(
        name,
        pending,
        firing,
        labels={"namespace": pod.namespace, "pod": pod.name, "container": pod.container},
        summary=summary,
    )


def _service_alert(ms: MetricSet, name: str, pending: int, firing: int, **labels: str) -> None:
    """A service alert pending at ``pending`` and firing from ``firing`` on (Unix s)."""
    alerts.emit(ms, alerts.Alert(name, pending, firing, labels={"namespace": NAMESPACE, **labels}))


# ---------------------------------------------------------------- gpu_lost

LOST_XID_AT = NOW - 80 * 60
LOST_GONE_AT = LOST_XID_AT + 30
LOST_ALLOC_AT = LOST_XID_AT + 60
LOST_REPLICA = 1
"""Replica 1: ``gpu-node-b`` GPU 0."""
LOST_CRASHLOOP_FIRING = LOST_GONE_AT + 15 * 60 + 60
CRASH_BACKOFF_S = (10, 20, 40, 80, 160, 300)


def _restart_times(first: int, end: int) -> list[int]:
    """When a crash-looping container restarts: kubelet's back-off 10 s doubling to
    5 min (plus ~15 s the engine takes to fail each time)."""
    out, t, k = [], first, 0
    while t < end:
        out.append(t)
        t += CRASH_BACKOFF_S[min(k, len(CRASH_BACKOFF_S) - 1)] + 15
        k += 1
    return out


def _events_rate(axis: TimeAxis, times: list[int]) -> sg.Signal:
    """A rate whose integral over the axis steps counts one per event time."""
    pts, dts = axis.points, axis.dt()
    out = []
    for i, (t, dt) in enumerate(zip(pts, dts, strict=True)):
        lo = pts[i - 1] if i else t - dt
        out.append(sum(1 for e in times if lo < e <= t) / dt)
    return out


def _lost_pods() -> tuple[list[Node], list[Pod]]:
    nodes = _nodes()
    return nodes, _pods("qwen-chat", nodes, VLLM_REPLICAS, revision=7, version="v1.8.2")


def build_gpu_lost() -> MetricSet:
    """The series of ``gpu_lost``."""
    axis = _axis()
    ms = MetricSet(axis)
    nodes, pods = _lost_pods()
    victim = pods[LOST_REPLICA]
    gone = sg.step_ramp(axis, LOST_GONE_AT, 60)
    share = VLLM_REPLICAS / (VLLM_REPLICAS - 1)
    loads: list[ReplicaLoad] = []
    for i, pod in enumerate(pods):
        if i == LOST_REPLICA:
            r = _healthy(axis, pod.name, sg.const(axis, QPS_PER_REPLICA))
            with ms.span(START, LOST_GONE_AT):
                _emit_vllm(ms, pod, r, sg.const(axis, 0.04))
            alive = [1.0 if t < LOST_GONE_AT else 0.0 for t in axis.points]
            r.ok, r.failed = sg.mul(r.ok, alive), sg.mul(r.failed, alive)
            loads.append(r)
            sig = _gpu_signals(axis, pod.name, Gpu(util=_util_of(r)))
            sig.xid = [79.0 if LOST_XID_AT <= t < LOST_GONE_AT else 0.0 for t in axis.points]
            with ms.span(START, LOST_GONE_AT):
                _emit_dcgm(ms, nodes[1], 1, victim.gpus[0].index, victim, sig)
            scrape.emit_up(ms, _target(pod), alive)
            continue
        qps = sg.lerp(sg.const(axis, QPS_PER_REPLICA), QPS_PER_REPLICA * share, gone)
        r = _healthy(axis, pod.name, qps)
        r.waiting = sg.around(sg.lerp(r.waiting, 7.0, gone), sg.noise(axis, "wl" + pod.name, 0.1))
        r.kv_usage = sg.lerp(r.kv_usage, 0.63, gone)
        ttft_busy = exact_shape(vllm.TTFT_BUCKETS, {0.5: 0.07, 0.95: 0.18, 0.99: 0.3})
        r.ttft = _blend(TTFT_OK, ttft_busy, gone)
        _emit_vllm(ms, pod, r, sg.const(axis, 0.04))
        loads.append(r)
        n_i = 0 if pod.node == "gpu-node-a" else 1
        _emit_dcgm(
            ms,
            nodes[n_i],
            n_i,
            pod.gpus[0].index,
            pod,
            _gpu_signals(axis, pod.name, Gpu(util=_util_of(r))),
        )
        scrape.emit_up(ms, _target(pod), _one(axis))
    _emit_idle_gpus(ms, nodes, {p.gpus[0].uuid for p in pods})
    restarts = _restart_times(LOST_GONE_AT + 20, NOW)
    _kube(
        ms,
        nodes,
        pods,
        restarts={victim.name: _events_rate(axis, restarts)},
        ready={victim.name: [1.0 if t < LOST_GONE_AT else 0.0 for t in axis.points]},
        last_terminated={victim.name: ("Error", LOST_GONE_AT + 20)},
        waiting={victim.name: ("CrashLoopBackOff", LOST_GONE_AT + 35, END)},
        allocatable={
            "gpu-node-b": [8.0 if t < LOST_ALLOC_AT else 7.0 for t in axis.points],
        },
    )
    served = _total(loads, axis)
    burst = [QPS_PER_REPLICA if LOST_GONE_AT <= t < LOST_GONE_AT + 45 else 0.0 for t in axis.points]
    _emit_ingress(ms, "qwen-chat", served, loads, {"502": burst})
    alerts.emit(
        ms,
        _pod_alert(
            "KubePodCrashLooping",
            victim,
            LOST_GONE_AT + 60,
            LOST_CRASHLOOP_FIRING,
            "Pod is crash looping.",
        ),
    )
    return ms


def _target(pod: Pod) -> dict[str, str]:
    return vllm.scrape_labels(pod, "vllm", vllm.METRICS_PORT)


# ---------------------------------------------------------------- bad_release

ROLL_START = NOW - 120 * 60
ROLL_STEP_S = 180
ROLL_LOAD_S = 90
"""A new pod is ready 90 s after it is created (model load); the old pod it replaces is
deleted 10 s later (maxSurge 1, maxUnavailable 0)."""
OLD_VERSION, NEW_VERSION = "v1.8.2", "v1.9.0"
LENGTH_SHARE = (0.04, 0.60)
GEN_TOKENS = (310.0, 720.0)


def _release_pods() -> tuple[list[Node], list[Pod], list[Pod]]:
    nodes = _nodes()
    old = _pods("qwen-chat", nodes, VLLM_REPLICAS, revision=4, version=OLD_VERSION)
    new = _pods("qwen-chat", nodes, VLLM_REPLICAS, revision=5, version=NEW_VERSION, first_gpu=3)
    return nodes, old, new


def _rollout_times(k: int) -> tuple[int, int, int]:
    """Replica ``k``'s new pod created, new pod ready, old pod deleted (Unix seconds)."""
    created = ROLL_START + k * ROLL_STEP_S
    return created, created + ROLL_LOAD_S, created + ROLL_LOAD_S + 10


ROLL_END = _rollout_times(VLLM_REPLICAS - 1)[2]


def build_bad_release() -> MetricSet:
    """The series of ``bad_release``."""
    axis = _axis()
    ms = MetricSet(axis)
    nodes, old, new = _release_pods()
    pts = axis.points
    loads: list[ReplicaLoad] = []
    e2e_long = lognormal_shape(vllm.E2E_BUCKETS, 12.5, 30.0)
    gen_long = lognormal_shape(LENGTH_BUCKETS, 800, 2000)
    for k, (o, n) in enumerate(zip(old, new, strict=True)):
        created, ready_at, deleted = _rollout_times(k)
        n_i = k % len(nodes)
        # old pod: serves until deleted
        alive_o = [1.0 if t < deleted else 0.0 for t in pts]
        r_o = _healthy(axis, o.name, sg.scale(alive_o, QPS_PER_REPLICA))
        with ms.span(START, deleted):
            _emit_vllm(ms, o, r_o, sg.const(axis, LENGTH_SHARE[0]))
            scrape.emit_up(ms, _target(o), _one(axis))
        loads.append(r_o)
        # new pod: serves from ready, longer outputs
        alive_n = [1.0 if t >= ready_at else 0.0 for t in pts]
        r_n = _healthy(axis, n.name, sg.scale(alive_n, QPS_PER_REPLICA))
        r_n.gen_tokens = sg.const(axis, GEN_TOKENS[1])
        r_n.gen_len = [(gen_long, _one(axis))]
        r_n.e2e = [(e2e_long, _one(axis))]
        r_n.running = sg.around(sg.const(axis, 38.0), sg.noise(axis, "rn" + n.name, 0.03))
        r_n.kv_usage = sg.around(sg.const(axis, 0.71), sg.noise(axis, "kn" + n.name, 0.02))
        with ms.span(ready_at, END):
            _emit_vllm(ms, n, r_n, sg.const(axis, LENGTH_SHARE[1]))
        with ms.span(created, END):
            scrape.emit_up(ms, _target(n), alive_n)
        loads.append(r_n)
        # the old pod's GPU: busy while it runs, then idle without a pod
        g_old = old[k].gpus[0].index
        busy_o = _gpu_signals(axis, o.name, Gpu(util=_util_of(r_o)))
        idle = _gpu_signals(axis, o.name + "idle", Gpu(util=sg.const(axis, 0.0)))
        with ms.span(START, deleted):
            _emit_dcgm(ms, nodes[n_i], n_i, g_old, o, busy_o)
        with ms.span(deleted, END):
            _emit_dcgm(ms, nodes[n_i], n_i, g_old, None, idle)
        # the new pod's GPU: idle, then loading (memory filled, no work), then busy
        g_new = new[k].gpus[0].index
        util_n = [u if t >= ready_at else 0.0 for u, t in zip(_util_of(r_n), pts, strict=True)]
        fb_n = [BUSY_FB_MIB if t >= created + 30 else 0.0 for t in pts]
        busy_n = _gpu_signals(axis, n.name, Gpu(util=util_n, fb_used=fb_n))
        idle_n = _gpu_signals(axis, n.name + "idle", Gpu(util=sg.const(axis, 0.0)))
        with ms.span(START, created):
            _emit_dcgm(ms, nodes[n_i], n_i, g_new, None, idle_n)
        with ms.span(created, END):
            _emit_dcgm(ms, nodes[n_i], n_i, g_new, n, busy_n)
        # kube-state-metrics: each pod while it exists
        with ms.span(START, deleted):
            kube_state.emit_pods(ms, [o])
        with ms.span(created, END):
            kube_state.emit_pods(
                ms, [n], ready={n.name: [1.0 if t >= ready_at else 0.0 for t in pts]}
            )
    _emit_idle_gpus(ms, nodes, {p.gpus[0].uuid for p in (*old, *new)})
    old_rs, new_rs = old[0].replicaset, new[0].replicaset
    new_count = [
        float(sum(1 for k in range(VLLM_REPLICAS) if _rollout_times(k)[0] <= t)) for t in pts
    ]
    updated = [
        float(sum(1 for k in range(VLLM_REPLICAS) if _rollout_times(k)[1] <= t)) for t in pts
    ]
    old_count = [
        float(VLLM_REPLICAS - sum(1 for k in range(VLLM_REPLICAS) if _rollout_times(k)[2] <= t))
        for t in pts
    ]
    kube_state.emit_replicasets(ms, old, spec_replicas={old_rs: old_count}, deployment_series=False)
    with ms.span(ROLL_START, END):
        kube_state.emit_replicasets(
            ms, new, spec_replicas={new_rs: new_count}, deployment_series=False
        )
    kube_state.emit_deployment(
        ms,
        NAMESPACE,
        "qwen-chat",
        [4.0 if t < ROLL_START else 5.0 for t in pts],
        sg.const(axis, float(VLLM_REPLICAS)),
        [float(VLLM_REPLICAS) if t < ROLL_START else u for t, u in zip(pts, updated, strict=True)],
        sg.const(axis, float(VLLM_REPLICAS)),
    )
    kube_state.emit_nodes(ms, nodes)
    served = _total(loads, axis)
    _emit_ingress(ms, "qwen-chat", served, loads)
    _service_alert(
        ms, "VLLMHighE2ELatency", ROLL_END + 5 * 60, ROLL_END + 15 * 60, service="qwen-chat"
    )
    return ms


# ---------------------------------------------------------------- sglang_long_prompts

SGLANG_REPLICAS = 4
LONG_AT = NOW - 40 * 60
LONG_SHARE = 0.25
PROMPT_SG_OK = lognormal_shape(sglang.TOKEN_BUCKETS, 1100, 6500)
PROMPT_SG_LONG = lognormal_shape(sglang.TOKEN_BUCKETS, 22000, 36000)
GEN_SG = lognormal_shape(sglang.TOKEN_BUCKETS, 240, 900)


def _sglang_pods() -> tuple[list[Node], list[Pod]]:
    nodes = _nodes()
    return nodes, _pods(
        "sglang-chat",
        nodes,
        SGLANG_REPLICAS,
        revision=2,
        version="v0.4.9",
        container="sglang",
    )


def build_sglang_long_prompts() -> MetricSet:
    """The series of ``sglang_long_prompts``."""
    axis = _axis()
    ms = MetricSet(axis)
    nodes, pods = _sglang_pods()
    sev = sg.step_ramp(axis, LONG_AT, 180)
    long_w = sg.scale(sev, LONG_SHARE)
    ttft_bad = exact_shape(vllm.TTFT_BUCKETS, {0.5: 0.4, 0.95: 6.0, 0.99: 9.0})
    queue_bad = lognormal_shape(vllm.QUEUE_BUCKETS, 1.5, 8.0)
    e2e_bad = lognormal_shape(vllm.E2E_BUCKETS, 7.0, 26.0)
    loads: list[ReplicaLoad] = []
    for n_i_pod, pod in enumerate(pods):
        r = _healthy(axis, pod.name, sg.const(axis, QPS_PER_REPLICA))
        r.prompt_len = [(PROMPT_SG_OK, [1 - w for w in long_w]), (PROMPT_SG_LONG, long_w)]
        r.gen_len = [(GEN_SG, _one(axis))]
        r.prompt_tokens = sg.lerp(sg.const(axis, PROMPT_SG_OK.mean), PROMPT_SG_LONG.mean, long_w)
        r.gen_tokens = sg.const(axis, GEN_SG.mean)
        r.ttft = _blend(TTFT_OK, ttft_bad, sev)
        r.queue = _blend(QUEUE_OK, queue_bad, sev)
        # every request waits behind the long prefills: the end-to-end latency carries the
        # queue time (its median 1.5 s on top of the 5.5 s median, the tail more)
        r.e2e = _blend(E2E_OK, e2e_bad, sev)
        r.waiting = sg.around(sg.lerp(r.waiting, 24.0, sev), sg.noise(axis, "ws" + pod.name, 0.1))
        r.kv_usage = sg.lerp(r.kv_usage, 0.93, sev)
        sglang.emit(ms, pod, MODEL, r)
        sglang.emit_lengths(ms, pod, MODEL, r)
        scrape.emit_up(ms, vllm.scrape_labels(pod, "sglang", sglang.PORT), _one(axis))
        loads.append(r)
        n_i = n_i_pod % len(nodes)
        util = sg.lerp(_util_of(r), 94.0, sev)
        _emit_dcgm(
            ms, nodes[n_i], n_i, pod.gpus[0].index, pod, _gpu_signals(axis, pod.name, Gpu(util))
        )
    _emit_idle_gpus(ms, nodes, {p.gpus[0].uuid for p in pods})
    _kube(ms, nodes, pods)
    _emit_ingress(ms, "sglang-chat", _total(loads, axis), loads)
    _service_alert(ms, "LLMTimeToFirstTokenHigh", LONG_AT + 5 * 60, LONG_AT + 10 * 60)
    return ms


# ---------------------------------------------------------------- throttled_gpu

HOT_AT = NOW - 50 * 60
HOT_REPLICA = 4
"""Replica 4: ``gpu-node-a`` GPU 2."""


def _plain_pods() -> tuple[list[Node], list[Pod]]:
    nodes = _nodes()
    return nodes, _pods("qwen-chat", nodes, VLLM_REPLICAS, revision=7, version="v1.8.2")


def _plain_service(
    ms: MetricSet,
    nodes: list[Node],
    pods: list[Pod],
    shape: Callable[[int, Pod, ReplicaLoad], Gpu | None],
    *,
    qps: sg.Signal | None = None,
    preemptions: sg.Signal | None = None,
    kube: bool = True,
) -> list[ReplicaLoad]:
    """Six vLLM replicas, their GPUs and (with ``kube``) kube-state-metrics;
    ``shape(i, pod, load)`` may change a replica's load in place and returns its GPU's
    picture (None: from the load)."""
    axis = ms.axis
    loads = []
    for i, pod in enumerate(pods):
        r = _healthy(axis, pod.name, qps or sg.const(axis, QPS_PER_REPLICA))
        gpu = shape(i, pod, r) or Gpu(util=_util_of(r))
        _emit_vllm(ms, pod, r, sg.const(axis, 0.04), preemptions)
        scrape.emit_up(ms, _target(pod), _one(axis))
        n_i = i % len(nodes)
        _emit_dcgm(ms, nodes[n_i], n_i, pod.gpus[0].index, pod, _gpu_signals(axis, pod.name, gpu))
        loads.append(r)
    _emit_idle_gpus(ms, nodes, {p.gpus[0].uuid for p in pods})
    if kube:
        _kube(ms, nodes, pods)
    return loads


def throttle(axis: TimeAxis, sev: sg.Signal, r: ReplicaLoad) -> Gpu:
    """A replica whose GPU throttles thermally as ``sev`` goes 0 → 1: ``r`` serves fewer
    requests with a slower inter-token and end-to-end latency and a longer queue (changed in
    place); the GPU's picture is returned (SM clock 1980 → 1200 MHz, 67 → 90 °C, HW and SW
    thermal slowdown once ``sev`` passes one half)."""
    r.ok = sg.lerp(r.ok, QPS_PER_REPLICA * 0.8, sev)
    r.itl = _blend(ITL_OK, lognormal_shape(vllm.ITL_BUCKETS, 0.045, 0.11), sev)
    r.e2e = _blend(E2E_OK, lognormal_shape(vllm.E2E_BUCKETS, 14.0, 40.0), sev)
    r.waiting = sg.lerp(r.waiting, 9.0, sev)
    hot = [1.0 if x > 0.5 else 0.0 for x in sev]
    return Gpu(
        util=_util_of(r),
        temp=sg.lerp(sg.const(axis, 67.0), 90.0, sev),
        sm_clock=sg.lerp(sg.const(axis, 1980.0), 1200.0, sev),
        power=sg.lerp(sg.const(axis, 520.0), 390.0, sev),
        reasons=[float(dcgm.HW_THERMAL | dcgm.SW_THERMAL) * h for h in hot],
        thermal=sg.scale(sev, 0.65),
    )


def build_throttled_gpu() -> MetricSet:
    """The series of ``throttled_gpu``."""
    axis = _axis()
    ms = MetricSet(axis)
    nodes, pods = _plain_pods()
    sev = sg.step_ramp(axis, HOT_AT, 300)

    def shape(i: int, pod: Pod, r: ReplicaLoad) -> Gpu | None:
        return throttle(axis, sev, r) if i == HOT_REPLICA else None

    loads = _plain_service(ms, nodes, pods, shape)
    _emit_ingress(ms, "qwen-chat", _total(loads, axis), loads)
    _service_alert(
        ms, "VLLMHighInterTokenLatency", HOT_AT + 8 * 60, HOT_AT + 13 * 60, service="qwen-chat"
    )
    return ms


# ---------------------------------------------------------------- gateway_burst

BURST_AT = NOW - 25 * 60
BURST_SHARE = 0.09


def build_gateway_burst() -> MetricSet:
    """The series of ``gateway_burst``."""
    axis = _axis()
    ms = MetricSet(axis)
    nodes, pods = _plain_pods()
    loads = _plain_service(ms, nodes, pods, lambda i, p, r: None)
    served = _total(loads, axis)
    sev = sg.step_ramp(axis, BURST_AT, 60)
    # share s of all answers are 5xx from the proxy: errors = served * s / (1 - s)
    err = [
        q * (0.001 + (BURST_SHARE - 0.001) * w) / (1 - BURST_SHARE * w)
        for q, w in zip(served, sev, strict=True)
    ]
    _emit_ingress(
        ms,
        "qwen-chat",
        served,
        loads,
        {"502": sg.scale(err, 0.5), "503": sg.scale(err, 0.3), "504": sg.scale(err, 0.2)},
    )
    _service_alert(
        ms, "NginxIngressHigh5xxRate", BURST_AT + 2 * 60, BURST_AT + 7 * 60, ingress="qwen-chat-gw"
    )
    return ms


# ---------------------------------------------------------------- kv_overload

KV_RISE_AT = NOW - 90 * 60
KV_RISE_S = 70 * 60
KV_FULL_AT = KV_RISE_AT + 30 * 60
"""Arrivals rise from 8 to 12.8 req/s per replica over 70 minutes; the KV cache is full
(over 95 %) about 30 minutes in, and the impact starts there."""


def overload(
    axis: TimeAxis, rise: sg.Signal
) -> tuple[sg.Signal, sg.Signal, Callable[[int, Pod, ReplicaLoad], Gpu | None]]:
    """Arrivals rising by 60 % as ``rise`` goes 0 → 1, and what they do to every replica:
    ``(requests per second per replica, how far past the KV cache's capacity (0 until
    ``rise`` reaches 0.43, then up to 1), the shape of each replica's load)``."""
    qps = sg.lerp(sg.const(axis, QPS_PER_REPLICA), QPS_PER_REPLICA * 1.6, rise)
    over = [min(1.0, max(0.0, (x - 0.43) / 0.57)) for x in rise]
    queue_bad = lognormal_shape(vllm.QUEUE_BUCKETS, 1.8, 7.0)
    # The time to the first token includes the time in the queue: at each quantile it is
    # above the queue time (1.8 / 4.9 / 8.9 s read from its histogram) by the prefill.
    ttft_bad = exact_shape(vllm.TTFT_BUCKETS, {0.5: 1.95, 0.95: 5.3, 0.99: 9.3})
    itl_busy = lognormal_shape(vllm.ITL_BUCKETS, 0.024, 0.06)
    # A request's end-to-end latency includes its time in the queue (vLLM's
    # e2e_request_latency_seconds runs from arrival to the last token) and its slower
    # decode: about the queue's 1.8 s plus 1.4x the decode, median 5.5 -> 9.5 s, P99
    # 16 -> 29 s; the gateway in front sees the same requests.
    e2e_bad = lognormal_shape(vllm.E2E_BUCKETS, 9.5, 29.0)

    def shape(i: int, pod: Pod, r: ReplicaLoad) -> Gpu | None:
        r.kv_usage = [
            min(0.99, 0.5 + 0.48 * x / 0.43) if x < 0.43 else 0.98 + 0.01 * o
            for x, o in zip(rise, over, strict=True)
        ]
        r.running = sg.around(
            [min(44.0, 24.0 + 20.0 * x / 0.43) for x in rise], sg.noise(axis, "r2" + pod.name, 0.03)
        )
        r.waiting = sg.around(sg.lerp(r.waiting, 60.0, over), sg.noise(axis, "w2" + pod.name, 0.05))
        r.ttft = _blend(TTFT_OK, ttft_bad, over)
        r.queue = _blend(QUEUE_OK, queue_bad, over)
        r.itl = _blend(ITL_OK, itl_busy, over)
        r.e2e = _blend(E2E_OK, e2e_bad, over)
        return None

    return qps, over, shape


def build_kv_overload() -> MetricSet:
    """The series of ``kv_overload``."""
    axis = _axis()
    ms = MetricSet(axis)
    nodes, pods = _plain_pods()
    rise = sg.step_ramp(axis, KV_RISE_AT, KV_RISE_S)
    qps, over, shape = overload(axis, rise)
    preempt = sg.scale(over, 1.5)
    loads = _plain_service(ms, nodes, pods, shape, qps=qps, preemptions=preempt)
    _emit_ingress(ms, "qwen-chat", _total(loads, axis), loads)
    _service_alert(ms, "VLLMKVCacheAlmostFull", KV_FULL_AT, KV_FULL_AT + 5 * 60)
    _service_alert(ms, "LLMTimeToFirstTokenHigh", KV_FULL_AT + 6 * 60, KV_FULL_AT + 11 * 60)
    return ms


# ---------------------------------------------------------------- pod_pending

PENDING_RISE_AT = NOW - 90 * 60
PENDING_SCALE_AT = KV_FULL_AT
"""Arrivals rise as in ``kv_overload``; when the KV cache is full the Deployment is
scaled 6 → 7 and the new replica stays Pending from then on."""
PENDING_REPLICA = VLLM_REPLICAS
"""The seventh replica (index 6): the one that never gets a node."""
PENDING_TAINT = ("dedicated", "batch", "NoSchedule")
"""The taint on ``gpu-node-b``, the only node with free GPUs (kept for batch jobs; the
serving pods already on it stay, NoSchedule does not evict)."""
PENDING_NODE_A_GPUS = 3


def _pending_pods() -> tuple[list[Node], list[Pod], Pod]:
    """``gpu-node-a`` with three GPUs (all held by the service), ``gpu-node-b`` with eight
    (three held), the six running replicas and the unscheduled seventh."""
    nodes = _nodes()
    pods = _pods("qwen-chat", nodes, VLLM_REPLICAS + 1, revision=7, version="v1.8.2")
    nodes[0] = replace(nodes[0], gpus=nodes[0].gpus[:PENDING_NODE_A_GPUS])
    pending = replace(pods[PENDING_REPLICA], node="", gpus=(), ip="")
    return nodes, pods[:PENDING_REPLICA], pending


def _pending_message() -> str:
    """kube-scheduler's FitError for the seventh replica (formats.md §A4 wording)."""
    key, value, _ = PENDING_TAINT
    return (
        "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated "
        f"taint {{{key}: {value}}}. preemption: 0/2 nodes are available: 1 No preemption "
        "victims found for incoming pod, 1 Preemption is not helpful for scheduling."
    )


def build_pod_pending() -> MetricSet:
    """The series of ``pod_pending``."""
    axis = _axis()
    ms = MetricSet(axis)
    nodes, pods, pending = _pending_pods()
    rise = sg.step_ramp(axis, PENDING_RISE_AT, KV_RISE_S)
    qps, over, shape = overload(axis, rise)
    loads = _plain_service(
        ms, nodes, pods, shape, qps=qps, preemptions=sg.scale(over, 1.5), kube=False
    )
    kube_state.emit_pods(ms, pods)
    kube_state.emit_nodes(ms, nodes)
    kube_state.emit_pending_pod(ms, pending, PENDING_SCALE_AT)
    pts = axis.points
    wanted = [float(VLLM_REPLICAS + (t >= PENDING_SCALE_AT)) for t in pts]
    running = sg.const(axis, float(VLLM_REPLICAS))
    kube_state.emit_deployment(
        ms, NAMESPACE, "qwen-chat", sg.const(axis, 7.0), wanted, wanted, running
    )
    kube_state.emit_replicasets(
        ms, pods, spec_replicas={pods[0].replicaset: wanted}, deployment_series=False
    )
    key, value, effect = PENDING_TAINT
    ms.gauge(
        "kube_node_spec_taint",
        {**kube_state.JOB, "node": nodes[1].name, "key": key, "value": value, "effect": effect},
        _one(axis),
        "The taint of a cluster node.",
    )
    _emit_ingress(ms, "qwen-chat", _total(loads, axis), loads)
    _service_alert(
        ms,
        "KubeDeploymentReplicasMismatch",
        PENDING_SCALE_AT + 60,
        PENDING_SCALE_AT + 15 * 60 + 60,
        deployment="qwen-chat",
    )
    return ms


# ---------------------------------------------------------------- registry

BASELINE_AT = NOW - 4 * 3600
"""A time every incident's baseline phase is measured at (before any of them starts)."""

SCOPE_NS = f'namespace="{NAMESPACE}"'


def _t(
    name: str, query: str, base: float | None, now: float, unit: str, tol: float = 0.05
) -> list[Target]:
    out = [Target(name, query, NOW, now, unit, tol)]
    if base is not None:
        out.append(Target(name, query, BASELINE_AT, base, unit, tol, phase="baseline"))
    return out


def _ratio(num: str, den: str) -> str:
    return f"sum(rate({num}[5m])) / sum(rate({den}[5m]))"


def _mix_quantile(q: float, mix: list[tuple[Shape, float]]) -> float:
    """The bucket quantile PromQL returns for a fixed mix of shapes."""
    from cockpit.scenarios.histogram import bucket_quantile

    bounds = mix[0][0].bounds
    cum = [sum(s.cdf[k] * w for s, w in mix) for k in range(len(bounds))]
    return bucket_quantile(q, bounds, cum)


def _gpu_suspect(pod: Pod) -> Suspect:
    gpu = pod.gpus[0]
    return Suspect(
        "gpu",
        deployment=pod.deployment,
        pod=pod.name,
        node=pod.node,
        gpu_index=gpu.index,
        uuid=gpu.uuid,
    )


def _scenario_gpu_lost() -> Scenario:
    _, pods = _lost_pods()
    victim = pods[LOST_REPLICA]
    uuid = victim.gpus[0].uuid
    survivors = "|".join(p.name for p in pods if p is not victim)
    return _incident(
        "gpu_lost",
        "vLLM behind ingress-nginx, 6 replicas on two 8-GPU nodes: GPU 0 of gpu-node-b "
        "reports Xid 79 and falls off the bus mid-window. Its DCGM series vanish, its "
        "pod crash-loops, allocatable nvidia.com/gpu on the node drops 8 to 7 and the "
        "five survivors absorb the load.",
        (LOST_XID_AT, LOST_CRASHLOOP_FIRING),
        "qwen-chat",
        [
            *_t(
                "allocatable_gpus",
                'kube_node_status_allocatable{node="gpu-node-b",resource="nvidia_com_gpu"}',
                8,
                7,
                "GPUs",
                0.0,
            ),
            *_t(
                "dcgm_gpus", 'count(DCGM_FI_DEV_GPU_UTIL{Hostname="gpu-node-b"})', 8, 7, "GPUs", 0.0
            ),
            *_t(
                "xid",
                f'max_over_time(DCGM_FI_DEV_XID_ERRORS{{UUID="{uuid}"}}[6h])',
                None,
                79,
                "xid",
                0.0,
            ),
            *_t(
                "restarts",
                f'sum(kube_pod_container_status_restarts_total{{pod="{victim.name}"}})',
                0,
                len(_restart_times(LOST_GONE_AT + 20, NOW)),
                "restarts",
                0.0,
            ),
            *_t("up", f'up{{pod="{victim.name}"}}', 1, 0, "up", 0.0),
            *_t(
                "survivor_qps",
                f'sum(rate(vllm:request_success_total{{pod=~"{survivors}"}}[5m]))',
                QPS_PER_REPLICA * 5,
                QPS_PER_REPLICA * VLLM_REPLICAS,
                "req/s",
            ),
        ],
        build_gpu_lost,
        {"blast_radius": "single_gpu", "suspect": f"{victim.name} on gpu-node-b GPU 0"},
        GroundTruth(
            "hardware", "single_gpu", "gpu_lost", _gpu_suspect(victim), "cordon_and_delete_pod"
        ),
        kube=_kube_gpu_lost,
    )


def _incident(
    name: str,
    description: str,
    times: tuple[int, int],
    deployment: str,
    targets: list[Target],
    build: Callable[[], MetricSet],
    truth: dict[str, str],
    ground_truth: GroundTruth,
    start: int = START,
    kube: Callable[[], ko.KubeWorld] | None = None,
) -> Scenario:
    """One incident over the common 6-hour window (or from ``start``); ``times``: impact
    start, detection."""
    return Scenario(
        name=name,
        description=description,
        now=NOW,
        start=start,
        incident_start=times[0],
        detected_at=times[1],
        scope=_scope(deployment),
        targets=targets,
        build=build,
        truth=truth,
        ground_truth=ground_truth,
        kube=kube,
    )


def _scope(deployment: str) -> dict[str, str]:
    return {
        "namespace": NAMESPACE,
        "deployment": deployment,
        "selector": f"app={deployment}",
        "model": MODEL,
    }


def _scenario_bad_release() -> Scenario:
    _, old, new = _release_pods()
    finished = f'vllm:request_success_total{{{SCOPE_NS},finished_reason=~"stop|length"}}'
    return _incident(
        "bad_release",
        f"vLLM behind ingress-nginx: a rollout ({OLD_VERSION} to {NEW_VERSION}) completes "
        "inside the window and breaks end-of-sequence handling. finished_reason=length "
        "4 % to 60 %, output tokens per request 310 to 720; the old pods are gone at now.",
        (_rollout_times(0)[1], ROLL_END + 15 * 60),
        "qwen-chat",
        [
            *_t(
                "length_share",
                _ratio(
                    f'vllm:request_success_total{{{SCOPE_NS},finished_reason="length"}}', finished
                ),
                LENGTH_SHARE[0],
                LENGTH_SHARE[1],
                "ratio",
            ),
            *_t(
                "gen_tokens_per_request",
                _ratio(
                    f"vllm:generation_tokens_total{{{SCOPE_NS}}}",
                    f"vllm:request_success_total{{{SCOPE_NS}}}",
                ),
                GEN_TOKENS[0],
                GEN_TOKENS[1],
                "tokens",
            ),
            *_t(
                "pods_new_version",
                f'count(kube_pod_labels{{label_app_kubernetes_io_version="{NEW_VERSION}"}})',
                None,
                VLLM_REPLICAS,
                "pods",
                0.0,
            ),
            Target(
                "pods_old_version",
                f'count(kube_pod_labels{{label_app_kubernetes_io_version="{OLD_VERSION}"}})',
                BASELINE_AT,
                VLLM_REPLICAS,
                "pods",
                0.0,
                phase="baseline",
            ),
            *_t(
                "generation",
                'kube_deployment_metadata_generation{deployment="qwen-chat"}',
                4,
                5,
                "generation",
                0.0,
            ),
        ],
        build_bad_release,
        {"blast_radius": "revision", "suspect": new[0].replicaset},
        GroundTruth(
            "serving",
            "revision",
            "release",
            Suspect(
                "revision",
                deployment="qwen-chat",
                old_revision=old[0].replicaset,
                new_revision=new[0].replicaset,
                old_version=OLD_VERSION,
                new_version=NEW_VERSION,
            ),
            "rollback",
        ),
        kube=_kube_bad_release,
    )


def _scenario_sglang_long_prompts() -> Scenario:
    ok, long_ = PROMPT_SG_OK, PROMPT_SG_LONG
    hist = "sglang:prompt_tokens_histogram_bucket"
    return _incident(
        "sglang_long_prompts",
        "SGLang behind ingress-nginx, 4 replicas: a client starts sending long prompts "
        "(a quarter of the requests, prompt P95 about 4.4 k to 27 k tokens). TTFT and the "
        "queue grow, the inter-token latency stays flat, the GPUs are healthy.",
        (LONG_AT, LONG_AT + 10 * 60),
        "sglang-chat",
        [
            *_t(
                "prompt_tokens_per_request",
                _ratio("sglang:prompt_tokens_total", "sglang:num_requests_total"),
                ok.mean,
                ok.mean * (1 - LONG_SHARE) + long_.mean * LONG_SHARE,
                "tokens",
            ),
            *_t(
                "prompt_p95",
                f"histogram_quantile(0.95, sum by (le) (rate({hist}[5m])))",
                _mix_quantile(0.95, [(ok, 1.0)]),
                _mix_quantile(0.95, [(ok, 1 - LONG_SHARE), (long_, LONG_SHARE)]),
                "tokens",
            ),
        ],
        build_sglang_long_prompts,
        {"blast_radius": "everything", "load": "long_prompts"},
        GroundTruth(
            "serving",
            "everything",
            "long_prompts",
            Suspect("client", deployment="sglang-chat"),
            "rate_limit_client",
        ),
        kube=_kube_plain(_sglang_pods),
    )


def _scenario_throttled_gpu() -> Scenario:
    _, pods = _plain_pods()
    hot = pods[HOT_REPLICA]
    uuid = hot.gpus[0].uuid
    return _incident(
        "throttled_gpu",
        "vLLM behind ingress-nginx, 6 replicas on two 8-GPU nodes: GPU 2 of gpu-node-a "
        "throttles thermally (SM clock 1980 to 1200 MHz, 67 to 90 C); its replica is "
        "slow, the others and the idle GPUs are healthy.",
        (HOT_AT, HOT_AT + 13 * 60),
        "qwen-chat",
        [
            *_t("sm_clock", f'DCGM_FI_DEV_SM_CLOCK{{UUID="{uuid}"}}', 1980, 1200, "MHz"),
            *_t(
                "clock_reasons",
                f'DCGM_FI_DEV_CLOCKS_EVENT_REASONS{{UUID="{uuid}"}}',
                0,
                float(dcgm.HW_THERMAL | dcgm.SW_THERMAL),
                "bitmask",
                0.0,
            ),
        ],
        build_throttled_gpu,
        {"blast_radius": "single_gpu", "suspect": f"{hot.name} on gpu-node-a GPU 2"},
        GroundTruth(
            "hardware", "single_gpu", "thermal_throttle", _gpu_suspect(hot), "cordon_and_delete_pod"
        ),
        kube=_kube_plain(_plain_pods),
    )


def _scenario_gateway_burst() -> Scenario:
    return _incident(
        "gateway_burst",
        "vLLM behind ingress-nginx, 6 healthy replicas: the gateway answers 502/503/504 "
        "for 9 % of requests while the servers behind it stay healthy.",
        (BURST_AT, BURST_AT + 7 * 60),
        "qwen-chat",
        [
            *_t(
                "gateway_5xx_share",
                _ratio(
                    f'nginx_ingress_controller_requests{{{SCOPE_NS},status=~"5.."}}',
                    f"nginx_ingress_controller_requests{{{SCOPE_NS}}}",
                ),
                0.001,
                BURST_SHARE,
                "ratio",
            ),
            *_t(
                "server_error_share",
                _ratio(
                    f'vllm:request_success_total{{{SCOPE_NS},finished_reason="abort"}}',
                    f"vllm:request_success_total{{{SCOPE_NS}}}",
                ),
                0.002,
                0.002,
                "ratio",
                0.1,
            ),
        ],
        build_gateway_burst,
        {"blast_radius": "everything", "load": "gateway_errors"},
        GroundTruth(
            "access",
            "everything",
            "gateway_errors",
            Suspect(
                "gateway",
                deployment="qwen-chat",
                pod=ingress_nginx.Ingress(NAMESPACE, "", "", "").controller_pod,
            ),
            "check_gateway",
        ),
        kube=_kube_plain(_plain_pods),
    )


def _scenario_kv_overload() -> Scenario:
    return _incident(
        "kv_overload",
        "vLLM behind ingress-nginx, 6 replicas: arrivals rise by 60 % and the KV cache "
        "fills (55 % to 99 %). Requests are preempted, the queue and TTFT grow on every "
        "replica; the GPUs are busy and healthy.",
        (KV_FULL_AT, KV_FULL_AT + 5 * 60),
        "qwen-chat",
        [
            *_t("kv_usage", f"avg(vllm:kv_cache_usage_perc{{{SCOPE_NS}}})", 0.5, 0.99, "ratio"),
            *_t(
                "qps",
                f"sum(rate(vllm:request_success_total{{{SCOPE_NS}}}[5m]))",
                QPS_PER_REPLICA * VLLM_REPLICAS,
                QPS_PER_REPLICA * VLLM_REPLICAS * 1.6,
                "req/s",
            ),
        ],
        build_kv_overload,
        {"blast_radius": "everything", "load": "arrivals"},
        GroundTruth(
            "runtime",
            "everything",
            "kv_cache_overload",
            Suspect("service", deployment="qwen-chat"),
            "scale_out",
        ),
        kube=_kube_plain(_plain_pods),
    )


def _scenario_pod_pending() -> Scenario:
    nodes, _, pending = _pending_pods()
    tainted = nodes[1].name
    return _incident(
        "pod_pending",
        "vLLM behind ingress-nginx, 6 replicas: arrivals rise as in kv_overload and the "
        "Deployment is scaled to 7 when the KV cache fills. The seventh replica stays "
        "Pending: gpu-node-a's three GPUs are all held and gpu-node-b, the only node with "
        "free GPUs, carries a taint (dedicated=batch:NoSchedule) the pod does not tolerate.",
        (PENDING_SCALE_AT, PENDING_SCALE_AT + 15 * 60 + 60),
        "qwen-chat",
        [
            *_t(
                "pending_pods",
                f'sum(kube_pod_status_phase{{{SCOPE_NS},phase="Pending"}})',
                0,
                1,
                "pods",
                0.0,
            ),
            *_t(
                "replica_shortfall",
                'kube_deployment_spec_replicas{deployment="qwen-chat"} - '
                'kube_deployment_status_replicas_available{deployment="qwen-chat"}',
                0,
                1,
                "replicas",
                0.0,
            ),
            *_t(
                "free_gpus_tainted_node",
                f'sum(kube_node_status_allocatable{{node="{tainted}",resource="nvidia_com_gpu"}}) - '
                f'sum(kube_pod_container_resource_requests{{node="{tainted}",'
                'resource="nvidia_com_gpu"})',
                GPUS_PER_NODE - VLLM_REPLICAS // 2,
                GPUS_PER_NODE - VLLM_REPLICAS // 2,
                "GPUs",
                0.0,
            ),
        ],
        build_pod_pending,
        {"blast_radius": "everything", "suspect": f"{pending.name} Pending, taint on {tainted}"},
        GroundTruth(
            "infrastructure",
            "everything",
            "unschedulable",
            Suspect("pod", deployment="qwen-chat", pod=pending.name, node=tainted),
        ),
        kube=_kube_pod_pending,
    )


# ---------------------------------------------------------------- the Kubernetes side

PODS_CREATED = START - 3 * 3600
"""The pods of a revision that serves the whole window were created before it began."""
POD_LOAD_S = ROLL_LOAD_S


def _template(pod: Pod) -> ko.Template:
    """The pod template of ``pod``'s revision (image of its version, one GPU)."""
    version = pod.labels.get(VERSION_LABEL, "")
    if pod.container == "sglang":
        image = f"lmsysorg/sglang:{version}"
        args: tuple[str, ...] = (f"--model-path=/models/{MODEL}", "--tp=1", "--port=8000")
    else:
        image = f"registry.example.internal/llm/qwen-chat-vllm:{version}"
        args = (
            f"--model=/models/{MODEL}",
            f"--served-model-name={MODEL}",
            "--gpu-memory-utilization=0.90",
            "--max-num-seqs=128",
            "--max-num-batched-tokens=8192",
            "--max-model-len=32768",
        )
    return ko.Template(image, args, gpus=1, memory="120Gi")


def _startup_log(pod: Pod, created: int) -> list[tuple[int, str]]:
    """The serving engine's start-up lines (its ready line ``POD_LOAD_S`` after creation)."""
    return [
        (created + 8, f"INFO: starting {pod.container} for {MODEL}"),
        (created + POD_LOAD_S - 2, "INFO: Waiting for application startup."),
        (created + POD_LOAD_S, "INFO: Application startup complete."),
    ]


def _world(
    nodes: list[Node],
    revisions: list[tuple[list[Pod], int]],
    *,
    alive: list[Pod],
    created: dict[str, int] | None = None,
    pod_extra: dict[str, dict[str, object]] | None = None,
    allocatable: dict[str, int] | None = None,
) -> ko.KubeWorld:
    """The Kubernetes side of an incident's service: the two nodes, the Deployment with one
    ReplicaSet per revision (``(its pods, when it was created)``, oldest first), the pods
    still there at "now" (``alive``, created at ``created`` or :data:`PODS_CREATED`) with
    their start-up logs; ``pod_extra`` adds :func:`~ko.pod_object` arguments per pod."""
    created = created or {}
    world = ko.KubeWorld()
    world.add(
        *(
            ko.node_object(
                n, created=START - 90 * 86400, allocatable_gpus=(allocatable or {}).get(n.name)
            )
            for n in nodes
        )
    )
    live = {p.replicaset for p in alive}
    world.add(
        *ko.revision_objects(
            alive[0].deployment,
            NAMESPACE,
            [
                (pods[0], _template(pods[0]), at, len(pods) if pods[0].replicaset in live else 0)
                for pods, at in revisions
            ],
            replicas=len(alive),
        )
    )
    for pod in alive:
        at = created.get(pod.name, PODS_CREATED)
        extra = dict((pod_extra or {}).get(pod.name, {}))
        ready = extra.pop("ready_at", at + POD_LOAD_S)
        world.add(ko.pod_object(pod, _template(pod), created=at, ready_at=ready, **extra))  # type: ignore[arg-type]
        world.log(pod, _startup_log(pod, at))
    return world


def _kube_plain(pods_of: Callable[[], tuple[list[Node], list[Pod]]]) -> Callable[[], ko.KubeWorld]:
    """A service whose one revision serves the whole window, nothing changed in Kubernetes."""

    def world() -> ko.KubeWorld:
        nodes, pods = pods_of()
        return _world(nodes, [(pods, PODS_CREATED - 600)], alive=pods)

    return world


def _kube_gpu_lost() -> ko.KubeWorld:
    """The victim's pod crash-loops (restarts, last terminated ``Error``, waiting in
    ``CrashLoopBackOff``, not ready) and the node's allocatable GPUs drop to 7, with the
    kubelet's back-off event and the engine's last words in the previous container's log."""
    nodes, pods = _lost_pods()
    victim = pods[LOST_REPLICA]
    restarts = _restart_times(LOST_GONE_AT + 20, NOW)
    world = _world(
        nodes,
        [(pods, PODS_CREATED - 600)],
        alive=pods,
        allocatable={"gpu-node-b": GPUS_PER_NODE - 1},
        pod_extra={
            victim.name: {
                "ready_at": None,
                "restarts": len(restarts),
                "last_terminated": ko.terminated("Error", 1, restarts[-1], restarts[-1] + 15),
                "waiting": (
                    "CrashLoopBackOff",
                    f"back-off 5m0s restarting failed container={victim.container} pod={victim.name}",
                ),
            }
        },
    )
    world.add(
        ko.event_object(
            ("Pod", NAMESPACE, victim.name),
            "BackOff",
            f"Back-off restarting failed container {victim.container} in pod {victim.name}",
            first=LOST_GONE_AT + 60,
            last=restarts[-1] + 20,
            count=len(restarts),
        )
    )
    world.log(
        victim,
        [
            (restarts[-1], f"INFO: starting {victim.container} for {MODEL}"),
            (
                restarts[-1] + 14,
                "RuntimeError: CUDA error: no CUDA-capable device is detected",
            ),
        ],
        previous=True,
    )
    return world


def _kube_bad_release() -> ko.KubeWorld:
    """Revision 4 → 5 rolled out inside the window: the old ReplicaSet scaled to 0, the new
    pods created one every 3 min, ready 90 s later (their logs say so)."""
    nodes, old, new = _release_pods()
    created = {p.name: _rollout_times(k)[0] for k, p in enumerate(new)}
    return _world(nodes, [(old, PODS_CREATED - 600), (new, ROLL_START)], alive=new, created=created)


def _kube_pod_pending() -> ko.KubeWorld:
    """Six replicas running since before the window, the Deployment scaled to 7 when the
    KV cache filled, the seventh pod Pending (``PodScheduled=False``, the scheduler's
    FailedScheduling event repeating since), ``gpu-node-b`` tainted."""
    nodes, pods, pending = _pending_pods()
    key, value, effect = PENDING_TAINT
    world = ko.KubeWorld()
    world.add(
        ko.node_object(nodes[0], created=START - 90 * 86400),
        ko.node_object(
            nodes[1],
            created=START - 90 * 86400,
            taints=[{"key": key, "value": value, "effect": effect}],
        ),
    )
    world.add(
        *ko.revision_objects(
            "qwen-chat",
            NAMESPACE,
            [(pods[0], _template(pods[0]), PODS_CREATED - 600, VLLM_REPLICAS + 1)],
            replicas=VLLM_REPLICAS + 1,
        )
    )
    for pod in pods:
        world.add(
            ko.pod_object(
                pod, _template(pod), created=PODS_CREATED, ready_at=PODS_CREATED + POD_LOAD_S
            )
        )
        world.log(pod, _startup_log(pod, PODS_CREATED))
    world.add(
        ko.pod_object(
            pending,
            _template(pending),
            created=PENDING_SCALE_AT,
            ready_at=None,
            pending_message=_pending_message(),
        ),
        ko.event_object(
            ("Pod", NAMESPACE, pending.name),
            "FailedScheduling",
            _pending_message(),
            first=PENDING_SCALE_AT,
            last=NOW - 30,
            count=(NOW - 30 - PENDING_SCALE_AT) // 300 + 1,
            component="default-scheduler",
        ),
    )
    return world


def scenarios() -> dict[str, Callable[[], Scenario]]:
    """Registry entries of the seven incidents."""
    return {
        "gpu_lost": _scenario_gpu_lost,
        "bad_release": _scenario_bad_release,
        "sglang_long_prompts": _scenario_sglang_long_prompts,
        "throttled_gpu": _scenario_throttled_gpu,
        "gateway_burst": _scenario_gateway_burst,
        "kv_overload": _scenario_kv_overload,
        "pod_pending": _scenario_pod_pending,
    }
