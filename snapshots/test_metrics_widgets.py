"""Snapshots of the metrics widgets (C drilldown, D scope, E cohort, A golden signals) on a
replayed evidence bundle of the ``thermal_replica`` scenario: the bundle is recorded once
per session from a real Prometheus, then every snapshot reads it offline (frozen clock)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult

from cockpit.config import ServiceSettings, Settings
from cockpit.context import AppContext
from cockpit.incident import Mode
from cockpit.models import from_epoch
from cockpit.sources.base import Sources
from testkit import make_ctx

COCKPIT = str(Path(sys.executable).with_name("cockpit"))


@pytest.fixture(scope="session")
def thermal_bundle(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, int]]:
    from cockpit.scenarios import get_scenario
    from cockpit.scenarios.promserver import start

    with start(get_scenario("thermal_replica"), tmp_path_factory.mktemp("prom-thermal")) as srv:
        yield _record(srv, tmp_path_factory.mktemp("bundle") / "thermal.jsonl.gz")


def _record(srv: Any, out: Path) -> tuple[Path, int]:
    at = datetime.fromtimestamp(srv.scenario.now, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    proc = subprocess.run(
        [
            COCKPIT,
            "record",
            "--prometheus-url",
            srv.url,
            "-n",
            "llm",
            "--at",
            at,
            "--window",
            "1h",
            "-o",
            str(out),
            "--plan",
            "metrics_drilldown",
            "--plan",
            "metrics_golden",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={
            "PATH": "/usr/bin:/bin",
            "COCKPIT_CONFIG": "/nonexistent/config.toml",
            "LANG": "C.UTF-8",
        },
    )
    assert proc.returncode == 0, proc.stderr
    return out, srv.scenario.now


class Host(App[None]):
    def __init__(self, ctx: AppContext, make: Callable[[AppContext], Any]) -> None:
        super().__init__()
        self.ctx = ctx
        self.make = make

    def compose(self) -> ComposeResult:
        yield self.make(self.ctx)


def _app(
    bundle: tuple[Path, int], tmp_path: Path, lang: str, make: Callable[[AppContext], Any]
) -> Host:
    from cockpit.sources.bundle import open_replay

    path, now = bundle
    replay = open_replay(path)
    settings = Settings(service=ServiceSettings(namespace="llm"))
    ctx = make_ctx(
        tmp_path,
        lang=lang,
        sources=Sources(metrics=replay.source("metrics")),  # type: ignore[arg-type]
        frozen_at=from_epoch(now),
        settings=settings,
        mode=Mode.REPLAY,
    )
    ctx.metrics.window_span = "1h"
    return Host(ctx, make)


async def _loaded(pilot: Any) -> None:
    for _ in range(400):
        w = pilot.app.query_one("#metrics-under-test")
        if getattr(w, "data", None) is not None or getattr(w, "failure", None) is not None:
            break
        await pilot.pause(0.05)
    await pilot.pause()


def test_drilldown_view_en(
    snap_compare: Any, thermal_bundle: tuple[Path, int], tmp_path: Path
) -> None:
    from cockpit.ui.drilldown_view import DrilldownView

    app = _app(thermal_bundle, tmp_path, "en", lambda c: DrilldownView(c, id="metrics-under-test"))
    assert snap_compare(app, terminal_size=(170, 60), run_before=_loaded)


def test_scope_view_zh(snap_compare: Any, thermal_bundle: tuple[Path, int], tmp_path: Path) -> None:
    from cockpit.ui.scope_view import ScopeView

    app = _app(thermal_bundle, tmp_path, "zh", lambda c: ScopeView(c, id="metrics-under-test"))
    assert snap_compare(app, terminal_size=(150, 40), run_before=_loaded)


def test_cohort_panel_en(
    snap_compare: Any, thermal_bundle: tuple[Path, int], tmp_path: Path
) -> None:
    from cockpit.plugins.cohort import CohortPanel

    app = _app(thermal_bundle, tmp_path, "en", lambda c: CohortPanel(c, id="metrics-under-test"))
    assert snap_compare(app, terminal_size=(130, 40), run_before=_loaded)


def test_golden_panel_zh(
    snap_compare: Any, thermal_bundle: tuple[Path, int], tmp_path: Path
) -> None:
    from cockpit.plugins.golden_signals import GoldenSignalsPanel

    app = _app(
        thermal_bundle, tmp_path, "zh", lambda c: GoldenSignalsPanel(c, id="metrics-under-test")
    )
    assert snap_compare(app, terminal_size=(130, 30), run_before=_loaded)
