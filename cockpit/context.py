"""What the app hands to screens and panels: settings, sources, clock, language, session.

Textual-free, so headless commands build the same context as the TUI.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cockpit.clock import Clock
from cockpit.config import Settings
from cockpit.sources.base import Sources

if TYPE_CHECKING:
    from cockpit.session import IncidentSession


@dataclass
class AppContext:
    """Everything a screen or panel may read.

    Attributes:
        settings: Resolved configuration.
        sources: The backends.
        clock: Wall clock in live mode, frozen at the recording time in replay/demo.
        lang: ``zh`` or ``en``.
        mode: ``live``, ``replay`` or ``demo``.
        session: The incident being worked on (saves on every change).
    """

    settings: Settings
    sources: Sources
    clock: Clock
    lang: str
    mode: str = "live"
    session: IncidentSession | None = None
    extras: dict[str, Any] = field(default_factory=dict)
