"""Small wording faults a first walk of the screens found: no stray space before a comma
when a signal has no unit; E's hint names a busy GPU as its example and no rollout when
there is one revision."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from cockpit.analysis.history import GpuEntity, PodEntity, RevisionEntity, WindowInventory
from cockpit.analysis.recovery import LineStatus, RecoveryLine
from cockpit.collect.recovery import line_text
from cockpit.plugins.cohort import example_gpu, pick_text


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("unit", ["", "ms", " restarts"])
@pytest.mark.parametrize(
    "status", [LineStatus.RECOVERED, LineStatus.NOT_RECOVERED, LineStatus.CONTEXT]
)
def test_recovery_line_has_no_space_before_a_comma(
    lang: str, unit: str, status: LineStatus
) -> None:
    line = RecoveryLine(
        name="throttle",
        key="",
        unit=unit,
        status=status,
        baseline=0.0,
        limit=0.5,
        last=1.0,
        worst_in_hold=1.0,
        within_since=datetime(2026, 11, 27, 13, 0, tzinfo=UTC),
        slo=2.0,
    )
    text = line_text(line, lang)
    assert not re.search(r"\s[,，]", text), text
    assert "  " not in text, text
    if unit.strip():
        assert re.search(r"1 (ms|restarts|次重启)", text), text
        # every number of the line carries the unit, not only the latest value
        shown = unit.strip() if lang == "en" or unit == "ms" else "次重启"
        assert text.count(shown) >= (3 if status is LineStatus.CONTEXT else 4), text


def _inventory(revisions: int) -> WindowInventory:
    gpus = {
        f"GPU-{n}{i}": GpuEntity(uuid=f"GPU-{n}{i}", node=f"gpu-node-{n}", index=str(i), pods=pods)
        for n, i, pods in [("a", 6, []), ("a", 0, []), ("b", 3, ["chat-7d9f8-xk2p1"]), ("b", 5, [])]
    }
    pods = {"chat-7d9f8-xk2p1": PodEntity(name="chat-7d9f8-xk2p1", gpus=["GPU-b3"])}
    revs = {
        f"chat-{h}": RevisionEntity(name=f"chat-{h}", hash=h)
        for h in ["7d9f8", "6c1e2"][:revisions]
    }
    nodes = {"gpu-node-a": ["GPU-a6", "GPU-a0"], "gpu-node-b": ["GPU-b3", "GPU-b5"]}
    return WindowInventory(start=0, end=3600, pods=pods, revisions=revs, gpus=gpus, nodes=nodes)


def test_cohort_example_names_the_suspect_or_a_busy_gpu_never_an_idle_one() -> None:
    inv = _inventory(1)
    assert example_gpu(inv, None) == "gpu-node-b/3"  # the only GPU a pod held
    assert example_gpu(inv, ("GPU-b5", "gpu")) == "gpu-node-b/5"  # the suspect itself
    assert example_gpu(inv, ("chat-7d9f8-xk2p1", "pod")) == "gpu-node-b/3"
    idle = _inventory(1)
    for g in idle.gpus.values():
        g.pods = []
    assert example_gpu(idle, None) == ""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_cohort_hint_names_revisions_only_when_there_is_more_than_one(lang: str) -> None:
    for n, shown in [(1, False), (2, True)]:
        text = pick_text(_inventory(n), None, lang)
        assert ("chat-6c1e2" in text) is shown, text
        assert ("revisions" in text or "版本" in text) is shown, text
        assert "gpu-node-b/3" in text and "gpu-node-a/6" not in text, text
