"""Recording plans: what ``cockpit record`` (and the demo build) asks the sources for.

A plan is ``async def plan(ctx: AppContext, start: datetime, end: datetime) -> None`` that
makes, through ``ctx.sources``, the same calls a screen or panel makes for that window.
The recorder tees every call into the evidence bundle, so ``cockpit --replay`` can answer
those calls offline. Register a plan from the module that owns the screen::

    from cockpit.recording import register_plan

    @register_plan("golden_signals")
    async def record_golden_signals(ctx, start, end):
        await ctx.sources.metrics.range(QUERY, start, end, 15)

or, for a module that is not imported otherwise, under the entry-point group
``cockpit.plans`` (``name = "module:function"``). Plans should catch
:class:`SourceError` per call (:func:`quietly` does): a failing query is recorded and must
not stop the rest of the plan.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar, overload

from cockpit.context import AppContext
from cockpit.sources.base import SourceError, Sources
from cockpit.sources.bundle import CallTally, call_tally

Plan = Callable[[AppContext, datetime, datetime], Awaitable[None]]
PLAN_GROUP = "cockpit.plans"
_PLANS: dict[str, Plan] = {}
_P = TypeVar("_P", bound=Plan)


@overload
def register_plan(name: str) -> Callable[[_P], _P]: ...
@overload
def register_plan(name: str, fn: _P) -> _P: ...


def register_plan(name: str, fn: _P | None = None) -> Any:
    """Register ``fn`` as the plan ``name`` (also usable as a decorator).

    Raises:
        ValueError: when another function already holds the name.
    """

    def deco(f: _P) -> _P:
        if name in _PLANS and _PLANS[name] is not f:
            raise ValueError(f"recording plan {name!r} is already registered")
        _PLANS[name] = f
        return f

    return deco(fn) if fn is not None else deco


def plans() -> dict[str, Plan]:
    """Every registered plan, including the ``cockpit.plans`` entry points."""
    from importlib.metadata import entry_points

    for ep in entry_points(group=PLAN_GROUP):
        if ep.name not in _PLANS:
            _PLANS[ep.name] = ep.load()
    return dict(_PLANS)


T = TypeVar("T")


async def quietly(coro: Awaitable[T]) -> T | None:
    """Await ``coro``; a :class:`SourceError` (already recorded) gives ``None``."""
    try:
        return await coro
    except SourceError:
        return None


@dataclass
class PlanResult:
    """How one plan went.

    Attributes:
        name: Plan name.
        ok: Finished without raising.
        error: What went wrong (exception type and message, or the timeout).
        seconds: Wall-clock duration.
        calls: The calls it made through the recorded sources, and how each ended.
    """

    name: str
    ok: bool
    error: str = ""
    seconds: float = 0.0
    calls: CallTally = field(default_factory=CallTally)


@dataclass
class RecordReport:
    """What a recording run did."""

    plans: list[PlanResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every plan finished."""
        return all(p.ok for p in self.plans)


async def run_plans(
    ctx: AppContext,
    start: datetime,
    end: datetime,
    *,
    names: Iterable[str] | None = None,
    extra: dict[str, Plan] | None = None,
    concurrency: int = 4,
    timeout_s: float = 120.0,
) -> RecordReport:
    """Run plans concurrently (at most ``concurrency`` at once, each within ``timeout_s``).

    Args:
        names: Plans to run (default all registered).
        extra: Further plans for this run only (the demo build's scenario targets).

    Raises:
        KeyError: an unknown plan name.
    """
    available = plans()
    available.update(extra or {})
    chosen = list(names) if names is not None else list(available)
    for n in chosen:
        if n not in available:
            raise KeyError(f"unknown recording plan {n!r}; known: {', '.join(sorted(available))}")
    sem = asyncio.Semaphore(concurrency)

    async def one(name: str) -> PlanResult:
        async with sem:
            tally = CallTally()
            call_tally.set(tally)  # this task's context: the plan's calls count here
            t0 = time.perf_counter()
            try:
                await asyncio.wait_for(available[name](ctx, start, end), timeout_s)
            except TimeoutError:
                error = f"did not finish within {timeout_s:g} s"
                return PlanResult(name, False, error, time.perf_counter() - t0, tally)
            except Exception as exc:  # a plan's bug must not lose the others' evidence
                error = f"{type(exc).__name__}: {exc}"
                return PlanResult(name, False, error, time.perf_counter() - t0, tally)
            return PlanResult(name, True, "", time.perf_counter() - t0, tally)

    results = await asyncio.gather(*(one(n) for n in chosen))
    return RecordReport(list(results))


# -- the built-in plan: raw series of the serving, GPU, Kubernetes and gateway families ----

FAMILY_PREFIXES = (
    "vllm:",
    "sglang:",
    "tgi_",
    "nv_inference_",
    "nv_gpu_",
    "DCGM_",
    "pytorch_cuda_memory_",
    "nginx_ingress_controller_requests",
    "nginx_ingress_controller_request_duration_seconds",
    "nginx_ingress_controller_response_duration_seconds",
    "envoy_cluster_upstream_rq",
    "kube_pod_info",
    "kube_pod_owner",
    "kube_pod_labels",
    "kube_pod_status_",
    "kube_pod_container_status_",
    "kube_pod_container_resource_requests",
    "kube_replicaset_owner",
    "kube_deployment_",
    "kube_node_",
    "ALERTS",
)
"""Metric name prefixes the ``metric_families`` plan records (matched against
``metric_names``, so only what the target exposes is queried)."""

CLUSTER_SCOPED = ("kube_node_", "ALERTS")
"""Families recorded without the namespace filter (nodes, alerts of any namespace)."""

MAX_POINTS = 360
"""Points per series the plan aims for; the step grows with the window (≥ 15 s)."""

_NAME_RE = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")


def plan_step(start: datetime, end: datetime) -> float:
    """The step for a window: ``window / MAX_POINTS`` rounded up to 15 s, at least 15 s."""
    seconds = max(1.0, (end - start).total_seconds())
    step = max(15.0, seconds / MAX_POINTS)
    return float(int(-(-step // 15) * 15))


def family_selector(name: str, namespace: str) -> str:
    """``name{namespace="ns"}`` for namespaced families, ``name`` otherwise."""
    if namespace and not name.startswith(CLUSTER_SCOPED):
        return f'{name}{{namespace="{namespace}"}}'
    return name


@register_plan("metric_families")
async def record_metric_families(ctx: AppContext, start: datetime, end: datetime) -> None:
    """Every series of the serving/GPU/Kubernetes/gateway families, over the window and
    over the same window one day earlier (the handbook's one-day baseline)."""
    metrics = ctx.sources.metrics
    if metrics is None:
        return
    names = await quietly(metrics.metric_names(end)) or []
    wanted = [n for n in names if n.startswith(FAMILY_PREFIXES) and _NAME_RE.match(n)]
    ns = ctx.settings.service.namespace
    step = plan_step(start, end)
    day = timedelta(days=1)
    calls = []
    for name in wanted:
        sel = family_selector(name, ns)
        calls.append(quietly(metrics.range(sel, start, end, step)))
        calls.append(quietly(metrics.range(sel, start - day, end - day, step)))
    await asyncio.gather(*calls)


def recordable(sources: Sources) -> dict[str, Any]:
    """The present sources by field name (``metrics``, ``kube``, ``gpu``, ``alerts``)."""
    return {
        n: getattr(sources, n)
        for n in ("metrics", "kube", "gpu", "alerts")
        if getattr(sources, n) is not None
    }
