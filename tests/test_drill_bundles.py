"""Every shipped drill is a complete incident: its bundle opens like ``cockpit drill NAME``,
every step of it is answered (no panel or view fails with "not in this bundle", no text
says a source was not recorded), and ``cockpit analyze`` on it concludes the layer and a
suspect of its own answer key (for a drill whose cause is a pod that cannot be scheduled,
which the metrics analysis does not conclude, ``cockpit pending`` does: the key's pod is
Pending with a verdict, and the key's node is the one a taint blocks). Its key is the one ``make drills`` derives from its
scenario's ground truth, and the listing says nothing of the answers.

When this fails after a change to a screen's queries, re-record with ``make drills``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from drill_ctx import drill_ctx

from cockpit.app import CockpitApp
from cockpit.cli import main
from cockpit.drills.build import DRILLS, answer_key
from cockpit.drills.catalogue import Drill, catalogue
from cockpit.knowledge.catalogues import cause_classes
from cockpit.scenarios import get_scenario
from tests.test_demo_coverage import unanswered

SHIPPED = sorted(catalogue())
SCHEDULING = "unschedulable"
"""The cause class of a drill checked against ``cockpit pending`` (``cockpit analyze``
reads the metrics and concludes no scheduling cause)."""


def test_at_least_seven_drills_ship_each_from_its_scenario():
    assert len(SHIPPED) >= 7
    assert {s.id for s in DRILLS} <= set(SHIPPED)
    for spec in DRILLS:
        drill = catalogue()[spec.id]
        # the key on disk is the one derived from the scenario's ground truth and times
        assert drill.key == answer_key(spec, get_scenario(spec.scenario))
        assert drill.bundle.stat().st_size < 2 * 1024 * 1024


def test_the_listing_gives_no_answer(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--lang", "en", "drill", "--list", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert [row["id"] for row in listing] == SHIPPED
    for row in listing:
        assert set(row) == {"id", "title", "difficulty", "teaches"}
        key = catalogue()[row["id"]].key
        shown = json.dumps(row, ensure_ascii=False).lower()
        for s in key.suspects:
            assert s.name.lower() not in shown
        assert key.cause_class not in shown and key.cause_class.replace("_", " ") not in shown


@pytest.mark.parametrize("name", SHIPPED)
async def test_every_step_of_the_drill_has_data(tmp_path: Path, name: str) -> None:
    ctx = drill_ctx(tmp_path, name)
    assert await unanswered(CockpitApp(ctx=ctx, start_step="A"), "en") == []


@pytest.mark.parametrize("name", SHIPPED)
def test_analyze_agrees_with_the_key(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    drill = catalogue()[name]
    if drill.key.cause_class == SCHEDULING:
        _pending_agrees_with_the_key(drill, capsys)
        return
    rc = main(["--replay", str(drill.bundle), "--lang", "en", "analyze", "--json"])
    assert rc in (0, 1)
    conclusion = json.loads(capsys.readouterr().out)["conclusion"]
    key = drill.key
    assert conclusion["primary_layer"] == key.primary_layer
    suspect = conclusion["suspect"]
    if suspect["kind"] == "client":  # the metrics name no client: a key names the service
        suspect["kind"] = "service"
    names = {suspect["name"], suspect["pod"], suspect["new_revision"], suspect["deployment"]}
    if suspect["kind"] == "gpu":
        names.add(f"{suspect['node']}/{suspect['gpu_index']}")
    assert any(
        s.matches(suspect["kind"], n, suspect["uuid"]) for s in key.suspects for n in names if n
    ), (suspect, key.suspects)


def _pending_agrees_with_the_key(drill: Drill, capsys: pytest.CaptureFixture[str]) -> None:
    key = drill.key
    assert cause_classes()[SCHEDULING].layer == key.primary_layer
    assert main(["--replay", str(drill.bundle), "--lang", "en", "pending", "--json"]) == 0
    analyses = json.loads(capsys.readouterr().out)["analyses"]
    mine = [a for a in analyses if any(s.matches("pod", a["pod"]) for s in key.suspects)]
    assert len(mine) == 1, ([a["pod"] for a in analyses], key.suspects)
    (pending,) = mine
    assert pending["message_source"] == "event" and pending["likely"] != "unknown"
    assert pending["gpu_resource"] == "nvidia.com/gpu"
    tainted = [r for r in pending["rows"] if r["taints_blocking"]]
    assert tainted and all(any(s.matches("node", r["name"]) for s in key.suspects) for r in tainted)
    # every other GPU node is full: the taint keeps the pod off the only free GPUs
    for r in pending["rows"]:
        if r["gpu_node"] and r not in tainted:
            assert r["gpu_allocatable"] - r["gpu_requested"] < 1, r
