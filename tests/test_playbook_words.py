"""Every playbook speaks in words and reads only its service.

Each of the six playbooks runs over a served incident (a real Prometheus backfilled with
the scenario, the local Kubernetes API server serving its objects and logs) and over the
planted causes of ``playbook_scenarios``; what it prints (``cockpit playbook``'s text and
JSON texts, the F7 screen's finding and evidence lines, the incident record the export
shows) names signals, cause classes and patterns by their human names in English and in
Chinese, never ``finish_length_share``, ``secondary_to_rank_failure`` nor a catalogue key.
Its queries carry the service's selector as step C's do: with three engines in one
namespace, every series a query reads is one of the service's own pods.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from cockpit.analysis.playbooks.data import PlaybookData
from cockpit.analysis.playbooks.render import evidence_label, evidence_value, to_record
from cockpit.analysis.playbooks.run import run_playbook
from cockpit.analysis.playbooks.spec import PLAYBOOK_IDS, load_playbook
from cockpit.config import PrometheusSettings, ServiceSettings, Settings
from cockpit.sources.base import Sources
from testkit import make_ctx

SNAKE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
"""A field, signal or class id (``finish_length_share``, ``missing_ranks``)."""
DOTTED = re.compile(
    r"\b(?:playbook|explain|kube|metrics|screens|hint)\.[a-z_]+(?:\.[a-z_]+)*\b"
    r"|\b(?:access|serving|runtime|hardware|infra)\.[a-z_]+(?::[a-z0-9]+)?\b"
)
"""A catalogue key (``playbook.oom_class.x``) or a signal key (``serving.ttft:p99``)."""
UPSTREAM = frozenset(
    {
        "finish_reason",  # the OpenAI API's field, vLLM's label
        "gpu_memory_utilization",  # vLLM's engine arguments, as the user sets them
        "max_model_len",
        "max_num_seqs",
        "expandable_segments",  # PYTORCH_CUDA_ALLOC_CONF's option
    }
)
"""Upstream names the person types or reads in their own config: not cockpit's ids."""

SERVED = {
    "cuda_oom": "worked_example",
    "nccl_hang": "gpu_lost",
    "low_util": "throttled_gpu",
    "ttft_spike": "sglang_long_prompts",
    "pod_pending": "pod_pending",
    "bad_rollout": "bad_release",
}
"""The served incident each playbook is run over."""


def leaks(texts: list[str]) -> list[str]:
    """The internal ids ``texts`` show."""
    found = {m.group(0) for x in texts for m in SNAKE.finditer(x)} - UPSTREAM
    found |= {m.group(0) for x in texts for m in DOTTED.finditer(x)}
    return sorted(found)


def test_the_pattern_finds_what_leaked() -> None:
    shown = [
        "Jumped after the release: finish_length_share.",
        "(pattern: secondary_to_rank_failure)",
        "class: playbook.oom_class.garbage_size",
    ]
    assert leaks(shown) == [
        "finish_length_share",
        "garbage_size",
        "oom_class",
        "playbook.oom_class.garbage_size",
        "secondary_to_rank_failure",
    ]
    assert leaks(["share of requests ended by the length limit 0.04 → 0.60", "vllm 0.6.3"]) == []
    assert leaks(["engine budget (gpu_memory_utilization)", "nvidia.com/gpu"]) == []


