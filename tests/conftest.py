"""Suite-wide fixtures. Backends (real Prometheus, local Kubernetes API server, fake NVML)
live in ``tests/backends/*.py`` and are loaded as pytest plugins automatically."""

from __future__ import annotations

from pathlib import Path

pytest_plugins = sorted(
    f"tests.backends.{p.stem}"
    for p in (Path(__file__).parent / "backends").glob("*.py")
    if not p.name.startswith("_")
)

SHARED = Path(__file__).resolve().parents[2] / "shared"
