"""``cockpit record -o BUNDLE [--window 2h]``: preserve the evidence before mitigating.

Wraps every live source in a :class:`cockpit.sources.bundle.Recorder`, runs every
recording plan (:mod:`cockpit.recording`) concurrently with timeouts over
``[now - window, now]``, writes the bundle and reports what was recorded and what failed.
"""

from __future__ import annotations

import argparse
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from cockpit.commandline import arg
from cockpit.commands._argtypes import positive_int, positive_seconds
from cockpit.incident import Mode

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_window(text: str) -> timedelta:
    """``"2h"``, ``"90m"``, ``"1d"``, ``"1h30m"``, ``"3600s"`` or ``"3600"`` (seconds).

    Raises:
        ValueError: on anything else or a non-positive window.
    """
    text = text.strip()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        seconds = float(text)
    else:
        parts = re.findall(r"(\d+(?:\.\d+)?)([smhd])", text)
        if not parts or "".join(a + b for a, b in parts) != text:
            raise ValueError(text)
        seconds = sum(float(a) * _UNITS[b] for a, b in parts)
    if seconds <= 0:
        raise ValueError(text)
    return timedelta(seconds=seconds)


def parse_time(text: str, now: datetime | None = None) -> datetime:
    """The end of the window to record, as every ``--at`` reads it
    (:func:`cockpit.timeparse.parse_at`: ISO 8601, Unix seconds, ``-6h``…; not in the
    future), as aware UTC.

    Raises:
        ValueError: when it is none of those.
    """
    from cockpit.timeparse import parse_at

    return parse_at(text, now or datetime.now(UTC))


