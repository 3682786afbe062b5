"""A verdict that rests on the window reads the same everywhere: the lost GPU's Xid 79
(the service's Xid count is 0 now, the GPU's series vanished) is shown, pinned and
printed as the window's reading by C's table and Alt+P, E's table and Alt+P, ``cockpit
analyze`` and the export, never as a bare 0 (or "—") beside "anomalous" or an outlier mark;
a lost GPU stands out in the node's cohort line of the GPU panel and ``cockpit gpus``,
which print the same sections."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cockpit.app import CockpitApp
from cockpit.models import from_epoch
from cockpit.scenarios.promserver import PromServer
from tests.test_metric_history import COCKPIT, ctx_for

Get = Callable[[str], PromServer]
XID = "in the window: Xid 79 (13:40:00)"
"""The window's reading of the lost GPU's Xid, as every screen shows it."""


def said(app: CockpitApp) -> list[str]:
    return [n.message for n in app._notifications]


async def _loaded(app: CockpitApp, pilot: Any, table_id: str) -> Any:
    """The step's table once its rows are in."""
    for _ in range(600):
        await pilot.pause(0.1)
        tables = app.screen.query(table_id)
        if tables and tables.first().row_count and not app.workers._workers:
            break
    await app.workers.wait_for_complete()
    await pilot.pause()
    return app.screen.query_one(table_id)


def _row_of(table: Any, name: str) -> int:
    return next(i for i in range(table.row_count) if str(table.get_row_at(i)[0]).startswith(name))


async def test_c_shows_and_pins_the_xid_the_verdict_rests_on(
    prometheus_scenario: Get, tmp_path: Path
) -> None:
    """C's Xid row reads "in the window: Xid 79 (13:40:00)" beside "anomalous", and Alt+P
    pins that reading (not "0 changes"), which the export's key evidence then shows."""
    from cockpit.export import render

    srv = prometheus_scenario("gpu_lost")
    ctx = ctx_for(srv, tmp_path, srv.scenario.scope["deployment"])
    ctx.lang = "en"
    app = CockpitApp(ctx=ctx, start_step="C")
    try:
        async with app.run_test(size=(200, 60)) as pilot:
            table = await _loaded(app, pilot, "#dd-table")
            i = _row_of(table, "Xid changes")
            row = [str(c) for c in table.get_row_at(i)]
            assert row[1] == XID and row[4] == "anomalous", row
            table.focus()
            table.move_cursor(row=i)
            await pilot.pause()
            await pilot.press("alt+p")
            await pilot.pause()
            ev = ctx.session.incident.evidence[-1]
            assert (ev.value, ev.unit) == (XID, ""), ev
            assert ev.value_i18n["zh"] == "窗口内：Xid 79 (13:40:00)"
            assert any("Pinned" in m for m in said(app)), said(app)
    finally:
        await ctx.sources.close()
    md = render(ctx.session.incident, lang="en", fmt="md")
    assert f"= {XID}" in md or f": {XID}" in md, md
    assert "= 0 changes" not in md and ": 0 changes" not in md
    zh = render(ctx.session.incident, lang="zh", fmt="md")
    assert "窗口内：Xid 79 (13:40:00)" in zh


