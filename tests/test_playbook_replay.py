"""Playbooks walked in the TUI on replayed evidence bundles (no fixture data fed to the
screen): each bundle is recorded from the official Kubernetes client against the local API
server's fixture clusters, then ``--replay`` answers the playbook's collection offline and
its automated checks find the planted cause.

* pod_pending on ``pend-04``: the NVIDIA device plugin DaemonSet is scheduled nowhere;
* bad_rollout on ``rollout``: image/args changed, pods Ready before the model loaded,
  old and new versions serving together;
* nccl_hang on ``train-job``: rank 2 never logged while the others hit the watchdog;
* cuda_oom on ``oom-serving``: a vLLM pod restarting after a runtime OOM whose message
  shows fragmentation, with no concurrency limit in its engine arguments;
* low_util on ``small-model``: an 8B model on tensor-parallel 8 with GPU util 35 % and
  SM active 0.2 while requests keep coming (metrics from a real Prometheus).
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from cockpit.app import CockpitApp
from cockpit.clock import Clock
from cockpit.collect.playbooks import collect_playbook_data
from cockpit.config import PrometheusSettings, ServiceSettings, Settings
from cockpit.context import AppContext
from cockpit.incident import ItemStatus
from cockpit.screens.playbook import PlaybookScreen
from cockpit.sources.base import Sources
from cockpit.sources.bundle import BundleMeta, BundleWriter, Recorder
from cockpit.sources.kubernetes import KubeSource
from cockpit.ui.plugins import load_panels
from cockpit.wiring import build_context

AT = datetime(2026, 11, 29, 21, 0, tzinfo=UTC)

CASES = {
    # playbook: (cluster, selector, scope typed in the screen, planted items)
    "pod_pending": ("pend-04", "", "", ["device_plugin", "requests"]),
    "bad_rollout": ("rollout", "app=vllm", "", ["diff", "mixed_versions", "readiness"]),
    "nccl_hang": ("train-job", "", "llama-ft", ["first_rank"]),
    "cuda_oom": ("oom-serving", "app=vllm", "", ["allocator", "limits", "phase"]),
    "low_util": ("small-model", "app=vllm", "", None),
}


def _small_model_cluster(kube_api: Any) -> None:
    from tests.fixtures.kube.objects import container, pod

    c = kube_api.cluster("small-model")
    if c.objects:
        return
    c.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "llm"}, "spec": {}})
    args = ["--model", "/models/Meta-Llama-3-8B-Instruct", "--tensor-parallel-size", "8"]
    c.add(pod("vllm-0", containers=[container(gpus=8, args=args)], labels={"app": "vllm"}))


def _low_util_history() -> str:
    """26 h of one busy-but-idle-GPU replica: util 35 %, SM active 0.2, 40 running, 0 waiting."""
    end = int(AT.timestamp())
    times = range(end - 26 * 3600, end + 1, 300)
    lab = 'namespace="llm",pod="vllm-0"'
    out = []
    gauges = {
        "DCGM_FI_DEV_GPU_UTIL": 35.0,
        "DCGM_FI_PROF_SM_ACTIVE": 0.2,
        "vllm:num_requests_running": 40.0,
        "vllm:num_requests_waiting": 0.0,
    }
    for name, value in gauges.items():
        out.append(f"# TYPE {name} gauge")
        out.extend(f"{name}{{{lab}}} {value} {t}" for t in times)
    for name, per_s in (
        ("container_cpu_cfs_periods", 10.0),
        ("container_cpu_cfs_throttled_periods", 0.1),
    ):
        out.append(f"# TYPE {name} counter")
        out.extend(f"{name}_total{{{lab}}} {per_s * (t - times[0]):.1f} {t}" for t in times)
    out.append("# EOF")
    return "\n".join(out) + "\n"


def _oom_cluster(kube_api: Any) -> None:
    from playbook_scenarios import OOM_ARGS, OOM_LOG
    from tests.fixtures.kube.objects import container, pod

    c = kube_api.cluster("oom-serving")
    if c.objects:
        return
    c.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "llm"}, "spec": {}})
    args = list(OOM_ARGS)
    c.add(
        pod(
            "vllm-0",
            containers=[container(gpus=1, args=args)],
            labels={"app": "vllm"},
            restarts=2,
            last_terminated={
                "exitCode": 1,
                "reason": "Error",
                "finishedAt": "2026-11-29T20:58:00Z",
            },
        )
    )
    # The crashed container's log holds the OOM (kubectl logs --previous); the new one is
    # still loading the model.
    c.add_log("llm", "vllm-0", OOM_LOG, previous=True)
    c.add_log("llm", "vllm-0", "INFO 02-10 18:07:02 api_server.py:1] Loading model weights\n")


async def _record(
    kubeconfig: Path,
    cluster: str,
    selector: str,
    pid: str,
    scope: str,
    path: Path,
    prom_url: str = "",
) -> None:
    from cockpit.screens.playbook import parse_scope
    from cockpit.sources.prometheus import PrometheusSource

    live = KubeSource(kubeconfig=kubeconfig, context=cluster, namespace="llm")
    metrics = PrometheusSource(PrometheusSettings(url=prom_url)) if prom_url else None
    writer = BundleWriter(
        path,
        BundleMeta(
            recorded_at=AT,
            window_start=AT,
            window_end=AT,
            scope={"namespace": "llm", "selector": selector},
        ),
    )
    ctx = AppContext(
        settings=Settings(service=ServiceSettings(namespace="llm", selector=selector)),
        sources=Sources(
            kube=Recorder(live, "kube", writer),
            metrics=Recorder(metrics, "metrics", writer) if metrics else None,
        ),
        clock=Clock(frozen_at=AT),
        lang="en",
    )
    pods, job = parse_scope(scope)
    try:
        await collect_playbook_data(ctx, pid, pods=pods, job=job)
    finally:
        writer.close()
        await live.close()
        if metrics is not None:
            await metrics.close()


@pytest.mark.parametrize("pid", sorted(CASES))
async def test_playbook_on_a_replayed_bundle(
    tmp_path: Path, kubeconfig: Path, kube_api: Any, pid: str
) -> None:
    cluster, selector, scope, planted = CASES[pid]
    if pid == "nccl_hang":
        from tests.fixtures.kube.objects import container, pod
        from tests.test_playbook_collect import _wd  # the job's watchdog lines

        c = kube_api.cluster("train-job")
        if not c.objects:
            c.add(
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "llm"}, "spec": {}}
            )
            for i in (3, 0, 2, 1):
                labels = {
                    "training.kubeflow.org/job-name": "llama-ft",
                    "training.kubeflow.org/replica-index": str(i),
                }
                c.add(pod(f"llama-ft-worker-{i}", containers=[container(gpus=1)], labels=labels))
                c.add_log("llm", f"llama-ft-worker-{i}", "" if i == 2 else _wd(i) + "\n")
        kubeconfig = kube_api.write_kubeconfig(tmp_path / "kc", ["train-job"], namespace="llm")
    if pid == "cuda_oom":
        _oom_cluster(kube_api)
        kubeconfig = kube_api.write_kubeconfig(tmp_path / "kc", ["oom-serving"], namespace="llm")
    bundle = tmp_path / f"{pid}.jsonl.gz"
    if pid == "low_util":
        from om_prometheus import serve_openmetrics
        from playbook_scenarios import PLANTED

        planted = PLANTED["low_util"]
        _small_model_cluster(kube_api)
        kubeconfig = kube_api.write_kubeconfig(tmp_path / "kc", ["small-model"], namespace="llm")
        with serve_openmetrics(_low_util_history(), tmp_path / "prom") as url:
            await _record(kubeconfig, cluster, selector, pid, scope, bundle, prom_url=url)
    else:
        await _record(kubeconfig, cluster, selector, pid, scope, bundle)

    ctx = build_context(
        argparse.Namespace(replay=str(bundle), lang="en", state_dir=str(tmp_path / "state"))
    )
    assert ctx.sources.kube is not None and ctx.clock.frozen
    ctx.panels = [p for p in load_panels() if p.name == "golden_signals"]
    app = CockpitApp(ctx=ctx, start_step="B")
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        app.open_playbook(pid)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, PlaybookScreen)
        if scope:
            box = screen.query_one("#pb-scope")
            box.value = scope
            await box.action_submit()
        for _ in range(4):
            await app.workers.wait_for_complete()
            await pilot.pause()
        for item in planted:
            assert screen.results[item].status is ItemStatus.PROBLEM, (item, screen.results[item])
        await pilot.press("alt+s")  # record the results in the incident
        await pilot.pause()
    assert pid in ctx.session.incident.playbooks
