"""The time axis of a scenario: when samples exist.

Old history is sampled coarsely and the recent past finely, like a Prometheus whose
recording rules or downsampling keep old data at a lower resolution; this keeps a 26-hour
history small enough to backfill in seconds. Every step must stay below the 5-minute
lookback delta, or instant queries between samples would return nothing.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field


@dataclass(frozen=True)
class TimeAxis:
    """Sample times from ``start`` to ``end`` (Unix seconds, both included).

    Args:
        start: First sample time.
        end: Last sample time ("now" of the scenario).
        fine_from: From this time on the step is ``fine_step_s``; before it ``coarse_step_s``.
        coarse_step_s: Step of old history, seconds (≤ 300).
        fine_step_s: Step of the recent past, seconds.
    """

    start: int
    end: int
    fine_from: int
    coarse_step_s: int = 60
    fine_step_s: int = 15
    points: tuple[int, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not (self.start <= self.fine_from <= self.end):
            raise ValueError("need start <= fine_from <= end")
        if max(self.coarse_step_s, self.fine_step_s) >= 300:
            raise ValueError("steps must stay below the 5-minute lookback delta")
        pts = list(range(self.start, self.fine_from, self.coarse_step_s))
        pts.extend(range(self.fine_from, self.end + 1, self.fine_step_s))
        if pts[-1] != self.end:
            pts.append(self.end)
        object.__setattr__(self, "points", tuple(pts))

    def __len__(self) -> int:
        return len(self.points)

    def dt(self) -> list[float]:
        """Seconds since the previous point (the first uses the coarse step)."""
        pts = self.points
        return [float(self.coarse_step_s)] + [float(b - a) for a, b in itertools.pairwise(pts)]
