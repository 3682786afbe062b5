"""What the app hands to screens and panels: settings, sources, clock, language, session.

Textual-free, so headless commands build the same context as the TUI.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cockpit.analysis.messages import Msg
from cockpit.clock import Clock
from cockpit.config import Settings

if TYPE_CHECKING:
    from cockpit.session import IncidentSession
    from cockpit.sources.base import MetricsSource


@dataclass
class Sources:
    """The backends this run has, each ``None`` with a reason in ``missing`` when absent.

    Attributes:
        metrics: Prometheus-compatible query API (live, or replayed from a bundle).
        kube: Kubernetes read-only source (see ``cockpit.sources.kubernetes``).
        gpu: Local NVML source (see ``cockpit.sources.nvml``).
        missing: ``{"metrics": "no Prometheus URL configured", ...}`` (English, for logs
            and JSON output).
        missing_msgs: The same reasons as messages, when there is one, for the UI's
            language (see :meth:`missing_text`).
    """

    metrics: MetricsSource | None = None
    kube: Any | None = None
    gpu: Any | None = None
    missing: dict[str, str] = field(default_factory=dict)
    missing_msgs: dict[str, Msg] = field(default_factory=dict)

    def set_missing(self, name: str, reason: Msg) -> None:
        """Record why source ``name`` is absent (English text and message)."""
        self.missing[name] = reason.text("en")
        self.missing_msgs[name] = reason

    def missing_text(self, name: str, lang: str, default: str = "") -> str:
        """Why source ``name`` is absent, in ``lang`` (``default`` when nobody said)."""
        m = self.missing_msgs.get(name)
        if m is not None:
            return m.text(lang)
        return self.missing.get(name, default)

    def has(self, name: str) -> bool:
        """True when the source called ``name`` is present."""
        return getattr(self, name, None) is not None

    async def close(self) -> None:
        """Close every source that has a ``close`` coroutine."""
        for src in (self.metrics, self.kube, self.gpu):
            closer = getattr(src, "close", None)
            if closer is not None:
                res = closer()
                if hasattr(res, "__await__"):
                    await res


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
