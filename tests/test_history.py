"""The incident's history: every change keeps the value it replaced, a wiped field or a
deleted ledger row comes back from it, and the ledgers' rows can be edited and deleted."""

import json
from datetime import UTC, datetime, timedelta

import pytest

from cockpit.incident import (
    Evidence,
    Experiment,
    HistoryOp,
    HypothesisStatus,
    Incident,
    TimelineKind,
)
from cockpit.session import IncidentSession, RuleViolation
from cockpit.store import IncidentStore

T0 = datetime(2026, 11, 29, 20, 0, tzinfo=UTC)


@pytest.fixture
def session(tmp_path):
    return IncidentSession(IncidentStore(tmp_path), Incident(id="inc-h"))


def reload(session):
    return session.store.load(session.incident.id)


def type_into(session, field, text, start=""):
    """Type ``text`` after ``start`` one character at a time, as a field does."""
    for i in range(1, len(text) + 1):
        session.set_text(field, start + text[:i])


def test_a_run_of_typing_is_one_entry_and_a_wipe_keeps_the_value(session):
    type_into(session, "title", "P99 up on qwen")
    assert [(h.target, h.old, h.new) for h in session.incident.history] == [
        ("title", "", "P99 up on qwen")
    ]
    # A stray key with the whole title selected replaces it: a new entry keeps it.
    session.set_text("title", "n")
    wiped = session.incident.history[-1]
    assert (wiped.old, wiped.new) == ("P99 up on qwen", "n")
    stored = reload(session)
    assert stored.title == "n" and stored.history[-1].old == "P99 up on qwen"
    session.restore(wiped.id)
    assert reload(session).title == "P99 up on qwen"
    # The restore is a change too, so it can be undone from the history as well.
    assert session.incident.history[-1].old == "n"


def test_backspacing_one_character_at_a_time_stays_one_entry(session):
    type_into(session, "impact", "all tenants")
    session.set_text("impact", "all tenant")
    session.set_text("impact", "all tenan")
    assert len(session.incident.history) == 1
    assert session.incident.history[0].new == "all tenan"


def test_typing_after_a_pause_is_a_new_entry(session):
    type_into(session, "impact", "all")
    session.incident.history[-1].until = session.incident.history[-1].at - timedelta(minutes=1)
    type_into(session, "impact", " tenants", start="all")
    assert [(h.old, h.new) for h in session.incident.history] == [
        ("", "all"),
        ("all", "all tenants"),
    ]


def test_times_notes_status_and_suspect_keep_their_previous_value(session):
    session.set_time("start", T0)
    session.set_time("start", None)
    session.set_step_note("C", "queue grows")
    hyp = session.add_hypothesis("fragmentation", "restart does not lower P99")
    session.set_hypothesis_status(hyp.id, HypothesisStatus.REFUTED)
    targets = [(h.target, h.old) for h in reload(session).history]
    assert ("times.start", T0.isoformat()) in targets
    assert ("notes.C", "") in targets
    assert (f"hypotheses/{hyp.id}.status", "open") in targets
    cleared = next(h for h in session.incident.history if h.target == "times.start" and h.old)
    session.restore(cleared.id)
    assert reload(session).times.start == T0
    status = next(h for h in session.incident.history if h.target.endswith(".status"))
    session.restore(status.id)
    assert reload(session).hypotheses[0].status is HypothesisStatus.OPEN


