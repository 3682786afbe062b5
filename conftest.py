"""Keeps the developer's own configuration out of every test (``tests/`` and ``snapshots/``).

Before any test module is imported, ``HOME`` and every ``XDG_*`` base directory point into
one temporary directory (removed at the end of the run), and ``KUBECONFIG`` and
``COCKPIT_*`` from the caller's environment are dropped, except the cache of backfilled
Prometheus blocks (``COCKPIT_SCENARIO_CACHE``, build output reused between runs)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

_XDG = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")
_home: str | None = None


def _isolate_home() -> str:
    from cockpit.scenarios.promserver import cache_root

    # Backfilled Prometheus blocks are build output, not configuration: keep reusing them.
    scenario_cache = str(cache_root())
    home = tempfile.mkdtemp(prefix="cockpit-test-home-")
    os.environ["HOME"] = home
    for var, sub in zip(_XDG, (".config", ".local/share", ".local/state", ".cache"), strict=True):
        os.environ[var] = str(Path(home) / sub)
    for var in list(os.environ):
        if var == "KUBECONFIG" or var.startswith("COCKPIT_"):
            del os.environ[var]
    os.environ["COCKPIT_SCENARIO_CACHE"] = scenario_cache
    return home


def pytest_configure(config: pytest.Config) -> None:
    global _home
    if _home is None:
        _home = _isolate_home()


def pytest_unconfigure(config: pytest.Config) -> None:
    global _home
    if _home is not None:
        shutil.rmtree(_home, ignore_errors=True)
        _home = None
