from datetime import UTC, datetime, timedelta

import pytest

from cockpit.incident import Evidence, Experiment, HypothesisStatus, Incident
from cockpit.session import (
    IncidentSession,
    RuleViolation,
    check_time_order,
    names_more_than_one_variable,
)
from cockpit.store import IncidentStore

T0 = datetime(2026, 11, 29, 20, 0, tzinfo=UTC)


@pytest.fixture
def session(tmp_path):
    return IncidentSession(IncidentStore(tmp_path), Incident(id="inc-1"))


def reload(session):
    return session.store.load(session.incident.id)


def test_every_change_is_on_disk(session):
    session.set_text("impact", "all tenants")
    session.set_text("affected_models", "qwen, llama，mixtral")
    assert reload(session).impact == "all tenants"
    assert reload(session).collect.affected_models == ["qwen", "llama", "mixtral"]


def test_time_order_validation(session):
    assert session.set_time("start", T0) == []
    problems = session.set_time("detect", T0 - timedelta(minutes=5))
    assert problems == ["detect<start"]
    assert reload(session).times.detect == T0 - timedelta(minutes=5)
    assert session.set_time("detect", T0 + timedelta(minutes=7)) == []
    assert check_time_order({"start": T0, "recover": T0 - timedelta(1)}) == ["recover<start"]


def test_a_corrected_or_cleared_time_leaves_one_timeline_entry(session):
    from cockpit.incident import TimelineKind

    def entries(which):
        return [
            e.at
            for e in reload(session).timeline
            if e.kind is TimelineKind.IMPACT and e.text == which
        ]

    session.set_time("start", T0)
    session.set_time("start", T0 + timedelta(minutes=5))  # corrected
    assert entries("start") == [T0 + timedelta(minutes=5)]
    session.set_time("recover", T0 + timedelta(hours=1))
    session.set_time("recover", None)  # not recovered after all
    assert entries("recover") == [] and reload(session).times.recover is None
    # a note the user wrote with the same word stays
    session.add_timeline(T0, "start", TimelineKind.NOTE)
    session.set_time("start", T0 + timedelta(minutes=6))
    assert entries("start") == [T0 + timedelta(minutes=6)]
    assert any(e.kind is TimelineKind.NOTE for e in reload(session).timeline)


def test_hypothesis_needs_a_falsifier(session):
    with pytest.raises(RuleViolation) as exc:
        session.add_hypothesis("fragmentation", "  ")
    assert exc.value.key == "rules.hypothesis_not_falsifiable"
    hyp = session.add_hypothesis("fragmentation", "restart does not lower P99")
    ev = session.pin(Evidence(label="P99", value="620", unit="ms", at=T0, query="q"))
    session.link_evidence(hyp.id, ev.id)
    session.set_hypothesis_status(hyp.id, HypothesisStatus.SUPPORTED)
    stored = reload(session).hypotheses[0]
    assert stored.evidence_ids == [ev.id] and stored.status is HypothesisStatus.SUPPORTED
    session.unpin(ev.id)
    assert reload(session).hypotheses[0].evidence_ids == []


@pytest.mark.parametrize(
    "variable",
    ["batch size and max_num_seqs", "batch, kv", "batch+kv", "批大小和并发", "a；b", "a & b"],
)
def test_one_variable_rule_refuses_two(session, variable):
    assert names_more_than_one_variable(variable)
    with pytest.raises(RuleViolation) as exc:
        session.add_experiment(Experiment(variable=variable))
    assert exc.value.key == "rules.one_variable"
    assert session.incident.experiments == []


@pytest.mark.parametrize("variable", ["cordon+drain gpu-7", "cordon and drain node gpu-7"])
def test_isolating_a_node_is_one_change(variable):
    assert not names_more_than_one_variable(variable)
    assert names_more_than_one_variable(f"{variable}, max_num_seqs")


def test_experiment_must_be_measured_before_the_next(session):
    first = session.add_experiment(Experiment(variable="max_num_seqs", before="620 ms"))
    with pytest.raises(RuleViolation) as exc:
        session.add_experiment(Experiment(variable="gpu_memory_utilization"))
    assert exc.value.key == "rules.experiment_open"
    session.record_experiment_result(first.id, "190 ms")
    session.add_experiment(Experiment(variable="gpu_memory_utilization"))
    assert [e.variable for e in reload(session).experiments] == [
        "max_num_seqs",
        "gpu_memory_utilization",
    ]
    assert not names_more_than_one_variable("max_num_seqs")
    assert not names_more_than_one_variable("gpu_memory_utilization")


