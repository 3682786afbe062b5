"""Source protocols and the error classification shared by every backend.

Errors are classified at the source boundary so that panels can show a clear title and a
hint in place, whatever the backend: unavailable, timeout, access denied (with the RBAC
verb/resource), bad query, bad data, not configured.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel

from cockpit.models import InstantVector, Series
from cockpit.models.messages import Msg


class ErrorKind(StrEnum):
    """Classes of backend failure, each rendered with its own title."""

    NOT_CONFIGURED = "not_configured"
    UNAVAILABLE = "unavailable"
    TIMEOUT = "timeout"
    ACCESS_DENIED = "access_denied"
    BAD_QUERY = "bad_query"
    BAD_DATA = "bad_data"
    NOT_FOUND = "not_found"


class SourceFailure(BaseModel):
    """A serialisable description of a failed call (kept in bundles and shown in panels).

    Attributes:
        source: Backend name (``prometheus``, ``kubernetes``, ``nvml``, ``dcgm``).
        kind: The class of failure.
        message: What happened, in the backend's words (status code, exception text).
        hint: What the user can do about it, in English.
        hint_key: The i18n key of the hint (``cockpit/knowledge/i18n/sources.toml``), so
            that a panel shows it in the UI language; empty for hints without one.
        hint_args: The placeholders of ``hint_key``.
        detail: Extra machine-readable facts (HTTP status, RBAC verb/resource, query).
    """

    source: str
    kind: ErrorKind
    message: str
    hint: str = ""
    hint_key: str = ""
    hint_args: dict[str, str] = {}
    detail: dict[str, str] = {}

    def hint_in(self, lang: str) -> str:
        """The hint in ``lang`` (the English ``hint`` when it has no key)."""
        if not self.hint_key:
            return self.hint
        from cockpit.i18n import t

        return t(self.hint_key, lang, **self.hint_args)


class SourceError(Exception):
    """Raised by every source method; wraps a :class:`SourceFailure`."""

    def __init__(self, failure: SourceFailure) -> None:
        super().__init__(f"{failure.source}: {failure.kind.value}: {failure.message}")
        self.failure = failure

    @classmethod
    def of(
        cls,
        source: str,
        kind: ErrorKind,
        message: str,
        hint: str = "",
        *,
        hint_key: str = "",
        hint_args: dict[str, str] | None = None,
        **detail: str,
    ) -> SourceError:
        """Shorthand constructor; with ``hint_key`` the English ``hint`` is rendered from it."""
        args = hint_args or {}
        if hint_key and not hint:
            from cockpit.i18n import t

            hint = t(hint_key, "en", **args)
        return cls(
            SourceFailure(
                source=source,
                kind=kind,
                message=message,
                hint=hint,
                hint_key=hint_key,
                hint_args=args,
                detail=detail,
            )
        )

    @property
    def kind(self) -> ErrorKind:
        """The failure class."""
        return self.failure.kind


@runtime_checkable
class MetricsSource(Protocol):
    """A Prometheus-compatible query API (Prometheus, Thanos, Mimir, VictoriaMetrics).

    Every method takes an explicit evaluation time: an instant query without ``time=``
    is evaluated at wall-clock now and returns nothing once data is older than the
    lookback delta (5 min by default).

    Raises:
        SourceError: on every failure, classified.
    """

    name: str

    async def instant(self, query: str, at: datetime) -> list[InstantVector]:
        """Evaluate ``query`` at ``at``; one entry per output series."""
        ...

    async def range(
        self, query: str, start: datetime, end: datetime, step_s: float
    ) -> list[Series]:
        """Evaluate ``query`` over ``[start, end]`` every ``step_s`` seconds."""
        ...

    async def samples(self, query: str, at: datetime) -> list[Series]:
        """The raw samples of a range selector ``query`` (``metric{…}[5m]``) evaluated at
        ``at``: each series' samples at their own timestamps."""
        ...

    async def metric_names(self, at: datetime) -> list[str]:
        """Names of the metrics the target exposes (``/api/v1/label/__name__/values``)."""
        ...

    async def close(self) -> None:
        """Release connections."""
        ...


@dataclass
class Sources:
    """The backends this run has, each ``None`` with a reason in ``missing`` when absent.

    Attributes:
        metrics: Prometheus-compatible query API (live, or replayed from a bundle).
        kube: Kubernetes read-only source (see ``cockpit.sources.kubernetes``).
        gpu: Local NVML source (see ``cockpit.sources.nvml``).
        alerts: Alertmanager's API v2 (``cockpit.sources.alertmanager``), when
            ``[alertmanager] url`` is configured; else alerts come from ``metrics``.
        missing: ``{"metrics": "no Prometheus URL configured", ...}`` (English, for logs
            and JSON output).
        missing_msgs: The same reasons as messages, when there is one, for the UI's
            language (see :meth:`missing_text`).
    """

    metrics: MetricsSource | None = None
    kube: Any | None = None
    gpu: Any | None = None
    alerts: Any | None = None
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
        for src in (self.metrics, self.kube, self.gpu, self.alerts):
            closer = getattr(src, "close", None)
            if closer is not None:
                res = closer()
                if hasattr(res, "__await__"):
                    await res
