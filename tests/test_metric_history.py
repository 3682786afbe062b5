"""The window's entities and change list from metrics history alone (no Kubernetes),
against the incidents served from a real Prometheus."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from cockpit.collect.base import make_window
from cockpit.collect.history import collect_history
from cockpit.config import PrometheusSettings, ServiceSettings, Settings
from cockpit.context import AppContext, Sources
from cockpit.models import from_epoch
from cockpit.scenarios import incidents
from cockpit.scenarios.promserver import PromServer
from cockpit.sources.prometheus import PrometheusSource
from testkit import make_ctx

Get = Callable[[str], PromServer]
COCKPIT = str(Path(sys.executable).with_name("cockpit"))


def ctx_for(srv: PromServer, tmp_path: Path, deployment: str = "") -> AppContext:
    from cockpit.incident import Incident, ServiceScope

    ns = srv.scenario.scope["namespace"]
    settings = Settings(
        prometheus=PrometheusSettings(url=srv.url),
        service=ServiceSettings(namespace=ns, deployment=deployment),
    )
    now = from_epoch(srv.scenario.now)
    incident = Incident(
        id="inc-0000hist",
        created_at=now,
        updated_at=now,
        service=ServiceScope(namespace=ns, deployment=deployment),
    )
    return make_ctx(
        tmp_path,
        sources=Sources(metrics=PrometheusSource(settings.prometheus)),
        frozen_at=now,
        settings=settings,
        incident=incident,
    )


async def _history(srv: PromServer, tmp_path: Path):  # type: ignore[no-untyped-def]
    ctx = ctx_for(srv, tmp_path, srv.scenario.scope["deployment"])
    try:
        w = make_window(from_epoch(srv.scenario.now), timedelta(hours=6), "quiet")
        return await collect_history(ctx, w)
    finally:
        await ctx.sources.close()


async def test_lost_gpu_inventory_and_changes(prometheus_scenario: Get, tmp_path: Path) -> None:
    srv = prometheus_scenario("gpu_lost")
    truth = srv.scenario.ground_truth.suspect  # type: ignore[union-attr]
    rep = await _history(srv, tmp_path)
    inv = rep.inventory
    assert not rep.failures
    assert set(inv.sources) >= {"kube-state-metrics", "dcgm", "engine"}
    assert sorted(inv.nodes) == ["gpu-node-a", "gpu-node-b"]
    assert len(inv.gpus) == 16 and len(inv.pods) == 6
    gpu = inv.gpus[truth.uuid]
    assert (gpu.node, gpu.index, gpu.pods) == ("gpu-node-b", "0", [truth.pod])
    assert inv.resolve("gpu-node-b/0") == ("gpu", truth.uuid)
    assert inv.resolve("gpu-node-b GPU 0") == ("gpu", truth.uuid)
    assert inv.resolve(truth.uuid[:13]) == ("gpu", truth.uuid)
    assert inv.resolve(truth.pod) == ("pod", truth.pod)
    assert inv.resolve("nope") is None
    name = inv.name(pod=truth.pod)
    assert name == f"qwen-chat-…-{truth.pod[-5:]} on gpu-node-b GPU 0 ({truth.uuid[:8]}…)"
    # absence: the GPU is silent since the Xid; its pod is alive but its server is not
    assert [g.uuid for g in inv.silent_gpus()] == [truth.uuid]
    assert abs(gpu.last_seen - incidents.LOST_GONE_AT) <= 15  # type: ignore[operator]
    assert gpu.last_values["hardware.xid"] == 79
    assert [p.name for p in inv.silent_pods()] == [truth.pod]
    kinds = {i.kind for i in rep.items}
    assert {"xid", "allocatable", "restart", "readiness", "stopped", "alert"} <= kinds
    assert "rollout" not in kinds
    xid = next(i for i in rep.items if i.kind == "xid")
    assert "Xid 79" in xid.summary and "gpu-node-b GPU 0" in xid.summary
    assert xid.detail == "err_code=79"
    # In Chinese the whole line is Chinese: where the pod runs, and what Xid 79 is.
    zh = xid.text("zh")
    assert " on " not in zh and "GPU has fallen off the bus" not in zh, zh
    assert "gpu-node-b GPU 0" in zh and "上的" in zh and "GPU 从总线上掉线" in zh, zh
    assert "(GPU has fallen off the bus)" in xid.text("en")
    silent = [i for i in rep.items if i.kind == "stopped"]
    assert silent and all(" on " not in i.text("zh") for i in silent)
    alloc = next(i for i in rep.items if i.kind == "allocatable")
    assert alloc.summary == "node gpu-node-b allocatable nvidia.com/gpu 8 → 7"
    restart = next(i for i in rep.items if i.kind == "restart")
    assert "last terminated: Error" in restart.summary and "19 times" in restart.summary
    assert "停止上报" in next(i for i in rep.items if i.kind == "stopped").text("zh")


async def test_the_xid_history_answers_only_the_steps_with_an_xid(
    prometheus_scenario: Get, tmp_path: Path
) -> None:
    """The Xid range query answers the steps where a GPU reported an Xid, not the zeros of
    all 16 GPUs at every step (the second-largest answer of an analysis before), and the
    lost GPU's Xid 79 is still found at the same time."""
    from cockpit.collect.history import _fetch

    srv = prometheus_scenario("gpu_lost")
    truth = srv.scenario.ground_truth.suspect  # type: ignore[union-attr]
    ctx = ctx_for(srv, tmp_path, srv.scenario.scope["deployment"])
    try:
        w = make_window(from_epoch(srv.scenario.now), timedelta(hours=6), "quiet")
        raw = await _fetch(ctx, w)
        rep = await collect_history(ctx, w)
    finally:
        await ctx.sources.close()
    xid = raw.got["xid"]
    assert [s.labels.get("UUID") for s in xid] == [truth.uuid]
    assert all(x.v > 0 for s in xid for x in s.samples) and len(xid[0].samples) <= 4
    item = next(i for i in rep.items if i.kind == "xid")
    assert item.key == f"metrics/xid/{truth.uuid}/79"
    assert item.at is not None and item.at.timestamp() == xid[0].samples[0].t


