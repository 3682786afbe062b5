"""Run many PromQL queries at once: a concurrency limit that adapts to how the server
answers, a timeout per query, partial results — one slow or failing query never blocks or
spoils the others — and each query sent once per evaluation time (answers are kept by
query, kind, bounds and step, and shared by every step that asks for them)."""

from __future__ import annotations

import asyncio
import math
import time
from collections import OrderedDict
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
        kind: ``range``, ``instant``, or ``samples`` (the raw samples of a range selector
            evaluated at ``end``, as series: :meth:`MetricsSource.samples`).
        start, end: Range bounds (``end`` is the evaluation time of an instant query).
        step_s: Range resolution in seconds.
    """

    model_config = ConfigDict(frozen=True)

    key: str
    query: str
    kind: Literal["range", "instant", "samples"] = "range"
    start: datetime | None = None
    end: datetime
    step_s: float = 60.0


class QueryResult(BaseModel):
    """The outcome of one :class:`QuerySpec`: series (range, samples), vector (instant) or
    failure.

    ``elapsed_s`` is the query's own duration, from sending it to its answer (seconds);
    ``wait_s`` the time it waited for a free slot under the concurrency limit before it
    was sent (seconds).
    """

    spec: QuerySpec
    series: list[Series] = Field(default_factory=list)
    vector: list[InstantVector] = Field(default_factory=list)
    failure: SourceFailure | None = None
    elapsed_s: float = 0.0
    wait_s: float = 0.0

    @property
    def ok(self) -> bool:
        """True when the query answered (possibly with no series)."""
        return self.failure is None


Ident = tuple[str, str, datetime | None, datetime, float]
"""What makes two specs the same query: PromQL, kind, start, end (the evaluation time)
and step."""


def ident_of(spec: QuerySpec) -> Ident:
    """The identity of ``spec``'s query (its key left out)."""
    return (spec.query, spec.kind, spec.start, spec.end, spec.step_s)


class AdaptiveLimit:
    """How many queries may be in flight at once, adapted to the server's latency.

    A gradient rule (Netflix concurrency-limits' ``Gradient2``): each answer's own
    duration is compared with a slow average of the previous ones; while answers come
    back no slower than :attr:`TOLERANCE` times that average the limit grows by about its
    square root per answer (up to ``maximum``), and when they slow down — the server is
    queueing or out of CPU — it shrinks in proportion (at most by half per answer,
    never below 1; the slow average then catches up, and a latency that stays at its new
    level lets the limit grow again, probing). A distant server whose answers are slow but steady keeps a high
    limit; only a latency that *climbs* lowers it.

    Args:
        maximum: The ceiling (``settings.prometheus.max_concurrency``).
        initial: The starting limit (default: :data:`INITIAL`, at most ``maximum``).
    """

    INITIAL = 256
    """Starting limit: the default ceiling of ``max_concurrency`` (256). A default
    Prometheus evaluates 20 queries at once (``--query.max-concurrency``) and queues the
    rest, which costs a distant client nothing next to a round trip, whereas a lower start
    held an analysis' queries at the client for whole round trips until the limit had
    grown (``make bench``'s ``bench_analyze``, 250 ms away: its 167 queries went in three
    waves under a start of 64, 20 at a time under one of 20). A server that slows under
    them lowers it at once."""
    TOLERANCE = 1.5
    """An answer up to 1.5× the average duration is not yet a slowdown."""
    LONG_ALPHA = 0.1
    """Weight of each answer in the slow average (about the last 10 answers)."""
    SMOOTHING = 0.3
    """Share of each step taken toward the newly computed limit."""

    def __init__(self, maximum: int, initial: int | None = None) -> None:
        self.maximum = max(1, maximum)
        self.limit = float(min(self.maximum, initial or self.INITIAL))
        self.long_s: float | None = None
        self.lowest = self.limit

    def allowed(self) -> int:
        """Queries that may be in flight now (≥ 1)."""
        return max(1, int(self.limit))

    def observe(self, own_s: float) -> None:
        """Adapt to one answer's own duration (seconds)."""
        if own_s <= 0 or not math.isfinite(own_s):
            return
        if self.long_s is None:
            self.long_s = own_s
        gradient = max(0.5, min(1.0, self.TOLERANCE * self.long_s / own_s))
        # Steady: grow by the limit's square root; slower: shrink in proportion.
        target = self.limit + math.sqrt(self.limit) if gradient >= 1.0 else self.limit * gradient
        self.limit = (1 - self.SMOOTHING) * self.limit + self.SMOOTHING * target
        self.limit = max(1.0, min(float(self.maximum), self.limit))
        self.lowest = min(self.lowest, self.limit)
        self.long_s += self.LONG_ALPHA * (own_s - self.long_s)


