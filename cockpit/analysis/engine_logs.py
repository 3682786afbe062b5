"""Serving-engine log lines about queueing, KV cache and throughput (pure, streaming).

Formats (``../shared/cases/formats.md`` §A5, verbatim from the engines):

* vLLM V0 ``metrics.py``: ``Avg prompt throughput: 0.0 tokens/s, Avg generation
  throughput: 2136.3 tokens/s, Running: 247 reqs, Swapped: 0 reqs, Pending: 740 reqs, GPU
  KV cache usage: 99.7%, CPU KV cache usage: 0.0%``
* vLLM V1 ``loggers.py``: ``Engine 000: Avg prompt throughput: … Running: 1 reqs, Waiting:
  14 reqs, GPU KV cache usage: 76.5%, Prefix cache hit rate: 92.0%``
* vLLM preemption: ``Sequence group 221 is preempted by PreemptionMode.RECOMPUTE mode
  because there is not enough KV cache space. … total_num_cumulative_preemption=101``
* SGLang: ``Prefill batch. #new-seq: 3, #new-token: 15000, #cached-token: 0, token usage:
  0.06, #running-req: 7, #queue-req: 40`` and ``Decode batch. #running-req: 7, #token: …,
  token usage: 0.06, gen throughput (token/s): 100.0, #queue-req: 40``
* TGI router spans: ``queue_time="1.2s" … time_per_token="45ms"``.

Decision rules (formats.md §C6 and the handbook, seed 000 场景四): KV saturation (usage ≈
100 %, running flat, preemptions) vs prefill head-of-line blocking (KV low, prompt
throughput pinned, waiting rising) vs no server-side queue (waiting 0: the time is spent
before the GPU or in the client). "If TPOT is normal and TTFT worse, look at queueing and
prefill first; if both are worse, check overload, GPU performance and shared
dependencies."
"""

from __future__ import annotations

import re
from collections import deque

from pydantic import BaseModel, Field

from cockpit.analysis.engine_args import flags_for_engine
from cockpit.analysis.logtext import clip, has_keyword, to_float, to_int

CATEGORY = "ttft_spike"
IDLE_CATEGORY = "low_util"

# vLLM's scheduler cannot admit a new sequence once the KV pool is full; usage at or
# above this is treated as saturated (ttft-02 shows 100.0 %, V0 issues show 99.7 %).
KV_SATURATED = 0.95
# Below this the KV cache is clearly not what is holding requests back.
KV_NOT_SATURATED = 0.90
# Generation throughput below this share of prompt throughput means the engine is
# spending its steps on prefill (ttft-01: 0–12 tokens/s next to ~61k tokens/s).
PREFILL_DOMINANCE = 0.1
# SGLang prefill batch this large (tokens) is a long-prompt batch (ttft-01 is 128k).
LONG_PREFILL_TOKENS = 8192
KEEP_SAMPLES = 256

KEYWORDS = (
    "throughput",
    "preempted",
    "prefill batch",
    "decode batch",
    "queue_time",
    "#queue-req",
    "kv cache usage",
    "time_per_token",
)
_V = {
    "prompt_tps": re.compile(r"Avg prompt throughput: ([\d.]+) tokens/s"),
    "gen_tps": re.compile(r"Avg generation throughput: ([\d.]+) tokens/s"),
    "running": re.compile(r"Running: (\d+) reqs"),
    "waiting": re.compile(r"(?:Waiting|Pending): (\d+) reqs"),
    "swapped": re.compile(r"Swapped: (\d+) reqs"),
    "kv": re.compile(r"GPU KV cache usage: ([\d.]+)%"),
    "prefix_hit": re.compile(r"Prefix cache hit rate: ([\d.]+)%"),
}
_SG = {
    "new_token": re.compile(r"#new-token: (\d+)"),
    "running": re.compile(r"#running-req: (\d+)"),
    "waiting": re.compile(r"#queue-req: (\d+)"),
    "kv": re.compile(r"token usage: ([\d.]+)"),
    "gen_tps": re.compile(r"gen throughput \(token/s\): ([\d.]+)"),
}
_PREEMPT = re.compile(r"is preempted by PreemptionMode\.(\w+)")
_PREEMPT_TOTAL = re.compile(r"total_num_cumulative_preemption=(\d+)")
_TGI_FIELD = re.compile(
    r'\b(queue_time|time_per_token|inference_time|total_time)="?([\d.]+)(µs|us|ms|s)"?'
)
_UNIT_MS = {"µs": 0.001, "us": 0.001, "ms": 1.0, "s": 1000.0}