async def test_the_nodes_are_joined_in_the_query_and_named_where_the_join_is_refused(
    prometheus_scenario: Get, tmp_path: Path
) -> None:
    """The window's nodes and their GPUs, and a lost GPU's last values, are read with the
    pods in one round of queries (the nodes joined in PromQL, not looked up first); a
    server that refuses the join (``@``, Prometheus < 2.25) gets the same history by the
    nodes' names after the lookup."""
    from tests.backends.faultproxy import Fault, FaultProxy

    srv = prometheus_scenario("gpu_lost")
    truth = srv.scenario.ground_truth.suspect  # type: ignore[union-attr]
    reports = []
    rounds = []
    with FaultProxy(srv.url) as proxy:
        for refuse in (False, True):
            if refuse:
                proxy.add(Fault(query="@ ", status=400))
            proxy.log.clear()
            ctx = ctx_for(srv, tmp_path, srv.scenario.scope["deployment"])
            ctx.settings.prometheus.url = proxy.url
            ctx.sources.metrics = PrometheusSource(ctx.settings.prometheus)
            try:
                w = make_window(from_epoch(srv.scenario.now), timedelta(hours=6), "quiet")
                reports.append(await collect_history(ctx, w))
            finally:
                await ctx.sources.close()
            runner = ctx.metrics.runner
            assert runner is not None
            rounds.append([q for q, *_ in runner.stats.log])
    joined, named = reports
    assert joined.model_dump() == named.model_dump()
    assert not joined.failures and not named.failures
    assert [g.uuid for g in joined.inventory.silent_gpus()] == [truth.uuid]
    assert joined.inventory.gpus[truth.uuid].last_values["hardware.xid"] == 79
    # joined: nothing named a node or a GPU, so nothing waited for the lookup
    assert not any("gpu-node" in q or "GPU-" in q for q in rounds[0])
    assert any('node=~"gpu-node-a|gpu-node-b"' in q for q in rounds[1])
    assert any(truth.uuid in q for q in rounds[1])


async def test_a_window_within_another_reads_its_history_from_the_wider_answers(
    prometheus_scenario: Get, tmp_path: Path
) -> None:
    """C's history over the window, read from the answers of the conclusion's span (the
    window and as long again before it), is what its own queries give, and no query of
    its own is sent."""
    from cockpit.collect.analyze import history_window
    from cockpit.collect.history import collect_history_within, within

    srv = prometheus_scenario("gpu_lost")
    truth = srv.scenario.ground_truth.suspect  # type: ignore[union-attr]
    w = make_window(from_epoch(srv.scenario.now), timedelta(hours=2), "1d")
    wide = history_window(w)
    assert within(w, wide) and not within(wide, w)
    reports, sent = [], []
    for derived in (False, True):
        ctx = ctx_for(srv, tmp_path, srv.scenario.scope["deployment"])
        try:
            if derived:
                await collect_history(ctx, wide)
                before = len(ctx.metrics.runner.stats.log)  # type: ignore[union-attr]
                reports.append(await collect_history_within(ctx, w, wide))
            else:
                before = 0
                reports.append(await collect_history(ctx, w))
            sent.append(len(ctx.metrics.runner.stats.log) - before)  # type: ignore[union-attr]
        finally:
            await ctx.sources.close()
    own, read = reports
    assert read.model_dump() == own.model_dump()
    assert [g.uuid for g in read.inventory.silent_gpus()] == [truth.uuid]
    assert read.inventory.gpus[truth.uuid].last_values["hardware.xid"] == 79
    assert {i.kind for i in read.items} >= {"xid", "allocatable", "restart"}
    assert sent[0] > 10 and sent[1] == 0