class RunnerStats(BaseModel):
    """What a runner sent, for ``analyze --json``'s ``timing``.

    Attributes:
        sent: Queries sent to the server.
        shared: Asks answered by a query already sent or in flight (not sent again).
        own_s: Sum of the sent queries' own durations (seconds).
        wait_s: Sum of the time they waited for a slot under the limit (seconds).
        slowest_s, slowest_query: The slowest query's own duration and its PromQL.
        log: ``(PromQL, kind, own_s, wait_s, ok)`` of each sent query, in the order
            their answers arrived.
    """

    sent: int = 0
    shared: int = 0
    own_s: float = 0.0
    wait_s: float = 0.0
    slowest_s: float = 0.0
    slowest_query: str = ""
    log: list[tuple[str, str, float, float, bool]] = Field(default_factory=list)

    def since(self, sent: int, shared: int) -> RunnerStats:
        """What was sent and shared after the runner had sent ``sent`` and shared
        ``shared`` queries."""
        out = RunnerStats(shared=self.shared - shared)
        for entry in self.log[sent:]:
            out.count(*entry)
        return out

    def add(self, res: QueryResult) -> None:
        """Count one sent query's result."""
        self.count(res.spec.query, res.spec.kind, res.elapsed_s, res.wait_s, res.ok)

    def count(self, query: str, kind: str, own_s: float, wait_s: float, ok: bool) -> None:
        """Count one sent query: its PromQL, kind, own duration, wait and outcome."""
        self.sent += 1
        self.own_s += own_s
        self.wait_s += wait_s
        if own_s >= self.slowest_s:
            self.slowest_s, self.slowest_query = own_s, query
        self.log.append((query, kind, own_s, wait_s, ok))


MEMO_MAX = 2048
"""Answers kept for reuse (the oldest are dropped first); a screen asks ~30–130."""