class EngineSample(BaseModel):
    """One stats line (fields the line carries; KV usage as a 0–1 fraction)."""

    line: int
    engine: str
    prompt_tps: float | None = None
    gen_tps: float | None = None
    running: int | None = None
    waiting: int | None = None
    kv_usage: float | None = None
    prefill_tokens: int | None = None


class EngineLogReport(BaseModel):
    """What the engine log lines say about queueing and the KV cache.

    ``cause``: ``preemption_recompute``, ``kv_cache_saturation``,
    ``long_prompt_head_of_line``, ``queueing_overload``, ``no_server_queue``,
    ``queue_not_reported`` (the stats lines carry no ``Waiting``/``Pending`` field: the
    text cannot tell whether requests queue), ``queue_one_line`` (requests wait in one
    stats line only, no more than are running: a moment or the start of a queue, one line
    cannot tell) or
    ``few_requests_idle`` (the last is a low-utilization finding: normal idle capacity,
    do not invent work — seed 000, 场景三).
    """

    category: str = CATEGORY
    cause: str
    causes: list[str] = Field(default_factory=list)
    engine: str | None = None
    samples: int = 0
    kv_saturated: bool | None = None
    kv_usage: float | None = None
    kv_usage_first: float | None = None
    kv_usage_last: float | None = None
    running: int | None = None
    running_max: int | None = None
    waiting: int | None = None
    waiting_first: int | None = None
    waiting_max: int | None = None
    waiting_trend: str | None = None  # rising | falling | flat
    prompt_tps_max: float | None = None
    gen_tps_max: float | None = None
    gen_to_prompt_ratio: float | None = None
    prefill_tokens_max: int | None = None
    preemptions: int | None = None
    cumulative_preemptions: int | None = None
    preemption_mode: str | None = None
    queue_time_ms_max: float | None = None
    time_per_token_ms_max: float | None = None
    first_line: int = 0
    series: list[EngineSample] = Field(default_factory=list)
    next_check_ids: list[str] = Field(default_factory=list)
    mitigation_ids: list[str] = Field(default_factory=list)


def detect_line(line: str) -> bool:
    """Cheap test: may ``line`` be an engine stats/preemption line?"""
    return has_keyword(line, KEYWORDS)


def _f(rx: re.Pattern[str], line: str) -> float | None:
    m = rx.search(line)
    return to_float(m.group(1)) if m else None


def _i(rx: re.Pattern[str], line: str) -> int | None:
    m = rx.search(line)
    return to_int(m.group(1)) if m else None