def test_hypotheses_are_edited_and_deleted_and_come_back(session):
    hyp = session.add_hypothesis("fragmentation", "restart does not lower P99")
    ev = session.pin(Evidence(label="P99", value="620", unit="ms", at=T0, query="q"))
    session.link_evidence(hyp.id, ev.id)
    session.edit_row("hypotheses", hyp.id, falsifier="P99 stays after defrag")
    assert reload(session).hypotheses[0].falsifier == "P99 stays after defrag"
    with pytest.raises(RuleViolation) as exc:
        session.edit_row("hypotheses", hyp.id, falsifier=" ")
    assert exc.value.key == "rules.hypothesis_not_falsifiable"
    session.delete_row("hypotheses", hyp.id)
    assert reload(session).hypotheses == []
    deleted = session.incident.history[-1]
    assert deleted.op is HistoryOp.DELETE and deleted.target == f"hypotheses/{hyp.id}"
    session.restore(deleted.id)
    back = reload(session).hypotheses[0]
    assert (back.id, back.falsifier, back.evidence_ids) == (
        hyp.id,
        "P99 stays after defrag",
        [ev.id],
    )
    with pytest.raises(RuleViolation) as again:
        session.restore(deleted.id)
    assert again.value.key == "history.already_back"


def test_experiments_are_edited_and_deleted_with_their_timeline_entry(session):
    exp = session.add_experiment(
        Experiment(variable="max_num_seqs", from_value="256", to_value="128", at=T0)
    )
    session.record_experiment_result(exp.id, "190 ms")
    session.edit_row("experiments", exp.id, to_value="96", after="170 ms")
    stored = reload(session).experiments[0]
    assert (stored.to_value, stored.after) == ("96", "170 ms")
    with pytest.raises(RuleViolation) as exc:
        session.edit_row("experiments", exp.id, variable="max_num_seqs and batch")
    assert exc.value.key == "rules.one_variable"
    assert any(e.kind is TimelineKind.EXPERIMENT for e in session.incident.timeline)
    session.delete_row("experiments", exp.id)
    stored_inc = reload(session)
    assert stored_inc.experiments == []
    assert not any(e.kind is TimelineKind.EXPERIMENT for e in stored_inc.timeline)
    session.restore(session.incident.history[-1].id)
    stored_inc = reload(session)
    assert [e.id for e in stored_inc.experiments] == [exp.id]
    assert any(e.kind is TimelineKind.EXPERIMENT for e in stored_inc.timeline)


def test_action_items_are_edited_and_deleted(session):
    first = session.add_action("alert on queue time", "li", "2026-12-05", "fire drill")
    second = session.add_action("defrag nightly", "wang", "", "")
    session.edit_row("actions", second.id, deadline="2026-12-10", owner="zhao")
    assert reload(session).actions[1].owner == "zhao"
    with pytest.raises(RuleViolation):
        session.edit_row("actions", first.id, what="")
    session.delete_row("actions", first.id)
    assert [a.id for a in reload(session).actions] == [second.id]
    session.restore(session.incident.history[-1].id)
    # Back where it was, not at the end.
    assert [a.id for a in reload(session).actions] == [first.id, second.id]


def test_timeline_notes_are_edited_and_deleted_but_time_entries_follow_their_field(session):
    note = session.add_timeline(T0, "paged by on-call")
    session.edit_row("timeline", note.id, text="paged by on-call (SMS)")
    assert reload(session).timeline[0].text == "paged by on-call (SMS)"
    session.delete_row("timeline", note.id)
    assert reload(session).timeline == []
    session.restore(session.incident.history[-1].id)
    assert reload(session).timeline[0].text == "paged by on-call (SMS)"
    session.set_time("start", T0)
    start = next(e for e in session.incident.timeline if e.text == "start")
    with pytest.raises(RuleViolation) as exc:
        session.delete_row("timeline", start.id)
    assert exc.value.key == "history.time_entry"


def test_a_field_of_a_deleted_row_cannot_be_restored_before_the_row(session):
    item = session.add_action("alert on queue time", "li", "", "")
    session.edit_row("actions", item.id, owner="wang")
    edit = session.incident.history[-1]
    session.delete_row("actions", item.id)
    with pytest.raises(RuleViolation) as exc:
        session.restore(edit.id)
    assert exc.value.key == "history.row_gone"


