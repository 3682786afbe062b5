"""The bench's latency injector: bytes arrive intact, in order, and no earlier than the
delay; answers come back without it."""

from __future__ import annotations

import asyncio
import time

from tests.backends.tcpdelay import serve


async def test_delays_what_the_client_sends_and_keeps_order() -> None:
    got: list[tuple[float, bytes]] = []

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(65536):
            got.append((time.monotonic(), data))
            writer.write(data.upper())
            await writer.drain()
        writer.close()

    upstream = await asyncio.start_server(echo, "127.0.0.1", 0)
    port = upstream.sockets[0].getsockname()[1]
    proxy = await serve("127.0.0.1", port, 0.2)
    proxy_port = proxy.sockets[0].getsockname()[1]
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy_port)
        sent = time.monotonic()
        chunks = [bytes([65 + i % 26]) * 1000 + b"." for i in range(50)]
        for c in chunks:
            writer.write(c.lower())
        writer.write_eof()
        answer = await asyncio.wait_for(reader.read(), 5)
        back = time.monotonic()
        writer.close()
    finally:
        proxy.close()
        upstream.close()
    assert answer == b"".join(chunks)
    assert b"".join(d for _, d in got) == b"".join(chunks).lower()
    assert got[0][0] - sent >= 0.19
    # One delay in all (answers are not delayed again), far from one delay per chunk.
    assert back - sent < 0.2 * 5