class EngineLogAnalyzer:
    """Streaming analyzer of engine stats lines; bounded memory (first/last samples)."""

    def __init__(self) -> None:
        self._head: list[EngineSample] = []
        self._tail: deque[EngineSample] = deque(maxlen=KEEP_SAMPLES)
        self._count = 0
        self._first_line = 0
        self._engine: str | None = None
        self._kv_max: float | None = None
        self._running_at_kv_max: int | None = None
        self._running_max: int | None = None
        self._waiting_max: int | None = None
        self._prompt_max: float | None = None
        self._gen_max: float | None = None
        self._prompt_sum = 0.0
        self._gen_sum = 0.0
        self._prefill_max: int | None = None
        self._preempt = 0
        self._preempt_total: int | None = None
        self._preempt_mode: str | None = None
        self._queue_ms: float | None = None
        self._tpot_ms: float | None = None
        # Each claim about the queue needs the field in every sample it is made from:
        # a stats line without ``Waiting`` says nothing about the queue (never "0").
        self._waiting_seen = 0
        self._waiting_nonzero = 0
        self._waiting_within_batch = False
        self._all_waiting_zero = True
        self._all_idle = True

    def feed(self, line_no: int, raw: str) -> None:
        """Consume one line. Never raises on odd input."""
        if not has_keyword(raw, KEYWORDS):
            return
        line = clip(raw)
        m = _PREEMPT.search(line)
        if m:
            self._first_line = self._first_line or line_no
            self._preempt += 1
            self._preempt_mode = m.group(1)
            total = _i(_PREEMPT_TOTAL, line)
            if total is not None:
                self._preempt_total = max(self._preempt_total or 0, total)
            self._engine = self._engine or "vllm"
            return
        s: EngineSample | None = None
        if "Avg prompt throughput" in line or "Avg generation throughput" in line:
            kv = _f(_V["kv"], line)
            s = EngineSample(
                line=line_no,
                engine="vllm",
                prompt_tps=_f(_V["prompt_tps"], line),
                gen_tps=_f(_V["gen_tps"], line),
                running=_i(_V["running"], line),
                waiting=_i(_V["waiting"], line),
                kv_usage=None if kv is None else round(kv / 100.0, 4),
            )
        elif "Prefill batch" in line or "Decode batch" in line:
            s = EngineSample(
                line=line_no,
                engine="sglang",
                gen_tps=_f(_SG["gen_tps"], line),
                running=_i(_SG["running"], line),
                waiting=_i(_SG["waiting"], line),
                kv_usage=_f(_SG["kv"], line),
                prefill_tokens=_i(_SG["new_token"], line),
            )
        else:
            found = False
            for m2 in _TGI_FIELD.finditer(line):
                value = to_float(m2.group(2))
                if value is None:
                    continue
                ms = value * _UNIT_MS[m2.group(3)]
                found = True
                if m2.group(1) == "queue_time":
                    self._queue_ms = max(self._queue_ms or 0.0, ms)
                elif m2.group(1) == "time_per_token":
                    self._tpot_ms = max(self._tpot_ms or 0.0, ms)
            if found:
                self._engine = self._engine or "tgi"
                self._first_line = self._first_line or line_no
            return
        if s is None or all(
            v is None for v in (s.prompt_tps, s.gen_tps, s.running, s.waiting, s.kv_usage)
        ):
            return
        self._add(s)

    def _add(self, s: EngineSample) -> None:
        self._first_line = self._first_line or s.line
        self._engine = self._engine or s.engine
        self._count += 1
        if len(self._head) < KEEP_SAMPLES:
            self._head.append(s)
        else:
            self._tail.append(s)
        if s.kv_usage is not None and (self._kv_max is None or s.kv_usage > self._kv_max):
            self._kv_max = s.kv_usage
            self._running_at_kv_max = s.running
        if s.running is not None:
            self._running_max = max(self._running_max or 0, s.running)
        if s.waiting is not None:
            self._waiting_seen += 1
            self._waiting_max = max(self._waiting_max or 0, s.waiting)
            if s.waiting > 0:
                self._all_waiting_zero = False
                self._waiting_nonzero += 1
                # fewer waiting than running: a batch's worth at most, which a busy engine
                # holds between two scheduler steps; more than the batch is a queue
                self._waiting_within_batch = s.waiting <= (s.running or 0)
        else:
            self._all_waiting_zero = False
        if s.running != 0 or s.waiting != 0:
            self._all_idle = False  # idle needs Running and Waiting both read as 0
        if s.prompt_tps is not None:
            self._prompt_max = max(self._prompt_max or 0.0, s.prompt_tps)
            self._prompt_sum += s.prompt_tps
        if s.gen_tps is not None:
            self._gen_max = max(self._gen_max or 0.0, s.gen_tps)
            self._gen_sum += s.gen_tps
        if s.prefill_tokens is not None:
            self._prefill_max = max(self._prefill_max or 0, s.prefill_tokens)

    def finish(self) -> EngineLogReport | None:
        """The report, or ``None`` when no engine stats line was seen."""
        if not self._count and not self._preempt and self._queue_ms is None:
            return None
        samples = self._head + list(self._tail)
        first = samples[0] if samples else None
        last = samples[-1] if samples else None
        r = EngineLogReport(
            cause="queueing_overload", engine=self._engine, first_line=self._first_line
        )
        r.samples = self._count
        r.kv_usage = self._kv_max
        r.kv_usage_first = first.kv_usage if first else None
        r.kv_usage_last = last.kv_usage if last else None
        r.running = (
            self._running_at_kv_max
            if self._running_at_kv_max is not None
            else (last.running if last else None)
        )
        r.running_max = self._running_max
        r.waiting = last.waiting if last else None
        r.waiting_first = first.waiting if first else None
        r.waiting_max = self._waiting_max
        if (
            first
            and last
            and first.waiting is not None
            and last.waiting is not None
            and len(samples) > 1
        ):
            r.waiting_trend = (
                "rising"
                if last.waiting > first.waiting
                else "falling"
                if last.waiting < first.waiting
                else "flat"
            )
        r.prompt_tps_max = self._prompt_max
        r.gen_tps_max = self._gen_max
        if self._prompt_sum > 0:
            r.gen_to_prompt_ratio = round(self._gen_sum / self._prompt_sum, 4)
        r.prefill_tokens_max = self._prefill_max
        # A count of the preemption warnings in the text: none seen is not "0 preemptions"
        # (the warning may simply not be in what was pasted).
        r.preemptions = self._preempt or None
        r.cumulative_preemptions = self._preempt_total
        r.preemption_mode = self._preempt_mode
        r.queue_time_ms_max = self._queue_ms
        r.time_per_token_ms_max = self._tpot_ms
        r.series = samples[:64] + (samples[-64:] if len(samples) > 128 else samples[64:])
        if self._kv_max is not None:
            r.kv_saturated = self._kv_max >= KV_SATURATED
        causes: list[str] = []
        if self._preempt:
            causes.append("preemption_recompute")
        if r.kv_saturated and (self._waiting_max or 0) > 0:
            causes.append("kv_cache_saturation")
        prefill_pinned = (
            r.gen_to_prompt_ratio is not None and r.gen_to_prompt_ratio < PREFILL_DOMINANCE
        ) or (self._prefill_max is not None and self._prefill_max >= LONG_PREFILL_TOKENS)
        kv_low = self._kv_max is None or self._kv_max < KV_NOT_SATURATED
        if prefill_pinned and kv_low and (self._waiting_max or 0) > 0:
            causes.append("long_prompt_head_of_line")
        if self._count and self._all_idle:
            causes.append("few_requests_idle")
        elif self._count and self._all_waiting_zero and not causes:
            causes.append("no_server_queue")
        elif self._count and not self._waiting_max and not causes:
            causes.append("queue_not_reported")
        elif self._waiting_nonzero == 1 and self._waiting_within_batch and not causes:
            # one stats line with requests waiting: a moment of a busy engine, or the
            # start of a growing queue; one line cannot tell them apart
            causes.append("queue_one_line")
        if not causes:
            causes.append("queueing_overload")
        r.causes = causes
        r.cause = causes[0]
        if r.cause == "few_requests_idle":
            r.category = IDLE_CATEGORY
        r.next_check_ids, r.mitigation_ids = _advice(r.cause)
        r.next_check_ids = [QUEUE_TIME_CHECK.get((r.engine or "", c), c) for c in r.next_check_ids]
        r.mitigation_ids = for_engine(r.mitigation_ids, r.engine)
        return r


