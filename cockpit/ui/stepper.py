"""The stepper: where the user is in the flowchart and the path taken."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from cockpit.flow import STEPS
from cockpit.i18n import t

VISITED = "•"
"""Mark of a step already opened (not a check mark: opening a step does not finish it)."""


class Stepper(Static):
    """One line: every step with its short name; current highlighted, visited marked
    :data:`VISITED` in green. Where the names do not fit on one line (an 80-column
    terminal), the other steps show their letter only and the current one its name.

    The branch at D is shown as ``E|F`` with the chosen side emphasised.
    """

    DEFAULT_CSS = """
    Stepper { height: auto; padding: 0 1; background: $boost; }
    """

    def __init__(self, lang: str, current: str, path: list[str], branch: str, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.lang = lang
        self.current = current
        self.path = path
        self.branch = branch

    def set_state(self, current: str, path: list[str], branch: str) -> None:
        """Update and redraw."""
        self.current, self.path, self.branch = current, list(path), branch
        self.update(self.build())

    def on_mount(self) -> None:
        self.update(self.build())

    def on_resize(self) -> None:
        self.update(self.build())

    def build(self) -> Text:
        """The rendered line: the steps' names when they fit the widget's width, else
        letters with the current step's name."""
        full = self._line(compact=False)
        width = self.content_size.width
        if width and full.cell_len > width:
            return self._line(compact=True)
        return full

    def _line(self, compact: bool) -> Text:
        text = Text()
        visited = set(self.path)
        for i, st in enumerate(STEPS):
            sid = st.id.value
            if i:
                sep = "|" if sid == "F" else " › "
                text.append(sep, style="dim")
            label = sid
            if sid == self.current or not compact:
                label = f"{sid} {t(f'step.{sid}.short', self.lang)}"
            if sid in visited and sid != self.current:
                label = f"{VISITED}{label}"
            style = ""
            if sid == self.current:
                style = "bold reverse"
            elif sid in ("E", "F") and self.branch:
                chosen = "F" if self.branch == "shared" else "E"
                style = "bold" if sid == chosen else "dim strike"
            elif sid in visited:
                style = "green"
            text.append(label, style=style)
        return text
