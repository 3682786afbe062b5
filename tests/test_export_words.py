"""The export says what the screens say: one word per status (a hypothesis', a playbook
item's, a timeline entry's kind), in both languages."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cockpit.analysis.playbooks.render import status_text
from cockpit.export import render
from cockpit.history import entry_line
from cockpit.i18n import t
from cockpit.incident import (
    HypothesisStatus,
    Incident,
    ItemStatus,
    PlaybookItemResult,
    PlaybookRecord,
    TimelineKind,
)
from cockpit.session import IncidentSession
from cockpit.store import IncidentStore

T0 = datetime(2026, 11, 29, 13, 0, tzinfo=UTC)
LANGS = ("zh", "en")


@pytest.fixture
def session(tmp_path):
    return IncidentSession(IncidentStore(tmp_path), Incident(id="inc-words"))


def _section(md: str, key: str, lang: str) -> str:
    """The lines of the export's appendix ``key`` (up to the next ``##``)."""
    head = f"## {t(f'export.appendix.{key}', lang)}"
    body = md.split(head, 1)[1]
    return body.split("\n## ", 1)[0]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("status", list(HypothesisStatus))
def test_a_hypothesis_status_is_one_word_on_g_in_the_history_and_in_the_export(
    session, lang, status
):
    hyp = session.add_hypothesis("KV cache fragmentation", "usage below 80 %")
    other = HypothesisStatus.REFUTED if status is HypothesisStatus.OPEN else HypothesisStatus.OPEN
    session.set_hypothesis_status(hyp.id, other)
    session.set_hypothesis_status(hyp.id, status)
    word = t(f"hyp.status.{status.value}", lang)  # G's table (screens/hypotheses.py)
    md = render(session.incident, lang, "md")
    appendix = _section(md, "hypotheses", lang)
    assert f"{t('export.hyp.status', lang)}{t('export.colon', lang)}{word}\n" in appendix
    # The corrections appendix and F8 name the same status with the same word.
    line = entry_line(session.incident, session.incident.history[-1], lang)
    assert word in line
    assert line in _section(md, "corrections", lang)


@pytest.mark.parametrize("lang", LANGS)
def test_a_playbook_item_status_reads_in_the_export_as_on_f7_and_the_cli(session, lang):
    items = [
        PlaybookItemResult(item=f"item {s.value}", status=s, finding="seen") for s in ItemStatus
    ]
    session.record_playbook(PlaybookRecord(playbook="ttft_spike", items=items, updated_at=T0))
    appendix = _section(render(session.incident, lang, "md"), "playbooks", lang)
    for status in ItemStatus:
        # status_text is what the F7 screen and `cockpit playbook` print for it.
        assert f"[{status_text(status, lang)}] item {status.value}" in appendix


@pytest.mark.parametrize("lang", LANGS)
def test_a_timeline_entry_kind_reads_in_the_export_as_on_a(session, lang):
    for n, kind in enumerate(TimelineKind):
        session.add_timeline(T0.replace(minute=n), f"entry {kind.value}", kind)
    appendix = _section(render(session.incident, lang, "md"), "timeline", lang)
    for kind in TimelineKind:
        # A's timeline table names the kind with timeline.kind.* (cockpit/ui/timeline.py).
        assert f"[{t(f'timeline.kind.{kind.value}', lang)}] entry {kind.value}" in appendix


@pytest.mark.parametrize("lang", LANGS)
def test_a_detection_time_filled_from_the_alert_is_not_the_users_in_the_export(session, lang):
    from cockpit.incident import PagedBy, ServiceScope

    paged = PagedBy(name="VLLMHighE2ELatency", source="alertmanager", starts_at=T0)
    session.start_from_alert(paged, "P99 up", ServiceScope(namespace="llm"), T0)
    entry = next(e for e in session.incident.timeline if e.text == "detect")
    assert entry.source == "alert"
    detect = f"[{t('timeline.kind.impact', lang)}] {t('times.detect', lang)}"
    said = t("export.paren", lang, text=t("export.source", lang, source="SRC"))
    timeline = _section(render(session.incident, lang, "md"), "timeline", lang)
    assert detect + said.replace("SRC", t("source.name.alert", lang)) in timeline
    assert detect + said.replace("SRC", t("source.name.user", lang)) not in timeline
    # Typed over by the responder, the time is theirs: still one entry, now the user's.
    session.set_time("detect", T0.replace(minute=2))
    entries = [e for e in session.incident.timeline if e.text == "detect"]
    assert [(e.at.minute, e.source) for e in entries] == [(2, "user")]


