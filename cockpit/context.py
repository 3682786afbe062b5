"""What the app hands to screens and panels: settings, sources, clock, language, session,
and the state they share while the app runs.

Textual-free, so headless commands build the same context as the TUI.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from cockpit.clock import Clock
from cockpit.config import Settings
from cockpit.incident import Mode
from cockpit.sources.base import Sources

if TYPE_CHECKING:
    import asyncio

    from cockpit.analysis.cohort import CohortKind
    from cockpit.analysis.discovery import Discovery
    from cockpit.analysis.profiles import Detection
    from cockpit.collect.base import ScopeResolution, Window
    from cockpit.collect.runner import QueryRunner
    from cockpit.session import IncidentSession
    from cockpit.sources.base import SourceError
    from cockpit.sources.bundle import BundleMeta


@dataclass
class MetricsState:
    """What the metrics collectors share between screens (one per context).

    Attributes:
        window: The time window every screen shows (``None`` until a screen asks; then
            ``window_span`` up to the clock's now, see ``cockpit.collect.cache.screen_window``).
        window_span: Length of that window when it is first made (``2h``, ``6h``, …).
        scope: How ``service.selector`` narrowed the metrics, once resolved.
        runner: The bounded query runner of the metrics source.
        detection: The metric profiles detected from the target's metric names and
            narrowed by discovery to the service scope.
        detection_key: The service scope ``detection`` was made for.
        discovery: Where each source keeps the workload's labels and the services found
            (``cockpit.analysis.discovery.Discovery``).
        detection_failure: The failed metric-name listing (a recording reports it once).
        empty_spans: Spans of time the server holds no sample in, found with the
            detection (``cockpit.collect.base.empty_history``): an offset baseline there
            is not asked for.
        suspect: The instance or node D's blast radius singled out, and its kind
            (``pod``/``node``/``gpu``), for E.
        cohort_kind: The cohort D chose for that suspect (``previous_revision`` when one
            revision is worse), ``None`` to let E choose.
        picked: The suspect the user picked at E from the window's inventory, as
            ``(key, kind)`` with kind ``pod``/``node``/``gpu``/``revision``; F2 acts on it
            before D's ``suspect``.
        results: Collections in flight or done, by name and window (see
            ``cockpit.collect.cache``).
    """

    window: Window | None = None
    window_span: str = "2h"
    scope: ScopeResolution | None = None
    runner: QueryRunner | None = None
    detection: Detection | None = None
    detection_key: tuple[str, ...] = ()
    discovery: Discovery | None = None
    detection_failure: SourceError | None = None
    empty_spans: list[tuple[datetime, datetime]] = field(default_factory=list)
    suspect: tuple[str, str] | None = None
    cohort_kind: CohortKind | None = None
    picked: tuple[str, str] | None = None
    results: dict[str, asyncio.Future[Any]] = field(default_factory=dict)


PlaybookLoader = Callable[..., Awaitable[Any]]
"""``loader(ctx, playbook_id, scope)`` → the playbook's data (see ``cockpit.screens.playbook``)."""


@dataclass
class AppContext:
    """Everything a screen or panel may read.

    Attributes:
        settings: Resolved configuration.
        sources: The backends.
        clock: Wall clock in live mode, frozen at the recording time in replay/demo.
        lang: ``zh`` or ``en``.
        mode: Live, replay, demo, or record (``cockpit record``, headless).
        session: The incident being worked on (saves on every change).
        metrics: State the metrics collectors share between screens.
        panels: The panels loaded from the ``cockpit.panels`` entry points
            (``cockpit.ui.plugins.PanelLoad``); ``None`` until the app loads them.
        drafts: Text being typed on screens that are rebuilt, by step and field id.
        warnings: Configuration warnings to show once the UI runs (read at boot).
        bundle_meta: The evidence bundle's metadata in replay and demo.
        gpu_node: The node the GPU panel shows (empty: the node of a GPU that stopped
            reporting, else the first).
        playbook_loader: Where playbook screens get their data (``None``: the sources).
        at: The time under investigation given with ``--at`` (UTC; ``None`` without it):
            the title bar says it instead of the mode.
        changes_found: How many changes step B's changes view found in its window from
            any source (Kubernetes or the metrics history); ``None`` until it has read
            them. Screens that speak of changes found automatically read this count.
    """

    settings: Settings
    sources: Sources
    clock: Clock
    lang: str
    mode: Mode = Mode.LIVE
    session: IncidentSession | None = None
    metrics: MetricsState = field(default_factory=MetricsState)
    panels: list[Any] | None = None
    drafts: dict[str, dict[str, str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    bundle_meta: BundleMeta | None = None
    gpu_node: str = ""
    playbook_loader: PlaybookLoader | None = None
    at: datetime | None = None
    changes_found: int | None = None

    @property
    def drill(self) -> bool:
        """Whether the incident is a drill (``cockpit drill NAME``): the conclusion is the
        trainee's to give, so the screens do not state the analysis' "most likely" one."""
        return self.session is not None and self.session.incident.drill is not None

    def __post_init__(self) -> None:
        self.mode = Mode(self.mode)  # a plain "demo" from a caller compares by identity too
