"""Configuration precedence (flag > environment > file), --resume, and the doctor command."""

from __future__ import annotations

import argparse
import json

import pytest

from cockpit.cli import build_parser, main
from cockpit.wiring import BootError, build_context, settings_from_args


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    for key in list(__import__("os").environ):
        if key.startswith("COCKPIT_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("COCKPIT_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("COCKPIT_STATE_DIR", str(tmp_path / "state"))
    return tmp_path


def test_file_env_flag_precedence(clean_env, monkeypatch):
    (clean_env / "config.toml").write_text(
        'lang = "en"\n[prometheus]\nurl = "http://file:9090"\ntimeout_s = 7\n'
        '[service]\nnamespace = "from-file"\nmodel = "qwen"\n',
        encoding="utf-8",
    )
    args = build_parser().parse_args([])
    s = settings_from_args(args)
    assert (s.prometheus.url, s.prometheus.timeout_s, s.service.namespace, s.lang) == (
        "http://file:9090",
        7,
        "from-file",
        "en",
    )
    monkeypatch.setenv("COCKPIT_SERVICE__NAMESPACE", "from-env")
    monkeypatch.setenv("COCKPIT_PROMETHEUS__URL", "http://env:9090")
    s = settings_from_args(build_parser().parse_args([]))
    assert (s.service.namespace, s.prometheus.url, s.service.model) == (
        "from-env",
        "http://env:9090",
        "qwen",
    )
    s = settings_from_args(
        build_parser().parse_args(["-n", "from-flag", "--prometheus-url", "http://flag:9090"])
    )
    assert (s.service.namespace, s.prometheus.url, s.prometheus.timeout_s) == (
        "from-flag",
        "http://flag:9090",
        7,
    )
    assert s.prometheus.insecure is False


def test_bad_config_is_a_clear_boot_error(clean_env):
    (clean_env / "config.toml").write_text("[prometheus]\ntimeout_s = -3\n", encoding="utf-8")
    with pytest.raises(BootError) as exc:
        settings_from_args(build_parser().parse_args([]))
    assert "timeout_s" in str(exc.value)


def test_resume_reopens_the_latest_open_incident(clean_env):
    args = argparse.Namespace(namespace="llm", lang="en")
    first = build_context(args)
    first.session.set_text("impact", "half the tenants")
    first.session.visit("C")
    first.session.store.release_all()  # as when that process exits
    resumed = build_context(argparse.Namespace(resume="latest"))
    assert resumed.session.incident.id == first.session.incident.id
    assert resumed.session.incident.impact == "half the tenants"
    assert resumed.session.incident.current_step == "C"
    resumed.session.store.release_all()
    by_id = build_context(argparse.Namespace(resume=first.session.incident.id))
    assert by_id.session.incident.service.namespace == "llm"
    with pytest.raises(BootError):
        build_context(argparse.Namespace(resume="inc-doesnotexist"))


def test_resume_reopens_as_of_the_time_and_on_the_sources_it_was_opened_with(clean_env):
    from datetime import UTC, datetime

    opened_at = datetime(2026, 11, 29, 15, 0, tzinfo=UTC)
    url = "http://reader:s3cret@127.0.0.1:1/prom?token=abc#x"
    first = build_context(
        argparse.Namespace(lang="en", at="2026-11-29T15:00", prometheus_url=url, context="prod")
    )
    assert first.at == opened_at
    incident_id = first.session.incident.id
    first.session.store.release_all()
    saved = (clean_env / "state").rglob(f"{incident_id}*")
    text = "".join(p.read_text(encoding="utf-8") for p in saved if p.is_file())
    assert "127.0.0.1:1/prom" in text
    assert "s3cret" not in text and "reader" not in text and "abc" not in text

    resumed = build_context(argparse.Namespace(resume="latest"))
    assert resumed.session.incident.id == incident_id
    assert resumed.at == opened_at and resumed.clock.frozen
    assert resumed.clock.now() == opened_at
    assert resumed.settings.prometheus.url == "http://127.0.0.1:1/prom"
    assert resumed.settings.kubernetes.context == "prod"
    assert resumed.sources.metrics is not None
    assert not any("overrides" in w for w in resumed.warnings)
    # F2's `cockpit record …` records what the resumed incident shows.
    from cockpit.ui.protect import _record_flags

    flags = " ".join(_record_flags(resumed))
    assert "--at 2026-11-29T15:00:00Z" in flags
    assert "--prometheus-url http://127.0.0.1:1/prom" in flags and "--context prod" in flags
    resumed.session.store.release_all()

    # A flag given on resume overrides the saved value, and says so.
    later = build_context(
        argparse.Namespace(
            resume=incident_id, at="2026-11-29T16:30", prometheus_url="http://other:9090"
        )
    )
    assert later.at == datetime(2026, 11, 29, 16, 30, tzinfo=UTC)
    assert later.settings.prometheus.url == "http://other:9090"
    notices = [w for w in later.warnings if "overrides" in w]
    assert any("--at 2026-11-29T16:30" in w and "2026-11-29 15:00:00Z" in w for w in notices)
    assert any("--prometheus-url http://other:9090" in w for w in notices)
    # ... and the incident reopens next time as it was last investigated.
    later.session.store.release_all()
    again = build_context(argparse.Namespace(resume="latest"))
    assert again.at == datetime(2026, 11, 29, 16, 30, tzinfo=UTC)
    assert again.settings.prometheus.url == "http://other:9090"


def test_resume_of_a_live_incident_stays_live(clean_env):
    first = build_context(argparse.Namespace(lang="en"))
    assert first.session.incident.opened_with.at is None
    first.session.store.release_all()
    resumed = build_context(argparse.Namespace(resume="latest"))
    assert resumed.at is None and not resumed.clock.frozen


def test_doctor_without_sources_says_why(clean_env, capsys):
    rc = main(["doctor", "--json", "--lang", "en"])
    report = json.loads(capsys.readouterr().out)
    by = {s["name"]: s for s in report["sections"]}
    assert by["metrics"]["status"] == "absent" and "Prometheus URL" in by["metrics"]["summary"]
    assert by["state"]["status"] == "ok"
    # Other tests may have loaded the suite's fake libnvidia-ml into this process; either
    # way the GPU section says what it found.
    assert by["gpu"]["summary"]
    assert by["gpu"]["status"] != "absent" or "libnvidia-ml" in by["gpu"]["summary"]
    assert rc == (1 if by["gpu"]["status"] == "fail" else 0)


def test_doctor_on_the_demo_bundle_checks_what_was_recorded(clean_env, capsys):
    main(["doctor", "--demo", "--json", "--lang", "en"])
    report = json.loads(capsys.readouterr().out)
    metrics = next(s for s in report["sections"] if s["name"] == "metrics")
    assert metrics["status"] == "ok" and "replayed" in metrics["summary"]
    assert any("vllm" in line for line in metrics["lines"])
    # the recorded discovery: where each source keeps its labels, and the services
    assert "vLLM: workload labels in namespace/pod" in [x.strip() for x in metrics["lines"]]
    assert any(x.strip().startswith("vllm-qwen25-72b — vLLM, 4 pods") for x in metrics["lines"])
    # the allocator names are a convention, and said so
    assert any("is a convention, not a standard" in x for x in metrics["lines"])


def test_doctor_names_settings_it_does_not_read(clean_env, capsys):
    (clean_env / "config.toml").write_text(
        '[promethues]\nurl = "http://typo:9090"\n[prometheus]\nulr = "x"\ntimeout_s = 3\n'
        '[prometheus.headers]\nX-Scope-OrgID = "team-a"\n'
    )
    assert main(["doctor", "--demo", "--json", "--lang", "en"]) == 1
    report = json.loads(capsys.readouterr().out)
    config = next(s for s in report["sections"] if s["name"] == "config")
    assert config["status"] == "fail"
    named = [line for line in config["lines"] if "unknown setting" in line]
    assert len(named) == 2 and "promethues" in named[1] and "prometheus.ulr" in named[0]


def test_every_command_warns_about_settings_it_does_not_read(clean_env, capsys):
    """Not only doctor: a typo in the config file would silently leave a setting (the
    namespace) at its default, so every command says so on stderr; the TUI as notices."""
    (clean_env / "config.toml").write_text('[service]\nnamespce = "llm"\n')
    assert main(["analyze", "--demo", "--json", "--lang", "en"]) == 0
    err = capsys.readouterr().err
    assert "service.namespce in " in err and "is not a cockpit setting (a typo?)" in err
    assert main(["gpus", "--once", "--demo", "--lang", "zh"]) in (0, 1)
    assert "service.namespce" in capsys.readouterr().err
    (clean_env / "config.toml").unlink()
    assert main(["analyze", "--demo", "--json", "--lang", "en"]) == 0
    assert "COCKPIT_CONFIG names" in capsys.readouterr().err


def test_doctor_says_when_its_own_time_limit_ran_out(clean_env, capsys, prom_fault_proxy):
    from tests.backends.faultproxy import Fault

    prom_fault_proxy.add(Fault(mode="hang"))
    args = ["--prometheus-url", prom_fault_proxy.url, "--timeout", "0.5", "--json"]
    for lang, words in (("en", "did not finish within 0.5 s"), ("zh", "0.5 秒内没有完成")):
        assert main(["doctor", *args, "--lang", lang]) == 1
        report = json.loads(capsys.readouterr().out)
        metrics = next(s for s in report["sections"] if s["name"] == "metrics")
        assert metrics["status"] == "fail" and words in metrics["summary"]


def test_doctor_against_the_worked_example(clean_env, capsys, worked_example_prom):
    at = worked_example_prom.scenario.now_dt.isoformat()
    rc = main(["--at", at, "doctor", "--prometheus-url", worked_example_prom.url, "--lang", "en"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "✓ Prometheus: Prometheus-compatible" in out
    assert "vllm" in out and "dcgm" in out
    assert "no series of a known metric stack" not in out
    assert "request_id: absent" not in out and "request_id does not belong" in out
    # Now, long after the scenario's data ends: reachable, but nothing to analyse.
    rc = main(["doctor", "--prometheus-url", worked_example_prom.url, "--lang", "en"])
    out = capsys.readouterr().out
    assert "Detected metric stacks: -" in out
    assert "⚠ no series of a known metric stack in the hour before now" in out


def test_doctor_reports_an_unreachable_prometheus(clean_env, capsys):
    rc = main(["doctor", "--prometheus-url", "http://127.0.0.1:9", "--json"])
    report = json.loads(capsys.readouterr().out)
    metrics = next(s for s in report["sections"] if s["name"] == "metrics")
    assert metrics["status"] == "fail" and "unavailable" in metrics["summary"]
    assert rc == 1


def test_resume_reopens_a_demo_incident_on_the_demo_bundle(clean_env):
    first = build_context(argparse.Namespace(demo=True, lang="en"))
    first.session.set_text("impact", "demo impact")
    first.session.store.release_all()
    resumed = build_context(argparse.Namespace(resume="latest"))
    assert resumed.mode == "demo"
    assert resumed.sources.metrics is not None
    assert resumed.clock.frozen and resumed.clock.now() == first.clock.now()
    assert resumed.session.incident.impact == "demo impact"


def test_resume_of_a_replay_whose_bundle_is_gone_says_so(clean_env, tmp_path):
    import shutil

    from cockpit.wiring import demo_bundle_path

    bundle = tmp_path / "evidence.jsonl.gz"
    shutil.copy(demo_bundle_path(), bundle)
    first = build_context(argparse.Namespace(replay=str(bundle)))
    assert first.session.incident.bundle == str(bundle.resolve())
    first.session.store.release_all()
    bundle.unlink()
    with pytest.raises(BootError) as exc:
        build_context(argparse.Namespace(resume="latest"))
    assert "no longer there" in str(exc.value)


def test_config_errors_name_the_file_and_the_field(clean_env):
    (clean_env / "config.toml").write_text('lang = "fr"\n', encoding="utf-8")
    with pytest.raises(BootError) as exc:
        settings_from_args(build_parser().parse_args([]))
    assert "config.toml" in str(exc.value) and "lang" in str(exc.value)
    assert "errors.pydantic.dev" not in str(exc.value)
    with pytest.raises(BootError) as exc:
        settings_from_args(build_parser().parse_args(["--config", str(clean_env / "nope.toml")]))
    assert "no such file" in str(exc.value)


def test_an_unwritable_state_dir_stops_the_start(clean_env, tmp_path):
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(BootError) as exc:
        build_context(
            argparse.Namespace(state_dir=str(tmp_path / "a-file" / "state")), background=True
        )
    assert "cannot save incidents" in str(exc.value)


def test_doctor_on_an_unreadable_config_exits_2_like_every_command(clean_env, capsys):
    (clean_env / "config.toml").write_text("lang = [unclosed\n")
    assert main(["doctor", "--json", "--lang", "en"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "config" in captured.err
