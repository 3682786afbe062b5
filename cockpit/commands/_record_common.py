"""Helpers shared by the commands that read the incident store (``list``, ``export``)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from cockpit.config import Settings, load_settings
from cockpit.store import IncidentStore


@contextmanager
def _config_env(path: str | None) -> Iterator[None]:
    """Point ``COCKPIT_CONFIG`` at ``--config`` while the settings are built."""
    if not path:
        yield
        return
    old = os.environ.get("COCKPIT_CONFIG")
    os.environ["COCKPIT_CONFIG"] = path
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("COCKPIT_CONFIG", None)
        else:
            os.environ["COCKPIT_CONFIG"] = old


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Settings with the command line's ``--state-dir`` / ``--lang`` / ``--config`` applied.

    Raises:
        pydantic.ValidationError: malformed configuration.
    """
    with _config_env(getattr(args, "config", None)):
        return load_settings(
            state_dir=getattr(args, "state_dir", None),
            lang=getattr(args, "lang", None),
        )


def store_from_settings(settings: Settings) -> IncidentStore:
    """The incident store in the configured state directory."""
    return IncidentStore(settings.resolved_state_dir())


def err(text: str) -> None:
    """A message for the user on stderr."""
    print(text, file=sys.stderr)
