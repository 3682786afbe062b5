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

    async def run(self, specs: Iterable[QuerySpec]) -> dict[str, QueryResult]:
        """Run every spec concurrently; results by key (duplicate queries run once)."""
        spec_list = list(specs)
        unique: dict[tuple[str, str, datetime | None, datetime, float], QuerySpec] = {}
        for s in spec_list:
            unique.setdefault((s.query, s.kind, s.start, s.end, s.step_s), s)
        results = await asyncio.gather(*(self.run_one(s) for s in unique.values()))
        by_query = {
            (r.spec.query, r.spec.kind, r.spec.start, r.spec.end, r.spec.step_s): r for r in results
        }
        out: dict[str, QueryResult] = {}
        for s in spec_list:
            r = by_query[(s.query, s.kind, s.start, s.end, s.step_s)]
            out[s.key] = r if r.spec.key == s.key else r.model_copy(update={"spec": s})
        return out
