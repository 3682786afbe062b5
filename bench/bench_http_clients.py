"""Why the Prometheus client is aiohttp: its client-side cost per request against httpx.

A local HTTP/1.1 server (stdlib, in a child process so its work is not counted) answers
every GET with the same Prometheus ``/api/v1/query`` vector of 16 series. Each client
library, with one keep-alive connection pool, sends the same requests twice: one at a time
(latency) and 64 at once (a screen of panels refreshing together). Reported per request:
the client process's CPU time (what decides how many queries a refresh can afford on a
busy bastion) and the wall time, and the httpx/aiohttp ratio.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable

import aiohttp
import httpx

SEQUENTIAL = 400
CONCURRENT = 64
ROUNDS = 8

_SERVER = r"""
import json, socket, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
body = json.dumps({"status": "success", "data": {"resultType": "vector", "result": [
    {"metric": {"__name__": "vllm:num_requests_running", "pod": f"vllm-{i}"},
     "value": [1700000000.0, str(i * 1.5)]} for i in range(16)]}}).encode()
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def setup(self):
        super().setup()  # headers and body go out in two writes: no Nagle delay on them
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
srv.daemon_threads = True
print(srv.server_address[1], flush=True)
srv.serve_forever()
"""

Fetch = Callable[[str], Awaitable[int]]


async def _measure(fetch: Fetch) -> tuple[float, float, float, float]:
    """(CPU µs, wall µs) per request, sequential then concurrent."""
    q = "/api/v1/query?query=sum%20by%20(pod)%20(vllm:num_requests_running)"
    for _ in range(20):  # warm the pool
        await fetch(q)
    c0, w0 = time.process_time(), time.perf_counter()
    for _ in range(SEQUENTIAL):
        await fetch(q)
    c1, w1 = time.process_time(), time.perf_counter()
    for _ in range(ROUNDS):
        await asyncio.gather(*(fetch(q) for _ in range(CONCURRENT)))
    c2, w2 = time.process_time(), time.perf_counter()
    n2 = ROUNDS * CONCURRENT
    return (
        (c1 - c0) / SEQUENTIAL * 1e6,
        (w1 - w0) / SEQUENTIAL * 1e6,
        (c2 - c1) / n2 * 1e6,
        (w2 - w1) / n2 * 1e6,
    )


async def _aiohttp(base: str) -> tuple[float, float, float, float]:
    conn = aiohttp.TCPConnector(limit=CONCURRENT)
    async with aiohttp.ClientSession(base_url=base, connector=conn) as s:

        async def fetch(path: str) -> int:
            async with s.get(path) as r:
                return len(json.loads(await r.read())["data"]["result"])

        return await _measure(fetch)


async def _httpx(base: str) -> tuple[float, float, float, float]:
    limits = httpx.Limits(max_connections=CONCURRENT, max_keepalive_connections=CONCURRENT)
    async with httpx.AsyncClient(base_url=base, limits=limits) as c:

        async def fetch(path: str) -> int:
            r = await c.get(path)
            return len(json.loads(r.content)["data"]["result"])

        return await _measure(fetch)


def main() -> list[str]:
    proc = subprocess.Popen([sys.executable, "-c", _SERVER], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        base = f"http://127.0.0.1:{proc.stdout.readline().strip()}"
        a = asyncio.run(_aiohttp(base))
        h = asyncio.run(_httpx(base))
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    lines = [
        f"aiohttp {aiohttp.__version__} vs httpx {httpx.__version__}, client CPU and wall "
        "per request against a local server:",
    ]
    for label, i in (("one at a time", 0), (f"{CONCURRENT} at once", 2)):
        lines.append(
            f"{label}: CPU aiohttp {a[i]:.0f} µs vs httpx {h[i]:.0f} µs ({h[i] / a[i]:.2f}×), "
            f"wall {a[i + 1]:.0f} µs vs {h[i + 1]:.0f} µs ({h[i + 1] / a[i + 1]:.2f}×)"
        )
    return lines


if __name__ == "__main__":
    print("\n".join(main()))
