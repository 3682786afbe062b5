"""D — single instance / single node, or shared? The blast-radius verdict with its numbers,
and the user's answer, which picks E or F (seed 000 flowchart, node D)."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Button, Static

from cockpit.flow import Branch
from cockpit.i18n import t
from cockpit.screens.base import StepScreen
from cockpit.ui.buttons import relabel
from cockpit.ui.fields import BoundTextArea


class ScopeScreen(StepScreen):
    """Step D."""

    STEP = "D"

    DEFAULT_CSS = """
    ScopeScreen #branch-buttons { height: auto; }
    ScopeScreen #branch-buttons Button { height: 1; border: none; }
    ScopeScreen #branch-state { margin: 1 0 0 0; }
    """

    def compose_step(self) -> ComposeResult:
        from cockpit.ui.likely_view import LikelyView
        from cockpit.ui.scope_view import ScopeView

        # The verdict and every button first, so that they fit an 80×24 terminal whatever
        # the size of the service; the conclusion and the notes follow.
        yield ScopeView(self.ctx, likely=False)
        yield Static("", id="branch-state", markup=False)
        with Vertical(id="branch-buttons"):
            yield Button(t("flow.branch_single", self.lang), id="branch-single", variant="primary")
            yield Button(t("flow.branch_shared", self.lang), id="branch-shared", variant="primary")
            # The third answer, when the verdict is that every replica of one revision is
            # worse (or it was chosen): shown only then.
            release = Button(
                t("flow.branch_release", self.lang), id="branch-release", variant="primary"
            )
            release.display = False
            yield release
        if not self.ctx.drill:  # a drill asks for the conclusion before showing one
            yield LikelyView(self.ctx, id="scope-likely")
        yield BoundTextArea(self.ctx, "scope_verdict", "field.scope_verdict")

    release_possible = False
    """Whether the verdict shown says every replica of one revision is worse: the whole
    release is then one of the answers, named by the question and a button of its own."""

    _BUTTONS = {
        "branch-single": Branch.SINGLE,
        "branch-shared": Branch.SHARED,
        "branch-release": Branch.RELEASE,
    }

    def on_mount(self) -> None:
        self.incident_changed()

    def on_scope_view_verdict_shown(self, event: Any) -> None:
        self.release_possible = event.branch == Branch.RELEASE
        self.incident_changed()

    def incident_changed(self) -> None:
        assert self.ctx.session is not None
        branch = self.ctx.session.incident.scope_branch
        release = self.release_possible or branch == Branch.RELEASE
        if branch:
            text = t(f"scope.chosen.{branch}", self.lang)
        else:
            text = t("flow.choose_branch_release" if release else "flow.choose_branch", self.lang)
        self.query_one("#branch-state", Static).update(text)
        self.query_one("#branch-release", Button).display = release
        # Once a branch is chosen the buttons say what they do now: go on with it, or
        # change to another one; never a bare "Yes" / "No" to a question answered.
        for name in ("single", "shared", "release"):
            key = f"flow.branch_{name}"
            if branch:
                key += "_again" if branch.value == name else "_switch"
            elif release and name != "release":
                key += "_of_three"  # not "Yes"/"No": the question has three answers
            relabel(self.query_one(f"#branch-{name}", Button), t(key, self.lang))

    def on_scope_view_verdict_accepted(self, event: Any) -> None:
        """After "Accept verdict" focus goes to the next decision, the question under it
        (single, the whole release or shared?), on the answer the verdict gave, scrolled
        into sight; a notice says that Enter there goes on. Never down to the notes at the
        bottom. The verdict just stored shows in its field."""
        self.sync_fields()
        if event.branch not in (Branch.SINGLE, Branch.SHARED, Branch.RELEASE):
            return
        self.incident_changed()
        button = self.query_one(f"#branch-{event.branch}", Button)
        self.show_focused(button)
        self.notify(t("scope.accepted_next", self.lang, answer=str(button.label)), markup=False)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        assert self.ctx.session is not None
        if event.button.id in self._BUTTONS:
            branch = self._BUTTONS[event.button.id]
            self.ctx.session.set_branch(branch)
            self.incident_changed()
            self.app.action_next_step()  # type: ignore[attr-defined]
