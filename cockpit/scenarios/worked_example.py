"""The worked example of the diagnosis methodology (seed ``003_a20570c0e08ebfee.txt`` §4).

Story: a vLLM service of ``qwen2.5-72b-instruct`` (4 replicas, tensor parallel 2, on two
nodes with 4 × H100 80GB each, behind ingress-nginx) is healthy for a day. At the evening
peak (20:10 Beijing time, 12:10 UTC) GPU memory fragmentation rises and the GPUs run hot;
every replica degrades together (a shared cause): batch size falls, the queue grows,
latency and errors rise, throughput falls. A latency alert fires a few minutes later.
"Now" is 45 minutes into the incident.

Seed number → metric (all measured by PromQL over the generated data; see ``TARGETS``):

======================  ===========  ==========================================================
seed                    value        PromQL (``{ns}`` = ``namespace="llm-serving"``)
======================  ===========  ==========================================================
P99 latency             180→620 ms   ``histogram_quantile(0.99, sum by (le) (rate(nginx_ingress_controller_request_duration_seconds_bucket{ns}[5m])))``
QPS                     1200→900     ``sum(rate(nginx_ingress_controller_requests{ns}[5m]))``
error rate              0.2%→1.8%    5xx over all responses at the gateway
GPU utilisation         72%→98%      ``avg(DCGM_FI_DEV_GPU_UTIL{ns})``
batch size              8→3          ``avg(vllm:num_requests_running{ns})`` — requests in the
                                     running batch of each engine step, averaged over replicas
queue length            12→85        ``avg(vllm:num_requests_waiting{ns})`` per replica
fragmentation           12%→34%      ``1 - allocated/reserved`` of the PyTorch caching allocator
                                     (``pytorch_cuda_memory_*_bytes``, app instrumentation:
                                     :mod:`cockpit.scenarios.stacks.torch_alloc`)
temperature             68→83 °C     ``avg(DCGM_FI_DEV_GPU_TEMP{ns})``
throttling              —            ``DCGM_FI_DEV_CLOCKS_EVENT_REASONS`` = 0x24 (SW thermal +
                                     SW power cap), SM clock 1980→1755 MHz, power 540→690 W
                                     of 700 W, ``DCGM_FI_DEV_THERMAL_VIOLATION`` rising
======================  ===========  ==========================================================

Every HTTP status shares one latency distribution (so the aggregate quantiles are exact).
vLLM's own e2e histogram starts at a 0.3 s bucket, so its P99 cannot resolve 180 ms: its
baseline P99 reads ~0.3 s whatever the true latency — a real property of those buckets.
"""

from __future__ import annotations

from datetime import UTC, datetime

from cockpit.scenarios import signals as sg
from cockpit.scenarios.base import Scenario, Target
from cockpit.scenarios.histogram import exact_shape, lognormal_shape
from cockpit.scenarios.metricset import MetricSet
from cockpit.scenarios.stacks import alerts, dcgm, ingress_nginx, kube_state, torch_alloc, vllm
from cockpit.scenarios.stacks import kube_objects as ko
from cockpit.scenarios.timeaxis import TimeAxis
from cockpit.scenarios.topology import Node, Pod, make_nodes, place_pods

NAME = "worked_example"

NOW = int(datetime(2026, 11, 27, 12, 55, tzinfo=UTC).timestamp())
INCIDENT_START = int(datetime(2026, 11, 27, 12, 10, tzinfo=UTC).timestamp())
HISTORY_S = 27 * 3600
FINE_S = 2 * 3600
RAMP_S = 240
BASELINE_AT = NOW - 86400
"""Same time one day earlier (the handbook's one-day baseline)."""

NAMESPACE = "llm-serving"
DEPLOYMENT = "vllm-qwen25-72b"
MODEL = "qwen2.5-72b-instruct"
INGRESS = "llm-gateway"
GPU_MODEL = "NVIDIA H100 80GB HBM3"
REPLICAS = 4
GPUS_PER_POD = 2

