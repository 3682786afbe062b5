"""Snapshots of the pod scheduling panel against the local API server: the capacity case
(GPU nodes first, an unhealthy GPU, a cordoned node, quota and Kueue findings) in English,
and the untolerated-taint case (pend-03) in Chinese."""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from panel_host import PanelHost

from cockpit.clock import Clock
from cockpit.config import Settings
from cockpit.context import AppContext
from cockpit.plugins.scheduling import SchedulingPanel
from cockpit.sources.base import Sources
from cockpit.sources.kubernetes import KubeSource
from tests.backends.kube_api import _only_reads_sent, kube_api, kubeconfig  # noqa: F401
from tests.fixtures.kube.objects import T0

SIZE = (200, 60)


class OncePanel(SchedulingPanel):
    """Fetches once (no poll timer in a snapshot)."""

    POLL_INTERVAL: ClassVar[float | None] = None


def _app(kubeconfig: Path, cluster: str, lang: str) -> PanelHost:  # noqa: F811
    ctx = AppContext(
        settings=Settings(),
        sources=Sources(kube=KubeSource(kubeconfig=kubeconfig, context=cluster, timeout_s=5)),
        clock=Clock(frozen_at=T0 + timedelta(minutes=30)),
        lang=lang,
    )
    return PanelHost(ctx, OncePanel)


async def _loaded(pilot: Any) -> None:
    panel = pilot.app.query_one(OncePanel)
    for _ in range(200):
        if panel.data is not None or panel.failure is not None:
            break
        await pilot.pause(0.05)
    await pilot.pause()


def test_scheduling_capacity_en(snap_compare: Any, kubeconfig: Path) -> None:  # noqa: F811
    assert snap_compare(_app(kubeconfig, "capacity", "en"), terminal_size=SIZE, run_before=_loaded)


def test_scheduling_taint_zh(snap_compare: Any, kubeconfig: Path) -> None:  # noqa: F811
    assert snap_compare(_app(kubeconfig, "pend-03", "zh"), terminal_size=SIZE, run_before=_loaded)
