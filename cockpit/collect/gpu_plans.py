"""Recording plan of the GPU panel: the local NVML snapshot (and Xid events) when cockpit
runs on a GPU node, and the DCGM per-GPU snapshot (and recent past) of every node that
exports DCGM series, so that ``cockpit --replay`` shows the same GPU panel offline. Registered under the
``cockpit.plans`` entry-point group (see pyproject)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from cockpit.sources.base import SourceError

if TYPE_CHECKING:
    from cockpit.collect.history import HistoryReport
    from cockpit.context import AppContext
    from cockpit.models.gpu import GpuNodeSnapshot, XidEvent
    from cockpit.models.messages import Msg
    from cockpit.sources.dcgm import DcgmSource

MAX_NODES = 64
"""Upper bound on the DCGM nodes recorded (each costs a handful of instant queries)."""


async def record_gpu(ctx: AppContext, start: datetime, end: datetime) -> None:
    """NVML snapshot + Xid events (local), DCGM node snapshots (through Prometheus)."""
    gpu = ctx.sources.gpu
    if gpu is not None:
        try:
            await gpu.snapshot()
            await gpu.xid_events()
        except SourceError:
            pass  # recorded as a failure; the DCGM part still runs
    metrics = ctx.sources.metrics
    if metrics is None:
        return
    from cockpit.sources.dcgm import DcgmSource

    dcgm = DcgmSource(metrics, clock=lambda: end)
    try:
        nodes = await dcgm.nodes(end)
    except SourceError:
        return
    from cockpit.analysis.gpu_text import SPARK_METRICS

    for node in nodes[:MAX_NODES]:
        try:
            await dcgm.node_snapshot(node, end)
            # The GPU panel starts its sparklines with the node's recent past.
            await dcgm.history(node, SPARK_METRICS, end)
        except SourceError:
            continue


def picked_note_key(snap: GpuNodeSnapshot | None) -> str:
    """The note of a node picked by :func:`worst_node`: ``gpu.node_worst`` when one of its
    GPUs looks unhealthy (``bad``, ``lost`` or ``warn``), ``gpu.node_all_ok`` when none of
    the nodes' GPUs does (the first node is then shown, never called the worst)."""
    from cockpit.analysis.gpu_health import Level, why_gpu

    if snap is None:
        return "gpu.node_worst"
    unhealthy = (Level.LOST, Level.BAD, Level.WARN)
    if any(why_gpu(g, snap.gpus).level in unhealthy for g in snap.gpus):
        return "gpu.node_worst"
    return "gpu.node_all_ok"


async def worst_node(dcgm: DcgmSource, nodes: list[str], at: datetime) -> GpuNodeSnapshot | None:
    """The snapshot of the node whose GPUs look worst: most ``bad``/``lost`` GPUs, then
    ``warn``, then ``info`` (:func:`cockpit.analysis.gpu_health.why_gpu`), the first by
    name on a tie; among the first :data:`MAX_NODES` nodes, read concurrently. A node that
    cannot be read is left out; ``None`` when none could be.
    """
    import asyncio

    from cockpit.analysis.gpu_health import Level, why_gpu
    from cockpit.models.gpu import GpuNodeSnapshot as Snapshot

    rank = {Level.LOST: 3, Level.BAD: 3, Level.WARN: 2, Level.INFO: 1}
    got = await asyncio.gather(
        *(dcgm.node_snapshot(n, at) for n in nodes[:MAX_NODES]), return_exceptions=True
    )
    best: tuple[tuple[int, ...], GpuNodeSnapshot] | None = None
    for snap in got:
        if not isinstance(snap, Snapshot):
            continue  # that node could not be read: the others still count
        levels = [rank.get(why_gpu(g, snap.gpus).level, 0) for g in snap.gpus]
        score = tuple(sorted(levels, reverse=True))
        if best is None or score > best[0]:
            best = (score, snap)
    return best[1] if best else None


async def window_history(ctx: AppContext) -> HistoryReport | None:
    """The screens' window history (shared, cached per window; the GPU panel and
    ``cockpit gpus`` read GPUs that went silent from it), or None when Prometheus could
    not be read: the node's GPUs now still show."""
    from cockpit.collect.cache import screen_window
    from cockpit.collect.history import collect_history

    try:
        return await collect_history(ctx, screen_window(ctx))
    except SourceError:
        return None


def silent_gpu_node(hist: HistoryReport | None) -> str:
    """The first node (by name) with a GPU that went silent in the window, or ``""``: the
    node to show when none was asked for (a lost GPU outranks a busy one)."""
    nodes = sorted({g.node for g in hist.inventory.silent_gpus() if g.node} if hist else set())
    return nodes[0] if nodes else ""


def add_window_losses(
    snap: GpuNodeSnapshot, hist: HistoryReport | None, node: str
) -> tuple[list[Msg], list[XidEvent]]:
    """Add to ``snap`` the GPUs of ``node`` that reported earlier in the window and are
    silent now (marked lost), and return ``(one line per GPU added, the Xid events the
    window saw on the node)``; ``([], [])`` without a history."""
    from cockpit.analysis.history import with_lost_gpus, xid_events

    if hist is None:
        return [], []
    return with_lost_gpus(snap, hist.inventory), xid_events(hist.inventory, hist.items, node)
