"""An action never overwrites an incident time the user entered, nor sets one out of order
with the others, without asking: "use this time" buttons (A's first SLO breach, the alert
that fired as the detection time, I's recovery) say what they would replace or contradict
and act only when pressed again for the same time. The old value stays in the incident's
history (F8, Corrections in the export)."""

from __future__ import annotations

from datetime import datetime

from textual.widget import Widget

from cockpit.context import AppContext
from cockpit.i18n import t
from cockpit.session import TIME_FIELDS, check_time_order
from cockpit.timeparse import fmt_time


def time_conflict(times: dict[str, datetime | None], which: str, value: datetime) -> str:
    """Why setting ``which`` to ``value`` needs asking: ``"replaces"`` (another time is
    entered there), ``"order"`` (it would break 开始 ≤ 检测 ≤ 缓解 ≤ 恢复 where it held) or
    ``""`` (nothing in its way)."""
    current = times.get(which)
    if current is not None and current != value:
        return "replaces"
    if check_time_order({**times, which: value}) != check_time_order(times):
        return "order"
    return ""


def confirmed(owner: Widget, which: str, value: datetime) -> bool:
    """Whether ``owner``'s action may set the incident time ``which`` to ``value`` now:
    at once when nothing is in its way; otherwise a warning says what it would replace or
    contradict and the same action pressed again for the same time goes ahead."""
    ctx: AppContext | None = getattr(owner, "ctx", None)
    session = ctx.session if ctx is not None else None
    if ctx is None or session is None:
        return False
    times = {k: getattr(session.incident.times, k) for k in TIME_FIELDS}
    why = time_conflict(times, which, value)
    asked = getattr(owner, "_time_asked", None)
    if not why or asked == (which, value):
        owner._time_asked = None  # type: ignore[attr-defined]
        return True
    owner._time_asked = (which, value)  # type: ignore[attr-defined]
    lang = ctx.lang
    owner.notify(
        t(
            f"timeguard.{why}",
            lang,
            name=t(f"times.{which}", lang),
            old=fmt_time(times[which]),
            new=fmt_time(value),
        ),
        severity="warning",
        markup=False,
        timeout=10,
    )
    return False
