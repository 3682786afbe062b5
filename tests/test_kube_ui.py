"""The scheduling panel, the changes view and the Kubernetes timeline in a running app
(Textual Pilot), against the local API server: data shown, commands copied, a change
marked suspect, and failures shown in place while the rest keeps working."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.widgets import DataTable, Static

from cockpit.clock import Clock
from cockpit.config import Settings
from cockpit.context import AppContext
from cockpit.i18n import t
from cockpit.incident import Incident
from cockpit.plugins.k8s_timeline import K8sTimelinePanel
from cockpit.plugins.scheduling import NODE_COLUMNS, SchedulingPanel
from cockpit.session import IncidentSession
from cockpit.sources.base import Sources
from cockpit.sources.kubernetes import KubeSource
from cockpit.store import IncidentStore
from cockpit.ui.changes_view import ChangesView
from tests.backends.kube_api import Fault, KubeApiServer
from tests.fixtures.kube.objects import T0


def make_ctx(kubeconfig: Path, cluster: str, tmp_path: Path, namespace: str = "llm") -> AppContext:
    inc = Incident(lang="en")
    inc.service.namespace = namespace
    inc.times.start = T0
    session = IncidentSession(IncidentStore(tmp_path / "state"), inc)
    kube = KubeSource(kubeconfig=kubeconfig, context=cluster, timeout_s=0.8)
    return AppContext(
        settings=Settings(),
        sources=Sources(kube=kube),
        clock=Clock(frozen_at=T0 + __import__("datetime").timedelta(minutes=30)),
        lang="en",
        session=session,
    )


class Host(App[None]):
    def __init__(self, *widgets: Any) -> None:
        super().__init__()
        self._widgets = widgets

    def compose(self) -> ComposeResult:
        yield from self._widgets


async def _settle(pilot: Any, cond: Any, tries: int = 100) -> None:
    for _ in range(tries):
        if cond():
            return
        await pilot.pause(0.05)
    raise AssertionError("condition not reached")


async def test_scheduling_panel_table_and_copy(kubeconfig: Path, tmp_path: Path) -> None:
    ctx = make_ctx(kubeconfig, "capacity", tmp_path)
    panel = SchedulingPanel(ctx)
    app = Host(panel)
    async with app.run_test(size=(160, 60)) as pilot:
        await _settle(pilot, lambda: panel.data is not None)
        table = panel.query_one(DataTable)
        names = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
        assert names[0] == "— GPU nodes (4)"
        assert set(names[1:5]) == {"gpu-a", "gpu-b", "gpu-c", "gpu-d"}
        gpu_b = table.get_row_at(names.index("gpu-b"))
        gpu, state = NODE_COLUMNS.index("gpu"), NODE_COLUMNS.index("state")
        assert str(gpu_b[gpu]) == "8/7/7" and "1 GPU unhealthy" in str(gpu_b[state])
        summary = str(panel.query_one(".sched--summary", Static).render())
        assert "No preemption victims" in summary
        panel.focus()
        assert panel.copy(0) == "kubectl describe pod vllm-70b-0 -n llm"
        assert app.clipboard == "kubectl describe pod vllm-70b-0 -n llm"
    await ctx.sources.kube.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_scheduling_nodes_table_shows_why_at_80_columns(
    kubeconfig: Path, tmp_path: Path, lang: str
) -> None:
    """At 80 columns a node's blockers, state, GPUs and blocking taints are inside the
    table, none cut (the node's name and the blockers wrap); the labels, CPU, memory and
    device plugin follow past the right edge."""
    from rich.cells import cell_len

    ctx = make_ctx(kubeconfig, "capacity", tmp_path)
    ctx.lang = lang
    panel = SchedulingPanel(ctx)
    app = Host(panel)
    async with app.run_test(size=(80, 24)) as pilot:
        await _settle(pilot, lambda: panel.data is not None)
        await pilot.pause()
        table = panel.query_one(DataTable)
        assert table.row_count > 4
        kept = NODE_COLUMNS.index("taints") + 1
        columns = table.ordered_columns[:kept]
        used = sum(c.get_render_width(table) for c in columns)
        assert used <= table.scrollable_content_region.width, used
        for j, column in enumerate(columns):
            room = column.get_render_width(table) - 2 * table.cell_padding
            for i in range(table.row_count):
                if table.ordered_rows[i].height == 1:
                    assert cell_len(str(table.get_row_at(i)[j])) <= room, (j, i)
    await ctx.sources.kube.close()


async def test_panel_shows_403_and_rest_works(
    kube_api: KubeApiServer, kubeconfig: Path, tmp_path: Path
) -> None:
    """One panel's cluster refuses (403 with the RBAC message); the other panel loads."""
    kube_api.inject(Fault(path="/clusters/faulty/api/v1/namespaces/llm/pods$", status=403))
    bad = SchedulingPanel(make_ctx(kubeconfig, "faulty", tmp_path / "a"))
    good = K8sTimelinePanel(make_ctx(kubeconfig, "rollout", tmp_path / "b"))
    app = Host(bad, good)
    try:
        async with app.run_test(size=(160, 60)) as pilot:
            await _settle(pilot, lambda: bad.failure is not None and good.data is not None)
            status = str(bad.query_one(".panel--status", Static).render())
            assert "Access denied" in status
            assert "kubectl auth can-i list pods -n llm" in status
            tl = str(good.query_one(".k8stl--list", Static).render())
            assert "OOMKilled" in tl and "Helm llm/vllm v1 → v2" in tl
            # The timeline panel put its items on the incident.
            inc = good.ctx.session.incident
            assert any("OOMKilled" in e.text for e in inc.timeline)
            assert any(c.kind == "rollout" for c in inc.changes)
    finally:
        kube_api.clear_faults()
        await bad.ctx.sources.kube.close()
        await good.ctx.sources.kube.close()


async def test_panel_timeout_500_truncated(
    kube_api: KubeApiServer, kubeconfig: Path, tmp_path: Path
) -> None:
    for fault, title in (
        (Fault(path="/clusters/faulty/api/v1/nodes", status=500), "Backend unavailable"),
        (Fault(path="/clusters/faulty/api/v1/nodes", delay=1.2), "Timed out"),
        (Fault(path="/clusters/faulty/api/v1/nodes", truncate=True), "not valid JSON"),
    ):
        kube_api.clear_faults()
        kube_api.inject(fault)
        panel = SchedulingPanel(make_ctx(kubeconfig, "faulty", tmp_path / title))
        app = Host(panel)
        try:
            async with app.run_test(size=(140, 40)) as pilot:
                await _settle(pilot, lambda p=panel: p.failure is not None)
                status = str(panel.query_one(".panel--status", Static).render())
                assert title in status, status
        finally:
            kube_api.clear_faults()
            await panel.ctx.sources.kube.close()


async def test_changes_view_mark_suspect(kubeconfig: Path, tmp_path: Path) -> None:
    ctx = make_ctx(kubeconfig, "rollout", tmp_path)
    view = ChangesView(ctx)
    app = Host(view)
    async with app.run_test(size=(160, 50)) as pilot:
        await _settle(pilot, lambda: view.report is not None)
        kinds = [i.kind for i in view.items]
        assert "rollout" in kinds and "helm" in kinds
        idx = next(
            i for i, it in enumerate(view.items) if it.key == "rollout/llm/Deployment/vllm/2"
        )
        assert view.toggle_suspect(idx) is True
        change = next(
            c for c in ctx.session.incident.changes if c.kind == "rollout" and "vllm" in c.summary
        )
        assert change.suspect and "--max-num-seqs: 256 → 512" in change.detail
        assert view.toggle_suspect(idx) is False
        assert not next(c for c in ctx.session.incident.changes if c.id == change.id).suspect
        # Each toast names the change whole, however long (it wraps, never cut mid-name).
        longest = max(range(len(view.items)), key=lambda i: len(view.items[i].text("en")))
        app.clear_notifications()
        view.toggle_suspect(longest)
        await pilot.pause()
        said = [str(n.message) for n in app._notifications]
        whole = view.items[longest].text("en")
        assert len(whole) > 80 and any(whole in m for m in said), (whole, said)
    await ctx.sources.kube.close()


async def test_changes_note_hint_follows_what_b_found(kubeconfig: Path, tmp_path: Path) -> None:
    """The note for other changes never says changes were not found while B lists some."""
    from cockpit.collect.kube_gather import ChangesReport
    from cockpit.ui.fields import ChangesNoteInput

    ctx = make_ctx(kubeconfig, "rollout", tmp_path)
    note = ChangesNoteInput(ctx)
    view = ChangesView(ctx)
    app = Host(view, note)
    async with app.run_test(size=(160, 50)) as pilot:
        await _settle(pilot, lambda: view.report is not None)
        field = note.query_one("#input-recent_changes_note")
        found = len(view.items)
        assert found > 0 and ctx.changes_found == found
        assert field.placeholder == f"changes beyond the {found} step B found automatically"
        assert "not found" not in field.placeholder
        empty = ChangesReport(
            namespace="llm", selector="", since=view.report.since, until=view.report.until
        )
        view.show(empty)
        await pilot.pause()
        assert ctx.changes_found == 0
        assert field.placeholder == "step B found no changes automatically; write any you know of"
    await ctx.sources.kube.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_scheduling_node_under_the_cursor_is_read_in_full_at_80_columns(
    kubeconfig: Path, tmp_path: Path, lang: str
) -> None:
    """At 80×24 the labels, CPU, memory and device plugin do not fit: the pane under the
    nodes table shows the cursor's node, every column with its header and the cells the
    table shows at 160 columns, and follows the cursor; the blockers stay in sight without
    scrolling. At 160 columns every column fits and the pane is not shown."""
    from cockpit.ui.row_detail import RowDetail, colon
    from cockpit.ui.table import PlainTable

    async def loaded(size: tuple[int, int], check: Any) -> None:
        ctx = make_ctx(kubeconfig, "capacity", tmp_path / f"{size[0]}")
        ctx.lang = lang
        panel = SchedulingPanel(ctx)
        app = Host(panel)
        try:
            async with app.run_test(size=size) as pilot:
                await _settle(pilot, lambda: panel.data is not None)
                await pilot.pause()
                table = panel.query_one("#sched-nodes", PlainTable)
                await check(pilot, table, panel.query_one("#sched-nodes-detail", RowDetail))
        finally:
            await ctx.sources.kube.close()

    wide: list[list[str]] = []

    async def at_160(pilot: Any, table: PlainTable, detail: RowDetail) -> None:
        assert not detail.display
        wide.extend([str(c) for c in table.get_row_at(i)] for i in range(table.row_count))

    async def at_80(pilot: Any, table: PlainTable, detail: RowDetail) -> None:
        table.focus()
        for row in (1, 3):
            while table.cursor_row < row:
                await pilot.press("down")
            await pilot.pause()
            assert detail.display and table.has_focus and not detail.focusable
            assert pilot.app.screen.region.contains_region(detail.region), detail.region
            shown = str(detail.render())
            for c, cell in zip(NODE_COLUMNS, wide[row], strict=True):
                if cell.strip():
                    label = " ".join(t(f"kube.col.{c}", lang).split())
                    assert f"{label}{colon(lang)}{cell.strip()}" in shown, (label, cell, shown)
        assert table.scroll_x == 0
        upto = NODE_COLUMNS.index("blockers") + 1
        used = sum(c.get_render_width(table) for c in table.ordered_columns[:upto])
        assert used <= table.scrollable_content_region.width

    await loaded((160, 48), at_160)
    await loaded((80, 24), at_80)
