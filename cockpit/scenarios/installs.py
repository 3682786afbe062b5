"""Three installs as real clusters scrape them, each with what a correct reading concludes.

The names, types and label sets follow the upstream exporters (dcgm-exporter 4.5.3-4.8.2
``etc/default-counters.csv`` and ``deployment/values.yaml``; ingress-nginx controller-v1.15.1
``internal/ingress/metric/collectors/socket.go`` and ``charts/ingress-nginx/values.yaml``;
TGI v3.3.7 ``router/src/server.rs``, ``router/src/infer/mod.rs``; SGLang
``srt/observability/metrics_collector.py``; vLLM ``vllm/v1/metrics/loggers.py``;
kube-state-metrics ``docs/metrics/workload/pod-metrics.md``). What differs between them is
how Prometheus scraped them (:meth:`MetricSet.scraped`):

- ``mixed_fleet``: vLLM (``vllm-chat``), SGLang (``sglang-chat``) and TGI (``tgi-chat``) side
  by side in namespace ``llm``, two pods each, PodMonitor labels. TGI's demand surges ×1.8
  over the last 30 minutes: a quarter of its requests fail ``err="overloaded"`` and its
  queue holds ~240 requests; vLLM and SGLang stay healthy.
- ``exported_labels``: a vLLM service (``qwen-chat``) whose GPUs are scraped through the
  dcgm-exporter chart's ServiceMonitor and whose Ingress through ingress-nginx's, both
  with ``honorLabels: false``: the workload's ``namespace``/``pod``/``container`` arrive as
  ``exported_*`` and ``namespace``/``pod`` are the exporter's. One GPU heats up (67 →
  90 °C, SM clock 1980 → 1200 MHz) and its replica slows.
- ``static_scrape``: SGLang scraped by ``static_configs`` (as in SGLang's docs): its series
  carry ``job`` and ``instance`` (``pod IP:30000``) only. ``sglang-chat`` in ``llm`` gets
  ×1.8 the requests and builds a queue (1 → 40 per pod, TTFT up) while ``sglang-batch`` in ``batch``, same engine and job,
  stays healthy; kube-state-metrics' ``kube_pod_info{pod_ip}`` tells them apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from cockpit.scenarios import incidents as inc
from cockpit.scenarios import signals as sg
from cockpit.scenarios.base import GroundTruth, Scenario, Suspect, Target
from cockpit.scenarios.histogram import exact_shape, lognormal_shape
from cockpit.scenarios.metricset import MetricSet
from cockpit.scenarios.stacks import dcgm, ingress_nginx, kube_state, scrape, sglang, tgi, vllm
from cockpit.scenarios.stacks.replica import ReplicaLoad
from cockpit.scenarios.timeaxis import TimeAxis
from cockpit.scenarios.topology import Node, Pod

GENERATOR_DEPENDS = ("incidents.py",)
"""The topology, loads and GPU pictures come from :mod:`.incidents`: its source is part of
these scenarios' cache key (:func:`cockpit.scenarios.promserver.generator_fingerprint`)."""
NOW = inc.NOW
HISTORY_S = 3 * 3600
START = NOW - HISTORY_S
FINE_FROM = NOW - 100 * 60
IMPACT_AT = NOW - 30 * 60
NAMESPACE = inc.NAMESPACE
SGLANG_MODEL = "Qwen/Qwen3-32B"
TGI_QPS = 4.0
SURGE = 1.8
OVERLOADED_SHARE = 0.25
TGI_QUEUE = 120.0
STATIC_QUEUE = 40.0


def _axis() -> TimeAxis:
    return TimeAxis(start=START, end=NOW, fine_from=FINE_FROM)


def _one(axis: TimeAxis) -> sg.Signal:
    return sg.const(axis, 1.0)


