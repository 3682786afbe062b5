"""Snapshots of the step screens that need no metrics source (A, B, E, G, H) in zh and en."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from cockpit.app import CockpitApp
from cockpit.incident import (
    Change,
    Evidence,
    Experiment,
    Hypothesis,
    HypothesisStatus,
    Incident,
    IncidentTimes,
    ServiceScope,
    TimelineEntry,
    TimelineKind,
)
from testkit import FROZEN, make_ctx


def populated() -> Incident:
    at = datetime(2026, 11, 29, 20, 40, tzinfo=UTC)
    inc = Incident(
        id="inc-0000test",
        title="晚高峰 P99 延迟升高",
        created_at=FROZEN,
        updated_at=FROZEN,
        service=ServiceScope(namespace="llm", deployment="vllm-qwen", selector="app=vllm"),
        impact="qwen2.5-72b 全部租户 P99 620 ms",
        times=IncidentTimes(start=at, detect=datetime(2026, 11, 29, 20, 47, tzinfo=UTC)),
        path=["A", "B", "C", "D", "F", "G", "H"],
        scope_branch="shared",
    )
    inc.changes.append(
        Change(
            at=datetime(2026, 11, 29, 18, 0, tzinfo=UTC),
            kind="config",
            summary="max_num_seqs 256 → 512",
            suspect=True,
        )
    )
    inc.timeline.append(
        TimelineEntry(at=at, kind=TimelineKind.ALERT, text="VLLMQueueGrowing firing")
    )
    ev = Evidence(label="P99", value="620", unit="ms", at=at, query="histogram_quantile(0.99, …)")
    inc.evidence.append(ev)
    inc.hypotheses.append(
        Hypothesis(
            id="hyp-1",
            statement="显存碎片导致批大小下降",
            falsifier="重启后碎片率回落但 P99 不降",
            evidence_ids=[ev.id],
            status=HypothesisStatus.SUPPORTED,
            created_at=FROZEN,
        )
    )
    inc.experiments.append(
        Experiment(
            at=FROZEN,
            variable="restart vllm-qwen-0",
            change="restart",
            sli="P99",
            before="620 ms",
            after="190 ms",
        )
    )
    return inc


def _app(tmp_path: Path, step: str, lang: str, incident: Incident | None = None) -> CockpitApp:
    ctx = make_ctx(tmp_path, lang=lang, incident=incident)
    return CockpitApp(ctx=ctx, start_step=step)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_impact_empty(snap_compare, tmp_path, lang):
    assert snap_compare(_app(tmp_path, "A", lang), terminal_size=(120, 48))


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_impact_populated(snap_compare, tmp_path, lang):
    assert snap_compare(_app(tmp_path, "A", lang, populated()), terminal_size=(120, 48))


def test_changes(snap_compare, tmp_path):
    assert snap_compare(_app(tmp_path, "B", "en", populated()), terminal_size=(120, 40))


def test_isolate(snap_compare, tmp_path):
    assert snap_compare(_app(tmp_path, "E", "zh", populated()), terminal_size=(100, 30))


def test_hypotheses(snap_compare, tmp_path):
    assert snap_compare(_app(tmp_path, "G", "zh", populated()), terminal_size=(120, 40))


def test_experiments(snap_compare, tmp_path):
    assert snap_compare(_app(tmp_path, "H", "en", populated()), terminal_size=(120, 40))


def test_protect_first(snap_compare, tmp_path):
    assert snap_compare(
        _app(tmp_path, "A", "zh", populated()), press=["f2"], terminal_size=(120, 48)
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_small_terminal(snap_compare, tmp_path, lang):
    """80×24: every main key of the footer still shows (compact footer)."""
    assert snap_compare(_app(tmp_path, "G", lang, populated()), terminal_size=(80, 24))


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_verify_record_and_export(snap_compare, tmp_path, lang):
    inc = populated()
    inc.root_cause_technical = "显存碎片 12%→34% 使批大小 8→3，叠加 83 °C 降频"
    inc.recovery.checked_at = FROZEN
    inc.recovery.recovered = False
    inc.recovery.lines = [
        "✗ access.latency P99: last 620 ms, worst in hold 621, baseline 180, limit 216"
    ]
    assert snap_compare(_app(tmp_path, "I", lang, inc), terminal_size=(120, 60))
