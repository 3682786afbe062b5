"""Serving front-end pastes: admission backpressure, and client-side benchmarks whose
own concurrency cap shows up as TTFT (pure, no I/O).

* Backpressure: TGI rejects a request above ``--max-concurrent-requests`` (default 128)
  with ``429 Too Many Requests`` and ``{"error":"Model is overloaded",
  "error_type":"overloaded"}`` (TGI ``router/src/server.rs``; text-generation-inference
  #439, case serve-01); Triton answers ``Exceeds maximum queue size`` when a model's
  ``dynamic_batching.default_queue_policy.max_queue_size`` is full; SGLang
  ``--max-queued-requests`` and other front-ends answer ``queue is full`` / 503. These are
  deliberate load shedding, not crashes.
* Client-side TTFT: a benchmark run with a concurrency cap (vLLM ``benchmark_serving``
  ``--max-concurrency`` → ``Maximum request concurrency: N``; genai-perf
  ``--concurrency``) while the server's own queue stays empty (vLLM ``Waiting: 0 reqs``,
  SGLang ``#queue-req: 0``): time spent waiting for a client slot is counted as time to
  first token (formats.md §C6, "client-side artifact: server Waiting = 0").
"""

from __future__ import annotations

import re

from pydantic import Field

from cockpit.analysis.context_facts import Fact, LineKeeper, ReportTail
from cockpit.analysis.engine_args import EngineArgs, update_engine_args
from cockpit.analysis.logtext import Gated, clip, has_keyword, to_float, to_int

KEYWORDS = (
    "overloaded",
    "too many requests",
    " 429",
    "queue size",
    "queue is full",
    "queue full",
    "backpressure",
    "concurren",
    "ttft",
    "time to first token",
    "waiting:",
    "pending:",
    "queue-req",
    "clients",
    "text_generation",
    "text-generation",
    "args {",
    "vllm",
    "sglang",
    "triton",
)

_REJECT = Gated(
    re.compile(
        r"Model is overloaded|\"error_type\"\s*:\s*\"overloaded\"|429 Too Many Requests|"
        r"Exceeds maximum queue size|(?:request )?queue is full|BackPressureError",
        re.IGNORECASE,
    ),
    (
        "overloaded",
        "too many requests",
        "exceeds maximum queue size",
        "queue is full",
        "backpressureerror",
    ),
)
_STATUS = Gated(re.compile(r"\b(429|503)\b"), ("429", "503"))
_OFFERED = Gated(
    re.compile(
        r"(\d{1,6})\s+concurrent (?:clients|users|requests|connections)|"
        r"(?:--)?(?:concurrency|num[-_]clients|users)[ =:]+(\d{1,6})\b",
        re.IGNORECASE,
    ),
    ("concurren", "num-clients", "num_clients", "users"),
)
_CLIENT_CAP = Gated(
    re.compile(
        r"Maximum request concurrency:\s*(\d+)|--max-concurrency[ =](\d+)|"
        r"--concurrency[ =](\d+)",
        re.IGNORECASE,
    ),
    ("concurrency",),
)
_TTFT = Gated(
    re.compile(
        r"(Mean|Median|P\d{2}(?:\.\d)?) TTFT \(ms\):\s*(\d+(?:\.\d+)?)|"
        r"time.to.first.token[^\d]{0,20}(\d+(?:\.\d+)?)\s*(ms|s)\b",
        re.IGNORECASE,
    ),
    ("ttft", "first"),
)
_SERVER_WAITING = re.compile(r"(?:Waiting|Pending): (\d+) reqs|#queue-req: (\d+)")
_SERVER_RUNNING = re.compile(r"Running: (\d+) reqs|#running-req: (\d+)")
_ENGINES = (
    (
        Gated(
            re.compile(r"text_generation|text-generation|Model is overloaded", re.I),
            ("text_generation", "text-generation", "model is overloaded"),
        ),
        "tgi",
    ),
    (
        Gated(
            re.compile(r"Exceeds maximum queue size|tritonserver|triton", re.I),
            ("exceeds maximum queue size", "triton"),
        ),
        "triton",
    ),
    (Gated(re.compile(r"sglang|#queue-req", re.I), ("sglang", "#queue-req")), "sglang"),
    (
        Gated(
            re.compile(r"vllm|Engine 000|Maximum request concurrency", re.I),
            ("vllm", "engine 000", "maximum request concurrency"),
        ),
        "vllm",
    ),
)
# TGI's --max-concurrent-requests default (TGI launcher docs).
TGI_DEFAULT_MAX_CONCURRENT = 128


class ServingReport(ReportTail):
    """What the serving analyzer concluded.

    ``cause``: ``admission_backpressure`` (requests rejected above the server's admission
    limit; ``category`` ``other``) or ``client_side_concurrency_cap`` (TTFT measured by a
    client whose own concurrency cap queues requests while the server queue is empty;
    ``category`` ``ttft_spike``), or ``client_ttft_undetermined`` (a capped benchmark with
    a high TTFT and no server queue figures to tell). ``max_concurrent_requests`` is the
    server's limit as configured (TGI ``Args``/``--max-concurrent-requests``);
    ``offered_concurrency`` what the paste says was sent; TTFTs in ms.
    """

    category: str
    cause: str
    engine: str | None = None
    rejections: int = 0
    http_status: int | None = None
    max_concurrent_requests: int | None = None
    limit_is_default: bool = False
    offered_concurrency: int | None = None
    client_concurrency_cap: int | None = None
    ttft_ms: dict[str, float] = Field(default_factory=dict)
    server_waiting_max: int | None = None
    server_running_max: int | None = None


