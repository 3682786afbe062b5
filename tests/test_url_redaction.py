"""A Prometheus URL or proxy carrying credentials (``user:password@``, ``?token=``) is shown,
written and suggested only as :func:`cockpit.redact.public_url` gives it: in the client's
errors and hints, ``cockpit record``'s output and bundle, F2's command, resume notices."""

from __future__ import annotations

import argparse
import asyncio
import gzip
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cockpit.analysis.mitigations import record_flags
from cockpit.cli import main
from cockpit.config import PrometheusSettings
from cockpit.redact import public_url
from cockpit.sources.base import SourceError
from cockpit.sources.prometheus import PrometheusSource
from cockpit.wiring import build_context

SECRETS = ("alice", "s3cret", "abc123", "puser", "ppass")
URL = "http://alice:s3cret@127.0.0.1:9/prom?token=abc123#frag"
"""A closed port: every call fails, so every error path names the URL."""


def assert_clean(text: str, where: str) -> None:
    found = [s for s in SECRETS if s in text]
    assert not found, f"{where}: {found} in {text[:2000]}"


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for key in list(os.environ):
        if key.startswith("COCKPIT_") or key.lower().endswith("_proxy"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("COCKPIT_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("COCKPIT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    return tmp_path


def test_public_url_drops_userinfo_query_and_fragment() -> None:
    assert public_url(URL) == "http://127.0.0.1:9/prom"
    assert public_url("https://u:p@[::1]:9090/x?a=b") == "https://[::1]:9090/x"
    assert public_url("https://u:p@h:notaport/x?token=t") == "https://h:notaport"
    assert public_url("prod-context") == "prod-context"
    assert public_url("") == ""


def test_the_client_names_the_url_and_the_proxy_without_their_secrets(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = PrometheusSettings(url=URL, timeout_s=3)
    # The client keeps what it needs to authenticate; what it shows is the bare URL.
    assert settings.username == "alice" and "s3cret" not in settings.url
    direct = PrometheusSource(settings)
    monkeypatch.setenv("HTTP_PROXY", "http://puser:ppass@127.0.0.1:9")
    via_proxy = PrometheusSource(PrometheusSettings(url="http://prom.invalid:9090/?token=abc123"))

    async def fail(src: PrometheusSource) -> SourceError:
        try:
            await src.instant("up", datetime.now(UTC))
        except SourceError as exc:
            return exc
        finally:
            await src.close()
        raise AssertionError("a closed port answered")

    for src, key in ((direct, "hint.prom.connect"), (via_proxy, "hint.prom.proxy")):
        failure = asyncio.run(fail(src)).failure
        assert failure.hint_key == key, failure
        for lang in ("en", "zh"):
            assert_clean(f"{failure.model_dump_json()}\n{failure.hint_in(lang)}", key)
        assert "127.0.0.1:9" in failure.hint_in("en")


def test_record_prints_and_writes_no_credentials(
    clean_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = clean_env / "rec.jsonl.gz"
    for lang in ("en", "zh"):
        bundle.unlink(missing_ok=True)
        code = main(
            ["--lang", lang, "record", "--prometheus-url", URL, "-n", "llm", "--deployment",
             "vllm", "-o", str(bundle), "--window", "30m"]
        )  # fmt: skip
        out = capsys.readouterr()
        assert code in (0, 1, 2), out.err[-800:]
        assert "127.0.0.1:9" in out.out + out.err
        assert_clean(out.out + out.err, f"record output ({lang})")
        assert bundle.is_file()
        assert_clean(gzip.decompress(bundle.read_bytes()).decode("utf-8", "replace"), "bundle")


def test_f2_command_and_resume_notices_carry_no_credentials(clean_env: Path) -> None:
    flags = " ".join(record_flags(prometheus_url=URL, namespace="llm"))
    assert flags == "--prometheus-url http://127.0.0.1:9/prom -n llm"

    first = build_context(
        argparse.Namespace(lang="en", at="2026-11-29T15:00", prometheus_url="http://saved:9090")
    )
    assert first.session is not None
    incident_id = first.session.incident.id
    first.session.store.release_all()
    later = build_context(
        argparse.Namespace(
            resume=incident_id,
            prometheus_url="http://puser:ppass@other:9090/?token=abc123",
        )
    )
    assert later.session is not None
    later.session.store.release_all()
    notices = [w for w in later.warnings if "--prometheus-url" in w]
    assert notices and "--prometheus-url http://other:9090" in notices[0]
    for line in later.warnings:
        assert_clean(line, "resume notice")
