"""One story per incident: ``cockpit analyze --json`` concludes the ground truth of each of
the six incidents (primary layer, scope, suspect, cause), and every rendering of a signal
(A's row, C's row, D's split and E's cohort rows, F's table, a reading rule, a playbook item,
step I's recovery row, the export's evidence) shows the same value and verdict, a signal over
its SLO never normal."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from cockpit.scenarios.promserver import PromServer

COCKPIT = str(Path(sys.executable).with_name("cockpit"))
INCIDENTS = (
    "gpu_lost",
    "bad_release",
    "sglang_long_prompts",
    "throttled_gpu",
    "gateway_burst",
    "kv_overload",
)


def _run_analyze(
    srv: PromServer, *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``cockpit analyze`` on the scenario's scope and time, its output as text."""
    sc = srv.scenario
    at = datetime.fromtimestamp(sc.now, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    proc = subprocess.run(
        [
            COCKPIT,
            "analyze",
            "--prometheus-url",
            srv.url,
            "--at",
            at,
            "-n",
            sc.scope["namespace"],
            "--deployment",
            sc.scope["deployment"],
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=180,
        env={
            "PATH": "/usr/bin:/bin",
            "COCKPIT_CONFIG": "/nonexistent/config.toml",
            "LANG": "C.UTF-8",
            **(env or {}),
        },
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def _analyze(srv: PromServer, *extra: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    return json.loads(_run_analyze(srv, "--json", *extra, env=env).stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize("span", ["2h", "6h"])
@pytest.mark.parametrize("name", INCIDENTS)
def test_analyze_concludes_the_ground_truth(prometheus_scenario: Any, name: str, span: str) -> None:
    """The default 2 h window, and the whole 6 h incident: no data a day earlier nor before
    it, so the baseline is the window's quiet first half."""
    srv = prometheus_scenario(name)
    truth = srv.scenario.ground_truth
    doc = _analyze(srv, "--window", span)
    if span == "6h":
        w = doc["window"]
        assert (w["baseline"], w["baseline_start"]) == ("quiet", w["start"])
        assert "the window's first half" in w["baseline_note"]
    c = doc["conclusion"]
    assert (c["primary_layer"], c["scope"], c["cause"]) == (
        truth.primary_layer,
        truth.scope,
        truth.cause,
    )
    s, want = c["suspect"], truth.suspect
    assert s["kind"] == want.kind
    if want.kind == "gpu":
        assert (s["pod"], s["node"], s["gpu_index"], s["uuid"]) == (
            want.pod,
            want.node,
            str(want.gpu_index),
            want.uuid,
        )
        assert want.node in s["name"] and f"GPU {want.gpu_index}" in s["name"]
    if want.kind == "revision":
        assert (s["old_revision"], s["new_revision"]) == (want.old_revision, want.new_revision)
        assert (s["old_version"], s["new_version"]) == (want.old_version, want.new_version)
    if want.kind == "gateway":
        # the gateway itself, not its stack: Ingress, Service and controller pod
        assert s["pod"] == want.pod
        assert s["name"] == (
            f"ingress qwen-chat-gw (llm.example.internal) → service qwen-chat, "
            f"controller ingress-nginx/{want.pod}"
        )
    if want.deployment and want.kind in ("service", "revision"):
        assert s["deployment"] == want.deployment
    # every part cites its evidence, and the one line says it all
    assert all(c["evidence"][part]["text"] for part in ("layer", "scope", "suspect", "cause"))
    assert c["confidence"] in ("high", "medium")
    assert c["text"].startswith("Most likely: ")


async def _story(srv: PromServer, tmp_path: Path) -> dict[str, Any]:
    """Every screen's reading of the incident, in process, from one context."""
    from cockpit.analysis.history import absent_msgs
    from cockpit.analysis.playbooks.run import run_playbook
    from cockpit.analysis.playbooks.spec import load_playbook
    from cockpit.collect import steps
    from cockpit.collect.analyze import history_window
    from cockpit.collect.cache import screen_window
    from cockpit.collect.history import collect_history
    from cockpit.collect.paged import collect_paged
    from cockpit.collect.playbooks import collect_playbook_data
    from cockpit.collect.recovery import signals_from_golden
    from testkit import scenario_ctx

    ctx = scenario_ctx(srv, tmp_path)
    try:
        window = screen_window(ctx)
        hist = await collect_history(ctx, history_window(window))
        paged = await collect_paged(ctx)
        golden = await steps.golden(ctx, window)
        dd = await steps.drilldown(ctx, window)
        load = await steps.load(ctx, window)
        likely = await steps.likely(ctx, window)
        data = await collect_playbook_data(ctx, "ttft_spike")
        items = run_playbook(load_playbook("ttft_spike"), data)
        cohort = await steps.cohort(ctx, window)
        bset = await steps.breakdowns(ctx, window)
    finally:
        await ctx.sources.close()
    return {
        "ctx": ctx,
        "cohort": cohort,
        "bset": bset,
        "golden": golden,
        "dd": dd,
        "load": load,
        "likely": likely,
        "playbook": data,
        "items": items,
        "hist": hist,
        "paged": paged,
        "recovery": signals_from_golden(dd.drilldown.summaries, absent=absent_msgs(hist.inventory)),
    }


@pytest.mark.parametrize("name", INCIDENTS)
async def test_every_rendering_of_a_signal_agrees(
    prometheus_scenario: Any, tmp_path: Path, name: str
) -> None:
    from cockpit.analysis.golden import reading_msg
    from cockpit.collect.playbooks import PROFILE_SIGNALS

    srv = prometheus_scenario(name)
    story = await _story(srv, tmp_path)
    rows = {s.key: s for s in story["dd"].drilldown.summaries}
    # A's rows are C's rows: the same objects, so the same value and verdict
    for row in story["golden"].rows:
        if row.key in rows:
            assert rows[row.key] is row, row.key
    # two signals never share a label: the gateway's 5xx ratio and the engine's error
    # ratio are two numbers, each named by what it counts, in both languages
    for lang in ("en", "zh"):
        labels = [r.label(lang) for r in rows.values()]
        assert len(set(labels)) == len(labels), lang
    if "serving.error_ratio:value" in rows:
        assert rows["serving.error_ratio:value"].label("en") == "engine error ratio"
    # F's table reads C's rows
    for s in story["load"].summaries:
        assert rows[s.key] is s, s.key
    _gateway_and_serving_p99_agree(story, rows)
    # a reading rule quotes the rows as the table shows them
    for rule in story["dd"].drilldown.rules:
        for key, reading in zip(rule.evidence, rule.readings, strict=True):
            assert reading == reading_msg(rows[key])
    # steps D and G say the same "most likely" as cockpit analyze
    truth = srv.scenario.ground_truth
    c = story["likely"]
    assert (c.primary_layer, c.scope, c.cause) == (truth.primary_layer, truth.scope, truth.cause)
    # the reading rules that match never contradict that conclusion: longer requests (a
    # release, a long-prompt client) match the "longer requests" rule, never "capacity"
    fired = {r.id for r in story["dd"].drilldown.rules if r.status == "fired"}
    if truth.cause in ("release", "long_prompts"):
        assert "p50_and_p99" not in fired, fired
    if truth.cause == "release":
        assert "p50_and_p99_longer" in fired, fired
    # "errors at the gateway while the servers are healthy" never fires while a replica
    # crash-loops or is not ready (the gateway's 5xx are then the requests sent to it),
    # and the conclusion then keeps no gateway alternative open
    infra = {k: rows[k] for k in ("infra.restarts:value", "infra.not_ready:value") if k in rows}
    gw = next(f for f in story["load"].findings if f.id == "gateway_errors")
    if any(s.verdict == "anomalous" for s in infra.values()):
        assert gw.status != "fired"
        assert "gateway_errors" not in {a.cause for a in c.alternatives}
    if truth.cause == "gpu_lost":
        assert infra and gw.status == "not_fired"
    # the playbook's signals read C's now, baseline and verdict
    for pname, sig in story["playbook"].metrics.items():
        sid, quantile = PROFILE_SIGNALS.get(pname, ("", -1.0))
        stat = {0.99: "p99", None: "value"}.get(quantile)  # type: ignore[call-overload]
        row = rows.get(f"{sid}:{stat}")
        if row is None or row.now.value is None:
            continue
        assert (sig.now.value, sig.verdict) == (row.now.value, row.verdict), pname
        assert sig.worse() == (row.verdict == "anomalous"), pname
    # step I's rows carry C's verdict of the value now: the same, except a row C calls
    # anomalous only for an SLO breach earlier in the window, now back under its SLO
    from cockpit.collect.recovery import verdict_now

    for r in story["recovery"]:
        row = rows[r.key]
        assert r.verdict_now == verdict_now(row)
        # a GPU that stopped reporting is absent on every hardware row, never recovered
        lost = story["hist"].inventory.silent_gpus()
        assert bool(r.absent) == (row.layer == "hardware" and bool(lost)), r.key
        if r.verdict_now != row.verdict:
            assert row.slo_breach_at is not None and row.slo is not None
            assert row.now.value is not None and row.now.value <= row.slo
    # step I checks every signal C calls anomalous, utilization included; demand is
    # context there, never a failure criterion, and so are output tokens/s at or above
    # their baseline (the service answering more, not failing)
    from cockpit.analysis.recovery import DEMAND_SIGNALS
    from cockpit.collect.recovery import WORK_DONE

    checked = {r.key: r for r in story["recovery"]}
    for row in rows.values():
        if row.verdict == "anomalous" and (row.baseline.value is not None or row.spark):
            assert row.key in checked, row.key
            now, base = row.now.value, row.baseline.value
            more = row.signal in WORK_DONE and now is not None and base is not None and now >= base
            assert checked[row.key].context == (row.signal in DEMAND_SIGNALS or more), row.key
    _past_breach_and_slo_agree(srv, story, rows)
    _slo_line_names_its_signal(story, rows)
    # no signal over its SLO is called normal anywhere
    over = [s for s in rows.values() if s.slo_breach_at is not None]
    assert all(s.verdict == "anomalous" for s in over)
    analyzed = _analyze(srv)
    # D and G name the same suspect as cockpit analyze (a gateway by its Ingress and pod)
    assert c.suspect.name == analyzed["conclusion"]["suspect"]["name"]
    _e_rows_agree(analyzed, story, rows)
    _export_evidence_agrees(story, rows)
    _b_changes_are_exported(story, srv.scenario.name)
    _change_kinds_agree(story)
    _alert_times_agree(story, analyzed)


def _past_breach_and_slo_agree(
    srv: PromServer, story: dict[str, Any], rows: dict[str, Any]
) -> None:
    """A row anomalous only for an SLO breach earlier in the window (back under the SLO
    now) shows on A the peak C shows as the window's max, never a change of zero beside
    "anomalous"; step I holds an SLI to the SLO A and C use, never to a bound past it, and
    its line names that SLO."""
    from cockpit.analysis.golden import change_text, reading_msg
    from cockpit.analysis.recovery import check_recovery
    from cockpit.collect.recovery import line_text
    from cockpit.i18n import fmt_value
    from cockpit.models import from_epoch
    from cockpit.models.messages import unit_text

    past = []
    for row in story["golden"].rows:
        now, slo = row.now.value, row.slo
        if row.slo_breach_at is None or now is None or slo is None or now > slo:
            continue
        past.append(row.key)
        peak = fmt_value(rows[row.key].window_max.value)
        # the peak with its unit, as the now cell beside it
        unit = unit_text(row.unit, "en")
        assert change_text(row, "en") == f"max {fmt_value(rows[row.key].window_max.value, unit)}"
        assert change_text(row, "zh").startswith(f"最高 {peak}"), row.key
        # its reading and reason say the breach is over, never "over its SLO since"
        at = f"{row.slo_breach_at:%H:%M}"
        en, zh = (reading_msg(row).text(lang) for lang in ("en", "zh"))
        assert "since" not in en and f"from {at}" in en and f"max {peak}" in en, en
        assert "曾超出" in zh and f"最高 {peak}" in zh, zh
        assert "back within" in row.reason_text("en"), row.reason_text("en")
        assert "已回到" in row.reason_text("zh"), row.reason_text("zh")
        breach = story["golden"].breach
        if breach is not None and breach.signal == "error_ratio" and "error" in row.signal:
            assert breach.value <= rows[row.key].window_max.value
    if srv.scenario.name == "gpu_lost":
        # the gateway's 5xx ratio: over its 1 % SLO at the Xid, back to 0 by now
        assert "access.error_ratio_5xx:value" in past
    result = check_recovery(story["recovery"], from_epoch(srv.scenario.now))
    held = 0
    uuids = [g.uuid for g in story["hist"].inventory.silent_gpus()]
    for line in result.lines:
        # the value now I quotes is the one A and C show
        if rows[line.key].now.value is not None:
            assert line.last == rows[line.key].now.value, line.key
        if line.absent:
            assert line.status.value == "absent" and result.recovered is not True, line.key
            for lang in ("en", "zh"):
                assert all(u[:8] in line_text(line, lang) for u in uuids), line.key
        row = rows[line.key]
        assert line.slo == row.slo, line.key
        if row.slo is None or line.limit is None:
            continue
        held += 1
        assert line.limit <= row.slo, line.key
        assert f"SLO {fmt_value(row.slo)}" in line_text(line, "en"), line.key
        assert f"SLO {fmt_value(row.slo)}" in line_text(line, "zh"), line.key
    if srv.scenario.name == "gpu_lost":
        assert held
        # the Xid row left its band at the Xid, and the GPU that reported it is gone
        xid = next(line for line in result.lines if line.key == "hardware.xid:value")
        assert xid.status.value == "absent" and "stopped reporting" in line_text(xid, "en")


def _slo_line_names_its_signal(story: dict[str, Any], rows: dict[str, Any]) -> None:
    """A's SLO line (and the impact start it offers, its timeline entry, so the export,
    and I's back-test) names the row that crossed the SLO, as C labels it: which P99
    (gateway, end-to-end, TTFT) or which error ratio, never a bare "P99 latency"."""
    from cockpit.analysis.golden import breach_detail, breach_name

    b = story["golden"].breach
    if b is None:
        return
    row = rows[b.key]
    assert (row.slo, row.slo_breach_at) == (b.slo, b.crossed_at or b.at), b.key
    for lang in ("en", "zh"):
        assert breach_name(b, lang) == row.label(lang)
        assert breach_detail(b, lang).startswith(f"{row.label(lang)} = "), lang
    assert "P99 latency" not in breach_detail(b, "en")


def _e_rows_agree(analyzed: dict[str, Any], story: dict[str, Any], rows: dict[str, Any]) -> None:
    """E's cohort rows read D's per-entity split of the signal at C's statistic and unit,
    and ``analyze`` shows the same rows (numbers and outliers) for the same suspect."""
    from cockpit.analysis.golden import is_changed

    coh = story["cohort"]
    split = {b.key: b for b in story["bset"].breakdowns}
    if coh is None:
        assert analyzed["cohort"] is None
        return
    from cockpit.analysis.golden import judge_msg, value_msg

    for r in coh.rows:
        assert r.key in split and r.unit == split[r.key].unit, r.key
        if r.key in rows:
            assert r.unit == rows[r.key].unit, r.key
            # like with like: a replica's (GPU's) value is never labelled as C's
            # service-wide row, and C's value of the key stands beside it, as C shows it
            for lang in ("en", "zh"):
                assert r.label(lang) != rows[r.key].label(lang), (r.key, lang)
                assert rows[r.key].label(lang) in r.label(lang), (r.key, lang)
            per = {"replica": ("per replica", "每副本"), "gpu": ("per GPU", "每块 GPU")}[r.per]
            assert per[0] in r.label("en") and per[1] in r.label("zh"), r.key
            assert r.service == rows[r.key].now.value, r.key
            assert r.service_msg == value_msg(rows[r.key]), r.key
        if coh.cohort.suspect_kind == "revision" and r.suspect is not None:
            # before and after, C's question: C's thresholds decide, one verdict rule
            verdict = judge_msg(r.signal, r.suspect, r.cohort_median)[0]
            assert r.outlier == (verdict == "anomalous"), r.key
    doc = analyzed["cohort"]
    assert doc is not None and doc["suspect"] == coh.cohort.suspect
    got = {
        r["key"]: (r["suspect"], r["cohort_median"], r["outlier"], r["changed"], r["window"])
        for r in doc["rows"]
    }
    labels = {r["key"]: (r["label"], r["per"], r["service_now"]) for r in doc["rows"]}
    for r in coh.rows:
        if r.key in labels:
            assert labels[r.key] == (r.label("en"), r.per, r.service), r.key
    for r in coh.rows:
        # a move of ×2 or more is never left unmarked: C's "changed" rule, on E too
        if is_changed(r.ratio):
            assert r.outlier or r.changed, r.key
        if r.key in got:
            window = r.window.text("en") if r.window is not None else None
            want = (r.suspect, r.cohort_median, r.outlier, r.changed, window)
            assert got[r.key] == want, r.key
    assert set(doc["outliers"]) == set(coh.outliers)
    if coh.cohort.suspect_kind == "revision":
        # a release's rows are medians of each revision's replicas, not C's service-wide
        # quantile (30,000 ms here, 30,052 ms in C): the definition says so
        assert "the median of its replicas' own values" in coh.cohort.definition("en")
        assert "各副本自身数值的中位数" in coh.cohort.definition("zh")
        assert doc["definition"] == coh.cohort.definition("en")
    # an Xid the window's history saw on the suspect's GPUs (B's change, C's hardware
    # line, analyze's evidence) is on E's Xid row too, never "—"
    inv, items = story["hist"].inventory, story["hist"].items
    c = coh.cohort
    held = [c.suspect] if c.suspect_kind == "gpu" else []
    if c.suspect_kind == "pod" and c.suspect in inv.pods:
        held = inv.pods[c.suspect].gpus
    codes = {
        i.key.rsplit("/", 1)[1] for i in items if i.kind == "xid" and i.key.split("/")[2] in held
    }
    xid = next((r for r in coh.rows if r.signal == "hardware.xid"), None)
    # C's Xid row reads the window as its layer does: never "normal" after an Xid
    c_xid = next((s for s in story["dd"].drilldown.summaries if s.signal == "hardware.xid"), None)
    if any(i.kind == "xid" for i in items) and c_xid is not None and c_xid.verdict != "no_data":
        assert c_xid.verdict == "anomalous", c_xid.reason
        for code in {i.key.rsplit("/", 1)[1] for i in items if i.kind == "xid"}:
            assert f"Xid {code}" in c_xid.reason_text("en"), c_xid.reason_text("en")
    if codes:
        assert xid is not None and xid.window is not None and xid.outlier
        for code in codes:
            assert f"Xid {code}" in xid.window.text("en") and f"Xid {code}" in xid.window.text("zh")
            hw = next(lay for lay in analyzed["layers"] if lay["layer"] == "hardware")
            assert any(f"Xid {code}" in line for line in hw["evidence"])
    # a suspect whose series stopped says so on each row it has no value for
    silent = any(inv.is_silent(inv.gpus[g]) for g in held if g in inv.gpus)
    for r in coh.rows:
        hardware = r.signal.split(".")[0] == "hardware" and r.signal != "hardware.xid"
        if r.suspect is None and hardware and silent:
            assert r.window is not None and "stopped reporting" in r.window.text("en"), r.key


def _export_evidence_agrees(story: dict[str, Any], rows: dict[str, Any]) -> None:
    """A signal pinned at A or C lands in the export with the value and reading (change and
    verdict) its row shows: a top-bucket quantile as its lower bound."""
    from cockpit.analysis.golden import reading_msg, value_msg
    from cockpit.export import render
    from cockpit.pins import signal_evidence

    session = story["ctx"].session
    pinned = []
    for row in rows.values():
        ev = signal_evidence(row, "en", step="C")
        if ev is None:
            assert row.now.value is None, row.key
            continue
        session.pin(ev)
        pinned.append(row)
    assert pinned
    md = render(session.incident, lang="en", fmt="md")
    for row in pinned:
        assert reading_msg(row).text("en") in md, row.key
        shown = value_msg(row).text("en")
        if row.top_bucket is not None:
            assert shown.startswith("≥ ") and f"{row.label('en')}: ≥ " in md, row.key


async def test_d_names_the_release_and_e_compares_it_with_the_revision_that_is_gone(
    prometheus_scenario: Any, tmp_path: Path
) -> None:
    """The rollout completed inside the window: every replica runs the new revision, so
    the signals reach "everything", and D still names the release (new revision, the old
    one gone) as the suspect; E compares the new revision now with the previous one read
    before the rollout; ``analyze`` says the same."""
    from cockpit.collect import steps
    from cockpit.collect.cache import screen_window
    from tests.test_metric_history import ctx_for

    srv = prometheus_scenario("bad_release")
    truth = srv.scenario.ground_truth.suspect
    ctx = ctx_for(srv, tmp_path, srv.scenario.scope["deployment"])
    try:
        window = screen_window(ctx)
        res = await steps.scope(ctx, window)
        coh = await steps.cohort(ctx, window)
        likely = await steps.likely(ctx, window)
    finally:
        await ctx.sources.close()
    # F2 names D's suspect, the release, as the conclusion at D and G does (old → new)
    from cockpit.ui.protect import current_suspect

    f2 = current_suspect(ctx)
    assert f2 is not None and f2.kind == "revision" and f2.name == likely.suspect.name
    assert truth.old_revision in f2.name and truth.new_revision in f2.name and "→" in f2.name
    br = res.blast_radius
    assert (br.scope, br.propose, br.suspect_kind) == ("revision", "E", "revision")
    assert (br.suspect, br.previous_revision) == (truth.new_revision, truth.old_revision)
    assert res.suspect_name == f"{truth.new_revision} ({truth.new_version})"
    release = next(m for m in br.line_msgs if m.key == "evidence.blast.release")
    assert f"the pods of {truth.old_revision} ({truth.old_version}) are gone" in release.text("en")
    # the per-signal lines say "everything" and the headline says why it differs
    assert any(m.key == "evidence.blast.differs_release" for m in br.line_msgs)
    assert coh is not None and coh.cohort.suspect_kind == "revision"
    assert coh.cohort.suspect == truth.new_revision and len(coh.cohort.members) == 6
    assert all(p.startswith(truth.old_revision) for p in coh.cohort.members)
    rows = {r.key: r for r in coh.rows}
    out = rows["serving.output_len:p50"]
    assert out.outlier and out.ratio is not None and out.ratio > 2 and out.cohort_n == 6
    assert not rows["serving.qps:value"].outlier  # the same load before and after
    # the fingerprint of broken end-of-sequence handling: most answers now stop at the
    # length limit (4 % → 60 %), anomalous in C and against the previous revision in E
    stops = rows["serving.length_stops:value"]
    assert stops.outlier and stops.suspect is not None and stops.cohort_median is not None
    assert stops.suspect > 50 and stops.cohort_median < 8
    doc = _analyze(srv)
    [c_row] = [s for s in doc["signals"] if s["key"] == "serving.length_stops:value"]
    assert c_row["verdict"] == "anomalous" and 50 < c_row["now"] < 70
    assert c_row["baseline"] is not None and c_row["baseline"] < 8
    assert doc["blast_radius"]["scope"] == "revision"
    assert doc["blast_radius"]["suspect"] == truth.new_revision
    assert doc["cohort"]["suspect_kind"] == "revision"
    assert doc["cohort"]["members"] == coh.cohort.members
    assert "serving.output_len:p50" in doc["cohort"]["outliers"]
    assert doc["conclusion"]["scope"] == br.scope
    _d_answers_with_its_verdict(res, tmp_path)


def _d_answers_with_its_verdict(res: Any, tmp_path: Path) -> None:
    """D's question and recorded answer follow its verdict: a release (every replica of
    one revision) is its own answer, going to E to compare the revisions, and is named so
    where D proposes it, in the answer recorded, its history line and the export; never
    "isolate" or "single instance / node" beside "all replicas of one revision"."""
    from cockpit.export import render
    from cockpit.flow import Branch, next_steps
    from cockpit.history import entry_line
    from cockpit.i18n import t
    from cockpit.incident import Incident
    from cockpit.session import IncidentSession
    from cockpit.store import IncidentStore
    from cockpit.ui.scope_view import verdict_text

    br = res.blast_radius
    assert br.branch is Branch.RELEASE
    assert [s.id.value for s in next_steps("D", br.branch)] == ["E"]
    assert "compare this revision with the previous one" in t(br.propose_key, "en")
    session = IncidentSession(IncidentStore(tmp_path / "d-state"), Incident(id="inc-d", lang="en"))
    assert br.branch is not None
    session.set_branch(br.branch, verdict_text(res, "en"))
    inc = session.incident
    assert "all replicas of one revision" in inc.scope_verdict
    lines = [entry_line(inc, e, "en") for e in inc.history if e.target == "scope_branch"]
    assert lines and "the whole release (all replicas of one revision)" in lines[-1]
    for lang, whole, single in (
        (
            "en",
            "the whole release (all replicas of one revision) → E compare revisions",
            "single instance / node",
        ),
        ("zh", "整个发布（某个版本的全部副本）→ E 对比新旧版本", "单实例 / 单节点"),
    ):
        md = render(inc, lang=lang, fmt="md")
        assert whole in md and single not in md, lang
    session.store.release_all()


def test_a_baseline_inside_the_window_is_said_with_its_span() -> None:
    from cockpit.collect.base import fallback_text, make_window
    from cockpit.collect.signals import inside_quiet

    w = make_window(datetime(2026, 11, 29, 15, 0, tzinfo=UTC), timedelta(hours=6))
    inside = w.with_baseline("quiet", inside_quiet(w))
    assert (inside.baseline_start, inside.baseline_end) == (w.start, w.start + timedelta(hours=3))
    en = fallback_text("1d", "en", inside)
    assert "nor before the window" in en and "(09:00–12:00)" in en
    assert "（09:00–12:00）" in fallback_text("1d", "zh", inside)
    before = w.with_baseline("quiet")
    assert "quiet window before the impact" in fallback_text("1d", "en", before)


def _change_kinds_agree(story: dict[str, Any]) -> None:
    """Each change of the window's history has one kind name, in both languages: on the
    Kubernetes timeline panel's line, in B's list and table (a change flagged there keeps
    its kind) and in the export's recent changes; never "other" for a known kind."""
    from cockpit.analysis.changes import kind_name, timeline_line
    from cockpit.collect.kube_gather import ChangesReport
    from cockpit.commands.changes_cmd import render_text
    from cockpit.export import render
    from cockpit.i18n import catalog

    session = story["ctx"].session
    items = [i for i in story["hist"].items if i.at is not None]
    assert items
    for item in items:
        change = session.add_change(item.to_change())
        assert change.kind == item.kind, item.key
    report = ChangesReport(
        namespace="llm",
        since=items[0].at,
        until=items[-1].at,
        items=items,
        sources=["metrics"],
    )
    cli = {lang: render_text(report, lang) for lang in ("en", "zh")}  # cockpit changes
    for lang in ("en", "zh"):
        md = render(session.incident, lang=lang, fmt="md")
        for item in items:
            name = kind_name(item.kind, lang)
            assert f"chg.kind.{item.kind}" in catalog() and name != kind_name("manual", lang)
            assert f"[{name}]" in timeline_line(item, lang), item.key
            assert f"[{name}] " in cli[lang], (item.key, lang)
            assert f" · {name} · " in md, (item.key, lang)


def _gateway_and_serving_p99_agree(story: dict[str, Any], rows: dict[str, Any]) -> None:
    """F's "time before the GPU" quotes C's two P99 rows, and says what each measures:
    the gateway's P99 (the proxy's request time over every response it sent) may sit below
    the serving P99 (the engine's end-to-end time over the requests it finished), quantiles
    of two histograms; a P99 at its histogram's top bucket is a lower bound, never
    subtracted."""
    f = next(x for x in story["load"].findings if x.id == "before_gpu")
    gw, sv = rows.get("access.latency:p99"), rows.get("serving.e2e_latency:p99")
    if gw is None or sv is None or gw.now.value is None or sv.now.value is None:
        return
    en, zh = "\n".join(f.text("en")), "\n".join(f.text("zh"))
    if gw.top_bucket is not None or sv.top_bucket is not None:
        assert "gap_now" not in f.numbers and "top bucket" in en and "最高桶" in zh
        return
    assert (f.numbers["gateway_p99_now"], f.numbers["serving_p99_now"]) == (
        gw.now.value,
        sv.now.value,
    )
    # the generator's gateway records the servers' time plus its own: its P99 is never
    # below theirs, now nor in the baseline (the two histograms share their bounds; whole
    # observation counts move a quantile by under 0.1 %), unless the proxy answered
    # errors itself, fast, for a share of the requests (the 5xx burst)
    e5 = rows.get("access.error_ratio_5xx:value")
    for at in ("now", "baseline"):
        g, v = getattr(gw, at).value, getattr(sv, at).value
        own = getattr(e5, at).value if e5 is not None else None
        if g is not None and v is not None and (own or 0.0) < 0.5:
            assert g >= v * 0.999, (at, g, v)
    if gw.now.value < sv.now.value:
        assert "the proxy's request time" in en and "the engine's end-to-end time" in en
        assert "代理记录的请求耗时" in zh and "引擎记录的端到端耗时" in zh


def _b_changes_are_exported(story: dict[str, Any], name: str) -> None:
    """What step B lists as a change (a rollout from the metrics history when Kubernetes is
    unreachable) is in the incident's recent changes, so in the export: B and the export
    never disagree on what changed."""
    from cockpit.export import render

    session = story["ctx"].session
    listed = [i for i in story["hist"].items if i.in_window and i.at is not None]
    recorded = session.record_changes(listed)
    rollouts = [i for i in listed if i.kind == "rollout"]
    assert {i.key for i in rollouts} <= set(recorded)
    md = render(session.incident, lang="en", fmt="md")
    for item in rollouts:
        assert item.summary in md, item.key
    if name == "bad_release":
        assert rollouts and "(v1.8.2)" in md and "(v1.9.0)" in md


def _alert_times_agree(story: dict[str, Any], analyzed: dict[str, Any]) -> None:
    """An alert that fired has one firing time: the picker's detection time, step A's
    alert (the time Detect takes), B's change list and ``analyze``; starting the incident
    from it and then opening A puts it on the timeline once, at that time."""
    from cockpit.collect.golden import timeline_alerts
    from cockpit.collect.paged import apply_alert
    from cockpit.incident import TimelineKind

    fired = story["golden"].alerts
    firing = [a for a in story["paged"].alerts if a.state.value == "firing"]
    if not fired:
        assert not analyzed["alerts"]
        return
    at_a = {a.name: a.first for a in fired}
    at_analyze = {a["name"]: a["first"] for a in analyzed["alerts"]}
    at_b = {
        i.message.args["alert"]: i.at
        for i in story["hist"].items
        if i.kind == "alert" and i.message is not None
    }
    for name, first in at_a.items():
        assert at_analyze[name] == first.isoformat(), name
        assert at_b[name] == first, name
    assert firing
    alert = firing[0]
    assert alert.detected_at == at_a[alert.name], alert.name
    session = story["ctx"].session
    apply_alert(story["ctx"], alert)
    inc = session.incident
    for a in timeline_alerts(fired, inc.paged_by, inc.timeline):
        session.add_timeline(a.first, a.text(), TimelineKind.ALERT, source="prometheus")
    mine = [e for e in inc.timeline if e.kind is TimelineKind.ALERT and alert.name in e.text]
    assert [e.at for e in mine] == [at_a[alert.name]], mine
    assert inc.times.detect == at_a[alert.name]


def test_analyze_text_names_the_cohorts_suspect_as_e_does(prometheus_scenario: Any) -> None:
    """The text of ``analyze`` names E's suspect as E and the conclusion do (pod, node, GPU
    index and short UUID), never by its bare UUID."""
    srv = prometheus_scenario("throttled_gpu")
    truth = srv.scenario.ground_truth.suspect
    proc = _run_analyze(srv, "--lang", "en")
    (line,) = [x for x in proc.stdout.splitlines() if "Where suspect" in x]
    assert f"{truth.node} GPU {truth.gpu_index} ({truth.uuid[:8]}…)" in line, line
    assert f"suspect {truth.uuid} " not in line, line
