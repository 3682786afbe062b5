"""What one serving replica does over time, independent of any stack's metric names.

The per-stack emitters (:mod:`.sglang`, :mod:`.tgi`, :mod:`.triton`, and the length
histograms of :mod:`.vllm_lengths`) turn a :class:`ReplicaLoad` into their own series.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cockpit.scenarios.histogram import Shape
from cockpit.scenarios.signals import Signal

Mix = list[tuple[Shape, Signal]]


@dataclass
class ReplicaLoad:
    """One replica over time.

    Attributes:
        ok: Successful requests per second.
        failed: Failed requests per second.
        prompt_tokens: Mean prompt length (tokens).
        gen_tokens: Mean output length (tokens).
        running: Requests in the running batch.
        waiting: Requests in the queue.
        kv_usage: KV-cache usage ratio 0–1.
        e2e, ttft, itl, queue: Latency mixes in seconds.
        prompt_len, gen_len: Length mixes in tokens (optional).
    """

    ok: Signal
    failed: Signal
    prompt_tokens: Signal
    gen_tokens: Signal
    running: Signal
    waiting: Signal
    kv_usage: Signal
    e2e: Mix
    ttft: Mix
    itl: Mix
    queue: Mix
    prompt_len: Mix = field(default_factory=list)
    gen_len: Mix = field(default_factory=list)

    def total(self) -> Signal:
        """Finished requests per second."""
        return [a + b for a, b in zip(self.ok, self.failed, strict=True)]
