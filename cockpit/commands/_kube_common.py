"""Helpers shared by the Kubernetes commands (``pending``, ``changes``)."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def kube_source(args: argparse.Namespace) -> Any:
    """The Kubernetes source the way every command and the TUI build it (live, or replayed
    from ``--demo``/``--replay``); ``None`` after printing why there is none."""
    from cockpit.wiring import BootError, build_context

    try:
        ctx = build_context(args, with_session=False)
    except BootError as exc:
        print(f"cockpit {args.command}: {exc}", file=sys.stderr)
        return None
    if ctx.sources.kube is None:
        from cockpit.i18n import t

        reason = ctx.sources.missing_text("kube", ctx.lang)
        print(
            f"cockpit {args.command}: " + t("kube.cli_unavailable", ctx.lang, reason=reason),
            file=sys.stderr,
        )
        return None
    return ctx.sources.kube