def test_unpinned_evidence_comes_back_with_its_links(session):
    hyp = session.add_hypothesis("fragmentation", "restart does not lower P99")
    ev = session.pin(Evidence(label="P99", value="620", unit="ms", at=T0, query="q"))
    session.link_evidence(hyp.id, ev.id)
    session.unpin(ev.id)
    assert reload(session).hypotheses[0].evidence_ids == []
    session.restore(session.incident.history[-1].id)
    stored = reload(session)
    assert [e.id for e in stored.evidence] == [ev.id]
    assert stored.hypotheses[0].evidence_ids == [ev.id]


def test_one_variable_is_read_from_the_structure_not_the_punctuation(session):
    exp = session.add_experiment(Experiment(variable="max_num_seqs: 256 → 128, on pod a, b"))
    stored = reload(session).experiments[0]
    assert (stored.variable, stored.from_value, stored.to_value, stored.scope) == (
        "max_num_seqs",
        "256",
        "128",
        "pod a, b",
    )
    assert exp.change_text() == "256 → 128 (pod a, b)"
    session.record_experiment_result(exp.id, "190 ms")
    # The same, field by field, with commas in the scope.
    session.add_experiment(
        Experiment(variable="max_num_seqs", from_value="128", to_value="96", scope="pod a, b; c")
    )
    assert len(reload(session).experiments) == 2


@pytest.mark.parametrize(
    "experiment",
    [
        Experiment(variable="max_num_seqs: 256→128, gpu_memory_utilization: 0.9→0.85"),
        Experiment(variable="max_num_seqs, batch", from_value="256", to_value="128"),
        Experiment(variable="max_num_seqs", from_value="256", to_value="128, 0.9 → 0.85"),
    ],
)
def test_two_variables_are_still_refused(session, experiment):
    with pytest.raises(RuleViolation) as exc:
        session.add_experiment(experiment)
    assert exc.value.key == "rules.one_variable"


def test_an_incident_of_the_first_schema_loads_with_its_changes_structured(tmp_path):
    doc = Incident(id="inc-old").model_dump(mode="json")
    del doc["history"]
    doc["schema_version"] = 1
    doc["experiments"] = [
        {
            "id": "exp-1",
            "at": T0.isoformat(),
            "variable": "max_num_seqs",
            "change": "256 -> 128",
            "sli": "P99",
            "before": "620 ms",
            "after": "",
            "hypothesis_id": "",
            "note": "",
        },
        {"id": "exp-2", "at": T0.isoformat(), "variable": "node gpu-7", "change": "cordoned"},
    ]
    store = IncidentStore(tmp_path)
    store.path_for("inc-old").parent.mkdir(parents=True, exist_ok=True)
    store.path_for("inc-old").write_text(json.dumps(doc), encoding="utf-8")
    inc = store.load("inc-old")
    assert (inc.experiments[0].from_value, inc.experiments[0].to_value) == ("256", "128")
    assert inc.experiments[0].change == ""
    assert inc.experiments[1].change == "cordoned" and inc.experiments[1].from_value == ""
    assert inc.schema_version == 2 and inc.history == []
    store.save(inc)
    assert json.loads(store.path_for("inc-old").read_text())["schema_version"] == 2


def test_history_lines_name_fields_and_values_as_the_screens_do(session):
    from cockpit.history import entry_line

    session.set_branch("single")
    session.set_branch("shared")
    hyp = session.add_hypothesis("fragmentation", "restart does not lower P99")
    session.set_hypothesis_status(hyp.id, HypothesisStatus.REFUTED)
    session.set_time("start", T0)
    session.set_time("start", T0 + timedelta(minutes=5))
    lines = [entry_line(session.incident, h, "zh") for h in session.incident.history]
    assert lines == [
        "D 的回答（单实例/整个发布/共享）：（空） → 单实例 / 单节点",
        "D 的回答（单实例/整个发布/共享）：单实例 / 单节点 → 共享",
        "新增 假设 1「fragmentation」",
        "假设 1「fragmentation」 · 状态：待定 → 已推翻",
        "开始：（空） → 2026-11-29 20:00:00Z",
        "开始：2026-11-29 20:00:00Z → 2026-11-29 20:05:00Z",
    ]