def _dcgm_target(node_index: int) -> dict[str, str]:
    """What the dcgm-exporter chart's ServiceMonitor adds to every series (its own pod)."""
    return {
        "namespace": "gpu-operator",
        "pod": f"nvidia-dcgm-exporter-{'xk2q9' if node_index else 'b7mzt'}",
        "container": "nvidia-dcgm-exporter",
        "service": "nvidia-dcgm-exporter",
        "endpoint": "gpu-metrics",
        "job": "nvidia-dcgm-exporter",
        "instance": f"10.244.{node_index + 1}.5:9400",
    }


INGRESS_TARGET = {
    "namespace": "ingress-nginx",
    "pod": "ingress-nginx-controller-5c8d66c76d-q4t7x",
    "container": "controller",
    "service": "ingress-nginx-controller-metrics",
    "endpoint": "metrics",
    "job": "ingress-nginx-controller-metrics",
    "instance": "10.244.0.9:10254",
}
"""What ingress-nginx's ServiceMonitor adds (``honorLabels`` left commented: false)."""


def _gpus(
    ms: MetricSet,
    nodes: list[Node],
    pods: list[Pod],
    loads: list[ReplicaLoad],
    hot: dict[int, inc.Gpu] | None = None,
    *,
    exported: bool = False,
) -> None:
    """Every GPU's DCGM series: a pod's GPU from its load (``hot`` overrides by replica),
    the rest idle; through the chart's ServiceMonitor when ``exported``."""
    axis = ms.axis
    held = {p.gpus[0].uuid: (i, p) for i, p in enumerate(pods)}
    for n_i, node in enumerate(nodes):
        for gpu in node.gpus:
            i, pod = held.get(gpu.uuid, (-1, None))
            pic = (hot or {}).get(i) or inc.Gpu(
                util=inc._util_of(loads[i]) if pod else sg.const(axis, 0.0)
            )
            sig = inc._gpu_signals(axis, gpu.uuid, pic)
            if exported:
                with ms.scraped(_dcgm_target(n_i), drop=("job", "instance")):
                    dcgm.emit(ms, node, gpu, pod, sig, exporter_ip=f"10.244.{n_i + 1}.5")
            else:
                dcgm.emit(ms, node, gpu, pod, sig, exporter_ip=f"10.244.{n_i + 1}.5")


def _surge(axis: TimeAxis) -> sg.Signal:
    return sg.step_ramp(axis, IMPACT_AT, 300)


def _install(
    name: str,
    description: str,
    deployment: str,
    targets: list[Target],
    build: Callable[[], MetricSet],
    truth: GroundTruth,
) -> Scenario:
    """An install's scenario: its impact starts at :data:`IMPACT_AT`, ``deployment`` in
    namespace ``llm`` is the service in scope."""
    return Scenario(
        name=name,
        description=description,
        now=NOW,
        start=START,
        incident_start=IMPACT_AT,
        detected_at=None,
        scope={"namespace": NAMESPACE, "deployment": deployment, "selector": f"app={deployment}"},
        targets=targets,
        build=build,
        ground_truth=truth,
    )


def _capacity(cause: str, deployment: str) -> GroundTruth:
    """A whole serving service short of capacity: scale it out."""
    return GroundTruth(
        primary_layer="serving",
        scope="everything",
        cause=cause,
        suspect=Suspect("service", deployment=deployment),
        mitigation="scale_out",
    )


# ---------------------------------------------------------------- mixed_fleet


def _fleet() -> tuple[list[Node], dict[str, list[Pod]]]:
    nodes = inc._nodes()
    return nodes, {
        "vllm": inc._pods("vllm-chat", nodes, 2, revision=3, version="v0.11.2"),
        "sglang": inc._pods(
            "sglang-chat", nodes, 2, revision=2, version="v0.5.4", first_gpu=1, container="sglang"
        ),
        "tgi": inc._pods(
            "tgi-chat", nodes, 2, revision=5, version="3.3.7", first_gpu=2, container="tgi"
        ),
    }