def register(subparsers: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Add the ``record`` subcommand."""
    p = subparsers.add_parser(
        "record",
        parents=parents,
        help="record an evidence bundle from the live sources",
        description="Record an evidence bundle (gzip JSON lines) from the live sources, "
        "for offline review with `cockpit --replay BUNDLE`.",
    )
    p.add_argument(
        "-o", "--output", required=True, metavar="BUNDLE", help="bundle file to write (.jsonl.gz)"
    )
    p.add_argument(
        "--window", default="2h", help="how far back to record (default 2h; e.g. 90m, 1d)"
    )
    p.add_argument(
        "--plan", action="append", metavar="NAME", help="run only this plan (repeatable)"
    )
    p.add_argument(
        "--at",
        metavar="TIME",
        help="end of the window instead of now (ISO 8601 such as 2026-11-27T12:55Z, or Unix "
        "seconds): preserve an incident after the fact",
        default=argparse.SUPPRESS,  # keep a --at given before the command
    )
    p.add_argument("--note", default="", help="free text stored in the bundle header")
    p.add_argument(
        "--force",
        action="store_true",
        help="replace BUNDLE if it exists (by default an existing bundle is never overwritten)",
    )
    p.add_argument(
        "--timeout",
        type=positive_seconds,
        default=120.0,
        help="seconds each plan may take (default 120)",
    )
    p.add_argument(
        "--concurrency", type=positive_int, default=4, help="plans run at once (default 4)"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Record; exit 0 when every plan finished and some call succeeded, 1 otherwise (no
    call succeeded, nothing was recorded, or a plan did not finish), 2 on usage errors."""
    import asyncio
    import sys

    from cockpit.i18n import t
    from cockpit.wiring import BootError, build_sources, settings_from_args

    try:
        settings = settings_from_args(args)
    except BootError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    lang = settings.resolved_lang()
    try:
        window = parse_window(args.window)
    except ValueError:
        print(t("record.bad_window", lang, value=args.window), file=sys.stderr)
        return 2
    at = None
    if args.at is not None:
        try:
            at = parse_time(args.at)
        except ValueError as exc:
            print(t("record.bad_time", lang, value=f"{args.at} ({exc})"), file=sys.stderr)
            return 2
    try:
        sources, _clock, _meta = build_sources(args, settings)
    except BootError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    return asyncio.run(_record(args, settings, sources, window, lang, at))


def _close(writer: Any) -> OSError | None:
    """Close the bundle; the error when the disk refused its last bytes."""
    try:
        writer.close()
    except OSError as exc:
        return exc
    return None


async def _record(
    args: argparse.Namespace,
    settings: Any,
    sources: Any,
    window: timedelta,
    lang: str,
    at: datetime | None,
) -> int:
    import sys
    from pathlib import Path

    from cockpit import __version__
    from cockpit.clock import Clock
    from cockpit.context import AppContext
    from cockpit.i18n import t
    from cockpit.recording import plans, recordable, run_plans
    from cockpit.sources.base import Sources
    from cockpit.sources.bundle import BundleMeta, BundleWriter, Recorder

    live = recordable(sources)
    if not live:
        reasons = "; ".join(f"{k}: {v}" for k, v in sources.missing.items())
        print(t("record.no_sources", lang, reasons=reasons), file=sys.stderr)
        return 2
    end = at if at is not None else Clock().now()
    start = end - window
    scope = {k: v for k, v in settings.service.model_dump().items() if isinstance(v, str) and v}
    meta = BundleMeta(
        recorded_at=end,
        window_start=start,
        window_end=end,
        scope=scope,
        cockpit_version=__version__,
        note=args.note,
    )
    known = plans()
    names = args.plan or sorted(known)
    unknown = [n for n in names if n not in known]
    if unknown:
        # Before the bundle is created: a typo must not leave a stub that blocks a retry.
        print(
            t(
                "record.unknown_plan",
                lang,
                names=", ".join(unknown),
                known=", ".join(sorted(known)),
            ),
            file=sys.stderr,
        )
        return 2
    out = Path(args.output)
    if out.exists() and not getattr(args, "force", False):
        # Evidence is never lost: a recording that fails must not replace a good one.
        print(t("record.exists", lang, path=out), file=sys.stderr)
        return 2
    try:
        writer = BundleWriter(out, meta)
    except OSError as exc:
        print(t("record.cannot_write", lang, path=out, error=exc.strerror or exc), file=sys.stderr)
        return 2
    print(
        t(
            "record.start",
            lang,
            start=start.strftime("%Y-%m-%d %H:%M:%S"),
            end=end.strftime("%Y-%m-%d %H:%M:%S"),
            plans=", ".join(names),
        )
    )
    try:
        wrapped = Sources(missing=dict(sources.missing))
        for name, src in live.items():
            setattr(wrapped, name, Recorder(src, name, writer))
        ctx = AppContext(
            settings=settings,
            sources=wrapped,
            clock=Clock(frozen_at=end),
            lang=lang,
            mode=Mode.RECORD,
        )
        try:
            report = await run_plans(
                ctx, start, end, names=names, concurrency=args.concurrency, timeout_s=args.timeout
            )
        except KeyError as exc:
            print(str(exc.args[0]), file=sys.stderr)
            return 2
    finally:
        await sources.close()
        close_error = _close(writer)
    if close_error is not None:  # a full disk at the end line: said, not a traceback
        print(
            t("record.cannot_write", lang, path=out, error=close_error.strerror or close_error),
            file=sys.stderr,
        )
        return 2
    for r in report.plans:
        print(_plan_line(r, lang))
    stats = writer.stats
    for call in sorted(set(stats.ok) | set(stats.failed)):
        print(
            t(
                "record.calls",
                lang,
                call=call,
                ok=stats.ok.get(call, 0),
                failed=stats.failed.get(call, 0),
            )
        )
    for call, reason in stats.skipped.items():
        print(t("record.skipped", lang, call=call, reason=reason))
    for call, reason in stats.lost.items():
        print(t("record.lost", lang, call=call, reason=reason))
    for name, reason in sources.missing.items():
        print(t("record.missing_source", lang, name=name, reason=reason))
    if writer.failures:
        print(t("record.failures", lang))
        for line in writer.failures[:10]:
            print(f"  {line}")
    size = out.stat().st_size
    if stats.total == 0:
        print(t("record.nothing_recorded", lang, path=out, size=size), file=sys.stderr)
        return 1
    done = t("record.done", lang, path=out, size=size, calls=stats.total, quoted=arg(str(out)))
    print(done)
    if not stats.ok:
        failed = sum(stats.failed.values())
        print(t("record.nothing", lang, path=out, failed=failed), file=sys.stderr)
        return 1
    return 0 if report.ok else 1


def _plan_line(r: Any, lang: str) -> str:
    """One plan's outcome: finished or not, and how many of its calls were recorded or
    failed (a plan that only swallowed failures is not "done")."""
    from cockpit.i18n import t

    c = r.calls
    counts = {"ok": c.recorded, "failed": c.failed, "unanswered": c.unanswered}
    if not r.ok:
        key = "record.plan_failed"
    elif c.started == 0:
        key = "record.plan_no_call"
    elif c.recorded == 0 and c.failed:
        key = "record.plan_all_failed"
    elif c.failed:
        key = "record.plan_some_failed"
    else:
        key = "record.plan_ok"
    return t(key, lang, name=r.name, seconds=r.seconds, error=r.error, **counts)
