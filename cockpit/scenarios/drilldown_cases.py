"""Scenarios for the SLI drilldown (steps C, D, E, F): each a short history (3 h; the last
30 minutes are the incident) of a 4-replica service on 2 nodes × 2 GPUs, written in one
stack's own metric names.

- ``thermal_replica``: one replica is slow because its GPU throttles thermally
  (HW + SW thermal slowdown, SM clock 1980→1150 MHz, 66→89 °C); the others are healthy.
- ``long_prompts``: a new client sends long prompts (prompt P95 ~1.5 k → ~9 k tokens);
  TTFT P99 rises while TPOT stays flat and the GPUs stay healthy.
- ``gateway_5xx``: the gateway returns a burst of 502/503 (0.1 % → 6 %) while the vLLM
  servers are healthy.
- ``half_missing``: a vLLM without its TTFT/ITL/queue histograms, KV-cache and token
  counters, a dcgm-exporter with only utilization and memory, no gateway and no
  kube-state-metrics; every replica's queue and latency grow.
- ``sglang_stack`` (SGLang behind Envoy, node-exporter), ``tgi_stack`` (TGI with
  dcgm-exporter's lowercase ``hostname``), ``triton_stack`` (Triton behind ingress-nginx):
  every replica queues (a shared overload) in each stack's own names.

There is no data one day earlier, so the one-day baseline falls back to the quiet window
before the incident (the handbook's "else the quiet hours before the impact").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from cockpit.scenarios import signals as sg
from cockpit.scenarios.base import Scenario, Target
from cockpit.scenarios.histogram import exact_shape, lognormal_shape
from cockpit.scenarios.metricset import MetricSet
from cockpit.scenarios.stacks import (
    dcgm,
    envoy,
    ingress_nginx,
    kube_state,
    node_exporter,
    sglang,
    tgi,
    triton,
    vllm,
    vllm_lengths,
)
from cockpit.scenarios.stacks.replica import ReplicaLoad
from cockpit.scenarios.timeaxis import TimeAxis
from cockpit.scenarios.topology import Gpu, Node, Pod, make_nodes, place_pods

NOW = int(datetime(2026, 11, 28, 20, 0, tzinfo=UTC).timestamp())
HISTORY_S = 3 * 3600
INCIDENT_START = NOW - 30 * 60
RAMP_S = 120
NAMESPACE = "llm"
MODEL = "llama-3.1-70b"
GPU_MODEL = "NVIDIA H100 80GB HBM3"
REPLICAS = 4
QPS_PER_REPLICA = 20.0

LENGTH_BUCKETS = vllm_lengths.LENGTH_BUCKETS


@dataclass
class Case:
    """How one scenario differs from a healthy service.

    Attributes:
        stack: ``vllm``, ``sglang``, ``tgi`` or ``triton``.
        gateway: ``ingress``, ``envoy`` or ``""``.
        slow_replica: Index of the replica whose GPU throttles (``None``: none).
        long_prompts: A long-prompt client appears at the incident.
        gateway_5xx: The gateway answers 502/503 for 6 % of requests.
        overload: Every replica queues (shared overload).
        partial: Emit only half of the metrics (``half_missing``).
        hostname_label: dcgm-exporter's node label spelling.
        node_exporter: Emit node-exporter series.
        kube_state: Emit kube-state-metrics series.
        dcgm: Emit dcgm-exporter series.
    """

    name: str
    stack: str = "vllm"
    gateway: str = "ingress"
    slow_replica: int | None = None
    long_prompts: bool = False
    gateway_5xx: bool = False
    overload: bool = False
    partial: bool = False
    hostname_label: str = "Hostname"
    node_exporter: bool = False
    kube_state: bool = True
    dcgm: bool = True
    truth: dict[str, str] = field(default_factory=dict)


def _deployment(case: Case) -> str:
    return f"{case.stack}-llama"


def _topology(case: Case) -> tuple[list[Node], list[Pod]]:
    nodes = make_nodes("gpu-node-b", 2, 2, GPU_MODEL, subnet="10.0.2")
    pods = place_pods(
        deployment=_deployment(case),
        namespace=NAMESPACE,
        nodes=nodes,
        replicas=REPLICAS,
        gpus_per_pod=1,
        revision=3,
        container=case.stack,
    )
    return nodes, pods


def _replica(axis: TimeAxis, case: Case, i: int, sev: sg.Signal) -> ReplicaLoad:
    """One replica's behaviour: healthy, or changed by the case at severity ``sev``."""
    calm = [1 - x for x in sev]
    slow = case.slow_replica == i
    hit = sev if (slow or case.overload) else sg.const(axis, 0.0)
    quiet = [1 - x for x in hit]
    qps = sg.around(sg.const(axis, QPS_PER_REPLICA), sg.noise(axis, f"q{case.name}{i}", 0.01))
    if slow:
        qps = sg.lerp(qps, QPS_PER_REPLICA * 0.8, sev)
    fail_share = 0.002
    ok = sg.scale(qps, 1 - fail_share)
    failed = sg.scale(qps, fail_share)
    e2e_ok = lognormal_shape(vllm.E2E_BUCKETS, 1.2, 3.5)
    e2e_bad = lognormal_shape(vllm.E2E_BUCKETS, 3.8, 12.0)
    ttft_ok = exact_shape(vllm.TTFT_BUCKETS, {0.5: 0.03, 0.95: 0.07, 0.99: 0.09})
    ttft_bad = exact_shape(vllm.TTFT_BUCKETS, {0.5: 0.12, 0.95: 0.45, 0.99: 0.8})
    ttft_long = exact_shape(vllm.TTFT_BUCKETS, {0.5: 0.035, 0.95: 0.55, 0.99: 0.9})
    itl_ok = lognormal_shape(vllm.ITL_BUCKETS, 0.018, 0.04)
    itl_bad = lognormal_shape(vllm.ITL_BUCKETS, 0.06, 0.15)
    q_ok = lognormal_shape(vllm.QUEUE_BUCKETS, 0.004, 0.03)
    q_bad = lognormal_shape(vllm.QUEUE_BUCKETS, 0.6, 2.5)
    p_ok = lognormal_shape(LENGTH_BUCKETS, 420, 1800)
    p_long = lognormal_shape(LENGTH_BUCKETS, 6000, 14000)
    g_ok = lognormal_shape(LENGTH_BUCKETS, 160, 700)
    prompt_tokens = sg.const(axis, 480.0)
    ttft = [(ttft_ok, quiet), (ttft_bad, hit)]
    prompt_mix = [(p_ok, sg.const(axis, 1.0))]
    if case.long_prompts:
        long_w = sg.scale(sev, 0.3)
        prompt_mix = [(p_ok, [1 - w for w in long_w]), (p_long, long_w)]
        prompt_tokens = sg.lerp(prompt_tokens, 0.7 * 480 + 0.3 * 6600, sev)
        ttft = [(ttft_ok, calm), (ttft_long, sev)]
    waiting = sg.lerp(sg.const(axis, 3.0), 45.0, hit)
    if case.long_prompts:
        waiting = sg.lerp(sg.const(axis, 3.0), 5.0, sev)
    return ReplicaLoad(
        ok=ok,
        failed=failed,
        prompt_tokens=prompt_tokens,
        gen_tokens=sg.const(axis, 180.0),
        running=sg.around(
            sg.lerp(sg.const(axis, 24.0), 10.0, hit), sg.noise(axis, f"r{case.name}{i}", 0.02)
        ),
        waiting=sg.around(waiting, sg.noise(axis, f"w{case.name}{i}", 0.02)),
        kv_usage=sg.lerp(
            sg.const(axis, 0.45),
            0.6 if case.long_prompts else 0.9,
            hit if not case.long_prompts else sev,
        ),
        e2e=[(e2e_ok, quiet), (e2e_bad, hit)],
        ttft=ttft,
        itl=[(itl_ok, quiet), (itl_bad, hit)],
        queue=[(q_ok, quiet), (q_bad, hit)],
        prompt_len=prompt_mix,
        gen_len=[(g_ok, sg.const(axis, 1.0))],
    )


