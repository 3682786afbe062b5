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
        if not self.ctx.drill:  # a drill asks for the conclusion before showing one
            yield LikelyView(self.ctx, id="scope-likely")
        yield BoundTextArea(self.ctx, "scope_verdict", "field.scope_verdict")

    def on_mount(self) -> None:
        self.incident_changed()

    def incident_changed(self) -> None:
        assert self.ctx.session is not None
        branch = self.ctx.session.incident.scope_branch
        text = (
            t(f"scope.chosen.{branch}", self.lang) if branch else t("flow.choose_branch", self.lang)
        )
        self.query_one("#branch-state", Static).update(text)
        # Once a branch is chosen the buttons say what they do now: go on with it, or
        # change to the other one; never a bare "Yes" / "No" to a question answered.
        for name in ("single", "shared"):
            key = f"flow.branch_{name}"
            if branch:
                key += "_again" if branch.value == name else "_switch"
            relabel(self.query_one(f"#branch-{name}", Button), t(key, self.lang))

    def on_scope_view_verdict_accepted(self, event: Any) -> None:
        """After "Accept verdict" focus goes to the next decision, the question under it
        (single or shared?), on the answer the verdict gave, scrolled into sight; a
        notice says that Enter there goes on. Never down to the notes at the bottom (a
        release, its own answer, leaves focus on the verdict's "Details"). The verdict
        just stored shows in its field."""
        self.sync_fields()
        if event.branch not in (Branch.SINGLE, Branch.SHARED):
            # A release is its own answer (E compares the revisions): "single" would
            # replace it. Focus stays on a button in sight, the verdict's details.
            details = self.query_one("#scope-details", Button)
            if not details.disabled:
                self.show_focused(details)
            return
        button = self.query_one(f"#branch-{event.branch}", Button)
        self.show_focused(button)
        self.notify(t("scope.accepted_next", self.lang, answer=str(button.label)), markup=False)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        assert self.ctx.session is not None
        if event.button.id in ("branch-single", "branch-shared"):
            branch = Branch.SINGLE if event.button.id == "branch-single" else Branch.SHARED
            self.ctx.session.set_branch(branch)
            self.incident_changed()
            self.app.action_next_step()  # type: ignore[attr-defined]
