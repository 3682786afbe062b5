"""The playbook collector against the local Kubernetes API server (the official client
over HTTP), with the checks finding each fixture cluster's planted cause."""

from __future__ import annotations

from pathlib import Path

from testkit import make_ctx

from cockpit.analysis.playbooks.result import ItemStatus
from cockpit.analysis.playbooks.run import run_playbook
from cockpit.analysis.playbooks.spec import load_playbook
from cockpit.collect.playbooks import collect_playbook_data
from cockpit.config import ServiceSettings, Settings
from cockpit.context import AppContext, Sources
from cockpit.sources.kubernetes import KubeSource


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
