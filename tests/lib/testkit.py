"""Building a deterministic :class:`AppContext` for Pilot and snapshot tests."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cockpit.clock import Clock
from cockpit.config import Settings
from cockpit.context import AppContext
from cockpit.incident import Incident, Mode, ServiceScope
from cockpit.session import IncidentSession
from cockpit.sources.base import Sources
from cockpit.store import IncidentStore

FROZEN = datetime(2026, 11, 29, 21, 0, tzinfo=UTC)


def make_ctx(
    state_dir: Path,
    *,
    lang: str = "zh",
    sources: Sources | None = None,
    incident: Incident | None = None,
    frozen_at: datetime = FROZEN,
    mode: Mode = Mode.LIVE,
    panels: list[Any] | None = None,
    settings: Settings | None = None,
) -> AppContext:
    """A context with a fixed clock, a real store in ``state_dir`` and a fixed incident id.

    ``panels`` defaults to no plugin panels (pass ``None`` to a real app to load them all
    through entry points by setting ``ctx.panels = None``).
    """
    store = IncidentStore(state_dir)
    inc = incident or Incident(
        id="inc-0000test",
        created_at=frozen_at,
        updated_at=frozen_at,
        service=ServiceScope(namespace="llm", deployment="vllm-qwen", selector="app=vllm"),
    )
    session = IncidentSession(store, inc)
    ctx = AppContext(
        settings=settings or Settings(),
        sources=sources or Sources(missing={"metrics": "not configured in this test"}),
        clock=Clock(frozen_at=frozen_at),
        lang=lang,
        mode=mode,
        session=session,
    )
    ctx.panels = panels if panels is not None else []
    return ctx


def scenario_ctx(
    srv: Any, state_dir: Path, *, lang: str = "en", timeout_s: float = 10.0, **kw: Any
) -> AppContext:
    """A context reading a served scenario (``srv``: a ``PromServer``) in its scope, with
    the clock frozen at the scenario's "now" (``kw``: more :func:`make_ctx` arguments)."""
    from cockpit.config import PrometheusSettings, ServiceSettings
    from cockpit.sources.prometheus import PrometheusSource

    sc = srv.scenario
    settings = Settings(
        prometheus=PrometheusSettings(url=srv.url, timeout_s=timeout_s),
        service=ServiceSettings(namespace=sc.scope["namespace"], deployment=sc.scope["deployment"]),
    )
    return make_ctx(
        state_dir,
        lang=lang,
        sources=Sources(metrics=PrometheusSource(settings.prometheus)),
        settings=settings,
        frozen_at=sc.now_dt,
        **kw,
    )


async def settle(pilot: Any) -> None:
    """Let the app's workers finish and the screen catch up (panels that load in turns)."""
    for _ in range(8):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


def fetch_once(monkeypatch: Any) -> None:
    """One fetch per panel: a poll would make what is shown depend on timing."""
    from cockpit.ui.panel import Panel

    for cls in Panel.__subclasses__():
        monkeypatch.setattr(cls, "POLL_INTERVAL", None)
