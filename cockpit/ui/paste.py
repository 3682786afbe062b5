"""Paste evidence: on every step, paste a log excerpt, an OOM message, dmesg Xid lines or
a FailedScheduling event; cockpit says what it is, what it means and what to check next
(the same engine as ``cockpit explain``), and the finding can be pinned as evidence."""

from __future__ import annotations

from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static, TextArea

from cockpit.context import AppContext
from cockpit.i18n import t
from cockpit.incident import Evidence
from cockpit.ui.keys import localize_bindings

EXCERPT_CHARS = 300
"""The longest log line kept in a pinned paste (the postmortem needs the line, not the
whole paste)."""


def _with_excerpt(brief: str, lines: list[str], first_line: int) -> str:
    """The finding's fields, then the log line it starts at (quoted, cut at
    :data:`EXCERPT_CHARS`): "GPU 3, 2.00 GiB requested, pid 48213" is evidence, the
    verdict alone is not."""
    if not (0 < first_line <= len(lines)):
        return brief
    line = lines[first_line - 1].strip()
    if len(line) > EXCERPT_CHARS:
        line = line[:EXCERPT_CHARS] + "…"
    return f"{brief} — «{line}»" if brief else f"«{line}»"


def _brief(fields: dict[str, Any], limit: int = 6) -> str:
    """The finding's scalar fields as ``k=v`` (lists and nested records left to the
    ``cockpit explain`` output: the evidence line must stay readable in a postmortem)."""
    parts = []
    for key, value in fields.items():
        if key == "lang" or isinstance(value, (dict, list, tuple)) or value in (None, ""):
            continue
        text = str(value)
        parts.append(f"{key}={text[:80] + '…' if len(text) > 80 else text}")
        if len(parts) >= limit:
            break
    return ", ".join(parts)


class PasteScreen(ModalScreen[None]):
    """Modal with a text area, the explanation, and a pin button."""

    DEFAULT_CSS = """
    PasteScreen { align: center middle; }
    PasteScreen > Vertical { width: 96%; max-width: 150; height: 94%; border: thick $accent; background: $surface; padding: 0 1; }
    PasteScreen #paste-text { height: 10; }
    PasteScreen #paste-result { height: 1fr; border: round $primary 30%; }
    PasteScreen Horizontal { height: auto; }
    """
    BINDINGS = [Binding("escape", "close", "Close")]

    def __init__(self, ctx: AppContext, step: str = "") -> None:
        super().__init__()
        self.ctx = ctx
        localize_bindings(self, ctx.lang)
        self.step = step
        self.explanation: Any = None
        self._lines: list[str] = []

    def compose(self) -> ComposeResult:
        lang = self.ctx.lang
        with Vertical():
            yield Label(t("paste.title", lang))
            yield Static(t("paste.hint", lang), classes="hint")
            yield TextArea("", id="paste-text", soft_wrap=False, show_line_numbers=True)
            with Horizontal():
                yield Button(t("paste.explain", lang), id="paste-explain", variant="primary")
                yield Button(t("paste.pin", lang), id="paste-pin", disabled=True)
            with VerticalScroll(id="paste-result"):
                yield Static("", id="paste-output", markup=False)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "paste-explain":
            text = self.query_one("#paste-text", TextArea).text
            self.query_one("#paste-output", Static).update(t("panel.loading", self.ctx.lang))
            self.explain(text)
        elif event.button.id == "paste-pin":
            self._pin()

    @work(thread=True, exclusive=True, group="paste-explain")
    def explain(self, text: str) -> None:
        """Run the analyzers off the event loop (large pastes take a moment)."""
        from cockpit.analysis.explain import explain_text
        from cockpit.analysis.explain_report import to_text

        expl = explain_text(text, lang=self.ctx.lang)
        rendered = to_text(expl, self.ctx.lang)
        self.app.call_from_thread(self._show, expl, rendered, text)

    def _show(self, expl: Any, rendered: str, text: str = "") -> None:
        self.explanation = expl
        self._lines = text.splitlines()
        self.query_one("#paste-output", Static).update(rendered)
        self.query_one("#paste-pin", Button).disabled = not expl.recognised

    def _pin(self) -> None:
        expl = self.explanation
        if expl is None or not expl.recognised or self.ctx.session is None:
            return
        from cockpit.analysis.explain_report import to_json

        # The finding's title in the UI language ("CUDA 显存不足"), not its kind id.
        titles = [x["title"] for x in to_json(expl, self.ctx.lang)["findings"]]
        for f, title in zip(expl.findings, titles, strict=False):
            value = f.cause or f.category
            self.ctx.session.pin(
                Evidence(
                    label=f"{t('paste.evidence_label', self.ctx.lang)}: {title or f.kind}",
                    value=str(value),
                    at=self.ctx.clock.now(),
                    source="explain",
                    step=self.step,
                    note=_with_excerpt(_brief(f.fields), self._lines, f.first_line),
                    query=f"line {f.first_line}" if f.first_line else "",
                )
            )
        self.notify(t("paste.pinned", self.ctx.lang, n=len(expl.findings)), markup=False)
        self.query_one("#paste-pin", Button).disabled = True

    def action_close(self) -> None:
        self.dismiss(None)