def test_background_mode_flushes_everything(tmp_path):
    session = IncidentSession(IncidentStore(tmp_path), Incident(id="inc-bg"), background=True)
    for i in range(200):
        session.set_text("impact", f"v{i}")
    assert session.flush(timeout=10)
    assert IncidentStore(tmp_path).load("inc-bg").impact == "v199"
    session.stop()


def test_path_records_jumps(session):
    for s in "ABCDFGA":
        session.visit(s)
    session.visit("A")
    assert reload(session).path == list("ABCDFGA")
    assert reload(session).current_step == "A"


def test_a_change_with_two_from_to_pairs_is_two_variables(session):
    with pytest.raises(RuleViolation):
        session.add_experiment(Experiment(variable="max_num_seqs", change="256→128, 0.9→0.85"))
    session.add_experiment(Experiment(variable="max_num_seqs", change="256 -> 128"))
    assert len(session.incident.experiments) == 1


def test_pinning_the_same_observation_twice_keeps_one(session):
    at = T0
    a = session.pin(Evidence(label="P99", value="620", unit="ms", at=at, query="q"))
    b = session.pin(Evidence(label="P99", value="620", unit="ms", at=at, query="q"))
    assert a.id == b.id and len(session.incident.evidence) == 1


def test_export_is_written_next_to_the_incident(session):
    import stat

    path = session.write_export("# 事故：x\n", "zh", "md")
    assert path == session.store.root / "exports" / "inc-1.zh.md"
    assert path.read_text(encoding="utf-8") == "# 事故：x\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_one_alert_firing_is_one_timeline_row_naming_its_sources(session):
    """The alert that paged, the same alert A finds in ALERTS and B's alert item marked as
    a change are one event at one time: one timeline row naming the three sources, in the
    export too; another alert, or the same one at another time, stays its own row."""
    from cockpit.analysis.changes import ChangeItem
    from cockpit.export import render
    from cockpit.incident import PagedBy, ServiceScope, TimelineKind, alert_event
    from cockpit.models.messages import msg

    fired = datetime(2026, 11, 29, 13, 31, 45, tzinfo=UTC)
    paged = PagedBy(name="VLLMHighP99", source="prometheus", starts_at=fired)
    session.start_from_alert(paged, "", ServiceScope(namespace="llm"), None)
    session.add_timeline(
        fired,
        "ALERT VLLMHighP99 (severity=page)",
        TimelineKind.ALERT,
        source="prometheus",
        event=alert_event("VLLMHighP99"),
    )
    item = ChangeItem(
        key="metrics/alert/VLLMHighP99/llm",
        at=fired,
        kind="alert",
        summary="alert VLLMHighP99 fired (llm)",
        origin="metrics",
        message=msg("metrics.change.alert", alert="VLLMHighP99", where="llm"),
    )
    session.add_change(item.to_change())
    session.add_timeline(
        fired, "ALERT OtherAlert", TimelineKind.ALERT, "prometheus", event=alert_event("OtherAlert")
    )
    session.add_timeline(
        fired + timedelta(hours=1),
        "ALERT VLLMHighP99",
        TimelineKind.ALERT,
        "prometheus",
        event=alert_event("VLLMHighP99"),
    )
    rows = [e for e in reload(session).timeline if e.event == alert_event("VLLMHighP99")]
    assert len(rows) == 2
    first = next(e for e in rows if e.at == fired)
    assert (first.source, first.sources) == ("alert", ["prometheus", "metrics"])
    md = render(session.incident, lang="en", fmt="md")
    timeline = [x for x in md.splitlines() if x.startswith("- 2026-11-29T13:31:45Z")]
    lines = [x for x in timeline if "VLLMHighP99" in x]
    assert len(lines) == 1 and "alert, prometheus, metrics" in lines[0], lines
    zh = render(session.incident, lang="zh", fmt="md")
    rows_zh = [x for x in zh.splitlines() if x.startswith("- 2026-11-29T13:31:45Z")]
    assert sum("VLLMHighP99" in x for x in rows_zh) == 1
    assert any("告警, Prometheus, 指标" in x for x in rows_zh), rows_zh
