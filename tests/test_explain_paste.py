"""A paste read as a whole: the same diagnosis whatever the terminal added (CRLF, ANSI
colour), whatever the order of the context lines, with ranks interleaved, and in every
timestamp format of formats.md; cascades put the cause first; contradictions are said."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cockpit.analysis.explain import explain_text
from cockpit.analysis.explain_report import to_json, to_text
from cockpit.analysis.logtext import clock_text, line_time
from tests.conftest import DATA

CASES = {
    c["id"]: c
    for c in (
        json.loads(line)
        for line in (DATA / "cases.jsonl").read_text(encoding="utf-8").splitlines()
        if line
    )
}
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
COLOURS = ["\x1b[31m", "\x1b[1;33m", "\x1b[0m", "\x1b[38;5;208m", "\x1b]0;title\x07", "\x1b[2K"]


def _summary(text: str) -> tuple[Any, ...]:
    e = explain_text(text)
    return (e.category, tuple(e.kinds), tuple(f.cause for f in e.findings))


BASELINE = {cid: _summary(c["artifact"]) for cid, c in CASES.items()}


@SETTINGS
@given(
    cid=st.sampled_from(sorted(CASES)),
    crlf=st.booleans(),
    seed=st.integers(min_value=0, max_value=2**16),
    colour_share=st.floats(min_value=0.0, max_value=1.0),
)
def test_crlf_and_ansi_change_nothing(cid: str, crlf: bool, seed: int, colour_share: float) -> None:
    rnd = random.Random(seed)
    lines = CASES[cid]["artifact"].splitlines()
    out = []
    for ln in lines:
        if ln and rnd.random() < colour_share:
            # colour a random stretch of the line, as terminals and loggers do
            cut = rnd.randint(0, len(ln))
            ln = rnd.choice(COLOURS) + ln[:cut] + rnd.choice(COLOURS) + ln[cut:] + "\x1b[0m"
        out.append(ln)
    text = ("\r\n" if crlf else "\n").join(out) + ("\r\n" if crlf else "\n")
    assert _summary(text) == BASELINE[cid]


# Cases whose lines are independent facts (their order carries nothing), and for the
# others the slice of context lines that may come in any order.
ORDER_FREE = {
    "oom-10": None,
    "oom-12": None,
    "serve-01": None,
    "util-10": None,
    "nccl-10": None,
    "xid-10": None,
    "oom-11": (0, 3),  # the three memory-profiling lines, before the capture and the OOM
}


@SETTINGS
@given(cid=st.sampled_from(sorted(ORDER_FREE)), seed=st.integers(min_value=0, max_value=2**16))
def test_context_lines_in_any_order(cid: str, seed: int) -> None:
    lines = CASES[cid]["artifact"].splitlines()
    span = ORDER_FREE[cid] or (0, len(lines))
    part = lines[span[0] : span[1]]
    random.Random(seed).shuffle(part)
    lines[span[0] : span[1]] = part
    e = explain_text("\n".join(lines))
    assert (e.category, e.findings[0].cause) == (BASELINE[cid][0], BASELINE[cid][2][0])


def _rank_logs(n_ranks: int, oom_rank: int) -> dict[int, list[str]]:
    logs: dict[int, list[str]] = {}
    for r in range(n_ranks):
        logs[r] = [f"2026-02-18T10:00:0{r % 10}Z [rank{r}]: step 100 loss 1.23"]
        if r == oom_rank:
            logs[r].append(
                f"2026-02-18T10:00:30Z [rank{r}]: torch.OutOfMemoryError: CUDA out of memory. "
                f"Tried to allocate 4.00 GiB. GPU {r} has a total capacity of 79.15 GiB of "
                "which 1.02 GiB is free. Including non-PyTorch memory, this process has "
                "78.12 GiB memory in use. Of the allocated memory 70.00 GiB is allocated by "
                "PyTorch, and 6.50 GiB is reserved by PyTorch but unallocated."
            )
        else:
            logs[r].append(
                f"[rank{r}]:[E218 10:10:0{r % 10}.000000000 ProcessGroupNCCL.cpp:632] "
                f"[Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=77, "
                "OpType=ALLREDUCE, NumelIn=10, NumelOut=10, Timeout(ms)=600000) ran for 600001 "
                "milliseconds before timing out."
            )
    return logs


@SETTINGS
@given(
    n_ranks=st.integers(min_value=2, max_value=8),
    data=st.data(),
)
def test_interleaved_ranks_lead_with_the_failing_rank(n_ranks: int, data: st.DataObject) -> None:
    """Each rank's lines keep their order, the ranks are interleaved at random: the one
    rank's OOM leads, the others' timeouts follow from it."""
    oom_rank = data.draw(st.integers(min_value=0, max_value=n_ranks - 1))
    logs = _rank_logs(n_ranks, oom_rank)
    seed = data.draw(st.integers(min_value=0, max_value=2**16))
    rnd = random.Random(seed)
    queues = {r: list(v) for r, v in logs.items()}
    merged: list[str] = []
    while queues:
        r = rnd.choice(sorted(queues))
        merged.append(queues[r].pop(0))
        if not queues[r]:
            del queues[r]
    e = explain_text("\n".join(merged))
    assert e.kinds[:2] == ["cuda_oom", "nccl"]
    oom, nccl = e.findings[0], e.findings[1]
    assert oom.role == "primary" and oom.fields["rank"] == oom_rank
    assert nccl.role == "consequence" and nccl.consequence_of == ["cuda_oom"]
    assert nccl.fields["first_failing_rank"] == oom_rank


# One line per timestamp format of formats.md (A2 c10d glog without the month's leading
# zero, ISO from kubectl --timestamps, vLLM's "INFO MM-DD", syslog/journald, glog padded).
STAMPED = [
    ("[rank3]:[E816 01:45:40.212150935 ProcessGroupNCCL.cpp:607] x", "08-16 01:45:40"),
    ("[E1216 01:45:40.212150 ProcessGroupNCCL.cpp:607] x", "12-16 01:45:40"),
    ("2023-06-12T09:06:08.879916Z  INFO text_generation_launcher: x", "06-12 09:06:08"),
    ("INFO 03-27 10:29:01 [worker.py:267] x", "03-27 10:29:01"),
    ("Dec  2 11:38:47 node-a kernel: [  219.470994] NVRM: Xid x", "12-02 11:38:47"),
    ("[2025-06-05 15:08:56 TP0] Prefill batch. x", "06-05 15:08:56"),
]


@pytest.mark.parametrize(("line", "clock"), STAMPED)
def test_timestamp_formats(line: str, clock: str) -> None:
    assert clock_text(line_time(line)) == clock


@SETTINGS
@given(
    stamp=st.sampled_from([s for s, _ in STAMPED]),
    body=st.sampled_from(
        [
            "RuntimeError: CUDA error: uncorrectable ECC error encountered",
            "ncclRemoteError: A call failed possibly due to a network error",
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate more than 1EB memory.",
        ]
    ),
)
def test_evidence_carries_the_time_of_any_format(stamp: str, body: str) -> None:
    prefix = stamp[: -len(" x")]
    e = explain_text(f"{prefix} {body}\n")
    assert e.recognised
    assert e.findings[0].evidence and e.findings[0].evidence[0].time is not None


@SETTINGS
@given(
    text=st.lists(
        st.sampled_from([*"abc 01:-.[]{}\"'\x1b\r\n\t%=/", "\x1b[31m", "GiB", "\r\n"]),
        max_size=200,
    ).map("".join),
    cid=st.sampled_from(sorted(CASES)),
)
def test_never_raises_on_mangled_pastes(text: str, cid: str) -> None:
    artifact = CASES[cid]["artifact"]
    cut = len(text) % (len(artifact) + 1)
    mangled = artifact[:cut] + text + artifact[cut:]
    e = explain_text(mangled)
    assert not e.errors
    for lang in ("zh", "en"):
        to_json(e, lang)
        to_text(e, lang)


def test_xid_with_its_kubernetes_effect_leads() -> None:
    """A lost GPU, the application's CUDA errors, and the kubelet refusing a pod on that
    node: the Xid leads and the others are its consequences."""
    text = "\n".join(
        [
            "[  219.470994] NVRM: Xid (PCI:0000:07:00): 79, pid=123, name=python, GPU has "
            "fallen off the bus.",
            "RuntimeError: CUDA error: unspecified launch failure",
            "  Warning  UnexpectedAdmissionError  2m  kubelet  Allocate failed due to requested "
            "number of devices unavailable for nvidia.com/gpu. Requested: 1, Available: 0, "
            "which is unexpected",
        ]
    )
    e = explain_text(text)
    assert e.kinds == ["xid", "cuda_error", "admission"]
    assert e.findings[0].role == "primary"
    assert [f.consequence_of for f in e.findings[1:]] == [["xid"], ["xid"]]
    adm = to_json(e, "en")["findings"][2]
    assert "requested 1, available on the node 0" in " ".join(x["text"] for x in adm["facts"])


def test_device_plugin_down_leads_pending() -> None:
    text = "\n".join(
        [
            "E1130 10:00:00.100000 1 factory.go:87] Incompatible strategy detected auto",
            "E1130 10:00:00.100001 1 factory.go:88] If this is a GPU node, did you configure "
            "the NVIDIA Container Toolkit?",
            "  Warning  FailedScheduling  30s  default-scheduler  0/2 nodes are available: 2 "
            "Insufficient nvidia.com/gpu. preemption: 0/2 nodes are available: 2 No preemption "
            "victims found for incoming pod..",
        ]
    )
    e = explain_text(text)
    assert e.category == "pod_pending"
    assert [(f.kind, f.role) for f in e.findings] == [
        ("device_plugin", "primary"),
        ("failed_scheduling", "consequence"),
    ]
    assert e.findings[0].cause == "container_runtime_not_configured"


def test_timeout_then_garbage_oom_is_a_consequence() -> None:
    """timeout → abort → impossible allocation: the OOM is never the primary error."""
    text = "\n".join(
        [
            "[rank1]:[E218 10:10:02.000000000 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught "
            "collective operation timeout: WorkNCCL(SeqNum=77, OpType=ALLREDUCE, NumelIn=10, "
            "NumelOut=10, Timeout(ms)=600000) ran for 600001 milliseconds before timing out.",
            "[rank1]:[E218 10:10:02.100000000 ProcessGroupNCCL.cpp:1600] [PG 0 Rank 1] To avoid "
            "data inconsistency, we are taking the entire process down.",
            "2026-02-18T10:10:04Z [rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to "
            "allocate more than 1EB memory.",
        ]
    )
    e = explain_text(text)
    assert e.kinds == ["nccl", "cuda_oom"]
    assert e.findings[0].fields["primary"] is None
    assert e.findings[1].cause == "garbage_size" and e.findings[1].role == "consequence"


def test_insufficient_against_a_table_with_free_gpus_says_both() -> None:
    text = "\n".join(
        [
            "  Warning  FailedScheduling  30s  default-scheduler  0/2 nodes are available: 2 "
            "Insufficient nvidia.com/gpu.",
            "$ kubectl get nodes -o custom-columns=NAME:.metadata.name,GPU:.status.allocatable."
            "nvidia\\.com/gpu",
            "NAME    GPU",
            "node1   8",
            "node2   8",
        ]
    )
    data = to_json(explain_text(text), "en")
    f = data["findings"][0]
    assert f["cause"] == "capacity_or_priority"
    assert "The evidence conflicts" in f["meaning"] and "Allocated resources" in f["meaning"]
    assert "advertising" not in f["meaning"]


def test_vllm_only_advice_stays_with_vllm() -> None:
    tgi = explain_text(
        '2023-06-12T09:06:08Z  INFO text_generation_launcher: Args { model_id: "m", '
        "max_concurrent_requests: 64 }\nHTTP/1.1 429 Too Many Requests\n"
        '{"error":"Model is overloaded","error_type":"overloaded"}\n'
    )
    ids = tgi.findings[0].mitigation_ids
    assert "raise_limit_tgi" in ids and not any("vllm" in i for i in ids)
    t4 = explain_text(
        "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least "
        "8.0. Your Tesla T4 GPU has compute capability 7.5.\n"
    )
    # no engine in the paste: no engine flag is offered
    assert "dtype_half_generic" in t4.findings[0].mitigation_ids
    assert t4.findings[0].category == "other"


EVENTS = """$ kubectl get events -n ml --sort-by=.lastTimestamp
LAST SEEN   TYPE      REASON             OBJECT                MESSAGE
3m          Warning   FailedScheduling   pod/job-x-0           0/4 nodes are available: 4 Insufficient nvidia.com/gpu. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod..
2m          Normal    Pending            workload/job-x-1a2b   couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor default-flavor, 4 more needed
30s         Normal    QuotaReserved      workload/job-x-1a2b   Quota reserved in ClusterQueue cluster-queue, wait time since queued was 95s
"""


def test_events_table_is_read_per_row() -> None:
    """Each row is one event: the scheduler's message is its own row, not the table."""
    f = explain_text(EVENTS).findings[0]
    raw = f.fields["message"]["raw"]
    assert "0/4 nodes are available" in raw and "\n" not in raw
    assert "QuotaReserved" not in raw and "workload/" not in raw
    assert f.fields["reasons"] == {"Insufficient nvidia.com/gpu": 4}


