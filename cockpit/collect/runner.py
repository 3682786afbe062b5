"""Run many PromQL queries at once: bounded concurrency, a timeout per query, and partial
results — one slow or failing query never blocks or spoils the others."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from cockpit.models import InstantVector, Series
from cockpit.sources.base import ErrorKind, MetricsSource, SourceError, SourceFailure


class QuerySpec(BaseModel):
    """One query to run.

    Attributes:
        key: Caller's key for the result (``serving.ttft/p99/now``).
        query: PromQL.
        kind: ``range`` or ``instant``.
        start, end: Range bounds (``end`` is the evaluation time of an instant query).
        step_s: Range resolution in seconds.
    """

    model_config = ConfigDict(frozen=True)

    key: str
    query: str
    kind: Literal["range", "instant"] = "range"
    start: datetime | None = None
    end: datetime
    step_s: float = 60.0


class QueryResult(BaseModel):
    """The outcome of one :class:`QuerySpec`: series (range), vector (instant) or failure.

    ``elapsed_s`` is the wall time of this query alone (seconds).
    """

    spec: QuerySpec
    series: list[Series] = Field(default_factory=list)
    vector: list[InstantVector] = Field(default_factory=list)
    failure: SourceFailure | None = None
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        """True when the query answered (possibly with no series)."""
        return self.failure is None


class QueryRunner:
    """Runs queries against one :class:`MetricsSource` with a shared bound.

    Args:
        source: The metrics source.
        max_concurrency: Queries in flight at once (``settings.prometheus.max_concurrency``).
        timeout_s: Upper bound per query in seconds (``settings.prometheus.timeout_s``); a
            query past it becomes a ``timeout`` failure for that key only.
    """

    def __init__(self, source: MetricsSource, max_concurrency: int = 64, timeout_s: float = 10.0):
        self.source = source
        self.timeout_s = timeout_s
        self._sem = asyncio.Semaphore(max_concurrency)

    async def run_one(self, spec: QuerySpec) -> QueryResult:
        """Run one query; never raises for backend failures (they become ``failure``)."""
        async with self._sem:
            t0 = time.perf_counter()
            try:
                if spec.kind == "range":
                    start = spec.start or spec.end
                    series = await asyncio.wait_for(
                        self.source.range(spec.query, start, spec.end, spec.step_s),
                        timeout=self.timeout_s,
                    )
                    return QueryResult(spec=spec, series=series, elapsed_s=time.perf_counter() - t0)
                vector = await asyncio.wait_for(
                    self.source.instant(spec.query, spec.end), timeout=self.timeout_s
                )
                return QueryResult(spec=spec, vector=vector, elapsed_s=time.perf_counter() - t0)
            except SourceError as exc:
                failure = exc.failure
            except TimeoutError:
                failure = SourceFailure(
                    source=getattr(self.source, "name", "prometheus"),
                    kind=ErrorKind.TIMEOUT,
                    message=f"no answer within {self.timeout_s:g} s",
                    detail={"query": spec.query},
                )
            return QueryResult(spec=spec, failure=failure, elapsed_s=time.perf_counter() - t0)

    def start(self, specs: Iterable[QuerySpec]) -> dict[str, asyncio.Future[QueryResult]]:
        """Start every spec now; per key, a future of its result (duplicate queries run
        once). Lets a caller work on each answer as it arrives.

        The caller owns the futures: await them, or cancel the ones it gives up on
        (:func:`cancel_all`). They never raise for backend failures.
        """
        tasks: dict[tuple[str, str, datetime | None, datetime, float], asyncio.Task[QueryResult]]
        tasks = {}
        out: dict[str, asyncio.Future[QueryResult]] = {}
        for s in specs:
            ident = (s.query, s.kind, s.start, s.end, s.step_s)
            task = tasks.get(ident)
            if task is None:
                out[s.key] = tasks[ident] = asyncio.ensure_future(self.run_one(s))
            else:
                out[s.key] = asyncio.ensure_future(_as_key(task, s))
        return out

    async def run(self, specs: Iterable[QuerySpec]) -> dict[str, QueryResult]:
        """Run every spec concurrently; results by key (duplicate queries run once)."""
        futures = self.start(specs)
        try:
            await asyncio.gather(*futures.values())
        finally:
            cancel_all(futures)
        return {key: f.result() for key, f in futures.items()}


async def _as_key(task: asyncio.Task[QueryResult], spec: QuerySpec) -> QueryResult:
    """The result of a duplicate query, under the spec (key) that asked for it."""
    return (await task).model_copy(update={"spec": spec})


def cancel_all(futures: dict[str, asyncio.Future[QueryResult]]) -> None:
    """Cancel the futures of :meth:`QueryRunner.start` that have not finished."""
    for f in futures.values():
        f.cancel()
