"""Building the run's context from CLI arguments: settings, mode (live / replay / demo),
sources, clock and the incident session. Live vs replay vs demo is chosen here, once.

Textual-free: headless commands use the same functions as the TUI.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from cockpit.clock import Clock
from cockpit.config import Settings, load_settings
from cockpit.context import AppContext
from cockpit.incident import Mode, ServiceScope
from cockpit.models.messages import msg
from cockpit.redact import public_url
from cockpit.sources.base import Sources


class BootError(Exception):
    """Start-up cannot continue (bad config, corrupt incident, unreadable bundle); the
    message is shown to the user as it is."""


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Settings with CLI flags over environment over the config file.

    Raises:
        BootError: when the config file or a value is invalid.
    """
    import os

    from pydantic import ValidationError

    if getattr(args, "config", None):
        if not Path(args.config).is_file():
            raise BootError(f"--config {args.config}: no such file")
        os.environ["COCKPIT_CONFIG"] = str(args.config)
    overrides: dict[str, Any] = {}
    if getattr(args, "lang", None):
        overrides["lang"] = args.lang
    if getattr(args, "state_dir", None):
        overrides["state_dir"] = Path(args.state_dir)
    prom: dict[str, Any] = {}
    if getattr(args, "prometheus_url", None):
        prom["url"] = args.prometheus_url
    svc = {
        k: getattr(args, k)
        for k in ("namespace", "selector", "deployment", "model")
        if getattr(args, k, None)
    }
    kube: dict[str, Any] = {}
    if getattr(args, "context", None):
        kube["context"] = args.context
    if getattr(args, "kubeconfig", None):
        kube["kubeconfig"] = Path(args.kubeconfig)
    try:
        base = load_settings()
        if not (overrides or prom or svc or kube):
            return base
        data = base.model_dump()
        data.update(overrides)
        data["prometheus"].update(prom)
        data["service"].update(svc)
        data["kubernetes"].update(kube)
        return Settings.model_validate(data)
    except ValidationError as exc:
        raise BootError(f"configuration error ({_config_origin()}):\n{_errors(exc)}") from exc
    except (OSError, ValueError) as exc:
        raise BootError(f"cannot read the configuration {_config_origin()}: {exc}") from exc


def _config_origin() -> str:
    from cockpit.config import config_path

    path = config_path()
    return f"{path} or COCKPIT_* environment" if path.exists() else "COCKPIT_* environment or flags"


def _errors(exc: Any) -> str:
    """Pydantic errors as ``field: message`` lines (no documentation links)."""
    lines = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err.get("loc", ()))
        got = repr(err.get("input"))
        if len(got) > 80:  # never echo a huge value back
            got = f"{got[:60]}… ({len(got)} characters)"
        lines.append(f"  {loc[:80]}: {err.get('msg', '')} (got {got})")
    return "\n".join(lines)


def demo_bundle_path() -> Path:
    """The demo evidence bundle shipped in the package (``make demo-bundle`` rebuilds it)."""
    from importlib import resources

    return Path(str(resources.files("cockpit.scenarios") / "demo.jsonl.gz"))


def mode_of(args: argparse.Namespace) -> Mode:
    """Demo, replay or live, from ``--demo`` and ``--replay``."""
    if getattr(args, "demo", False):
        return Mode.DEMO
    if getattr(args, "replay", None):
        return Mode.REPLAY
    return Mode.LIVE


def _at_clock(args: argparse.Namespace, now: Any) -> Clock | None:
    """The clock frozen at ``--at`` (read relative to ``now``), or ``None`` without it.

    Raises:
        BootError: the time cannot be read, is out of range or in the future.
    """
    at = getattr(args, "at", None)
    if at is None:
        return None
    if isinstance(at, datetime):  # restored by --resume: already resolved
        return Clock(frozen_at=at)
    from cockpit.timeparse import TimeParseError, parse_at

    try:
        return Clock(frozen_at=parse_at(at, now))
    except TimeParseError as exc:
        raise BootError(f"--at: {exc}") from exc


