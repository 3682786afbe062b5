"""Helpers shared by the Kubernetes commands (``pending``, ``changes``)."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def kube_source(args: argparse.Namespace) -> tuple[Any, str | None]:
    """The Kubernetes source the way every command and the TUI build it (live, or replayed
    from ``--demo``/``--replay``), and the namespace in scope (``--namespace``, else the
    configured service's or the bundle's, else None: the kubeconfig context's);
    ``(None, None)`` after printing why there is no source."""
    from cockpit.wiring import BootError, build_context

    try:
        ctx = build_context(args, with_session=False)
    except BootError as exc:
        print(f"cockpit {args.command}: {exc}", file=sys.stderr)
        return None, None
    if ctx.sources.kube is None:
        from cockpit.i18n import t

        reason = ctx.sources.missing_text("kube", ctx.lang)
        print(
            f"cockpit {args.command}: " + t("kube.cli_unavailable", ctx.lang, reason=reason),
            file=sys.stderr,
        )
        return None, None
    namespace = getattr(args, "namespace", None) or ctx.settings.service.namespace or None
    return ctx.sources.kube, namespace
