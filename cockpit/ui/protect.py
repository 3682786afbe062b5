"""Protect first: the handbook's opening rule, one key away on every screen.

Shows each mitigation as the exact commands to copy (cockpit never runs them), evidence
preservation first; what the user chooses lands on the incident timeline. With a suspect
(found at D or picked at E) its node, pod and Deployment fill ``<NODE>``, ``<POD>`` and
``<DEPLOYMENT>``, and the mitigation that matches it comes first.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from cockpit.analysis.history import (
    SuspectTargets,
    conclusion_targets,
    entity_text,
    suspect_targets,
)
from cockpit.analysis.mitigations import Mitigation, first_for, mitigations, record_flags
from cockpit.context import AppContext
from cockpit.i18n import in_both, t
from cockpit.incident import Mode, ServiceScope
from cockpit.timeparse import fmt_time
from cockpit.ui.keys import localize_bindings
from cockpit.ui.nowhere import SaysWhereTypingGoes


def _record_flags(ctx: AppContext) -> list[str]:
    """What makes ``cockpit record`` read the sources and the time this session reads."""
    s = ctx.settings
    # The service as the incident records it (what the kubectl lines beside it use).
    svc = ctx.session.incident.service if ctx.session is not None else s.service
    return record_flags(
        prometheus_url=s.prometheus.url,
        namespace=svc.namespace,
        deployment=svc.deployment,
        selector=svc.selector,
        model=svc.model,
        context=s.kubernetes.context,
        kubeconfig=str(s.kubernetes.kubeconfig or ""),
        at=ctx.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ") if ctx.clock.frozen else "",
    )


def current_suspect(ctx: AppContext) -> SuspectTargets | None:
    """The session's suspect (``ctx.metrics.picked`` at E, else ``ctx.metrics.suspect``
    found at D, else the most-likely conclusion's) with its node, pod and Deployment from
    the window's inventory when it is already collected. D's suspect that is the
    conclusion's release is named as D and G name it (``old → new``)."""
    from cockpit.collect.cache import peek, screen_window

    chosen = ctx.metrics.picked or ctx.metrics.suspect
    hist = peek(ctx, "history", screen_window(ctx))
    inv = hist.inventory if hist is not None else None
    if not chosen and ctx.drill:
        return None  # a drill's conclusion is the trainee's: F2 does not state one
    likely = peek(ctx, "likely", screen_window(ctx))
    if not chosen:
        return conclusion_targets(inv, likely.suspect) if likely is not None else None
    key, kind = chosen
    release = likely.suspect if likely is not None else None
    if not ctx.metrics.picked and release and (kind, key) == (release.kind, release.new_revision):
        return conclusion_targets(inv, release)  # D's release, as D and G name it
    return suspect_targets(inv, key, kind)


def service_scope(ctx: AppContext, suspect: SuspectTargets | None) -> ServiceScope:
    """The incident's service scope with the suspect's Deployment when the scope names
    none: what every command cockpit shows on screen is filled from (F2's mitigations,
    F6's explanations), so one placeholder is filled the same everywhere."""
    assert ctx.session is not None
    scope = ctx.session.incident.service
    if suspect is not None and suspect.deployment and not scope.deployment:
        scope = scope.model_copy(update={"deployment": suspect.deployment})
    return scope


def fill_commands(ctx: AppContext, text: str) -> str:
    """``text`` with the ``<namespace>`` and ``<deployment>`` of its commands filled as
    F2 fills them (see :func:`service_scope`); unknown ones stay for the user to fill, each
    said in words after the text (:func:`cockpit.commandline.fill_scope`, as
    ``cockpit explain`` does)."""
    from cockpit.commandline import fill_scope

    if ctx.session is None:
        return text
    scope = service_scope(ctx, current_suspect(ctx))
    return fill_scope(text, ctx.lang, namespace=scope.namespace, deployment=scope.deployment)


def current_cause(ctx: AppContext) -> str:
    """The cause of the most-likely conclusion D and G show, when it is already there
    (``""`` otherwise: the suspect's kind orders the options then)."""
    from cockpit.collect.cache import peek, screen_window

    if ctx.drill:
        return ""  # a drill's conclusion is the trainee's: F2 does not state one
    likely = peek(ctx, "likely", screen_window(ctx))
    return str(likely.cause) if likely is not None else ""


def _scale_facts(ctx: AppContext, deployment: str) -> dict[str, Any]:
    """``replicas_now`` (the Deployment's pods at the window's end, from the window's
    inventory) and ``demand_ratio`` (step C's request rate ÷ its baseline) when they are
    already collected: what fills the scale-out count."""
    from cockpit.analysis.mitigations import demand_ratio
    from cockpit.collect.analyze import history_window
    from cockpit.collect.cache import peek, screen_window

    window = screen_window(ctx)
    # B's history, else the conclusion's (the window and as long again before it): both
    # end where the window does
    hist = peek(ctx, "history", window) or peek(ctx, "history", history_window(window))
    dd = peek(ctx, "drilldown", window)
    now = len(hist.inventory.pods_now(deployment)) if hist is not None and deployment else 0
    ratio = demand_ratio(dd.drilldown.summaries) if dd is not None else None
    return {"replicas_now": now, "demand_ratio": ratio}


