"""Recording plan of the Kubernetes panels: the Pending analysis (scheduling panel, step
E) and the changes/timeline reads (steps A and B) for the service's namespace, so that
``cockpit --replay`` shows the same panels offline. Registered under the
``cockpit.plans`` entry-point group (see pyproject).

The panels ask the source for the same calls with the same arguments (namespace, label
selector); the window only shapes the analysis, not the requests, except for the pod logs
of rollouts inside it (read for the warm-up check)."""

from __future__ import annotations

import contextlib
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from cockpit.sources.base import SourceError

if TYPE_CHECKING:
    from cockpit.context import AppContext


def _scope(ctx: AppContext) -> tuple[str | None, str]:
    """Namespace and selector exactly as the panels resolve them."""
    if ctx.session is not None and ctx.session.incident.service.namespace:
        svc = ctx.session.incident.service
        return svc.namespace, svc.selector
    return ctx.settings.service.namespace or None, ctx.settings.service.selector


async def record_kube(ctx: AppContext, start: datetime, end: datetime) -> None:
    """Pending pods with their node table, then changes, restarts and events."""
    kube = ctx.sources.kube
    if kube is None:
        return
    from cockpit.collect.kube_gather import gather_changes, gather_pending

    ns, selector = _scope(ctx)
    # A failure is recorded in the bundle; the other part still runs.
    with contextlib.suppress(SourceError):
        await gather_pending(kube, None, ns)
    with contextlib.suppress(SourceError):
        await gather_changes(kube, start, end, ns, selector)


CHANGES_SINCE = timedelta(hours=24)
"""The window ``cockpit changes`` reads by default (its ``--since``)."""


async def record_changes(ctx: AppContext, start: datetime, end: datetime) -> None:
    """What ``cockpit changes`` reads by default: the last 24 h before the recording's end,
    from Kubernetes and from the metrics history, merged."""
    from cockpit.collect.history import gather_all_changes

    _ns, selector = _scope(ctx)
    with contextlib.suppress(SourceError):
        await gather_all_changes(ctx, end - CHANGES_SINCE, end, None, selector)