def test_a_time_cockpit_read_from_prometheus_says_so_and_replaces_the_typed_one(session):
    session.set_time("start", T0)
    session.set_time("start", T0.replace(minute=1), source="prometheus")
    entries = [e for e in session.incident.timeline if e.text == "start"]
    assert [(e.at.minute, e.source) for e in entries] == [(1, "prometheus")]
    assert '"source": "prometheus"' in render(session.incident, "en", "json")


def _worded(key: str, kind: str, message):  # type: ignore[no-untyped-def]
    """A change item cockpit read from the metrics and worded as ``message``."""
    from cockpit.analysis.changes import ChangeItem

    return ChangeItem(
        key=key, at=T0, kind=kind, summary=message.text("en"), message=message, origin="metrics"
    )


def _rollout_item():
    from cockpit.models.messages import Msg

    message = Msg(
        key="metrics.change.rollout_done",
        args={
            "deployment": "qwen-chat",
            "old": "qwen-chat-7f9c",
            "old_pods": 6,
            "new": "qwen-chat-5d2b",
            "new_pods": 6,
            "start": "13:00:00",
            "end": "13:16:30",
        },
    )
    return _worded("rollout:qwen-chat:5d2b", "rollout", message), message


@pytest.mark.parametrize("lang", LANGS)
def test_a_change_cockpit_worded_reads_in_the_exports_language(session, lang):
    item, message = _rollout_item()
    session.record_changes([item])
    change = session.incident.changes[0]
    # B's table and the history name it in the screen's language.
    assert change.summary_in(lang) == message.text(lang)
    md = render(session.incident, lang, "md")
    said = message.text(lang)
    other = message.text("en" if lang == "zh" else "zh")
    changes = md.split(f"- {t('export.field.key_evidence', lang)}", 1)[0]
    assert said in changes and other not in changes
    timeline = _section(md, "timeline", lang)
    assert said in timeline and other not in timeline
    doc = render(session.incident, lang, "json")
    assert said in doc and other not in doc and "summary_i18n" not in doc


def test_a_change_edited_by_the_responder_reads_as_typed_and_an_old_one_as_stored(session):
    item, _ = _rollout_item()
    session.record_changes([item])
    change = session.incident.changes[0]
    session.edit_row("changes", change.id, summary="rollout, our canary")
    assert "rollout, our canary" in render(session.incident, "zh", "md")
    # A record written before changes kept both languages: the stored text.
    from cockpit.incident import Change

    old = Change.model_validate({"summary": "rollout of qwen-chat", "kind": "rollout"})
    assert old.summary_i18n == {} and old.summary_in("zh") == "rollout of qwen-chat"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("recorded_in", LANGS)
def test_playbook_findings_read_in_the_exports_language_whatever_f7_recorded(
    session, lang, recorded_in
):
    from cockpit.analysis.playbooks.render import finding_text, summary, to_record
    from cockpit.analysis.playbooks.result import ItemResult
    from cockpit.analysis.playbooks.spec import load_playbook

    book = load_playbook("ttft_spike")
    first = book.items[0]
    results = [ItemResult(item=first.id, status=ItemStatus.OK, finding_key="playbook.finding.user")]
    session.record_playbook(to_record(book, results, recorded_in))
    appendix = _section(render(session.incident, lang, "md"), "playbooks", lang)
    assert first.text(lang) in appendix
    assert finding_text(results[0], lang) in appendix
    assert f"{book.title.get(lang)}: {summary(results, lang)}" in appendix
    other = "en" if lang == "zh" else "zh"
    assert first.text(other) not in appendix
    doc = render(session.incident, lang, "json")
    assert "item_i18n" not in doc and "finding_i18n" not in doc and first.text(lang) in doc


def test_a_playbook_record_written_before_both_languages_were_kept_shows_its_text():
    record = PlaybookRecord.model_validate(
        {"playbook": "ttft_spike", "summary": "TTFT: 1 ok", "items": [{"item": "queue?"}]}
    )
    assert record.in_lang("zh").summary == "TTFT: 1 ok"
    assert record.in_lang("zh").items[0].item == "queue?"


@pytest.mark.parametrize("lang", LANGS)
def test_an_event_cockpit_worded_on_the_timeline_reads_in_the_exports_language(session, lang):
    from cockpit.models.messages import Msg
    from cockpit.plugins.k8s_timeline import record

    message = Msg(key="metrics.change.alert", args={"alert": "VLLMHighE2ELatency", "where": "llm"})
    item = _worded("alert:x", "alert", message)
    assert record(session, [item]) == 1
    timeline = _section(render(session.incident, lang, "md"), "timeline", lang)
    assert message.text(lang) in timeline
    assert message.text("en" if lang == "zh" else "zh") not in timeline
