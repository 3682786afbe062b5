"""Fetched-data scenarios for the playbooks, each with one planted cause.

Pods, nodes and events are built from Kubernetes API JSON through the source's own
parsers (``pod_of``/``node_of``/``event_of``), logs are real artifact formats from
``shared/cases``, GPU snapshots are the NVML source's models.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from cockpit.analysis.playbooks.data import PlaybookData, Signal
from cockpit.models import Reading
from cockpit.models.gpu import GpuNodeSnapshot, GpuProcess, GpuSnapshot, GpuSourceKind
from cockpit.models.kube import event_of, node_of, pod_of

AT = datetime(2026, 11, 29, 21, 0, tzinfo=UTC)

OOM_LOG = (
    "INFO 02-10 18:06:30 engine.py:275] Added request cmpl-1-0.\n"
    "ERROR 02-10 18:06:30 engine.py:139] OutOfMemoryError('CUDA out of memory. Tried to "
    "allocate 1.27 GiB. GPU 0 has a total capacity of 79.33 GiB of which 109.81 MiB is free. "
    "Process 2377657 has 79.19 GiB memory in use. Of the allocated memory 67.68 GiB is "
    "allocated by PyTorch, with 76.00 MiB allocated in private pools (e.g., CUDA Graphs), and "
    "1.47 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is "
    "large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
    "fragmentation.')\n"
    "CRITICAL 02-10 18:06:30 launcher.py:101] MQLLMEngine is already dead, terminating server"
)


def pod(
    name: str,
    *,
    args: list[str] | None = None,
    image: str = "vllm/vllm-openai:v0.8.0",
    digest: str = "sha256:" + "a" * 64,
    phase: str = "Running",
    ready: bool = True,
    restarts: int = 0,
    last_reason: str = "",
    labels: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
    node: str = "gpu-a",
    gpus: int = 1,
    readiness_path: str | None = "/v1/models",
    uid: str = "",
    started: str = "2026-11-29T10:00:00Z",
) -> Any:
    obj: dict[str, Any] = {
        "metadata": {
            "name": name,
            "namespace": "llm",
            "uid": uid or f"uid-{name}",
            "labels": labels or {"app": "vllm"},
        },
        "spec": {
            "nodeName": node if phase != "Pending" else "",
            "containers": [
                {
                    "name": "main",
                    "image": image,
                    "args": args or [],
                    "env": [{"name": k, "value": v} for k, v in (env or {}).items()],
                    "resources": {"limits": {"nvidia.com/gpu": str(gpus)}},
                    **(
                        {"readinessProbe": {"httpGet": {"path": readiness_path, "port": 8000}}}
                        if readiness_path
                        else {}
                    ),
                }
            ],
        },
        "status": {"phase": phase, "startTime": started},
    }
    if phase != "Pending":
        status: dict[str, Any] = {
            "name": "main",
            "image": image,
            "imageID": f"docker.io/vllm/vllm-openai@{digest}",
            "ready": ready,
            "restartCount": restarts,
            "state": {"running": {"startedAt": started}},
        }
        if last_reason:
            status["lastState"] = {
                "terminated": {
                    "reason": last_reason,
                    "exitCode": 137 if last_reason == "OOMKilled" else 1,
                }
            }
        obj["status"]["containerStatuses"] = [status]
    return pod_of(obj)


def gpu_snapshot(*processes: tuple[int, float, str]) -> GpuNodeSnapshot:
    return GpuNodeSnapshot(
        source=GpuSourceKind.NVML,
        node="gpu-a",
        at=AT,
        driver_version="570.158.01",
        gpus=[
            GpuSnapshot(
                index=0,
                name="NVIDIA H100 80GB HBM3",
                mem_total=Reading.known(81559, "MiB"),
                processes=[
                    GpuProcess(
                        pid=p, used_memory=Reading.known(m, "MiB"), name="python3", pod_uid=u
                    )
                    for p, m, u in processes
                ],
            )
        ],
    )


def sig(
    now: float,
    base: float | None = None,
    per: dict[str, float] | None = None,
    q: str = "q",
    unit: str = "",
    per_q: str = "",
) -> Signal:
    return Signal(
        now=Reading.known(now, unit, query=q),
        baseline=Reading.known(base, unit, query=q) if base is not None else None,
        per_instance=per or {},
        per_instance_query=per_q,
        query=q,
    )


OOM_ARGS = (
    "--model",
    "/models/Qwen2.5-32B-Instruct",
    "--gpu-memory-utilization",
    "0.9",
    "--max-model-len",
    "16384",
)
"""vLLM's arguments in the CUDA OOM scenarios (no --max-num-seqs: no concurrency limit)."""


