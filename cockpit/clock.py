"""The clock the app reads. Live mode reads the wall clock; replay and demo pin it to the
bundle's recording time, and ``--at`` to the time under investigation, so that every query
and every screen is reproducible.

What the responder logs (an experiment, an F2 action, a timeline note) is a thing done
now, not a reading of the past: :meth:`Clock.logged` stamps it on the incident clock
running on from the frozen instant with the wall time elapsed since this run opened the
incident (after the last entry logged before, on resume), so two entries logged minutes
apart are minutes apart and in order. Live, both are the wall clock.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from time import monotonic


class Clock:
    """Wall clock, optionally frozen or offset.

    Args:
        frozen_at: When given, :meth:`now` always returns this instant (replay, tests).
    """

    def __init__(self, frozen_at: datetime | None = None) -> None:
        if frozen_at is not None and frozen_at.tzinfo is None:
            frozen_at = frozen_at.replace(tzinfo=UTC)
        self._frozen = frozen_at
        self._logged_from = frozen_at
        self._opened = monotonic()

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

    def logged(self) -> datetime:
        """When an entry the responder logs now happened (see the module docstring): the
        wall clock live; frozen, the frozen instant plus the wall time elapsed since the
        clock was made (or since :meth:`continue_after`)."""
        if self._logged_from is None:
            return datetime.now(UTC)
        return self._logged_from + timedelta(seconds=int(monotonic() - self._opened))

    def continue_after(self, last: datetime | None) -> None:
        """Entries logged from now on come after ``last`` (the latest one a previous run
        logged), never before it."""
        if self._logged_from is None or last is None:
            return
        if last.tzinfo is None:
            last = last.replace(tzinfo=UTC)
        if last >= self.logged():
            self._logged_from = last + timedelta(seconds=1)
            self._opened = monotonic()
