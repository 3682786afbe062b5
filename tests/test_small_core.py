from datetime import UTC, datetime, timedelta

import pytest

from cockpit.analysis.mitigations import first_for, mitigations
from cockpit.analysis.recovery import Direction, RecoverySignal, check_recovery
from cockpit.incident import ServiceScope
from cockpit.models import Reading, Sample, Series
from cockpit.timeparse import TimeParseError, parse_duration, parse_time

NOW = datetime(2026, 11, 29, 21, 0, tzinfo=UTC)


def test_parse_time_forms():
    assert parse_time("now", NOW) == NOW
    assert parse_time("-15m", NOW) == NOW - timedelta(minutes=15)
    assert parse_time("20:40", NOW) == NOW.replace(hour=20, minute=40)
    assert parse_time("23:10", NOW) == (NOW - timedelta(days=1)).replace(hour=23, minute=10)
    assert parse_time("2026-11-29T20:40:00+08:00", NOW) == datetime(
        2026, 11, 29, 12, 40, tzinfo=UTC
    )
    assert parse_time("2026-11-29 20:40", NOW) == datetime(2026, 11, 29, 20, 40, tzinfo=UTC)
    for bad in ("", "25:00", "yesterday", "-5x"):
        with pytest.raises(TimeParseError):
            parse_time(bad, NOW)
    assert parse_time("1795784100", NOW) == datetime.fromtimestamp(1795784100, tz=UTC)
    assert parse_duration("2h") == timedelta(hours=2)
    assert parse_duration("1w") == timedelta(days=7)
    with pytest.raises(ValueError):
        parse_duration("2 hours")


def test_reading_never_turns_missing_into_zero():
    assert not Reading.known(float("nan")).ok
    assert Reading.known(float("nan")).reason
    assert Reading.unknown("no series").value is None
    assert Reading.known(0.0).ok and Reading.known(0.0).value == 0.0


def test_mitigations_fill_scope_and_flag_placeholders():
    opts = {
        m.key: m
        for m in mitigations(ServiceScope(namespace="llm", deployment="vllm"), incident_id="inc-1")
    }
    assert next(iter(opts)) == "record"
    assert "kubectl -n llm rollout undo deployment/vllm" in opts["rollback"].commands
    assert opts["rollback"].placeholders == []
    assert opts["isolate_node"].placeholders == ["NODE"]
    assert "cockpit record -o incident-inc-1.jsonl.gz --window 2h" in opts["record"].commands
    # global-rate-limit is gone from ingress-nginx v1.12: offered for older ones only
    rate = opts["rate_limit"].commands
    assert (
        rate[1].startswith("# ingress-nginx before v1.12 only") and "global-rate-limit" in rate[2]
    )
    # the comment lines are in the UI's language, the commands themselves never change
    zh = {m.key: m for m in mitigations(ServiceScope(namespace="llm"), lang="zh")}
    assert zh["rate_limit"].commands[1].startswith("# 仅 ingress-nginx v1.12 之前的版本")
    en = {m.key: m for m in mitigations(ServiceScope(namespace="llm"))}
    assert zh["rate_limit"].commands[2:] == en["rate_limit"].commands[2:]
    # Nothing is guessed: an unknown deployment stays a placeholder.
    bare = {m.key: m for m in mitigations(ServiceScope())}
    assert "DEPLOYMENT" in bare["pause_rollout"].placeholders
    # Shell-quoted values cannot inject a second command.
    evil = {m.key: m for m in mitigations(ServiceScope(namespace="a; rm -rf /", deployment="d"))}
    assert "'a; rm -rf /'" in evil["rollback"].commands[1]
    # Scale out and delete a crash-looping pod are offered; a suspect fills them and the
    # option that matches it comes first.
    assert opts["scale_out"].placeholders == ["REPLICAS"]
    assert opts["delete_pod"].placeholders == ["POD", "NODE"]
    first = mitigations(
        ServiceScope(namespace="llm", deployment="vllm"),
        node="gpu-node-b",
        pod="vllm-5d-x2x4z",
        first=first_for("gpu"),
        pod_restarted=True,
    )
    assert [m.key for m in first][:2] == ["delete_pod", "record"]
    # the crashed container's log is saved before the pod that holds it is deleted
    assert first[0].commands == [
        "kubectl -n llm logs vllm-5d-x2x4z --previous --all-containers --timestamps "
        "> vllm-5d-x2x4z-previous.log",
        "kubectl cordon gpu-node-b",
        "kubectl -n llm delete pod vllm-5d-x2x4z",
    ]
    assert first[0].placeholders == []
    # a pod that never restarted has no previous container: its running log is saved
    # (kubectl refuses --previous); unknown, both, the second under a comment saying when

    def logs(restarted: bool | None, lang: str = "en") -> list[str]:
        opts = mitigations(
            ServiceScope(namespace="llm"), pod="p", pod_restarted=restarted, lang=lang
        )
        return [
            c
            for c in dict((m.key, m.commands) for m in opts)["delete_pod"]
            if "logs" in c or c.startswith("#")
        ]

    assert logs(False) == ["kubectl -n llm logs p --all-containers --timestamps > p.log"]
    unknown = logs(None)
    assert unknown[0] == logs(False)[0] and "--previous" in unknown[2]
    assert unknown[1].startswith("# only if the pod restarted")
    assert logs(None, "zh")[1].startswith("# pod 重启过时")
    assert first_for("revision") == "rollback" and first_for("service") == "scale_out"