def test_the_timeline_holds_each_experiment_once_through_edit_delete_and_restore(session):
    """Two experiments logged at the same time (the incident clock of ``--at`` stands
    still): editing the first, deleting the second and restoring it leaves one timeline
    entry per experiment, each with its own text, on A and in the export's Appendix A."""
    from cockpit.export import render_markdown

    e1 = session.add_experiment(
        Experiment(variable="experiment drained pod gjcjk", from_value="on", to_value="off", at=T0)
    )
    session.record_experiment_result(e1.id, "190 ms")
    e2 = session.add_experiment(
        Experiment(variable="power limit", from_value="700 W", to_value="600 W", at=T0)
    )
    session.edit_row("experiments", e1.id, variable=e1.variable, after="190 ms")
    session.delete_row("experiments", e2.id)
    session.restore(session.incident.history[-1].id)
    texts = sorted(e.text for e in reload(session).timeline if e.kind is TimelineKind.EXPERIMENT)
    assert texts == ["experiment drained pod gjcjk: on → off", "power limit: 700 W → 600 W"]
    appendix = render_markdown(reload(session), "en").split("## ")
    timeline = next(part for part in appendix if part.startswith("Appendix A"))
    assert timeline.count("drained pod gjcjk") == 1
    assert timeline.count("power limit") == 1


def test_f8_lists_every_addition_and_no_change_that_changed_nothing(session):
    """Adding a hypothesis, an experiment, a timeline note, an action item or a change is
    in the history (F8 is the whole history); typing into a note and taking it back, or
    a blank field left blank, is no entry ("Notes of H: (empty) → (empty)")."""
    from cockpit.history import entry_line, is_correction
    from cockpit.incident import Change

    session.add_hypothesis("fragmentation", "restart does not lower P99")
    session.add_experiment(Experiment(variable="max_num_seqs", from_value="256", to_value="128"))
    session.add_timeline(T0, "paged the owner")
    session.add_action("alert on queue time", "li", "", "")
    session.add_change(Change(at=T0, kind="manual", summary="raised max_num_seqs", source="user"))
    session.set_step_note("H", "x")
    session.set_step_note("H", "")
    session.set_step_note("C", "  ")
    session.set_text("title", " ")
    lines = [entry_line(session.incident, h, "en") for h in reload(session).history]
    assert lines == [
        "Added Hypothesis 1 “fragmentation”",
        "Added Experiment 1 “max_num_seqs”",
        "Added Timeline entry “paged the owner”",
        "Added Action item “alert on queue time”",
        "Added Change “raised max_num_seqs”",
    ]
    assert all(h.op is HistoryOp.ADD and not is_correction(h) for h in session.incident.history)
    with pytest.raises(RuleViolation) as exc:
        session.restore(session.incident.history[0].id)
    assert exc.value.key == "history.nothing_before"


def test_ledger_rows_keep_their_number_and_the_history_names_them_by_it(session):
    """H3 stays H3 after H2 is deleted and after H2 comes back; F8 names an edit of H3
    and the deletion of H2 alike before and after the restore; a new row never takes a
    deleted row's number; the export numbers the rows as G does."""
    from cockpit.export import render_markdown
    from cockpit.history import entry_line

    _h1, h2, h3 = (
        session.add_hypothesis(f"cause {n}", f"falsifier {n}") for n in ("one", "two", "three")
    )
    session.edit_row("hypotheses", h3.id, statement="cause three, refined")
    session.delete_row("hypotheses", h2.id)

    def lines():
        return [entry_line(session.incident, h, "en") for h in session.incident.history[-2:]]

    expected = [
        "Hypothesis 3 “cause three, refined” · Hypothesis: cause three → cause three, refined",
        "Deleted Hypothesis 2 “cause two”",
    ]
    assert lines() == expected
    assert [h.number for h in reload(session).hypotheses] == [1, 3]
    h4 = session.add_hypothesis("cause four", "falsifier four")
    assert h4.number == 4
    session.restore(session.incident.history[-2].id)  # the deletion of H2
    assert [h.number for h in reload(session).hypotheses] == [1, 2, 3, 4]
    shown = [entry_line(session.incident, h, "en") for h in session.incident.history[-4:-2]]
    assert shown == expected
    appendix = render_markdown(reload(session), "en")
    assert "H3. cause three, refined" in appendix and "H4. cause four" in appendix
    e1 = session.add_experiment(Experiment(variable="power limit", at=T0))
    session.record_experiment_result(e1.id, "190 ms")
    e2 = session.add_experiment(Experiment(variable="max_num_seqs", at=T0))
    session.delete_row("experiments", e1.id)
    assert [e.number for e in reload(session).experiments] == [e2.number] == [2]