def cuda_oom() -> PlaybookData:
    """A runtime OOM with fragmentation, a stray process on the card, no concurrency limit."""
    p = pod(
        "vllm-0",
        args=list(OOM_ARGS),
        restarts=2,
        last_reason="Error",
    )
    return PlaybookData(
        pods=[p],
        logs={"vllm-0": OOM_LOG},
        gpus=[gpu_snapshot((100, 69000, "uid-vllm-0"), (4242, 6144, "uid-someone-else"))],
        metrics={"requests_running": sig(30, 28)},
        missing={},
    )


def _wd(rank: int, t: str) -> str:
    return (
        f"2026-11-29T{t}Z [rank{rank}]:[E1129 {t}.000000000 ProcessGroupNCCL.cpp:632] [Rank {rank}] "
        "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9120, OpType=ALLREDUCE, "
        "NumelIn=306176, NumelOut=306176, Timeout(ms)=3600000) ran for 3600027 milliseconds before "
        "timing out."
    )


def nccl_hang() -> PlaybookData:
    """Rank 2 hits a CUDA OOM; the others time out an hour later (timeout raised to 1 h)."""
    labels = lambda i: {"training.kubeflow.org/replica-index": str(i), "app": "train"}  # noqa: E731
    pods = [
        pod(
            f"train-worker-{i}",
            labels=labels(i),
            env={"NCCL_IB_DISABLE": "1"} if i == 1 else {"NCCL_DEBUG": "WARN"},
            restarts=1 if i == 2 else 0,
            readiness_path=None,
        )
        for i in range(4)
    ]
    logs = {
        f"train-worker-{i}": f"2026-11-29T08:00:00Z [rank{i}]: step 100 loss 2.1\n"
        + _wd(i, "10:00:02")
        for i in (0, 1, 3)
    }
    logs["train-worker-2"] = (
        "2026-11-29T08:00:00Z [rank2]: step 100 loss 2.1\n"
        "2026-11-29T09:00:01Z [rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
        "2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.02 GiB is free. Including "
        "non-PyTorch memory, this process has 78.12 GiB memory in use. Of the allocated memory "
        "75.00 GiB is allocated by PyTorch, and 1.50 GiB is reserved by PyTorch but unallocated."
    )
    return PlaybookData(pods=pods, logs=logs, missing={"gpu": "no NVML on this host"})


def low_util() -> PlaybookData:
    """An 8B model on TP=8 (vllm#6131)."""
    p = pod(
        "vllm-0",
        args=["--model", "/models/Meta-Llama-3-8B-Instruct", "--tensor-parallel-size", "8"],
        gpus=8,
    )
    return PlaybookData(
        pods=[p],
        metrics={
            "gpu_util": sig(35),
            "sm_active": sig(0.2),
            "cpu_throttled_share": sig(0.02),
            "requests_running": sig(40),
            "requests_waiting": sig(0),
        },
        missing={"gpu": "no NVML on this host"},
    )


TTFT_LOG = (
    "INFO 07-24 10:00:00 [loggers.py:1] Engine 000: Avg prompt throughput: 61250.0 tokens/s, Avg "
    "generation throughput: 0.0 tokens/s, Running: 1 reqs, Waiting: 37 reqs, GPU KV cache usage: "
    "41.2%, Prefix cache hit rate: 0.0%\n"
    "INFO 07-24 10:00:10 [loggers.py:1] Engine 000: Avg prompt throughput: 60880.0 tokens/s, Avg "
    "generation throughput: 12.4 tokens/s, Running: 3 reqs, Waiting: 52 reqs, GPU KV cache usage: "
    "62.0%, Prefix cache hit rate: 0.0%"
)