QUEUE_TIME_CHECK = {
    ("sglang", "ttft.queue_time"): "ttft.queue_time_sglang",
    ("tgi", "ttft.queue_time"): "ttft.queue_time_tgi",
}
"""The queue-time check named with the engine's own histogram: vLLM
``vllm:request_queue_time_seconds``, SGLang ``sglang:queue_time_seconds``, TGI
``tgi_request_queue_duration`` (metrics_kb.md §4, exporters.md)."""


def _advice(cause: str) -> tuple[list[str], list[str]]:
    checks = {
        "preemption_recompute": ["ttft.preemption_rate", "ttft.kv_budget"],
        "kv_cache_saturation": ["ttft.kv_budget", "ttft.output_length"],
        "long_prompt_head_of_line": ["ttft.prompt_length_mix", "ttft.prefill_chunk"],
        "queueing_overload": ["ttft.arrival_rate", "ttft.scaling"],
        "no_server_queue": ["ttft.before_gpu", "ttft.client_side"],
        "queue_not_reported": ["ttft.queue_metric", "ttft.arrival_rate"],
        "queue_one_line": ["ttft.more_lines", "ttft.queue_metric", "ttft.arrival_rate"],
        "few_requests_idle": ["util.idle_capacity"],
    }[cause]
    mitigations = {
        "preemption_recompute": ["raise_gpu_mem_util_or_tp", "lower_max_num_seqs", "kv_fp8"],
        "kv_cache_saturation": ["more_kv_capacity", "kv_fp8", "lower_max_tokens"],
        "long_prompt_head_of_line": ["chunked_prefill", "partial_prefills", "long_context_pool"],
        "queueing_overload": ["scale_out", "admission_limit"],
        "no_server_queue": ["check_gateway"],
        "queue_not_reported": [],
        "queue_one_line": [],
        "few_requests_idle": ["no_fake_work"],
    }[cause]
    if cause != "few_requests_idle":
        checks = [*checks, "ttft.queue_time", "ttft.tpot_rule", "ttft.slow_replica", "ttft.changes"]
    return checks, mitigations