def build_sources(args: argparse.Namespace, settings: Settings) -> tuple[Sources, Clock, Any]:
    """Sources and clock for the mode. Returns ``(sources, clock, bundle_meta_or_None)``.

    ``--at`` freezes the clock: live, relative to now; in replay, relative to the time the
    bundle was recorded (``--at -6h`` looks six hours before it).

    Raises:
        BootError: when a replay bundle cannot be opened, or ``--at`` cannot be read.
    """
    mode = mode_of(args)
    sources = Sources()
    if mode in (Mode.DEMO, Mode.REPLAY):
        from cockpit.sources.bundle import BundleError, open_replay

        path = demo_bundle_path() if mode is Mode.DEMO else Path(args.replay)
        try:
            replay = open_replay(path)
        except (OSError, BundleError, ValueError) as exc:
            raise BootError(f"cannot open the evidence bundle {path}: {exc}") from exc
        recorded = replay.meta.recorded_at
        clock = _at_clock(args, recorded) or Clock(frozen_at=recorded)
        return replay.build_sources(), clock, replay.meta

    if settings.prometheus.url:
        from cockpit.sources.prometheus import PrometheusSource

        sources.metrics = PrometheusSource(settings.prometheus)
    else:
        sources.set_missing("metrics", msg("source.missing.no_prometheus"))
    if settings.alertmanager.url:
        from cockpit.sources.alertmanager import AlertmanagerSource

        sources.alerts = AlertmanagerSource(settings.alertmanager)
    _add_kube(sources, settings)
    _add_gpu(sources)
    return sources, _at_clock(args, Clock().now()) or Clock(), None


def _add_kube(sources: Sources, settings: Settings) -> None:
    """The Kubernetes source, built lazily (the client is imported on its first call)."""
    import os

    kube = settings.kubernetes
    path = kube.kubeconfig or (os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or None)
    has_config = bool(path) or Path("~/.kube/config").expanduser().exists()
    if not has_config and not os.environ.get("KUBERNETES_SERVICE_HOST"):
        sources.set_missing("kube", msg("source.missing.no_kubeconfig"))
        return
    from cockpit.sources.kubernetes import KubeSource

    sources.kube = KubeSource(
        kubeconfig=path,
        context=kube.context or None,
        namespace=settings.service.namespace or None,
        timeout_s=kube.timeout_s,
        max_response_mb=kube.max_response_mb,
    )


def _add_gpu(sources: Sources) -> None:
    from cockpit.sources.nvml import nvml_source_or_reason

    src, _ = nvml_source_or_reason()
    if src is None:
        sources.set_missing("gpu", msg("source.missing.no_nvml"))
    else:
        sources.gpu = src


def scope_of(settings: Settings) -> ServiceScope:
    """The service scope the settings name (namespace, selector, deployment, model), as an
    incident records it."""
    svc = settings.service
    return ServiceScope(
        namespace=svc.namespace,
        selector=svc.selector,
        deployment=svc.deployment,
        model=svc.model,
    )


def open_session(
    args: argparse.Namespace,
    settings: Settings,
    mode: str,
    lang: str,
    meta: Any,
    *,
    background: bool,
    opened: Any = None,
) -> Any:
    """Resume (``--resume [ID]``) or create the incident, and wrap it in a session.

    ``opened`` (a :class:`cockpit.incident.OpenedWith`) is the investigation clock and
    sources in effect; the incident keeps it so that the next resume reopens it so.

    Raises:
        BootError: unknown id, nothing to resume, or a corrupt incident file.
    """
    from cockpit.i18n import t
    from cockpit.incident import Incident
    from cockpit.session import IncidentSession
    from cockpit.store import CorruptIncident, IncidentLocked, IncidentStore

    store = IncidentStore(settings.resolved_state_dir())
    resume = getattr(args, "resume", None)
    try:
        if resume:
            if resume == "latest":
                incident = store.latest_open()
                if incident is None:
                    raise BootError(t("boot.no_open_incident", lang, dir=str(store.root)))
            else:
                incident = store.load(resume)
        else:
            incident = Incident(mode=mode, lang=lang, service=scope_of(settings))
            if mode is Mode.DEMO:
                incident.title = t("demo.title", lang)
            drill_id = getattr(args, "drill", None)
            if drill_id:
                incident.drill = _drill_run(drill_id)
                incident.title = _drill_title(drill_id, lang)
    except CorruptIncident as exc:
        raise BootError(exc.message(lang)) from exc
    except FileNotFoundError as exc:
        raise BootError(t("boot.no_incident", lang, id=resume, dir=str(store.root))) from exc
    if mode is Mode.REPLAY and not resume and getattr(args, "replay", None):
        incident.bundle = str(Path(args.replay).resolve())
    if opened is not None:
        incident.opened_with = opened
    # The first save is synchronous even for the TUI, so an unwritable state directory is
    # reported before anything is typed into an incident that could not be kept.
    session = IncidentSession(store, incident)
    try:
        session.save()
    except IncidentLocked as exc:
        raise BootError(exc.message(lang)) from exc
    except OSError as exc:
        raise BootError(
            t("boot.cannot_save", lang, dir=str(store.root), error=exc.strerror or str(exc))
        ) from exc
    if background:
        session.start_background()
    return session


