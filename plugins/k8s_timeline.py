"""Kubernetes timeline (steps A and B): Warning events, container restarts (reason, exit
code), rollouts, Helm upgrades, node condition changes — time-ordered, and added to the
incident's timeline (changes also to its 最近变更 list)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.widgets import Static

from cockpit.analysis.changes import timeline_line
from cockpit.context import AppContext
from cockpit.i18n import t
from cockpit.incident import TimelineKind
from cockpit.session import RECORDED_CHANGE_KINDS
from cockpit.ui.panel import Panel

WINDOW = timedelta(hours=24)
"""Look-back before impact start (or now)."""


def record(session: Any, items: list[Any], seen: set[str] | None = None) -> int:
    """Put items on the incident timeline; changes also into the changes list. Returns the
    number of items recorded. ``seen`` holds the keys already recorded (each save writes
    the incident file, so a poll does not rewrite what the previous one added)."""
    n = 0
    for it in items:
        if it.at is None or not it.in_window or (seen is not None and it.key in seen):
            continue
        if seen is not None:
            seen.add(it.key)
        if it.kind in RECORDED_CHANGE_KINDS:
            session.record_changes([it])
        else:
            # Words cockpit wrote (a restart read from the metrics) in both languages.
            said = it.words() or None
            session.add_timeline(
                it.at,
                it.summary,
                TimelineKind.EVENT,
                source=it.origin,
                text_i18n=said,
                event=it.event,
            )
        n += 1
    return n


class K8sTimelinePanel(Panel):
    """Kubernetes events, restarts and rollouts of the service's namespace."""

    PANEL_ID = "k8s_timeline"
    TITLE: ClassVar[dict[str, str]] = {"zh": "Kubernetes 时间线", "en": "Kubernetes timeline"}
    STEPS = ("A", "B")
    SOURCES = ("kube",)
    POLL_INTERVAL = 60.0
    FETCH_TIMEOUT = 60.0

    DEFAULT_CSS = """
    K8sTimelinePanel .k8stl--list { height: auto; max-height: 20; }
    """

    async def fetch(self, ctx: AppContext) -> Any:
        from cockpit.collect.kube_gather import gather_changes

        now = ctx.clock.now()
        start = ctx.session.incident.times.start if ctx.session is not None else None
        ns = selector = None
        if ctx.session is not None:
            ns = ctx.session.incident.service.namespace or None
            selector = ctx.session.incident.service.selector
        report = await gather_changes(
            ctx.sources.kube, (start or now) - WINDOW, now, ns, selector or "", read_logs=False
        )
        recorded = (
            record(ctx.session, report.items, self._recorded) if ctx.session is not None else 0
        )
        return report, recorded

    def __init__(self, ctx: AppContext, **kwargs: Any) -> None:
        super().__init__(ctx, **kwargs)
        self._recorded: set[str] = set()

    def on_mount(self) -> None:
        super().on_mount()
        if self.missing_sources():
            self.query_one(".k8stl--list").display = False

    def compose_body(self) -> ComposeResult:
        yield Static("", classes="k8stl--list", markup=False)

    def render_data(self, data: Any) -> None:
        report, recorded = data
        lang = self.lang
        lines = []
        items = [i for i in report.items if i.in_window and i.at is not None]
        for i in items[-60:]:
            lines.append(timeline_line(i, lang))
        if not items:
            lines.append(t("kube.timeline.none", lang))
        if recorded:
            lines.append(t("kube.timeline.added", lang, n=recorded))
        for f in report.failures:
            lines.append("⚠ " + t("kube.panel.partial", lang, what=f"{f.kind.value}: {f.message}"))
        self.query_one(".k8stl--list", Static).update("\n".join(lines))