def test_quota_message_then_quota_reserved_is_not_quota_used_up() -> None:
    rows = EVENTS.splitlines()
    text = "\n".join([rows[0], rows[1], rows[3], rows[4]])
    data = to_json(explain_text(text), "en")
    f = data["findings"][0]
    assert f["cause"] == "quota_reserved_since"
    assert "QuotaReserved" in f["meaning"] and "line 4" in f["meaning"]
    assert "quota is used up" not in f["meaning"]


@pytest.mark.parametrize(
    ("extra", "cause"),
    [
        ("# after updating tokenizer_config.json (add_eos_token: true)", "eos_immediate_stop"),
        ("# after the new release", "instant_stop_undetermined"),
    ],
)
def test_answers_ending_at_once(extra: str, cause: str) -> None:
    body = (
        '{"choices":[{"message":{"role":"assistant","content":""},"finish_reason":"stop"}],'
        '"usage":{"prompt_tokens":25,"completion_tokens":1}}'
    )
    e = explain_text(f"{extra}\n{body}\n{body}\n")
    assert (e.category, e.findings[0].cause) == ("bad_rollout", cause)
    assert e.findings[0].fields["one_token_outputs"] == 2


def test_exit_warning_after_the_job_ended_is_not_a_hang() -> None:
    text = "\n".join(
        [
            "[rank0]: Epoch 3 done",
            "End time of running main: 2025-01-10 12:00:00",
            "[rank0]:[W110 12:00:01.000000000 ProcessGroupNCCL.cpp:1250] Warning: WARNING: "
            "process group has NOT been destroyed before we destruct ProcessGroupNCCL. On normal "
            "program exit, the application should call destroy_process_group to ensure that any "
            "pending NCCL operations have finished in this process.",
        ]
    )
    data = to_json(explain_text(text), "en")
    f = data["findings"][0]
    assert (data["category"], f["cause"]) == ("other", "exit_without_destroy_process_group")
    assert [x["id"] for x in f["facts"]] == ["nccl.job_ended", "nccl.destroy_warning"]
    assert f["facts"][0]["line"] == 2