def _drill_run(drill_id: str) -> Any:
    from cockpit.incident import DrillRun

    return DrillRun(id=drill_id)


def _drill_title(drill_id: str, lang: str) -> str:
    from cockpit.drills.catalogue import get_drill

    return get_drill(drill_id).key.title.text(lang)


def _resume_mode(
    args: argparse.Namespace, settings: Settings
) -> tuple[argparse.Namespace, list[str]]:
    """``--resume`` reopens an incident the way it was opened: a demo incident on the demo
    bundle, a replay incident on its bundle, a live one live; as of the time it was
    investigated (``--at``) and, live, on the Prometheus and kubeconfig context it was
    opened with (see :class:`cockpit.incident.OpenedWith`). A flag given on resume
    overrides the saved value, with a notice. Returns ``(args, notices)``."""
    resume = getattr(args, "resume", None)
    if not resume:
        return args, []
    from cockpit.store import CorruptIncident, IncidentStore

    store = IncidentStore(settings.resolved_state_dir())
    try:
        incident = store.latest_open() if resume == "latest" else store.load(resume)
    except (CorruptIncident, FileNotFoundError, OSError):
        return args, []  # open_session reports it
    if incident is None:
        return args, []
    new = argparse.Namespace(**vars(args))
    notices = _reuse_opened_with(new, incident.opened_with, settings)
    notices += _reuse_scope(new, incident.service, settings)
    new.resumed_baseline = incident.opened_with.baseline
    if getattr(args, "demo", False) or getattr(args, "replay", None):
        return new, notices
    if incident.mode is Mode.DEMO:
        new.demo = True
    elif incident.mode is Mode.REPLAY and incident.drill is not None:
        # A drill's bundle is the one the package ships now (an upgrade moves it).
        from cockpit.drills.catalogue import DrillError, get_drill

        try:
            new.replay = str(get_drill(incident.drill.id).bundle)
        except DrillError as exc:
            raise BootError(str(exc)) from exc
    elif incident.mode is Mode.REPLAY:
        if not incident.bundle or not Path(incident.bundle).exists():
            raise BootError(
                f"incident {incident.id} was opened on the evidence bundle "
                f"{incident.bundle or '(unknown)'}, which is no longer there; "
                f"reopen it with --replay BUNDLE --resume {incident.id}"
            )
        new.replay = incident.bundle
    return new, notices


def _reuse_opened_with(new: argparse.Namespace, saved: Any, settings: Settings) -> list[str]:
    """Put the saved investigation clock and sources into ``new`` where no flag names them;
    the notices for the flags that override a different saved value."""
    from cockpit.i18n import t
    from cockpit.timeparse import fmt_time

    lang = settings.resolved_lang()
    notices: list[str] = []
    given_at = getattr(new, "at", None)
    if given_at is None:
        new.at = saved.at  # a datetime: the clock is frozen there as it was
    else:
        was = fmt_time(saved.at) if saved.at is not None else t("resume.live", lang)
        notices.append(t("resume.override", lang, flag="--at", given=given_at, saved=was))
    flags = (
        ("--prometheus-url", "prometheus_url", saved.prometheus_url, settings.prometheus.url),
        ("--context", "context", saved.kube_context, settings.kubernetes.context),
        ("--kubeconfig", "kubeconfig", saved.kubeconfig, str(settings.kubernetes.kubeconfig or "")),
    )
    for flag, attr, was, configured in flags:
        if not was:
            continue
        given = getattr(new, attr, None)
        if given:
            if public_url(str(given)) != was:
                shown = public_url(str(given))
                notices.append(t("resume.override", lang, flag=flag, given=shown, saved=was))
        elif public_url(configured or "") != was:
            # The configured value (which may carry credentials) is kept when it is the one
            # the incident was opened with.
            setattr(new, attr, was)
    return notices


