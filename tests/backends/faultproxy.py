"""A small HTTP reverse proxy on 127.0.0.1 with per-path fault injection.

Put it in front of a real server (Prometheus, the local Kubernetes API server) to make
"slow / down / 4xx / 5xx / malformed / connection reset" real at the socket level::

    with FaultProxy("http://127.0.0.1:9090") as proxy:
        proxy.add(Fault(path="/api/v1/query_range", delay_s=2.0, times=1))
        proxy.add(Fault(path="/api/v1/query", status=503))
        proxy.add(Fault(mode="reset"))
        ... point the client at proxy.url ...

Faults are matched in the order added (path prefix, optionally the method); each fires
``times`` times (``None`` = forever), then requests pass through. The proxy runs its own
asyncio loop in a daemon thread, so it works from sync tests, async tests on any loop, and
benchmarks. Upstream requests go through ``http.client`` in a thread (chunked responses are
re-sent with a Content-Length; compression is not requested).

Modes: ``reset`` (TCP RST before any answer), ``close`` (close without answering),
``hang`` (accept and never answer), ``truncate`` (upstream body cut in half, valid HTTP),
``garbage`` (an HTML error page with status 200), ``empty`` (status 200, empty body),
``bad_length`` (Content-Length larger than the body, then close).
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import socket
import struct
import threading
import time
import urllib.parse
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from types import TracebackType

import pytest

MODES = ("reset", "close", "hang", "truncate", "garbage", "empty", "bad_length")


@dataclass
class Fault:
    """One injected fault.

    Attributes:
        path: Path prefix it applies to (``""`` = every path).
        method: HTTP method it applies to (``""`` = any).
        delay_s: Seconds to wait before answering (or before forwarding).
        status: Answer with this status instead of forwarding.
        body: Body of a ``status`` answer; default a Prometheus API error envelope.
        mode: One of :data:`MODES`.
        times: How many requests it affects; ``None`` = all.
        hits: Requests it affected so far.
        query: Only requests whose PromQL (``query`` parameter, URL or form) contains
            this text (``""`` = any).
    """

    path: str = ""
    method: str = ""
    query: str = ""
    delay_s: float = 0.0
    status: int | None = None
    body: bytes | str | None = None
    mode: str | None = None
    times: int | None = None
    hits: int = 0

    def __post_init__(self) -> None:
        if self.mode is not None and self.mode not in MODES:
            raise ValueError(f"unknown mode {self.mode!r}; one of {MODES}")


@dataclass
class Logged:
    """One request seen by the proxy."""

    method: str
    path: str
    query: str
    fault: Fault | None
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    at: float = field(default_factory=time.time)


def _reason(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Status"


def prometheus_error_body(status: int) -> bytes:
    """The error envelope Prometheus' API sends for ``status``."""
    etype = {400: "bad_data", 422: "execution", 503: "unavailable", 500: "internal"}.get(
        status, "internal"
    )
    return json.dumps(
        {"status": "error", "errorType": etype, "error": f"injected {status} by the fault proxy"}
    ).encode()


