"""A real Prometheus serving a hand-written OpenMetrics history (backfilled with promtool),
for tests that need a few exact series rather than a whole generated scenario."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve_openmetrics(text: str, root: Path) -> Iterator[str]:
    """Backfill ``text`` (OpenMetrics, seconds timestamps, ``# EOF``) and serve it on
    127.0.0.1; yields the URL and stops the server on exit.

    Raises:
        RuntimeError: promtool failed or the server did not become ready in 30 s.
    """
    root.mkdir(parents=True, exist_ok=True)
    src = root / "history.om"
    src.write_text(text, encoding="utf-8")
    data = root / "data"
    subprocess.run(
        ["promtool", "tsdb", "create-blocks-from", "openmetrics", str(src), str(data)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    cfg = root / "prometheus.yml"
    cfg.write_text("global:\n  scrape_interval: 1h\nscrape_configs: []\n", encoding="utf-8")
    port = _free_port()
    with (root / "prometheus.log").open("w") as log:
        proc = subprocess.Popen(
            [
                "prometheus",
                f"--config.file={cfg}",
                f"--storage.tsdb.path={data}",
                "--storage.tsdb.retention.time=100y",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    if httpx.get(url + "/-/ready", timeout=1.0).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"prometheus did not start: {(root / 'prometheus.log').read_text()}"
                    )
                time.sleep(0.1)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