SCOPE_FLAGS = (
    ("--namespace", "namespace"),
    ("--selector", "selector"),
    ("--deployment", "deployment"),
    ("--model", "model"),
)
"""The flags of the service scope, and the :class:`cockpit.incident.ServiceScope` field
each one sets."""


def _reuse_scope(new: argparse.Namespace, saved: Any, settings: Settings) -> list[str]:
    """Put the incident's service scope into ``new`` when no scope flag is given, so the
    resumed screens read the service they read before; ``new.resumed_scope`` keeps it, and
    a blank part of it stays blank whatever the configuration says. A scope flag given
    on resume replaces the whole scope, with a notice for each part that differs."""
    from cockpit.i18n import t

    lang = settings.resolved_lang()
    given = [(flag, attr) for flag, attr in SCOPE_FLAGS if getattr(new, attr, None)]
    if not given:
        for _, attr in SCOPE_FLAGS:
            setattr(new, attr, getattr(saved, attr) or None)
        new.resumed_scope = saved
        return []
    return [
        t("resume.override", lang, flag=flag, given=getattr(new, attr), saved=getattr(saved, attr))
        for flag, attr in given
        if getattr(saved, attr) and getattr(new, attr) != getattr(saved, attr)
    ]


def _with_resumed(settings: Settings, args: argparse.Namespace) -> Settings:
    """``settings`` with the resumed incident's scope (see :func:`_reuse_scope`) and the
    baseline its screens compared with."""
    update: dict[str, Any] = {}
    scope = getattr(args, "resumed_scope", None)
    if scope is not None:
        update["service"] = settings.service.model_copy(update=scope.model_dump())
    baseline = getattr(args, "resumed_baseline", "")
    if baseline in ("1d", "7d", "quiet"):
        update["baseline"] = baseline
    return settings.model_copy(update=update) if update else settings


def opened_with(ctx: AppContext, mode: Mode) -> Any:
    """The investigation clock and the sources ``ctx`` was built on, secrets removed
    (see :class:`cockpit.incident.OpenedWith`)."""
    from cockpit.incident import OpenedWith

    if mode is not Mode.LIVE:
        return OpenedWith(at=ctx.at, baseline=ctx.settings.baseline)
    kube = ctx.settings.kubernetes
    return OpenedWith(
        at=ctx.at,
        baseline=ctx.settings.baseline,
        prometheus_url=public_url(ctx.settings.prometheus.url or ""),
        kube_context=kube.context or "",
        kubeconfig=str(kube.kubeconfig or ""),
    )


def _with_bundle_scope(settings: Settings, meta: Any) -> Settings:
    """In replay/demo, the service in scope is the one the bundle was recorded for, unless
    the user named one: the replayed queries carry that scope's label matchers."""
    svc = settings.service
    if any((svc.namespace, svc.selector, svc.deployment, svc.model)):
        return settings
    scope = meta.service.model_dump()
    return settings.model_copy(update={"service": svc.model_copy(update=scope)})


def bundle_warnings(meta: Any, lang: str) -> list[str]:
    """What is wrong with a replayed bundle (cut short, skipped lines), in ``lang``; empty
    for a complete one. Commands print these on stderr, the TUI shows them as notices."""
    from cockpit.i18n import t

    problems = list(getattr(meta, "problems", None) or [])
    if not problems:
        return []
    return [t("bundle.problem", lang, problem=p) for p in problems]


def config_warnings(lang: str) -> list[str]:
    """What is wrong with the config file that loading it does not refuse, in ``lang``:
    keys no setting reads (a typo leaves that setting at its default), and a
    ``COCKPIT_CONFIG`` that names a missing file. Commands print these on stderr, the TUI
    shows them as notices."""
    import os

    from cockpit.config import config_path, unknown_keys
    from cockpit.i18n import t

    path = config_path()
    out = [t("config.warn_unknown_key", lang, key=k, path=str(path)) for k in unknown_keys(path)]
    if os.environ.get("COCKPIT_CONFIG") and not path.exists():
        out.append(t("config.warn_missing_env", lang, path=str(path)))
    return out


