"""F — shared dependencies and load: arrival rate and prompt-length mix, gateway vs
serving time, shared nodes, storage and network (seed 000 flowchart node F; seed 003)."""

from __future__ import annotations

from textual.app import ComposeResult

from cockpit.screens.base import StepScreen
from cockpit.ui.fields import BoundInput


class SharedScreen(StepScreen):
    """Step F."""

    STEP = "F"

    def compose_step(self) -> ComposeResult:
        from cockpit.ui.shared_view import SharedView

        yield SharedView(self.ctx)
        yield BoundInput(self.ctx, "breakdown", "field.breakdown")