def _tgi_load(axis: TimeAxis, pod: Pod) -> ReplicaLoad:
    """TGI under a ×1.8 demand surge: a quarter of the arrivals are refused
    ``overloaded``, the queue and the latencies grow."""
    sev = _surge(axis)
    arrivals = sg.lerp(sg.const(axis, TGI_QPS), TGI_QPS * SURGE, sev)
    r = inc._healthy(axis, pod.name, sg.const(axis, TGI_QPS))
    share = sg.lerp(sg.const(axis, 0.005), OVERLOADED_SHARE, sev)
    r.ok = [a * (1 - s) for a, s in zip(arrivals, share, strict=True)]
    r.failed = [a * s for a, s in zip(arrivals, share, strict=True)]
    r.waiting = sg.around(
        sg.lerp(sg.const(axis, 2.0), TGI_QUEUE, sev), sg.noise(axis, pod.name, 0.03)
    )
    r.running = sg.lerp(sg.const(axis, 24.0), 54.0, sev)
    queue_bad = lognormal_shape(vllm.QUEUE_BUCKETS, 6.0, 14.0)
    e2e_bad = lognormal_shape(vllm.E2E_BUCKETS, 15.8, 40.0)
    itl_bad = lognormal_shape(vllm.ITL_BUCKETS, 0.038, 0.07)
    r.queue = inc._blend(inc.QUEUE_OK, queue_bad, sev)
    r.e2e = inc._blend(inc.E2E_OK, e2e_bad, sev)
    r.itl = inc._blend(inc.ITL_OK, itl_bad, sev)
    return r


def build_mixed_fleet() -> MetricSet:
    """The series of ``mixed_fleet``."""
    axis = _axis()
    ms = MetricSet(axis)
    nodes, fleet = _fleet()
    pods: list[Pod] = []
    loads: list[ReplicaLoad] = []
    for pod in fleet["vllm"]:
        r = inc._healthy(axis, pod.name, sg.const(axis, inc.QPS_PER_REPLICA))
        inc._emit_vllm(ms, pod, r, sg.const(axis, 0.04))
        scrape.emit_up(ms, vllm.scrape_labels(pod, "vllm", vllm.METRICS_PORT), _one(axis))
        pods.append(pod)
        loads.append(r)
    for pod in fleet["sglang"]:
        r = inc._healthy(axis, pod.name, sg.const(axis, inc.QPS_PER_REPLICA))
        sglang.emit(ms, pod, SGLANG_MODEL, r)
        scrape.emit_up(ms, vllm.scrape_labels(pod, "sglang", sglang.PORT), _one(axis))
        pods.append(pod)
        loads.append(r)
    for pod in fleet["tgi"]:
        r = _tgi_load(axis, pod)
        tgi.emit(ms, pod, r, err="overloaded")
        scrape.emit_up(ms, vllm.scrape_labels(pod, "tgi", tgi.PORT), _one(axis))
        pods.append(pod)
        loads.append(r)
    _gpus(ms, nodes, pods, loads)
    inc._kube(ms, nodes, pods)
    return ms


def _scenario_mixed_fleet() -> Scenario:
    ns = f'namespace="{NAMESPACE}"'
    tgi_err = (
        f"sum(rate(tgi_request_failure{{{ns}}}[5m])) / sum(rate(tgi_request_count{{{ns}}}[5m]))"
    )
    return _install(
        "mixed_fleet",
        (
            "vLLM, SGLang and TGI side by side in one namespace (two pods each); TGI's "
            "demand surges x1.8: 25 % of its requests fail overloaded and ~240 queue, "
            "vLLM and SGLang stay healthy."
        ),
        "tgi-chat",
        [
            Target("tgi_error_ratio", tgi_err, NOW, OVERLOADED_SHARE, "ratio", 0.05),
            Target(
                "tgi_queue", f"sum(tgi_queue_size{{{ns}}})", NOW, 2 * TGI_QUEUE, "requests", 0.1
            ),
            Target(
                "vllm_queue", f"sum(vllm:num_requests_waiting{{{ns}}})", NOW, 2.0, "requests", 0.5
            ),
        ],
        build_mixed_fleet,
        _capacity("demand_surge", "tgi-chat"),
    )


