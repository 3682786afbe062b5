"""The scorecard against the answer key: each part, the time to diagnosis, the path, the
hypotheses, the decisive evidence pinned, what was missed and where; and ``cockpit drill
score ID [--json]``."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from drill_ctx import drill_ctx

from cockpit.cli import main
from cockpit.drills.catalogue import get_drill
from cockpit.drills.score import PARTS, NotSubmitted, card_text, score
from cockpit.incident import Evidence, HypothesisStatus


def _answer_right(s, key) -> None:  # type: ignore[no-untyped-def]
    sus = key.suspects[0]
    s.set_drill_answer(
        "G",
        layer=key.primary_layer,
        scope=key.scope,
        suspect_kind=sus.kind,
        suspect_name=sus.name,
        suspect_uuid=sus.uuid,
        cause_class=key.cause_class,
        impact_start=key.impact_start + timedelta(minutes=2),
        detected_at=key.detected_at,
    )


def test_a_right_answer_on_the_experts_path_scores_everything(tmp_path: Path) -> None:
    ctx = drill_ctx(tmp_path, "worked_example", "en")
    s, key = ctx.session, get_drill("worked_example").key
    with pytest.raises(NotSubmitted):
        score(s.incident, key, "en")
    for st in key.expert_path:
        s.visit(st.value)
    for d in key.decisive_evidence:
        s.pin(Evidence(label=d.what, value="1", what=d.what))
    h = s.add_hypothesis("fragmentation shrinks the batches", "batch size stays at 8")
    s.set_hypothesis_status(h.id, HypothesisStatus.SUPPORTED)
    _answer_right(s, key)
    s.submit_drill_answer("I")
    card = score(s.incident, key, "en")
    assert [p.part for p in card.answers] == list(PARTS)
    assert all(p.correct for p in card.answers) and card.correct == card.total == 6
    assert card.path.missed == [] and card.path.extra == [] and card.path.in_order
    assert card.hypotheses.total == 1 and card.hypotheses.with_falsifier == 1
    assert card.hypotheses.tested == 1
    assert all(e.pinned for e in card.evidence)
    assert card.missed == []
    assert 0 <= card.time_to_diagnosis_s < 600
    text = card_text(card, "en")
    assert "6 of 6 parts right" in text and "Nothing missed." in text


def test_a_wrong_answer_says_what_was_missed_and_where(tmp_path: Path) -> None:
    ctx = drill_ctx(tmp_path, "worked_example", "zh")
    s, key = ctx.session, get_drill("worked_example").key
    for st in ("A", "C", "G"):
        s.visit(st)
    _answer_right(s, key)
    s.set_drill_answer(
        "G",
        layer="hardware",
        suspect_kind="node",
        suspect_name="gpu-node-a1",
        detected_at=None,
        impact_start=key.impact_start - timedelta(minutes=30),
    )
    s.submit_drill_answer("G")
    card = score(s.incident, key, "zh")
    right = {p.part: p.correct for p in card.answers}
    assert right == {
        "layer": False,
        "scope": True,
        "suspect": False,
        "cause_class": True,
        "impact_start": False,
        "detected_at": None,
    }
    assert card.correct == 2
    assert card.path.missed == ["B", "D", "F", "H", "I"] and not card.path.in_order
    assert not any(e.pinned for e in card.evidence)
    kinds = [(m.kind, m.what) for m in card.missed]
    assert ("answer", "layer") in kinds and ("answer", "suspect") in kinds
    assert ("answer", "detected_at") in kinds
    assert ("evidence", "runtime.fragmentation") in kinds and ("step", "F") in kinds
    frag = next(m for m in card.missed if m.what == "runtime.fragmentation")
    assert (frag.where.step, frag.where.panel) == ("C", "drilldown")
    text = card_text(card, "zh")
    assert "✗ 主要层：硬件层（答案：运行时层" in text
    assert "未固定：显存碎片率 12% → 34%" in text and "C · 从 SLI 分层下钻 的分层下钻表" in text
    assert "— 检测时间：未作答" in text


def test_drill_score_prints_the_same_card(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ctx = drill_ctx(tmp_path, "worked_example", "en")
    s, key = ctx.session, get_drill("worked_example").key
    s.visit("A")
    _answer_right(s, key)
    state = ["--state-dir", str(tmp_path), "--lang", "en"]
    s.flush()
    assert main(["drill", "score", s.incident.id, *state]) == 1
    assert "not handed in" in capsys.readouterr().err
    s.submit_drill_answer("G")
    s.flush()
    s.store.release_all()
    assert main(["drill", "score", s.incident.id, "--json", *state]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc == json.loads(score(s.incident, key, "en").model_dump_json())
    assert doc["correct"] == 6 and doc["drill"] == "worked_example"
    assert main(["drill", "score", "latest", *state]) == 0
    out = capsys.readouterr().out
    assert out == card_text(score(s.incident, key, "en"), "en")
    assert main(["drill", "score", "inc-nope", *state]) == 2
    assert main(["drill", "score", *state]) == 2