TRAIN_OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
    "capacity of 79.15 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this "
    "process has 78.12 GiB memory in use. Of the allocated memory 75.00 GiB is allocated by "
    "PyTorch, and 2.50 GiB is reserved by PyTorch but unallocated."
)


@pytest.mark.parametrize(
    ("prefix", "wanted", "unwanted"),
    [
        ('File "train.py", line 88, in <module>\n', "lower_batch", "gpu_mem_util"),
        (
            "[2025-06-05 15:08:56 TP0] Scheduler hit an exception\n",
            "lower_mem_fraction_static",
            "gpu_mem_util",
        ),
        ("$ vllm serve m --gpu-memory-utilization 0.9\n", "lower_gpu_mem_util", "mem_fraction"),
    ],
)
def test_oom_advice_names_only_the_engine_that_printed_it(
    prefix: str, wanted: str, unwanted: str
) -> None:
    f = explain_text(prefix + TRAIN_OOM).findings[0]
    ids = f.mitigation_ids
    assert wanted in ids or any(wanted in i for i in ids)
    assert not any(unwanted in i for i in ids)
    if "train.py" in prefix:
        # a training process gets no serving flag at all
        assert not any(flag in i for i in ids for flag in ("max_num_seqs", "prefill", "eager"))


def test_crash_loop_follows_what_made_it_exit() -> None:
    oom10 = CASES["oom-10"]["artifact"]
    loop = "  Warning  BackOff  2m (x12 over 20m)  kubelet  Back-off restarting failed container\n"
    e = explain_text(oom10 + loop)
    assert [(f.kind, f.role) for f in e.findings] == [
        ("cuda_oom", "primary"),
        ("crash_loop", "consequence"),
    ]
    alone = explain_text(loop + "    Restart Count:  12\n")
    f = alone.findings[0]
    assert (alone.category, f.cause, f.role) == ("other", "crash_loop_undetermined", "primary")
    assert "kubectl logs" in " ".join(to_json(alone, "en")["findings"][0]["meaning"].split())
    killed = explain_text(loop + "      Reason:       OOMKilled\n      Exit Code:    137\n")
    assert killed.findings[0].cause == "container_oomkilled"


