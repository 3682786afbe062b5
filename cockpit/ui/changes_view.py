"""Recent changes (step B): rollouts, Helm upgrades, node and config changes, time-ordered
with their diffs, from Kubernetes and from the metrics history (rollouts, restarts,
readiness, allocatable GPUs, Xid, silent series, alerts; merged when both are there); the
user marks one as suspect (it goes to the incident's changes and timeline). Mounted by the
B screen; fetches in a worker, never blocks the event loop."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from cockpit.analysis.changes import kind_name, recorded_change
from cockpit.context import AppContext
from cockpit.i18n import t
from cockpit.session import RECORDED_CHANGE_KINDS
from cockpit.sources.base import SourceError
from cockpit.timeparse import fmt_time
from cockpit.ui.keys import localize_bindings
from cockpit.ui.select import EndOptionList
from cockpit.ui.worker_errors import ContainsWorkerErrors

DEFAULT_WINDOW = timedelta(hours=24)
"""Default look-back before impact start for step B's recent changes: 24 h (a deploy, a
model or node change of the day before is the usual suspect)."""


class ChangesView(ContainsWorkerErrors, Vertical):
    """Time-ordered changes with diffs; ``s`` marks the highlighted one as suspect."""

    DEFAULT_CSS = """
    ChangesView { height: auto; border: round $primary 40%; padding: 0 1; }
    ChangesView OptionList { height: auto; max-height: 14; }
    ChangesView .changes--diff { height: auto; color: $text-muted; }
    ChangesView .changes--status.-error { color: $error; }
    """
    BINDINGS: ClassVar[list[Any]] = [Binding("alt+s", "toggle_suspect", "Suspect", priority=True)]

    def __init__(self, ctx: AppContext, **kwargs: Any) -> None:
        kwargs.setdefault("id", "changes-view")
        super().__init__(**kwargs)
        self.ctx = ctx
        localize_bindings(self, ctx.lang)
        self.report: Any = None
        self.items: list[Any] = []

    @property
    def lang(self) -> str:
        return self.ctx.lang

    def compose(self) -> ComposeResult:
        self.border_title = t("kube.changes.title", self.lang)
        yield Static(t("panel.loading", self.lang), classes="changes--status", markup=False)
        yield EndOptionList(id="changes-list")
        yield Static("", classes="changes--diff", markup=False)
        yield Static(t("kube.changes.mark", self.lang), classes="changes--help")

    def on_mount(self) -> None:
        if self.ctx.sources.kube is None and self.ctx.sources.metrics is None:
            reason = self.ctx.sources.missing_text(
                "kube", self.lang, t("panel.not_configured", self.lang)
            )
            self._status(t("panel.not_available", self.lang, sources=f"kube: {reason}"), True)
            for w in (
                self.query_one("#changes-list"),
                self.query_one(".changes--diff"),
                self.query_one(".changes--help"),
            ):
                w.display = False
            return
        self.run_worker(
            self._load,  # type: ignore[arg-type]
            exclusive=True,
            group="changes-view",
            exit_on_error=False,
        )

    def window(self) -> tuple[Any, Any]:
        """``(since, until)``: 24 h before impact start (or now) until now."""
        now = self.ctx.clock.now()
        start = None
        if self.ctx.session is not None:
            start = self.ctx.session.incident.times.start
        return (start or now) - DEFAULT_WINDOW, now

    async def _load(self) -> None:
        from cockpit.collect.history import gather_all_changes

        since, until = self.window()
        ns = None
        selector = ""
        if self.ctx.session is not None:
            ns = self.ctx.session.incident.service.namespace or None
            selector = self.ctx.session.incident.service.selector
        try:
            report = await gather_all_changes(self.ctx, since, until, ns, selector)
        except SourceError as exc:
            f = exc.failure
            self._status(
                f"⚠ {t('error.' + f.kind.value, self.lang)}: {f.message}\n  {f.hint_in(self.lang)}",
                True,
            )
            return
        self.show(report)

    def show(self, report: Any) -> None:
        """Render a :class:`~cockpit.collect.kube_gather.ChangesReport` (no I/O)."""
        self.report = report
        self.items = [
            i
            for i in report.items
            if i.in_window and (i.kind in RECORDED_CHANGE_KINDS or i.origin == "metrics")
        ]
        self.ctx.changes_found = len(self.items)
        if self.ctx.session is not None:
            # what B lists is in the incident's recent changes, so in the export too
            self.ctx.session.record_changes(self.items)
        from cockpit.ui.fields import ChangesNoteInput

        for note in self.screen.query(ChangesNoteInput):
            note.sync()
        opts = self.query_one("#changes-list", OptionList)
        opts.clear_options()
        for i in self.items:
            at = i.at.strftime("%m-%d %H:%M") if i.at else "--:--"
            mark = "⚑ " if self._is_suspect(i) else ""  # the mark of the changes table
            kind = kind_name(i.kind, self.lang)
            opts.add_option(Option(Text(f"{mark}{at} [{kind}] {i.text(self.lang)}")))
        text = "" if self.items else t("kube.changes.none", self.lang, since=fmt_time(report.since))
        if "kubernetes" not in report.sources and "metrics" in report.sources:
            text = t("kube.changes.from_metrics", self.lang) + ("\n" + text if text else "")
        if report.failures:
            text += ("\n" if text else "") + "\n".join(
                "⚠ " + t("kube.panel.partial", self.lang, what=f"{f.kind.value}: {f.message}")
                for f in report.failures
            )
        self._status(text, bool(report.failures))
        if self.items:
            self._show_diff(0)
        # B's table lists every change found here, marked or not
        refresh = getattr(self.screen, "incident_changed", None)
        if refresh is not None:
            refresh()

    def _is_suspect(self, item: Any) -> bool:
        if self.ctx.session is None:
            return False
        # marked here or in B's table: the change that records the item
        change = recorded_change(self.ctx.session.incident.changes, item)
        return change is not None and change.suspect

    def show_worker_error(self, text: str) -> None:
        """An unexpected failure of the gathering, on the view's status line."""
        self._status(f"⚠ {text}", True)

    def _status(self, text: str, error: bool) -> None:
        st = self.query_one(".changes--status", Static)
        st.update(text)
        st.display = bool(text)
        st.set_class(error, "-error")

    def _show_diff(self, index: int) -> str:
        """Show item ``index``'s diff below the list; a change without one (an alert, a
        restart) says so instead of leaving the area blank. Returns what is shown."""
        if not 0 <= index < len(self.items):
            return ""
        item = self.items[index]
        text = item.detail_text() or t(
            "kube.changes.no_diff", self.lang, kind=kind_name(item.kind, self.lang)
        )
        self.query_one(".changes--diff", Static).update(text)
        return text

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self._show_diff(event.option_index)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Enter on a change: its diff, brought into view, or a toast saying it has none."""
        event.stop()
        index = event.option_index
        if not 0 <= index < len(self.items):
            return
        shown = self._show_diff(index)
        diff = self.query_one(".changes--diff", Static)
        diff.scroll_visible()
        if not self.items[index].detail_text():
            self.notify(shown, markup=False)

    def toggle_suspect(self, index: int) -> bool | None:
        """Add item ``index`` to the incident's changes (once) and flip its suspect mark."""
        if self.ctx.session is None or not 0 <= index < len(self.items):
            return None
        item = self.items[index]
        change = self.ctx.session.add_change(item.to_change())
        new = toggle_suspect_said(self.ctx, self, change.id, item.text(self.lang))
        opts = self.query_one("#changes-list", OptionList)
        highlighted = opts.highlighted
        self.show(self.report)
        if highlighted is not None:
            opts.highlighted = highlighted
        return new

    def action_toggle_suspect(self) -> None:
        opts = self.query_one("#changes-list", OptionList)
        if opts.highlighted is None or self.toggle_suspect(opts.highlighted) is None:
            self.notify(t("kube.changes.nothing_to_mark", self.lang), markup=False)


def toggle_suspect_said(ctx: AppContext, on: Widget, change_id: str, summary: str) -> bool:
    """Flip the suspect mark of the incident's change ``change_id`` and say which way it
    went, naming the change by ``summary`` ("Marked as suspect: …" / "No longer suspect:
    …"), wherever it is toggled (B's changes view, B's table). Returns the new mark."""
    assert ctx.session is not None
    change = next(c for c in ctx.session.incident.changes if c.id == change_id)
    new = not change.suspect
    ctx.session.mark_suspect(change.id, new)
    key = "kube.changes.marked" if new else "kube.changes.unmarked"
    # The whole summary (a toast wraps): cut, it would stop in the middle of a name.
    on.notify(t(key, ctx.lang, summary=summary), markup=False)
    return new