def _emit_vllm(ms: MetricSet, case: Case, pod: Pod, r: ReplicaLoad) -> None:
    finished = {
        "stop": sg.scale(r.ok, 0.9),
        "length": sg.scale(r.ok, 0.1),
        "error": r.failed,
    }
    sig = vllm.VllmSignals(
        finished=finished,
        prompt_tokens_per_req=r.prompt_tokens,
        gen_tokens_per_req=r.gen_tokens,
        running=r.running,
        waiting=r.waiting,
        kv_cache_usage=r.kv_usage,
        preemptions=sg.const(ms.axis, 0.0),
        e2e=r.e2e,
        ttft=r.ttft,
        itl=r.itl,
        queue=r.queue,
    )
    if not case.partial:
        vllm.emit(ms, pod, MODEL, sig)
        vllm_lengths.emit(ms, pod, MODEL, r)
        return
    # Half the metrics: only the e2e histogram, queue/running gauges and the success counter.
    lab = {**vllm.scrape_labels(pod, "vllm", vllm.METRICS_PORT), "model_name": MODEL, "engine": "0"}
    total = r.total()
    for reason, rate in finished.items():
        ms.counter(
            "vllm:request_success_total", {**lab, "finished_reason": reason}, rate, start=1000.0
        )
    ms.gauge("vllm:num_requests_running", lab, r.running)
    ms.gauge("vllm:num_requests_waiting", lab, r.waiting)
    ms.histogram("vllm:e2e_request_latency_seconds", lab, total, r.e2e)