# Seed numbers: (baseline at the evening peak, incident).
QPS = (1200.0, 900.0)
ERROR_RATIO = (0.002, 0.018)
P50 = (0.045, 0.140)
P95 = (0.095, 0.400)
P99 = (0.180, 0.620)
GPU_UTIL = (72.0, 98.0)
BATCH = (8.0, 3.0)
QUEUE = (12.0, 85.0)
FRAGMENTATION = (0.12, 0.34)
TEMP = (68.0, 83.0)
SM_CLOCK = (1980.0, 1755.0)
POWER = (540.0, 690.0)
KV_CACHE = (0.55, 0.95)
TTFT = ({0.5: 0.025, 0.95: 0.055, 0.99: 0.09}, {0.5: 0.09, 0.95: 0.3, 0.99: 0.55})
GEN_TOKENS = 48.0
PROMPT_TOKENS = 380.0

# Share of responses by status (baseline, incident); 5xx add up to ERROR_RATIO.
STATUS_SHARE = {
    "400": (0.0005, 0.0005),
    "500": (0.0010, 0.0090),
    "503": (0.0005, 0.0030),
    "504": (0.0005, 0.0060),
}
FINISH_SPLIT = {"stop": 0.88, "length": 0.12}

SEL = f'namespace="{NAMESPACE}"'
ING_SEL = f'namespace="{NAMESPACE}",ingress="{INGRESS}"'


def _q_latency(q: float) -> str:
    return (
        f"histogram_quantile({q}, sum by (le) "
        f"(rate(nginx_ingress_controller_request_duration_seconds_bucket{{{ING_SEL}}}[5m])))"
    )


QUERIES: dict[str, tuple[str, str]] = {
    "p50_latency": (_q_latency(0.5), "s"),
    "p95_latency": (_q_latency(0.95), "s"),
    "p99_latency": (_q_latency(0.99), "s"),
    "qps": (f"sum(rate(nginx_ingress_controller_requests{{{ING_SEL}}}[5m]))", "req/s"),
    "error_ratio": (
        f'sum(rate(nginx_ingress_controller_requests{{{ING_SEL},status=~"5.."}}[5m]))'
        f" / sum(rate(nginx_ingress_controller_requests{{{ING_SEL}}}[5m]))",
        "ratio",
    ),
    "gpu_util": (f"avg(DCGM_FI_DEV_GPU_UTIL{{{SEL}}})", "%"),
    "batch_size": (f"avg(vllm:num_requests_running{{{SEL}}})", "requests"),
    "queue_length": (f"avg(vllm:num_requests_waiting{{{SEL}}})", "requests"),
    "fragmentation": (f"avg({torch_alloc.FRAGMENTATION_QUERY.format(sel=SEL)})", "ratio"),
    "gpu_temp": (f"avg(DCGM_FI_DEV_GPU_TEMP{{{SEL}}})", "°C"),
    "sm_clock": (f"avg(DCGM_FI_DEV_SM_CLOCK{{{SEL}}})", "MHz"),
    "ttft_p99": (
        f"histogram_quantile(0.99, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket{{{SEL}}}[5m])))",
        "s",
    ),
}

EXPECTED: dict[str, tuple[float, float]] = {
    "p50_latency": P50,
    "p95_latency": P95,
    "p99_latency": P99,
    "qps": QPS,
    "error_ratio": ERROR_RATIO,
    "gpu_util": GPU_UTIL,
    "batch_size": BATCH,
    "queue_length": QUEUE,
    "fragmentation": FRAGMENTATION,
    "gpu_temp": TEMP,
    "sm_clock": SM_CLOCK,
    "ttft_p99": (TTFT[0][0.99], TTFT[1][0.99]),
}


def targets() -> list[Target]:
    """Every seed number, at the baseline (same time yesterday) and now."""
    out = []
    for name, (query, unit) in QUERIES.items():
        base, inc = EXPECTED[name]
        out.append(Target(name, query, BASELINE_AT, base, unit, 0.05, "baseline"))
        out.append(Target(name, query, NOW, inc, unit, 0.05, "incident"))
    return out


def _lerp2(pair: tuple[float, float], base_level: sg.Signal, s: sg.Signal) -> sg.Signal:
    return sg.lerp(base_level, pair[1], s)


def _topology(revision: int = 7, version: str = "v0.11.2") -> tuple[list[Node], list[Pod]]:
    """Two nodes of four H100s; the revision's four pods, two GPUs each."""
    nodes = make_nodes("gpu-node-a", 2, 4, GPU_MODEL)
    pods = place_pods(
        deployment=DEPLOYMENT,
        namespace=NAMESPACE,
        nodes=nodes,
        replicas=REPLICAS,
        gpus_per_pod=GPUS_PER_POD,
        revision=revision,
        app_labels={"app.kubernetes.io/version": version, "model": MODEL},
        container="vllm",
    )
    return nodes, pods


