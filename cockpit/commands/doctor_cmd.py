"""``cockpit doctor``: which sources are configured and reachable, and why not.

Checks, each with its own verdict line and the reason when it fails:

* configuration file and state directory (writable, 0700);
* Prometheus: reachability (build info), the metric profiles detected, the signals that
  are missing with how to enable them, and which unified labels the series carry
  (service, instance, GPU id, model, request id — seed 003, "统一标签");
* Kubernetes: the context, and every read cockpit needs, through SelfSubjectAccessReview
  (a POST that changes nothing), with the ``kubectl auth can-i`` line for each refusal;
* NVML: whether ``libnvidia-ml.so.1`` loads and how many GPUs answer.

Exit status 0 when every configured source works, 1 otherwise; 2 when the configuration
itself cannot be read (as for every command).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from cockpit.commands._argtypes import positive_seconds
from cockpit.incident import Mode
from cockpit.neutral import json_text


def register(sub: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Add ``doctor`` to the CLI."""
    p = sub.add_parser(
        "doctor",
        parents=parents,
        help="check configuration, sources, permissions and metric coverage",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument(
        "--timeout", type=positive_seconds, default=15.0, help="seconds per check (default 15)"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run every check and print the report."""
    from cockpit.wiring import BootError, build_context

    try:
        ctx = build_context(args, with_session=False)
    except BootError as exc:
        print(f"✗ {exc}", file=sys.stderr)
        return 2
    report = asyncio.run(_checks(ctx, args.timeout))
    if args.json:
        print(json_text(json.dumps(report, ensure_ascii=False, indent=1)))
    else:
        for section in report["sections"]:
            mark = {"ok": "✓", "fail": "✗", "absent": "–"}[section["status"]]
            print(f"{mark} {section['title']}: {section['summary']}")
            for line in section["lines"]:
                print(f"    {line}")
    return 0 if all(s["status"] != "fail" for s in report["sections"]) else 1


def _section(name: str, title: str, status: str, summary: str, lines: list[str]) -> dict[str, Any]:
    """One report section (``status``: ok / fail / absent); the ``--json`` shape."""
    return {"name": name, "title": title, "status": status, "summary": summary, "lines": lines}


async def _guard(coro: Any, timeout: float) -> Any:
    return await asyncio.wait_for(coro, timeout=timeout)


async def _checks(ctx: Any, timeout: float) -> dict[str, Any]:
    from cockpit.config import config_path, unknown_keys
    from cockpit.i18n import name_of, t

    lang = ctx.lang
    sections: list[dict[str, Any]] = []
    cfg = config_path()
    unknown = unknown_keys(cfg)
    lines = [
        t("doctor.mode", lang, mode=name_of("mode", ctx.mode, lang)),
        t("doctor.lang", lang, lang=lang),
    ]
    lines += [t("doctor.unknown_key", lang, key=k) for k in unknown]
    sections.append(
        _section(
            "config",
            t("doctor.config", lang),
            "fail" if unknown else "ok",
            str(cfg) if cfg.exists() else t("doctor.config_absent", lang, path=str(cfg)),
            lines,
        )
    )
    sections.append(_state_dir(ctx))
    try:
        # The sources are independent: checked at once, a black-holed API server costs
        # its own time limit, not that plus the others'.
        sections += await asyncio.gather(
            _metrics(ctx, timeout), _kube(ctx, timeout), _gpu(ctx, timeout), _alerts(ctx, timeout)
        )
    finally:
        await ctx.sources.close()
    return {"sections": sections}


def _state_dir(ctx: Any) -> dict[str, Any]:
    import os
    import tempfile

    from cockpit.i18n import t
    from cockpit.store import IncidentStore, dir_problem

    root = ctx.settings.resolved_state_dir()
    title = t("doctor.state", ctx.lang)
    try:
        IncidentStore(root).ensure_dir()
        with tempfile.NamedTemporaryFile(dir=root, prefix=".doctor-"):
            pass
        # Judged after ensure_dir, which tightens only a directory cockpit created: a
        # shared or hand-made one that others can reach is a failure, never a ✓.
        problem = dir_problem(root)
        mode = f"{os.stat(root).st_mode & 0o7777:04o}"
    except OSError as exc:
        return _section("state", title, "fail", f"{root}: {exc.strerror or exc}", [])
    if problem is not None:
        return _section("state", title, "fail", t(problem[0], ctx.lang, **problem[1]), [])
    owner = t("doctor.state_owner", ctx.lang, uid=os.geteuid())
    return _section("state", title, "ok", f"{root} ({mode}, {owner})", [])


async def _metrics(ctx: Any, timeout: float) -> dict[str, Any]:
    from cockpit.i18n import t
    from cockpit.sources.base import SourceError

    title = t("doctor.metrics", ctx.lang)
    src = ctx.sources.metrics
    if src is None:
        return _section(
            "metrics", title, "absent", ctx.sources.missing_text("metrics", ctx.lang), []
        )
    lines: list[str] = []
    try:
        # A replayed bundle answers the recorded calls only; ping() is not one of them.
        ping = None if ctx.mode in (Mode.DEMO, Mode.REPLAY) else getattr(src, "ping", None)
        summary = await _guard(ping(), timeout) if ping else t("doctor.replayed", ctx.lang)
    except (SourceError, TimeoutError) as exc:
        return _section("metrics", title, "fail", _err(exc, ctx.lang, timeout), [])
    try:
        from cockpit.collect.detect import doctor_lines

        lines = await _guard(doctor_lines(ctx, ctx.clock.now()), timeout)
    except (SourceError, TimeoutError) as exc:
        return _section("metrics", title, "fail", summary, [_err(exc, ctx.lang, timeout)])
    return _section("metrics", title, "ok", summary, lines)


async def _alerts(ctx: Any, timeout: float) -> dict[str, Any]:
    """Where the alerts to start from come from: Alertmanager (answering, its version)
    or Prometheus ``ALERTS``; how many there are and which reads failed."""
    from cockpit.collect.paged import collect_paged, failure_lines
    from cockpit.i18n import t
    from cockpit.sources.base import SourceError

    lang = ctx.lang
    title = t("doctor.alerts", lang)
    am = ctx.sources.alerts
    if am is None and ctx.sources.metrics is None:
        return _section("alerts", title, "absent", t("alerts.no_source", lang), [])
    summary = t("alerts.source.prometheus", lang)
    if am is not None:
        try:
            summary = await _guard(am.ping(), timeout)
        except (SourceError, TimeoutError) as exc:
            return _section("alerts", title, "fail", _err(exc, lang, timeout), [])
    try:
        found = await _guard(collect_paged(ctx), timeout)
    except TimeoutError as exc:
        return _section("alerts", title, "fail", summary, [_err(exc, lang, timeout)])
    muted = sum(1 for a in found.alerts if a.silenced or a.inhibited)
    lines = [t("doctor.alerts_count", lang, count=len(found.alerts), muted=muted)]
    lines += failure_lines(found, lang)
    if found.read:
        return _section("alerts", title, "ok", summary, lines)
    # A bundle answers the queries it recorded: alerts it never read are absent from it,
    # not a fault of this setup.
    replayed = ctx.mode in (Mode.DEMO, Mode.REPLAY)
    return _section("alerts", title, "absent" if replayed else "fail", summary, lines)


async def _kube(ctx: Any, timeout: float) -> dict[str, Any]:
    from cockpit.i18n import t
    from cockpit.sources.base import SourceError

    title = t("doctor.kube", ctx.lang)
    src = ctx.sources.kube
    if src is None:
        return _section("kube", title, "absent", ctx.sources.missing_text("kube", ctx.lang), [])
    from cockpit.sources.bundle import ReplaySource

    # A replayed source answers any method name, but has no live API server to ask.
    if isinstance(src, ReplaySource) or getattr(src, "check_access", None) is None:
        return _section("kube", title, "ok", t("doctor.replayed", ctx.lang), [])
    from cockpit.sources.kube_permissions import check_permissions

    try:
        checks = await _guard(
            check_permissions(src, ctx.settings.service.namespace or None), timeout * 3
        )
    except (SourceError, TimeoutError) as exc:
        return _section("kube", title, "fail", _err(exc, ctx.lang, timeout), [])
    lines = []
    refused = 0
    for c in checks:
        what = f"{c.verb} {c.resource}{'/' + c.subresource if c.subresource else ''}"
        where = f" -n {c.namespace}" if c.namespace else ""
        if c.allowed:
            lines.append(f"✓ {what}{where}")
        else:
            refused += 1
            reason = f" ({c.reason})" if c.reason else ""
            lines.append(f"✗ {what}{where}{reason} — {c.command}")
    context = getattr(src, "context", None) or t("doctor.current_context", ctx.lang)
    summary = t(
        "doctor.kube_summary",
        ctx.lang,
        context=context,
        ok=len(checks) - refused,
        total=len(checks),
    )
    # Optional reads (Volcano, Kueue, Helm secrets) being refused only narrows what cockpit shows.
    status = "fail" if refused == len(checks) else "ok"
    return _section("kube", title, status, summary, lines)


async def _gpu(ctx: Any, timeout: float) -> dict[str, Any]:
    from cockpit.i18n import t
    from cockpit.sources.base import SourceError

    title = t("doctor.gpu", ctx.lang)
    src = ctx.sources.gpu
    if src is None:
        return _section("gpu", title, "absent", ctx.sources.missing_text("gpu", ctx.lang), [])
    try:
        snap = await _guard(src.snapshot(), timeout)
    except (SourceError, TimeoutError) as exc:
        return _section("gpu", title, "fail", _err(exc, ctx.lang, timeout), [])
    gpus = getattr(snap, "gpus", [])
    lines = [f"{g.index}: {g.name} {g.uuid}" for g in gpus]
    return _section("gpu", title, "ok", t("doctor.gpu_summary", ctx.lang, n=len(gpus)), lines)


def _err(exc: BaseException, lang: str, timeout: float) -> str:
    from cockpit.i18n import t

    failure = getattr(exc, "failure", None)
    if failure is not None:
        text = f"{t(f'error.{failure.kind.value}', lang)}: {failure.message}"
        hint = failure.hint_in(lang)
        return text + (f" — {hint}" if hint else "")
    if isinstance(exc, TimeoutError):
        return t("doctor.check_timeout", lang, seconds=timeout)
    return f"{type(exc).__name__}: {exc}"
