"""The clock the app reads. Live mode reads the wall clock; replay and demo pin it to the
bundle's recording time so that every query and every screen is reproducible."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


class Clock:
    """Wall clock, optionally frozen or offset.

    Args:
        frozen_at: When given, :meth:`now` always returns this instant (replay, tests).
    """

    def __init__(self, frozen_at: datetime | None = None) -> None:
        if frozen_at is not None and frozen_at.tzinfo is None:
            frozen_at = frozen_at.replace(tzinfo=UTC)
        self._frozen = frozen_at

    @property
    def frozen(self) -> bool:
        """True in replay/demo/tests."""
        return self._frozen is not None

    def now(self) -> datetime:
        """Aware UTC now (or the frozen instant)."""
        return self._frozen if self._frozen is not None else datetime.now(UTC)

    def ago(self, delta: timedelta) -> datetime:
        """``now() - delta``."""
        return self.now() - delta
