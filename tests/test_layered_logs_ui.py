"""The layered-logs panel against the local Kubernetes API server (cluster ``logs``):
findings listed per layer with their time on the incident timeline, the highlighted
finding's lines, Alt+P pinning it (a printable key pins nothing), and the panel
registered as an entry-point plugin on steps D and E."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import DataTable, Static

from cockpit.context import AppContext
from cockpit.incident import TimelineKind
from cockpit.plugins.layered_logs import LayeredLogsPanel
from cockpit.ui.plugins import load_panels, panels_for_step
from tests.fixtures.kube import layered_logs as fx
from tests.test_layered_logs import make_ctx


class Host(App[None]):
    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self.ctx = ctx

    def compose(self) -> ComposeResult:
        yield LayeredLogsPanel(self.ctx)


async def _loaded(pilot: Any) -> LayeredLogsPanel:
    panel = pilot.app.query_one(LayeredLogsPanel)
    for _ in range(200):
        if panel.data is not None or panel.failure is not None:
            break
        await pilot.pause(0.05)
    await pilot.pause()
    assert panel.failure is None and panel.data is not None
    return panel


async def test_findings_listed_and_pinned(kubeconfig: Path, tmp_path: Path) -> None:
    ctx = make_ctx(kubeconfig, tmp_path)
    app = Host(ctx)
    async with app.run_test(size=(180, 70)) as pilot:
        panel = await _loaded(pilot)
        table = panel.query_one("#logs-findings", DataTable)
        keys = [r.value for r in table.rows]
        assert keys[0] == "access/access_errors/"
        oom = keys.index("runtime/cuda_oom/fragmentation")
        assert "runtime/nccl/watchdog_timeout" in keys
        row = [str(c) for c in table.get_row_at(oom)]
        assert row[:3] == ["Runtime", "12:02:06 (T+2m06s)", "1"]
        assert row[3] == "CUDA out of memory (OOM) — Fragmentation" and row[4] == fx.SUSPECT
        table.focus()
        table.move_cursor(row=oom)
        await pilot.pause()
        detail = str(panel.query_one(".logs--detail", Static).render())
        assert "CUDA out of memory" in detail and fx.SUSPECT in detail
        assert ctx.session is not None
        await pilot.press("p")  # typing never pins
        assert not ctx.session.incident.evidence
        await pilot.press("alt+p")
        await pilot.pause()
        (ev,) = ctx.session.incident.evidence
        assert ev.source == "logs" and ev.value == "1" and "Runtime logs" in ev.label
        assert ev.at is not None and ev.at.strftime("%H:%M:%S") == "12:02:06"
        tl = [e for e in ctx.session.incident.timeline if e.kind is TimelineKind.EVIDENCE]
        assert tl[-1].at == ev.at
        ids = str(panel.query_one(".logs--ids", Static).render())
        assert fx.RID_FOLLOWED in ids and "followed from the gateway" in ids


def test_registered_on_d_and_e() -> None:
    loaded = load_panels()
    assert next(p for p in loaded if p.name == "layered_logs").cls is LayeredLogsPanel
    for step in ("D", "E"):
        assert LayeredLogsPanel in panels_for_step(step, loaded)
    assert LayeredLogsPanel not in panels_for_step("A", loaded)
