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