def _gpu_signals(
    axis: TimeAxis, case: Case, slow: bool, sev: sg.Signal, seed: str
) -> dcgm.GpuSignals:
    hit = sev if slow else sg.const(axis, 0.0)
    temp = sg.lerp(sg.const(axis, 66.0), 89.0, hit)
    clock = sg.lerp(sg.const(axis, 1980.0), 1150.0, hit)
    util_level = 72.0
    if case.overload:
        util_level = 72.0  # overload shows in the queue; the GPUs stay in their usual range
    util = sg.clamp(sg.add(sg.const(axis, util_level), sg.noise(axis, "u" + seed, 1.0)), 0, 100)
    if case.long_prompts:
        util = sg.lerp(util, 80.0, sev)
    reasons = [float(dcgm.HW_THERMAL | dcgm.SW_THERMAL) if h > 0.5 else 0.0 for h in hit]
    return dcgm.GpuSignals(
        util=[round(u) for u in util],
        temp=[round(t) for t in sg.add(temp, sg.noise(axis, "t" + seed, 0.4))],
        mem_temp=[round(t - 4) for t in temp],
        power=sg.lerp(sg.const(axis, 520.0), 380.0, hit),
        sm_clock=[round(c / 15) * 15 for c in clock],
        mem_clock=sg.const(axis, 2619.0),
        clock_reasons=reasons,
        fb_used=sg.const(axis, 74000.0),
        thermal_violation=sg.scale(hit, 0.6),
        power_violation=sg.const(axis, 0.0),
        gr_active=[u / 100 * 0.93 for u in util],
        tensor_active=sg.const(axis, 0.35),
        dram_active=sg.const(axis, 0.45),
    )


def _emit_dcgm_partial(
    ms: MetricSet, node: Node, gpu: Gpu, pod: Pod | None, sig: dcgm.GpuSignals
) -> None:
    lab = {
        **dcgm.gpu_labels(gpu, pod, driver=node.driver_version),
        "job": "dcgm-exporter",
        "instance": f"{node.ip}:9400",
    }
    ms.gauge("DCGM_FI_DEV_GPU_UTIL", lab, sig.util, "GPU utilization (in %).")
    ms.gauge("DCGM_FI_DEV_FB_USED", lab, sig.fb_used, "Framebuffer memory used (in MiB).")


