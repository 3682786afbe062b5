"""One fact, one computation: the screens, commands and the export read an event's time
from the window's history, and windows of different lengths or unaligned ends (step B's
24 h before impact start, the 12 h of the conclusion, step C's 6 h) give the same time."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from cockpit.analysis.history import merge_changes
from cockpit.collect.base import make_window
from cockpit.collect.history import collect_history
from cockpit.models import from_epoch
from cockpit.scenarios import incidents
from cockpit.scenarios.promserver import PromServer
from tests.test_metric_history import ctx_for

Get = Callable[[str], PromServer]
SPANS = (timedelta(hours=6), timedelta(hours=12), timedelta(hours=30, seconds=37))
"""Step C's window, the conclusion's (twice it) and step B's (24 h before impact start,
ending at a wall-clock second that is on no grid)."""


def _cockpit(*args: str) -> subprocess.CompletedProcess[str]:
    """``cockpit ARGS…`` with no configuration, as a new user runs it."""
    from tests.test_metric_history import COCKPIT

    return subprocess.run(
        [COCKPIT, *args],
        capture_output=True,
        text=True,
        timeout=180,
        env={"PATH": "/usr/bin:/bin", "COCKPIT_CONFIG": "/nonexistent", "LANG": "C.UTF-8"},
    )


async def _event_times(srv: PromServer, tmp_path: Path, kind: str) -> list[dict[str, str]]:
    ctx = ctx_for(srv, tmp_path, srv.scenario.scope["deployment"])
    out = []
    try:
        for i, span in enumerate(SPANS):
            end = from_epoch(srv.scenario.now - (4 if i == 2 else 0))
            hist = await collect_history(ctx, make_window(end, span, "quiet"))
            items = merge_changes([], [*hist.items, *hist.items])
            out.append({it.key: it.at.isoformat() for it in items if it.kind == kind and it.at})
            assert len([it for it in items if it.kind == kind]) == len(out[-1])
    finally:
        await ctx.sources.close()
    return out


async def test_xid_time_is_the_same_in_every_window(
    prometheus_scenario: Get, tmp_path: Path
) -> None:
    srv = prometheus_scenario("gpu_lost")
    got = await _event_times(srv, tmp_path, "xid")
    assert got[0] and got[0] == got[1] == got[2]
    (at,) = set(got[0].values())
    assert at == from_epoch(incidents.LOST_XID_AT).isoformat()


@pytest.mark.parametrize("name", ["bad_release", "gpu_lost"])
async def test_alert_time_is_the_same_in_every_window(
    prometheus_scenario: Get, tmp_path: Path, name: str
) -> None:
    srv = prometheus_scenario(name)
    got = await _event_times(srv, tmp_path, "alert")
    assert got[0] == got[1] == got[2]
    if name == "bad_release":
        assert got[0]


def test_changes_command_at_the_served_time_tells_the_xid_time(prometheus_scenario: Get) -> None:
    """``cockpit changes --at`` reads the served incident, not the wall clock, and gives
    the Xid the time every screen gives it."""
    import json

    srv = prometheus_scenario("gpu_lost")
    at = from_epoch(srv.scenario.now).strftime("%Y-%m-%dT%H:%MZ")
    proc = _cockpit("changes", "--prometheus-url", srv.url, "--at", at, "-n", "llm", "--json")
    assert proc.returncode == 0, proc.stderr
    xids = [i for i in json.loads(proc.stdout)["items"] if i["kind"] == "xid"]
    assert [i["at"] for i in xids] == [
        from_epoch(incidents.LOST_XID_AT).isoformat().replace("+00:00", "Z")
    ]


@pytest.mark.parametrize("node_flag", [True, False])
async def test_gpus_command_shows_the_lost_gpu_the_panel_shows(
    prometheus_scenario: Get, tmp_path: Path, node_flag: bool
) -> None:
    """``cockpit gpus --once [--node N] --at T`` reads the GPU panel's computation: the
    GPUs that went silent in the window are listed lost, and without ``--node`` the node
    that lost one is shown."""
    import json

    srv = prometheus_scenario("gpu_lost")
    truth = srv.scenario.ground_truth.suspect  # type: ignore[union-attr]
    ctx = ctx_for(srv, tmp_path, srv.scenario.scope["deployment"])
    try:
        w = make_window(from_epoch(srv.scenario.now), timedelta(hours=6), "quiet")
        inv = (await collect_history(ctx, w)).inventory
    finally:
        await ctx.sources.close()
    silent = {(g.node, int(g.index)) for g in inv.silent_gpus()}
    assert (truth.node, truth.gpu_index) in silent
    at = from_epoch(srv.scenario.now).strftime("%Y-%m-%dT%H:%MZ")
    node = ["--node", truth.node] if node_flag else []
    proc = _cockpit("gpus", "--once", "--json", "--prometheus-url", srv.url, "--at", at, *node)
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    snap = doc["snapshot"]
    assert snap["node"] == truth.node
    lost = {(snap["node"], g["index"]) for g in snap["gpus"] if g.get("lost")}
    assert lost == {s for s in silent if s[0] == truth.node}


async def test_restarts_in_the_window_are_one_count_that_b_d_and_e_quote(
    prometheus_scenario: Get, tmp_path: Path
) -> None:
    """The crash-looping pod's restarts in the window are counted once (the window's
    history): step B's change line, D's suspect line, E's cohort and ``analyze --json``
    quote the same number, and the per-pod signal is named as the rate it is (restarts
    per 5 min, the rate window), never as a count."""
    import json

    from cockpit.collect import steps
    from cockpit.collect.base import Window
    from cockpit.collect.cache import screen_window
    from cockpit.models.messages import Msg
    from cockpit.models.signals import SIGNALS

    srv = prometheus_scenario("gpu_lost")
    want = len(incidents._restart_times(incidents.LOST_GONE_AT + 20, incidents.NOW))
    ctx = ctx_for(srv, tmp_path, srv.scenario.scope["deployment"])
    try:
        window = screen_window(ctx)
        hist = await collect_history(ctx, window)
        res = await steps.scope(ctx, window)
        coh = await steps.cohort(ctx, window)
    finally:
        await ctx.sources.close()
    victim = res.blast_radius.suspect
    count = hist.inventory.restarts_in(victim)
    assert count is not None and (count.n, count.reason) == (want, "Error")
    # B: the change line of the victim's container
    (b_item,) = [i for i in hist.items if i.kind == "restart"]
    assert b_item.message is not None and b_item.message.args["n"] == want
    # D: the suspect line quotes that count
    (d_line,) = [m for m in res.blast_radius.line_msgs if m.key.startswith("evidence.blast.unh")]
    assert d_line.key == "evidence.blast.unhealthy_restarted"
    quoted = d_line.args["restarts"]
    assert isinstance(quoted, Msg) and quoted.args["n"] == want
    assert f"restarted {want} times in the window" in d_line.text("en")
    # E: the cohort of that suspect carries it too
    assert coh is not None and coh.restarts is not None and coh.restarts.n == want
    # the per-pod signal is the rate window's count, and says so
    assert Window.model_fields["rate_window"].default == "5m"
    assert SIGNALS["infra.restarts"].en.endswith("per 5 min")
    assert "container restarts per 5 min = " in d_line.text("en")
    # analyze: the same count, in its cohort and in D's line
    at = from_epoch(srv.scenario.now).strftime("%Y-%m-%dT%H:%MZ")
    deployment = srv.scenario.scope["deployment"]
    proc = _cockpit(
        "analyze", "--prometheus-url", srv.url, "--at", at, "-n", "llm",
        "--deployment", deployment, "--json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["cohort"]["restarts_in_window"]["n"] == want
    assert any(
        f"restarted {want} times in the window" in line
        for line in doc["blast_radius"]["evidence_text"]
    )


async def test_backtest_reads_the_xid_time_every_screen_shows(
    prometheus_scenario: Get, tmp_path: Path
) -> None:
    """Step I's back-test reads the Xid from the window's history (the time B, C and the
    export give it), so the 30-second Xid fires the Xid rule at that time whatever the
    window's step, and its lead is measured from it."""
    from cockpit.collect import steps
    from cockpit.collect.alerts import collect_backtest

    srv = prometheus_scenario("gpu_lost")
    ctx = ctx_for(srv, tmp_path, srv.scenario.scope["deployment"])
    fired = []
    try:
        for span in (timedelta(hours=2), timedelta(hours=6)):
            window = make_window(from_epoch(srv.scenario.now), span, "quiet")
            dd = await steps.drilldown(ctx, window)
            impact = from_epoch(incidents.LOST_XID_AT + 60)
            bt = await collect_backtest(ctx, window, dd.drilldown.summaries, impact)
            (xid,) = [r for r in bt.results if r.candidate.id == "xid"]
            fired.append((xid.status, xid.first_fire, xid.lead_s, window.step_s))
    finally:
        await ctx.sources.close()
    at = from_epoch(incidents.LOST_XID_AT)
    assert [f[:3] for f in fired] == [("lead", at, 60.0), ("lead", at, 60.0)], fired
    assert fired[1][3] > 60  # the 6 h window's step is coarser than the Xid burst


