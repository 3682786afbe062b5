"""A label selector narrows the metrics through Kubernetes: its pods are listed from a
local API server of fixtures, and the series are matched by the generated names of their
workloads (every revision), since series carry pod names, not pod labels."""

from __future__ import annotations

from pathlib import Path

from cockpit.analysis.podnames import owner_workload, workload_pod_regex, workloads_pod_regex
from cockpit.clock import Clock
from cockpit.collect.base import ScopeResolution, scope_for
from cockpit.config import ServiceSettings, Settings
from cockpit.context import AppContext
from cockpit.sources.base import Sources
from cockpit.sources.kubernetes import KubeSource


def _ctx(service: ServiceSettings, kube: KubeSource | None) -> AppContext:
    sources = Sources(kube=kube)
    if kube is None:
        sources.missing["kube"] = "no kubeconfig"
    return AppContext(settings=Settings(service=service), sources=sources, clock=Clock(), lang="en")


async def test_selector_resolves_to_the_deployment_of_its_pods(kubeconfig: Path) -> None:
    kube = KubeSource(kubeconfig=kubeconfig, context="rollout", timeout_s=5)
    ctx = _ctx(ServiceSettings(namespace="llm", selector="app=vllm"), kube)
    try:
        scope = await scope_for(ctx)
    finally:
        await kube.close()
    # Two revisions' pods (vllm-6f7c9d-…, vllm-8b5d4c-…) are one Deployment: matched by
    # name pattern, so earlier revisions' series (the baseline) stay in scope.
    assert scope["pod"] == workload_pod_regex("vllm")
    res = ctx.metrics.scope
    assert isinstance(res, ScopeResolution) and res.workloads == ["Deployment/vllm"]
    assert not res.failure


async def test_selector_that_matches_nothing_or_no_kubernetes_narrows_nothing(
    kubeconfig: Path,
) -> None:
    kube = KubeSource(kubeconfig=kubeconfig, context="rollout", timeout_s=5)
    ctx = _ctx(ServiceSettings(namespace="llm", selector="app=nothing-here"), kube)
    try:
        assert (await scope_for(ctx))["pod"] == ""
    finally:
        await kube.close()
    assert ctx.metrics.scope.failure == "no pod matches the selector now"
    ctx = _ctx(ServiceSettings(namespace="llm", selector="app=vllm"), None)
    assert (await scope_for(ctx))["pod"] == ""
    assert ctx.metrics.scope.failure == "no kubeconfig"


async def test_a_deployment_wins_over_the_selector_without_asking_kubernetes() -> None:
    ctx = _ctx(ServiceSettings(namespace="llm", selector="app=vllm", deployment="vllm-x"), None)
    assert (await scope_for(ctx))["pod"] == workload_pod_regex("vllm-x")
    assert ctx.metrics.scope is None


def test_owners_name_the_workload() -> None:
    assert owner_workload("a-5d8f-x2x4z", [("ReplicaSet", "a-5d8f")]) == ("Deployment", "a")
    assert owner_workload("db-3", [("StatefulSet", "db")]) == ("StatefulSet", "db")
    assert owner_workload("job-abcde", [("Job", "job")]) == ("Pod", "job-abcde")
    both = workloads_pod_regex([("Deployment", "a"), ("Pod", "x.y"), ("Deployment", "a")])
    assert both == workload_pod_regex("a") + "|x\\.y"