# ---------------------------------------------------------------- exported_labels

HOT_REPLICA = 1


def build_exported_labels() -> MetricSet:
    """The series of ``exported_labels``."""
    axis = _axis()
    ms = MetricSet(axis)
    nodes = inc._nodes()
    pods = inc._pods("qwen-chat", nodes, 4, revision=7, version="v1.8.2")
    sev = _surge(axis)
    itl_slow = lognormal_shape(vllm.ITL_BUCKETS, 0.045, 0.11)
    loads = []
    for i, pod in enumerate(pods):
        r = inc._healthy(axis, pod.name, sg.const(axis, inc.QPS_PER_REPLICA))
        if i == HOT_REPLICA:
            r.itl = inc._blend(inc.ITL_OK, itl_slow, sev)
        inc._emit_vllm(ms, pod, r, sg.const(axis, 0.04))
        scrape.emit_up(ms, vllm.scrape_labels(pod, "vllm", vllm.METRICS_PORT), _one(axis))
        loads.append(r)
    hot = [1.0 if x > 0.5 else 0.0 for x in sev]
    heated = inc.Gpu(
        util=inc._util_of(loads[HOT_REPLICA]),
        temp=sg.lerp(sg.const(axis, 67.0), 90.0, sev),
        sm_clock=sg.lerp(sg.const(axis, 1980.0), 1200.0, sev),
        power=sg.lerp(sg.const(axis, 520.0), 390.0, sev),
        reasons=[float(dcgm.HW_THERMAL | dcgm.SW_THERMAL) * h for h in hot],
        thermal=sg.scale(sev, 0.65),
    )
    _gpus(ms, nodes, pods, loads, {HOT_REPLICA: heated}, exported=True)
    inc._kube(ms, nodes, pods)
    served = inc._total(loads, axis)
    with ms.scraped(INGRESS_TARGET, drop=("job", "instance")):
        ingress_nginx.emit(
            ms,
            ingress_nginx.Ingress(NAMESPACE, "qwen-chat-gw", "qwen-chat", "llm.example.internal"),
            inc.gateway_signals(served, loads),
        )
    return ms


def _scenario_exported_labels() -> Scenario:
    hot = inc._pods("qwen-chat", inc._nodes(), 4, revision=7, version="v1.8.2")[HOT_REPLICA]
    gpu = hot.gpus[0]
    return _install(
        "exported_labels",
        (
            "A vLLM service whose GPUs and Ingress are scraped through the dcgm-exporter and "
            "ingress-nginx charts' ServiceMonitors (honorLabels false): the workload's "
            "namespace/pod arrive as exported_namespace/exported_pod. One GPU heats to 90 C "
            "and throttles."
        ),
        "qwen-chat",
        [
            Target(
                "hot_gpu_temp",
                f'max(DCGM_FI_DEV_GPU_TEMP{{exported_namespace="{NAMESPACE}"}})',
                NOW,
                90.0,
                "°C",
                0.03,
            ),
            Target(
                "dcgm_in_workload_namespace",
                f'count(DCGM_FI_DEV_GPU_TEMP{{namespace="{NAMESPACE}"}}) or vector(0)',
                NOW,
                0.0,
                "series",
                0.0,
            ),
            Target(
                "ingress_qps",
                f'sum(rate(nginx_ingress_controller_requests{{exported_namespace="{NAMESPACE}"}}[5m]))',
                NOW,
                4 * inc.QPS_PER_REPLICA,
                "req/s",
                0.05,
            ),
        ],
        build_exported_labels,
        GroundTruth(
            primary_layer="hardware",
            scope="single_gpu",
            cause="thermal_throttle",
            suspect=Suspect(
                "gpu",
                deployment="qwen-chat",
                pod=hot.name,
                node=hot.node,
                gpu_index=gpu.index,
                uuid=gpu.uuid,
            ),
            mitigation="cordon_and_delete_pod",
        ),
    )


# ---------------------------------------------------------------- static_scrape

