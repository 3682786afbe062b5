"""Share one collection between screens: C's drilldown feeds D, D's breakdowns feed E.

Results are kept in ``ctx.metrics.results`` by name and window, so moving between steps does not
re-run the same queries; ``refresh=True`` (the user's refresh key) runs them again (and
drops the answers the context's query runner keeps, :meth:`QueryRunner.forget`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from cockpit.collect.base import Window

if TYPE_CHECKING:
    from cockpit.context import AppContext

T = TypeVar("T")


def _key(name: str, window: Window) -> str:
    return f"metrics.cache.{name}.{window.end.timestamp():.0f}.{window.span.total_seconds():.0f}.{window.baseline}"


async def cached(
    ctx: AppContext,
    name: str,
    window: Window,
    make: Callable[[], Awaitable[T]],
    refresh: bool = False,
) -> T:
    """The cached result of ``make()`` for ``(name, window)``; concurrent callers share it."""
    key = _key(name, window)
    slot = ctx.metrics.results.get(key)
    if refresh:
        forget_answers(ctx)
    if refresh or slot is None or slot.cancelled():
        slot = asyncio.ensure_future(make())
        ctx.metrics.results[key] = slot
    try:
        return await asyncio.shield(slot)  # type: ignore[no-any-return]
    except BaseException:
        if slot.done() and (slot.cancelled() or slot.exception() is not None):
            ctx.metrics.results.pop(key, None)
        raise


def forget_answers(ctx: AppContext) -> None:
    """A refresh: drop the answers the context's query runner keeps, so that the next
    ask of each query reaches the server again (:meth:`QueryRunner.forget`)."""
    if ctx.metrics.runner is not None:
        ctx.metrics.runner.forget()


def peek(ctx: AppContext, name: str, window: Window) -> Any:
    """The cached result of ``(name, window)`` when it is already there (``None`` while it
    is still being collected, after it failed, or when it never was): for a caller that
    must not wait (a modal opening at once)."""
    slot = ctx.metrics.results.get(_key(name, window))
    if slot is not None and slot.done() and not slot.cancelled():
        return None if slot.exception() is not None else slot.result()
    return None


def forget(ctx: AppContext, name: str, window: Window) -> None:
    """Drop the cached result of ``(name, window)``: a caller found it unusable (every
    query of it failed), so the next caller queries again instead of sharing it."""
    ctx.metrics.results.pop(_key(name, window), None)


def screen_window(ctx: AppContext) -> Window:
    """The window the screens share (``ctx.metrics.window``; default ``window_span`` to now)."""
    from cockpit.collect.base import make_window
    from cockpit.timeparse import parse_duration

    w = ctx.metrics.window
    if w is not None:
        return w
    kind = ctx.settings.baseline
    span = parse_duration(ctx.metrics.window_span)
    w = make_window(
        ctx.clock.now(), span, "7d" if kind == "7d" else "quiet" if kind == "quiet" else "1d"
    )
    ctx.metrics.window = w
    return w


def set_baseline(ctx: AppContext, kind: str, compared_with: str = "") -> Window:
    """Switch the shared window's baseline (``1d``/``7d``/``quiet``); the incident keeps
    it for ``--resume``. ``compared_with``: the baseline the screens compared with until
    now when it is not the one asked (``quiet`` after a day earlier had no data), which
    the incident's history keeps as the value replaced."""
    w = screen_window(ctx)
    w = w.with_baseline("7d" if kind == "7d" else "quiet" if kind == "quiet" else "1d")
    ctx.metrics.window = w
    if ctx.session is not None:
        ctx.session.keep_baseline(w.baseline, compared_with)
    return w
