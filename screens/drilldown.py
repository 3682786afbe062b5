"""C — SLI drilldown: five layers × golden signals, now vs baseline (seed 003: 先定位层，再定位点)."""

from __future__ import annotations

from textual.app import ComposeResult

from cockpit.screens.base import StepScreen


class DrilldownScreen(StepScreen):
    """Step C: the drilldown view plus the panels registered for C (per-GPU state)."""

    STEP = "C"

    def compose_step(self) -> ComposeResult:
        from cockpit.ui.drilldown_view import DrilldownView

        yield DrilldownView(self.ctx)

    def incident_changed(self) -> None:
        """The baseline put back from the history (F8) is the one C compares with."""
        from cockpit.ui.drilldown_view import DrilldownView

        for view in self.query(DrilldownView):
            view.follow_baseline()