async def test_e_pins_every_row_it_shows_a_reading_on(
    prometheus_scenario: Get, tmp_path: Path
) -> None:
    """Every row of E's table that shows the suspect's reading (a value, an Xid seen in the
    window, a series that stopped) pins it with Alt+P, as the row shows it."""
    srv = prometheus_scenario("gpu_lost")
    ctx = ctx_for(srv, tmp_path, srv.scenario.scope["deployment"])
    from cockpit.plugins.cohort import CohortPanel
    from cockpit.ui.plugins import PanelLoad

    ctx.lang = "en"
    ctx.panels = [
        PanelLoad(name="cohort", value="cockpit.plugins.cohort:CohortPanel", cls=CohortPanel)
    ]
    app = CockpitApp(ctx=ctx, start_step="E")
    try:
        async with app.run_test(size=(200, 60)) as pilot:
            table = await _loaded(app, pilot, "#cohort-table")
            shown = [str(table.get_row_at(i)[1]) for i in range(table.row_count)]
            assert any(XID in s for s in shown), shown
            # C's service-wide reading beside it, as C's row reads it: never "0 changes"
            xid_row = [str(c) for c in table.get_row_at(_row_of(table, "Xid changes"))]
            assert xid_row[5] == XID, xid_row
            table.focus()
            for i, cell in enumerate(shown):
                if cell == "—":
                    continue
                app.clear_notifications()
                before = len(ctx.session.incident.evidence)
                table.move_cursor(row=i)
                await pilot.pause()
                await pilot.press("alt+p")
                await pilot.pause()
                assert len(ctx.session.incident.evidence) == before + 1, (cell, said(app))
                ev = ctx.session.incident.evidence[-1]
                assert f"{ev.value} {ev.unit}".strip() == cell or ev.value == cell, (ev, cell)
    finally:
        await ctx.sources.close()


def _cockpit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [COCKPIT, *args],
        capture_output=True,
        text=True,
        timeout=180,
        env={"PATH": "/usr/bin:/bin", "COCKPIT_CONFIG": "/nonexistent", "LANG": "C.UTF-8"},
    )


def test_analyze_prints_the_window_reading_beside_an_outlier_mark(
    prometheus_scenario: Get,
) -> None:
    """``cockpit analyze``'s cohort rows show E's reading: the Xid seen in the window, never
    "—" beside the outlier mark."""
    srv = prometheus_scenario("gpu_lost")
    at = from_epoch(srv.scenario.now).strftime("%Y-%m-%dT%H:%M:%SZ")
    dep = srv.scenario.scope["deployment"]
    proc = _cockpit(
        "analyze", "--prometheus-url", srv.url, "--at", at, "-n", "llm", "--deployment", dep
    )
    assert proc.returncode == 0, proc.stderr
    marked = [ln for ln in proc.stdout.splitlines() if ln.rstrip().endswith("◀")]
    assert marked, proc.stdout
    for line in marked:
        assert ": — vs" not in line, line
    xid = [ln for ln in marked if "Xid" in ln.split(":", 1)[0]]
    assert xid and XID in xid[0], marked


def test_gpus_command_names_the_lost_gpu_in_the_cohort_and_lists_the_xid(
    prometheus_scenario: Get,
) -> None:
    """``cockpit gpus --once --node gpu-node-b`` names the lost GPU in the cohort line
    (never "no GPU stands out" beside it) and lists the window's Xid events, as the
    panel does."""
    srv = prometheus_scenario("gpu_lost")
    at = from_epoch(srv.scenario.now).strftime("%Y-%m-%dT%H:%MZ")
    proc = _cockpit(
        "gpus", "--once", "--prometheus-url", srv.url, "--at", at, "--node", "gpu-node-b"
    )
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout
    assert "Stands out by being lost: GPU 0" in out, out
    assert "No GPU stands out" not in out, out
    assert "Xid events" in out and "Xid 79 on GPU 0" in out, out