async def test_release_rollout_from_metrics(prometheus_scenario: Get, tmp_path: Path) -> None:
    srv = prometheus_scenario("bad_release")
    truth = srv.scenario.ground_truth.suspect  # type: ignore[union-attr]
    rep = await _history(srv, tmp_path)
    inv = rep.inventory
    assert sorted(inv.revisions) == sorted([truth.old_revision, truth.new_revision])
    assert inv.revisions[truth.new_revision].version == "v1.9.0"
    assert len(inv.pods) == 12
    assert inv.resolve("v1.8.2") == ("revision", truth.old_revision)
    rollouts = [i for i in rep.items if i.kind == "rollout"]
    assert len(rollouts) == 1
    r = rollouts[0]
    assert {(d.field, d.old, d.new) for d in r.diff} >= {
        ("revision", truth.old_revision, truth.new_revision),
        ("version", "v1.8.2", "v1.9.0"),
    }
    assert r.at is not None and r.until is not None
    assert abs(r.at.timestamp() - incidents.ROLL_START) <= 30
    assert abs(r.until.timestamp() - incidents.ROLL_END) <= 30
    assert "(6 pods)" in r.summary and r.origin == "metrics"
    # old pods left with the rollout: not "stopped reporting"
    assert not [i for i in rep.items if i.kind == "stopped"]


def _changes(srv: PromServer, *extra: str) -> subprocess.CompletedProcess[str]:
    at = datetime.fromtimestamp(srv.scenario.now, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return subprocess.run(
        [COCKPIT, "changes", "--prometheus-url", srv.url, "--until", at, "-n", "llm", *extra],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "COCKPIT_CONFIG": "/nonexistent", "LANG": "C.UTF-8"},
    )