def ttft_spike() -> PlaybookData:
    """Long-prompt head-of-line blocking on one replica: TTFT up, TPOT flat."""
    pods = [pod(f"vllm-{i}", args=["--model", "/models/Qwen2.5-72B"]) for i in range(3)]
    return PlaybookData(
        pods=pods,
        logs={"vllm-2": TTFT_LOG},
        metrics={
            "queue_time_p99": sig(3.2, 0.1),
            "requests_waiting": sig(52, 2),
            "arrival_rate": sig(11, 10),
            "prompt_tokens_p90": sig(9000, 2000),
            "ttft_p99": sig(
                4000.0,
                800.0,
                {"vllm-0": 900.0, "vllm-1": 1000.0, "vllm-2": 6000.0},
                unit="ms",
                per_q="ttft by pod",
            ),
            "tpot_p99": sig(0.05, 0.048),
        },
    )


def pod_pending() -> PlaybookData:
    """The device plugin is not scheduled: GPU node allocatable 0, DaemonSet desired 0."""
    nodes = [
        node_of(
            {
                "metadata": {"name": "gpu-a", "labels": {"nvidia.com/gpu.present": "true"}},
                "spec": {
                    "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]
                },
                "status": {"capacity": {"cpu": "96"}, "allocatable": {"cpu": "96"}},
            }
        ),
        node_of(
            {
                "metadata": {"name": "cpu-b", "labels": {}},
                "status": {"capacity": {"cpu": "16"}, "allocatable": {"cpu": "16"}},
            }
        ),
    ]
    p = pod("vllm-0", phase="Pending", readiness_path=None)
    ev = event_of(
        {
            "metadata": {"name": "vllm-0.1", "namespace": "llm"},
            "involvedObject": {"kind": "Pod", "name": "vllm-0", "namespace": "llm"},
            "reason": "FailedScheduling",
            "type": "Warning",
            "message": "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling..",
            "lastTimestamp": "2026-11-29T20:59:00Z",
        }
    )
    return PlaybookData(
        pods=[p], nodes=nodes, events=[ev], daemonsets={"kube-system/nvidia-device-plugin": (0, 0)}
    )


CHAT_LOG = (
    "vllm.entrypoints.chat_utils.ChatTemplateResolutionError: As of transformers v4.44, default "
    "chat template is no longer allowed, so you must provide a chat template if the tokenizer does "
    "not define one.\n"
    'INFO:     10.0.0.7:53122 - "POST /v1/chat/completions HTTP/1.1" 400 Bad Request'
)


def bad_rollout() -> PlaybookData:
    """A new revision (other digest and args) without a chat template, half rolled out."""
    old = ["--model", "/models/gemma-3-27b", "--tensor-parallel-size", "2"]
    new = ["--model", "/models/gemma-4-31B", "--tensor-parallel-size", "4"]
    pods = [
        pod("vllm-old-0", args=old),
        pod("vllm-old-1", args=old),
        pod(
            "vllm-new-0",
            args=new,
            digest="sha256:" + "b" * 64,
            readiness_path="/health",
            started="2026-11-29T20:30:00Z",
        ),
    ]
    return PlaybookData(
        pods=pods,
        logs={"vllm-new-0": CHAT_LOG},
        metrics={"finish_length_share": sig(0.03, 0.03)},
    )


SCENARIOS = {
    "cuda_oom": cuda_oom,
    "nccl_hang": nccl_hang,
    "low_util": low_util,
    "ttft_spike": ttft_spike,
    "pod_pending": pod_pending,
    "bad_rollout": bad_rollout,
}
# The item each scenario's planted cause must show up in (status "problem").
PLANTED = {
    "cuda_oom": ["allocator", "other_process", "limits", "phase"],
    "nccl_hang": ["first_rank", "alive_xid", "versions_env", "timeout"],
    "low_util": ["collectives"],
    "ttft_spike": ["queue", "prefill", "slow_replica", "tpot_rule"],
    "pod_pending": ["allocatable", "device_plugin"],
    "bad_rollout": ["diff", "readiness", "mixed_versions", "finish_reason"],
}