class QueryRunner:
    """Runs queries against one :class:`MetricsSource` under an adaptive limit.

    A query identical to one already answered or in flight (same PromQL, kind, bounds,
    evaluation time and step: :func:`ident_of`) is not sent again: its answer is shared,
    so the steps and ``analyze`` that ask for the same query send it once. Failed answers
    are not kept (the next ask sends it again); :meth:`forget` drops the kept ones (a
    refresh).

    Args:
        source: The metrics source.
        max_concurrency: The most queries in flight at once
            (``settings.prometheus.max_concurrency``); the limit in force adapts below it
            (:class:`AdaptiveLimit`).
        timeout_s: Upper bound per query in seconds (``settings.prometheus.timeout_s``); a
            query past it becomes a ``timeout`` failure for that key only.
    """

    def __init__(self, source: MetricsSource, max_concurrency: int = 256, timeout_s: float = 10.0):
        self.source = source
        self.timeout_s = timeout_s
        self.limit = AdaptiveLimit(max_concurrency)
        self.stats = RunnerStats()
        self.in_flight = 0
        self.peak_in_flight = 0
        self._waiters: list[asyncio.Future[None]] = []
        self._memo: OrderedDict[Ident, asyncio.Task[QueryResult]] = OrderedDict()
        self._users: dict[asyncio.Task[QueryResult], int] = {}

    async def _acquire(self) -> None:
        while self.in_flight >= self.limit.allowed():
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(fut)
            try:
                await fut
            finally:
                if fut in self._waiters:
                    self._waiters.remove(fut)
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)

    def _release(self) -> None:
        self.in_flight -= 1
        free = self.limit.allowed() - self.in_flight
        for fut in list(self._waiters[: max(0, free)]):
            self._waiters.remove(fut)
            if not fut.done():
                fut.set_result(None)

    async def run_one(self, spec: QuerySpec) -> QueryResult:
        """Send one query (never shared); never raises for backend failures (they become
        ``failure``)."""
        t_wait = time.perf_counter()
        await self._acquire()
        t0 = time.perf_counter()
        wait = t0 - t_wait
        try:
            res = await self._send(spec, t0)
        finally:
            self._release()
        res.wait_s = wait
        if res.ok:
            self.limit.observe(res.elapsed_s)
        self.stats.add(res)
        return res

    async def _send(self, spec: QuerySpec, t0: float) -> QueryResult:
        try:
            if spec.kind == "range":
                start = spec.start or spec.end
                series = await asyncio.wait_for(
                    self.source.range(spec.query, start, spec.end, spec.step_s),
                    timeout=self.timeout_s,
                )
                return QueryResult(spec=spec, series=series, elapsed_s=time.perf_counter() - t0)
            if spec.kind == "samples":
                series = await asyncio.wait_for(
                    self.source.samples(spec.query, spec.end), timeout=self.timeout_s
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

    def _shared(self, spec: QuerySpec) -> asyncio.Task[QueryResult]:
        """The task answering ``spec``'s query: one kept or in flight, or a new one."""
        ident = ident_of(spec)
        task = self._memo.get(ident)
        loop = asyncio.get_running_loop()
        usable = task is not None and task.get_loop() is loop and not task.cancelled()
        if task is not None and usable and (not task.done() or _answered(task)):
            self._memo.move_to_end(ident)
            self.stats.shared += 1
            return task
        task = loop.create_task(self.run_one(spec))
        self._memo[ident] = task
        task.add_done_callback(lambda t, i=ident: self._settled(i, t))  # type: ignore[misc]
        while len(self._memo) > MEMO_MAX:
            self._memo.popitem(last=False)
        return task

    def _settled(self, ident: Ident, task: asyncio.Task[QueryResult]) -> None:
        """Keep a successful answer; drop a failed or cancelled one."""
        if not _answered(task) and self._memo.get(ident) is task:
            del self._memo[ident]

    def forget(self) -> None:
        """Drop the kept answers (queries in flight are still shared): the next ask of
        each query sends it again."""
        for ident, task in list(self._memo.items()):
            if task.done():
                del self._memo[ident]

    def start(self, specs: Iterable[QuerySpec]) -> dict[str, asyncio.Future[QueryResult]]:
        """Start every spec now; per key, a future of its result (a query already answered
        or in flight is shared, not sent again). Lets a caller work on each answer as it
        arrives.

        The caller owns the futures: await them, or cancel the ones it gives up on
        (:func:`cancel_all`); cancelling one never cancels the query another caller
        shares. They never raise for backend failures.
        """
        return {s.key: asyncio.ensure_future(self._as_key(self._shared(s), s)) for s in specs}

    async def _as_key(self, task: asyncio.Task[QueryResult], spec: QuerySpec) -> QueryResult:
        """The result of a shared query under the spec (key) that asked for it. A caller
        that gives up leaves the query to the others; the query is cancelled when the
        last caller waiting for it gives up."""
        self._users[task] = self._users.get(task, 0) + 1
        try:
            res = await asyncio.shield(task)
        except asyncio.CancelledError:
            if self._users.get(task, 1) <= 1 and not task.done():
                task.cancel()  # the last caller waiting for it gave up
            raise
        finally:
            left = self._users.get(task, 1) - 1
            if left > 0:
                self._users[task] = left
            else:
                self._users.pop(task, None)
        return res if res.spec is spec else res.model_copy(update={"spec": spec})

    async def run(self, specs: Iterable[QuerySpec]) -> dict[str, QueryResult]:
        """Run every spec concurrently; results by key (a query is sent once)."""
        futures = self.start(specs)
        try:
            await asyncio.gather(*futures.values())
        finally:
            cancel_all(futures)
        return {key: f.result() for key, f in futures.items()}


def _answered(task: asyncio.Task[QueryResult]) -> bool:
    """A finished task whose query answered (not cancelled, not failed)."""
    return not task.cancelled() and task.exception() is None and task.result().ok


def cancel_all(futures: dict[str, asyncio.Future[QueryResult]]) -> None:
    """Cancel the futures of :meth:`QueryRunner.start` that have not finished."""
    for f in futures.values():
        f.cancel()
