"""The cyclic garbage collector held off while an analysis reads its answers.

One ``cockpit analyze`` (steps C–F and the window's history) parses about 10^5 points: each
is a :class:`~cockpit.models.Sample` tuple, which CPython keeps tracked by its collector
(it untracks only plain tuples, https://docs.python.org/3/library/gc.html#gc.is_tracked).
While they are alive every young collection walks the new ones again and each full
collection walks the whole heap: on the lost-GPU incident of ``bench/bench_analyze.py``,
50–280 ms of the client's CPU per analysis (:func:`gc.callbacks` timings), on the one thread
that also reads the answers. None of these objects is part of a reference cycle: reference
counting frees them as soon as the analysis drops them, so a collection held off until the
analysis ends finds little of them left to walk.

The cost: a cycle that becomes garbage during the analysis (an asyncio future and its
exception) is freed by the first collection after it, not sooner.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_held = 0
_resume = False


@contextmanager
def collector_held() -> Iterator[None]:
    """Hold the collector off (:func:`gc.disable`) until the last of the overlapping holds
    ends, then give it back as it was at the first (enabled only when it was enabled)."""
    global _held, _resume
    if _held == 0:
        _resume = gc.isenabled()
        gc.disable()
    _held += 1
    try:
        yield
    finally:
        _held -= 1
        if _held == 0 and _resume:
            gc.enable()
