"""Step D widget: the blast-radius verdict with the numbers behind it, proposing E or F.

Seed 000 flowchart node D (单实例 / 单节点?). Accepting the verdict records the branch and
the verdict text in the incident (``IncidentSession.set_branch``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Button, Static

from cockpit.analysis.history import entity_text
from cockpit.collect.steps import ScopeResult
from cockpit.flow import Branch
from cockpit.i18n import in_both, t
from cockpit.ui.focus import focus_next_field
from cockpit.ui.likely_view import LikelyView
from cockpit.ui.metrics_common import MetricsView


def blast_line(res: ScopeResult, lang: str) -> str:
    """The verdict's first line: the scope, the suspect, and why an undecided scope is
    undecided when queries failed."""
    br = res.blast_radius
    line = t("metrics.text.blast", lang, scope=t(f"metrics.scope.{br.scope}", lang))
    if br.suspect:
        name = entity_text(res.suspect_name or br.suspect, lang)
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
    ScopeView #scope-lines.-compact { text-wrap: nowrap; text-overflow: ellipsis; }
    ScopeView Horizontal { height: auto; }
    ScopeView Button { height: 1; border: none; min-width: 10; margin: 0 1 0 0; }
    """

    ROWS_AROUND: ClassVar[int] = 18
    """Rows of a step D screen that are not evidence lines (title bar, steps, guide, the
    headline, the buttons of the view and of the screen, the footer): on a terminal this
    many rows taller than the lines, every line is shown, wrapped; on a smaller one the
    first lines are, one row each, then how many more the detail view holds."""
    MIN_LINES: ClassVar[int] = 3

    class VerdictShown(Message):
        """The verdict is on screen; ``branch`` is the answer it proposes (``single``,
        ``shared`` or ``release``, empty when it proposes none)."""

        def __init__(self, branch: str) -> None:
            super().__init__()
            self.branch = branch

    class VerdictAccepted(Message):
        """The user accepted the verdict; ``branch`` is ``single`` or ``shared``."""

        def __init__(self, branch: str) -> None:
            super().__init__()
            self.branch = branch

    def __init__(self, ctx: Any, *, likely: bool = True, **kwargs: Any) -> None:
        super().__init__(ctx, **kwargs)
        self.likely = likely

    def compose_body(self) -> ComposeResult:
        yield Static("", id="scope-verdict", markup=False)
        yield Static("", id="scope-lines", markup=False)
        with Horizontal():
            yield Button(
                t("metrics.scope.accept", self.lang),
                id="scope-accept",
                variant="success",
                disabled=True,
            )
            yield Button(t("metrics.scope.details", self.lang), id="scope-details", disabled=True)
        if self.likely and not self.ctx.drill:
            yield LikelyView(self.ctx, id="scope-likely")

    async def load(self, refresh: bool) -> ScopeResult:
        from cockpit.collect import steps
        from cockpit.collect.cache import screen_window

        return await steps.scope(self.ctx, screen_window(self.ctx), refresh)

    def show(self, data: ScopeResult) -> None:
        lang = self.lang
        br = data.blast_radius
        head = blast_line(data, lang)
        if br.propose_key:
            head += "\n" + t(br.propose_key, lang)
        self.query_one("#scope-verdict", Static).update(head)
        lines = br.lines_text(lang)
        if not data.anomalous:
            lines.append("—")
        room = max(self.MIN_LINES, self.app.size.height - self.ROWS_AROUND)
        box = self.query_one("#scope-lines", Static)
        box.set_class(len(lines) > room, "-compact")
        if len(lines) > room:
            more = len(lines) - (room - 1)
            lines = [*lines[: room - 1], t("metrics.scope.more_lines", lang, n=more)]
        box.update("\n".join(lines))
        self.query_one("#scope-accept", Button).disabled = not br.propose
        self.post_message(self.VerdictShown(str(br.branch or "")))
        self.query_one("#scope-details", Button).disabled = not (br.per_signal or br.hidden)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "scope-details" and self.data is not None:
            from cockpit.ui.scope_detail import ScopeDetailScreen

            event.stop()
            head = blast_line(self.data, self.lang)
            self.app.push_screen(ScopeDetailScreen(self.data.blast_radius, head, self.lang))
            return
        if event.button.id != "scope-accept" or self.data is None or self.ctx.session is None:
            return
        event.stop()
        br = self.data.blast_radius
        branch = br.branch or Branch.SHARED
        data = self.data
        field = self.ctx.session.set_branch(
            branch,
            verdict_text(data, self.lang),
            in_both(lambda lang: verdict_text(data, lang)),
        )
        # the answer as D's screen and the export name it, with the blast radius it rests on
        said = t(
            "metrics.scope.accepted",
            self.lang,
            answer=t(f"export.path.branch_{branch.value}", self.lang),
            scope=t(f"metrics.scope.{br.scope}", self.lang),
        )
        if field in ("kept", "replaced"):
            said += ("" if self.lang == "zh" else " ") + t(
                f"metrics.scope.verdict_{field}",
                self.lang,
                field=t("field.scope_verdict", self.lang),
            )
        self.notify(said, markup=False)
        self.post_message(self.VerdictAccepted(branch))
        # Enter again would record the same verdict twice. Step D asks the next question
        # under the verdict and takes focus to it (on VerdictAccepted); elsewhere the
        # next sentence belongs in the verdict's own field.
        if not self.screen.query("#branch-buttons"):
            focus_next_field(event.button)