class FaultProxy:
    """Reverse proxy to ``upstream`` (``http://host:port``) with fault injection."""

    def __init__(self, upstream: str) -> None:
        u = urllib.parse.urlsplit(upstream)
        if u.scheme != "http" or not u.hostname:
            raise ValueError("upstream must be http://host:port")
        self.upstream_host = u.hostname
        self.upstream_port = u.port or 80
        self._faults: list[Fault] = []
        self._lock = threading.Lock()
        self.log: list[Logged] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._answering: dict[int, Callable[[], None]] = {}
        self._generation = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.AbstractServer | None = None
        self._thread: threading.Thread | None = None
        self.port = 0
        # Enough threads that the proxy itself never queues a client's concurrent queries
        # (the default executor has cpu+4 threads: 6 on a 2-core box).
        self._pool = ThreadPoolExecutor(max_workers=128, thread_name_prefix="fault-proxy-fwd")

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` of the proxy."""
        return f"http://127.0.0.1:{self.port}"

    # -- control ----------------------------------------------------------------------

    def add(self, fault: Fault | None = None, **kw: object) -> Fault:
        """Add a fault (or build one from keyword arguments); returns it."""
        f = fault if fault is not None else Fault(**kw)  # type: ignore[arg-type]
        with self._lock:
            self._faults.append(f)
        return f

    def clear(self) -> None:
        """Remove every fault and forget the request log; requests still held by an
        earlier fault (``hang``, a long delay) no longer count as in flight."""
        with self._lock:
            self._faults.clear()
            self.log.clear()
            self.max_in_flight = 0
            self.in_flight = 0
            self._generation += 1

    def _match(self, method: str, path: str, promql: str = "") -> Fault | None:
        with self._lock:
            for f in self._faults:
                if f.times is not None and f.hits >= f.times:
                    continue
                if f.method and f.method.upper() != method.upper():
                    continue
                if f.query and f.query not in promql:
                    continue
                if path.startswith(f.path):
                    f.hits += 1
                    return f
        return None

    # -- lifecycle --------------------------------------------------------------------

    def start(self) -> FaultProxy:
        """Start listening on a free port of 127.0.0.1 (returns when ready)."""
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)

            async def boot() -> None:
                self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
                self.port = self._server.sockets[0].getsockname()[1]
                ready.set()

            loop.run_until_complete(boot())
            loop.run_forever()
            loop.close()

        self._thread = threading.Thread(target=run, name="fault-proxy", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("fault proxy did not start")
        return self

    def stop(self) -> None:
        """Stop the proxy and its thread."""
        loop = self._loop
        if loop is None:
            return

        async def shutdown() -> None:
            if self._server is not None:
                self._server.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        with contextlib.suppress(RuntimeError):
            asyncio.run_coroutine_threadsafe(shutdown(), loop).result(5)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(5)
        self._loop = None

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- serving ----------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, target, _ = lines[0].split(" ", 2)
                headers: dict[str, str] = {}
                for line in lines[1:]:
                    if ":" in line:
                        k, v = line.split(":", 1)
                        headers[k.strip().lower()] = v.strip()
                length = int(headers.get("content-length", "0") or 0)
                body = await reader.readexactly(length) if length else b""
                split = urllib.parse.urlsplit(target)
                form = urllib.parse.parse_qs(split.query)
                if headers.get("content-type", "").startswith("application/x-www-form"):
                    form.update(urllib.parse.parse_qs(body.decode("utf-8", "replace")))
                fault = self._match(method, split.path, " ".join(form.get("query", [])))
                self.log.append(Logged(method, split.path, split.query, fault, headers, body))
                generation = self._generation
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)

                # A request is in flight until its answer starts (writer.write), not until
                # this handler returns: the client may send its next request the moment
                # it has the answer, before the handler gets to run again.
                def start_answer(
                    answered: list[bool] = [False],  # noqa: B006
                    generation: int = generation,
                ) -> None:
                    if not answered[0]:
                        answered[0] = True
                        if generation == self._generation:
                            self.in_flight -= 1

                self._answering[id(writer)] = start_answer
                try:
                    keep = await self._answer(writer, method, target, headers, body, fault)
                finally:
                    start_answer()
                    self._answering.pop(id(writer), None)
                if not keep or headers.get("connection", "").lower() == "close":
                    break
        except (
            asyncio.IncompleteReadError,
            ConnectionError,
            asyncio.LimitOverrunError,
            ValueError,
        ):
            pass
        except asyncio.CancelledError:
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def _answer(
        self,
        writer: asyncio.StreamWriter,
        method: str,
        target: str,
        headers: dict[str, str],
        body: bytes,
        fault: Fault | None,
    ) -> bool:
        if fault is not None and fault.delay_s:
            await asyncio.sleep(fault.delay_s)
        mode = fault.mode if fault is not None else None
        if mode == "hang":
            await asyncio.sleep(3600)
            return False
        if mode == "reset":
            sock = writer.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
            return False
        if mode == "close":
            writer.close()
            return False
        if fault is not None and fault.status is not None:
            payload = fault.body if fault.body is not None else prometheus_error_body(fault.status)
            data = payload.encode() if isinstance(payload, str) else payload
            await self._send(writer, fault.status, "application/json", data)
            return True
        if mode == "garbage":
            await self._send(
                writer, 200, "text/html", b"<html><body><h1>502 Bad Gateway</h1></body></html>"
            )
            return True
        if mode == "empty":
            await self._send(writer, 200, "application/json", b"")
            return True
        status, ctype, data = await asyncio.get_running_loop().run_in_executor(
            self._pool, self._forward, method, target, headers, body
        )
        if mode == "truncate":
            data = data[: max(1, len(data) // 2)]
        if mode == "bad_length":
            head = f"HTTP/1.1 {status} {_reason(status)}\r\nContent-Type: {ctype}\r\nContent-Length: {len(data) + 1000}\r\n\r\n"
            self._answering.get(id(writer), lambda: None)()
            writer.write(head.encode() + data)
            await writer.drain()
            return False
        await self._send(writer, status, ctype, data)
        return True

    def _forward(
        self, method: str, target: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, str, bytes]:
        conn = http.client.HTTPConnection(self.upstream_host, self.upstream_port, timeout=120)
        try:
            fwd = {
                k: v
                for k, v in headers.items()
                if k
                not in ("host", "connection", "accept-encoding", "content-length", "keep-alive")
            }
            conn.request(method, target, body=body or None, headers=fwd)
            resp = conn.getresponse()
            return (
                resp.status,
                resp.getheader("Content-Type", "application/octet-stream"),
                resp.read(),
            )
        except OSError as exc:
            return 502, "text/plain", f"fault proxy: upstream failed: {exc}".encode()
        finally:
            conn.close()

    async def _send(
        self, writer: asyncio.StreamWriter, status: int, ctype: str, data: bytes
    ) -> None:
        self._answering.get(id(writer), lambda: None)()
        head = (
            f"HTTP/1.1 {status} {_reason(status)}\r\nContent-Type: {ctype}\r\n"
            f"Content-Length: {len(data)}\r\nConnection: keep-alive\r\n\r\n"
        )
        writer.write(head.encode() + data)
        await writer.drain()


def closed_port_url() -> str:
    """``http://127.0.0.1:PORT`` where nothing listens (connection refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def fault_proxy_factory() -> object:
    """``make(upstream_url) -> FaultProxy`` (started); every proxy stops after the test."""
    made: list[FaultProxy] = []

    def make(upstream: str) -> FaultProxy:
        proxy = FaultProxy(upstream).start()
        made.append(proxy)
        return proxy

    yield make
    for p in made:
        p.stop()
