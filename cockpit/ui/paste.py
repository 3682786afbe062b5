"""Paste evidence: on every step, paste a log excerpt, an OOM message, dmesg Xid lines or
a FailedScheduling event; cockpit says what it is, what it means and what to check next
(the same engine as ``cockpit explain``), and the finding can be pinned as evidence.

Anything can be pinned: cockpit's own output (``cockpit gpus``, ``pending``, ``changes``,
``analyze``) is read into its facts (:mod:`cockpit.analysis.cockpit_output`), one pinned
piece of evidence each; text nothing recognises is pinned as a note, stamped when it
is logged (:meth:`cockpit.clock.Clock.logged`); a recognised finding carries the time
written on its log line when the line has one (else the incident clock), and its label in
both languages. "Pin" explains the text first when it has not been explained yet, and
every press says what it did."""

from __future__ import annotations

from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static, TextArea

from cockpit.analysis.cockpit_output import CockpitOutput
from cockpit.analysis.logtext import line_datetime
from cockpit.context import AppContext
from cockpit.i18n import LANGS, in_both, t
from cockpit.incident import Evidence
from cockpit.timeparse import fmt_time
from cockpit.ui.keys import localize_bindings
from cockpit.ui.nowhere import SaysWhereTypingGoes
from cockpit.ui.worker_errors import ContainsWorkerErrors

EXCERPT_CHARS = 300
"""The longest log line kept in a pinned paste (the postmortem needs the line, not the
whole paste)."""


NOTE_VALUE_CHARS = 120
"""Columns of a pasted note's first line kept as its value (the note holds the text)."""
NOTE_CHARS = 2000
"""The most of an unrecognised paste kept in its note (the rest is cut with "…")."""


def _excerpt(lines: list[str], first_line: int) -> str:
    """The log line a finding starts at, cut at :data:`EXCERPT_CHARS` ("" when unknown):
    "GPU 3, 2.00 GiB requested, pid 48213" is evidence, the verdict alone is not."""
    if not (0 < first_line <= len(lines)):
        return ""
    line = lines[first_line - 1].strip()
    return line[:EXCERPT_CHARS] + "…" if len(line) > EXCERPT_CHARS else line


def uncovered_lines(expl: Any, lines: list[str]) -> list[str]:
    """The non-blank lines of ``lines`` that none of ``expl``'s findings rests on (neither
    its first line nor one of its evidence lines), in order: a note typed beside the log,
    or log lines outside what was recognised."""
    covered = {f.first_line for f in expl.findings}
    covered |= {e.line for f in expl.findings for e in f.evidence}
    return [x for i, x in enumerate(lines, 1) if x.strip() and i not in covered]


def _brief(fields: dict[str, Any], lang: str, limit: int = 6) -> str:
    """The finding's fields named and valued in ``lang``, as ``cockpit explain`` shows them
    (:func:`~cockpit.analysis.explain_report.field_lines`), on one line: the evidence
    line must stay readable in a postmortem."""
    from cockpit.analysis.explain_report import field_lines

    sep = "；" if lang == "zh" else "; "
    return sep.join(x if len(x) <= 90 else x[:89] + "…" for x in field_lines(fields, limit, lang))


def _first_sentence(text: str, limit: int = 120) -> str:
    """The first sentence of a finding's meaning, its verdict (cut at ``limit``)."""
    for stop in ("。", ". ", "；", "; "):
        if stop in text:
            text = text.split(stop, 1)[0] + stop.strip()
            break
    return text if len(text) <= limit else text[: limit - 1] + "…"