def build() -> MetricSet:
    """Generate the series (≈ 1,000 series × ~2,000 samples)."""
    axis = TimeAxis(start=NOW - HISTORY_S, end=NOW, fine_from=NOW - FINE_S)
    ms = MetricSet(axis)
    load = sg.diurnal(axis, peak_start_h=11.5, peak_end_h=14.0, trough=0.3, ramp_h=5.0)
    sev = sg.step_ramp(axis, INCIDENT_START, RAMP_S)
    nodes, pods = _topology()

    # -- access layer: ingress-nginx ----------------------------------------------------
    total_qps = sg.around(_lerp2(QPS, sg.scale(load, QPS[0]), sev), sg.noise(axis, "qps", 0.01))
    shares = {st: sg.lerp(sg.const(axis, a), b, sev) for st, (a, b) in STATUS_SHARE.items()}
    ok_share = [1 - sum(v[i] for v in shares.values()) for i in range(len(axis))]
    by_status = {"200": sg.mul(total_qps, ok_share)}
    by_status.update({st: sg.mul(total_qps, sh) for st, sh in shares.items()})
    gw_base = exact_shape(ingress_nginx.DEFAULT_BUCKETS, {0.5: P50[0], 0.95: P95[0], 0.99: P99[0]})
    gw_inc = exact_shape(ingress_nginx.DEFAULT_BUCKETS, {0.5: P50[1], 0.95: P95[1], 0.99: P99[1]})
    calm = [1 - x for x in sev]
    gw_mix = [(gw_base, calm), (gw_inc, sev)]
    ingress_nginx.emit(
        ms,
        ingress_nginx.Ingress(
            NAMESPACE, INGRESS, DEPLOYMENT, "llm.example.internal", "/v1/chat/completions"
        ),
        ingress_nginx.IngressSignals(by_status, {st: gw_mix for st in by_status}),
    )

    # -- serving layer: vLLM + allocator instrumentation ------------------------------
    e2e = [
        (lognormal_shape(vllm.E2E_BUCKETS, 0.04, 0.17), calm),
        (lognormal_shape(vllm.E2E_BUCKETS, 0.13, 0.6), sev),
    ]
    ttft = [
        (exact_shape(vllm.TTFT_BUCKETS, TTFT[0]), calm),
        (exact_shape(vllm.TTFT_BUCKETS, TTFT[1]), sev),
    ]
    itl = [
        (lognormal_shape(vllm.ITL_BUCKETS, 0.012, 0.03), calm),
        (lognormal_shape(vllm.ITL_BUCKETS, 0.022, 0.07), sev),
    ]
    queue = [
        (lognormal_shape(vllm.QUEUE_BUCKETS, 0.003, 0.03), calm),
        (lognormal_shape(vllm.QUEUE_BUCKETS, 0.09, 0.45), sev),
    ]
    offsets = (-0.02, 0.01, 0.015, -0.005)
    for i, pod in enumerate(pods):
        k = (1 + offsets[i % len(offsets)]) / REPLICAS
        finished = {
            "stop": sg.scale(by_status["200"], k * FINISH_SPLIT["stop"]),
            "length": sg.scale(by_status["200"], k * FINISH_SPLIT["length"]),
            "error": sg.scale(by_status["500"], k),
            "abort": sg.scale(by_status["504"], k),
        }
        running_base = [BATCH[0] * (0.35 + 0.65 * x) for x in load]
        waiting_base = [QUEUE[0] * x * x for x in load]
        sig = vllm.VllmSignals(
            finished=finished,
            prompt_tokens_per_req=sg.around(
                sg.const(axis, PROMPT_TOKENS), sg.noise(axis, f"pt{i}", 0.03)
            ),
            gen_tokens_per_req=sg.const(axis, GEN_TOKENS),
            running=sg.around(_lerp2(BATCH, running_base, sev), sg.noise(axis, f"run{i}", 0.02)),
            waiting=sg.around(_lerp2(QUEUE, waiting_base, sev), sg.noise(axis, f"wait{i}", 0.02)),
            kv_cache_usage=sg.clamp(
                sg.add(
                    _lerp2(KV_CACHE, [0.25 + 0.3 * x for x in load], sev),
                    sg.noise(axis, f"kv{i}", 0.01),
                ),
                0,
                1,
            ),
            preemptions=_lerp2((0.01, 0.8), sg.scale(load, 0.01), sev),
            e2e=e2e,
            ttft=ttft,
            itl=itl,
            queue=queue,
        )
        vllm.emit(ms, pod, MODEL, sig)
        reserved = _lerp2((70 * 2**30, 74 * 2**30), sg.const(axis, 70 * 2**30), sev)
        frag = sg.add(
            _lerp2(FRAGMENTATION, sg.const(axis, FRAGMENTATION[0]), sev),
            sg.noise(axis, f"frag{i}", 0.004),
        )
        torch_alloc.emit(ms, pod, MODEL, [float(round(r)) for r in reserved], frag)

    # -- hardware layer: dcgm-exporter -------------------------------------------------
    pod_of = {g.uuid: p for p in pods for g in p.gpus}
    for n_i, node in enumerate(nodes):
        for gpu in node.gpus:
            seed = gpu.uuid
            temp_clean = _lerp2(TEMP, [50 + 18 * x for x in load], sev)
            power_clean = _lerp2(POWER, [300 + 240 * x for x in load], sev)
            util = sg.clamp(
                sg.add(
                    _lerp2(GPU_UTIL, [GPU_UTIL[0] * (0.35 + 0.65 * x) for x in load], sev),
                    sg.noise(axis, "u" + seed, 1.0),
                ),
                0,
                100,
            )
            reasons = [
                float((dcgm.SW_THERMAL if t >= 80 else 0) | (dcgm.SW_POWER_CAP if p >= 680 else 0))
                for t, p in zip(temp_clean, power_clean, strict=True)
            ]
            gsig = dcgm.GpuSignals(
                util=[round(u) for u in util],
                temp=[round(t) for t in sg.add(temp_clean, sg.noise(axis, "t" + seed, 0.6))],
                mem_temp=[round(t - 4) for t in temp_clean],
                power=sg.add(power_clean, sg.noise(axis, "p" + seed, 6.0)),
                sm_clock=[
                    round(c / 15) * 15 for c in _lerp2(SM_CLOCK, sg.const(axis, SM_CLOCK[0]), sev)
                ],
                mem_clock=sg.const(axis, 2619.0),
                clock_reasons=reasons,
                fb_used=[
                    round(x) for x in _lerp2((73500.0, 77200.0), sg.const(axis, 73500.0), sev)
                ],
                thermal_violation=sg.scale(sev, 0.3),
                power_violation=sg.scale(sev, 0.15),
                gr_active=[u / 100 * 0.93 for u in util],
                tensor_active=_lerp2((0.38, 0.22), [0.38 * (0.35 + 0.65 * x) for x in load], sev),
                dram_active=_lerp2((0.45, 0.62), [0.45 * (0.35 + 0.65 * x) for x in load], sev),
            )
            dcgm.emit(ms, node, gpu, pod_of.get(gpu.uuid), gsig, exporter_ip=f"10.244.{n_i + 1}.5")

    # -- infrastructure: kube-state-metrics --------------------------------------------
    kube_state.emit_pods(ms, pods)
    kube_state.emit_replicasets(ms, pods)
    kube_state.emit_nodes(ms, nodes)

    # -- alerts ------------------------------------------------------------------------
    for alert in ALERTS:
        alerts.emit(ms, alert)
    return ms


