"""A real Alertmanager (Debian's ``prometheus-alertmanager``) for the suite.

``alertmanager_server`` starts one per test session on a free port with its own
configuration (one receiver that sends nowhere, one inhibition rule: a firing
``NodeDown`` inhibits the ``warning`` alerts of its node), clustering off and its data in
a temporary directory. Tests post alerts (``POST /api/v2/alerts``) and silences
(``POST /api/v2/silences``) to it as Prometheus and people would, with
:meth:`AlertmanagerServer.post_alerts` and :meth:`AlertmanagerServer.silence`.
A missing binary fails loudly: ``make test`` installs it (tools/ensure-system-deps.sh).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from cockpit.scenarios.promserver import free_port, stop_process

BINARY = "prometheus-alertmanager"
READY_TIMEOUT_S = 30.0

CONFIG = """\
route:
  receiver: nowhere
  group_wait: 1h
  group_interval: 1h
  repeat_interval: 24h
receivers:
  - name: nowhere
inhibit_rules:
  - source_matchers: ['alertname="NodeDown"']
    target_matchers: ['severity="warning"']
    equal: [node]
"""


def iso(at: datetime) -> str:
    """RFC 3339 with milliseconds, as Prometheus sends alert times."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


@dataclass
class AlertmanagerServer:
    """A running Alertmanager (``url`` is ``http://127.0.0.1:PORT``)."""

    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(
            self.url + path,
            data=data,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            raw = resp.read()
        return json.loads(raw) if raw else None

    def post_alerts(self, alerts: list[dict[str, Any]]) -> None:
        """``POST /api/v2/alerts`` (each: ``labels``, ``annotations``, ``startsAt``,
        ``endsAt``, ``generatorURL``), as Prometheus's notifier sends them."""
        self._call("POST", "/api/v2/alerts", alerts)

    def silence(self, matchers: dict[str, str], comment: str, created_by: str = "oncall") -> str:
        """Silence the alerts matching ``matchers`` (equality) for an hour; returns its id."""
        now = datetime.now(UTC)
        body = {
            "matchers": [
                {"name": k, "value": v, "isRegex": False, "isEqual": True}
                for k, v in matchers.items()
            ],
            "startsAt": iso(now - timedelta(minutes=1)),
            "endsAt": iso(now + timedelta(hours=1)),
            "createdBy": created_by,
            "comment": comment,
        }
        return str(self._call("POST", "/api/v2/silences", body)["silenceID"])

    def alerts(self) -> list[dict[str, Any]]:
        """``GET /api/v2/alerts`` as it answers."""
        return list(self._call("GET", "/api/v2/alerts"))

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 10 s."""
        stop_process(self.process)


def start_alertmanager(workdir: Path) -> AlertmanagerServer:
    """Start Alertmanager under ``workdir`` and wait for ``/-/ready``."""
    binary = shutil.which(BINARY)
    if binary is None:
        raise RuntimeError(f"{BINARY} is not installed (Debian package prometheus-alertmanager)")
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "alertmanager.yml"
    config.write_text(CONFIG, encoding="utf-8")
    log = workdir / "alertmanager.log"
    port = free_port()
    with log.open("wb") as logf:
        proc = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.path={workdir / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--cluster.listen-address=",
                "--log.level=warn",
            ],
            stdout=logf,
            stderr=subprocess.STDOUT,
        )
    server = AlertmanagerServer(f"http://127.0.0.1:{port}", proc, log)
    t0 = time.monotonic()
    while time.monotonic() - t0 < READY_TIMEOUT_S:
        if proc.poll() is not None:
            break
        try:
            with urllib.request.urlopen(f"{server.url}/-/ready", timeout=2) as resp:
                if resp.status == 200:
                    return server
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.05)
    server.stop()
    raise RuntimeError(
        f"alertmanager did not become ready: {log.read_text(errors='replace')[-2000:]}"
    )


@pytest.fixture(scope="session")
def alertmanager_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AlertmanagerServer]:
    """A real Alertmanager for the session (alerts posted by the tests stay in it)."""
    server = start_alertmanager(tmp_path_factory.mktemp("alertmanager"))
    yield server
    server.stop()
