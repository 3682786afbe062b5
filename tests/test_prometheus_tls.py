"""PrometheusSource over real TLS (a relay with a throw-away CA in front of the worked
example's Prometheus): verification against prometheus.ca_file, the system store,
prometheus.insecure, and the hint a failed verification gets."""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from cockpit.config import PrometheusSettings
from cockpit.scenarios.promserver import PromServer
from cockpit.sources.base import ErrorKind, SourceError
from cockpit.sources.prometheus import PrometheusSource
from tests.backends.tlsrelay import TlsRelay


@pytest.fixture
def relay(worked_example_prom: PromServer, tmp_path: Path) -> Iterator[TlsRelay]:
    u = urllib.parse.urlsplit(worked_example_prom.url)
    assert u.hostname and u.port
    with TlsRelay(u.hostname, u.port, tmp_path) as r:
        yield r


async def _ask(settings: PrometheusSettings, worked_example_prom: PromServer) -> float:
    src = PrometheusSource(settings)
    try:
        got = await src.instant("vector(42)", worked_example_prom.scenario.now_dt)
    finally:
        await src.close()
    return got[0].v


async def test_verified_with_the_configured_ca(
    relay: TlsRelay, worked_example_prom: PromServer
) -> None:
    settings = PrometheusSettings(url=relay.url, ca_file=relay.ca_file)
    assert await _ask(settings, worked_example_prom) == 42


async def test_unknown_ca_is_refused_with_the_tls_hint(
    relay: TlsRelay, worked_example_prom: PromServer
) -> None:
    with pytest.raises(SourceError) as info:
        await _ask(PrometheusSettings(url=relay.url), worked_example_prom)
    f = info.value.failure
    assert f.kind is ErrorKind.UNAVAILABLE
    assert f.hint_key == "hint.prom.tls" and "ca_file" in f.hint
    assert "CA" in f.hint_in("zh") and "校验" in f.hint_in("zh")


async def test_insecure_skips_verification(
    relay: TlsRelay, worked_example_prom: PromServer
) -> None:
    assert await _ask(PrometheusSettings(url=relay.url, insecure=True), worked_example_prom) == 42


async def test_a_ca_file_that_is_not_pem_is_a_configuration_error(
    relay: TlsRelay, worked_example_prom: PromServer, tmp_path: Path
) -> None:
    bad = tmp_path / "not-a-ca.pem"
    bad.write_text("hello")
    with pytest.raises(SourceError) as info:
        await _ask(PrometheusSettings(url=relay.url, ca_file=bad), worked_example_prom)
    assert info.value.kind is ErrorKind.NOT_CONFIGURED
    assert info.value.failure.hint_key == "hint.prom.ca_file"


async def test_https_to_a_plain_http_server_says_so(worked_example_prom: PromServer) -> None:
    url = worked_example_prom.url.replace("http://", "https://")
    for insecure in (False, True):
        with pytest.raises(SourceError) as info:
            await _ask(PrometheusSettings(url=url, insecure=insecure), worked_example_prom)
        assert info.value.failure.hint_key == "hint.prom.not_tls"
        assert "http://" in info.value.failure.hint


async def test_common_connection_mistakes_get_their_own_hint(
    worked_example_prom: PromServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    cases = {
        "http://no-such-host.invalid:9090": "hint.prom.dns",
        "127.0.0.1:9090": "hint.prom.scheme",
        "ftp://127.0.0.1:9090": "hint.prom.scheme",
    }
    for url, key in cases.items():
        with pytest.raises(SourceError) as info:
            await _ask(PrometheusSettings(url=url), worked_example_prom)
        assert info.value.failure.hint_key == key, (url, info.value.failure)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:1")
    with pytest.raises(SourceError) as info:
        await _ask(PrometheusSettings(url="http://prometheus.invalid:9090"), worked_example_prom)
    f = info.value.failure
    assert f.hint_key == "hint.prom.proxy" and "127.0.0.1:1" in f.hint_in("zh")
