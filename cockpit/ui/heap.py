"""The app's startup heap kept out of the cyclic garbage collector while the app runs.

Everything alive once the first step is painted (the modules, Textual's and the app's
screens, the i18n catalogue, the profiles) lives as long as the app. CPython's full
collections walk every tracked object each time, so with a TUI's heap each one costs
tenths of a second — and a screen that reads many answers (step C at 200 replicas parses
tens of thousands of points) triggers them while the user waits for its rows
(``bench/bench_large.py``: 0.1–0.5 s of a step C's CPU). :func:`freeze_startup` moves
them to CPython's permanent generation (:func:`gc.freeze`,
https://docs.python.org/3/library/gc.html#gc.freeze; constant time), so that later
collections walk only what the app made since; :func:`release` gives them back to the
collector as the app ends, so a process that runs several apps (the tests) keeps nothing
of an ended one.

The cost: a reference cycle among the frozen objects that is garbage already (about a
thousand small objects after the first step's frame) or becomes garbage while the app
runs is freed only at :func:`release`. No collection runs first: it would take 50–70 ms
of the event loop just after the first step is painted, while its first answers come in.
"""

from __future__ import annotations

import gc


def freeze_startup() -> int:
    """Freeze every object the collector tracks now.

    Returns:
        How many objects are frozen (:func:`gc.get_freeze_count`), those of an earlier
        call included.
    """
    gc.freeze()
    return gc.get_freeze_count()


def release() -> None:
    """Hand the frozen objects back to the collector (their next full collection frees
    any that became garbage)."""
    gc.unfreeze()
