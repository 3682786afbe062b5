"""The bench's latency injectors (the C relay and the asyncio one): bytes arrive intact,
in order, and no earlier than the delay; answers come back without it."""

from __future__ import annotations

import asyncio
import shutil
import time
import urllib.parse
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import pytest

from tests.backends.tcpdelay import TcpDelayProcess, serve

Relay = Callable[[int, float], AbstractAsyncContextManager[int]]


@asynccontextmanager
async def _asyncio_relay(port: int, delay_s: float) -> AsyncIterator[int]:
    proxy = await serve("127.0.0.1", port, delay_s)
    try:
        yield proxy.sockets[0].getsockname()[1]
    finally:
        proxy.close()


@asynccontextmanager
async def _process_relay(port: int, delay_s: float) -> AsyncIterator[int]:
    relay = TcpDelayProcess("127.0.0.1", port, delay_s)
    url = relay.__enter__()
    try:
        assert relay.implementation.startswith("C")
        yield urllib.parse.urlsplit(url).port or 0
    finally:
        relay.__exit__(None, None, None)


RELAYS = [
    pytest.param(_asyncio_relay, id="asyncio"),
    pytest.param(
        _process_relay,
        id="c",
        marks=pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc"),
    ),
]


@pytest.mark.parametrize("relay", RELAYS)
async def test_delays_what_the_client_sends_and_keeps_order(relay: Relay) -> None:
    got: list[tuple[float, bytes]] = []

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(65536):
            got.append((time.monotonic(), data))
            writer.write(data.upper())
            await writer.drain()
        writer.close()

    upstream = await asyncio.start_server(echo, "127.0.0.1", 0)
    port = upstream.sockets[0].getsockname()[1]
    async with relay(port, 0.2) as proxy_port:
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy_port)
        sent = time.monotonic()
        chunks = [bytes([65 + i % 26]) * 1000 + b"." for i in range(50)]
        for c in chunks:
            writer.write(c.lower())
        writer.write_eof()
        answer = await asyncio.wait_for(reader.read(), 30)
        back = time.monotonic()
        writer.close()
    upstream.close()
    assert answer == b"".join(chunks)
    assert b"".join(d for _, d in got) == b"".join(chunks).lower()
    assert got[0][0] - sent >= 0.19
    # One delay in all (answers are not delayed again), far from one delay per chunk (50
    # chunks: 10 s); half of that leaves room for a machine busy with other work.
    assert back - sent < 0.2 * 25