async def test_an_empty_cohort_compares_nothing_and_names_no_outlier(
    prometheus_scenario: Get, tmp_path: Path
) -> None:
    """A cohort the user emptied (custom, no member) compares nothing: no row is an outlier
    (not even the Xid row, whose Xid no peer can lack) and the heading says there is
    nothing to compare with, in both languages. E's "previous revision" of a pod whose
    Deployment served one revision in the window is never empty: it is the pod's replicas,
    and says why."""
    from cockpit.collect import steps
    from cockpit.collect.cache import screen_window
    from cockpit.i18n import t

    srv = prometheus_scenario("gpu_lost")
    ctx = ctx_for(srv, tmp_path, srv.scenario.scope["deployment"])
    try:
        window = screen_window(ctx)
        found = await steps.cohort(ctx, window)
        assert found is not None and found.cohort.suspect_kind == "pod"
        assert "hardware.xid:value" in found.outliers  # against its replicas: it stands out
        suspect = (found.cohort.suspect, "pod")
        empty = await steps.cohort(ctx, window, suspect, "custom", [])
        one_revision = await steps.cohort(ctx, window, suspect, "previous_revision")
    finally:
        await ctx.sources.close()
    assert one_revision is not None and one_revision.cohort.kind == "replicas"
    assert one_revision.cohort.members == found.cohort.members
    assert one_revision.cohort.definition_en.startswith("no other revision of qwen-chat")
    assert "hardware.xid:value" in one_revision.outliers
    assert empty is not None and not empty.cohort.members
    assert empty.outliers == [] and not any(r.outlier for r in empty.rows)
    assert any(r.window is not None for r in empty.rows)  # the Xid is still shown
    assert empty.heading_key == "metrics.text.cohort_empty"
    for lang in ("en", "zh"):
        text = t(empty.heading_key, lang, suspect=found.cohort.suspect, names="-")
        assert found.cohort.suspect in text, text
    assert "nothing to compare" in t(empty.heading_key, "en", suspect="x")


def test_gpus_without_a_node_never_calls_a_healthy_node_the_worst(
    prometheus_scenario: Get,
) -> None:
    """A release makes the GPUs busier, none unhealthy: ``cockpit gpus --once`` without
    ``--node`` shows a node and says no node's GPUs look unhealthy (never "the node whose
    GPUs look worst"), and heads the per-GPU lines as verdicts, not as "why it looks bad"."""
    srv = prometheus_scenario("bad_release")
    at = from_epoch(srv.scenario.now).strftime("%Y-%m-%dT%H:%MZ")
    for lang, said, never in (
        ("en", "no node's GPUs look unhealthy", "look worst"),
        ("zh", "所有节点的 GPU 都未见异常", "状态最差"),
    ):
        proc = _cockpit("gpus", "--once", "--prometheus-url", srv.url, "--at", at, "--lang", lang)
        out = proc.stdout
        assert said in out and never not in out, out
        assert "looks bad" not in out and "看起来不对" not in out, out


async def test_a_hardware_layer_only_busier_says_so_in_its_headline(
    prometheus_scenario: Get, tmp_path: Path
) -> None:
    """The release's GPUs rise with the load and nothing faulty is seen: C's hardware
    headline (and ``analyze``'s) says "anomalous — busier with the load, not faulty" in
    both languages, as the line under it does; the lost GPU's hardware layer is faulty
    and says nothing of the kind."""
    from cockpit.collect import steps
    from cockpit.collect.cache import screen_window

    for name, busier in (("bad_release", "not_faulty"), ("gpu_lost", "")):
        srv = prometheus_scenario(name)
        ctx = ctx_for(srv, tmp_path / name, srv.scenario.scope["deployment"])
        try:
            dd = await steps.drilldown(ctx, screen_window(ctx))
        finally:
            await ctx.sources.close()
        hw = dd.drilldown.layer("hardware")
        assert hw.busier == busier, name
        notes = [m for m in hw.line_msgs if m.key.startswith("metrics.window.busier")]
        assert bool(notes) == bool(busier), name
        for lang, words in (("en", "busier with the load"), ("zh", "随负载变忙")):
            assert (words in hw.headline(lang)) == bool(busier), (name, hw.headline(lang))
        proc = _cockpit(
            "analyze",
            "--prometheus-url",
            srv.url,
            "--at",
            from_epoch(srv.scenario.now).strftime("%Y-%m-%dT%H:%MZ"),
            "-n",
            srv.scenario.scope["namespace"],
            "--deployment",
            srv.scenario.scope["deployment"],
            "--lang",
            "en",
        )
        line = next(ln for ln in proc.stdout.splitlines() if ln.strip().startswith("Hardware:"))
        assert ("busier with the load, not faulty" in line) == bool(busier), line
        doc = json.loads(_cockpit(*proc.args[1:], "--json").stdout)
        [layer] = [v for v in doc["layers"] if v["layer"] == "hardware"]
        assert layer["busier"] == busier and layer["headline"] == line.split(": ", 1)[1], layer