ALERTS = (
    alerts.Alert(
        name="VLLMHighP99Latency",
        pending_at=INCIDENT_START + 150,
        firing_at=INCIDENT_START + 330,
        labels={"namespace": NAMESPACE, "service": DEPLOYMENT, "model_name": MODEL},
        severity="critical",
        summary="P99 latency above 400 ms for 3 minutes",
    ),
    alerts.Alert(
        name="GPUThermalThrottling",
        pending_at=INCIDENT_START + 420,
        firing_at=INCIDENT_START + 720,
        labels={"namespace": NAMESPACE, "Hostname": "gpu-node-a1"},
        severity="warning",
        summary="GPU clocks reduced by thermal slowdown for 5 minutes",
    ),
)


ROLLOUT_AT = NOW - HISTORY_S - 30 * 60
"""Revision 7 (v0.11.1 → v0.11.2) rolled out the day before, before the series begin: the
pods serve the whole history, and the release is a change a reader must rule out."""
ENGINE_ARGS = (
    "--model=/models/qwen2.5-72b-instruct",
    f"--served-model-name={MODEL}",
    "--tensor-parallel-size=2",
    "--gpu-memory-utilization=0.92",
    "--max-num-seqs=64",
    "--max-model-len=16384",
)


def kube_world() -> ko.KubeWorld:
    """Nodes, the Deployment's two revisions, the four pods (ready throughout), the
    engine ConfigMap changed with the release, and what the incident left in Kubernetes:
    readiness probes answered 503 now and then (never three in a row: the pods stay
    ready, as ``kube_pod_status_ready`` says) and allocation failures in the logs."""
    nodes, pods = _topology()
    _old_nodes, old_pods = _topology(6, "v0.11.1")
    old = ko.Template(
        "vllm/vllm-openai:v0.11.1", ENGINE_ARGS, GPUS_PER_POD, configmap=f"{DEPLOYMENT}-engine"
    )
    new = ko.Template(
        "vllm/vllm-openai:v0.11.2", ENGINE_ARGS, GPUS_PER_POD, configmap=f"{DEPLOYMENT}-engine"
    )
    world = ko.KubeWorld()
    world.add(*(ko.node_object(n, created=NOW - 90 * 86400) for n in nodes))
    world.add(
        *ko.revision_objects(
            DEPLOYMENT,
            NAMESPACE,
            [(old_pods[0], old, NOW - 20 * 86400, 0), (pods[0], new, ROLLOUT_AT, REPLICAS)],
            replicas=REPLICAS,
            cause={7: "vllm v0.11.1 -> v0.11.2"},
        ),
        ko.configmap_object(
            f"{DEPLOYMENT}-engine",
            NAMESPACE,
            {
                "chat_template.jinja": "{{ messages }}",
                "generation_config.json": '{"temperature": 0.7}',
            },
            changed=ROLLOUT_AT - 600,
        ),
    )
    for i, pod in enumerate(pods):
        created = ROLLOUT_AT + 150 * i
        ready = created + 95
        world.add(ko.pod_object(pod, new, created=created, ready_at=ready))
        first = INCIDENT_START + 300 + 40 * i
        last = NOW - 25 - 20 * i
        world.add(
            ko.event_object(
                ("Pod", NAMESPACE, pod.name),
                "Unhealthy",
                "Readiness probe failed: HTTP probe failed with statuscode: 503",
                first=first,
                last=last,
                count=(last - first) // 150,
            )
        )
        oom_at = INCIDENT_START + 900 + 170 * i
        world.log(
            pod,
            [
                (
                    created + 20,
                    f"INFO api_server.py: vLLM API server version {new.image.split(':')[1]}",
                ),
                (ready - 5, "INFO launcher.py: Route: /v1/chat/completions, Methods: POST"),
                (ready, "INFO: Application startup complete."),
                (
                    oom_at,
                    "WARNING scheduler.py: request preempted: torch.OutOfMemoryError: CUDA out of "
                    "memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 79.19 GiB "
                    "of which 1.06 GiB is free. Of the allocated memory 48.71 GiB is allocated by "
                    "PyTorch, and 25.29 GiB is reserved by PyTorch but unallocated. If reserved but "
                    "unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF="
                    "expandable_segments:True to avoid fragmentation.",
                ),
                (oom_at + 1, "INFO scheduler.py: retrying preempted request after recompute"),
            ],
        )
    return world


def scenario() -> Scenario:
    """The worked example as a :class:`Scenario`."""
    return Scenario(
        name=NAME,
        description=__doc__.strip().split("\n\n")[1] if __doc__ else NAME,
        now=NOW,
        start=NOW - HISTORY_S,
        incident_start=INCIDENT_START,
        detected_at=min(a.firing_at for a in ALERTS),
        scope={
            "namespace": NAMESPACE,
            "deployment": DEPLOYMENT,
            "selector": f"app={DEPLOYMENT}",
            "model": MODEL,
        },
        targets=targets(),
        build=build,
        kube=kube_world,
        truth={
            "blast_radius": "all replicas (shared cause)",
            "root_cause": "GPU memory fragmentation lowers batch efficiency, compounded by thermal throttling",
            "mitigation": "restart the inference processes to release fragmented memory",
            "batch_size_metric": "vllm:num_requests_running",
            "queue_metric": "vllm:num_requests_waiting",
            "fragmentation_metric": "1 - pytorch_cuda_memory_allocated_bytes / pytorch_cuda_memory_reserved_bytes",
        },
    )