def _bundle_path(ctx: AppContext) -> str:
    """The bundle a replay or the demo reads (its evidence is already preserved)."""
    if ctx.mode is Mode.DEMO:
        from cockpit.wiring import demo_bundle_path

        return str(demo_bundle_path())
    if ctx.mode is Mode.REPLAY and ctx.session is not None:
        return ctx.session.incident.bundle
    return ""


class ProtectScreen(SaysWhereTypingGoes, ModalScreen[None]):
    """Modal listing protect-first options with copy and "chosen" buttons."""

    DEFAULT_CSS = """
    ProtectScreen { align: center middle; }
    ProtectScreen > Vertical {
        width: 96%; max-width: 140; height: 92%;
        border: thick $error; background: $surface; padding: 0 1;
    }
    ProtectScreen #protect-rule { color: $warning; margin: 0 0 1 0; }
    ProtectScreen .option { height: auto; margin: 0 0 1 0; border-left: tall $primary; padding: 0 1; }
    ProtectScreen .option-title { text-style: bold; }
    ProtectScreen .cmd { color: $text; background: $boost; }
    ProtectScreen .placeholders { color: $warning; }
    ProtectScreen .option Horizontal { height: auto; }
    ProtectScreen .option Button { margin: 0 1 0 0; min-width: 10; }
    """

    BINDINGS = [Binding("escape", "dismiss_screen", "Close")]

    def __init__(self, ctx: AppContext, node: str = "") -> None:
        super().__init__()
        self.ctx = ctx
        localize_bindings(self, ctx.lang)
        self.suspect = current_suspect(ctx)
        s = self.suspect
        self.node = node or (s.node if s else "")
        assert ctx.session is not None
        scope = service_scope(ctx, s)
        self.options: list[Mitigation] = mitigations(
            scope,
            incident_id=ctx.session.incident.id,
            node=self.node,
            pod=s.pod if s else "",
            record_flags=_record_flags(ctx),
            bundle_path=_bundle_path(ctx),
            first=first_for(s.kind if s else "", current_cause(ctx)),
            lang=ctx.lang,
            pod_restarted=s.restarted if s else None,
            **_scale_facts(ctx, scope.deployment),
        )

    def compose(self) -> ComposeResult:
        lang = self.ctx.lang
        with Vertical():
            yield Label(t("protect.title", lang), classes="option-title")
            yield Static(t("app.protect_first_rule", lang), id="protect-rule")
            if self.suspect is not None:
                yield Static(
                    t("protect.suspect", lang, name=entity_text(self.suspect.name, lang)),
                    id="protect-suspect",
                    markup=False,
                )
            with VerticalScroll():
                for opt in self.options:
                    with Vertical(classes="option", id=f"opt-{opt.key}"):
                        yield Label(t(f"protect.{opt.key}", lang), classes="option-title")
                        yield Static(t(f"protect.{opt.key}.why", lang))
                        yield Static("\n".join(opt.commands), classes="cmd", markup=False)
                        if opt.placeholders:
                            yield Static(
                                t("protect.fill", lang, names=", ".join(opt.placeholders)),
                                classes="placeholders",
                            )
                        with Horizontal():
                            yield Button(t("protect.copy", lang), id=f"copy-{opt.key}")
                            yield Button(
                                t("protect.chosen", lang), id=f"chosen-{opt.key}", variant="warning"
                            )
            yield Static(t("protect.never_run", lang), classes="placeholders")
            yield Static("", id="protect-said", markup=False)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        bid = event.button.id or ""
        action, _, key = bid.partition("-")
        opt = next((o for o in self.options if o.key == key), None)
        if opt is None:
            return
        if action == "copy":
            self.app.copy_to_clipboard("\n".join(opt.commands))
            self.notify(t("protect.copied", self.ctx.lang), markup=False)
        elif action == "chosen":
            assert self.ctx.session is not None

            def text(lang: str) -> str:
                option = t(f"protect.{key}", lang)
                return t("protect.timeline", lang, option=option) + "\n" + "\n".join(opt.commands)

            # the Mitigate time too, when empty and in order with the times entered
            outcome = self.ctx.session.record_mitigation(
                self.ctx.clock.logged(),
                in_both(text),
                in_both(lambda lang: t(f"protect.{key}", lang)),
                self.ctx.lang,
                acts=key != "record",
            )
            said = self._mitigate_said(outcome, t(f"protect.{key}", self.ctx.lang))
            self.query_one("#protect-said", Static).update(said)
            self.notify(
                said, markup=False, severity="warning" if outcome == "conflict" else "information"
            )

    def _mitigate_said(self, outcome: str, option: str) -> str:
        """What "I did this" did: ``option`` (the mitigation's name) on the timeline, and
        what became of the Mitigate time (set, kept as entered, or not set because it
        would contradict another time)."""
        assert self.ctx.session is not None
        lang = self.ctx.lang
        times = self.ctx.session.incident.times
        said = t("protect.recorded", lang, option=option)
        if outcome == "set":
            said += " " + t("protect.mitigate_set", lang, at=fmt_time(times.mitigate))
        elif outcome == "kept":
            said += " " + t("protect.mitigate_kept", lang, at=fmt_time(times.mitigate))
        elif outcome == "conflict":
            at = fmt_time(self.ctx.clock.now())
            said += " " + t("protect.mitigate_conflict", lang, at=at)
        return said

    def action_dismiss_screen(self) -> None:
        self.dismiss(None)