def detect_line(line: str) -> bool:
    """Cheap test: a rejection, a client concurrency cap or a TTFT summary line."""
    return bool(_REJECT.search(line) or _CLIENT_CAP.search(line) or _TTFT.search(line))


class ServingAnalyzer:
    """Streaming analyzer: :meth:`feed` per line, then :meth:`finish` (bounded state)."""

    def __init__(self) -> None:
        self._args = EngineArgs()
        self._engine: str | None = None
        self._rejections = 0
        self._status: int | None = None
        self._offered: int | None = None
        self._cap: int | None = None
        self._ttft: dict[str, float] = {}
        self._waiting: int | None = None
        self._running: int | None = None
        self._seen = LineKeeper()

    def feed(self, line_no: int, raw: str) -> None:
        """Consume one line (1-based). Never raises on odd input."""
        if not has_keyword(raw, KEYWORDS):
            return
        line = clip(raw)
        update_engine_args(self._args, line)
        if self._engine is None:
            for rx, name in _ENGINES:
                if rx.search(line):
                    self._engine = name
                    break
        if _REJECT.search(line):
            self._rejections += 1
            self._seen.keep(line_no, line)
        if (m := _STATUS.search(line)) and ("HTTP" in line or "Too Many" in line):
            self._status = self._status or int(m.group(1))
            self._seen.keep(line_no, line)
        if m2 := _OFFERED.search(line):
            self._offered = to_int(m2.group(1) or m2.group(2)) or self._offered
        if m3 := _CLIENT_CAP.search(line):
            self._cap = to_int(m3.group(1) or m3.group(2) or m3.group(3))
            self._seen.keep(line_no, line)
        if m4 := _TTFT.search(line):
            if m4.group(2):
                v = to_float(m4.group(2))
                if v is not None:
                    self._ttft[m4.group(1).lower()] = v
            else:
                v = to_float(m4.group(3))
                if v is not None:
                    self._ttft["reported"] = v * (1000 if m4.group(4).lower() == "s" else 1)
            self._seen.keep(line_no, line)
        if m5 := _SERVER_WAITING.search(line):
            w = to_int(m5.group(1) or m5.group(2))
            if w is not None:
                self._waiting = max(self._waiting or 0, w)
        if m6 := _SERVER_RUNNING.search(line):
            r = to_int(m6.group(1) or m6.group(2))
            if r is not None:
                self._running = max(self._running or 0, r)

    def finish(self) -> ServingReport | None:
        """The report, or ``None`` when neither pattern holds."""
        args = self._args
        engine = self._engine or args.engine
        if self._rejections:
            limit = args.max_concurrent_requests
            default = limit is None and engine == "tgi"
            r = ServingReport(
                category="other",
                cause="admission_backpressure",
                engine=engine,
                rejections=self._rejections,
                http_status=self._status or (429 if engine == "tgi" else None),
                max_concurrent_requests=limit
                if limit is not None
                else (TGI_DEFAULT_MAX_CONCURRENT if default else None),
                limit_is_default=default,
                offered_concurrency=self._offered,
            )
        elif self._cap is not None and self._ttft:
            if self._waiting is None:
                cause = "client_ttft_undetermined"
            elif self._waiting == 0:
                cause = "client_side_concurrency_cap"
            else:
                return None  # the server queued: engine_log reads that side
            r = ServingReport(category="ttft_spike", cause=cause, engine=engine)
            r.client_concurrency_cap = self._cap
            r.offered_concurrency = self._offered
        else:
            return None
        r.ttft_ms = dict(self._ttft)
        r.server_waiting_max = self._waiting
        r.server_running_max = self._running
        r.lines = self._seen.lines
        r.first_line = self._seen.first
        r.facts = _facts(r)
        r.next_check_ids, r.mitigation_ids = _advice(r)
        return r


def _facts(r: ServingReport) -> list[Fact]:
    out: list[Fact] = []
    if r.cause == "admission_backpressure":
        if r.engine == "tgi":
            out.append(Fact(id="serve.deliberate_tgi", args={"status": r.http_status or 429}))
        else:
            out.append(Fact(id="serve.deliberate", args={"n": r.rejections}))
        if r.max_concurrent_requests is not None:
            fid = "serve.limit_vs_offered" if r.offered_concurrency else "serve.limit"
            out.append(
                Fact(
                    id=fid,
                    args={
                        "limit": r.max_concurrent_requests,
                        "offered": r.offered_concurrency or "?",
                        "default": " (default)" if r.limit_is_default else "",
                    },
                )
            )
    else:
        ttft = next(iter(r.ttft_ms.items()), ("", 0.0))
        out.append(
            Fact(
                id="serve.client_cap",
                args={"cap": r.client_concurrency_cap, "which": ttft[0], "ttft": ttft[1]},
            )
        )
        out.append(
            Fact(id="serve.server_queue_empty")
            if r.cause == "client_side_concurrency_cap"
            else Fact(id="serve.server_queue_unknown")
        )
    return out


def _advice(r: ServingReport) -> tuple[list[str], list[str]]:
    if r.cause == "admission_backpressure":
        raise_id = {"tgi": "raise_limit_tgi", "triton": "raise_limit_triton"}.get(
            r.engine or "", "raise_limit_generic"
        )
        return (
            ["serve.inflight_vs_limit", "serve.who_sends"],
            ["scale_replicas", raise_id, "client_backoff"],
        )
    return (
        ["serve.server_waiting", "serve.client_timing"],
        ["measure_server_side", "raise_client_concurrency"],
    )


def explain_serving_text(text: str) -> ServingReport | None:
    """Analyse a whole text at once (convenience over :class:`ServingAnalyzer`)."""
    a = ServingAnalyzer()
    for i, line in enumerate(text.splitlines(), 1):
        a.feed(i, line)
    return a.finish()
