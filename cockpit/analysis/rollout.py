"""Errors or latency after a model release: what pasted responses, logs and pod lists show.

Pure and streaming. Signals (formats.md §C8 and the handbook, seed 000 场景六):

* ``finish_reason`` = ``length`` with end-of-turn special tokens visible in the text →
  EOS / stop-token mismatch (vllm#4180: Llama-3 ends turns with ``<|eot_id|>`` while the
  configured ``eos_token`` is ``<|end_of_text|>``); instant ``stop`` with empty output →
  an ``add_eos_token`` change.
* chat-template errors and HTTP 400 on chat endpoints (vllm#39279).
* pods Ready while the log still shows compilation / warm-up, and 5xx or timeouts on
  them (vllm#15313: readiness passes before the model can serve).
* start-up exceptions naming a compute capability (kernel/dtype not built for the GPU).
* the HTTP status mix of OpenAI-style access-log lines (``"POST /v1/chat/completions
  HTTP/1.1" 400``).
"""

from __future__ import annotations

import re
from collections import Counter

from pydantic import BaseModel, Field

from cockpit.analysis.logtext import Gated, clip, has_keyword, snippet

CATEGORY = "bad_rollout"
MAX_ENDPOINTS = 64

KEYWORDS = (
    "finish_reason",
    "eos",
    "<|",
    "</s>",
    "<end_of_turn>",
    "chat",
    "template",
    "http/",
    "error code",
    "running",
    "ready",
    "rollout",
    "compil",
    "warm",
    "capturing",
    "compute capability",
    "pip install",
    '" 50',
    "unavailable",
    "timed out",
    "/ timeout",
    "loading",
    "stop_token",
    "generation_config",
    "tokenizer",
    '""',
    "empty output",
    "completion_tokens",
    "generated_tokens",
    "output_tokens",
)
# One generated token: an answer that ends at once (OpenAI ``usage.completion_tokens``,
# TGI ``details.generated_tokens``, vLLM's request log ``num_generated_tokens``).
_ONE_TOKEN = re.compile(
    r"[\"']?(?:completion_tokens|generated_tokens|output_tokens|num_generated_tokens)"
    r"[\"']?\s*[=:]\s*1\b"
)
_TOKENIZER_CHANGE = Gated(
    re.compile(r"tokenizer(?:_config)?|chat_template\.jinja|special_tokens_map", re.I),
    ("tokenizer", "chat_template", "special_tokens_map"),
)
_FINISH_LENGTH = re.compile(r"finish_reason[\"']?\s*[=:]\s*[\"']?length")
_FINISH_STOP = re.compile(r"finish_reason[\"']?\s*[=:]\s*[\"']?stop")
_EMPTY_OUTPUT = re.compile(
    r"[\"']content[\"']\s*:\s*[\"']{2}|[\"']text[\"']\s*:\s*[\"']{2}|empty output"
)
_SPECIAL = re.compile(
    r"<\|eot_id\|>|<\|im_end\|>|<\|end\|>|<\|endoftext\|>|<\|end_of_text\|>|</s>|<end_of_turn>|<eos>"
)
_EOS_CFG = Gated(
    re.compile(r"eos_token(?:_id)?|stop_token_ids|generation_config", re.I),
    ("eos_token", "stop_token_ids", "generation_config"),
)
_ADD_EOS = re.compile(r"add_eos_token")
_CHAT_TEMPLATE = Gated(
    re.compile(
        r"ChatTemplateResolutionError|default chat template is no longer allowed|"
        r"chat_template is not set|chat template.{0,40}(?:error|not|missing|must|could)|"
        r"Cannot use chat template",
        re.I,
    ),
    ("chattemplate", "chat template", "chat_template"),
)
_ACCESS = re.compile(r"\"(GET|POST|PUT|DELETE) (/[^\s\"?]*)[^\"]*HTTP/[\d.]+\"\s+(\d{3})")
_ERROR_CODE = re.compile(r"Error code: (\d{3})")
_READY = re.compile(
    r"\b1/1\s+Running\b|Ready=True|\bReady\b.{0,20}\bquickly|successfully rolled out|<- Ready"
)
_WARMUP = re.compile(
    r"Compiling the model|torch\.compile|[Cc]ompiling|[Ww]arming up|warmup|Capturing (?:CUDA )?graph|"
    r"Loading (?:model )?weights|still loading",
)
_5XX_OR_TIMEOUT = re.compile(
    r"\" 50\d\b|\b50[234]\b.{0,20}(?:timeout|Service Unavailable)|/ timeout|timed out|Service Unavailable"
)
_COMPUTE_CAP = re.compile(r"compute capability", re.I)
_PIP = re.compile(r"pip install")


class RolloutReport(BaseModel):
    """Release-regression finding.

    ``cause``: ``eos_stop_token_mismatch``, ``eos_immediate_stop``,
    ``chat_template_missing_or_unresolvable``, ``readiness_before_model_ready``,
    ``gpu_arch_incompatible``.
    """

    category: str = CATEGORY
    cause: str
    causes: list[str] = Field(default_factory=list)
    finish_length: int = 0
    empty_outputs: int = 0
    one_token_outputs: int = 0
    finish_stop: int = 0
    special_tokens_visible: list[str] = Field(default_factory=list)
    chat_template_error: str | None = None
    http_status: int | None = None
    status_counts: dict[str, int] = Field(default_factory=dict)
    http_400_share: float | None = None
    endpoints: dict[str, dict[str, int]] = Field(default_factory=dict)
    ready_while_warming: bool = False
    warmup_line: str | None = None
    errors_5xx_or_timeout: int = 0
    runtime_pip_install: bool = False
    compute_capability_error: str | None = None
    first_line: int = 0
    next_check_ids: list[str] = Field(default_factory=list)
    mitigation_ids: list[str] = Field(default_factory=list)


