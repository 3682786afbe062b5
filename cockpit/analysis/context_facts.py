"""Context facts of a pasted text: the lines around a recognised error that carry the
diagnosis (pure, no I/O).

An *evidence item* is a recognised error line or block; a *context fact* is what the
paste says around it: the engine's memory-profiling budget, a node-allocatable table,
per-container GPU limits, job-end markers, an events table. Analyzers read both and name
what they used (:class:`Fact`).

Formats (verbatim from the engines and ``kubectl``; sources in each parser's docstring):

* vLLM's memory profiling (``worker.py``, V0 and V1 ≤ 0.8)::

    the current vLLM instance can use total_gpu_memory (44.53GiB) x gpu_memory_utilization
    (0.98) = 43.64GiB
    model weights take 20.64GiB; non_torch_memory takes 0.28GiB; PyTorch activation peak
    memory takes 1.52GiB; the rest of the memory reserved for KV Cache is 21.20GiB.
    # cuda blocks: 0, # CPU blocks: 4681          (V0; "# GPU blocks: N" in older ones)
    Maximum concurrency for 4096 tokens per request: 0.00x

  V1 (≥ 0.8.5) prints ``Available KV cache memory: 21.20 GiB`` and ``GPU KV cache size:
  N tokens`` instead (vLLM ``gpu_worker.py`` / ``kv_cache_utils.py``).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

_NUM = r"(-?\d+(?:\.\d+)?)"
_BUDGET = re.compile(
    r"total_gpu_memory \(" + _NUM + r"\s*GiB\) x gpu_memory_utilization \(" + _NUM + r"\)"
    r"(?: = " + _NUM + r"\s*GiB)?"
)
_PARTS = re.compile(
    r"model weights take " + _NUM + r"\s*GiB; non_torch_memory takes " + _NUM + r"\s*GiB; "
    r"PyTorch activation peak memory takes " + _NUM + r"\s*GiB; the rest of the memory "
    r"reserved for KV Cache is " + _NUM + r"\s*GiB"
)
_BLOCKS = re.compile(r"# (?:GPU|cuda) blocks: (\d+)", re.IGNORECASE)
_CONCURRENCY = re.compile(
    r"Maximum concurrency for (\d+) tokens per request: " + _NUM + r"x", re.IGNORECASE
)
_V1_KV = re.compile(r"Available KV cache memory: " + _NUM + r"\s*GiB")
_V1_TOKENS = re.compile(r"GPU KV cache size: ([\d,]+) tokens")
_PROFILING = re.compile(r"Memory profiling takes", re.IGNORECASE)

MEMORY_PROFILE_KEYWORDS = (
    "total_gpu_memory",
    "model weights take",
    "blocks:",
    "maximum concurrency",
    "kv cache memory",
    "kv cache size",
    "memory profiling",
)
"""Lower-case substrings of every line :class:`MemoryProfile` reads."""


class Fact(BaseModel):
    """One statement a finding rests on, worded from the catalogue.

    Attributes:
        id: Catalogue key under ``explain.fact.`` (``oom.outside_process``…).
        args: Values the wording is formatted with (numbers in the unit its key names).
        line: 1-based line of the text it comes from (0: derived from several lines).
    """

    id: str
    args: dict[str, Any] = Field(default_factory=dict)
    line: int = 0


class ReportTail(BaseModel):
    """The fields every family analyzer's report ends with: the lines it recognised
    (``{"line", "text"}``), its facts, its first line and the catalogue ids of its next
    checks and mitigations."""

    lines: list[dict[str, object]] = Field(default_factory=list)
    facts: list[Fact] = Field(default_factory=list)
    first_line: int = 0
    next_check_ids: list[str] = Field(default_factory=list)
    mitigation_ids: list[str] = Field(default_factory=list)


class LineKeeper:
    """The recognised lines of an analyzer, bounded: the first line number seen, and the
    first :attr:`limit` lines as ``{"line", "text"}`` (text cut to 300 characters)."""

    def __init__(self, limit: int = 12) -> None:
        self.lines: list[dict[str, object]] = []
        self.first = 0
        self.limit = limit

    def keep(self, line_no: int, line: str) -> None:
        """Remember one recognised line."""
        self.first = self.first or line_no
        if len(self.lines) < self.limit:
            self.lines.append({"line": line_no, "text": line[:300]})


def _f(text: str) -> float:
    return float(text)


class MemoryProfile(BaseModel):
    """vLLM's memory-profiling figures (GiB), ``None`` where the text does not show one.

    ``budget_gib`` is ``total_gib × gpu_memory_utilization`` (the engine prints it);
    ``kv_gib`` is what is left for the KV cache after weights, non-torch memory and the
    activation peak — negative when they exceed the budget (case oom-12).
    """

    total_gib: float | None = None
    gpu_memory_utilization: float | None = None
    budget_gib: float | None = None
    weights_gib: float | None = None
    non_torch_gib: float | None = None
    activation_peak_gib: float | None = None
    kv_gib: float | None = None
    gpu_blocks: int | None = None
    max_model_len: int | None = None
    max_concurrency: float | None = None
    kv_tokens: int | None = None
    profiled: bool = False
    line: int = 0

    def seen(self) -> bool:
        """True when any figure was found."""
        return self.line > 0

    def feed(self, line_no: int, line: str) -> None:
        """Fold the figures of one line in (later lines win)."""
        hit = False
        if m := _BUDGET.search(line):
            self.total_gib = _f(m.group(1))
            self.gpu_memory_utilization = _f(m.group(2))
            self.budget_gib = (
                _f(m.group(3))
                if m.group(3)
                else round(self.total_gib * self.gpu_memory_utilization, 2)
            )
            hit = True
        if m := _PARTS.search(line):
            self.weights_gib = _f(m.group(1))
            self.non_torch_gib = _f(m.group(2))
            self.activation_peak_gib = _f(m.group(3))
            self.kv_gib = _f(m.group(4))
            hit = True
        if m := _V1_KV.search(line):
            self.kv_gib = _f(m.group(1))
            hit = True
        if m := _V1_TOKENS.search(line):
            self.kv_tokens = int(m.group(1).replace(",", ""))
            hit = True
        if m := _BLOCKS.search(line):
            self.gpu_blocks = int(m.group(1))
            hit = True
        if m := _CONCURRENCY.search(line):
            self.max_model_len = int(m.group(1))
            self.max_concurrency = _f(m.group(2))
            hit = True
        if _PROFILING.search(line):
            self.profiled = True
            hit = True
        if hit:
            self.line = self.line or line_no

    def used_gib(self) -> float | None:
        """Weights + non-torch + activation peak (GiB), when all three are known."""
        parts = (self.weights_gib, self.non_torch_gib, self.activation_peak_gib)
        if any(p is None for p in parts):
            return None
        return round(sum(p for p in parts if p is not None), 2)

    def kv_at(self, utilization: float) -> float | None:
        """KV cache (GiB) the same figures would leave at another utilization."""
        used = self.used_gib()
        if used is None or self.total_gib is None:
            return None
        return round(self.total_gib * utilization - used, 2)

    def kv_if_activation_halved(self) -> float | None:
        """KV cache (GiB) at the same budget with half the activation peak — roughly what
        halving ``--max-model-len`` / ``--max-num-batched-tokens`` buys (the profiled
        activation peak scales with the tokens of the profiling batch)."""
        if self.budget_gib is None or self.used_gib() is None or self.activation_peak_gib is None:
            return None
        used = self.used_gib() or 0.0
        return round(self.budget_gib - used + self.activation_peak_gib / 2, 2)

    def outside_budget_gib(self) -> float | None:
        """Memory the budget leaves outside the engine (GiB): ``total × (1 − util)`` —
        all that CUDA graphs, NCCL buffers and other processes may use."""
        if self.total_gib is None or self.gpu_memory_utilization is None:
            return None
        return round(self.total_gib * (1 - self.gpu_memory_utilization), 2)
