"""Real Prometheus servers for the drilldown scenarios (session-scoped, started lazily).

Each scenario of :mod:`cockpit.scenarios` is backfilled by promtool (blocks cached by the
scenario runner) and served by its own ``prometheus`` process on 127.0.0.1; every server
is stopped at the end of the session.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from cockpit.scenarios import get_scenario
from cockpit.scenarios.promserver import PromServer, start


@pytest.fixture(scope="session")
def scenario_prometheus(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[[str], PromServer]]:
    """``get(name)`` → a running :class:`PromServer` serving scenario ``name``."""
    servers: dict[str, PromServer] = {}

    def get(name: str) -> PromServer:
        if name not in servers:
            servers[name] = start(get_scenario(name), tmp_path_factory.mktemp(f"prom-{name}"))
        return servers[name]

    try:
        yield get
    finally:
        for srv in servers.values():
            srv.stop()
