"""Kubernetes: the source against the local API server, the Pending analysis on every
``pod_pending`` case, each reason class, rollout/Helm/node changes, error handling in the
panel, and kubectl against the same server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cockpit.analysis.scheduling import (
    PreemptionVerdict,
    ReasonClass,
    explain_failed_scheduling,
    parse_failed_scheduling,
    paste_evidence,
)
from cockpit.collect.kube_gather import gather_changes, gather_pending
from cockpit.sources.base import ErrorKind, SourceError
from cockpit.sources.kube_permissions import check_permissions
from cockpit.sources.kubernetes import KubeSource
from tests.backends.kube_api import Fault, KubeApiServer
from tests.conftest import DATA
from tests.fixtures.kube.objects import T0

CASES = [
    json.loads(line)
    for line in (DATA / "cases.jsonl").read_text().splitlines()
    if line.strip() and json.loads(line)["category"] == "pod_pending"
]


def src(kubeconfig: Path, cluster: str, timeout: float = 5.0) -> KubeSource:
    return KubeSource(kubeconfig=kubeconfig, context=cluster, timeout_s=timeout)


# -- parser ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case_artifact_explained(case: dict[str, Any]) -> None:
    art = case["artifact"]
    exp = explain_failed_scheduling(art)
    want = case["expected"]
    if "nodes_total" in want:
        assert exp.message.nodes_total == want["nodes_total"]
    reasons = want.get("reasons", {})
    for text, count in reasons.items():
        if isinstance(count, int):
            assert exp.reasons.get(text) == count, (text, exp.reasons)
    if case["id"] == "pend-03":
        assert exp.message.reasons[0].taint == "gpu="
        assert exp.message.reasons[0].cls is ReasonClass.TAINT
        assert exp.likely == "missing_toleration"
    if "preemption_helpful" in want:
        assert exp.preemption_helpful is want["preemption_helpful"]
    if case["id"] == "pend-06":
        assert exp.likely == "gang_scheduler_mismatch" and exp.subtype == "gang_not_ready"
        assert (exp.min_available, exp.tasks_known, exp.scheduler_name) == (1, 0, "vocalno")
    if case["id"] == "pend-01":
        assert exp.likely == "device_plugin_not_reporting" and exp.preemption_possible is False
    if case["id"] == "pend-04":
        assert exp.likely == "device_plugin_not_scheduled" and exp.device_plugin_desired == 0
    assert exp.commands[0] == "kubectl describe pod <pod>"


REASON_MESSAGES = [
    ("0/3 nodes are available: 3 Insufficient nvidia.com/gpu.", ReasonClass.INSUFFICIENT_GPU, 3),
    (
        "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.shared.",
        ReasonClass.INSUFFICIENT_GPU_SHARED,
        2,
    ),
    (
        "0/4 nodes are available: 4 Insufficient nvidia.com/mig-1g.10gb.",
        ReasonClass.INSUFFICIENT_MIG,
        4,
    ),
    ("0/5 nodes are available: 5 Insufficient cpu.", ReasonClass.INSUFFICIENT_CPU, 5),
    ("0/5 nodes are available: 5 Insufficient memory.", ReasonClass.INSUFFICIENT_MEMORY, 5),
    (
        "0/1 nodes are available: 1 Insufficient ephemeral-storage.",
        ReasonClass.INSUFFICIENT_EPHEMERAL,
        1,
    ),
    (
        "0/10 nodes are available: 1 node(s) had taint {workload: aiml}, that the pod didn't tolerate, 9 Insufficient nvidia.com/gpu.",
        ReasonClass.TAINT,
        1,
    ),
    (
        "0/3 nodes are available: 1 PodToleratesNodeTaints, 2 Insufficient nvidia.com/gpu.",
        ReasonClass.TAINT,
        1,
    ),
    (
        "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.",
        ReasonClass.NODE_AFFINITY,
        3,
    ),
    (
        "0/3 nodes are available: 3 node(s) didn't match pod affinity rules.",
        ReasonClass.POD_AFFINITY,
        3,
    ),
    (
        "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules.",
        ReasonClass.POD_ANTI_AFFINITY,
        3,
    ),
    ("0/2 nodes are available: 2 node(s) were unschedulable.", ReasonClass.UNSCHEDULABLE, 2),
    (
        "0/2 nodes are available: 2 node(s) had volume node affinity conflict.",
        ReasonClass.VOLUME,
        2,
    ),
    (
        "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling..",
        ReasonClass.VOLUME,
        None,
    ),
    ("0/6 nodes are available: 6 Too many pods.", ReasonClass.TOO_MANY_PODS, 6),
    (
        "1/1 tasks in gang unschedulable: pod group is not ready, 1 Pending, 1 minAvailable; Pending: 1 Undetermined",
        ReasonClass.GANG,
        None,
    ),
    (
        "couldn't assign flavors to pod set job: resource cpu unavailable in ClusterQueue",
        ReasonClass.QUEUE,
        None,
    ),
    (
        'pods "x" is forbidden: exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=4, used: requests.nvidia.com/gpu=8, limited: requests.nvidia.com/gpu=8',
        ReasonClass.QUOTA,
        None,
    ),
]


@pytest.mark.parametrize(("text", "cls", "count"), REASON_MESSAGES)
def test_reason_classes(text: str, cls: ReasonClass, count: int | None) -> None:
    msg = parse_failed_scheduling(text)
    hit = [r for r in msg.reasons if r.cls is cls]
    assert hit, [(r.cls, r.text) for r in msg.reasons]
    assert hit[0].count == count
    exp = explain_failed_scheduling(text)
    assert exp.findings and all(f.text("en") and f.text("zh") for f in exp.findings)


def test_taint_with_comma_and_sorted_counts() -> None:
    msg = parse_failed_scheduling(
        "0/12 nodes are available: 1 node(s) had taint {workload: aiml}, that the pod didn't "
        "tolerate, 10 Insufficient nvidia.com/gpu, 1 node(s) were unschedulable."
    )
    assert [(r.count, r.cls) for r in msg.reasons] == [
        (1, ReasonClass.TAINT),
        (10, ReasonClass.INSUFFICIENT_GPU),
        (1, ReasonClass.UNSCHEDULABLE),
    ]
    assert msg.reasons[0].taint == "workload=aiml"


def test_preemption_verdicts() -> None:
    msg = parse_failed_scheduling(
        "0/5 nodes are available: 5 Insufficient nvidia.com/gpu. preemption: 0/5 nodes are "
        "available: 2 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod.."
    )
    assert [(p.count, p.verdict) for p in msg.preemption] == [
        (2, PreemptionVerdict.NOT_HELPFUL),
        (3, PreemptionVerdict.NO_VICTIMS),
    ]
    assert msg.preemption_helpful is True
    assert explain_failed_scheduling(msg.raw).likely == "capacity_or_priority"


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_parser_never_raises(text: str) -> None:
    msg = parse_failed_scheduling(text)
    assert msg.raw == text.strip()
    explain_failed_scheduling(text)


def test_paste_evidence_from_kubectl_output() -> None:
    """Allocatable, requests, the device-plugin DaemonSet, schedulerName and taints are read
    from the kubectl output pasted around the message, and change the likely cause."""
    describe = "\n".join(
        [
            "Capacity:",
            "  cpu:             64",
            "  nvidia.com/gpu:  8",
            "Allocatable:",
            "  cpu:             63",
            "  nvidia.com/gpu:  0",
            "Taints:             nvidia.com/gpu=present:NoSchedule",
            "    Limits:",
            "      nvidia.com/gpu:  2",
        ]
    )
    msg = (
        "  Warning  FailedScheduling  3m  default-scheduler  0/8 nodes are available: "
        "8 Insufficient nvidia.com/gpu. preemption: 0/8 nodes are available: 8 No preemption "
        "victims found for incoming pod.."
    )
    ev = paste_evidence(describe)
    assert (ev.gpu_capacity, ev.gpu_allocatable, ev.gpu_request) == ([8], [0], 2)
    assert ev.taints[0].text() == "nvidia.com/gpu=present:NoSchedule"
    exp = explain_failed_scheduling(describe + "\n" + msg)
    assert exp.likely == "device_plugin_not_reporting" and exp.message.nodes_total == 8
    assert exp.message.raw == msg.strip()
    # The same message next to nodes that do advertise GPUs: capacity, not the plugin.
    busy = describe.replace("nvidia.com/gpu:  0", "nvidia.com/gpu:  8")
    assert explain_failed_scheduling(busy + "\n" + msg).likely == "capacity_or_priority"
    # ... and nodes smaller than the request.
    small = busy.replace("nvidia.com/gpu:  2", "nvidia.com/gpu:  16")
    assert explain_failed_scheduling(small + "\n" + msg).likely == "request_exceeds_node_capacity"
    ds = "\n".join(
        [
            "$ kubectl get ds -A",
            "NAMESPACE     NAME                             DESIRED   CURRENT   READY   UP-TO-DATE",
            "kube-system   kube-proxy                       6         6         6       6",
            "gpu-operator  nvidia-device-plugin-daemonset   0         0         0       0",
        ]
    )
    ev = paste_evidence(ds)
    assert [(d.name, d.desired, d.ready) for d in ev.plugin_daemonsets] == [
        ("nvidia-device-plugin-daemonset", 0, 0)
    ]
    assert explain_failed_scheduling(ds + "\n" + msg).likely == "device_plugin_not_scheduled"
    # A plugin DaemonSet that runs everywhere says nothing against the plugin.
    ok = ds.replace("daemonset   0         0         0", "daemonset   4         4         4")
    assert paste_evidence(ok).plugin_daemonsets[0].desired == 4


def test_message_alone_gpu_verdicts() -> None:
    """Without node facts: one verdict on every node -> the silent plugin first; verdicts
    that differ between nodes -> some nodes have GPUs (capacity); not every node short of
    GPUs -> undecided."""
    one = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.."
    assert explain_failed_scheduling(one).likely == "device_plugin_not_reporting"
    part = "0/5 nodes are available: 2 node(s) didn't match Pod's node affinity/selector, 3 Insufficient nvidia.com/gpu."
    assert explain_failed_scheduling(part).likely == "device_plugin_or_capacity"
    plugin_log = part + "\nI0101 00:00:00 main.go:1] No devices found. Waiting indefinitely."
    assert explain_failed_scheduling(plugin_log).likely == "device_plugin_not_reporting"


def test_gang_messages_and_scheduler_name() -> None:
    seen = "1/1 tasks in gang unschedulable: pod group is not ready, 1 Pending, 2 minAvailable; Pending: 1 Undetermined"
    exp = explain_failed_scheduling(seen)
    assert (exp.likely, exp.subtype, exp.min_available, exp.tasks_known) == (
        "gang_not_ready",
        "gang_not_ready",
        2,
        1,
    )
    none = "  - message: '2/0 tasks in gang unschedulable: 0 nodes are available'\n    reason: NotEnoughResources"
    exp = explain_failed_scheduling(none)
    assert (exp.likely, exp.min_available, exp.tasks_known) == ("gang_scheduler_mismatch", 2, 0)
    assert exp.message.raw == "2/0 tasks in gang unschedulable: 0 nodes are available"
    # A gang that Volcano sees, but the pasted pod names another scheduler.
    other = seen + "\nspec:\n  schedulerName: default-scheduler"
    exp = explain_failed_scheduling(other)
    texts = " ".join(f.text("en") for f in exp.findings)
    assert exp.likely == "gang_scheduler_mismatch" and "typo" not in texts
    typo = seen + '\n{"spec": {"schedulerName": "volcnao"}}'
    texts = " ".join(f.text("en") for f in explain_failed_scheduling(typo).findings)
    assert "typo of “volcano”" in texts


def test_future_wording_kept_as_other() -> None:
    msg = parse_failed_scheduling("0/7 nodes are available: 7 node(s) had a brand new reason.")
    assert msg.nodes_total == 7
    assert msg.reasons[0].cls is ReasonClass.OTHER and msg.reasons[0].count == 7


# -- Pending analysis against the API server ---------------------------------------------------------
EXPECTED_LIKELY = {
    "pend-01": "device_plugin_not_reporting",
    "pend-03": "missing_toleration",
    "pend-04": "device_plugin_not_scheduled",
    "pend-06": "gang_scheduler_mismatch",
}


@pytest.mark.parametrize("case_id", sorted(EXPECTED_LIKELY))
async def test_pending_cases_against_cluster(kubeconfig: Path, case_id: str) -> None:
    s = src(kubeconfig, case_id)
    try:
        rep = await gather_pending(s)
    finally:
        await s.close()
    assert len(rep.analyses) == 1 and not rep.failures
    a = rep.analyses[0]
    assert a.likely == EXPECTED_LIKELY[case_id]
    texts = " ".join(f.text("en") for f in a.findings)
    assert a.commands[:3][0].startswith("kubectl describe pod")
    assert any("custom-columns=NAME:.metadata.name,GPU" in c for c in a.commands)
    if case_id == "pend-01":
        row = a.rows[0]
        assert row.gpu_node and row.gpu_allocatable == 0 and row.device_plugin == "ready"
        assert "device plugin reports none" in texts
    if case_id == "pend-03":
        assert a.rows[0].taints_blocking == ["gpu:NoSchedule"]
        assert "{key: gpu, operator: Exists, effect: NoSchedule}" in texts
        assert "device-plugin DaemonSet needs the same toleration" in texts
    if case_id == "pend-04":
        gpu = [r for r in a.rows if r.gpu_node]
        assert len(gpu) == 4 and a.cpu_nodes == 2 and a.device_plugin_desired == 0
        assert all(not r.blockers or r.blockers == ["insufficient_gpu"] for r in gpu)
        assert "is noise" in texts
    if case_id == "pend-06":
        assert a.message is None and a.gangs[0].min_member == 1
        assert "sees no member pods" in texts and "vocalno" in texts


async def test_free_gpus_only_behind_a_taint_is_a_missing_toleration(kubeconfig: Path) -> None:
    """Two nodes full, two tainted nodes with every GPU free: the pod waits for a
    toleration, not for capacity or priority (preemption cannot help it either)."""
    s = src(kubeconfig, "taint-free")
    try:
        rep = await gather_pending(s)
    finally:
        await s.close()
    a = rep.analyses[0]
    assert a.likely == "missing_toleration", a.likely
    texts = " ".join(f.text("en") for f in a.findings)
    assert "dedicated=inference:NoSchedule" in texts
    assert "operator: Equal" in texts or "operator: Exists" in texts
    tainted = [r for r in a.rows if r.taints_blocking]
    assert sorted(r.name for r in tainted) == ["gpu-t1", "gpu-t2"]
    assert all(r.gpu_free == 8 for r in tainted)


async def test_capacity_newest_event_and_node_table(kubeconfig: Path) -> None:
    s = src(kubeconfig, "capacity")
    try:
        rep = await gather_pending(s)
    finally:
        await s.close()
    a = rep.analyses[0]
    # The newest FailedScheduling event wins over the stale PodScheduled condition.
    assert a.message_source == "event" and a.message is not None
    assert a.message.count_of(ReasonClass.INSUFFICIENT_GPU) == 3
    assert "Insufficient cpu" in a.stale_condition
    rows = {r.name: r for r in a.rows}
    assert {r.name for r in a.rows[:4]} == {"gpu-a", "gpu-b", "gpu-c", "gpu-d"}  # GPU nodes first
    assert (rows["gpu-a"].gpu_allocatable, rows["gpu-a"].gpu_requested) == (8, 8)
    # The Succeeded pod on gpu-c does not count.
    assert rows["gpu-c"].gpu_requested == 6 and rows["gpu-c"].device_plugin == "not_ready"
    # A node that lost a GPU from allocatable.
    assert rows["gpu-b"].gpu_unhealthy == 1 and rows["gpu-b"].gpu_capacity == 8
    assert rows["gpu-d"].cordoned and rows["gpu-d"].blockers == ["unschedulable"]
    assert not rows["cpu-0"].gpu_node and "node_affinity" in rows["cpu-0"].blockers
    quota = next(q for q in a.quotas if q.resource == "requests.nvidia.com/gpu")
    assert (quota.used, quota.hard, quota.pod_request, quota.exceeded) == ("12", "16", 4.0, False)
    assert a.priority == 100 and a.priority_class == "serving"
    texts = " ".join(f.text("en") for f in a.findings)
    assert "marked GPUs unhealthy" in texts and "gpu-b (7/8)" in texts
    assert "Kueue Workload job-vllm-70b" in texts
    assert "no lower-priority pods" in texts
    assert a.likely == "capacity_or_priority"
    assert "kubectl describe resourcequota -n llm" in a.commands


# -- changes ---------------------------------------------------------------------------------------
async def test_rollout_helm_nodes_restarts(kubeconfig: Path) -> None:
    s = src(kubeconfig, "rollout")
    try:
        rep = await gather_changes(s, T0 - timedelta(hours=24), T0 + timedelta(minutes=30))
    finally:
        await s.close()
    items = {i.key: i for i in rep.items}
    roll = items["rollout/llm/Deployment/vllm/2"]
    diff = {d.field: (d.old, d.new) for d in roll.diff}
    assert diff["image"] == ("vllm/vllm-openai:v0.6.3", "vllm/vllm-openai:v0.6.4")
    assert diff["digest"] == ("sha256:" + "a1" * 32, "sha256:" + "b2" * 32)
    assert diff["--max-num-seqs"] == ("256", "512")
    assert diff["--max-model-len"] == ("8192", "32768")
    assert diff["--gpu-memory-utilization"] == ("0.90", "0.95")
    assert diff["--quantization"] == ("", "fp8")
    assert diff["env VLLM_ATTENTION_BACKEND"] == ("FLASH_ATTN", "FLASHINFER")
    assert diff["env VLLM_USE_V1"] == ("", "1")
    assert diff["requests.memory"] == ("256Gi", "320Gi")
    helm = items["helm/llm/vllm/2"]
    hd = {d.field: (d.old, d.new) for d in helm.diff}
    assert hd["chart"] == ("vllm-0.4.1", "vllm-0.5.0") and hd["appVersion"] == ("0.6.3", "0.6.4")
    assert hd["values.engine.maxNumSeqs"] == ("256", "512")
    assert items["node/gpu-b/gpu-unhealthy"].diff[0].new == "7"
    joined = items["node/gpu-b/new"]
    assert {d.field: d.new for d in joined.diff}["driver"] == "560.35.03"
    assert any(i.kind == "node_condition" and "gpu-c NotReady" in i.summary for i in rep.items)
    restart = next(i for i in rep.items if i.kind == "restart")
    assert "OOMKilled" in restart.summary and "exit 137" in restart.summary
    assert any(i.kind == "config" and "vllm-config" in i.summary and i.in_window for i in rep.items)
    assert any(i.kind == "event" and "BackOff" in i.summary for i in rep.items)
    known = [i.at for i in rep.items if i.at is not None]
    assert known == sorted(known)
    rel = next(r for r in rep.releases if r.workload == "vllm")
    assert rel.mixed and rel.pods_per_revision == {"1": 1, "2": 2}
    assert all(w.early_s == 330 for w in rel.warmup)  # Ready 5.5 min before serving
    assert rel.restarts_new == 2 and rel.restarts_old == 0
    change = roll.to_change()
    assert change.kind == "rollout" and "--max-num-seqs: 256 → 512" in change.detail


# -- errors ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("fault", "kind", "needle"),
    [
        (
            Fault(path="/clusters/faulty/api/v1/nodes", status=403, times=1),
            ErrorKind.ACCESS_DENIED,
            "kubectl auth can-i list nodes",
        ),
        (
            Fault(path="/clusters/faulty/api/v1/nodes", status=500, times=1),
            ErrorKind.UNAVAILABLE,
            "HTTP 500",
        ),
        (
            Fault(path="/clusters/faulty/api/v1/nodes", delay=1.5, times=1),
            ErrorKind.TIMEOUT,
            "no answer",
        ),
        (
            Fault(path="/clusters/faulty/api/v1/nodes", truncate=True, times=1),
            ErrorKind.BAD_DATA,
            "not valid JSON",
        ),
    ],
)
async def test_source_errors_classified(
    kube_api: KubeApiServer, kubeconfig: Path, fault: Fault, kind: ErrorKind, needle: str
) -> None:
    kube_api.inject(fault)
    s = src(kubeconfig, "faulty", timeout=0.5)
    try:
        with pytest.raises(SourceError) as info:
            await s.list_nodes()
        f = info.value.failure
        assert f.kind is kind
        assert needle in f.message + f.hint
        # The next call works: one failure does not break the source.
        assert len(await s.list_nodes()) == 5
    finally:
        kube_api.clear_faults()
        await s.close()


async def test_optional_403_is_partial(kube_api: KubeApiServer, kubeconfig: Path) -> None:
    kube_api.inject(Fault(path="/clusters/faulty/api/v1/namespaces/llm/resourcequotas", status=403))
    s = src(kubeconfig, "faulty")
    try:
        rep = await gather_pending(s)
    finally:
        kube_api.clear_faults()
        await s.close()
    assert rep.analyses and rep.analyses[0].rows
    assert rep.failures[0].kind is ErrorKind.ACCESS_DENIED
    assert rep.failures[0].detail["command"] == "kubectl auth can-i list resourcequotas -n llm"


async def test_check_permissions(kube_api: KubeApiServer, kubeconfig: Path) -> None:
    kube_api.cluster("faulty").denied = {("list", "secrets"), ("get", "pods/log")}
    s = src(kubeconfig, "faulty")
    try:
        checks = await check_permissions(s)
    finally:
        kube_api.cluster("faulty").denied = set()
        await s.close()
    denied = {(c.verb, c.resource) for c in checks if c.allowed is False}
    assert denied == {("list", "secrets"), ("get", "pods")}
    log = next(c for c in checks if c.subresource == "log")
    assert log.command == "kubectl auth can-i get pods/log -n llm"
    assert all(c.allowed is not None for c in checks)


def test_only_reads_were_sent(kube_api: KubeApiServer) -> None:
    methods = {(r.method, r.path if r.method != "GET" else "") for r in kube_api.requests}
    assert methods <= {
        ("GET", ""),
        ("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"),
    }


# -- headless commands ----------------------------------------------------------------------------------
def test_cli_pending_and_changes(
    kubeconfig: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from cockpit.cli import main

    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    assert main(["pending", "--context", "pend-04", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["analyses"][0]["likely"] == "device_plugin_not_scheduled"
    assert main(["pending", "gpu-test", "--context", "pend-01", "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    assert "Device Plugin 没有上报 GPU" in out and "$ kubectl describe pod gpu-test -n llm" in out
    assert (
        main(["changes", "--context", "rollout", "--until", "2026-03-10T12:30:00Z", "--lang", "en"])
        == 0
    )
    out = capsys.readouterr().out
    assert (
        "--max-num-seqs: 256 → 512" in out and "Ready 330 s before the server logged ready" in out
    )
    # cockpit's words around the objects' names are in the reader's language
    assert (
        main(["changes", "--context", "rollout", "--until", "2026-03-10T12:30:00Z", "--lang", "zh"])
        == 0
    )
    out = capsys.readouterr().out
    assert "修订版本" in out and "--max-num-seqs: 256 → 512" in out
    assert " revision " not in out and " restarted: " not in out, out
    assert main(["changes", "--context", "capacity", "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    assert "已停止调度" in out and "cordoned" not in out, out


# -- kubectl against the same server -----------------------------------------------------------------
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")
def test_kubectl_get_describe_logs(kubeconfig: Path) -> None:
    env = dict(os.environ, KUBECONFIG=str(kubeconfig))

    def kc(*args: str) -> str:
        r = subprocess.run(["kubectl", *args], env=env, capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stderr
        return r.stdout

    out = kc("--context", "capacity", "get", "pods", "-A", "--field-selector=status.phase=Pending")
    assert "vllm-70b-0" in out and "Pending" in out and "batch-gpu-a-0" not in out
    out = kc("--context", "capacity", "get", "nodes")
    assert "SchedulingDisabled" in out and "gpu-b" in out
    out = kc("--context", "capacity", "describe", "pod", "vllm-70b-0")
    assert (
        "FailedScheduling" in out and "No preemption victims" in out and "nvidia.com/gpu:  4" in out
    )
    out = kc("--context", "rollout", "logs", "vllm-8b5d4c-ccccc", "--tail=1")
    assert out.strip() == 'INFO:     10.0.0.7:53122 - "POST /v1/completions HTTP/1.1" 200 OK'
    out = kc("--context", "rollout", "logs", "vllm-8b5d4c-ccccc", "--previous")
    assert "OutOfMemoryError" in out
    out = kc(
        "--context",
        "capacity",
        "get",
        "nodes",
        "-o",
        "custom-columns=NAME:.metadata.name,GPU:.status.allocatable.nvidia\\.com/gpu",
    )
    assert "gpu-b   7" in out
    out = kc("--context", "rollout", "get", "events", "-A", "--sort-by=.lastTimestamp")
    assert out.index("ScalingReplicaSet") < out.index("BackOff")


async def test_lists_are_paged(
    kube_api: KubeApiServer, kubeconfig: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import cockpit.sources.kubernetes as kmod

    monkeypatch.setattr(kmod, "PAGE_SIZE", 2)
    before = len(kube_api.requests_for("capacity"))
    s = src(kubeconfig, "capacity")
    try:
        pods = await s.list_pods("*")
    finally:
        await s.close()
    assert len(pods) == 12 and len({p.meta.name for p in pods}) == 12
    sent = [r for r in kube_api.requests_for("capacity")[before:] if r.path == "/api/v1/pods"]
    assert len(sent) == 6
    assert all(r.query["limit"] == ["2"] for r in sent)
    assert sum("continue" in r.query for r in sent) == 5


def test_server_selectors() -> None:
    from tests.backends.kube_api import field_matcher, label_matcher

    obj = {"metadata": {"labels": {"app": "vllm", "tier": "gpu"}}, "spec": {"nodeName": ""}}
    assert label_matcher("app in (vllm, sglang),!canary,tier")(obj)
    assert not label_matcher("app notin (vllm)")(obj)
    assert label_matcher("app!=tgi,tier==gpu")(obj)
    assert not field_matcher("spec.nodeName!=")(obj)
    assert field_matcher("spec.nodeName=,metadata.labels.app=vllm")(obj)


def test_typed_events_v1_model_rejects_null_event_time(kubeconfig: Path) -> None:
    """Why the source parses raw JSON: the official client's typed ``events.k8s.io/v1``
    model refuses ``eventTime: null``, which kubelet and scheduler events carry."""
    import pydantic
    from kubernetes import client, config

    api = config.new_client_from_config(str(kubeconfig), context="rollout")
    try:
        with pytest.raises(pydantic.ValidationError, match="eventTime"):
            client.EventsV1Api(api).list_namespaced_event("llm")
        assert len(client.CoreV1Api(api).list_namespaced_event("llm").items) == 3
    finally:
        api.close()


@pytest.mark.parametrize("cluster", ["rollout", "capacity"])
async def test_record_and_replay_kube_panels(
    kubeconfig: Path, tmp_path: Path, cluster: str
) -> None:
    """The recording plan captures every call the Kubernetes panels make; a replayed
    source gives the same Pending analysis and changes offline."""
    from cockpit.clock import Clock
    from cockpit.collect.kube_plans import record_kube
    from cockpit.config import Settings
    from cockpit.context import AppContext
    from cockpit.sources.base import Sources
    from cockpit.sources.bundle import BundleMeta, BundleWriter, Recorder, open_replay

    start, end = T0 - timedelta(hours=24), T0 + timedelta(minutes=30)
    path = tmp_path / "kube.jsonl.gz"
    live = src(kubeconfig, cluster)
    writer = BundleWriter(path, BundleMeta(recorded_at=end, window_start=start, window_end=end))
    ctx = AppContext(
        settings=Settings(),
        sources=Sources(kube=Recorder(live, "kube", writer)),
        clock=Clock(frozen_at=end),
        lang="en",
    )
    try:
        await record_kube(ctx, start, end)
        want_changes = await gather_changes(live, start, end)
        want_pending = await gather_pending(live)
    finally:
        writer.close()
        await live.close()
    replayed = open_replay(path).source("kube")
    got = await gather_changes(replayed, start, end)
    assert [i.key for i in got.items] == [i.key for i in want_changes.items]
    assert got.failures == []
    pending = await gather_pending(replayed)
    assert pending.model_dump() == want_pending.model_dump()
    if cluster == "rollout":
        vllm = next(r for r in got.releases if r.workload == "vllm")
        assert vllm.warmup[0].early_s == 330
    else:
        assert pending.analyses[0].likely == "capacity_or_priority"


def test_node_struct_decoding_matches_dict_parsing() -> None:
    """``list_nodes`` decodes only the kept fields (msgspec); the result must equal the
    dict-based ``node_of`` on every fixture node."""
    import msgspec

    import cockpit.sources.kubernetes as kmod
    from cockpit.models.kube import node_of
    from tests.backends.kube_api import Cluster
    from tests.fixtures.kube import scenarios

    seen = 0
    for name, build in scenarios.SCENARIOS.items():
        cluster = Cluster(name)
        build(cluster)
        for rt, objs in cluster.objects.items():
            if rt.kind != "Node":
                continue
            for obj in objs:
                raw = json.dumps(obj).encode()
                typed = kmod._node_from_struct(msgspec.json.decode(raw, type=kmod._Node))
                assert typed.model_dump() == node_of(json.loads(raw)).model_dump()
                seen += 1
    assert seen >= 20


async def test_node_requests_paged_with_prefetch(
    kube_api: KubeApiServer, kubeconfig: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The requests scan reads the next page while decoding the current one; small pages
    give the same sums as one page, and a cut page is bad data, not a wrong sum."""
    import cockpit.sources.kubernetes as kmod

    s = src(kubeconfig, "capacity")
    try:
        whole = await s.node_requests()
        monkeypatch.setattr(kmod, "BULK_PAGE_SIZE", 2)
        paged = await s.node_requests()
        assert paged == whole and whole.pods_scanned == 10
        assert whole.by_node["gpu-c"]["nvidia.com/gpu"] == 6  # the Succeeded pod is skipped
        kube_api.inject(Fault(path=r"/clusters/capacity/api/v1/pods$", truncate=True, times=1))
        with pytest.raises(SourceError) as info:
            await s.node_requests()
        assert info.value.kind is ErrorKind.BAD_DATA
    finally:
        kube_api.clear_faults()
        await s.close()


async def test_an_answer_over_the_size_limit_fails_by_name(
    kube_api: KubeApiServer, kubeconfig: Path
) -> None:
    small = KubeSource(kubeconfig=kubeconfig, context="faulty", max_response_mb=0.001)
    try:
        with pytest.raises(SourceError) as info:
            await small.list_nodes()
        f = info.value.failure
        assert f.kind is ErrorKind.BAD_DATA
        assert "/api/v1/nodes" in f.message and "0.001 MiB" in f.message
        assert "kubernetes.max_response_mb" in f.message + f.hint
    finally:
        await small.close()
    roomy = src(kubeconfig, "faulty")
    try:
        assert len(await roomy.list_nodes()) == 5
    finally:
        await roomy.close()
