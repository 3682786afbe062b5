"""Starting an incident from the alert that paged: the alerts read from a real
Alertmanager (alerts and a silence posted to it) and from a real Prometheus's ``ALERTS``
alone (the worked example's backfilled history, its alerting rules loaded); choosing
one fills the scope, the detection time, the paged SLI and the title."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import urllib.parse
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cockpit.analysis.paged import AlertState, fingerprint, from_alertmanager
from cockpit.cli import build_parser, main
from cockpit.collect.paged import AlertList, apply_alert, collect_paged
from cockpit.context import AppContext
from cockpit.models import from_epoch
from cockpit.scenarios import get_scenario
from cockpit.scenarios import worked_example as we
from cockpit.scenarios.promserver import PromServer, start
from cockpit.wiring import BootError, build_context
from tests.backends.alertmanager import AlertmanagerServer, iso
from tests.backends.faultproxy import Fault, FaultProxy

P99_EXPR = (
    "histogram_quantile(0.99, sum by (le) (rate(vllm:e2e_request_latency_seconds_bucket"
    f'{{namespace="{we.NAMESPACE}"}}[5m]))) > 0.4'
)
THERMAL_EXPR = "max by (Hostname) (DCGM_FI_DEV_CLOCK_THROTTLE_REASONS) > 0"
RULES = f"""\
groups:
  - name: serving
    rules:
      - alert: VLLMHighP99Latency
        expr: '{P99_EXPR}'
        for: 3m
        labels: {{severity: critical}}
        annotations:
          summary: P99 latency above 400 ms for 3 minutes
      - alert: GPUThermalThrottling
        expr: '{THERMAL_EXPR}'
        for: 5m
        labels: {{severity: warning}}
        annotations:
          summary: 'GPU {{{{ $labels.Hostname }}}} is throttling'