STATIC_TARGET_DROP = ("namespace", "pod", "container", "job", "instance")


def _static_pods() -> tuple[list[Node], list[Pod], list[Pod]]:
    nodes = inc._nodes()
    chat = inc._pods("sglang-chat", nodes, 2, revision=2, version="v0.5.4", container="sglang")
    batch = [
        replace(p, namespace="batch", ip="10.245." + p.ip.split(".", 2)[2])
        for p in inc._pods(
            "sglang-batch", nodes, 2, revision=1, version="v0.5.4", first_gpu=2, container="sglang"
        )
    ]
    return nodes, chat, batch


def build_static_scrape() -> MetricSet:
    """The series of ``static_scrape``."""
    axis = _axis()
    ms = MetricSet(axis)
    nodes, chat, batch = _static_pods()
    sev = _surge(axis)
    ttft_bad = exact_shape(vllm.TTFT_BUCKETS, {0.5: 0.9, 0.95: 6.0, 0.99: 9.0})
    queue_bad = lognormal_shape(vllm.QUEUE_BUCKETS, 2.0, 8.0)
    loads = []
    surge = sg.lerp(sg.const(axis, inc.QPS_PER_REPLICA), inc.QPS_PER_REPLICA * SURGE, sev)
    for pod in chat + batch:
        r = inc._healthy(axis, pod.name, sg.const(axis, inc.QPS_PER_REPLICA))
        if pod in chat:
            r.ok = sg.around(surge, sg.noise(axis, "qs" + pod.name, 0.02))
            r.waiting = sg.around(
                sg.lerp(r.waiting, STATIC_QUEUE, sev), sg.noise(axis, "ws" + pod.name, 0.05)
            )
            r.ttft = inc._blend(inc.TTFT_OK, ttft_bad, sev)
            r.queue = inc._blend(inc.QUEUE_OK, queue_bad, sev)
        target = {"job": "sglang", "instance": f"{pod.ip}:{sglang.PORT}"}
        with ms.scraped(target, drop=STATIC_TARGET_DROP):
            sglang.emit(ms, pod, SGLANG_MODEL, r)
            scrape.emit_up(ms, vllm.scrape_labels(pod, "sglang", sglang.PORT), _one(axis))
        loads.append(r)
    kube_state.emit_pods(ms, chat + batch)
    kube_state.emit_replicasets(ms, chat + batch)
    kube_state.emit_nodes(ms, nodes)
    return ms


def _scenario_static_scrape() -> Scenario:
    chat_ips = "|".join(p.ip.replace(".", "\\\\.") for p in _static_pods()[1])
    chat_sel = f'instance=~"({chat_ips}):{sglang.PORT}"'
    return _install(
        "static_scrape",
        (
            "SGLang scraped by static_configs (job and instance only) in two namespaces: "
            "sglang-chat in llm gets x1.8 the requests and builds a queue, sglang-batch in batch stays healthy; "
            "kube_pod_info's pod_ip tells them apart."
        ),
        "sglang-chat",
        [
            Target(
                "chat_queue",
                f"sum(sglang:num_queue_reqs{{{chat_sel}}})",
                NOW,
                2 * STATIC_QUEUE,
                "requests",
                0.1,
            ),
            Target(
                "all_queue",
                "sum(sglang:num_queue_reqs)",
                NOW,
                2 * STATIC_QUEUE + 2,
                "requests",
                0.15,
            ),
            Target(
                "namespace_labels",
                'count(sglang:num_queue_reqs{namespace!=""}) or vector(0)',
                NOW,
                0.0,
                "series",
                0.0,
            ),
        ],
        build_static_scrape,
        _capacity("demand_surge", "sglang-chat"),
    )


def scenarios() -> dict[str, Callable[[], Scenario]]:
    """Registry entries of the installs."""
    return {
        "mixed_fleet": _scenario_mixed_fleet,
        "exported_labels": _scenario_exported_labels,
        "static_scrape": _scenario_static_scrape,
    }
