"""Suite-wide fixtures. Backends (real Prometheus, local Kubernetes API server, fake NVML)
live in ``tests/backends/*.py`` and are loaded as pytest plugins automatically.
Fixtures the tests read live in ``tests/data/`` (its README says where each file comes
from); the user's home and configuration are kept out by the root ``conftest.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest_plugins = sorted(
    f"tests.backends.{p.stem}"
    for p in (Path(__file__).parent / "backends").glob("*.py")
    if not p.name.startswith("_")
)

DATA = Path(__file__).resolve().parent / "data"
"""Fixtures copied into the repository (real cases, the handbook); sources in its README."""

UNDIAGNOSED_CASES: frozenset[str] = frozenset()
"""Cases of ``cases.jsonl`` that ``cockpit explain`` does not diagnose as expected yet.

Their diagnosis tests are strict expected failures: a change that makes one pass fails
the suite until its id is removed here."""


def case_params(cases: list[dict[str, Any]]) -> list[Any]:
    """``cases`` as pytest parameters with the case id, undiagnosed ones strictly xfailed."""
    undiagnosed = pytest.mark.xfail(strict=True, reason="case not diagnosed by explain yet")
    return [
        pytest.param(c, id=c["id"], marks=[undiagnosed] if c["id"] in UNDIAGNOSED_CASES else [])
        for c in cases
    ]
