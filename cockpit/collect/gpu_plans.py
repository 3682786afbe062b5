"""Recording plan of the GPU panel: the local NVML snapshot (and Xid events) when cockpit
runs on a GPU node, and the DCGM per-GPU snapshot of every node that exports DCGM series,
so that ``cockpit --replay`` shows the same GPU panel offline. Registered under the
``cockpit.plans`` entry-point group (see pyproject)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from cockpit.sources.base import SourceError

if TYPE_CHECKING:
    from cockpit.context import AppContext

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
    for node in nodes[:MAX_NODES]:
        try:
            await dcgm.node_snapshot(node, end)
        except SourceError:
            continue