# Mitigations naming vLLM's flags, per engine (vLLM "Engine Arguments", SGLang "Server
# Arguments", TGI launcher docs); a missing entry drops the advice for that engine.
_ENGINE_FLAGS: dict[str, dict[str | None, str]] = {
    "raise_gpu_mem_util_or_tp": {
        "vllm": "raise_gpu_mem_util_or_tp",
        "sglang": "raise_mem_fraction_or_tp",
        "tgi": "more_shards_tgi",
    },
    "lower_max_num_seqs": {
        "vllm": "lower_max_num_seqs",
        "sglang": "lower_max_running_requests",
        "tgi": "lower_max_batch_total_tokens",
    },
    "kv_fp8": {"vllm": "kv_fp8", "sglang": "kv_fp8_sglang"},
    "chunked_prefill": {
        "vllm": "chunked_prefill",
        "sglang": "chunked_prefill_sglang",
        "tgi": "lower_max_batch_prefill_tokens",
    },
    "partial_prefills": {"vllm": "partial_prefills"},
}


def for_engine(ids: list[str], engine: str | None) -> list[str]:
    """Mitigation ids with flags only of the engine whose log it is (vLLM's when the
    engine is not named: these lines are vLLM's own unless SGLang/TGI is detected)."""
    return flags_for_engine(ids, (engine or "vllm").lower(), _ENGINE_FLAGS)


def explain_engine_log_text(text: str) -> EngineLogReport | None:
    """Analyse a whole text at once (convenience over :class:`EngineLogAnalyzer`)."""
    a = EngineLogAnalyzer()
    for i, line in enumerate(text.splitlines(), 1):
        a.feed(i, line)
    return a.finish()