def test_the_backtest_measures_from_the_detection_time_a_offers() -> None:
    """A's "use as detection time" and I's back-test read one offered alert: the one the
    incident was started from when it fired in the window, else the first."""
    from datetime import UTC, datetime

    from cockpit.analysis.alerts import FiredAlert
    from cockpit.collect.golden import offered_alert
    from cockpit.incident import PagedBy

    t0 = datetime(2026, 11, 29, 13, 0, tzinfo=UTC)
    first = FiredAlert(name="VLLMHighE2ELatency", labels={"namespace": "llm"}, first=t0, last=t0)
    later = t0 + timedelta(minutes=9)
    paged = FiredAlert(
        name="NginxIngressHigh5xxRate", labels={"ingress": "gw"}, first=later, last=later
    )
    alerts = [first, paged]
    assert offered_alert(alerts) is first and offered_alert([]) is None
    by = PagedBy(name="NginxIngressHigh5xxRate", labels={"ingress": "gw", "severity": "page"})
    assert offered_alert(alerts, by) is paged
    other = PagedBy(name="NginxIngressHigh5xxRate", labels={"ingress": "other"})
    assert offered_alert(alerts, other) is first


async def test_an_alert_firing_since_before_the_picker_window_is_detected_when_it_fired(
    prometheus_scenario: Get, tmp_path: Path
) -> None:
    """gpu_lost's KubePodCrashLooping became pending 15 min before it fired, and fired
    more than the picker's hour before the served time (no alerting rule is loaded, so
    its ``for:`` is unknown). The picker says both times, labelled; choosing it sets the
    detection time to when it fired; the golden panel's offer, even over a window that
    starts after the firing, is that time; the timeline holds the alert once."""
    from cockpit.analysis.paged import AlertState
    from cockpit.collect.alerts import collect_alerts
    from cockpit.collect.golden import offered_alert, timeline_alerts
    from cockpit.collect.paged import alert_line, apply_alert, collect_paged
    from cockpit.incident import TimelineKind

    srv = prometheus_scenario("gpu_lost")
    ctx = ctx_for(srv, tmp_path)
    fired = from_epoch(incidents.LOST_CRASHLOOP_FIRING)
    pending = from_epoch(incidents.LOST_GONE_AT + 60)
    end = from_epoch(srv.scenario.now)
    try:
        got = await collect_paged(ctx)
        assert got.read and not got.failures
        crash = next(a for a in got.alerts if a.name == "KubePodCrashLooping")
        assert crash.state is AlertState.FIRING and got.since > fired
        assert (crash.starts_at, crash.active_at, crash.detected_at) == (fired, pending, fired)
        en, zh = alert_line(crash, "en"), alert_line(crash, "zh")
        assert f"firing since {fired:%Y-%m-%d %H:%M:%S}Z" in en
        assert f"pending since {pending:%Y-%m-%d %H:%M:%S}Z" in en
        assert f"开始告警 {fired:%Y-%m-%d %H:%M:%S}Z" in zh and "待触发自" in zh

        assert apply_alert(ctx, crash) == []
        assert ctx.session is not None
        inc = ctx.session.incident
        assert inc.times.detect == fired and inc.paged_by is not None

        late = await collect_alerts(ctx, make_window(end, timedelta(minutes=30), "quiet"))
        late_crash = next(a for a in late if a.name == "KubePodCrashLooping")
        assert late_crash.first > fired  # this window sees it only from its own start
        offered = offered_alert(late, inc.paged_by)
        assert offered is not None and offered.first == fired

        wide = await collect_alerts(ctx, make_window(end, timedelta(hours=6), "quiet"))
        assert [a.first for a in wide if a.name == "KubePodCrashLooping"] == [fired]
        for a in timeline_alerts(wide, inc.paged_by, inc.timeline):
            ctx.session.add_timeline(a.first, a.text(), TimelineKind.ALERT, source="prometheus")
        alerts = [e for e in inc.timeline if e.kind is TimelineKind.ALERT]
        assert [(e.at, "KubePodCrashLooping" in e.text) for e in alerts] == [(fired, True)]
    finally:
        await ctx.sources.close()