BENCH = """============ Serving Benchmark Result ============
Successful requests:                     1000
Maximum request concurrency:             8
Mean TTFT (ms):                          4213.55
P99 TTFT (ms):                           9876.10
"""


def test_capped_client_benchmark_ttft() -> None:
    server = (
        "INFO 07-24 09:55:30 loggers.py:116] Engine 000: Avg prompt throughput: 900.0 tokens/s, "
        "Avg generation throughput: 400.0 tokens/s, Running: 8 reqs, Waiting: 0 reqs, GPU KV "
        "cache usage: 12.0%\n"
    )
    e = explain_text(BENCH + server)
    f = next(f for f in e.findings if f.kind == "serving")
    assert (f.category, f.cause) == ("ttft_spike", "client_side_concurrency_cap")
    assert f.fields["client_concurrency_cap"] == 8 and f.fields["server_waiting_max"] == 0
    undecided = explain_text(BENCH).findings[0]
    assert undecided.cause == "client_ttft_undetermined"
    assert any(c == "serve.server_waiting" for c in undecided.next_check_ids)


def test_engine_log_advice_is_the_engines_own() -> None:
    from cockpit.analysis.engine_logs import for_engine

    ids = ["raise_gpu_mem_util_or_tp", "lower_max_num_seqs", "kv_fp8", "partial_prefills"]
    assert for_engine(ids, None) == ids  # vLLM's own log lines
    assert for_engine(ids, "sglang") == [
        "raise_mem_fraction_or_tp",
        "lower_max_running_requests",
        "kv_fp8_sglang",
    ]
    assert for_engine(ids, "tgi") == ["more_shards_tgi", "lower_max_batch_total_tokens"]