"""


@pytest.fixture(scope="module")
def prom_with_rules(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PromServer]:
    """The worked example's Prometheus with its two alerting rules loaded."""
    srv = start(get_scenario("worked_example"), tmp_path_factory.mktemp("prom-rules"), rules=RULES)
    yield srv
    srv.stop()


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for key in list(os.environ):
        if key.startswith("COCKPIT_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("COCKPIT_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("COCKPIT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("COCKPIT_LANG", "en")
    return tmp_path


def _prom_args(prom: PromServer, **kw: object) -> argparse.Namespace:
    args = build_parser(light=True).parse_args(
        ["--prometheus-url", prom.url, "-n", we.NAMESPACE, "--at", f"{we.NOW}"]
    )
    for k, v in kw.items():
        setattr(args, k, v)
    return args


def _collect(ctx: AppContext) -> AlertList:
    """``collect_paged`` in its own event loop, the connections closed after it."""

    async def go() -> AlertList:
        try:
            return await collect_paged(ctx)
        finally:
            await ctx.sources.close()

    return asyncio.run(go())


def _firing(name: str) -> datetime:
    return from_epoch(next(a.firing_at for a in we.ALERTS if a.name == name))


# -- Prometheus ALERTS alone -------------------------------------------------------------------
def test_prometheus_alerts_list_the_paging_alert_first_with_its_rule(
    clean_env: Path, prom_with_rules: PromServer
) -> None:
    ctx = build_context(_prom_args(prom_with_rules), with_session=False)
    got = _collect(ctx)
    assert got.source == "prometheus" and got.read and not got.failures
    names = [a.name for a in got.alerts]
    # both of the scope and firing: the critical one (the page) before the warning
    assert names[:2] == ["VLLMHighP99Latency", "GPUThermalThrottling"]
    p99 = next(a for a in got.alerts if a.name == "VLLMHighP99Latency")
    assert p99.state is AlertState.FIRING and p99.in_scope
    assert p99.starts_at == _firing("VLLMHighP99Latency")
    assert p99.active_at == from_epoch(we.ALERTS[0].pending_at)
    assert p99.expr == P99_EXPR
    assert p99.sli == "serving.e2e_latency:p99"
    assert p99.summary == "P99 latency above 400 ms for 3 minutes"
    thermal = next(a for a in got.alerts if a.name == "GPUThermalThrottling")
    assert thermal.scope.node == "gpu-node-a1"
    assert thermal.summary == ""  # a templated annotation is Prometheus's to render per alert
    assert thermal.expr == THERMAL_EXPR and thermal.sli == "hardware.throttle"
    # the fingerprint is Alertmanager's, from the alert's labels
    assert p99.fingerprint == fingerprint(p99.labels)


def test_choosing_a_prometheus_alert_fills_scope_detection_sli_and_title(
    clean_env: Path, prom_with_rules: PromServer
) -> None:
    ctx = build_context(_prom_args(prom_with_rules))
    got = _collect(ctx)
    p99 = next(a for a in got.alerts if a.name == "VLLMHighP99Latency")
    assert apply_alert(ctx, p99) == []
    assert ctx.session is not None
    inc = ctx.session.incident
    assert inc.title == "VLLMHighP99Latency: P99 latency above 400 ms for 3 minutes"
    assert (inc.service.namespace, inc.service.deployment) == (we.NAMESPACE, we.DEPLOYMENT)
    assert inc.service.model == we.MODEL
    assert ctx.settings.service.deployment == we.DEPLOYMENT
    assert inc.times.detect == _firing("VLLMHighP99Latency")
    assert inc.paged_by is not None
    assert (inc.paged_by.expr, inc.paged_by.sli) == (P99_EXPR, "serving.e2e_latency:p99")
    assert not inc.paged_by.silenced
    # the detection time, not the GPU warning's later firing (the alert that paged)
    assert inc.times.detect < _firing("GPUThermalThrottling")


def test_alert_flag_opens_the_incident_from_a_name_or_a_fingerprint(
    clean_env: Path, prom_with_rules: PromServer
) -> None:
    ctx = build_context(_prom_args(prom_with_rules, alert="GPUThermalThrottling"))
    assert ctx.session is not None
    inc = ctx.session.incident
    assert inc.paged_by is not None and inc.paged_by.name == "GPUThermalThrottling"
    assert inc.paged_by.node == "gpu-node-a1" and ctx.metrics.picked == ("gpu-node-a1", "node")
    assert inc.times.detect == _firing("GPUThermalThrottling")
    fp = inc.paged_by.fingerprint
    ctx.session.store.release_all()
    again = build_context(_prom_args(prom_with_rules, alert=fp.upper()))
    assert again.session is not None and again.session.incident.paged_by is not None
    assert again.session.incident.paged_by.fingerprint == fp
    again.session.store.release_all()
    with pytest.raises(BootError, match="NoSuchAlert"):
        build_context(_prom_args(prom_with_rules, alert="NoSuchAlert"))


def test_alerts_command_json_and_text(
    clean_env: Path, prom_with_rules: PromServer, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["alerts", "--prometheus-url", prom_with_rules.url, "-n", we.NAMESPACE]
    assert main([*base, "--at", str(we.NOW), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["source"] == "prometheus"
    p99 = next(a for a in doc["alerts"] if a["name"] == "VLLMHighP99Latency")
    assert p99["sli"] == "serving.e2e_latency:p99" and p99["state"] == "firing"
    assert main([*base, "--at", str(we.NOW), "--lang", "zh"]) == 0
    text = capsys.readouterr().out
    assert "[告警中]  VLLMHighP99Latency" in text and "对应的 SLI：" in text
    # an hour after the episode ended nothing fires: the resolved alerts are listed so
    later = str(we.NOW + 3 * 3600)
    assert main([*base, "--at", later, "--since", "4h", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {a["state"] for a in doc["alerts"]} == {"resolved"}
    assert main(["alerts"]) == 2  # no source configured
    assert "no alert source" in capsys.readouterr().err


# -- Alertmanager ----------------------------------------------------------------------------
def _generator(expr: str) -> str:
    return "http://prometheus:9090/graph?" + urllib.parse.urlencode(
        {"g0.expr": expr, "g0.tab": "1"}
    )


@pytest.fixture
def am_alerts(alertmanager_server: AlertmanagerServer) -> dict[str, str]:
    """Alerts as Prometheus posts them (each name unique to this test run), one silenced,
    one inhibited by a NodeDown of its node; returns name → alertname."""
    tag = datetime.now(UTC).strftime("%H%M%S%f")
    now = datetime.now(UTC)
    names = {
        "p99": f"ServingP99High{tag}",
        "ttft": f"TTFTHigh{tag}",
        "gpu": f"GPUHot{tag}",
        "down": "NodeDown",
        "other": f"OtherTeam{tag}",
    }
    node = f"gpu-node-{tag}"
    pod = "vllm-qwen-7d9f8c6b5-x2kq9"
    alerts = [
        {
            "labels": {
                "alertname": names["p99"],
                "namespace": "llm",
                "pod": pod,
                "severity": "critical",
            },
            "annotations": {
                "summary": "P99 above 400 ms\x1b]52;c;aGk=\x07",
                "description": "runbook: reset with password=hunter2secret",
            },
            "startsAt": iso(now - timedelta(minutes=12)),
            "endsAt": iso(now + timedelta(hours=1)),
            "generatorURL": _generator(P99_EXPR),
        },
        {
            "labels": {"alertname": names["ttft"], "namespace": "llm", "severity": "warning"},
            "annotations": {"summary": "TTFT P95 high"},
            "startsAt": iso(now - timedelta(minutes=20)),
            "endsAt": iso(now + timedelta(hours=1)),
            "generatorURL": _generator(
                "histogram_quantile(0.95, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket[5m]))) > 2"
            ),
        },
        {
            "labels": {"alertname": names["down"], "node": node, "severity": "critical"},
            "startsAt": iso(now - timedelta(minutes=3)),
            "endsAt": iso(now + timedelta(hours=1)),
        },
        {
            "labels": {"alertname": names["gpu"], "node": node, "severity": "warning"},
            "startsAt": iso(now - timedelta(minutes=3)),
            "endsAt": iso(now + timedelta(hours=1)),
        },
        {
            "labels": {"alertname": names["other"], "namespace": "batch", "severity": "critical"},
            "startsAt": iso(now - timedelta(minutes=1)),
            "endsAt": iso(now + timedelta(hours=1)),
        },
    ]
    alertmanager_server.post_alerts(alerts)
    alertmanager_server.silence({"alertname": names["ttft"]}, "known: canary rollback running")
    names["node"], names["pod"] = node, pod
    names["p99_starts"] = alerts[0]["startsAt"]  # type: ignore[assignment]
    return names


def _am_ctx(clean_env: Path, am: AlertmanagerServer, monkeypatch: pytest.MonkeyPatch, **kw: object):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("COCKPIT_ALERTMANAGER__URL", am.url)
    args = build_parser(light=True).parse_args(["-n", "llm"])
    for k, v in kw.items():
        setattr(args, k, v)
    return build_context(args)


def test_alertmanager_alerts_are_marked_silenced_and_inhibited(
    clean_env: Path,
    alertmanager_server: AlertmanagerServer,
    am_alerts: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ctx = _am_ctx(clean_env, alertmanager_server, monkeypatch)
    got = _collect(ctx)
    assert got.source == "alertmanager" and got.read
    by_name = {a.name: a for a in got.alerts}
    p99, ttft = by_name[am_alerts["p99"]], by_name[am_alerts["ttft"]]
    gpu, other = by_name[am_alerts["gpu"]], by_name[am_alerts["other"]]
    assert ttft.silenced and ttft.silences == ["oncall: known: canary rollback running"]
    assert gpu.inhibited and not gpu.silenced
    assert not p99.silenced and not p99.inhibited
    assert not other.in_scope and p99.in_scope
    order = [a.name for a in got.alerts]
    # the configured scope's first, unmuted before muted; another namespace's last
    assert order.index(p99.name) < order.index(ttft.name) < order.index(other.name)
    assert p99.expr == P99_EXPR and p99.sli == "serving.e2e_latency:p99"
    assert ttft.sli == "serving.ttft:p95"
    # Alertmanager's fingerprint is the one computed from the labels
    assert all(a.fingerprint == fingerprint(a.labels) for a in got.alerts)
    # secrets are masked where they enter; control characters are kept for the boundary
    assert "hunter2secret" not in p99.description
    assert p99.summary.startswith("P99 above 400 ms")


def test_choosing_an_alertmanager_alert_fills_the_incident(
    clean_env: Path,
    alertmanager_server: AlertmanagerServer,
    am_alerts: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ctx = _am_ctx(clean_env, alertmanager_server, monkeypatch, alert=am_alerts["p99"])
    assert ctx.session is not None
    inc = ctx.session.incident
    assert inc.title.startswith(f"{am_alerts['p99']}: P99 above 400 ms")
    assert (inc.service.namespace, inc.service.deployment) == ("llm", "vllm-qwen")
    assert ctx.metrics.picked == (am_alerts["pod"], "pod")
    starts = datetime.fromisoformat(am_alerts["p99_starts"].replace("Z", "+00:00"))
    assert inc.times.detect == starts
    assert inc.paged_by is not None and inc.paged_by.sli == "serving.e2e_latency:p99"
    assert any(e.text == f"ALERT {am_alerts['p99']}" for e in inc.timeline)
    ctx.session.store.release_all()
    silenced = _am_ctx(clean_env, alertmanager_server, monkeypatch, alert=am_alerts["ttft"])
    assert silenced.session is not None
    paged = silenced.session.incident.paged_by
    assert paged is not None and paged.silenced
    assert paged.silences == ["oncall: known: canary rollback running"]
    silenced.session.store.release_all()


@pytest.fixture
def am_env(
    clean_env: Path,
    alertmanager_server: AlertmanagerServer,
    am_alerts: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> dict[str, str]:
    """The alerts of :func:`am_alerts` posted, and the Alertmanager configured."""
    monkeypatch.setenv("COCKPIT_ALERTMANAGER__URL", alertmanager_server.url)
    return am_alerts


def test_alerts_command_on_alertmanager_marks_and_neutralises(
    am_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    am_alerts = am_env
    assert main(["alerts", "-n", "llm", "--lang", "en"]) == 0
    text = capsys.readouterr().out
    assert "\x1b" not in text and "\\x1b]52" in text
    ttft_line = next(line for line in text.splitlines() if am_alerts["ttft"] in line)
    assert "silenced (oncall: known: canary rollback running)" in ttft_line
    gpu_line = next(line for line in text.splitlines() if am_alerts["gpu"] in line)
    assert "inhibited by 1 alert" in gpu_line
    assert "hunter2secret" not in text
    # Alertmanager alone keeps no resolved alert: the list says it holds firing ones only
    assert "firing alerts only: Alertmanager's API keeps no resolved alert" in text
    assert main(["alerts", "-n", "llm", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["resolved_from"] == "" and {a["state"] for a in doc["alerts"]} == {"firing"}


def test_alertmanager_with_prometheus_lists_the_resolved_alerts_from_alerts(
    am_env: dict[str, str], prom_with_rules: PromServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """With a Prometheus configured beside Alertmanager, the alerts resolved inside the
    window come from ``ALERTS`` (Alertmanager's API returns none), after the firing ones."""
    later = str(we.NOW + 3 * 3600)
    argv = ["alerts", "--prometheus-url", prom_with_rules.url, "-n", we.NAMESPACE]
    assert main([*argv, "--at", later, "--since", "4h", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["source"] == "alertmanager" and doc["resolved_from"] == "prometheus"
    resolved = [a for a in doc["alerts"] if a["state"] == "resolved"]
    assert {a["name"] for a in resolved} == {"VLLMHighP99Latency", "GPUThermalThrottling"}
    assert all(a["source"] == "prometheus" and a["ends_at"] for a in resolved)
    firing = {a["name"] for a in doc["alerts"] if a["state"] == "firing"}
    assert am_env["p99"] in firing and not doc["failures"]
    assert main([*argv, "--at", later, "--since", "4h", "--lang", "en"]) == 0
    assert "firing alerts only" not in capsys.readouterr().out


def test_alertmanager_failures_are_reported_not_hidden(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from cockpit.scenarios.promserver import free_port

    monkeypatch.setenv("COCKPIT_ALERTMANAGER__URL", f"http://127.0.0.1:{free_port()}")
    assert main(["alerts", "--json"]) == 2
    doc = json.loads(capsys.readouterr().out)
    assert doc["alerts"] == [] and {f["detail"]["what"] for f in doc["failures"]} >= {
        "alerts",
        "silences",
    }
    assert all(f["kind"] == "unavailable" for f in doc["failures"])


def test_alertmanager_answers_are_read_defensively() -> None:
    raw = [
        {"labels": "not a dict"},
        {"labels": {"alertname": "A", "api_token": "s3cr3t-value"}, "status": None},
        {"labels": {"alertname": "B"}, "startsAt": "0001-01-01T00:00:00Z", "fingerprint": 7},
        *[{"labels": {"alertname": f"N{i}"}} for i in range(600)],
    ]
    got = from_alertmanager(raw, [{"id": 3}, "x"])  # type: ignore[list-item]
    assert len(got) == 499  # MAX_ALERTS entries read, the malformed one skipped
    a = next(x for x in got if x.name == "A")
    assert "s3cr3t-value" not in a.labels["api_token"]
    b = next(x for x in got if x.name == "B")
    assert b.starts_at is None and b.fingerprint == fingerprint({"alertname": "B"})


def test_alertmanager_uses_the_prometheus_auth_options_and_bounds(
    clean_env: Path,
    alertmanager_server: AlertmanagerServer,
    am_alerts: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The bearer token file and custom headers of ``[alertmanager]`` are sent as for
    Prometheus; an answer over ``max_response_mb`` and a server error are failures by
    name, never a partial list."""
    token = clean_env / "am-token"
    token.write_text("am-secret-token\n", encoding="utf-8")
    with FaultProxy(alertmanager_server.url) as proxy:
        (clean_env / "config.toml").write_text(
            f'[alertmanager]\nurl = "{proxy.url}"\nbearer_token_file = "{token}"\n'
            '[alertmanager.headers]\nX-Scope-OrgID = "team-llm"\n',
            encoding="utf-8",
        )
        ctx = build_context(build_parser(light=True).parse_args(["-n", "llm"]))
        got = _collect(ctx)
        assert got.read and any(a.name == am_alerts["p99"] for a in got.alerts)
        sent = [r for r in proxy.log if r.path.startswith("/api/v2/")]
        assert {r.path for r in sent} == {"/api/v2/alerts", "/api/v2/silences"}
        assert all(r.method == "GET" for r in sent)
        assert all(r.headers.get("authorization") == "Bearer am-secret-token" for r in sent)
        assert all(r.headers.get("x-scope-orgid") == "team-llm" for r in sent)
        proxy.add(Fault(path="/api/v2/alerts", status=503))
        failed = _collect(build_context(build_parser(light=True).parse_args(["-n", "llm"])))
        assert not failed.read and failed.alerts == []
        (what,) = [f for f in failed.failures if f.detail.get("what") == "alerts"]
        assert what.source == "alertmanager" and what.kind.value == "unavailable"
        proxy.clear()
    monkeypatch.setenv("COCKPIT_ALERTMANAGER__URL", alertmanager_server.url)
    monkeypatch.setenv("COCKPIT_ALERTMANAGER__MAX_RESPONSE_MB", "0.0005")
    (clean_env / "config.toml").write_text("", encoding="utf-8")
    small = _collect(build_context(build_parser(light=True).parse_args(["-n", "llm"])))
    (too_big,) = [f for f in small.failures if f.detail.get("what") == "alerts"]
    assert too_big.kind.value == "bad_data" and "alertmanager.max_response_mb" in too_big.message
    assert "alertmanager.max_response_mb" in too_big.hint_in("zh")


def test_doctor_says_where_the_alerts_come_from(
    am_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    main(["doctor", "--json", "-n", "llm"])
    by = {s["name"]: s for s in json.loads(capsys.readouterr().out)["sections"]}
    assert by["alerts"]["status"] == "ok"
    assert by["alerts"]["summary"].startswith("Alertmanager 0.")
    assert "silenced or inhibited" in by["alerts"]["lines"][0]
    from cockpit.scenarios.promserver import free_port

    monkeypatch.setenv("COCKPIT_ALERTMANAGER__URL", f"http://127.0.0.1:{free_port()}")
    assert main(["doctor", "--json"]) == 1
    by = {s["name"]: s for s in json.loads(capsys.readouterr().out)["sections"]}
    assert by["alerts"]["status"] == "fail"
    monkeypatch.delenv("COCKPIT_ALERTMANAGER__URL")
    main(["doctor", "--json"])
    by = {s["name"]: s for s in json.loads(capsys.readouterr().out)["sections"]}
    assert by["alerts"]["status"] == "absent" and "no alert source" in by["alerts"]["summary"]


def test_record_then_replay_lists_the_same_alerts(
    clean_env: Path, prom_with_rules: PromServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """``cockpit record`` keeps the alert reads (``ALERTS``, its activation times and the
    rules); ``--replay`` lists the same alerts and ``--alert`` starts from one offline."""
    bundle = clean_env / "rec.jsonl.gz"
    at = f"{we.NOW}"
    rec = ["record", "-o", str(bundle), "--prometheus-url", prom_with_rules.url]
    assert main([*rec, "-n", we.NAMESPACE, "--at", at, "--window", "1h", "--plan", "alerts"]) == 0
    capsys.readouterr()
    assert main(["alerts", "--prometheus-url", prom_with_rules.url, "--at", at, "--json"]) == 0
    live = json.loads(capsys.readouterr().out)
    assert main(["alerts", "--replay", str(bundle), "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["alerts"] == live["alerts"] and not replayed["failures"]
    args = build_parser(light=True).parse_args(["--replay", str(bundle)])
    args.alert = "VLLMHighP99Latency"
    ctx = build_context(args)
    assert ctx.session is not None and ctx.session.incident.paged_by is not None
    assert ctx.session.incident.paged_by.sli == "serving.e2e_latency:p99"
    assert ctx.session.incident.times.detect == _firing("VLLMHighP99Latency")
    ctx.session.store.release_all()


def test_alertmanager_answers_are_recorded_and_replayed(
    am_env: dict[str, str], clean_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = clean_env / "am.jsonl.gz"
    assert main(["record", "-o", str(bundle), "-n", "llm", "--plan", "alerts"]) == 0
    capsys.readouterr()
    assert main(["alerts", "--replay", str(bundle), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["source"] == "alertmanager"
    ttft = next(a for a in doc["alerts"] if a["name"] == am_env["ttft"])
    assert ttft["silences"] == ["oncall: known: canary rollback running"]


def test_without_a_rule_the_expression_and_sli_are_unknown_not_none(
    clean_env: Path, worked_example_prom: PromServer, capsys: pytest.CaptureFixture[str]
) -> None:
    at = str(worked_example_prom.scenario.now)
    assert main(["alerts", "--prometheus-url", worked_example_prom.url, "--at", at]) == 0
    text = capsys.readouterr().out
    assert "expression unknown (no alerting rule of that name was read)" in text
    assert "SLI unknown (no expression)" in text and "measures none" not in text


def test_a_firing_start_before_the_window_is_its_current_episodes_first_firing() -> None:
    """An alert firing since before the window read: the earlier read starts at its
    activation, its start is the first firing sample at or after that activation (an
    earlier episode of the same alert is not this one), and while unknown the picker
    says so instead of offering the pending time as a detection time."""
    from cockpit.analysis.paged import (
        PagedAlert,
        firing_lookback,
        with_firing_starts,
    )
    from cockpit.collect.paged import alert_line
    from cockpit.models import Sample, Series

    labels = {"alertname": "KubePodCrashLooping", "namespace": "llm", "pod": "p-0"}
    t0 = 1_800_000_000.0
    active, window_start = from_epoch(t0), from_epoch(t0 + 3600)
    alert = PagedAlert(
        name="KubePodCrashLooping",
        fingerprint=fingerprint(labels),
        state=AlertState.FIRING,
        source="prometheus",
        labels=labels,
        active_at=active,
    )
    pending = alert.model_copy(update={"state": AlertState.PENDING})
    assert alert.detected_at is None and pending.detected_at == active
    assert firing_lookback([alert, pending], window_start) == active
    assert firing_lookback([alert], active) is None  # activated inside the window
    line = alert_line(alert, "en")
    assert "firing since: unknown" in line and "pending since" in line
    assert "开始告警时间未知" in alert_line(alert, "zh")
    firing = Series(
        labels={**labels, "__name__": "ALERTS", "alertstate": "firing"},
        samples=[Sample(t0 - 600, 1.0), Sample(t0 + 900, 1.0), Sample(t0 + 915, 1.0)],
    )
    other = Series(
        labels={**labels, "pod": "p-1", "alertstate": "firing"}, samples=[Sample(t0 + 60, 1.0)]
    )
    (done, still) = with_firing_starts([alert, pending], [firing, other])
    assert done.starts_at == from_epoch(t0 + 900) and done.detected_at == done.starts_at
    assert still is pending  # a pending alert has not fired
    line = alert_line(done, "en")
    assert "firing since 2027-01-15 08:15:00Z" in line and "pending since" in line


def test_an_exporters_relabelled_workload_labels_name_the_scope() -> None:
    """dcgm-exporter scraped with ``honorLabels: false``: ``namespace``/``pod`` are the
    exporter's own pod, ``exported_namespace``/``exported_pod`` the workload's — the
    alert concerns the workload, and is kept for its namespace."""
    from cockpit.analysis.paged import scope_of
    from cockpit.collect.alerts import alert_in_scope

    labels = {
        "alertname": "GpuXidError",
        "namespace": "gpu-operator",
        "pod": "nvidia-dcgm-exporter-7x2kq",
        "exported_namespace": "llm",
        "exported_pod": "vllm-qwen-7d9f8c6b5-abcde",
        "Hostname": "gpu-node-3",
    }
    scope = scope_of(labels)
    assert (scope.namespace, scope.pod) == ("llm", "vllm-qwen-7d9f8c6b5-abcde")
    assert scope.deployment == "vllm-qwen" and scope.node == "gpu-node-3"
    assert alert_in_scope(labels, "llm") and not alert_in_scope(labels, "gpu-operator")
    plain = {"alertname": "KubePodCrashLooping", "namespace": "llm", "pod": "vllm-qwen-0"}
    assert scope_of(plain).namespace == "llm" and alert_in_scope(plain, "llm")


def test_the_notice_of_a_chosen_alert_says_only_what_it_filled() -> None:
    """An alert without an expression fills no SLI: the notice says so, with the words A's
    banner uses ("SLI unknown (no expression)"), instead of claiming the SLI was filled;
    an alert whose expression measures a golden signal says the SLI was filled."""
    from cockpit.analysis.paged import PagedAlert
    from cockpit.collect.paged import applied_notice, paged_record

    labels = {"alertname": "GpuTempHigh", "namespace": "llm", "pod": "p-0"}
    alert = PagedAlert(
        name="GpuTempHigh",
        fingerprint=fingerprint(labels),
        state=AlertState.FIRING,
        source="alertmanager",
        labels=labels,
        starts_at=datetime(2026, 12, 1, 6, 50, tzinfo=UTC),
    )
    banner = paged_record(alert).parts("en")
    notice = applied_notice(alert, "en")
    assert notice == (
        "filled from alert GpuTempHigh: scope, detection time, title; "
        "SLI not filled: SLI unknown (no expression)"
    )
    assert "SLI unknown (no expression)" in banner
    assert applied_notice(alert, "zh") == (
        "已从告警 GpuTempHigh 填入：范围、检测时间、标题；未填入 SLI：SLI 未知（没有表达式）"
    )
    paged = alert.model_copy(update={"sli": "serving.e2e_latency:p99", "starts_at": None})
    assert applied_notice(paged, "en") == "filled from alert GpuTempHigh: scope, SLI, title"
