"""A fully populated incident (every field of the record set), for export and CLI tests.

The numbers follow the worked example of seed ``003_a20570c0e08ebfee.txt`` (P99 180→620 ms,
errors 0.2 %→1.8 %, GPU utilization 72 %→98 %, batch 8→3, queue 12→85). Ids and times are
fixed so the rendered export is byte-for-byte stable.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cockpit.incident import (
    ActionItem,
    Change,
    CollectFirst,
    ErrorSample,
    Evidence,
    Experiment,
    HistoryEntry,
    HistoryOp,
    Hypothesis,
    HypothesisStatus,
    Incident,
    IncidentTimes,
    PagedBy,
    PlaybookItemResult,
    PlaybookRecord,
    RecoveryCheck,
    ServiceScope,
    TimelineEntry,
    TimelineKind,
)

T0 = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)  # 20:00 in UTC+08:00, the evening peak

ALERT_RULE = """groups:
  - name: llm-serving
    rules:
      - alert: LLMServingP99High
        expr: histogram_quantile(0.99, sum by (le) (rate(vllm:e2e_request_latency_seconds_bucket{model_name="qwen2.5-72b"}[5m]))) > 0.3
        for: 5m
        labels:
          severity: page
"""


def at(minutes: float) -> datetime:
    """``T0`` plus ``minutes``."""
    return T0 + timedelta(minutes=minutes)


def full_incident() -> Incident:
    """Every field of the record filled in."""
    p99 = Evidence(
        id="ev-p99",
        label="P99 latency",
        value="620",
        unit="ms",
        at=at(25),
        query='histogram_quantile(0.99, sum by (le) (rate(vllm:e2e_request_latency_seconds_bucket{model_name="qwen2.5-72b"}[5m])))',
        source="prometheus",
        step="C",
        note="baseline 180 ms (1d offset)",
        pinned_at=at(26),
    )
    errors = Evidence(
        id="ev-err",
        label="error rate",
        value="1.8",
        unit="%",
        at=at(25),
        query="sum(rate(vllm:request_failure_total[5m])) / sum(rate(vllm:request_success_total[5m]))",
        source="prometheus",
        step="C",
        pinned_at=at(26),
    )
    temp = Evidence(
        id="ev-temp",
        label="GPU temperature gpu-7",
        value="83",
        unit="°C",
        at=at(30),
        query='DCGM_FI_DEV_GPU_TEMP{Hostname="gpu-node-7"}',
        source="dcgm",
        step="E",
        pinned_at=at(31),
    )
    hyp_thermal = Hypothesis(
        id="hyp-thermal",
        statement="gpu-node-7 throttles thermally and drags the batch down",
        falsifier="P99 stays above 300 ms after gpu-node-7 is cordoned",
        evidence_ids=["ev-temp", "ev-p99", "ev-gone"],
        status=HypothesisStatus.SUPPORTED,
        created_at=at(32),
    )
    hyp_load = Hypothesis(
        id="hyp-load",
        statement="Arrival rate grew beyond capacity",
        falsifier="QPS is lower than yesterday at the same time",
        status=HypothesisStatus.REFUTED,
        created_at=at(33),
    )
    return Incident(
        id="inc-2026-11-28-p99",
        title="qwen2.5-72b P99 latency 180→620 ms at the evening peak",
        status="closed",
        created_at=at(10),
        updated_at=at(95),
        mode="live",
        lang="zh",
        service=ServiceScope(
            namespace="llm", selector="app=vllm", deployment="vllm-qwen", model="qwen2.5-72b"
        ),
        impact="Chat API: 25% of requests slower than the 300 ms SLO;\nerrors 0.2% → 1.8%.",
        times=IncidentTimes(start=at(0), detect=at(8), mitigate=at(40), recover=at(70)),
        paged_by=PagedBy(
            name="VLLMHighP99Latency",
            fingerprint="4d5673dbad19fe28",
            source="alertmanager",
            state="firing",
            starts_at=at(8),
            expr="histogram_quantile(0.99, sum by (le) "
            "(rate(vllm:e2e_request_latency_seconds_bucket[5m]))) > 0.3",
            sli="serving.e2e_latency:p99",
            pod="vllm-qwen-7d9f8c6b5-x2kq9",
            silences=["oncall: known, rollback running"],
            silenced=True,
            labels={"alertname": "VLLMHighP99Latency", "namespace": "llm", "severity": "critical"},
        ),
        symptoms="Users saw slow first tokens and 503s on long prompts.",
        slo="P99 end-to-end latency < 300 ms; error ratio < 0.5%",
        changes=[
            Change(
                id="chg-helm",
                at=at(-180),
                kind="helm",
                summary="vllm-qwen chart 1.4.2 → 1.4.3",
                detail="max_num_seqs 256 → 128",
                source="helm",
            ),
            Change(
                id="chg-node",
                at=at(-30),
                kind="node",
                summary="gpu-node-7 rejoined after fan replacement",
                source="kubernetes",
                suspect=True,
            ),
            Change(id="chg-manual", kind="manual", summary="gateway timeout raised", source="user"),
        ],
        evidence=[p99, errors, temp],
        root_cause_technical="Thermal throttling on gpu-node-7 (83 °C, HW slowdown) cut its batch 8→3.",
        root_cause_systemic="Node returned to service without a burn-in; no alert on clock events.",
        mitigation="Cordoned gpu-node-7 and drained its replica.",
        actions=[
            ActionItem(
                id="act-1",
                what="Burn-in gate before a repaired node rejoins",
                owner="infra-oncall",
                deadline="2026-12-15",
                verification="nccl-tests + 30 min load test in the admission job",
            ),
            ActionItem(id="act-2", what="Alert on HW slowdown clock events", owner="sre"),
        ],
        earlier_detection="An alert on DCGM clock-event reasons (HW slowdown) per node.",
        collect=CollectFirst(
            time_range="2026-11-28 12:00–13:10 UTC",
            affected_models=["qwen2.5-72b"],
            affected_tenants=["tenant-a", "tenant-b"],
            affected_jobs=[],
            error_samples=[
                ErrorSample(
                    id="err-1",
                    text="503 upstream timeout after 30s",
                    request_id="req-8f2c",
                    at=at(12),
                ),
                ErrorSample(id="err-2", text="CUDA error: `launch timeout`", job_id="job-77"),
            ],
            recent_changes_note="Chart bump 3 h before; node repaired 30 min before.",
            breakdown="queue 12→85, batch 8→3, KV fragmentation 12%→34%",
            control_group="gpu-node-3 replicas, same image: P99 190 ms",
        ),
        timeline=[
            TimelineEntry(
                id="tl-1", at=at(0), kind=TimelineKind.IMPACT, text="start", source="user"
            ),
            TimelineEntry(
                id="tl-2",
                at=at(8),
                kind=TimelineKind.ALERT,
                text="LatencyHigh fired",
                source="alertmanager",
            ),
            TimelineEntry(
                id="tl-3",
                at=at(40),
                kind=TimelineKind.MITIGATION,
                text="kubectl cordon gpu-node-7",
                source="user",
            ),
            TimelineEntry(
                id="tl-4",
                at=at(-30),
                kind=TimelineKind.CHANGE,
                text="gpu-node-7 rejoined",
                source="kubernetes",
            ),
        ],
        hypotheses=[hyp_thermal, hyp_load],
        experiments=[
            Experiment(
                id="exp-1",
                at=at(40),
                variable="gpu-node-7 cordoned",
                change="schedulable → cordoned",
                sli="P99 latency",
                before="620 ms",
                after="190 ms",
                hypothesis_id="hyp-thermal",
                note="held for 15 min",
            ),
            Experiment(
                id="exp-2",
                at=at(60),
                variable="max_num_seqs",
                change="128 → 256",
                sli="P99 latency",
                before="190 ms",
            ),
        ],
        history=[
            HistoryEntry(id="h-1", at=at(20), target="title", old="", new="qwen2.5-72b P99 up"),
            HistoryEntry(
                id="h-2",
                at=at(31),
                target="title",
                old="qwen2.5-72b P99 up",
                new="n",
            ),
            HistoryEntry(
                id="h-3",
                at=at(32),
                target="title",
                op=HistoryOp.RESTORE,
                old="n",
                new="qwen2.5-72b P99 up",
            ),
            HistoryEntry(
                id="h-4",
                at=at(45),
                target="actions/act-0",
                op=HistoryOp.DELETE,
                old={"row": {"id": "act-0", "what": "Restart every replica nightly"}, "index": 0},
            ),
        ],
        recovery=RecoveryCheck(
            checked_at=at(90),
            hold_minutes=15,
            recovered=True,
            lines=["P99 latency 185 ms ≤ baseline 180 ms × 1.1 for 15 min"],
        ),
        playbooks={
            "ttft_p99": PlaybookRecord(
                playbook="ttft_p99",
                summary="Queue time rose; one node slow",
                items=[
                    PlaybookItemResult(
                        item="queue time up?",
                        status="problem",
                        finding="12 → 85",
                        evidence_ids=["ev-p99"],
                    ),
                    PlaybookItemResult(item="rollout in progress?", status="ok"),
                    PlaybookItemResult(item="gateway latency", status="n/a"),
                    PlaybookItemResult(
                        item="prefill chunk", status="not_available", finding="no metric"
                    ),
                ],
                updated_at=at(50),
            )
        },
        path=["A", "B", "C", "D", "E", "G", "H", "I"],
        current_step="I",
        scope_branch="single",
        scope_verdict="only gpu-node-7 replicas exceed the cohort median ×2",
        step_notes={"E": "gpu-node-7 clocks 1410 → 990 MHz", "A": "paged at 12:08"},
        alert_rule=ALERT_RULE,
    )


def empty_incident() -> Incident:
    """A record with nothing filled in (fixed id and times)."""
    return Incident(id="inc-empty", created_at=T0, updated_at=T0)