def test_restoring_a_time_names_both_values_in_f8_and_a_deleted_row_is_put_back(session):
    """Restoring the entry that set an empty time empties it, and F8 says so with both
    values (13:56 → empty), in both languages, never a bare "Put back" that hides which
    value came back; a deleted row restored is "put back"."""
    from cockpit.history import entry_line, is_row

    session.set_time("detect", T0)
    (first,) = [h for h in session.incident.history if h.target == "times.detect"]
    session.restore(first.id)
    assert session.incident.times.detect is None
    back = session.incident.history[-1]
    assert back.op is HistoryOp.RESTORE
    en = entry_line(session.incident, back, "en")
    zh = entry_line(session.incident, back, "zh")
    assert en.startswith("Restored ") and "20:00" in en, en
    assert zh.startswith("恢复 ") and "20:00" in zh, zh
    session.restore(back.id)
    again = entry_line(session.incident, session.incident.history[-1], "en")
    assert again.startswith("Restored ") and "20:00" in again, again
    hyp = session.add_hypothesis("fragmentation", "restart does not lower P99")
    session.delete_row("hypotheses", hyp.id)
    deleted = session.incident.history[-1]
    session.restore(deleted.id)
    assert entry_line(session.incident, session.incident.history[-1], "en").startswith("Put back ")
    assert is_row(f"hypotheses/{hyp.id}") and not is_row(f"hypotheses/{hyp.id}.status")
    assert not is_row("times.detect")


def test_a_long_corrected_value_shows_where_it_changed(session):
    """Two long texts alike up to the cut read differently in Corrections: each is shown
    from a little before the first character that differs."""
    from cockpit.export import render_markdown
    from cockpit.history import entry_line

    before = "P99 TTFT rose on every replica of the deployment in the window 13:41-13:50"
    after = "P99 TTFT rose on every replica of the deployment in the window 13:41-13:55"
    session.set_text("impact", before)
    session.set_text("impact", "")
    session.set_text("impact", after)
    edits = [h for h in session.incident.history if h.target == "impact"]
    line = entry_line(session.incident, edits[-1], "en")
    old, new = line.split(": ", 1)[1].split(" → ")
    assert old != new and "13:50" in old and "13:55" in new, line
    assert old.startswith("…"), line
    assert "13:41-13:55" in render_markdown(session.incident, "en")


@pytest.mark.parametrize(
    ("ledger", "field", "add"),
    [
        ("hypotheses", "statement", lambda s: s.add_hypothesis("fragmentation", "restart")),
        ("actions", "what", lambda s: s.add_action("alert on queue time", "li", "", "")),
        ("timeline", "text", lambda s: s.add_timeline(T0, "paged the owner")),
    ],
)
def test_f8_names_a_rows_addition_by_the_text_it_was_added_with(session, ledger, field, add):
    """A row edited since it was added: F8's "Added" line still reads what was added (the
    edit is its own line, from the old text to the new)."""
    from cockpit.history import entry_line

    row = add(session)
    added_text = getattr(row, field)
    session.edit_row(ledger, row.id, **{field: "edited since"})
    added, edited = (entry_line(session.incident, h, "en") for h in session.incident.history)
    assert added.startswith("Added ") and f"“{added_text}”" in added, added
    assert "edited since" not in added, added
    assert "edited since" in edited, edited
