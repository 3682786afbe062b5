"""Snapshots of steps D and E and of the GPU panel on two of the six incidents served from
a real Prometheus (6 h, no Kubernetes): the GPU lost mid-window and the release that
changed output length. Deterministic: the generated history is the same on every run,
the clock is frozen at the scenario's "now" and panels fetch once."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# The Prometheus helpers live under tests/backends (importable as ``tests`` when the whole
# suite runs; also when this folder is run on its own).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cockpit.app import CockpitApp
from cockpit.config import PrometheusSettings, ServiceSettings, Settings
from cockpit.context import AppContext
from cockpit.incident import Incident, ServiceScope
from cockpit.models import from_epoch
from cockpit.scenarios import get_scenario
from cockpit.scenarios.promserver import PromServer, start
from cockpit.sources.base import Sources
from cockpit.sources.prometheus import PrometheusSource
from cockpit.ui.plugins import load_panels
from testkit import fetch_once, make_ctx, settle

INCIDENTS = ("gpu_lost", "bad_release")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], PromServer]]:
    servers: dict[str, PromServer] = {}

    def get(name: str) -> PromServer:
        if name not in servers:
            servers[name] = start(get_scenario(name), tmp_path_factory.mktemp(f"snap-{name}"))
        return servers[name]

    yield get
    for srv in servers.values():
        srv.stop()


def _ctx(srv: PromServer, tmp_path: Path) -> AppContext:
    sc = srv.scenario
    ns, dep = sc.scope["namespace"], sc.scope["deployment"]
    settings = Settings(
        prometheus=PrometheusSettings(url=srv.url),
        service=ServiceSettings(namespace=ns, deployment=dep),
    )
    now = from_epoch(sc.now)
    incident = Incident(
        id="inc-0000snap",
        created_at=now,
        updated_at=now,
        service=ServiceScope(namespace=ns, deployment=dep),
    )
    ctx = make_ctx(
        tmp_path,
        lang="en",
        sources=Sources(
            metrics=PrometheusSource(settings.prometheus),
            missing={"kube": "not configured", "gpu": "no NVML on this host"},
        ),
        frozen_at=now,
        settings=settings,
        incident=incident,
    )
    ctx.panels = load_panels()
    return ctx


_loaded = settle


@pytest.fixture(autouse=True)
def _fetch_once(monkeypatch: pytest.MonkeyPatch) -> None:
    fetch_once(monkeypatch)


@pytest.mark.parametrize("name", INCIDENTS)
@pytest.mark.parametrize("step", ["D", "E"])
def test_incident_step(
    snap_compare: Any, served: Callable[[str], PromServer], tmp_path: Path, name: str, step: str
) -> None:
    app = CockpitApp(ctx=_ctx(served(name), tmp_path), start_step=step)
    assert snap_compare(app, terminal_size=(170, 90), run_before=_loaded)


@pytest.mark.parametrize("name", INCIDENTS)
def test_incident_gpu_panel(
    snap_compare: Any, served: Callable[[str], PromServer], tmp_path: Path, name: str
) -> None:
    from panel_host import PanelHost
    from test_gpu_panel_snapshots import OnceGpuPanel

    assert snap_compare(
        PanelHost(_ctx(served(name), tmp_path), OnceGpuPanel),
        terminal_size=(180, 52),
        run_before=_loaded,
    )


@pytest.mark.parametrize("name", ["large_overload", "large_throttled_gpu"])
def test_large_service_step_d_fits_80x24(
    snap_compare: Any, served: Callable[[str], PromServer], tmp_path: Path, name: str
) -> None:
    """200 replicas, an overload on every one or one throttled GPU: D's headline, its
    evidence cut to what fits (with how many lines more) and its buttons fit one 80×24
    screen."""
    from cockpit.scenarios.large import WINDOW

    ctx = _ctx(served(name), tmp_path)
    ctx.metrics.window_span = WINDOW
    ctx.settings.prometheus.timeout_s = 60  # 38 k series on a shared two-core machine
    app = CockpitApp(ctx=ctx, start_step="D")
    assert snap_compare(app, terminal_size=(80, 24), run_before=_loaded)
