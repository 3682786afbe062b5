"""App-wide Textual messages (past-tense events)."""

from __future__ import annotations

from textual.message import Message

from cockpit.incident import Incident


class IncidentChanged(Message):
    """The incident was changed (and saved or queued for saving)."""

    def __init__(self, incident: Incident) -> None:
        super().__init__()
        self.incident = incident
