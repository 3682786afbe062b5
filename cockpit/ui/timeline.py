"""The incident timeline as a table (time-ordered, every kind of entry)."""

from __future__ import annotations

from typing import Any

from cockpit.context import AppContext
from cockpit.i18n import t
from cockpit.session import entry_text
from cockpit.timeparse import fmt_time
from cockpit.ui.table import PlainTable


class TimelineTable(PlainTable):
    """Every :class:`~cockpit.incident.TimelineEntry` of the incident, oldest first."""

    DEFAULT_CSS = """
    TimelineTable { height: auto; max-height: 16; }
    """

    def __init__(self, ctx: AppContext, **kw: Any) -> None:
        kw.setdefault("id", "timeline")
        super().__init__(cursor_type="row", zebra_stripes=True, **kw)
        self.ctx = ctx

    def on_mount(self) -> None:
        lang = self.ctx.lang
        self.add_columns(t("timeline.at", lang), t("timeline.kind", lang), t("timeline.text", lang))
        self.reload()

    def reload(self) -> None:
        """Rebuild from the incident."""
        assert self.ctx.session is not None
        self.clear()
        rows = []
        for entry in self.ctx.session.incident.timeline:
            text = entry_text(entry, self.ctx.lang)
            first_line = text.splitlines()[0] if text else ""
            cells = (fmt_time(entry.at), t(f"timeline.kind.{entry.kind.value}", self.ctx.lang))
            rows.append(((*cells, first_line), entry.id))
        # What happened wraps at 80 columns: the time and the kind stay whole.
        self.add_rows_fitted(rows, wrap=2, minimum=16)