SECRET_SAMPLES = [
    "curl https://alice:s3cret@example.com/v1/models",
    "Authorization: Bearer abcdefghijklmnop",
    "authorization=Basic dXNlcjpwYXNzd29yZA==",
    "Cookie: session=abcdef123456",
    "HF_TOKEN=hf_abcdefghijkl",
    '--api-key "sk-123456789"',
    "apiKey: 0123456789abcdef",
    "db.password: hunter22",
    "x-api-key=abcdef123",
    "X-Auth-Token: 1234567890",
    "DSN=postgres://u:p@h/db",
    "max_tokens=512 tokens/s 1234 step 10 loss 1.0",
]


@pytest.mark.parametrize("line", SECRET_SAMPLES)
def test_secret_hint_covers_what_redaction_changes(line: str) -> None:
    from cockpit.redact import redact_lines, redact_text

    block = ["step 1 loss 2.0", line, "tokens/s 123"]
    assert redact_lines(block) == [redact_text(x) for x in block]


@SETTINGS
@given(
    text=st.lists(
        st.sampled_from(
            ["a", "=", ":", " ", "@", "://", "key", "Token", "pass", "bearer ", "Basic ", "x", "9"]
        ),
        max_size=40,
    ).map("".join)
)
def test_redacting_only_hinted_lines_changes_nothing(text: str) -> None:
    from cockpit.redact import redact_lines, redact_text

    lines = text.split("x")
    assert redact_lines(lines) == [redact_text(x) for x in lines]
    # A whole log (lines joined with LF) gives the same lines, and is left as it is
    # when nothing in it may hold a secret.
    from cockpit.redact import redact_log

    log = "\n".join(lines)
    assert redact_log(log) == "\n".join(redact_text(x) for x in lines)