class RolloutAnalyzer:
    """Streaming release-regression analyzer (bounded: endpoint table capped)."""

    def __init__(self) -> None:
        self._first_line = 0
        self._length = 0
        self._stop = 0
        self._empty = False
        self._special: list[str] = []
        self._eos_cfg = False
        self._add_eos = False
        self._template: str | None = None
        self._status: Counter[str] = Counter()
        self._endpoints: dict[str, Counter[str]] = {}
        self._error_code: int | None = None
        self._ready = False
        self._warmup: str | None = None
        self._bad = 0
        self._pip = False
        self._cc: str | None = None
        self._empty_n = 0
        self._one_token = 0
        self._tokenizer = False

    def _mark(self, line_no: int) -> None:
        self._first_line = self._first_line or line_no

    def feed(self, line_no: int, raw: str) -> None:
        """Consume one line. Never raises on odd input."""
        if not has_keyword(raw, KEYWORDS):
            return
        line = clip(raw)
        if _FINISH_LENGTH.search(line):
            self._length += 1
            self._mark(line_no)
        if _FINISH_STOP.search(line):
            self._stop += 1
            self._mark(line_no)
        if _EMPTY_OUTPUT.search(line):
            self._empty_n += 1
            self._empty = True
        if _ONE_TOKEN.search(line):
            self._one_token += 1
            self._mark(line_no)
        if _TOKENIZER_CHANGE.search(line):
            self._tokenizer = True
        for m in _SPECIAL.finditer(line):
            if m.group(0) not in self._special and len(self._special) < 10:
                self._special.append(m.group(0))
        if _EOS_CFG.search(line):
            self._eos_cfg = True
        if _ADD_EOS.search(line):
            self._add_eos = True
        if self._template is None and _CHAT_TEMPLATE.search(line):
            self._template = snippet(line, 300)
            self._mark(line_no)
        for m in _ACCESS.finditer(line):
            status = m.group(3)
            self._status[status] += 1
            path = m.group(2)
            if path in self._endpoints or len(self._endpoints) < MAX_ENDPOINTS:
                self._endpoints.setdefault(path, Counter())[status] += 1
        if m2 := _ERROR_CODE.search(line):
            self._error_code = int(m2.group(1))
        if _READY.search(line):
            self._ready = True
        if self._warmup is None and _WARMUP.search(line):
            self._warmup = snippet(line, 200)
        if _5XX_OR_TIMEOUT.search(line):
            self._bad += 1
        if _PIP.search(line):
            self._pip = True
        if (
            self._cc is None
            and _COMPUTE_CAP.search(line)
            and re.search(r"(?i)error|not supported|requires|at least", line)
        ):
            self._cc = snippet(line, 300)
            self._mark(line_no)

    def finish(self) -> RolloutReport | None:
        """The report, or ``None`` when no release-regression pattern holds."""
        causes: list[str] = []
        if self._length and (self._special or self._eos_cfg):
            causes.append("eos_stop_token_mismatch")
        if (self._empty_n or self._one_token) and (self._stop or self._one_token):
            # every answer ends at once: a tokenizer / generation-config change when the
            # paste shows one, else recognised without a cause (what decides it is the
            # diff of those files between the two revisions)
            if self._add_eos or self._eos_cfg or self._tokenizer:
                causes.append("eos_immediate_stop")
            else:
                causes.append("instant_stop_undetermined")
        if self._template:
            causes.append("chat_template_missing_or_unresolvable")
        if self._ready and self._warmup and self._bad:
            causes.append("readiness_before_model_ready")
        if self._cc:
            causes.append("gpu_arch_incompatible")
        if not causes:
            return None
        r = RolloutReport(cause=causes[0], causes=causes, first_line=self._first_line or 1)
        r.finish_length = self._length
        r.finish_stop = self._stop
        r.empty_outputs = self._empty_n
        r.one_token_outputs = self._one_token
        r.special_tokens_visible = self._special
        r.chat_template_error = self._template
        r.status_counts = dict(self._status)
        total = sum(self._status.values())
        if total:
            r.http_400_share = round(self._status.get("400", 0) / total, 4)
        r.endpoints = {k: dict(v) for k, v in self._endpoints.items()}
        r.http_status = self._error_code
        if r.http_status is None and self._status:
            r.http_status = int(self._status.most_common(1)[0][0])
        r.ready_while_warming = "readiness_before_model_ready" in causes
        r.warmup_line = self._warmup
        r.errors_5xx_or_timeout = self._bad
        r.runtime_pip_install = self._pip
        r.compute_capability_error = self._cc
        r.next_check_ids = [f"roll.{c}" for c in causes] + [
            "roll.diff_revision",
            "roll.readiness",
            "roll.canary",
            "roll.mixed_versions",
            "roll.finish_reason_mix",
        ]
        r.mitigation_ids = ["roll.stop_spread", *(f"roll.{c}" for c in causes)]
        return r


def explain_rollout_text(text: str) -> RolloutReport | None:
    """Analyse a whole text at once (convenience over :class:`RolloutAnalyzer`)."""
    a = RolloutAnalyzer()
    for i, line in enumerate(text.splitlines(), 1):
        a.feed(i, line)
    return a.finish()
