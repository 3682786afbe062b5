"""Helpers shared by the commands that read the incident store (``list``, ``export``)."""

from __future__ import annotations

import argparse
import sys

from cockpit.config import Settings
from cockpit.store import IncidentStore


def settings_or_none(args: argparse.Namespace) -> Settings | None:
    """Settings from flags, environment and config file; ``None`` after printing why not."""
    from cockpit.wiring import BootError, settings_from_args

    try:
        return settings_from_args(args)
    except BootError as exc:
        err(str(exc))
        return None


def store_from_settings(settings: Settings) -> IncidentStore:
    """The incident store in the configured state directory."""
    return IncidentStore(settings.resolved_state_dir())


def err(text: str) -> None:
    """A message for the user on stderr."""
    print(text, file=sys.stderr)
