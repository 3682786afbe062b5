"""Secrets are masked where they enter: never on screen, in the incident, an export or a
bundle; credentials never follow a redirect to another server.

The planted-secret test plants a password in the Prometheus URL, a custom ``X-Api-Key``
header in the config, and (in the ``planted`` fixture cluster) a bearer token, basic
credentials, an API key in a termination message, Helm values and container args and env
with secrets; then it runs the commands, the TUI (step B with changes marked suspect, F2's
evidence command chosen), exports and records, and searches everything written.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from cockpit.cli import main
from cockpit.config import PrometheusSettings
from cockpit.redact import (
    MASK,
    mask,
    redact_args,
    redact_log,
    redact_text,
    redact_tree,
    secret_name,
    split_userinfo,
    token_count,
)
from cockpit.sources.prometheus import PrometheusSource
from tests.fixtures.kube.hostile import BASIC, PLANTED


# -- the rules --------------------------------------------------------------------------
def test_secret_names() -> None:
    for name in ("--api-key", "HF_TOKEN", "db.password", "apiKey", "AWS_SECRET_ACCESS_KEY"):
        assert secret_name(name), name
    for name in ("--max-tokens", "tokenizer", "--max-num-seqs", "image.tag", "monkey"):
        assert not secret_name(name), name


def test_token_counts_of_a_serving_log_are_evidence_not_secrets() -> None:
    """SGLang's scheduler line counts tokens under names holding "token": the counts stay,
    a credential under the same word (or any secret word with a number) is still masked."""
    line = (
        "Prefill batch. #new-seq: 1, #new-token: 8192, #cached-token: 0, "
        "token usage: 0.93, #running-req: 3, #queue-req: 96"
    )
    assert redact_text(line) == line
    assert redact_text("#token: 61234 token usage: 93%") == "#token: 61234 token usage: 93%"
    for secret in (
        "token=abc123xyz",
        "HF_TOKEN=hf_abcdefghijkl",
        "password: 1234",
        "api_key=12345",
    ):
        value = secret.replace(": ", "=").split("=", 1)[1]
        assert value not in redact_text(secret), secret
    assert not token_count("password", "1234") and token_count("#new-token", "8192")


def test_redact_text_args_and_values() -> None:
    text = (
        "GET https://u:pw1234@h/x Authorization: Bearer abcdefgh123 "
        "curl -H 'X-Api-Key: k-123456' token=s3cr3t max_tokens=512 Basic " + BASIC + " Basic block"
    )
    out = redact_text(text)
    for secret in ("pw1234", "abcdefgh123", "k-123456", "s3cr3t", BASIC, "dXNlcjpwYXNz"):
        assert secret not in out, secret
    assert "https://•••@h/x" in out and "max_tokens=512" in out and "Basic block" in out
    assert redact_text(out) == out
    assert redact_args(["--api-key", "a1", "--token=b2", "--max-tokens", "5"])[1:4] == [
        mask("a1"),
        f"--token={mask('b2')}",
        "--max-tokens",
    ]
    tree = redact_tree({"db": {"password": "p", "port": 5432}, "auth": {"user": "u"}, "n": 3})
    assert tree["db"]["password"].startswith(MASK) and tree["db"]["port"] == 5432
    assert tree["auth"]["user"].startswith(MASK) and tree["n"] == 3
    obj = {"kind": "Secret", "metadata": {"name": "s"}, "stringData": {"url": "x"}}
    tree = redact_tree({"extraObjects": [obj]})
    assert tree["extraObjects"][0]["stringData"]["url"].startswith(MASK)
    assert tree["extraObjects"][0]["metadata"]["name"] == "s"
    # One process compares masked copies of one secret equal, of two secrets unequal.
    assert mask("x") == mask("x") != mask("y")


def test_secrets_in_a_url_query_are_masked() -> None:
    """A pair inside another value (a URL's query after ``https:``, or ``url=…``) is
    still a pair: the value of the outer name is searched, not skipped whole."""
    lines = [
        "GET https://h/v1?token=abcdef123&model=m 200",
        "upstream url=http://a/b?api_key=SECRETVALUE&n=1",
        'proxy "https://gw/login?user=bob&password=hunter22" 302',
    ]
    for line, secret in zip(lines, ("abcdef123", "SECRETVALUE", "hunter22"), strict=True):
        out = redact_text(line)
        assert secret not in out and MASK in out, out
        assert redact_text(out) == out
        assert redact_log(line) == out
    assert "model=m" in redact_text(lines[0]) and "user=bob" in redact_text(lines[2])


def test_url_userinfo_becomes_basic_auth() -> None:
    assert split_userinfo("https://a:b%40c@h:9/p") == ("https://h:9/p", "a", "b@c")
    s = PrometheusSettings(url="https://sre:pw@prom:9090")
    assert s.url == "https://prom:9090" and s.username == "sre"
    assert s.password is not None and s.password.get_secret_value() == "pw"
    # A username set in the config wins; the URL's userinfo is dropped all the same.
    s = PrometheusSettings(url="https://x:y@prom", username="me")
    assert s.url == "https://prom" and s.username == "me" and s.password is None


# -- redirects --------------------------------------------------------------------------
class _Recorder(BaseHTTPRequestHandler):
    """Answers every request with an empty vector, or with a redirect when the server's
    ``redirect`` is set; records each request's path and headers."""

    def do_GET(self) -> None:
        srv: Any = self.server
        srv.seen.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
        target = srv.redirect(self.path) if srv.redirect else None
        if target:
            self.send_response(302)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = b'{"status":"success","data":{"resultType":"vector","result":[]}}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def servers() -> Iterator[tuple[Any, Any]]:
    """Two local HTTP servers (two origins: same host, other ports)."""
    out = []
    for _ in range(2):
        srv: Any = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
        srv.seen, srv.redirect = [], None
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        out.append(srv)
    yield out[0], out[1]
    for srv in out:
        srv.shutdown()
        srv.server_close()


async def test_credentials_never_follow_a_redirect_to_another_origin(
    servers: tuple[Any, Any],
) -> None:
    home, other = servers
    home_url = f"http://127.0.0.1:{home.server_address[1]}"
    other_url = f"http://127.0.0.1:{other.server_address[1]}"
    # /api/v1/query → /moved (same origin) → the other server.
    home.redirect = lambda path: (
        f"{home_url}/moved" if path.startswith("/api/") else f"{other_url}/api/v1/query"
    )
    src = PrometheusSource(
        PrometheusSettings(
            url=f"http://sre:pw@127.0.0.1:{home.server_address[1]}",
            headers={"X-Api-Key": "k-123", "X-Scope-OrgID": "tenant"},
        )
    )
    try:
        assert await src.instant("up", datetime(2026, 1, 1, tzinfo=UTC)) == []
    finally:
        await src.close()
    (_, h1), (moved, h2) = home.seen
    assert moved == "/moved"
    for headers in (h1, h2):  # the configured server gets them, every hop
        assert headers["x-api-key"] == "k-123" and headers["authorization"].startswith("Basic ")
    ((_, h3),) = other.seen
    assert "x-api-key" not in h3 and "x-scope-orgid" not in h3 and "authorization" not in h3


# -- the planted-secret test ------------------------------------------------------------
def _words() -> list[str]:
    return [*PLANTED.values(), BASIC]


def assert_no_secret(text: str, where: str) -> None:
    found = [w for w in _words() if w in text]
    assert not found, f"{where}: planted secrets {found} found"


@pytest.fixture
def planted_env(
    tmp_path: Path, kubeconfig: Path, worked_example_prom: Any, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    port = worked_example_prom.url.rsplit(":", 1)[1]
    url = f"http://sre:{PLANTED['url_password']}@127.0.0.1:{port}"
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        "[prometheus]\n"
        f'url = "{url}"\n'
        "[prometheus.headers]\n"
        f'X-Api-Key = "{PLANTED["api_key_header"]}"\n'
        "[kubernetes]\n"
        'context = "planted"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    monkeypatch.setenv("COCKPIT_CONFIG", str(cfg))
    monkeypatch.setenv("COCKPIT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    scope = worked_example_prom.scenario.scope
    return {
        "url": url,
        "closed": f"http://sre:{PLANTED['url_password']}@127.0.0.1:9",
        "at": worked_example_prom.scenario.now_dt.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "scope": ["-n", scope["namespace"], "-l", scope["selector"], "--model", scope["model"]],
        "state": tmp_path / "state",
    }


def test_planted_secrets_are_nowhere(
    planted_env: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    written: list[tuple[str, str]] = []

    def run(*argv: str, rc: tuple[int, ...] = (0, 1, 2)) -> str:
        code = main(["--lang", "en", *argv])
        out = capsys.readouterr()
        assert code in rc, (argv, code, out.err[-1500:])
        written.append((" ".join(argv), out.out + out.err))
        return out.out

    until = ["--until", "2026-03-10T12:30:00Z"]
    changes = run("changes", *until)
    assert f"values.db.password: {MASK} (changed)" in changes
    assert (
        f"--api-key: {MASK} (changed)" in changes and f"env HF_TOKEN: {MASK} (changed)" in changes
    )
    assert "https://•••@db.internal/" in changes  # the event message, masked
    run("changes", *until, "--json")
    run("doctor", "--timeout", "20")
    doctor = run("doctor", "--prometheus-url", planted_env["closed"], "--timeout", "5")
    assert "127.0.0.1:9" in doctor
    at = planted_env["at"]
    run("analyze", *planted_env["scope"], "--at", at)
    bundle = tmp_path / "planted.jsonl.gz"
    kube_scope = ["-n", "llm", "--deployment", "vllm"]
    run("record", "-o", str(bundle), *kube_scope, "--at", at, "--window", "30m")
    replay = ["--replay", str(bundle)]
    run(*replay, "analyze", "--window", "30m")
    assert f"{MASK} (changed)" in run(*replay, "changes", *kube_scope, *until)
    run("playbook", "bad_rollout", "-n", "llm", "--deployment", "vllm", "--at", at)

    # The TUI: step B with every change marked suspect, F2's evidence command chosen.
    from cockpit.app import CockpitApp
    from cockpit.ui.changes_view import ChangesView
    from cockpit.wiring import build_context

    args = argparse.Namespace(
        lang="en", namespace="llm", deployment="vllm", at="2026-03-10T12:30:00Z"
    )
    ctx = build_context(args)
    ctx.panels = []
    assert ctx.session is not None
    app = CockpitApp(ctx=ctx, start_step="B")

    async def walk() -> None:
        async with app.run_test(size=(160, 50)) as pilot:
            view = app.screen.query_one(ChangesView)
            for _ in range(100):
                if view.report is not None:
                    break
                await pilot.pause(0.05)
            assert view.report is not None
            for i, item in enumerate(view.items):
                if item.kind in ("rollout", "helm", "restart", "event"):
                    view.toggle_suspect(i)
            await pilot.pause()
            await pilot.press("f2")
            await pilot.pause()
            app.screen.query_one("#chosen-record").press()
            await pilot.pause()

    asyncio.run(walk())
    ctx.session.flush()
    ctx.session.stop()
    details = "\n".join(c.detail for c in ctx.session.incident.changes)
    assert f"db.password: {MASK} (changed)" in details and "--api-key" in details
    record_cmd = next(e.text for e in ctx.session.incident.timeline if "cockpit record" in e.text)
    assert "--prometheus-url http://127.0.0.1:" in record_cmd  # no userinfo in F2

    md = run("export", "latest")
    run("export", "latest", "--format", "json")
    exported = tmp_path / "export.md"
    run("export", "latest", "-o", str(exported))

    for where, text in written:
        assert_no_secret(text, f"output of {where}")
    for path in sorted(planted_env["state"].rglob("*")):
        if path.is_file():
            assert_no_secret(path.read_text(encoding="utf-8", errors="replace"), str(path))
    assert_no_secret(exported.read_text(encoding="utf-8"), "export -o")
    assert f"{MASK} (changed)" in md
    raw = gzip.decompress(bundle.read_bytes()).decode("utf-8", "replace")
    assert_no_secret(raw, "the bundle")
    decoded = "\n".join(json.dumps(json.loads(ln), ensure_ascii=False) for ln in raw.splitlines())
    assert "list_helm_releases" in decoded and MASK in decoded
    assert_no_secret(decoded, "the bundle (decoded)")
