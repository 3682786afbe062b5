"""E — isolate against a healthy cohort: other replicas of the same version, other GPUs on
the same node, the old version of the same workload (seed 000, 先收集: 健康对照组)."""

from __future__ import annotations

from textual.app import ComposeResult

from cockpit.screens.base import StepScreen
from cockpit.ui.fields import BoundInput


class IsolateScreen(StepScreen):
    """Step E: the cohort, GPU and scheduling panels register here."""

    STEP = "E"
    PANELS_FIRST = True

    def compose_step(self) -> ComposeResult:
        yield BoundInput(self.ctx, "control_group", "field.control_group")