def test_changes_command_shows_the_rollout_without_kubernetes(prometheus_scenario: Get) -> None:
    srv = prometheus_scenario("bad_release")
    truth = srv.scenario.ground_truth.suspect  # type: ignore[union-attr]
    proc = _changes(srv, "--deployment", "qwen-chat", "--since", "6h", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["sources"] == ["metrics"]
    assert doc["notes"] and doc["notes"][0].startswith("kubernetes: ")
    (rollout,) = [i for i in doc["items"] if i["kind"] == "rollout"]
    assert rollout["origin"] == "metrics" and rollout["until"]
    assert rollout["message"]["key"] == "metrics.change.rollout_done"
    assert {"field": "revision", "old": truth.old_revision, "new": truth.new_revision} in [
        {k: d[k] for k in ("field", "old", "new")} for d in rollout["diff"]
    ]
    text = _changes(srv, "--deployment", "qwen-chat", "--since", "6h", "--lang", "zh")
    assert text.returncode == 0, text.stderr
    assert f"发布 qwen-chat：{truth.old_revision} (v1.8.2)" in text.stdout
    # every time written as the screens write one (…Z), the window's ends too
    assert "+00:00" not in text.stdout and text.stdout.splitlines()[0].endswith("Z")


def test_changes_command_without_any_source_fails() -> None:
    proc = subprocess.run(
        [COCKPIT, "changes", "-n", "llm"],
        capture_output=True,
        text=True,
        timeout=60,
        env={
            "PATH": "/usr/bin:/bin",
            "COCKPIT_CONFIG": "/nonexistent",
            "LANG": "C.UTF-8",
            "KUBECONFIG": "/nonexistent",
        },
    )
    assert proc.returncode == 2 and not proc.stdout


async def test_step_b_lists_the_rollout_without_kubernetes(
    prometheus_scenario: Get, tmp_path: Path
) -> None:
    from textual.widgets import OptionList, Static

    from cockpit.app import CockpitApp

    srv = prometheus_scenario("bad_release")
    truth = srv.scenario.ground_truth.suspect  # type: ignore[union-attr]
    ctx = ctx_for(srv, tmp_path, "qwen-chat")
    ctx.lang = "en"
    app = CockpitApp(ctx=ctx, start_step="B")
    async with app.run_test(size=(160, 50)) as pilot:
        for _ in range(50):
            await pilot.app.workers.wait_for_complete()
            await pilot.pause(0.1)
            opts = pilot.app.screen.query_one("#changes-list", OptionList)
            if opts.option_count:
                break
        lines = [str(opts.get_option_at_index(i).prompt) for i in range(opts.option_count)]
        assert any(
            "[rollout] rollout of qwen-chat" in ln and truth.new_revision in ln for ln in lines
        ), lines
        status = str(pilot.app.screen.query_one(".changes--status", Static).render())
        assert "come from the metrics history" in status
        assert not pilot.app.screen.query("#chg-no-kube")
        await _b_table_holds_every_change_found(pilot, ctx, lines)
    await ctx.sources.close()
    # what B lists is in the incident's recent changes, and so in the export
    from cockpit.export import render

    assert ctx.session is not None
    kinds = [(c.kind, c.source) for c in ctx.session.incident.changes]
    assert ("rollout", "metrics") in kinds
    md = render(ctx.session.incident, lang="en", fmt="md")
    assert f"rollout · rollout of qwen-chat: {truth.old_revision} (v1.8.2)" in md


async def _b_table_holds_every_change_found(pilot: Any, ctx: AppContext, lines: list[str]) -> None:
    """The count B says it found, its list and its "Changes" table agree: every change
    found is a table row before any is marked (the alert too), and a mark made in the
    table shows there (⚑) and in the list (the same ⚑)."""
    from cockpit.ui.fields import ChangesNoteInput

    screen = pilot.app.screen
    await pilot.pause(0.5)
    table = screen.query_one("#chg-table")
    rows = [table.get_row_at(i) for i in range(table.row_count)]
    assert len(lines) == ctx.changes_found == len(rows) >= 2, (lines, rows)
    kinds = sorted(str(r[2]) for r in rows)
    assert kinds == ["alert", "rollout"] and not any(str(r[0]).strip() for r in rows), rows
    hint = screen.query_one(ChangesNoteInput).hint()
    assert f"beyond the {len(rows)} step B found" in hint, hint
    alert = next(i for i, r in enumerate(rows) if str(r[2]) == "alert")
    table.move_cursor(row=alert)
    screen.query_one("#chg-suspect").press()
    await pilot.pause(0.5)
    rows = [table.get_row_at(i) for i in range(table.row_count)]
    assert len(rows) == ctx.changes_found and [str(r[0]) for r in rows].count("⚑") == 1, rows
    assert str(next(r for r in rows if str(r[2]) == "alert")[0]) == "⚑"
    opts = screen.query_one("#changes-list")
    marked = [str(opts.get_option_at_index(i).prompt) for i in range(opts.option_count)]
    assert [ln.startswith("⚑ ") for ln in marked] == ["[alert]" in ln for ln in marked], marked


async def test_gpu_panel_shows_the_lost_gpu_now(prometheus_scenario: Get, tmp_path: Path) -> None:
    """No node given and no NVML: the panel picks the node whose GPU went silent, shows
    that GPU lost (with its last values) and the Xid 79 the window saw."""
    from cockpit.app import CockpitApp
    from cockpit.plugins.gpu import GpuPanel
    from cockpit.ui.plugins import PanelLoad

    srv = prometheus_scenario("gpu_lost")
    truth = srv.scenario.ground_truth.suspect  # type: ignore[union-attr]
    ctx = ctx_for(srv, tmp_path, "qwen-chat")
    ctx.lang = "en"
    ctx.panels = [PanelLoad(name="gpu", value="cockpit.plugins.gpu:GpuPanel", cls=GpuPanel)]
    ctx.metrics.window_span = "6h"
    app = CockpitApp(ctx=ctx, start_step="E")
    async with app.run_test(size=(200, 60)) as pilot:
        panel = app.screen.query_one(GpuPanel)
        for _ in range(300):
            if panel.data is not None:
                break
            await pilot.pause(0.1)
        assert panel.data is not None, panel.failure
        snap = panel.data.snapshot
        assert snap.node == "gpu-node-b"
        lost = [g for g in snap.gpus if g.lost]
        assert [(g.index, g.uuid) for g in lost] == [(0, truth.uuid)]
        assert len(snap.gpus) == 8
        assert "LOST" in str(panel.query_one("#gpu-table").get_cell("0", "state"))
        why = str(panel.query_one("#gpu-why").render())
        assert f"gpu-node-b GPU 0 ({truth.uuid[:8]}…) stopped reporting at 13:40:" in why
        assert "Xid 79" in why and truth.pod[-5:] in why
        assert "Xid 79" in str(panel.query_one("#gpu-xids").render())
        assert "stopped reporting in the window" in str(panel.query_one("#gpu-source").render())
    await ctx.sources.close()


def _analyze(srv: PromServer) -> dict:  # type: ignore[type-arg]
    at = datetime.fromtimestamp(srv.scenario.now, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    dep = srv.scenario.scope["deployment"]
    argv = [COCKPIT, "analyze", "--prometheus-url", srv.url, "--at", at, "-n", "llm"]
    proc = subprocess.run(
        [*argv, "--deployment", dep, "--window", "2h", "--json"],
        capture_output=True,
        text=True,
        timeout=180,
        env={"PATH": "/usr/bin:/bin", "COCKPIT_CONFIG": "/nonexistent", "LANG": "C.UTF-8"},
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def test_hardware_verdict_covers_the_window(prometheus_scenario: Get) -> None:
    """The lost GPU has no "now": the Xid, the vanished series and the allocatable drop
    seen in the window make the hardware layer anomalous, first lines first."""
    srv = prometheus_scenario("gpu_lost")
    truth = srv.scenario.ground_truth.suspect  # type: ignore[union-attr]
    d = _analyze(srv)
    hw = next(la for la in d["layers"] if la["layer"] == "hardware")
    assert hw["verdict"] == "anomalous"
    assert "Xid 79" in hw["evidence"][0] and "gpu-node-b GPU 0" in hw["evidence"][0]
    assert any(truth.uuid[:8] in e and "stopped reporting" in e for e in hw["evidence"])
    assert any("8 → 7" in e for e in hw["evidence"])


def test_busier_gpus_are_not_called_faulty(prometheus_scenario: Get) -> None:
    srv = prometheus_scenario("kv_overload")
    d = _analyze(srv)
    hw = next(la for la in d["layers"] if la["layer"] == "hardware")
    assert hw["evidence"][-1].endswith(
        "rose with the load: the GPUs are busier, not faulty (no HW/thermal throttling, "
        "Xid changes or lost GPU in the window; ECC is not read, so not ruled out)"
    ), hw


def test_busier_gpus_say_what_could_not_be_seen() -> None:
    """A fault signal the exporter does not export is named as not seen, never as "no"."""
    from cockpit.analysis.golden import SignalSummary
    from cockpit.analysis.history import WindowInventory, apply_hardware_window
    from cockpit.analysis.layers import LayerVerdict

    def row(signal: str, verdict: str) -> SignalSummary:
        return SignalSummary(
            key=f"{signal}:value", signal=signal, layer="hardware", verdict=verdict
        )

    for xid, want in (
        ("normal", "no HW/thermal throttling, Xid changes or lost GPU"),
        ("no_data", "no HW/thermal throttling or lost GPU in the window; Xid changes not exported"),
    ):
        layer = LayerVerdict(layer="hardware", verdict="anomalous")
        rows = [row("hardware.power", "anomalous"), row("hardware.throttle", "normal")]
        apply_hardware_window(
            layer, [*rows, row("hardware.xid", xid)], WindowInventory(start=0, end=3600), []
        )
        text = layer.line_msgs[-1].text("en")
        assert want in text and "ECC" in text and "not ruled out" in text, text
        assert "no throttling, Xid, ECC" not in text
        assert "未导出" in layer.line_msgs[-1].text("zh") or xid == "normal"


async def _e_then_f2(srv: PromServer, tmp_path: Path, typed: str):  # type: ignore[no-untyped-def]
    """Open E, type ``typed`` in the suspect field, press Enter; then F2. Returns the
    definition line, the pick line and the protect screen's options."""
    from textual.widgets import Input, Static

    from cockpit.app import CockpitApp
    from cockpit.plugins.cohort import CohortPanel
    from cockpit.ui.plugins import PanelLoad
    from cockpit.ui.protect import ProtectScreen

    ctx = ctx_for(srv, tmp_path, srv.scenario.scope["deployment"])
    ctx.lang = "en"
    ctx.panels = [
        PanelLoad(name="cohort", value="cockpit.plugins.cohort:CohortPanel", cls=CohortPanel)
    ]
    app = CockpitApp(ctx=ctx, start_step="E")
    async with app.run_test(size=(200, 60)) as pilot:
        panel = app.screen.query_one(CohortPanel)

        async def until(cond):  # type: ignore[no-untyped-def]
            for _ in range(600):
                if cond():
                    return
                await pilot.pause(0.1)
            raise AssertionError("timed out")

        await until(lambda: panel.fetched_at is not None or panel.failure is not None)
        before = panel.fetched_at
        inp = panel.query_one("#cohort-suspect", Input)
        inp.value = typed
        inp.focus()
        await pilot.press("enter")
        await until(lambda: panel.fetched_at != before)
        await pilot.pause(0.2)
        definition = str(panel.query_one("#cohort-def", Static).render())
        pick = str(panel.query_one("#cohort-pick", Static).render())
        screen = ProtectScreen(ctx)
        options = [(o.key, o.commands) for o in screen.options]
        suspect = screen.suspect
    await ctx.sources.close()
    return definition, pick, options, suspect


async def test_e_takes_node_and_gpu_index_and_f2_acts_on_it(
    prometheus_scenario: Get, tmp_path: Path
) -> None:
    srv = prometheus_scenario("gpu_lost")
    truth = srv.scenario.ground_truth.suspect  # type: ignore[union-attr]
    definition, pick, options, suspect = await _e_then_f2(srv, tmp_path, "gpu-node-b/0")
    assert pick.startswith("in the window: 6 pods, 2 nodes, 16 GPUs")
    # the lost GPU has no "now": E says when it stopped, not "no series"
    assert f"gpu-node-b GPU 0 ({truth.uuid[:8]}…) stopped reporting at 13:40:" in definition
    assert suspect is not None and suspect.kind == "gpu"
    key, commands = options[0]
    assert key == "delete_pod"
    assert commands == [
        f"kubectl -n llm logs {truth.pod} --previous --all-containers --timestamps "
        f"> {truth.pod}-previous.log",
        "kubectl cordon gpu-node-b",
        f"kubectl -n llm delete pod {truth.pod}",
    ]
    assert (
        "kubectl -n llm scale deployment/qwen-chat --replicas=<REPLICAS>"
        in dict(options)["scale_out"]
    )


async def test_e_takes_a_revision(prometheus_scenario: Get, tmp_path: Path) -> None:
    srv = prometheus_scenario("bad_release")
    truth = srv.scenario.ground_truth.suspect  # type: ignore[union-attr]
    definition, pick, options, suspect = await _e_then_f2(srv, tmp_path, "v1.9.0")
    assert f"{truth.old_revision} (v1.8.2)" in pick and f"{truth.new_revision} (v1.9.0)" in pick
    # E compares the new revision with the previous one, read from the history before the
    # rollout (its pods are gone); F2 acts on the release: roll it back first
    assert definition.startswith(f"revision {truth.new_revision} (v1.9.0) · "), definition
    assert f"the previous revision {truth.old_revision} of qwen-chat (6) at 13:00" in definition
    assert "its pods are gone" in definition
    assert suspect is not None and suspect.kind == "revision"
    assert suspect.name == f"{truth.new_revision} (v1.9.0)"
    assert options[0] == (
        "rollback",
        [
            "kubectl -n llm rollout history deployment/qwen-chat",
            "kubectl -n llm rollout undo deployment/qwen-chat",
            "kubectl -n llm rollout status deployment/qwen-chat",
        ],
    )


def test_kubernetes_pods_join_the_inventory() -> None:
    """Pods the API lists now add their node, ReplicaSet, hash and version; metrics keep
    the pods already gone."""
    from cockpit.analysis.history import HistoryInput, build_window_inventory, merge_kube_pods
    from cockpit.models import Sample, Series
    from cockpit.models.kube import Meta, OwnerRef, PodLite, PodSpecLite

    t0 = 1_800_000_000.0
    old = Series(
        labels={"pod": "vllm-5d8f7c9b6-aaaaa", "namespace": "llm", "node": "n1"},
        samples=[Sample(t0, t0), Sample(t0 + 600, t0 + 600)],
    )
    h = HistoryInput(start=t0, end=t0 + 3600, pod_info_ts=[old])
    inv = build_window_inventory(h)
    new = PodLite(
        meta=Meta(
            name="vllm-7b6c5d4e3-bbbbb",
            namespace="llm",
            labels={"pod-template-hash": "7b6c5d4e3", "app.kubernetes.io/version": "2.0"},
            owners=[OwnerRef(kind="ReplicaSet", name="vllm-7b6c5d4e3")],
            created=datetime.fromtimestamp(t0 + 1200, UTC),
        ),
        spec=PodSpecLite(node_name="n2"),
    )
    merge_kube_pods(inv, [new])
    assert "kubernetes" in inv.sources
    assert sorted(inv.revisions) == ["vllm-5d8f7c9b6", "vllm-7b6c5d4e3"]
    r = inv.revisions["vllm-7b6c5d4e3"]
    assert (r.deployment, r.hash, r.version, r.first_seen) == (
        "vllm",
        "7b6c5d4e3",
        "2.0",
        t0 + 1200,
    )
    assert inv.pods["vllm-7b6c5d4e3-bbbbb"].node == "n2"
    assert inv.resolve("2.0") == ("revision", "vllm-7b6c5d4e3")
    # the old revision left in the window: a rollout, from metrics and the API together
    from cockpit.analysis.history import rollout_items

    (item,) = rollout_items(inv)
    assert item.summary.startswith(
        "rollout of vllm: vllm-5d8f7c9b6 (1 pod) → vllm-7b6c5d4e3 (2.0) (1 pod)"
    )


async def test_f2_lists_first_the_mitigation_of_the_conclusion(
    prometheus_scenario: Get, tmp_path: Path
) -> None:
    """With no suspect at D (the KV cache overload reaches everything), F2 still orders by
    the most-likely conclusion D and G show: scale out first, for the service it names."""
    from cockpit.analysis.mitigations import first_for, mitigations
    from cockpit.collect import steps
    from cockpit.collect.cache import screen_window
    from cockpit.ui.protect import _scale_facts, current_cause, current_suspect

    srv = prometheus_scenario("kv_overload")
    ctx = ctx_for(srv, tmp_path, srv.scenario.scope["deployment"])
    try:
        assert current_cause(ctx) == "" and current_suspect(ctx) is None
        window = screen_window(ctx)
        res = await steps.scope(ctx, window)
        likely = await steps.likely(ctx, window)
    finally:
        await ctx.sources.close()
    assert not res.blast_radius.suspect and likely.cause == "kv_cache_overload"
    assert current_cause(ctx) == "kv_cache_overload"
    s = current_suspect(ctx)
    assert s is not None and s.deployment == srv.scenario.scope["deployment"]
    first = first_for(s.kind, current_cause(ctx))
    assert first == "scale_out"
    # the cause decides before the kind of a suspect picked at E
    assert first_for("pod", "release") == "rollback" and first_for("pod") == "delete_pod"
    assert first_for("gpu", "kv_cache_overload") == "scale_out"
    assert ctx.session is not None
    scope = ctx.session.incident.service
    opts = mitigations(scope, first=first)
    assert opts[0].key == "scale_out"
    assert any(c.startswith("kubectl -n llm scale deployment/qwen-chat") for c in opts[0].commands)
    # F2 fills the count from the window's inventory and C's request-rate ratio, as C
    # shows that ratio (arrivals up 60 %: 6 replicas → 10)
    facts = _scale_facts(ctx, "qwen-chat")
    assert facts["replicas_now"] == 6
    dd = await steps.drilldown(ctx, window)
    qps = next(s for s in dd.drilldown.summaries if s.signal == "access.qps")
    assert facts["demand_ratio"] == qps.ratio and 1.4 < qps.ratio < 1.8
    filled = mitigations(scope, first=first, lang="en", **facts)[0].commands
    target = math.ceil(6 * round(qps.ratio, 2) - 1e-9)
    assert filled[-1] == f"kubectl -n llm scale deployment/qwen-chat --replicas={target}"
    assert filled[-2] == (
        f"# 6 replicas now, requests ×{qps.ratio:.2f} of the baseline: 6 × {qps.ratio:.2f} "
        f"rounded up = {target}, each replica's load back to the baseline's"
    )
    assert mitigations(scope, first=first, lang="zh", **facts)[0].placeholders == []


def test_a_recorded_bundle_replays_the_history(prometheus_scenario: Get, tmp_path: Path) -> None:
    """``cockpit record`` keeps the history queries: replayed, ``cockpit changes`` (step B's
    list) shows the rollout and ``analyze`` concludes the release from them, as live."""
    srv = prometheus_scenario("bad_release")
    truth = srv.scenario.ground_truth.suspect  # type: ignore[union-attr]
    at = from_epoch(srv.scenario.now).strftime("%Y-%m-%dT%H:%MZ")
    bundle = tmp_path / "rec.jsonl.gz"
    env = {"PATH": "/usr/bin:/bin", "COCKPIT_CONFIG": "/nonexistent", "LANG": "C.UTF-8"}
    scope = ["--namespace", "llm", "--deployment", "qwen-chat"]
    rec = subprocess.run(
        [COCKPIT, "--prometheus-url", srv.url, "--at", at, *scope, "record", "-o", str(bundle)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert bundle.exists(), rec.stderr

    def replay(*args: str) -> dict:  # type: ignore[type-arg]
        proc = subprocess.run(
            [COCKPIT, "--replay", str(bundle), "--lang", "en", *args, "--json"],
            capture_output=True,
            text=True,
            timeout=180,
            env=env,
        )
        assert proc.returncode in (0, 1), proc.stderr
        return json.loads(proc.stdout)  # type: ignore[no-any-return]

    changes = replay("changes")
    assert not [n for n in changes["notes"] if "history queries failed" in n], changes["notes"]
    (rollout,) = [i for i in changes["items"] if i["kind"] == "rollout"]
    assert {"field": "revision", "old": truth.old_revision, "new": truth.new_revision} in [
        {k: d[k] for k in ("field", "old", "new")} for d in rollout["diff"]
    ]
    c = replay("analyze")["conclusion"]
    assert (c["cause"], c["suspect"]["new_revision"]) == ("release", truth.new_revision)


def test_the_demo_replays_the_history() -> None:
    """The demo bundle is recorded with the history queries: step B's list (``cockpit
    changes --demo``) has the metric-derived changes, no history query is missing."""
    proc = subprocess.run(
        [COCKPIT, "--demo", "--lang", "en", "changes", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "COCKPIT_CONFIG": "/nonexistent", "LANG": "C.UTF-8"},
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert "metrics" in doc["sources"]
    assert not [n for n in doc["notes"] if "history queries failed" in n], doc["notes"]
    assert [i for i in doc["items"] if i["origin"] == "metrics" and i["kind"] == "alert"]


async def test_presence_from_raw_samples_is_what_the_timestamp_range_query_gives(
    prometheus_scenario: Get,
) -> None:
    """When a pod and a GPU were present, read from their raw samples once, is what
    Prometheus' range query of ``timestamp(...)`` gives on the same grid: the first and
    last steps that see a sample and the sample times seen there (a GPU that vanished, a
    pod that appeared, grids whose first step sees only the lookback before it)."""
    from cockpit.collect.history import LOOKBACK_S, presence

    srv = prometheus_scenario("gpu_lost")
    now = srv.scenario.now
    src = PrometheusSource(PrometheusSettings(url=srv.url))
    checked = 0
    try:
        for sel in ('kube_pod_info{namespace="llm"}', "DCGM_FI_DEV_GPU_UTIL"):
            for span, step in ((6 * 3600, 15.0), (2 * 3600 + 285, 15.0), (3 * 3600, 60.0)):
                hi = now - now % step
                lo = hi - span + (span % step)
                ranged = await src.range(f"timestamp({sel})", from_epoch(lo), from_epoch(hi), step)
                raw = await src.samples(f"{sel}[{int(hi - lo) + LOOKBACK_S}s]", from_epoch(hi))
                want = {
                    frozenset(s.labels.items()): [
                        (s.samples[0].t, min(x.v for x in s.samples)),
                        (s.samples[-1].t, max(x.v for x in s.samples)),
                    ]
                    for s in ranged
                }
                got = {}
                for s in raw:
                    p = presence(s, lo, hi, step)
                    if p is not None:
                        labels = {k: v for k, v in s.labels.items() if k != "__name__"}
                        got[frozenset(labels.items())] = [tuple(x) for x in p.samples]
                assert got == want
                checked += len(want)
                # the vanished GPU ends inside the window, not at its end
                assert (
                    any(v[1][0] < hi - LOOKBACK_S for v in want.values())
                    or sel != "DCGM_FI_DEV_GPU_UTIL"
                )
    finally:
        await src.close()
    assert checked > 50


async def _c_rows(app: Any, pilot: Any) -> Any:
    """Step C's report once its rows are in (up to 30 s)."""
    view = app.screen.query_one("DrilldownView")
    for _ in range(300):
        await app.workers.wait_for_complete()
        if view.data is not None:
            break
        await pilot.pause(0.1)
    return view.data


async def test_a_pin_on_c_keeps_the_row_and_fetches_nothing_again(
    prometheus_scenario: Get, tmp_path: Path
) -> None:
    """No data a day earlier (C compares with the quiet window): a pin changes the
    incident, which must neither fetch C again nor put the cursor back on the first row
    (the next pin would take another signal)."""
    from cockpit.app import CockpitApp

    srv = prometheus_scenario("gpu_lost")
    ctx = ctx_for(srv, tmp_path, "qwen-chat")
    ctx.lang = "en"
    app = CockpitApp(ctx=ctx, start_step="C")
    async with app.run_test(size=(160, 48)) as pilot:
        view = app.screen.query_one("DrilldownView")
        data = await _c_rows(app, pilot)
        assert data.baseline_from == "1d" and data.window.baseline == "quiet"
        table = app.screen.query_one("#dd-table")
        table.focus()
        await pilot.pause()
        for _ in range(5):
            await pilot.press("down")
        labels = []
        for row in (5, 6):
            await pilot.press("alt+p")
            await pilot.pause(0.6)  # the incident's change reaches the screen after 0.2 s
            await app.workers.wait_for_complete()
            await pilot.pause()
            labels.append(ctx.session.incident.evidence[-1].label)
            assert table.cursor_row == row  # type: ignore[attr-defined]
            assert view.data is data  # type: ignore[attr-defined]
            await pilot.press("down")
        assert labels[0] != labels[1] and len(ctx.session.incident.evidence) == 2


async def test_alt_o_names_the_baseline_c_compared_with_not_the_one_asked(
    prometheus_scenario: Get, tmp_path: Path
) -> None:
    """No data a day earlier: C compares with the quiet window, as its header says. The
    notice of Alt+O names that one as the baseline it was, and why, in both languages."""
    from cockpit.app import CockpitApp

    srv = prometheus_scenario("gpu_lost")
    for lang, was in (
        ("en", "(was quiet, as 1d had no data)"),
        ("zh", "（之前：事发前的平静时段，因1 天前同时段无数据）"),
    ):
        ctx = ctx_for(srv, tmp_path / lang, "qwen-chat")
        ctx.lang = lang
        app = CockpitApp(ctx=ctx, start_step="C")
        async with app.run_test(size=(160, 48)) as pilot:
            data = await _c_rows(app, pilot)
            assert data.window.baseline == "quiet"
            # C's change cell is A's: the peak a verdict on a breach that is over rests on
            from cockpit.analysis.golden import change_text
            from cockpit.ui.drilldown_view import DD_COLUMNS

            table = app.screen.query_one("#dd-table")
            row = next(
                s for s in data.drilldown.summaries if s.key == "access.error_ratio_5xx:value"
            )
            cell = table.get_row(row.key)[DD_COLUMNS.index("change")]  # type: ignore[attr-defined]
            assert str(cell) == change_text(row, lang) != "", (cell, lang)
            table.focus()
            await pilot.pause()
            await pilot.press("alt+o")
            await pilot.pause()
            notices = [n.message for n in app._notifications]
            assert any(was in n for n in notices), notices
            # 7d has no data either: C still compares with the quiet window, and says so
            # once the answers are in; then the quiet window is asked for
            await _c_rows(app, pilot)
            await app.workers.wait_for_complete()
            await pilot.pause()
            from cockpit.collect.base import fallback_text

            after = [n.message for n in app._notifications]
            assert fallback_text("7d", lang).split("：")[0].split(":")[0] in after[-1], after
            await pilot.press("alt+o")
            await pilot.pause()
        # The incident's history (the export's corrections, F8) keeps the same story:
        # the baseline replaced is the quiet window C compared with, not the 1d asked;
        # a switch to the window C already fell back to is kept as the setting replaced,
        # so the history ends on the baseline the incident is on.
        from cockpit.history import entry_line
        from cockpit.i18n import t

        assert ctx.session is not None
        inc = ctx.session.incident
        switches = [h for h in inc.history if h.target == "opened_with.baseline"]
        assert [(h.old, h.new) for h in switches] == [("quiet", "7d"), ("7d", "quiet")]
        assert inc.opened_with.baseline == "quiet"
        line = entry_line(inc, switches[0], lang)
        quiet, week = (t(f"metrics.baseline_kind.{k}", lang) for k in ("quiet", "7d"))
        assert quiet in line and week in line, line


async def test_an_analysis_on_a_short_history_never_asks_a_day_earlier(
    prometheus_scenario: Get, tmp_path: Path
) -> None:
    """The lost-GPU incident's Prometheus holds hours, not days: the detection finds the
    day and the week earlier empty, and the whole analysis asks nothing there (the
    baselines go to the quiet window at once) and still concludes the lost GPU, with the
    note that says there was no data a day earlier."""
    from cockpit.collect.analyze import run_analysis
    from cockpit.collect.base import detection_for

    srv = prometheus_scenario("gpu_lost")
    starts: list[datetime] = []

    class Noting(PrometheusSource):
        async def range(self, query: str, start: datetime, end: datetime, step_s: float):  # type: ignore[no-untyped-def]
            starts.append(start)
            return await super().range(query, start, end, step_s)

        async def instant(self, query: str, at: datetime):  # type: ignore[no-untyped-def]
            starts.append(at)
            return await super().instant(query, at)

    ctx = ctx_for(srv, tmp_path, srv.scenario.scope["deployment"])
    ctx.sources.metrics = Noting(ctx.settings.prometheus)
    now = from_epoch(srv.scenario.now)
    try:
        w = make_window(now, timedelta(hours=2), "1d")
        await detection_for(ctx, w.end)
        report = await run_analysis(ctx, w)
    finally:
        await ctx.sources.close()
    assert len(ctx.metrics.empty_spans) == 2
    assert starts and min(starts) > now - timedelta(hours=12)
    assert report.conclusion.cause == "gpu_lost"
    assert report.drilldown.baseline_from == "1d"
    assert "1d earlier" in report.drilldown.baseline_note