def rendered(playbook_id: str, data: PlaybookData, lang: str) -> list[str]:
    """Every text a person reads of the playbook's run: the item, finding and evidence
    lines of the screen and of ``cockpit playbook`` (not the PromQL nor the commands, which
    are the sources' own words), and the record the export shows."""
    from cockpit.commands.playbook_cmd import render_text, to_json
    from cockpit.models import from_epoch

    book = load_playbook(playbook_id)
    results = run_playbook(book, data)
    report = to_json(
        book,
        results,
        data,
        lang=lang,
        at=from_epoch(0),
        scope={"namespace": "", "selector": "", "deployment": "", "pods": None, "job": None},
        commands=[[] for _ in book.items],
    )
    # what the sources said (a log line, an image, the args) is shown as it was read
    read = data.model_dump_json()

    def said(value: str) -> str:
        return (
            "" if value and (value in data.all_logs() or json.dumps(value)[1:-1] in read) else value
        )

    for item in report["items"]:
        for e in item["evidence"]:
            e["query"], e["value"] = "", said(e["value"])
    texts = [render_text(report, book, results, lang)]
    texts += [
        f"{evidence_label(e, lang)}: {said(evidence_value(e, lang))}"
        for r in results
        for e in r.evidence
    ]
    record = to_record(book, results, lang)
    texts += [record.summary] + [f"{i.item} {i.finding}" for i in record.items]
    return texts


@pytest.mark.parametrize("playbook_id", PLAYBOOK_IDS)
def test_every_planted_cause_is_told_in_words(playbook_id: str) -> None:
    """The planted cause of each playbook (an OOM's class and stage, the NCCL pattern and
    first error, the scheduler's verdict, the release's log cause) in words."""
    from playbook_scenarios import SCENARIOS

    found = {
        lang: got
        for lang in ("en", "zh")
        if (got := leaks(rendered(playbook_id, SCENARIOS[playbook_id](), lang)))
    }
    assert not found, found


@pytest.mark.parametrize("playbook_id", PLAYBOOK_IDS)
async def test_no_playbook_shows_an_internal_id_on_a_served_incident(
    prometheus_scenario: Any, kube_api: Any, tmp_path: Path, playbook_id: str
) -> None:
    """Each playbook over a served incident's metrics, Kubernetes objects and logs, in the
    incident's scope: no id in English nor in Chinese."""
    from cockpit.collect.playbooks import collect_playbook_data
    from cockpit.models import from_epoch
    from cockpit.sources.kubernetes import KubeSource
    from cockpit.sources.prometheus import PrometheusSource

    name = SERVED[playbook_id]
    srv = prometheus_scenario(name)
    sc = srv.scenario
    kube = None
    if sc.kube is not None:
        cluster = kube_api.cluster(f"words-{name}")
        if not cluster.objects:
            world = sc.kube()
            cluster.add(*world.objects)
            for (ns, pod, container, previous), text in world.logs.items():
                cluster.add_log(ns, pod, text, container=container, previous=previous)
        kc = kube_api.write_kubeconfig(
            tmp_path / "kc", [f"words-{name}"], namespace=sc.scope["namespace"]
        )
        kube = KubeSource(kubeconfig=kc, context=f"words-{name}", timeout_s=5)
    settings = Settings(
        prometheus=PrometheusSettings(url=srv.url),
        service=ServiceSettings(namespace=sc.scope["namespace"], deployment=sc.scope["deployment"]),
    )
    ctx = make_ctx(
        tmp_path,
        sources=Sources(
            metrics=PrometheusSource(settings.prometheus),
            kube=kube,
            missing={"gpu": "no NVML"} | ({} if kube else {"kube": "not configured"}),
        ),
        settings=settings,
        frozen_at=from_epoch(sc.now),
    )
    try:
        data = await collect_playbook_data(ctx, playbook_id)
    finally:
        await ctx.sources.close()
    assert data.pods or data.metrics, "the playbook read nothing"
    found = {
        lang: got for lang in ("en", "zh") if (got := leaks(rendered(playbook_id, data, lang)))
    }
    assert not found, found


