"""The Textual app: a light boot screen paints first, then a worker builds the context
(config, sources, incident) and the flow's step screens take over.

Nothing heavy is imported at module level: the first frame must not wait for pydantic,
the Kubernetes client or NVML (see ``bench/bench_startup.py``).
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any, ClassVar

from textual import work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Static

from cockpit.ui.keyorder import KeysInOrder
from cockpit.ui.worker_errors import ContainsWorkerErrors

if TYPE_CHECKING:
    from cockpit.context import AppContext
    from cockpit.incident import Incident


STEP_SCREENS: dict[str, tuple[str, str]] = {
    "A": ("cockpit.screens.impact", "ImpactScreen"),
    "B": ("cockpit.screens.changes", "ChangesScreen"),
    "C": ("cockpit.screens.drilldown", "DrilldownScreen"),
    "D": ("cockpit.screens.scope", "ScopeScreen"),
    "E": ("cockpit.screens.isolate", "IsolateScreen"),
    "F": ("cockpit.screens.shared", "SharedScreen"),
    "G": ("cockpit.screens.hypotheses", "HypothesesScreen"),
    "H": ("cockpit.screens.experiments", "ExperimentsScreen"),
    "I": ("cockpit.screens.verify", "VerifyScreen"),
}


TEXTUAL_COMMANDS = {
    "Change the current theme": "cmd.textual.theme",
    "Quit the application as soon as possible": "cmd.textual.quit",
    "Hide the keys and widget help panel": "cmd.textual.keys_hide",
    "Show help for the focused widget and a summary of available keys": "cmd.textual.keys_show",
    "Minimize the widget and restore to normal size": "cmd.textual.minimize",
    "Maximize the focused widget": "cmd.textual.maximize",
    "Save an SVG 'screenshot' of the current screen": "cmd.textual.screenshot",
}
"""Textual's system commands by their help text, and the i18n key of their translation
(``<key>.title`` for the title)."""


EXIT_DEADLINE_S = 1.0
"""Seconds, after SIGHUP/SIGTERM and the save, that Textual has to restore the terminal
before the process ends regardless (a dead terminal can block that for ever); with the
save well under a second, the process is gone within 2 s of the signal."""


def save_error_text(error: BaseException, lang: str) -> str:
    """A failed save in ``lang``: the store's own sentence when it has one (a damaged or
    linked incident file says what to do), else the system's message."""
    message = getattr(error, "message", None)
    if callable(message):
        return str(message(lang))
    return str(getattr(error, "strerror", None) or error)


PANEL_CHORDS = ("alt+p", "alt+s", "alt+c", "alt+o", "alt+r")
"""The chords panels (and the playbook screen) act on while focus is in them."""