def build_case(case: Case) -> MetricSet:
    """The series of one case."""
    axis = TimeAxis(start=NOW - HISTORY_S, end=NOW, fine_from=NOW - 3600)
    ms = MetricSet(axis)
    sev = sg.step_ramp(axis, INCIDENT_START, RAMP_S)
    nodes, pods = _topology(case)
    loads = [_replica(axis, case, i, sev) for i in range(len(pods))]
    for i, (pod, r) in enumerate(zip(pods, loads, strict=True)):
        if case.stack == "vllm":
            _emit_vllm(ms, case, pod, r)
        elif case.stack == "sglang":
            sglang.emit(ms, pod, MODEL, r)
        elif case.stack == "tgi":
            tgi.emit(ms, pod, r)
        elif case.stack == "triton":
            gsig = _gpu_signals(axis, case, case.slow_replica == i, sev, pod.gpus[0].uuid)
            triton.emit(ms, pod, MODEL, r, gsig.util)
    if case.dcgm:
        pod_of = {g.uuid: p for p in pods for g in p.gpus}
        slow_uuid = pods[case.slow_replica].gpus[0].uuid if case.slow_replica is not None else ""
        for n_i, node in enumerate(nodes):
            for gpu in node.gpus:
                gsig = _gpu_signals(axis, case, gpu.uuid == slow_uuid, sev, gpu.uuid)
                if case.partial:
                    _emit_dcgm_partial(ms, node, gpu, pod_of.get(gpu.uuid), gsig)
                else:
                    dcgm.emit(
                        ms,
                        node,
                        gpu,
                        pod_of.get(gpu.uuid),
                        gsig,
                        exporter_ip=f"10.244.{n_i + 1}.5",
                        hostname_label=case.hostname_label,
                    )
    total = [sum(r.total()[k] for r in loads) for k in range(len(axis))]
    calm = [1 - x for x in sev]
    gw_ok = lognormal_shape(ingress_nginx.DEFAULT_BUCKETS, 1.2, 4.0)
    gw_bad = lognormal_shape(ingress_nginx.DEFAULT_BUCKETS, 1.6, 9.0)
    slow_share = 0.0
    if case.slow_replica is not None or case.long_prompts:
        slow_share = 0.35
    if case.overload:
        slow_share = 1.0
    gw_bad_w = sg.scale(sev, slow_share)
    gw_mix = [(gw_ok, [1 - w for w in gw_bad_w]), (gw_bad, gw_bad_w)]
    if case.gateway == "ingress":
        err_share = (
            sg.lerp(sg.const(axis, 0.001), 0.06, sev) if case.gateway_5xx else sg.const(axis, 0.001)
        )
        by_status = {
            "200": [t * (1 - e) for t, e in zip(total, err_share, strict=True)],
            "502": [t * e * 0.5 for t, e in zip(total, err_share, strict=True)],
            "503": [t * e * 0.5 for t, e in zip(total, err_share, strict=True)],
        }
        fast = lognormal_shape(ingress_nginx.DEFAULT_BUCKETS, 0.004, 0.01)
        lat = {st: gw_mix for st in by_status}
        if case.gateway_5xx:
            lat["502"] = lat["503"] = [(fast, sg.const(axis, 1.0))]
        ingress_nginx.emit(
            ms,
            ingress_nginx.Ingress(
                NAMESPACE,
                f"{case.stack}-gw",
                _deployment(case),
                "llm.example.internal",
                "/v1/completions",
            ),
            ingress_nginx.IngressSignals(by_status, lat),
        )
    elif case.gateway == "envoy":
        ms_shape_ok = lognormal_shape(envoy.RQ_TIME_BUCKETS, 1200, 4000)
        ms_shape_bad = lognormal_shape(envoy.RQ_TIME_BUCKETS, 1600, 9000)
        envoy.emit(
            ms,
            f"{NAMESPACE}/{_deployment(case)}",
            {"2": [t * 0.999 for t in total], "5": [t * 0.001 for t in total]},
            [(ms_shape_ok, [1 - w for w in gw_bad_w]), (ms_shape_bad, gw_bad_w)],
        )
    del calm
    if case.kube_state and not case.partial:
        kube_state.emit_pods(ms, pods)
        kube_state.emit_replicasets(ms, pods)
        kube_state.emit_nodes(ms, nodes)
    if case.node_exporter:
        for node in nodes:
            node_exporter.emit(ms, node, sg.const(axis, 0.25), sg.const(axis, 0.001))
    return ms


