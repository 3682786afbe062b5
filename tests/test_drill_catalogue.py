"""The drills shipped in the package load with valid answer keys; a broken key is refused."""

from __future__ import annotations

import json
import shutil
from datetime import UTC
from pathlib import Path

import pytest
from pydantic import ValidationError

from cockpit.drills.catalogue import BUNDLE, KEY, DrillError, catalogue, get_drill, load_drill
from cockpit.drills.key import AnswerKey
from cockpit.i18n import catalog, t
from cockpit.knowledge.catalogues import cause_classes
from cockpit.scenarios.worked_example import scenario as worked_example


def test_every_shipped_drill_loads_with_its_bundle() -> None:
    drills = catalogue()
    assert "worked_example" in drills
    for drill_id, d in drills.items():
        assert d.id == drill_id
        assert d.bundle.is_file() and d.bundle.stat().st_size > 0
        assert d.key.impact_start.tzinfo is UTC
        assert d.key.title.zh != d.key.title.en


def test_the_worked_example_key_states_the_scenarios_ground_truth() -> None:
    key = get_drill("worked_example").key
    sc = worked_example()
    assert key.impact_start == sc.incident_start_dt
    assert sc.detected_at is not None and int(key.detected_at.timestamp()) == sc.detected_at
    assert key.scope == "shared" and key.primary_layer == "runtime"
    assert [s.name for s in key.suspects] == [sc.scope["deployment"]]
    assert key.cause_class == "memory_fragmentation"
    assert cause_classes()[key.cause_class].layer == key.primary_layer


def test_every_cause_class_has_a_name_in_both_languages() -> None:
    named = {k.removeprefix("metrics.cause.") for k in catalog() if k.startswith("metrics.cause.")}
    assert named == set(cause_classes()), "causes.toml and the metrics.cause.* names differ"
    for cause in cause_classes():
        zh, en = t(f"metrics.cause.{cause}", "zh"), t(f"metrics.cause.{cause}", "en")
        assert zh and en and zh != en, cause


def test_an_unknown_drill_is_named_with_those_there_are() -> None:
    with pytest.raises(DrillError, match="worked_example"):
        get_drill("no-such-drill")


def _key() -> dict[str, object]:
    raw: dict[str, object] = json.loads(get_drill("worked_example").key.model_dump_json())
    return raw


@pytest.mark.parametrize(
    "change",
    [
        {"cause_class": "bad_luck"},
        {"primary_layer": "network"},
        {"scope": "both"},
        {"suspects": [{"kind": "cluster", "name": "x"}]},
        {"suspects": []},
        {"expert_path": ["C", "D"]},
        {"expert_path": ["A", "J"]},
        {"detected_at": "2026-11-27T12:00:00Z"},
        {"impact_start": "2026-11-27T12:10:00"},
        {"id": "../etc"},
        {"title": {"zh": "", "en": "x"}},
        {"spoiler": "x"},
    ],
)
def test_a_broken_key_is_refused(change: dict[str, object]) -> None:
    AnswerKey.model_validate(_key())
    with pytest.raises(ValidationError):
        AnswerKey.model_validate({**_key(), **change})


def test_a_drill_directory_must_hold_its_own_key_and_a_bundle(tmp_path: Path) -> None:
    src = get_drill("worked_example")
    d = tmp_path / "worked_example"
    d.mkdir()
    (d / KEY).write_text(src.key.model_dump_json())
    with pytest.raises(DrillError, match="no bundle"):
        load_drill(d)
    shutil.copy(src.bundle, d / BUNDLE)
    assert load_drill(d).key == src.key
    other = tmp_path / "other"
    shutil.copytree(d, other)
    with pytest.raises(DrillError, match="directory's name"):
        load_drill(other)
    (d / KEY).write_text("{not json")
    with pytest.raises(DrillError, match=KEY):
        load_drill(d)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_list_gives_no_answer_away(lang: str, capsys: pytest.CaptureFixture[str]) -> None:
    from cockpit.cli import main

    assert main(["drill", "--list", "--json", "--lang", lang]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert [d["id"] for d in listing] == list(catalogue())
    for row in listing:
        key = get_drill(row["id"]).key
        assert set(row) == {"id", "title", "difficulty", "teaches"}
        shown = json.dumps(row, ensure_ascii=False).lower()
        answers = [s.name for s in key.suspects] + [
            key.cause_class,
            t(f"metrics.cause.{key.cause_class}", lang),
            t(f"metrics.layer.{key.primary_layer}", lang),
        ]
        answers += [e.what for e in key.decisive_evidence]
        for answer in answers:
            assert answer.lower() not in shown, (row["id"], answer)
    assert main(["drill", "--list", "--lang", lang]) == 0
    table = capsys.readouterr().out
    assert all(row["title"] in table for row in listing)


def test_every_place_a_key_may_name_has_a_human_name_and_every_panel_is_one() -> None:
    from importlib.metadata import entry_points

    from cockpit.drills.key import PANELS

    panels = {ep.name for ep in entry_points(group="cockpit.panels")}
    assert panels <= PANELS, sorted(panels - PANELS)
    for panel in PANELS:
        assert t(f"drill.panel.{panel}", "zh") != t(f"drill.panel.{panel}", "en"), panel
