"""A Prometheus-compatible HTTP server whose every query answer is huge (``MB`` MiB of a
valid JSON matrix, streamed without a length), for the memory tests: run as
``python huge_prometheus.py MB [--names-ok]`` it prints its port and serves until killed;
with ``--names-ok`` the metric names answer normally, so that every query is asked."""

from __future__ import annotations

import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SERIES = (
    b'{"metric":{"__name__":"vllm:num_requests_running","pod":"vllm-0"},'
    b'"values":[[1700000000,"1"],[1700000015,"1"],[1700000030,"1"]]},'
)


class Huge(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # no length: the body ends when the connection closes
    size = 300 * 2**20
    names_ok = False

    def do_GET(self) -> None:
        if self.names_ok and "/label/" in self.path:
            self._small()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        block = SERIES * (2**20 // len(SERIES))
        try:
            self.wfile.write(b'{"status":"success","data":{"resultType":"matrix","result":[')
            sent = 0
            while sent < self.size:
                self.wfile.write(block)
                sent += len(block)
            self.wfile.write(SERIES[:-1] + b"]}}")
        except (BrokenPipeError, ConnectionResetError):
            pass

    do_POST = do_GET

    def _small(self) -> None:
        """Metric names and metadata answer normally, so that detection finds vLLM and
        every query is asked."""
        body = (
            b'{"status":"success","data":["vllm:num_requests_running",'
            b'"vllm:e2e_request_latency_seconds_bucket","vllm:num_requests_waiting"]}'
        )
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def main() -> None:
    Huge.size = int(float(sys.argv[1]) * 2**20)
    Huge.names_ok = "--names-ok" in sys.argv[2:]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Huge)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
