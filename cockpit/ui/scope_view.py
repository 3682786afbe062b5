"""Step D widget: the blast-radius verdict with the numbers behind it, proposing E or F.

Seed 000 flowchart node D (单实例 / 单节点?). Accepting the verdict records the branch and
the verdict text in the incident (``IncidentSession.set_branch``).
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Button, Static

from cockpit.collect.steps import ScopeResult
from cockpit.flow import Branch
from cockpit.i18n import t
from cockpit.ui.focus import focus_next_field
from cockpit.ui.likely_view import LikelyView
from cockpit.ui.metrics_common import MetricsView


def blast_line(res: ScopeResult, lang: str) -> str:
    """The verdict's first line: the scope, the suspect, and why an undecided scope is
    undecided when queries failed."""
    br = res.blast_radius
    line = t("metrics.text.blast", lang, scope=t(f"metrics.scope.{br.scope}", lang))
    if br.suspect:
        name = res.suspect_name or br.suspect
        line += f" — {t(f'evidence.suspect_kind.{br.suspect_kind}', lang)} {name}"
    if br.scope == "unknown" and res.failed:
        line += t(
            "metrics.scope.failed_queries",
            lang,
            n=res.failed,
            total=res.queried,
            kind=t(f"error.{res.failure_kind or 'unavailable'}", lang),
        )
    return line


def verdict_text(res: ScopeResult, lang: str) -> str:
    """The verdict as stored in the incident (one line + the numbers)."""
    return "\n".join([blast_line(res, lang), *res.blast_radius.lines_text(lang)])


class ScopeView(MetricsView):
    """Blast radius (per pod / node / GPU / revision) and the proposed next step."""

    DEFAULT_CSS = """
    ScopeView #scope-verdict { text-style: bold; height: auto; }
    ScopeView #scope-lines { height: auto; }
    ScopeView Horizontal { height: auto; }
    """

    class VerdictAccepted(Message):
        """The user accepted the verdict; ``branch`` is ``single`` or ``shared``."""

        def __init__(self, branch: str) -> None:
            super().__init__()
            self.branch = branch

    def __init__(self, ctx: Any, **kwargs: Any) -> None:
        super().__init__(ctx, **kwargs)

    def compose_body(self) -> ComposeResult:
        yield Static("", id="scope-verdict", markup=False)
        yield Static("", id="scope-lines", markup=False)
        if not self.ctx.drill:
            yield LikelyView(self.ctx, id="scope-likely")
        with Horizontal():
            yield Button(
                t("metrics.scope.accept", self.lang),
                id="scope-accept",
                variant="success",
                disabled=True,
            )

    async def load(self, refresh: bool) -> ScopeResult:
        from cockpit.collect import steps
        from cockpit.collect.cache import screen_window

        return await steps.scope(self.ctx, screen_window(self.ctx), refresh)

    def show(self, data: ScopeResult) -> None:
        lang = self.lang
        br = data.blast_radius
        head = blast_line(data, lang)
        if br.propose:
            head += "\n" + t(f"metrics.propose.{br.propose}", lang)
        self.query_one("#scope-verdict", Static).update(head)
        lines = br.lines_text(lang)
        if not data.anomalous:
            lines.append("—")
        self.query_one("#scope-lines", Static).update("\n".join(lines))
        self.query_one("#scope-accept", Button).disabled = not br.propose

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id != "scope-accept" or self.data is None or self.ctx.session is None:
            return
        event.stop()
        br = self.data.blast_radius
        branch = Branch.SINGLE if br.propose == "E" else Branch.SHARED
        self.ctx.session.set_branch(branch, verdict_text(self.data, self.lang))
        self.notify(
            t("metrics.scope.accepted", self.lang, scope=t(f"metrics.scope.{br.scope}", self.lang)),
            markup=False,
        )
        self.post_message(self.VerdictAccepted(branch))
        # Enter again would record the same verdict twice; the next sentence belongs in
        # the verdict's own field.
        focus_next_field(event.button)
