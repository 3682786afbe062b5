"""Argument types for numbers that must be positive: a usage error (exit 2) at parse time,
never a hang or a traceback later (``--concurrency 0`` would wait forever)."""

from __future__ import annotations

import argparse
import math


def positive_int(text: str) -> int:
    """An integer ≥ 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


def positive_seconds(text: str) -> float:
    """A finite number of seconds > 0 and at most a day."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value) or not 0 < value <= 86400:
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most 86400 s, not {text}")
    return value


def add_at(p: argparse.ArgumentParser, help_text: str) -> None:
    """A command's ``--at TIME`` (read by :func:`cockpit.wiring.build_context`, which
    freezes the clock there); absent unless given, so a ``--at`` before the command holds."""
    p.add_argument("--at", metavar="TIME", help=help_text, default=argparse.SUPPRESS)
