"""A TLS-terminating relay for tests: HTTPS in front of a plain-HTTP server, with a
throw-away CA and server certificate made by the ``openssl`` command line tool::

    with TlsRelay("127.0.0.1", prom_port, tmp_path) as relay:
        relay.url      # https://127.0.0.1:PORT
        relay.ca_file  # the CA that signed the server certificate
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import subprocess
import threading
from pathlib import Path


def make_certificates(workdir: Path, host: str = "127.0.0.1") -> tuple[Path, Path, Path]:
    """A CA and a server certificate for ``host`` signed by it: ``(ca, cert, key)``."""
    ca_key, ca = workdir / "ca.key", workdir / "ca.pem"
    key, csr, cert = workdir / "server.key", workdir / "server.csr", workdir / "server.pem"
    ext = workdir / "server.ext"
    ext.write_text(
        f"subjectAltName=IP:{host}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
    )
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    ca_cmd = ["req", "-x509", *ec, "-keyout", ca_key, "-out", ca, "-days", "2"]
    csr_cmd = ["req", *ec, "-keyout", key, "-out", csr, "-subj", f"/CN={host}"]
    sign_cmd = ["x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial"]
    for cmd in (
        [*ca_cmd, "-subj", "/CN=cockpit test CA"],
        csr_cmd,
        [*sign_cmd, "-out", cert, "-days", "2", "-extfile", ext],
    ):
        subprocess.run(["openssl", *map(str, cmd)], check=True, capture_output=True, timeout=60)
    return ca, cert, key


class TlsRelay:
    """HTTPS on a free port of 127.0.0.1, relayed byte for byte to ``host:port``."""

    def __init__(self, host: str, port: int, workdir: Path) -> None:
        self.host, self.port = host, port
        self.ca_file, cert, key = make_certificates(workdir)
        self._ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self._ctx.load_cert_chain(cert, key)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self.url = ""

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, ssl.SSLError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            u_reader, u_writer = await asyncio.open_connection(self.host, self.port)
        except OSError:
            writer.close()
            return
        await asyncio.gather(self._pipe(reader, u_writer), self._pipe(u_reader, writer))

    def __enter__(self) -> TlsRelay:
        self._thread.start()
        server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._handle, "127.0.0.1", 0, ssl=self._ctx), self._loop
        ).result(10)
        self._server = server
        self.url = f"https://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._server.close)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
