"""Snapshots of the ledgers G (hypotheses) and H (experiments) at 80×24 and 160×48 in zh
and en, with texts longer than a column: the table fits, the highlighted row is shown
whole in the pane under it."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from cockpit.app import CockpitApp
from cockpit.incident import Experiment, Hypothesis, HypothesisStatus, Incident
from testkit import FROZEN, make_ctx

SIZES = [(80, 24), (160, 48)]


def ledgers() -> Incident:
    inc = Incident(id="inc-0000ledg", title="P99 620 ms", created_at=FROZEN, updated_at=FROZEN)
    inc.hypotheses += [
        Hypothesis(
            id="hyp-1",
            statement="gpu-node-7 throttles thermally (83 °C, HW slowdown) and its replicas "
            "cut their batch from 8 to 3",
            falsifier="P99 stays above 300 ms for 15 minutes after gpu-node-7 is cordoned and "
            "its replica drained, while the other replicas' batch sizes do not change",
            status=HypothesisStatus.SUPPORTED,
            created_at=FROZEN,
        ),
        Hypothesis(
            id="hyp-2",
            statement="显存碎片导致批大小下降，长请求在碎片化的 KV 缓存里排队",
            falsifier="重启后碎片率回落但 P99 不降",
            status=HypothesisStatus.REFUTED,
            created_at=FROZEN,
        ),
    ]
    inc.experiments += [
        Experiment(
            id="exp-1",
            at=FROZEN,
            variable="max_num_seqs",
            from_value="256",
            to_value="128",
            scope="pod vllm-qwen-0, vllm-qwen-1",
            sli="P99 latency",
            before="620 ms",
            after="410 ms",
            hypothesis_id="hyp-2",
        ),
        Experiment(
            id="exp-2",
            at=FROZEN + timedelta(minutes=20),
            variable="gpu-node-7",
            from_value="schedulable",
            to_value="cordoned + drained",
            sli="P99 latency",
            before="410 ms",
            hypothesis_id="hyp-1",
        ),
    ]
    return inc


def _shown(prefix: str) -> Any:
    """Focus the ledger's table and bring its detail pane into view."""

    async def run_before(pilot: Any) -> None:
        await pilot.pause()
        pilot.app.screen.query_one(f"#{prefix}-table").focus()
        await pilot.pause()
        pilot.app.screen.query_one(f"#{prefix}-detail").scroll_visible(animate=False)
        await pilot.pause()

    return run_before


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_hypotheses_ledger(snap_compare: Any, tmp_path: Path, lang: str, size: Any) -> None:
    app = CockpitApp(ctx=make_ctx(tmp_path, lang=lang, incident=ledgers()), start_step="G")
    assert snap_compare(app, terminal_size=size, run_before=_shown("hyp"))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_experiments_ledger(snap_compare: Any, tmp_path: Path, lang: str, size: Any) -> None:
    app = CockpitApp(ctx=make_ctx(tmp_path, lang=lang, incident=ledgers()), start_step="H")
    assert snap_compare(app, terminal_size=size, run_before=_shown("exp"))
