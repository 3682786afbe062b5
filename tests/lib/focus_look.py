"""What the eye sees of a widget's focus, to compare focused and unfocused."""

from __future__ import annotations

from typing import Any

from textual.widget import Widget


def strong_look(widget: Widget) -> list[tuple[Any, ...]]:
    """Per visible part of ``widget`` (itself, a drop-down's current value): its blended
    background, border, outline and text style."""
    parts = [widget, *widget.query("SelectCurrent")]
    return [
        (
            w.background_colors[1].rgb,
            str(w.styles.border),
            str(w.styles.outline),
            str(w.styles.text_style),
        )
        for w in parts
    ]