def test_a_log_without_secret_hints_is_returned_as_it_is() -> None:
    from cockpit.redact import redact_log

    log = "step 1 loss 2.0\nprompt 512 tokens/s 123\nuser@example.com said hi\n" * 50
    assert redact_log(log) is log
    leaked = log + "Authorization: Bearer abcdefghijklmnop\n" + log
    out = redact_log(leaked)
    assert "abcdefghijklmnop" not in out and out.count("\n") == leaked.count("\n")


def test_a_line_s_own_time_as_a_date_of_the_incident() -> None:
    from datetime import UTC, datetime

    from cockpit.analysis.logtext import line_datetime

    now = datetime(2026, 1, 2, 3, 0, tzinfo=UTC)
    assert line_datetime("2026-01-02T02:59:58Z Xid 79", now) == datetime(
        2026, 1, 2, 2, 59, 58, tzinfo=UTC
    )
    # A December line read on 2 January is from the year before.
    assert line_datetime("Dec 31 23:00:00 node kernel: Xid 79", now) == datetime(
        2025, 12, 31, 23, 0, tzinfo=UTC
    )
    # 29 February exists only in a leap year: 2024, not 2026 or 2025.
    assert line_datetime("Feb 29 12:00:00 node kernel: NVRM", now) is None
    assert line_datetime("[12345.678] NVRM: Xid 79", now) is None
    assert line_datetime("2026-01-02T04:00:00Z later than now", now) is None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_sglang_scheduler_line_reads_as_sglang_in_percent_with_its_token_counts(
    lang: str,
) -> None:
    """SGLang's prefill line: its token counts stay readable (they are the evidence of a
    long prompt, not secrets), its KV share is in percent as everywhere else, and the
    queue-time check names SGLang's histogram, not vLLM's."""
    line = (
        "Prefill batch. #new-seq: 1, #new-token: 8192, #cached-token: 0, "
        "token usage: 0.93, #running-req: 3, #queue-req: 96"
    )
    out = to_text(explain_text(line), lang)
    assert "#new-token: 8192" in out and "•••" not in out
    assert "93.0 %" in out and ": 0.93\n" not in out
    assert "sglang:queue_time_seconds" in out and "vllm:" not in out


def test_preemption_lines_and_the_engines_own_count_are_two_fields() -> None:
    """One pasted preemption warning carrying vLLM's cumulative count: the text holds one
    warning, the engine has preempted 51 times; both are said, neither as the other."""
    from cockpit.analysis.explain_report import field_lines

    line = (
        "WARNING 11-29 14:06:13 scheduler.py:1089] Sequence group cmpl-8f2a is preempted by "
        "PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. "
        "total_num_cumulative_preemption=51\n"
    )
    (finding,) = [f for f in explain_text(line).findings if f.fields.get("preemptions")]
    lines = field_lines(finding.fields, lang="en")
    assert "preemption warnings in the text: 1" in lines, lines
    assert any(x == "preemptions so far (the engine's own count): 51" for x in lines), lines


def test_a_log_level_is_not_a_kubernetes_event() -> None:
    """vLLM's ``WARNING … scheduler.py`` is the engine's line; ``Warning  FailedScheduling``
    is an event: each line is tagged with who printed it."""
    from cockpit.analysis.cascade import source_of

    assert (
        source_of(
            "WARNING 11-29 14:06:13 scheduler.py:1089] Sequence group x is preempted by PreemptionMode.RECOMPUTE"
        )
        == "vllm"
    )
    assert (
        source_of("INFO 11-29 14:06:12 metrics.py:351] Avg prompt throughput: 10.2 tokens/s")
        == "vllm"
    )
    assert (
        source_of("  Warning  FailedScheduling  3m  default-scheduler  0/4 nodes") == "kubernetes"
    )
    assert source_of("  Warning  BackOff  1m  kubelet  Back-off restarting") == "kubernetes"
