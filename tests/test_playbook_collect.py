"""The playbook collector against the local Kubernetes API server (the official client
over HTTP), with the checks finding each fixture cluster's planted cause."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cockpit.analysis.playbooks.run import run_playbook
from cockpit.analysis.playbooks.spec import load_playbook
from cockpit.collect.playbooks import collect_playbook_data
from cockpit.config import ServiceSettings, Settings
from cockpit.context import AppContext
from cockpit.incident import ItemStatus
from cockpit.sources.base import Sources
from cockpit.sources.kubernetes import KubeSource
from testkit import make_ctx
from tests.fixtures.kube.objects import container, pod


def _ctx(tmp_path: Path, kubeconfig: Path, cluster: str, selector: str = "") -> AppContext:
    src = KubeSource(kubeconfig=kubeconfig, context=cluster, namespace="llm")
    settings = Settings(service=ServiceSettings(namespace="llm", selector=selector))
    return make_ctx(
        tmp_path,
        sources=Sources(kube=src, missing={"metrics": "not configured", "gpu": "no NVML"}),
        settings=settings,
    )


async def test_pod_pending_device_plugin_not_scheduled(tmp_path: Path, kubeconfig: Path) -> None:
    ctx = _ctx(tmp_path, kubeconfig, "pend-04")
    try:
        data = await collect_playbook_data(ctx, "pod_pending")
    finally:
        await ctx.sources.close()
    assert "kube" not in data.missing
    assert [p.meta.name for p in data.pods] == ["llm-7b-0"]
    assert data.daemonsets == {"kube-system/nvidia-device-plugin": (0, 0)}
    assert any(e.reason == "FailedScheduling" for e in data.events)
    res = {r.item: r for r in run_playbook(load_playbook("pod_pending"), data)}
    assert res["device_plugin"].status is ItemStatus.PROBLEM
    assert "nvidia-device-plugin" in res["device_plugin"].finding_args["ds"]
    assert res["requests"].status is ItemStatus.PROBLEM  # 1 GPU asked, no node has any
    # "didn't match affinity" on CPU nodes is not the cause here
    assert res["placement"].status is ItemStatus.OK


async def test_bad_rollout_mixed_versions_and_readiness(tmp_path: Path, kubeconfig: Path) -> None:
    ctx = _ctx(tmp_path, kubeconfig, "rollout", selector="app=vllm")
    try:
        data = await collect_playbook_data(ctx, "bad_rollout")
    finally:
        await ctx.sources.close()
    assert len(data.pods) == 3 and len(data.logs) == 3
    assert data.missing.get("metrics") == "not configured"
    res = {r.item: r for r in run_playbook(load_playbook("bad_rollout"), data)}
    assert res["diff"].status is ItemStatus.PROBLEM
    assert res["mixed_versions"].status is ItemStatus.PROBLEM
    assert res["readiness"].status is ItemStatus.PROBLEM  # /health, no startupProbe


async def test_unreachable_cluster_is_not_available(tmp_path: Path) -> None:
    cfg = tmp_path / "kubeconfig"
    cfg.write_text(
        '{"apiVersion": "v1", "kind": "Config", "clusters": [{"name": "x", "cluster": '
        '{"server": "http://127.0.0.1:9"}}], "users": [{"name": "u", "user": {"token": "t"}}], '
        '"contexts": [{"name": "x", "context": {"cluster": "x", "user": "u"}}], '
        '"current-context": "x"}'
    )
    ctx = _ctx(tmp_path, cfg, "x")
    try:
        data = await collect_playbook_data(ctx, "nccl_hang")
    finally:
        await ctx.sources.close()
    assert "kube" in data.missing
    res = run_playbook(load_playbook("nccl_hang"), data)
    auto = [r for r in res if r.finding_key == "playbook.not_available"]
    assert auto and all(r.status is ItemStatus.NOT_AVAILABLE for r in auto)


def _wd(rank: int) -> str:
    return (
        f"[rank{rank}]:[E1129 10:00:02.000000000 ProcessGroupNCCL.cpp:632] [Rank {rank}] Watchdog "
        "caught collective operation timeout: WorkNCCL(SeqNum=77, OpType=ALLREDUCE, NumelIn=8, "
        "NumelOut=8, Timeout(ms)=600000) ran for 600100 milliseconds before timing out."
    )


async def test_nccl_job_pods_by_label_in_rank_order(tmp_path: Path, kube_api: Any) -> None:
    """A PyTorchJob's pods found by its job-name label, ranks from the replica index; the
    rank whose pod logged nothing is the one to look at."""
    cluster = kube_api.cluster("train-job")
    if not cluster.objects:
        cluster.add(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "llm"}, "spec": {}}
        )
        for i in (3, 0, 2, 1):  # listed out of rank order on purpose
            labels = {
                "training.kubeflow.org/job-name": "llama-ft",
                "training.kubeflow.org/replica-index": str(i),
            }
            cluster.add(pod(f"llama-ft-worker-{i}", containers=[container(gpus=1)], labels=labels))
            cluster.add_log("llm", f"llama-ft-worker-{i}", "" if i == 2 else _wd(i) + "\n")
    cfg = kube_api.write_kubeconfig(tmp_path / "kc", ["train-job"], namespace="llm")
    ctx = _ctx(tmp_path, cfg, "train-job")
    try:
        data = await collect_playbook_data(ctx, "nccl_hang", job="llama-ft")
    finally:
        await ctx.sources.close()
    assert [p.meta.name for p in data.pods] == [f"llama-ft-worker-{i}" for i in range(4)]
    res = {r.item: r for r in run_playbook(load_playbook("nccl_hang"), data)}
    first = res["first_rank"]
    assert first.finding_args["rank"] == 2
    assert first.finding_args["pattern"] == "missing_ranks"


async def test_cuda_oom_allocator_from_metrics_alone(
    tmp_path: Path, worked_example_prom: Any
) -> None:
    """Without Kubernetes (no OOM message to read), the allocator item still shows the
    caching allocator's reserved and reserved-but-unallocated memory from the app's
    metrics, now against the baseline, and leaves the decision open (no request size)."""
    from cockpit.config import PrometheusSettings
    from cockpit.sources.prometheus import PrometheusSource

    sc = worked_example_prom.scenario
    settings = Settings(
        prometheus=PrometheusSettings(url=worked_example_prom.url),
        service=ServiceSettings(namespace="llm-serving"),
    )
    src = PrometheusSource(settings.prometheus)
    ctx = make_ctx(
        tmp_path,
        sources=Sources(metrics=src, missing={"kube": "not configured", "gpu": "no NVML"}),
        settings=settings,
        frozen_at=sc.now_dt,
    )
    try:
        data = await collect_playbook_data(ctx, "cuda_oom")
        reserved = await src.instant(
            'max(pytorch_cuda_memory_reserved_bytes{namespace="llm-serving"})', sc.now_dt
        )
        unalloc = await src.instant(
            'max(pytorch_cuda_memory_reserved_bytes{namespace="llm-serving"}'
            ' - pytorch_cuda_memory_allocated_bytes{namespace="llm-serving"})',
            sc.now_dt,
        )
    finally:
        await ctx.sources.close()
    res = {r.item: r for r in run_playbook(load_playbook("cuda_oom"), data)}
    got = res["allocator"]
    assert got.status is ItemStatus.OPEN
    assert got.finding_key == "playbook.finding.oom.allocator.metrics_only"
    values = {e.label_key.rsplit(".", 1)[1]: e for e in got.evidence}
    assert float(values["torch_reserved"].value) == round(reserved[0].v / 2**30, 2)
    assert float(values["torch_unallocated"].value) == round(unalloc[0].v / 2**30, 2)
    # the worked example's fragmentation rose from 12 % to 34 %: more unallocated than a day ago
    assert float(values["torch_unallocated"].value) > float(
        values["torch_unallocated"].label_args["baseline"]
    )
    assert all(e.source == "metrics" and e.query for e in got.evidence)
    # the checks that need Kubernetes say so instead of guessing
    assert res["phase"].status is ItemStatus.NOT_AVAILABLE


async def test_ttft_playbook_falls_back_to_the_quiet_time_before(
    tmp_path: Path, prometheus_scenario: Any
) -> None:
    """Three hours of history, no day before: the playbook compares with the time before
    the incident window, as the drilldown does, and finds the long-prompt queue (it said
    "as usual" when it had nothing to compare with)."""
    data = await _metrics_only(tmp_path, prometheus_scenario("long_prompts"), "ttft_spike")
    queue = data.metrics["queue_time_p99"]
    assert queue.baseline_from == "quiet" and queue.baseline is not None
    assert queue.baseline.value is not None and queue.now.value is not None
    res = {r.item: r for r in run_playbook(load_playbook("ttft_spike"), data)}
    assert res["queue"].status is ItemStatus.PROBLEM
    assert "prompt_tokens_p90" in res["queue"].finding_args["signals"]
    labels = [e.label_key for e in res["queue"].evidence]
    assert "playbook.ev.signal_baseline_quiet" in labels
    # TTFT worse while TPOT is not: queueing and prefill first (the seed's reading rule)
    assert res["tpot_rule"].finding_key == "playbook.finding.ttft.rule_queue_prefill"


def test_no_baseline_is_not_as_usual() -> None:
    from cockpit.analysis.playbooks.data import PlaybookData, Signal
    from cockpit.models import Reading

    data = PlaybookData(
        missing={"kube": "x"},
        metrics={
            "queue_time_p99": Signal(
                now=Reading.known(1700.0, "ms"), baseline=Reading.unknown("no series")
            )
        },
    )
    res = {r.item: r for r in run_playbook(load_playbook("ttft_spike"), data)}
    assert res["queue"].status is ItemStatus.OPEN
    assert res["queue"].finding_key == "playbook.finding.no_baseline"
    assert res["queue"].evidence[0].label_key == "playbook.ev.signal_no_baseline"


async def test_recovery_checks_the_cause_not_only_the_gateway(
    tmp_path: Path, prometheus_scenario: Any
) -> None:
    """Step I on the thermal incident, still going on: the hot GPU's temperature and clock
    are checked beside the gateway latency, and none of them is back."""
    from cockpit.analysis.recovery import LineStatus
    from cockpit.collect.recovery import fetch_recovery
    from cockpit.config import PrometheusSettings
    from cockpit.sources.prometheus import PrometheusSource

    srv = prometheus_scenario("thermal_replica")
    settings = Settings(
        prometheus=PrometheusSettings(url=srv.url), service=ServiceSettings(namespace="llm")
    )
    ctx = make_ctx(
        tmp_path,
        lang="en",
        sources=Sources(metrics=PrometheusSource(settings.prometheus)),
        settings=settings,
        frozen_at=srv.scenario.now_dt,
    )
    try:
        result = await fetch_recovery(ctx, 15)
    finally:
        await ctx.sources.close()
    lines = {line.name: line for line in result.lines}
    assert result.recovered is False
    temp = next(line for name, line in lines.items() if "temperature" in name.lower())
    assert temp.status is LineStatus.NOT_RECOVERED
    clock = next(line for name, line in lines.items() if "clock" in name.lower())
    # a clock is bad when it is low: its limit is below its baseline
    assert clock.limit is not None and clock.baseline is not None
    assert clock.limit < clock.baseline
    assert any("latency" in name.lower() for name in lines)


@pytest.mark.parametrize("scenario", ["sglang_stack", "tgi_stack"])
async def test_ttft_playbook_reads_the_detected_stack(
    tmp_path: Path, prometheus_scenario: Any, scenario: str
) -> None:
    """The playbook's serving signals come from the detected stack's profile, in its own
    metric names (it read vLLM's names only and found nothing on SGLang or TGI)."""
    data = await _metrics_only(tmp_path, prometheus_scenario(scenario), "ttft_spike")
    stack = scenario.split("_")[0]
    waiting = data.metrics["requests_waiting"]
    assert waiting.now.value is not None and stack in waiting.query.lower()
    assert "vllm:" not in waiting.query
    res = {r.item: r for r in run_playbook(load_playbook("ttft_spike"), data)}
    assert res["queue"].status is ItemStatus.PROBLEM
    assert "requests_waiting" in res["queue"].finding_args["signals"]


async def _metrics_only(tmp_path: Path, srv: Any, playbook: str) -> Any:
    """A playbook's data from a served scenario's Prometheus alone (no Kubernetes, no
    GPU), at the scenario's now, namespace ``llm``."""
    from cockpit.config import PrometheusSettings
    from cockpit.sources.prometheus import PrometheusSource

    settings = Settings(
        prometheus=PrometheusSettings(url=srv.url), service=ServiceSettings(namespace="llm")
    )
    ctx = make_ctx(
        tmp_path,
        sources=Sources(
            metrics=PrometheusSource(settings.prometheus),
            missing={"kube": "not configured", "gpu": "no NVML"},
        ),
        settings=settings,
        frozen_at=srv.scenario.now_dt,
    )
    try:
        return await collect_playbook_data(ctx, playbook)
    finally:
        await ctx.sources.close()


async def test_gpu_checks_read_dcgm_when_there_is_no_nvml_here(
    tmp_path: Path, dcgm_prometheus: Any
) -> None:
    """On a bastion (no libnvidia-ml) the GPU items of a playbook read the pods' GPUs from
    dcgm-exporter through a real Prometheus, as the GPU panel does: a named pod's GPUs, or
    without Kubernetes or a pod named, the nodes the exporter maps the service's pods to;
    a service none of whose pods is mapped leaves the GPU source missing, saying why DCGM
    could not stand in, in the run's language."""
    from cockpit.config import PrometheusSettings
    from cockpit.models.messages import msg
    from cockpit.sources.prometheus import PrometheusSource

    async def collect(namespace: str, lang: str = "en", **kw: Any) -> Any:
        settings = Settings(
            prometheus=PrometheusSettings(url=dcgm_prometheus.url),
            service=ServiceSettings(namespace=namespace),
        )
        sources = Sources(metrics=PrometheusSource(settings.prometheus))
        sources.set_missing("kube", msg("source.missing.no_kubeconfig"))
        sources.set_missing("gpu", msg("source.missing.no_nvml"))
        ctx = make_ctx(tmp_path, sources=sources, settings=settings, frozen_at=dcgm_prometheus.at)
        ctx.lang = lang
        try:
            return await collect_playbook_data(ctx, "cuda_oom", **kw)
        finally:
            await ctx.sources.close()

    named = await collect("llm", pods=["vllm-0"])
    assert "gpu" not in named.missing
    assert [s.node for s in named.gpus] == ["gpu-node-b"]
    assert [g.index for g in named.gpus[0].gpus] == [0]
    assert named.gpus[0].gpus[0].mem_total.value is not None
    budget = {r.item: r for r in run_playbook(load_playbook("cuda_oom"), named)}["budget"]
    assert "gpu" not in budget.missing
    service = await collect("llm")
    assert "gpu" not in service.missing
    assert [s.node for s in service.gpus] == ["gpu-node-b"]
    assert len(service.gpus[0].gpus) == 4
    for lang, why in (
        ("en", "DCGM: no GPU series of the service's pods"),
        ("zh", "DCGM：没有该服务 pod 的 GPU 序列"),
    ):
        none = await collect("batch", lang)
        assert none.gpus == []
        assert none.missing["gpu"].startswith(
            "no NVML library (libnvidia-ml.so.1): not a GPU node; use DCGM (--node); " + why
        ), none.missing["gpu"]