class PasteScreen(ContainsWorkerErrors, SaysWhereTypingGoes, ModalScreen[None]):
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
        self._by_lang: dict[str, Any] = {}
        self.own: CockpitOutput | None = None
        """The paste read as cockpit's own output, when it is one."""
        self._explained: str | None = None
        """The text the explanation is of (``None``: nothing explained yet)."""
        self._lines: list[str] = []

    def compose(self) -> ComposeResult:
        lang = self.ctx.lang
        with Vertical():
            yield Label(t("paste.title", lang))
            yield Static(t("paste.hint", lang), classes="hint")
            yield TextArea("", id="paste-text", soft_wrap=True, show_line_numbers=True)
            with Horizontal():
                yield Button(t("paste.explain", lang), id="paste-explain", variant="primary")
                yield Button(t("paste.pin", lang), id="paste-pin")
            yield Static("", id="paste-status", markup=False)
            with VerticalScroll(id="paste-result") as result:
                result.border_title = t("paste.result", lang)
                yield Static("", id="paste-output", markup=False)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        text = self.query_one("#paste-text", TextArea).text
        if event.button.id not in ("paste-explain", "paste-pin"):
            return
        if not text.strip():
            self._say(t("paste.empty", self.ctx.lang), warn=True)
            return
        pin = event.button.id == "paste-pin"
        if pin and text == self._explained:
            self._pin()
            return
        self.query_one("#paste-output", Static).update(t("panel.loading", self.ctx.lang))
        self.explain(text, pin)

    def _say(self, message: str, warn: bool = False) -> None:
        """What the last press did, on the screen and as a notice."""
        self.query_one("#paste-status", Static).update(message)
        self.notify(message, severity="warning" if warn else "information", markup=False)

    @work(thread=True, exclusive=True, group="paste-explain", exit_on_error=False)
    def explain(self, text: str, pin: bool = False) -> None:
        """Run the analyzers off the event loop (large pastes take a moment); ``pin``:
        pin what was found once shown."""
        from cockpit.analysis.cockpit_output import read_cockpit_output
        from cockpit.analysis.explain import explain_text
        from cockpit.analysis.explain_report import to_text

        own = read_cockpit_output(text)
        expl = explain_text(text, lang=self.ctx.lang)
        rendered = to_text(expl, self.ctx.lang)
        # Its words in every language, for the pin: the export speaks its own.
        by_lang = {
            lang: expl if lang == self.ctx.lang else explain_text(text, lang=lang)
            for lang in (LANGS if expl.recognised else ())
        }
        self.app.call_from_thread(self._show, expl, rendered, text, own, pin, by_lang)

    def show_worker_error(self, text: str) -> None:
        """The analysis failed unexpectedly: said where its result would be; the pasted
        text stays in the field."""
        self.query_one("#paste-output", Static).update(f"⚠ {text}")

    def _show(
        self,
        expl: Any,
        rendered: str,
        text: str = "",
        own: CockpitOutput | None = None,
        pin: bool = False,
        by_lang: dict[str, Any] | None = None,
    ) -> None:
        lang = self.ctx.lang
        self.explanation = expl
        self._by_lang = by_lang or {}
        self.own = own
        self._explained = text
        self._lines = text.splitlines()
        if own is not None:
            head = [t("paste.own", lang, command=own.command, n=len(own.facts))]
            head += [f"  • {f.subject}: {f.value}" for f in own.facts]
            rendered = "\n".join(head)
        elif not expl.recognised:
            rendered = t("paste.as_note", lang) + "\n\n" + rendered
        from cockpit.ui.protect import fill_commands

        self.query_one("#paste-output", Static).update(fill_commands(self.ctx, rendered))
        if pin:
            self._pin()

    def _pin(self) -> None:
        """Pin what the explained text holds: cockpit's facts, explain's findings, or the
        text itself as a note; say which."""
        if self.ctx.session is None:
            return
        if self.own is not None:
            self._pin_own(self.own)
        elif self.explanation is not None and self.explanation.recognised:
            self._pin_findings()
            rest = uncovered_lines(self.explanation, self._lines)
            if rest:
                # What no finding rests on (a line of the responder's own, say) is pinned
                # beside the findings as a note: nothing pasted is dropped.
                at = self._pin_note("\n".join(rest), say=False)
                self._say(
                    t(
                        "paste.pinned_and_note",
                        self.ctx.lang,
                        n=len(self.explanation.findings),
                        lines=len(rest),
                        at=fmt_time(at),
                    )
                )
        else:
            self._pin_note()

    def _pin_own(self, own: CockpitOutput) -> None:
        assert self.ctx.session is not None
        for fact in own.facts:
            line = self._lines[fact.line - 1].strip() if fact.line <= len(self._lines) else ""
            self.ctx.session.pin(
                Evidence(
                    label=f"cockpit {own.command}: {fact.subject}",
                    value=fact.value,
                    at=self.ctx.clock.now(),
                    source=f"cockpit {own.command}",
                    step=self.step,
                    note=f"«{line[:EXCERPT_CHARS]}»" if line else "",
                    query=f"cockpit {own.command}, line {fact.line}",
                )
            )
        self._say(t("paste.pinned_own", self.ctx.lang, n=len(own.facts), command=own.command))

    def _pin_note(self, text: str | None = None, say: bool = True) -> Any:
        """Pin ``text`` (default: the whole explained text) as a note; returns the time it
        is evidence of."""
        from cockpit.history import short

        assert self.ctx.session is not None
        text = ((self._explained or "") if text is None else text).strip()
        lines = text.splitlines()
        note = text if len(text) <= NOTE_CHARS else text[:NOTE_CHARS] + "…"
        # A text that carries its own time (a log line) is evidence of that time, not of
        # the moment it was pinned (``pinned_at`` keeps that) nor of the clock's.
        # Else it is a note the responder writes now: stamped like every entry logged
        # (the incident clock running on from the instant investigated, in order with
        # the timeline's notes), never all at that one frozen instant.
        now = self.ctx.clock.now()
        own = next((d for d in (line_datetime(x, now) for x in lines) if d), None)
        at = own or self.ctx.clock.logged()
        self.ctx.session.pin(
            Evidence(
                label=t("paste.note_label", self.ctx.lang),
                label_i18n=in_both(lambda lang: t("paste.note_label", lang)),
                value=short(lines[0] if lines else "", NOTE_VALUE_CHARS),
                at=at,
                source="user",
                step=self.step,
                note=note,
            )
        )
        if say:
            key = "paste.pinned_note_own" if own is not None else "paste.pinned_note"
            self._say(t(key, self.ctx.lang, at=fmt_time(at)))
        return at

    def _pin_findings(self) -> None:
        expl = self.explanation
        assert self.ctx.session is not None and expl is not None
        from cockpit.analysis.explain_report import to_json

        # The finding's title in each language ("CUDA 显存不足"), not its kind id: the
        # label follows the UI and the export's language, not the one of the pin.
        by_lang = {lang: self._by_lang.get(lang, expl) for lang in LANGS}
        worded = {lang: to_json(by_lang[lang], lang)["findings"] for lang in LANGS}
        titles = {lang: [x["title"] for x in worded[lang]] for lang in LANGS}
        now = self.ctx.clock.now()
        for i, f in enumerate(expl.findings):
            value = f.cause or f.category
            excerpt = _excerpt(self._lines, f.first_line)

            def verdict(lang: str, i: int = i, value: str = value) -> str:
                meaning = worded[lang][i]["meaning"] if i < len(worded[lang]) else ""
                return _first_sentence(str(meaning)) or value

            def note(lang: str, i: int = i, f: Any = f) -> str:
                found = by_lang[lang].findings
                fields = found[i].fields if i < len(found) else f.fields
                where = t("explain.label.line", lang, line=f.first_line) if f.first_line else ""
                return " — ".join(x for x in (_brief(fields, lang), where) if x)

            def label(lang: str, i: int = i, kind: str = f.kind) -> str:
                title = titles[lang][i] if i < len(titles[lang]) else ""
                return f"{t('paste.evidence_label', lang)}: {title or kind}"

            line = self._lines[f.first_line - 1] if 0 < f.first_line <= len(self._lines) else ""
            self.ctx.session.pin(
                Evidence(
                    label=label(self.ctx.lang),
                    label_i18n=in_both(label),
                    value=verdict(self.ctx.lang),
                    value_i18n=in_both(verdict),
                    at=line_datetime(line, now) or now,
                    source="explain",
                    step=self.step,
                    what=f.kind,
                    note=note(self.ctx.lang),
                    note_i18n=in_both(note),
                    # What it rests on: the log line itself (its place is in the note).
                    query=excerpt,
                )
            )
        self._say(t("paste.pinned", self.ctx.lang, n=len(expl.findings)))

    def action_close(self) -> None:
        self.dismiss(None)