def test_the_record_command_reads_what_the_session_reads(monkeypatch):
    """The copied `cockpit record` command, parsed by cockpit's own command line, points
    at the same Prometheus, service, cluster and time as the session it came from; the URL's
    user, password, query and fragment (where tokens ride) are not written into it."""
    import shlex

    from cockpit.analysis.mitigations import record_flags
    from cockpit.cli import build_parser
    from cockpit.wiring import settings_from_args

    monkeypatch.setenv("COCKPIT_CONFIG", "/nonexistent/config.toml")
    flags = record_flags(
        prometheus_url="https://ops:s3cret@prom.example:9090/prefix?token=t0k&y=2#f",
        namespace="llm serving",
        deployment="vllm-qwen",
        selector="app=vllm",  # the deployment wins; a selector is not added beside it
        model="qwen2.5-72b",
        context="prod gpu",
        kubeconfig="/etc/kube/config",
        at="2026-11-27T12:55:00Z",
    )
    scope = ServiceScope(namespace="llm serving", deployment="vllm-qwen")
    opts = {m.key: m for m in mitigations(scope, incident_id="inc-1", record_flags=flags)}
    argv = shlex.split(opts["record"].commands[0])
    assert argv[:2] == ["cockpit", "record"]
    args = build_parser(only="record").parse_args(argv[1:])
    got = settings_from_args(args)
    assert got.prometheus.url == "https://prom.example:9090/prefix"
    command = opts["record"].commands[0]
    assert "s3cret" not in command and "t0k" not in command and "ops:" not in command
    assert (got.service.namespace, got.service.deployment, got.service.selector) == (
        "llm serving",
        "vllm-qwen",
        "",
    )
    assert got.service.model == "qwen2.5-72b"
    assert got.kubernetes.context == "prod gpu" and str(got.kubernetes.kubeconfig) == (
        "/etc/kube/config"
    )
    assert args.at == "2026-11-27T12:55:00Z" and args.window == "2h"
    # in a replay the evidence is the bundle: it is copied, not recorded from nothing
    replay = {m.key: m for m in mitigations(scope, incident_id="inc-1", bundle_path="/b/x y.gz")}
    assert replay["record"].commands[0] == "cp '/b/x y.gz' incident-inc-1.jsonl.gz"


def _series(values, step=60, end=NOW):
    n = len(values)
    return Series(
        samples=[Sample(t=end.timestamp() - (n - 1 - i) * step, v=v) for i, v in enumerate(values)]
    )


def test_recovery_needs_every_signal_in_band_for_the_hold():
    p99 = RecoverySignal(
        name="P99", unit="ms", baseline=180, series=_series([620] * 10 + [190] * 20)
    )
    qps = RecoverySignal(
        name="QPS",
        unit="req/s",
        baseline=1200,
        direction=Direction.LOWER_IS_WORSE,
        series=_series([900] * 10 + [1150] * 20),
    )
    res = check_recovery([p99, qps], NOW, hold_minutes=15)
    assert res.recovered is True
    assert res.recovered_at == NOW - timedelta(minutes=19)
    res = check_recovery([p99, qps], NOW, hold_minutes=25)
    assert res.recovered is False
    assert [line.status.value for line in res.lines] == ["not_recovered", "not_recovered"]


def test_recovery_without_data_is_not_healthy():
    empty = RecoverySignal(name="errors", baseline=0.002, series=Series())
    ok = RecoverySignal(name="P99", baseline=180, series=_series([170] * 30))
    res = check_recovery([empty, ok], NOW)
    assert res.recovered is None and res.recovered_at is None
    assert res.lines[0].status.value == "no_data"
    assert (
        check_recovery(
            [RecoverySignal(name="x", baseline=None, series=_series([1] * 30))], NOW
        ).recovered
        is None
    )


def test_a_signal_bad_both_ways_is_checked_on_the_side_it_left():
    """Running requests fell to ×0.42 (the engine serves less): a lower bound, not 'under
    the upper bound, recovered'."""
    from cockpit.analysis.golden import summarize
    from cockpit.analysis.recovery import Direction
    from cockpit.collect.recovery import signals_from_golden

    now = [_series([96.0] * 10 + [40.0] * 20)]
    base = [_series([96.0] * 30)]
    row = summarize("serving.running:value", "serving.running", "value", "req", now, base)
    [sig] = signals_from_golden([row])
    assert sig.direction is Direction.LOWER_IS_WORSE
    res = check_recovery([sig], NOW, hold_minutes=15)
    assert res.recovered is False and res.lines[0].limit < 96


def test_detected_stacks_are_named_as_their_exporters_call_themselves():
    from cockpit.analysis.profiles import profile_names

    assert profile_names(["dcgm", "ingress_nginx", "kube_state_metrics", "vllm"]) == (
        "dcgm-exporter, ingress-nginx, kube-state-metrics, vLLM"
    )
    assert profile_names(["my_stack"]) == "my_stack" and profile_names([]) == "-"
