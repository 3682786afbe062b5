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

When the hold ends, what the analysis made and still holds (its answers, its report) is
about as many objects again, all in the youngest generation: the first allocation after
:func:`gc.enable` would walk them all (15–20 ms on that incident, after the last answer,
while the user waits). Where nothing else is frozen (the headless commands), they are
moved to the oldest generation without a walk instead (:func:`gc.freeze` then
:func:`gc.unfreeze`, both constant time,
https://docs.python.org/3/library/gc.html#gc.freeze). The app keeps its startup heap
frozen (:mod:`cockpit.ui.heap`), which an unfreeze would give back, so there the collector
is only enabled again.

The cost: a cycle that becomes garbage during the analysis (an asyncio future and its
exception) is freed by the first collection after it (the first full one, where the
objects were moved), not sooner.
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
            promote = gc.get_freeze_count() == 0
            if promote:
                gc.freeze()
            gc.enable()
            if promote:
                gc.unfreeze()