def test_step_i_holds_an_sli_to_the_slo_a_and_c_use_never_past_it() -> None:
    """A baseline band wider than the SLO (a noisy 0.8 % baseline, ×3 is 2.4 %) is cut at
    the SLO steps A and C hold the error ratio to: 1.5 % for the whole hold is not
    recovered, and the line names the SLO as its bound."""
    from datetime import UTC, datetime

    from cockpit.analysis.recovery import LineStatus, RecoverySignal, check_recovery
    from cockpit.collect.recovery import line_text
    from cockpit.models import Sample, Series, to_epoch

    now = datetime(2026, 11, 29, 15, 0, tzinfo=UTC)
    end = to_epoch(now)
    sig = RecoverySignal(
        name="gateway 5xx ratio",
        key="access.error_ratio_5xx:value",
        unit="%",
        baseline=0.8,
        series=Series(samples=[Sample(t=end - 60 * i, v=1.5) for i in range(30, -1, -1)]),
        signal_id="access.error_ratio_5xx",
        slo=1.0,
    )
    (line,) = check_recovery([sig], now, 15).lines
    assert (line.limit, line.slo, line.status) == (1.0, 1.0, LineStatus.NOT_RECOVERED)
    assert line_text(line, "en").endswith(", SLO 1 %")
    assert line_text(line, "zh").endswith("，SLO 1 %")
