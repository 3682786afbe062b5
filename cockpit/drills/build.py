"""The drills shipped in the package, as data: which scenario each one records and what its
answer key says beyond the scenario's own ground truth (title, difficulty, what it
teaches, the decisive evidence and the expert's path).

``make drills`` (``tools/build_bundles.py --drills``) records every drill's scenario from a
real Prometheus, the local Kubernetes API server and the GPU view into
``cockpit/drills/bundles/<id>/bundle.jsonl.gz`` and writes its ``key.json`` from
:func:`answer_key`: the primary layer, scope, suspects and times come from the scenario
(:class:`~cockpit.scenarios.base.GroundTruth`, ``incident_start``, ``detected_at``), so a
key cannot disagree with the data it was recorded from.

A team's own incident becomes a drill without a scenario: record it (``cockpit record``),
write its ``key.json`` by hand (see the README) and put both in a directory of
``bundles/``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from cockpit.drills.catalogue import BUNDLE, KEY, catalogue_dir
from cockpit.drills.key import AnswerKey
from cockpit.models import from_epoch
from cockpit.scenarios import Scenario, get_scenario
from cockpit.scenarios.base import Suspect

SINGLE_SCOPES = ("single_gpu", "single_instance", "single_node", "revision")
"""Blast-radius scopes answered "yes" at D (go to E): what step D proposes E for
(:mod:`cockpit.analysis.blast_radius`)."""

WINDOW = timedelta(hours=2)
"""The window each drill records (the recording's default, ``cockpit record --window``)."""


@dataclass(frozen=True)
class Evidence:
    """One decisive observation: ``what`` (a signal id or evidence kind), the step and
    panel it is shown on, and the zh/en text of the scorecard."""

    what: str
    step: str
    panel: str
    zh: str
    en: str


@dataclass(frozen=True)
class DrillSpec:
    """A shipped drill.

    Attributes:
        id: The drill's id (its directory name): named after the symptom, never the
            cause (``cockpit drill --list`` shows it).
        scenario: The scenario it records (:func:`cockpit.scenarios.get_scenario`).
        title: zh/en, no spoilers.
        difficulty: easy / medium / hard.
        teaches: zh/en, no spoilers.
        cause_class: A cause of ``cockpit/knowledge/causes.toml``.
        evidence: The decisive evidence.
        path: The expert's path (step letters).
        layer, scope, suspects: Only for a scenario without a structured ground truth.
        window: How much before "now" the bundle holds (enough quiet time before the
            impact for a baseline when the scenario has no data a day earlier).
    """

    id: str
    scenario: str
    title: tuple[str, str]
    difficulty: str
    teaches: tuple[str, str]
    cause_class: str
    evidence: tuple[Evidence, ...]
    path: str
    layer: str = ""
    scope: str = ""
    suspects: tuple[dict[str, str], ...] = field(default=())
    window: timedelta = WINDOW


def _text(pair: tuple[str, str]) -> dict[str, str]:
    return {"zh": pair[0], "en": pair[1]}


def key_suspects(s: Suspect) -> list[dict[str, str]]:
    """The answer key's suspects for a ground-truth suspect: a GPU by node/index and UUID
    (and the pod that held it), a release by its new ReplicaSet, a gateway by its
    controller pod, a pod that cannot be scheduled by itself and the node that blocks it, a
    capacity or client problem by the service (a key names no client: the metrics do not
    name one, and the service is what the trainee can pick)."""
    if s.kind == "gpu":
        return [
            {"kind": "gpu", "name": f"{s.node}/{s.gpu_index}", "uuid": s.uuid},
            {"kind": "pod", "name": s.pod},
        ]
    if s.kind == "revision":
        return [{"kind": "revision", "name": s.new_revision}]
    if s.kind == "gateway":
        return [{"kind": "gateway", "name": s.pod}]
    if s.kind == "pod":
        return [{"kind": "pod", "name": s.pod}, {"kind": "node", "name": s.node}]
    return [{"kind": "service", "name": s.deployment}]


def answer_key(spec: DrillSpec, scenario: Scenario) -> AnswerKey:
    """The drill's key: the spec's texts with the scenario's ground truth and times.

    Raises:
        pydantic.ValidationError: the key is not valid (an unknown cause, layer or step).
        ValueError: the scenario has no detection time.
    """
    gt = scenario.ground_truth
    if scenario.detected_at is None:
        raise ValueError(f"{scenario.name}: a drill needs a detection time")
    layer = spec.layer or (gt.primary_layer if gt else "")
    scope = spec.scope or (
        ("single" if gt.scope in SINGLE_SCOPES else "shared") if gt is not None else ""
    )
    suspects = list(spec.suspects) or (key_suspects(gt.suspect) if gt is not None else [])
    doc: dict[str, Any] = {
        "id": spec.id,
        "title": _text(spec.title),
        "difficulty": spec.difficulty,
        "teaches": _text(spec.teaches),
        "primary_layer": layer,
        "scope": scope,
        "suspects": suspects,
        "cause_class": spec.cause_class,
        "impact_start": from_epoch(scenario.incident_start).isoformat(),
        "detected_at": from_epoch(scenario.detected_at).isoformat(),
        "decisive_evidence": [
            {
                "what": e.what,
                "where": {"step": e.step, "panel": e.panel},
                "text": _text((e.zh, e.en)),
            }
            for e in spec.evidence
        ],
        "expert_path": list(spec.path),
    }
    return AnswerKey.model_validate(doc)


def write_key(key: AnswerKey, path: Path) -> None:
    """``key`` as indented JSON (UTF-8, keys in schema order, times in UTC ``Z``, empty
    optional fields left out)."""
    doc = json.loads(key.model_dump_json(exclude_defaults=True))
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


Recorder = Callable[[Scenario, Path, timedelta, str], int]
"""Records a scenario into a bundle: ``(scenario, out, window, note) -> 0 | 1``."""


def build_drills(names: list[str], record: Recorder, root: Path | None = None) -> int:
    """Record the drills called ``names`` (all when empty) with ``record`` and write their
    keys; 0 when every one was written, 1 otherwise.

    Raises:
        KeyError: an unknown drill name.
    """
    specs = {s.id: s for s in DRILLS}
    unknown = [n for n in names if n not in specs]
    if unknown:
        raise KeyError(f"unknown drills {unknown}; known: {', '.join(specs)}")
    root = root or catalogue_dir()
    chosen = [specs[n] for n in names] or list(DRILLS)
    keys = {s.id: answer_key(s, get_scenario(s.scenario)) for s in chosen}  # all valid first
    rc = 0
    for spec in chosen:
        scenario = get_scenario(spec.scenario)
        key = keys[spec.id]
        directory = root / spec.id
        directory.mkdir(parents=True, exist_ok=True)
        if record(scenario, directory / BUNDLE, spec.window, f"drill {spec.id}") != 0:
            rc = 1
            continue
        write_key(key, directory / KEY)
    return rc


DRILLS: tuple[DrillSpec, ...] = (
    DrillSpec(
        id="worked_example",
        scenario="worked_example",
        title=(
            "晚高峰：推理服务 P99 延迟与错误率双升",
            "Evening peak: P99 latency and errors up on an inference service",
        ),
        difficulty="medium",
        teaches=(
            "按分层下钻读黄金指标，区分单实例与共享原因，从现象走到根因",
            "Read the golden signals layer by layer, tell a single instance from a shared "
            "cause, go from a symptom to its root cause",
        ),
        cause_class="memory_fragmentation",
        layer="runtime",
        scope="shared",
        suspects=({"kind": "service", "name": "vllm-qwen25-72b"},),
        evidence=(
            Evidence(
                "runtime.fragmentation",
                "C",
                "drilldown",
                "显存碎片率 12% → 34%：单批处理能力下降的原因",
                "GPU memory fragmentation 12 % → 34 %: why each batch holds fewer requests",
            ),
            Evidence(
                "serving.batch_size",
                "C",
                "drilldown",
                "批大小 8 → 3，而到达速率没有明显变化",
                "batch size 8 → 3 while the arrival rate hardly changed",
            ),
            Evidence(
                "hardware.throttle",
                "C",
                "drilldown",
                "所有 GPU 温度 68 → 83 °C 并降频：叠加因素，不是根因",
                "every GPU at 68 → 83 °C and throttling: a compounding factor, not the cause",
            ),
        ),
        path="ABCDFGHI",
    ),
    DrillSpec(
        id="long_answers",
        scenario="bad_release",
        title=("聊天服务：回答变长、变慢", "Chat service: answers get longer and slower"),
        difficulty="medium",
        teaches=(
            "把症状与同一时间发生的一切对齐",
            "Line the symptoms up in time with everything that happened",
        ),
        cause_class="release",
        window=timedelta(hours=3),
        evidence=(
            Evidence(
                "rollout",
                "B",
                "changes",
                "窗口内完成了一次发布（v1.8.2 → v1.9.0），症状随新 Pod 就绪而出现",
                "a rollout (v1.8.2 → v1.9.0) completed inside the window; the symptom grew "
                "as the new pods became ready",
            ),
            Evidence(
                "serving.output_len",
                "C",
                "drilldown",
                "每请求输出 token 310 → 720，finished_reason=length 4% → 60%",
                "output tokens per request 310 → 720, finished_reason=length 4 % → 60 %",
            ),
        ),
        path="ABCDEGHI",
    ),
    DrillSpec(
        id="ttft_spike",
        scenario="sglang_long_prompts",
        title=("SGLang 服务：首 token 延迟 P99 突增", "SGLang service: TTFT P99 spikes"),
        difficulty="medium",
        teaches=(
            "TTFT 变差而 TPOT 正常时，按手册的顺序逐项排查",
            "When TTFT worsens and TPOT does not, follow the handbook's order of checks",
        ),
        cause_class="long_prompts",
        evidence=(
            Evidence(
                "serving.prompt_len",
                "C",
                "drilldown",
                "每请求输入 token 大幅上升（P95 约 4.4k → 27k）",
                "prompt tokens per request far up (P95 about 4.4 k → 27 k)",
            ),
            Evidence(
                "serving.ttft",
                "A",
                "golden_signals",
                "TTFT 与队列上升，token 间延迟不变",
                "TTFT and the queue up, inter-token latency flat",
            ),
        ),
        path="ABCDFGHI",
    ),
    DrillSpec(
        id="restarting_replica",
        scenario="gpu_lost",
        title=("一个副本不停重启", "One replica keeps restarting"),
        difficulty="hard",
        teaches=(
            "顺着一个不断重启的副本逐层往下查；缺失也是证据",
            "Follow a restarting replica down the layers; absence is evidence",
        ),
        cause_class="gpu_lost",
        evidence=(
            Evidence(
                "hardware.xid",
                "C",
                "drilldown",
                "gpu-node-b GPU 0 报 Xid 79（掉卡），随后它的 DCGM 指标消失",
                "gpu-node-b GPU 0 reported Xid 79 (fell off the bus), then its DCGM series vanished",
            ),
            Evidence(
                "infra.restarts",
                "B",
                "changes",
                "该 GPU 上的 Pod 进入 CrashLoopBackOff，节点可分配 GPU 8 → 7",
                "the pod on that GPU crash-loops and the node's allocatable GPUs drop 8 → 7",
            ),
        ),
        path="ABCDEGHI",
    ),
    DrillSpec(
        id="slow_replica",
        scenario="throttled_gpu",
        title=("一个副本比其他的慢", "One replica is slower than the others"),
        difficulty="easy",
        teaches=(
            "用健康同伴对照隔离单个实例",
            "Isolate one instance against its healthy peers",
        ),
        cause_class="thermal_throttle",
        evidence=(
            Evidence(
                "hardware.throttle",
                "E",
                "gpu",
                "该 GPU 因过热降频（SM 时钟 1980 → 1200 MHz，67 → 90 °C）",
                "that GPU throttles for heat (SM clock 1980 → 1200 MHz, 67 → 90 °C)",
            ),
        ),
        path="ABCDEGHI",
    ),
    DrillSpec(
        id="error_burst",
        scenario="gateway_burst",
        title=("错误率上升，而推理服务看起来正常", "Errors rise while the servers look fine"),
        difficulty="easy",
        teaches=(
            "逐段比较请求路径上各处的错误率",
            "Compare the errors at each hop of the request path",
        ),
        cause_class="gateway_errors",
        # The gateway by any of its names: the controller pod, the controller (as the
        # metrics' controller_namespace names it), the Ingress.
        suspects=(
            {"kind": "gateway", "name": "ingress-nginx-controller-5c8d66c76d-q4t7x"},
            {"kind": "gateway", "name": "ingress-nginx"},
            {"kind": "gateway", "name": "qwen-chat-gw"},
        ),
        evidence=(
            Evidence(
                "access.error_ratio_5xx",
                "C",
                "drilldown",
                "网关 5xx 约 9%，而 vLLM 自身的错误率没有变化",
                "about 9 % 5xx at the gateway while vLLM's own error ratio is unchanged",
            ),
        ),
        path="ABCDFGHI",
    ),
    DrillSpec(
        id="all_replicas_slow",
        scenario="kv_overload",
        title=("所有副本一起变慢", "Every replica slows down together"),
        difficulty="medium",
        teaches=(
            "区分所有副本共有的问题与单个副本的故障，并找出共同原因",
            "Tell a problem every replica shares from one replica's fault, and find what they share",
        ),
        cause_class="kv_cache_overload",
        evidence=(
            Evidence(
                "runtime.kv_cache",
                "C",
                "drilldown",
                "KV 缓存 55% → 99%，请求被抢占",
                "KV cache 55 % → 99 %, requests preempted",
            ),
            Evidence(
                "serving.qps",
                "F",
                "shared",
                "到达率上升约 60%，所有副本一起受影响",
                "arrivals up about 60 %, every replica affected alike",
            ),
        ),
        path="ABCDFGHI",
    ),
    DrillSpec(
        id="replica_never_starts",
        scenario="pod_pending",
        title=(
            "扩容后新副本一直起不来，队列越排越长",
            "After a scale-out the new replica never starts and the queue keeps growing",
        ),
        difficulty="medium",
        teaches=(
            "容量不够时，先确认新副本是否真的被调度，再读调度器的原因与逐节点对照",
            "When capacity falls short, check the new replica was actually scheduled, then "
            "read the scheduler's reason against each node",
        ),
        cause_class="unschedulable",
        evidence=(
            Evidence(
                "failed_scheduling",
                "E",
                "scheduling",
                "第 7 个副本 Pending：Insufficient nvidia.com/gpu，唯一有空闲 GPU 的 "
                "gpu-node-b 带有 Pod 不容忍的污点 dedicated=batch:NoSchedule",
                "the seventh replica is Pending: Insufficient nvidia.com/gpu, and gpu-node-b, "
                "the only node with free GPUs, carries dedicated=batch:NoSchedule, which the "
                "pod does not tolerate",
            ),
            Evidence(
                "runtime.kv_cache",
                "C",
                "drilldown",
                "KV 缓存 55% → 99%，每个副本都在排队：服务需要的第 7 个副本没有到位",
                "KV cache 55 % → 99 %, requests queue on every replica: the seventh replica "
                "the service needs never arrived",
            ),
        ),
        path="ABCDEGHI",
    ),
)
"""Every shipped drill, in the order ``make drills`` records them."""
