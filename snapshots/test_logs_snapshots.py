"""Snapshots of the layered-logs panel against the local API server (cluster ``logs``):
the crash-looping suspect, its cohort and the gateway, with the incident's start at T0,
in Chinese and English."""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from panel_host import PanelHost

from cockpit.clock import Clock
from cockpit.config import Settings
from cockpit.context import AppContext
from cockpit.incident import Incident
from cockpit.plugins.layered_logs import LayeredLogsPanel
from cockpit.session import IncidentSession
from cockpit.sources.base import Sources
from cockpit.sources.kubernetes import KubeSource
from cockpit.store import IncidentStore
from tests.backends.kube_api import _only_reads_sent, kube_api, kubeconfig  # noqa: F401
from tests.fixtures.kube import layered_logs as fx
from tests.fixtures.kube.objects import T0

SIZE = (200, 64)


def _app(kubeconfig: Path, tmp_path: Path, lang: str) -> PanelHost:  # noqa: F811
    inc = Incident(lang=lang)
    inc.service.namespace = fx.NS
    inc.service.selector = "app=vllm"
    inc.times.start = T0
    settings = Settings()
    settings.service.namespace = fx.NS
    settings.service.selector = "app=vllm"
    ctx = AppContext(
        settings=settings,
        sources=Sources(kube=KubeSource(kubeconfig=kubeconfig, context="logs", timeout_s=5)),
        clock=Clock(frozen_at=T0 + timedelta(minutes=30)),
        lang=lang,
        session=IncidentSession(IncidentStore(tmp_path / "state"), inc),
    )
    ctx.metrics.suspect = (fx.SUSPECT, "pod")
    return PanelHost(ctx, LayeredLogsPanel)


async def _loaded(pilot: Any) -> None:
    panel = pilot.app.query_one(LayeredLogsPanel)
    for _ in range(200):
        if panel.data is not None or panel.failure is not None:
            break
        await pilot.pause(0.05)
    await pilot.pause()


def test_layered_logs_en(snap_compare: Any, kubeconfig: Path, tmp_path: Path) -> None:  # noqa: F811
    app = _app(kubeconfig, tmp_path, "en")
    assert snap_compare(app, terminal_size=SIZE, run_before=_loaded)


def test_layered_logs_zh(snap_compare: Any, kubeconfig: Path, tmp_path: Path) -> None:  # noqa: F811
    app = _app(kubeconfig, tmp_path, "zh")
    assert snap_compare(app, terminal_size=SIZE, run_before=_loaded)