_SOURCE_FLAGS = ("prometheus_url", "context", "kubeconfig", *(a for _, a in SCOPE_FLAGS))
"""The flags ``--resume`` may restore that the settings are built from (the sources and
the service scope)."""


def build_context(
    args: argparse.Namespace, *, background: bool = False, with_session: bool = True
) -> AppContext:
    """Everything a command or the TUI needs.

    Raises:
        BootError: see :func:`settings_from_args`, :func:`build_sources`, :func:`open_session`.
    """
    settings = settings_from_args(args)
    resumed, notices = _resume_mode(args, settings)
    if any(getattr(resumed, k, None) != getattr(args, k, None) for k in _SOURCE_FLAGS):
        settings = settings_from_args(resumed)
    settings = _with_resumed(settings, resumed)
    args = resumed
    lang = settings.resolved_lang()
    mode = mode_of(args)
    sources, clock, meta = build_sources(args, settings)
    if meta is not None:
        settings = _with_bundle_scope(settings, meta)
    ctx = AppContext(settings=settings, sources=sources, clock=clock, lang=lang, mode=mode)
    if getattr(args, "at", None) is not None:
        # The time under investigation (``--at``): the header shows it instead of [live].
        ctx.at = clock.now()
    # Read here, off the UI's event loop; a command prints them, the TUI shows them as
    # notices once it runs.
    ctx.warnings = config_warnings(lang) + notices
    if not background:
        for line in ctx.warnings:
            print(line, file=sys.stderr)
    if meta is not None:
        ctx.bundle_meta = meta
        if not background:
            for line in bundle_warnings(meta, lang):
                print(line, file=sys.stderr)
    if with_session:
        ctx.session = open_session(
            args, settings, mode, lang, meta, background=background, opened=opened_with(ctx, mode)
        )
        # what the responder logs in this run comes after what an earlier run logged
        clock.continue_after(ctx.session.incident.last_logged())
        # text typed but not added when the incident was last closed goes back in its field
        ctx.drafts = {step: dict(f) for step, f in ctx.session.incident.drafts.items()}
        if getattr(args, "resume", None):
            # A scope flag given on resume is the scope investigated from now on: the
            # title bar and the next resume read it as the screens do.
            scope = scope_of(settings)
            if scope != ctx.session.incident.service:
                ctx.session.incident.service = scope
                ctx.session.save()
        if getattr(args, "alert", None):
            start_from_alert(ctx, args.alert)
    return ctx


def start_from_alert(ctx: AppContext, key: str) -> None:
    """``--alert NAME|FINGERPRINT``: read the alerts (as ``cockpit alerts`` does) and
    fill the incident from the one ``key`` names (see
    :func:`cockpit.collect.paged.apply_alert`).

    Raises:
        BootError: no alert source, the alerts could not be read, or none matches.
    """
    import asyncio

    from cockpit.collect.paged import apply_alert, collect_paged, failure_lines
    from cockpit.i18n import t

    async def read() -> Any:
        try:
            return await collect_paged(ctx)
        finally:
            # Their connections belong to this short-lived event loop: the next use
            # opens new ones in the app's.
            for src in (ctx.sources.metrics, ctx.sources.alerts):
                if src is not None:
                    await src.close()

    alerts = asyncio.run(read())
    if not alerts.source:
        raise BootError(f"--alert: {t('alerts.no_source', ctx.lang)}")
    from cockpit.analysis.paged import find_alert

    chosen = find_alert(alerts.alerts, key)
    if chosen is None:
        why = "; ".join(failure_lines(alerts, ctx.lang))
        raise BootError(
            f"--alert: {t('alerts.not_found', ctx.lang, key=key)}" + (f" ({why})" if why else "")
        )
    apply_alert(ctx, chosen)


def build_tui_context(args: argparse.Namespace) -> AppContext:
    """The TUI's context, with background saving (the event loop never waits on fsync)."""
    return build_context(args, background=True)
