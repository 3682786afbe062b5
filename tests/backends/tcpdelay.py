"""Network latency at the TCP level: a proxy process that only delays bytes.

Each chunk a client sends is written to the upstream ``delay_s`` after it arrived (order
kept, nothing parsed); answers flow back at once — one-way latency, as ``tc netem`` adds
on a link. It runs in its own process and does no HTTP work, so a benchmark's client does
not share its interpreter or much CPU with the latency it measures against. Two relays do
the same thing: ``tcpdelay.c`` (epoll, built with gcc, used when it builds) and the
asyncio one below::

    with TcpDelayProcess("127.0.0.1", 9090, 0.25) as url:
        ... point the client at url ...

``python -m tests.backends.tcpdelay HOST PORT DELAY_S`` prints ``http://127.0.0.1:PORT``
and serves until its standard input closes.
"""

from __future__ import annotations

import asyncio
import collections
import subprocess
import sys
from pathlib import Path


class _Answers(asyncio.Protocol):
    """The upstream side: what the server sends goes back to the client at once."""

    def __init__(self, client: _Delayed) -> None:
        self.client = client

    def data_received(self, data: bytes) -> None:
        if self.client.transport is not None:
            self.client.transport.write(data)

    def eof_received(self) -> bool:
        if self.client.transport is not None and self.client.transport.can_write_eof():
            self.client.transport.write_eof()
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        if self.client.transport is not None:
            self.client.transport.close()


class _Delayed(asyncio.Protocol):
    """The client side: each chunk (and the end of the stream) reaches the server
    ``delay_s`` after it arrived, in order."""

    def __init__(self, host: str, port: int, delay_s: float) -> None:
        self.host, self.port, self.delay_s = host, port, delay_s
        self.transport: asyncio.Transport | None = None
        self.upstream: asyncio.Transport | None = None
        self.due: collections.deque[tuple[float, bytes | None]] = collections.deque()
        self.timer: asyncio.TimerHandle | None = None
        self.loop = asyncio.get_running_loop()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.loop.create_task(self._connect())

    async def _connect(self) -> None:
        try:
            upstream, _ = await self.loop.create_connection(
                lambda: _Answers(self), self.host, self.port
            )
        except OSError:
            if self.transport is not None:
                self.transport.close()
            return
        self.upstream = upstream
        self._flush()

    def data_received(self, data: bytes) -> None:
        self._queue(data)

    def eof_received(self) -> bool:
        self._queue(None)
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        self._queue(None)

    def _queue(self, data: bytes | None) -> None:
        self.due.append((self.loop.time() + self.delay_s, data))
        if self.timer is None:
            self.timer = self.loop.call_at(self.due[0][0], self._flush)

    def _flush(self) -> None:
        self.timer = None
        if self.upstream is None:
            return  # _connect flushes once the upstream connection is up
        now = self.loop.time()
        while self.due and self.due[0][0] <= now:
            _, data = self.due.popleft()
            if data is None:
                if self.upstream.can_write_eof():
                    self.upstream.write_eof()
                else:
                    self.upstream.close()
                self.due.clear()
                return
            self.upstream.write(data)
        if self.due:
            self.timer = self.loop.call_at(self.due[0][0], self._flush)


async def serve(host: str, port: int, delay_s: float) -> asyncio.Server:
    """Listen on a free port of 127.0.0.1, relaying to ``host:port`` with the delay.

    Built on asyncio protocols and timers (no tasks, queues or stream buffers per chunk):
    the proxy's own CPU per request is a small part of what it measures (bench_drilldown).
    """
    loop = asyncio.get_running_loop()
    return await loop.create_server(lambda: _Delayed(host, port, delay_s), "127.0.0.1", 0)


def build_relay(dest: Path) -> Path | None:
    """Compile ``tcpdelay.c`` into ``dest`` (once per source version); ``None`` without gcc."""
    import hashlib
    import shutil

    gcc = shutil.which("gcc")
    if gcc is None:
        return None
    src = Path(__file__).with_name("tcpdelay.c")
    digest = hashlib.sha256(src.read_bytes()).hexdigest()[:12]
    exe = dest / f"tcpdelay-{digest}"
    if not exe.exists():
        dest.mkdir(parents=True, exist_ok=True)
        tmp = exe.with_suffix(".tmp")
        subprocess.run([gcc, "-O2", "-o", str(tmp), str(src)], check=True, capture_output=True)
        tmp.replace(exe)
    return exe


class TcpDelayProcess:
    """Run the delay relay in a child process; the context value is its URL.

    The C relay (``tcpdelay.c``, built with gcc) is used when it can be built: it costs
    the host next to no CPU, as latency on a real link does not. Otherwise this module's
    asyncio relay runs instead (``implementation`` says which).
    """

    def __init__(self, host: str, port: int, delay_s: float) -> None:
        self.host, self.port, self.delay_s = host, port, delay_s
        self.implementation = ""
        self._proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> str:
        import tempfile

        exe = build_relay(Path(tempfile.gettempdir()) / "cockpit-bench")
        if exe is not None:
            self.implementation = "C (epoll)"
            cmd = [str(exe), self.host, str(self.port), str(round(self.delay_s * 1000))]
        else:
            self.implementation = "Python (asyncio)"
            cmd = [sys.executable, "-m", "tests.backends.tcpdelay"]
            cmd += [self.host, str(self.port), f"{self.delay_s}"]
        self._proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parents[2],
        )
        assert self._proc.stdout is not None
        url = self._proc.stdout.readline().strip()
        if not url.startswith("http://"):
            self._proc.kill()
            raise RuntimeError("the TCP delay proxy did not start")
        return url

    def __exit__(self, *exc: object) -> None:
        if self._proc is None:
            return
        assert self._proc.stdin is not None
        self._proc.stdin.close()
        try:
            self._proc.wait(10)
        except subprocess.TimeoutExpired:
            self._proc.kill()


async def _main(host: str, port: int, delay_s: float) -> None:
    server = await serve(host, port, delay_s)
    print(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)
    server.close()
    for task in asyncio.all_tasks():
        if task is not asyncio.current_task():
            task.cancel()


if __name__ == "__main__":
    asyncio.run(_main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3])))
