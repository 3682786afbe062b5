"""Value types shared by sources, analysis and the UI.

The rule these types enforce: *no data is never zero*. A :class:`Reading` is either
``known`` (with a value), ``unknown`` (with the reason) or ``unsupported`` (the backend
cannot produce it, with the reason). Renderers must show the reason, never a 0.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from enum import StrEnum
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field


class Availability(StrEnum):
    """Whether a value exists."""

    KNOWN = "known"
    UNKNOWN = "unknown"
    UNSUPPORTED = "unsupported"


class Reading(BaseModel):
    """One scalar observation with its provenance.

    Attributes:
        value: The number, in ``unit``; ``None`` unless ``status`` is known.
        unit: Display unit (``"ms"``, ``"req/s"``, ``"%"``, ``"°C"``, ``"W"``, ``"MHz"``, …).
        status: known / unknown / unsupported.
        reason: Why the value is unknown or unsupported (shown to the user verbatim).
        query: The PromQL (or NVML call / Kubernetes request) that produced it.
        at: Evaluation time (UTC).
    """

    model_config = ConfigDict(frozen=True)

    value: float | None = None
    unit: str = ""
    status: Availability = Availability.KNOWN
    reason: str | None = None
    query: str | None = None
    at: datetime | None = None

    @classmethod
    def known(
        cls, value: float, unit: str = "", *, query: str | None = None, at: datetime | None = None
    ) -> Reading:
        """A measured value. NaN and infinities are turned into ``unknown``."""
        if value is None or math.isnan(value) or math.isinf(value):
            return cls.unknown("not a finite number", unit=unit, query=query, at=at)
        return cls(value=float(value), unit=unit, query=query, at=at)

    @classmethod
    def unknown(
        cls, reason: str, *, unit: str = "", query: str | None = None, at: datetime | None = None
    ) -> Reading:
        """A value that should exist but could not be read; ``reason`` says why."""
        return cls(status=Availability.UNKNOWN, reason=reason, unit=unit, query=query, at=at)

    @classmethod
    def unsupported(cls, reason: str, *, unit: str = "", query: str | None = None) -> Reading:
        """A value the backend cannot produce (e.g. NVML ``NOT_SUPPORTED``)."""
        return cls(status=Availability.UNSUPPORTED, reason=reason, unit=unit, query=query)

    @property
    def ok(self) -> bool:
        """True when the value is known."""
        return self.status is Availability.KNOWN and self.value is not None


class Sample(NamedTuple):
    """One point of a time series: ``t`` in Unix seconds (UTC), ``v`` the value.

    A named tuple rather than a model: a drilldown parses tens of thousands of points and a
    tuple is built four times faster; as a field of a model it validates from ``[t, v]`` or
    ``{"t": …, "v": …}`` and serialises as ``[t, v]``.
    """

    t: float
    v: float


class Series(BaseModel):
    """A labelled time series as returned by a range query (samples in time order)."""

    labels: dict[str, str] = Field(default_factory=dict)
    samples: list[Sample] = Field(default_factory=list)

    def values(self) -> list[float]:
        """The values in time order, NaN dropped."""
        return [s.v for s in self.samples if not math.isnan(s.v)]

    def last(self) -> float | None:
        """The newest finite value, or ``None``."""
        vals = self.values()
        return vals[-1] if vals else None


class InstantVector(BaseModel):
    """One labelled value of an instant query."""

    labels: dict[str, str] = Field(default_factory=dict)
    t: float
    v: float


def utcnow() -> datetime:
    """Aware UTC now (the only place wall-clock time is read outside :mod:`cockpit.clock`)."""
    return datetime.now(UTC)


def to_epoch(dt: datetime) -> float:
    """Unix seconds of an aware datetime (naive datetimes are taken as UTC)."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def from_epoch(t: float) -> datetime:
    """Aware UTC datetime of Unix seconds."""
    return datetime.fromtimestamp(t, tz=UTC)