CASES: dict[str, Case] = {
    "thermal_replica": Case(
        "thermal_replica",
        slow_replica=2,
        truth={
            "blast_radius": "single_gpu",
            "suspect": "the GPU of replica 2",
            "cohort_outlier": "hardware.temp",
        },
    ),
    "long_prompts": Case(
        "long_prompts",
        long_prompts=True,
        truth={"blast_radius": "everything", "load": "long_prompts"},
    ),
    "gateway_5xx": Case(
        "gateway_5xx",
        gateway_5xx=True,
        truth={"blast_radius": "everything", "load": "gateway_errors"},
    ),
    "half_missing": Case(
        "half_missing",
        overload=True,
        partial=True,
        gateway="",
        truth={"blast_radius": "everything", "missing": "vllm:time_to_first_token_seconds_bucket"},
    ),
    "sglang_stack": Case(
        "sglang_stack",
        stack="sglang",
        gateway="envoy",
        overload=True,
        node_exporter=True,
        truth={"blast_radius": "everything"},
    ),
    "tgi_stack": Case(
        "tgi_stack",
        stack="tgi",
        overload=True,
        hostname_label="hostname",
        gateway="",
        truth={"blast_radius": "everything"},
    ),
    "triton_stack": Case(
        "triton_stack",
        stack="triton",
        overload=True,
        dcgm=False,
        truth={"blast_radius": "everything"},
    ),
}
"""Every drilldown case by scenario name."""


_STACK_NAMES = {"vllm": "vLLM", "sglang": "SGLang", "tgi": "TGI", "triton": "Triton"}
_GATEWAY_NAMES = {"ingress": " behind ingress-nginx", "envoy": " behind Envoy", "": " (no gateway)"}


def _story(case: Case) -> str:
    """One sentence: the stack and what goes wrong at the incident."""
    what = [
        text
        for on, text in (
            (
                case.slow_replica is not None,
                f"the GPU of replica {case.slow_replica} throttles thermally",
            ),
            (case.long_prompts, "a long-prompt client arrives"),
            (case.gateway_5xx, "the gateway answers 502/503 for 6 % of requests"),
            (case.overload, "every replica queues (shared overload)"),
            (case.partial, "half of the metrics are not exported"),
            (not case.dcgm, "no dcgm-exporter"),
        )
        if on
    ]
    return (
        f"{_STACK_NAMES.get(case.stack, case.stack)}"
        f"{_GATEWAY_NAMES.get(case.gateway, ' behind ' + case.gateway)}: "
        f"{'; '.join(what) or 'healthy'}"
    )


def _factory(case: Case) -> Callable[[], Scenario]:
    def make() -> Scenario:
        return Scenario(
            name=case.name,
            description=_story(case),
            now=NOW,
            start=NOW - HISTORY_S,
            incident_start=INCIDENT_START,
            detected_at=None,
            scope={
                "namespace": NAMESPACE,
                "deployment": _deployment(case),
                "selector": f"app={_deployment(case)}",
                "model": MODEL,
            },
            targets=[
                Target(
                    "replicas_reporting",
                    'count(count by (pod) ({__name__=~"vllm:num_requests_running|sglang:num_running_reqs|tgi_queue_size|nv_inference_pending_request_count"}))',
                    NOW,
                    float(REPLICAS),
                    "pods",
                    0.0,
                )
            ],
            build=lambda: build_case(case),
            truth=dict(case.truth),
        )

    return make


def scenarios() -> dict[str, Callable[[], Scenario]]:
    """Registry entries of the drilldown cases."""
    return {name: _factory(case) for name, case in CASES.items()}
