"""A button's label changed after it was laid out, measured again.

Textual's ``Button`` repaints a new label in the width the old one was measured at: a
longer one ("Change to shared → F (dependencies and load)" after "No: shared → ...") is
cut at its end. Every label the app changes goes through :func:`relabel`.
"""

from __future__ import annotations

from textual.widgets import Button


def relabel(button: Button, label: str) -> None:
    """Show ``label`` on ``button``, the button sized to it again."""
    if str(button.label) == label:
        return
    button.label = label
    button.clear_cached_dimensions()
    button.refresh(layout=True)