class CockpitApp(ContainsWorkerErrors, KeysInOrder):
    """cockpit's TUI.

    Args:
        args: Parsed CLI arguments (the app builds its context from them in a worker).
        ctx: A ready context (tests, snapshots): skips the boot worker.
        start_step: Step to open when ``ctx`` is given (default: the incident's current step).
    """

    TITLE = "cockpit"
    ENABLE_COMMAND_PALETTE = True
    CSS = """
    #boot { width: 100%; height: 100%; content-align: center middle; }
    #boot.-error { color: $error; content-align: left top; padding: 1 2; }
    /* One-row buttons: every line counts at 80x24. */
    Button { height: 1; min-width: 6; border: none; margin: 0 1 0 0; padding: 0 1; }
    Button:focus { text-style: bold reverse; }
    /* Focus is always visible: every focusable widget shows it, and a panel lights its
       border while focus is inside it (its own chords work then). */
    Input:focus { background: $accent 30%; }
    /* A one-line field without a border shows focus as clearly as a bordered one: the
       whole line is drawn in the accent colour. */
    Input.-textual-compact:focus { background: $accent 70%; color: $text; }
    /* One-line fields side by side: a column between them, so one's text never runs into
       the next one's. */
    Horizontal > Input.-textual-compact { margin-right: 1; }
    TextArea:focus { border: tall $accent; }
    DataTable:focus, OptionList:focus { outline-left: thick $accent; }
    /* A list without a border (a compact drop-down's) would lose its first letter under
       the bar: it is tinted instead, its highlighted option in the cursor's colours. */
    OptionList.-textual-compact:focus { outline-left: none; background: $accent 20%; }
    Select:focus > SelectCurrent { border: tall $accent; }
    Select.-textual-compact:focus > SelectCurrent { background: $accent 70%; color: $text; }
    Panel:focus-within { border: round $accent; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        # Printable keys are text, never commands (see ``help.keys``): steps and actions
        # are on F-keys, Alt/Ctrl chords and the palette only. Priority: a chord works in a
        # text field too (an Input would otherwise insert the chord's letter). No Alt+digit
        # or Alt+B: terminals send them as characters (ESC 3 is £) or as Ctrl+Left.
        Binding("f1", "help", "Help", show=False, priority=True),
        Binding("f2", "protect", "Protect first", show=False, priority=True),
        Binding("alt+right,f4", "next_step", "Next", show=False, priority=True),
        Binding("alt+left,f3", "prev_step", "Back", show=False, priority=True),
        Binding("ctrl+g", "step_menu", "Go to step", show=False, priority=True),
        Binding("f5", "refresh_panels", "Refresh", show=False, priority=True),
        Binding("f6", "paste", "Paste evidence", show=False, priority=True),
        Binding("f7", "playbooks", "Playbooks", show=False, priority=True),
        Binding("f8", "history", "History", show=False, priority=True),
        # A panel's chord pressed while focus is not in that panel: said, never silent
        # (see :meth:`action_chord_elsewhere`).
        *(
            Binding(key, f"chord_elsewhere('{key}')", show=False, priority=True)
            for key in PANEL_CHORDS
        ),
    ]

    def __init__(
        self,
        args: argparse.Namespace | None = None,
        *,
        ctx: AppContext | None = None,
        start_step: str | None = None,
    ) -> None:
        super().__init__()
        from cockpit.ui import escape
        from cockpit.ui.boundary import install

        install()  # outside text reaches the terminal without its control characters
        escape.install()  # Escape, then a key typed at once, is two keys, not an Alt chord
        self.args = args
        self.ctx: AppContext | None = ctx
        self._start_step = start_step
        self._installed: set[str] = set()
        self._change_timer: Any = None
        self.incident_version = 0
        """How many coalesced incident changes the app has forwarded: a step screen that
        comes back (from under F8's history, or from another step) and saw an older one
        refreshes what it lists."""
        self._exit_guard: Any = None
        self._quit_anyway = False
        self._save_error_shown = ""
        self._loop_ref: Any = None
        self.boot_error: str | None = None
        self._heap_frozen = False

    # -- boot ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        # The first frame: a plain line on the default screen, so nothing heavy (and no
        # second screen) stands between process start and the first paint.
        yield Static("cockpit — 加载中 / loading…", id="boot", markup=False)

    def on_mount(self) -> None:
        self.theme = "textual-dark"
        if os.environ.get("COCKPIT_FIRST_FRAME_FILE"):
            from cockpit.ui.frames import mark_after_paint

            mark_after_paint(self, "COCKPIT_FIRST_FRAME_FILE", "loading", exit_after=True)
        if self.args is not None and self._exit_guard is None:
            # SIGHUP (ssh drop) and SIGTERM, from the first frame on (during boot there
            # is no session yet, nothing to save): save, then let Textual restore the
            # terminal, or end at once when the terminal is gone.
            from cockpit.lifecycle import install_exit_handlers, wake_loop

            self._exit_guard = install_exit_handlers(
                lambda: self.ctx.session if self.ctx else None,
                exit_callback=wake_loop(self._exit_with),
                exit_deadline_s=EXIT_DEADLINE_S,
            )
            # what was typed and not yet added goes with the record, as on quit
            self._exit_guard.add_flusher(self.keep_typed_drafts)
        if self.ctx is not None:
            self._booted(self.ctx)
        else:
            # Paint the first frame before the boot worker competes for the GIL.
            self.call_after_refresh(self.boot)

    @work(thread=True, exclusive=True, group="boot", exit_on_error=False)
    def boot(self) -> None:
        """Build settings, sources and the incident session off the event loop."""
        from cockpit.i18n import t
        from cockpit.ui.escape import TMUX_ESCAPE_TIME_OK_MS, tmux_escape_time_ms
        from cockpit.wiring import BootError, build_tui_context

        try:
            ctx = build_tui_context(self.args or argparse.Namespace())
        except BootError as exc:
            self.boot_error = str(exc)
            self.call_from_thread(self._boot_failed, str(exc))
            return
        ms = tmux_escape_time_ms()
        if ms is not None and ms > TMUX_ESCAPE_TIME_OK_MS:
            ctx.warnings.append(t("keys.tmux_escape_time", ctx.lang, ms=ms))
        self.call_from_thread(self._booted, ctx)

    def show_worker_error(self, text: str) -> None:
        """A worker of the app itself failed: during boot on the boot screen, after it
        as a notification."""
        if self.ctx is None:
            self._boot_failed(text)
        else:
            super().show_worker_error(text)

    def _boot_failed(self, text: str) -> None:
        widget = self.screen_stack[0].query_one("#boot", Static)
        widget.update(text + "\n\nctrl+q")
        widget.add_class("-error")

    def _booted(self, ctx: AppContext) -> None:
        from cockpit.ui.plugins import load_panels
        from cockpit.wiring import bundle_warnings

        self.ctx = ctx
        assert ctx.session is not None
        for line in [
            *ctx.warnings,
            *bundle_warnings(ctx.bundle_meta, ctx.lang),
            *ctx.session.store.warning_texts(ctx.lang),
        ]:
            self.notify(line, severity="warning", timeout=15, markup=False)
        if ctx.panels is None:
            ctx.panels = load_panels()
        for item in ctx.panels:
            if item.error:
                self.notify(
                    f"panel {item.name}: {item.error}", severity="warning", timeout=10, markup=False
                )
        assert ctx.session is not None
        self._bind_localized(ctx.lang)
        ctx.session.on_change = self._incident_changed
        ctx.session.on_save_result = self._save_result
        self.title = f"cockpit · {ctx.session.incident.id}"
        self._save_error_shown = ""
        import asyncio

        self._loop_ref = asyncio.get_running_loop()
        self.set_interval(1.0, self._check_saves)
        self.goto(self._start_step or ctx.session.incident.current_step or "A")
        if self._offer_alerts_at_start():
            self.fetch_alerts(True)
        # Once the first step is painted, what is alive lives as long as the app: out of
        # the collector's full collections while it runs (see cockpit.ui.heap).
        self.call_after_refresh(self._freeze_startup)

    def _freeze_startup(self) -> None:
        from cockpit.ui import heap

        if not self._heap_frozen and self.is_running:
            heap.freeze_startup()
            self._heap_frozen = True

    def _bind_localized(self, lang: str) -> None:
        """Show the main keys in the footer, described in the UI language."""
        import dataclasses

        from cockpit.i18n import t

        shown = {
            "f1": t("key.help", lang),
            "f2": t("key.protect", lang),
            "alt+right": t("flow.next", lang),
            "alt+left": t("flow.back", lang),
            "f6": t("key.paste", lang),
            "f7": t("key.playbooks", lang),
            "f8": t("key.history", lang),
        }
        table = self._bindings.key_to_bindings
        for key, description in shown.items():
            table[key] = [
                dataclasses.replace(b, description=description, show=True)
                for b in table.get(key, [])
            ]
        # Textual's own command palette key, drawn at the right of the footer.
        palette = self.COMMAND_PALETTE_BINDING
        table[palette] = [
            dataclasses.replace(b, description=t("key.palette", lang), tooltip="")
            for b in table.get(palette, [])
        ]
        self.refresh_bindings()

    def action_help_quit(self) -> None:
        """Ctrl+C outside a text field: say how to quit, in the UI language (Textual's own
        notice is English)."""
        from cockpit.i18n import t

        lang = self.ctx.lang if self.ctx is not None else "en"
        for key, active in self.active_bindings.items():
            if active.binding.action in ("quit", "app.quit"):
                self.notify(
                    t("app.how_to_quit", lang, key=key),
                    title=t("app.quit_title", lang),
                    markup=False,
                )
                return

    def action_command_palette(self) -> None:
        """Textual's command palette, its search prompt in the UI language."""
        from textual.command import CommandPalette

        from cockpit.i18n import t

        if self.use_command_palette and not CommandPalette.is_open(self):  # type: ignore[arg-type]
            lang = self.ctx.lang if self.ctx is not None else "en"
            from cockpit.ui.palette import LocalPalette

            self.push_screen(
                LocalPalette(
                    lang, id="--command-palette", placeholder=t("key.palette_search", lang)
                )
            )

    def _exit_with(self, status: int) -> None:
        self.exit(return_code=status)

    async def on_unmount(self) -> None:
        """Release the backends' connections and threads, and the startup heap to the
        garbage collector, as the app ends."""
        if self._heap_frozen:
            from cockpit.ui import heap

            heap.release()
            self._heap_frozen = False
        if self.ctx is None:
            return
        import asyncio
        import contextlib

        with contextlib.suppress(Exception):
            async with asyncio.timeout(2):
                await self.ctx.sources.close()

    # -- navigation ----------------------------------------------------------------------------
    def _screen_name(self, step_id: str) -> str:
        return f"step-{step_id}"

    def _ensure_screen(self, step_id: str) -> str:
        import importlib

        name = self._screen_name(step_id)
        if name not in self._installed:
            assert self.ctx is not None
            module, cls_name = STEP_SCREENS[step_id]
            cls = getattr(importlib.import_module(module), cls_name)
            self.install_screen(cls(self.ctx), name)
            self._installed.add(name)
        return name

    def goto(self, step_id: str) -> None:
        """Show step ``step_id`` (A–I); the incident records the path."""
        if self.ctx is None or step_id not in STEP_SCREENS:
            return
        # The path is recorded in the order the user asked for the steps: screens of a
        # fast burst of keys may come up in another order.
        if self.ctx.session is not None:
            self.ctx.session.visit(step_id)
        name = self._ensure_screen(step_id)
        arrive = getattr(self.get_screen(name), "arrive", None)
        if callable(arrive) and len(self.screen_stack) > 1 and self.screen.name != name:
            # Another step (or a dialog over one) is shown: this one opens at its top.
            arrive()
        if len(self.screen_stack) <= 1:
            self.push_screen(name)
            return
        if self.screen.name == name:
            return
        # Close modals first so navigation always lands on a step.
        while len(self.screen_stack) > 2 and not getattr(self.screen, "STEP", ""):
            self.pop_screen()
        self.switch_screen(name)

    def action_goto(self, step_id: str) -> None:
        self.goto(step_id)

    def current_step(self) -> str:
        """Letter of the step on screen (``""`` while booting)."""
        return str(getattr(self.screen, "STEP", ""))

    def action_next_step(self) -> None:
        from cockpit.flow import Branch, recommended_next
        from cockpit.i18n import t

        if self.ctx is None or self.ctx.session is None:
            return
        cur = self.current_step()
        if not cur:
            return
        branch_value = self.ctx.session.incident.scope_branch
        branch = Branch(branch_value) if branch_value else None
        nxt = recommended_next(cur, branch)
        if nxt is None:
            key = "flow.choose_branch" if cur == "D" else "flow.end"
            self.notify(t(key, self.ctx.lang), markup=False)
            return
        self.goto(nxt.id.value)

    def action_prev_step(self) -> None:
        from cockpit.flow import previous_steps

        if self.ctx is None or self.ctx.session is None:
            return
        cur = self.current_step()
        prev = previous_steps(cur) if cur else []
        if not prev:
            from cockpit.i18n import t

            self.notify(t("flow.start", self.ctx.lang), markup=False)
            return
        if len(prev) > 1:
            branch = self.ctx.session.incident.scope_branch
            chosen = [p for p in prev if p.id.value == ("F" if branch == "shared" else "E")]
            prev = chosen or prev
        self.goto(prev[0].id.value)

    # -- modals and actions ------------------------------------------------------------------
    def action_protect(self) -> None:
        if self.ctx is None or self.ctx.session is None:
            return
        from cockpit.ui.protect import ProtectScreen

        if not isinstance(self.screen, ProtectScreen):
            self.push_screen(ProtectScreen(self.ctx))

    def action_paste(self) -> None:
        if self.ctx is None or self.ctx.session is None:
            return
        from cockpit.ui.paste import PasteScreen

        if not isinstance(self.screen, PasteScreen):
            self.push_screen(PasteScreen(self.ctx, self.current_step()))

    def action_chord_elsewhere(self, key: str) -> None:
        """A panel chord (Alt+P, Alt+S, …): the widget with focus, or a container of it,
        that binds ``key`` acts on it (the binding is skipped here); otherwise a notice
        names the panels of this screen that take it, to Tab into first, or says that
        nothing on this step does."""
        from textual.actions import SkipAction

        from cockpit.i18n import t
        from cockpit.ui.focus import widget_name

        screen = self.screen
        focused = screen.focused
        chain = list(focused.ancestors_with_self) if focused is not None else [screen]
        if any(node is not self and key in node._bindings.key_to_bindings for node in chain):
            raise SkipAction()
        lang = self.ctx.lang if self.ctx is not None else "en"
        chord = key.replace("alt+", "Alt+").upper().replace("ALT+", "Alt+")
        chain_now = screen.focus_chain

        def stop_in(panel: Any) -> Any:
            # A panel that binds the chord is named by the stop Tab reaches in it (C's
            # table), never by what kind of box it is.
            if panel in chain_now:
                return panel
            return next((w for w in chain_now if panel in w.ancestors), panel)

        takers = [
            widget_name(stop_in(w), lang)
            for w in screen.query("*")
            if key in w._bindings.key_to_bindings and w.display
        ]
        if takers:
            text = t(
                "keys.chord_elsewhere",
                lang,
                key=chord,
                panels=("、" if lang == "zh" else ", ").join(
                    f"“{n}”" for n in dict.fromkeys(takers)
                ),
            )
        else:
            text = t("keys.chord_nowhere", lang, key=chord)
        self.notify(text, severity="warning", markup=False)

    def action_history(self) -> None:
        """F8: the change history, to restore what was overwritten or deleted."""
        if self.ctx is None or self.ctx.session is None:
            return
        from cockpit.ui.history import HistoryScreen

        if not isinstance(self.screen, HistoryScreen):
            self.push_screen(HistoryScreen(self.ctx))

    def action_help(self) -> None:
        from cockpit.ui.help import HelpScreen

        lang = self.ctx.lang if self.ctx else "en"
        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss(None)  # F1 again closes it
        else:
            self.push_screen(HelpScreen(lang))

    def action_refresh_panels(self) -> None:
        """F5: fetch every panel of the screen again, said (or that there is none)."""
        from cockpit.i18n import t
        from cockpit.ui.focus import widget_name
        from cockpit.ui.panel import Panel

        lang = self.ctx.lang if self.ctx is not None else "en"
        panels = list(self.screen.query(Panel))
        for panel in panels:
            panel.refresh_data()
        if not panels:
            self.notify(t("panel.nothing_to_refresh", lang), markup=False)
            return
        names = ", ".join(dict.fromkeys(widget_name(p, lang) for p in panels))
        self.notify(t("panel.refreshing", lang, names=names), markup=False)

    def action_switch_language(self) -> None:
        """Switch zh ↔ en (rebuilds the step screens; the incident is untouched)."""
        if self.ctx is None:
            return
        self.ctx.lang = "en" if self.ctx.lang == "zh" else "zh"
        self._rebuild_steps()

    def _rebuild_steps(self) -> None:
        """Build the step screens afresh on the current step (a new language, a new
        scope): what was typed and not yet added is kept (see :meth:`_keep_drafts`)."""
        assert self.ctx is not None
        cur = self.current_step() or "A"
        self._keep_drafts()
        while len(self.screen_stack) > 1:
            self.pop_screen()
        self._bind_localized(self.ctx.lang)
        for name in list(self._installed):
            self.uninstall_screen(name)
        self._installed.clear()
        self.goto(cur)

    # -- starting from the alert that paged --------------------------------------------------
    def _offer_alerts_at_start(self) -> bool:
        """The alert picker comes up at start for a new incident (not reopened with
        ``--resume``, not started with ``--alert``, not the demo) when an alert source
        is configured."""
        from cockpit.incident import Mode

        ctx, args = self.ctx, self.args
        if ctx is None or ctx.session is None or args is None:
            return False
        if getattr(args, "resume", None) or getattr(args, "alert", None):
            return False
        if ctx.mode is Mode.DEMO or ctx.session.incident.paged_by is not None:
            return False
        return ctx.sources.alerts is not None or ctx.sources.metrics is not None

    @work(exclusive=True, group="alerts", exit_on_error=False)
    async def fetch_alerts(self, at_start: bool = False) -> None:
        """Read the alerts (bounded by the sources' timeouts) and show the picker; at
        start only when there are some, from the palette with what was found."""
        import asyncio

        from cockpit.collect.paged import collect_paged, failure_lines
        from cockpit.i18n import t

        ctx = self.ctx
        if ctx is None:
            return
        limit = max(ctx.settings.prometheus.timeout_s, ctx.settings.alertmanager.timeout_s) * 3
        try:
            async with asyncio.timeout(limit):
                alerts = await collect_paged(ctx)
        except TimeoutError:
            if not at_start:
                self.notify(
                    t(
                        "alerts.failed",
                        ctx.lang,
                        what=t("alerts.what.alerts", ctx.lang),
                        error=f"timeout {limit:g} s",
                    ),
                    severity="warning",
                    markup=False,
                )
            return
        if alerts.alerts:
            self.show_alert_picker(alerts)
        elif not at_start:
            lines = failure_lines(alerts, ctx.lang) or [
                t("alerts.none", ctx.lang, since=f"{alerts.since:%Y-%m-%d %H:%M:%SZ}")
                if alerts.source
                else t("alerts.no_source", ctx.lang)
            ]
            self.notify("\n".join(lines), severity="warning", markup=False)

    def show_alert_picker(self, alerts: Any) -> None:
        """The picker over the current step; choosing an alert fills the incident from
        it (:func:`cockpit.collect.paged.apply_alert`) and rebuilds the steps on its
        scope."""
        from cockpit.ui.alertpicker import AlertPickerScreen

        if self.ctx is None:
            return

        def chosen(fingerprint: str | None) -> None:
            from cockpit.analysis.paged import find_alert
            from cockpit.collect.paged import applied_notice, apply_alert

            alert = find_alert(alerts.alerts, fingerprint or "")
            if alert is None or self.ctx is None:
                return
            # Times out of order are shown by step A's times form.
            apply_alert(self.ctx, alert)
            self._rebuild_steps()
            self.notify(applied_notice(alert, self.ctx.lang), markup=False)

        self._choose(AlertPickerScreen(self.ctx.lang, alerts), chosen)

    def keep_typed_drafts(self) -> None:
        """Text typed in the step screens but not added yet (a hypothesis without its
        refutation, an error sample) kept with the incident for ``--resume``
        (``Incident.drafts``): on quit, and on SIGHUP/SIGTERM before the exit guard
        saves the record (:class:`cockpit.lifecycle.ExitGuard`)."""
        if self.ctx is None or self.ctx.session is None:
            return
        self.ctx.drafts.clear()
        self._keep_drafts()
        self.ctx.session.keep_drafts(self.ctx.drafts)

    def _keep_drafts(self) -> None:
        """Text typed but not yet added (an error sample, a hypothesis) in the step
        screens about to be rebuilt: kept in ``ctx.drafts`` by step and field
        id, and put back when the step is built again (see ``StepScreen.on_mount``)."""
        from textual.widgets import Input, TextArea

        assert self.ctx is not None
        drafts = self.ctx.drafts
        for name in self._installed:
            screen = self.get_screen(name)
            step = str(getattr(screen, "STEP", ""))
            if not step or not screen.is_mounted:
                continue
            for field in screen.query(Input):
                if field.id and field.value:
                    drafts.setdefault(step, {})[field.id] = field.value
            for area in screen.query(TextArea):
                if area.id and area.text:
                    drafts.setdefault(step, {})[area.id] = area.text

    def get_system_commands(self, screen: Screen[Any]) -> Any:
        if self.ctx is None:
            yield from super().get_system_commands(screen)
            return
        from cockpit.flow import STEPS
        from cockpit.i18n import t

        lang = self.ctx.lang
        # Textual's own commands (theme, quit, keys, maximize, screenshot), in the UI
        # language; one Textual adds later keeps its English words.
        for cmd in super().get_system_commands(screen):
            key = TEXTUAL_COMMANDS.get(cmd.help)
            yield cmd._replace(title=t(f"{key}.title", lang), help=t(key, lang)) if key else cmd
        for st in STEPS:
            yield SystemCommand(
                f"{st.id.value} · {st.title(lang)}",
                t("flow.jump", lang, step=st.title(lang)),
                lambda s=st.id.value: self.goto(s),
            )
        yield SystemCommand(
            t("protect.title", lang), t("app.protect_first_rule", lang), self.action_protect
        )
        yield SystemCommand(
            t("alerts.picker.command", lang),
            t("alerts.picker.command_help", lang),
            lambda: self.fetch_alerts(False),
        )
        yield SystemCommand(t("paste.title", lang), t("paste.hint", lang), self.action_paste)
        yield SystemCommand(t("history.title", lang), t("cmd.history", lang), self.action_history)
        yield SystemCommand(t("cmd.switch_language", lang), "zh ↔ en", self.action_switch_language)
        yield SystemCommand(t("cmd.export", lang), t("cmd.export.help", lang), self.action_export)
        yield from self.extra_commands()

    def action_export(self) -> None:
        """The palette's "Export": step I writes the export file and shows its preview,
        with a notice that says where the file is (see ``VerifyScreen.export_now``)."""
        self.goto("I")

        def export() -> None:
            export_now = getattr(self.screen, "export_now", None)
            if callable(export_now):
                export_now()

        self.call_after_refresh(export)

    def extra_commands(self) -> Any:
        """Commands contributed by optional screens (playbooks, paste evidence)."""
        if self.ctx is None:
            return
        from cockpit.analysis.playbooks.spec import all_playbooks
        from cockpit.i18n import t

        lang = self.ctx.lang
        for pb in all_playbooks():
            yield SystemCommand(
                t("playbook.open", lang, title=pb.title.get(lang)),
                t("playbook.open_help", lang),
                lambda pid=pb.id: self.open_playbook(pid),
            )

    def _choose(self, menu: Screen[str | None], then: Any) -> None:
        """Show the list ``menu`` (unless one like it is on top already) and pass what is
        chosen in it to ``then`` (nothing when it is closed without a choice)."""
        if self.ctx is None or self.ctx.session is None or type(self.screen) is type(menu):
            return
        self.push_screen(menu, lambda chosen: then(chosen) if chosen else None)

    def action_step_menu(self) -> None:
        """Ctrl+G: choose a step from a numbered list (Alt+digit never reaches the app:
        terminals send it as a character)."""
        from cockpit.ui.stepmenu import StepMenuScreen

        lang = self.ctx.lang if self.ctx else "en"
        self._choose(StepMenuScreen(lang, self.current_step()), self.goto)

    def action_playbooks(self) -> None:
        """F7: choose one of the six scenario playbooks."""
        from cockpit.screens.playbook import PlaybookMenuScreen

        lang = self.ctx.lang if self.ctx else "en"
        self._choose(PlaybookMenuScreen(lang), self.open_playbook)

    def open_playbook(self, playbook_id: str) -> None:
        """Open the playbook screen of ``playbook_id`` on top of the current step."""
        if self.ctx is None or self.ctx.session is None:
            return
        from cockpit.screens.playbook import PlaybookScreen

        self.push_screen(PlaybookScreen(self.ctx, playbook_id, loader=self.ctx.playbook_loader))

    # -- incident changes -----------------------------------------------------------------------
    def _incident_changed(self, incident: Incident) -> None:
        import threading

        if threading.get_ident() != self._thread_id:
            self.call_from_thread(self._incident_changed, incident)
            return
        # Coalesce bursts (typing) into one refresh of the visible screen.
        if self._change_timer is not None:
            return
        self._change_timer = self.set_timer(0.2, self._forward_change)

    def _forward_change(self) -> None:
        from cockpit.ui.messages import IncidentChanged

        self._change_timer = None
        if self.ctx is None or self.ctx.session is None or not self.screen_stack:
            return
        self.incident_version += 1
        self.screen.post_message(IncidentChanged(self.ctx.session.incident))

    def _save_result(self, error: BaseException | None) -> None:
        """From the writer thread: a write failed (or works again); said at once, without
        waiting for the event loop (the writer must never block on the UI)."""
        import contextlib

        if self._loop_ref is None:
            return
        with contextlib.suppress(RuntimeError):  # the loop is closed: the app has ended
            self._loop_ref.call_soon_threadsafe(self._check_saves)

    def _check_saves(self) -> None:
        """Say at once, and keep saying, when the incident cannot be written."""
        from cockpit.i18n import t

        if self.ctx is None or self.ctx.session is None:
            return
        error = self.ctx.session.last_save_error
        text = save_error_text(error, self.ctx.lang) if error is not None else ""
        if text and text != self._save_error_shown:
            self.notify(
                t("save.failed", self.ctx.lang, error=text),
                title=t("save.failed_title", self.ctx.lang),
                severity="error",
                timeout=60,
                markup=False,
            )
        elif not text and self._save_error_shown:
            self.notify(t("save.recovered", self.ctx.lang), markup=False)
        self._save_error_shown = text

    async def action_quit(self) -> None:
        from cockpit.i18n import t

        if self.ctx is not None and self.ctx.session is not None:
            self.keep_typed_drafts()
            saved = self.ctx.session.flush()
            if not saved and not self._quit_anyway:
                self._quit_anyway = True
                error = self.ctx.session.last_save_error
                why = save_error_text(error, self.ctx.lang) if error is not None else "timeout"
                self.notify(
                    t("save.quit_unsaved", self.ctx.lang, error=why),
                    title=t("save.failed_title", self.ctx.lang),
                    severity="error",
                    timeout=60,
                    markup=False,
                )
                return
        self.exit(return_code=1 if self._quit_anyway else 0)