def test_every_cause_an_analyzer_names_has_words() -> None:
    """The whole class: every OOM class and stage, NCCL pattern and first-error kind and
    release cause the analyzers can report has a name in both languages."""
    from cockpit.analysis import nccl, oom
    from cockpit.i18n import catalog

    oom_classes = set(oom._MITIGATE) | set(oom._ENGINE_LIKELY.values())
    stages = {n for n, _ in oom._STAGES} | set(oom._ENGINE_STAGE.values()) | {"kv_cache_init"}
    errors = {k for k, _ in nccl._ERRORS} | {k for k, _ in nccl._EVENTS}
    errors |= {"destroy_warning", "job_end", "watchdog_timeout"}
    patterns = set(nccl._EVENT_KIND_TO_PATTERN.values()) | {
        "secondary_to_rank_failure",
        "collective_mismatch",
        "nccl_transport_error",
        "watchdog_blocked",
        "missing_ranks",
        "straggler_at_min_seq",
        "watchdog_timeout",
        "exit_without_destroy_process_group",
    }
    releases = {k.rsplit(".", 1)[1] for k in catalog() if k.startswith("explain.cause.rollout.")}
    missing = [
        f"{prefix}.{x}"
        for prefix, ids in (
            ("playbook.oom_class", oom_classes),
            ("playbook.oom_stage", stages),
            ("playbook.nccl_error", errors),
            ("playbook.nccl_pattern", patterns),
            ("playbook.release_cause", releases),
        )
        for x in sorted(ids)
        if not all(catalog().get(f"{prefix}.{x}", {}).get(lang) for lang in ("en", "zh"))
    ]
    assert not missing, missing


def selectors(query: str) -> list[str]:
    """The vector selectors of a PromQL query (``metric{matchers}``), a matcher's regex
    braces (``{1,10}``) kept inside its quotes."""
    out = []
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*\{", query):
        i, quoted = m.end(), False
        while i < len(query) and (quoted or query[i] != "}"):
            if query[i] == "\\":
                i += 1
            elif query[i] == '"':
                quoted = not quoted
            i += 1
        out.append(query[m.start() : i + 1])
    return out


@pytest.mark.parametrize("deployment", ["vllm-chat", "sglang-chat", "tgi-chat"])
async def test_playbook_queries_read_only_the_service_s_own_series(
    prometheus_scenario: Any, tmp_path: Path, deployment: str
) -> None:
    """Three engines, two pods each, in one namespace: every series each playbook's
    queries select (the finish-reason share, GPU utilization, the serving signals…)
    belongs to a pod of the service's deployment, as step C's queries do."""
    from cockpit.collect.playbooks import collect_playbook_data
    from cockpit.models import from_epoch
    from cockpit.sources.prometheus import PrometheusSource

    srv = prometheus_scenario("mixed_fleet")
    sc = srv.scenario
    settings = Settings(
        prometheus=PrometheusSettings(url=srv.url),
        service=ServiceSettings(namespace=sc.scope["namespace"], deployment=deployment),
    )
    src = PrometheusSource(settings.prometheus)
    ctx = make_ctx(
        tmp_path,
        sources=Sources(metrics=src, missing={"kube": "not configured", "gpu": "no NVML"}),
        settings=settings,
        frozen_at=from_epoch(sc.now),
    )
    queries: dict[str, str] = {}
    read: dict[str, set[str]] = {}
    try:
        for playbook_id in ("cuda_oom", "low_util", "ttft_spike", "bad_rollout"):
            data = await collect_playbook_data(ctx, playbook_id)
            for name, sig in data.metrics.items():
                for q in (sig.query, sig.per_instance_query):
                    if q:
                        queries[f"{playbook_id}.{name}"] = q
        for where, q in queries.items():
            for sel in selectors(q):
                for s in await src.instant(sel, sc.now_dt):
                    pod = s.labels.get("pod") or s.labels.get("exported_pod") or "(no pod)"
                    read.setdefault(where, set()).add(pod)
    finally:
        await ctx.sources.close()
    assert "bad_rollout.finish_length_share" in queries
    assert read, "no query selected any series"
    others = {
        w: sorted(p for p in pods if not p.startswith(f"{deployment}-")) for w, pods in read.items()
    }
    assert not any(others.values()), {w: p for w, p in others.items() if p}
