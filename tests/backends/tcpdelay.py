"""Network latency at the TCP level: a proxy process that only delays bytes.

Each chunk a client sends is written to the upstream ``delay_s`` after it arrived (order
kept, nothing parsed); answers flow back at once — one-way latency, as ``tc netem`` adds
on a link. It runs in its own process and does no HTTP work, so a benchmark's client does
not share its interpreter or much CPU with the latency it measures against::

    with TcpDelayProcess("127.0.0.1", 9090, 0.25) as url:
        ... point the client at url ...

``python -m tests.backends.tcpdelay HOST PORT DELAY_S`` prints ``http://127.0.0.1:PORT``
and serves until its standard input closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import time
from pathlib import Path

CHUNK = 65536


async def _delayed_pipe(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay_s: float
) -> None:
    queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def drain() -> None:
        while True:
            due, data = await queue.get()
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            if not data:
                with contextlib.suppress(OSError):
                    writer.write_eof()
                return
            writer.write(data)
            await writer.drain()

    task = asyncio.create_task(drain())
    try:
        while True:
            data = await reader.read(CHUNK)
            await queue.put((time.monotonic() + delay_s, data))
            if not data:
                break
        await task
    finally:
        task.cancel()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while data := await reader.read(CHUNK):
        writer.write(data)
        await writer.drain()
    with contextlib.suppress(OSError):
        writer.write_eof()


async def serve(host: str, port: int, delay_s: float) -> asyncio.AbstractServer:
    """Listen on a free port of 127.0.0.1, relaying to ``host:port`` with the delay."""

    async def handle(c_reader: asyncio.StreamReader, c_writer: asyncio.StreamWriter) -> None:
        try:
            u_reader, u_writer = await asyncio.open_connection(host, port)
        except OSError:
            c_writer.close()
            return
        try:
            await asyncio.gather(
                _delayed_pipe(c_reader, u_writer, delay_s), _pipe(u_reader, c_writer)
            )
        except (OSError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            u_writer.close()
            c_writer.close()

    return await asyncio.start_server(handle, "127.0.0.1", 0)


class TcpDelayProcess:
    """Run the delay proxy in a child process; the context value is its URL."""

    def __init__(self, host: str, port: int, delay_s: float) -> None:
        self.args = [host, str(port), f"{delay_s}"]
        self._proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> str:
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "tests.backends.tcpdelay", *self.args],
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
