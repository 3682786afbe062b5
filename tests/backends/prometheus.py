"""Real Prometheus servers backfilled with scenarios, shared by the whole test session.

``prometheus_scenario("worked_example")`` returns a running
:class:`cockpit.scenarios.promserver.PromServer` (``.url``, ``.scenario``); one server per
scenario per session, stopped at the end. Backfilled blocks are cached between sessions
(``cockpit.scenarios.promserver.cached_blocks``). A missing ``promtool``/``prometheus``
fails loudly: ``make test`` installs them.

``worked_example_prom`` is the worked-example server; ``prom_fault_proxy`` is a
:class:`~tests.backends.faultproxy.FaultProxy` in front of it whose faults are cleared
after every test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from cockpit.scenarios import get_scenario
from cockpit.scenarios.promserver import PromServer, start
from tests.backends.faultproxy import FaultProxy


@pytest.fixture(scope="session")
def prometheus_scenario(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[[str], PromServer]]:
    """Factory: scenario name → running Prometheus serving it (cached per session)."""
    servers: dict[str, PromServer] = {}

    def get(name: str) -> PromServer:
        if name not in servers:
            scenario = get_scenario(name)
            servers[name] = start(scenario, tmp_path_factory.mktemp(f"prom-{name}"))
        return servers[name]

    yield get
    for srv in servers.values():
        srv.stop()


@pytest.fixture(scope="session")
def worked_example_prom(prometheus_scenario: Callable[[str], PromServer]) -> PromServer:
    """Prometheus serving the worked example (26 h+ of history; "now" = scenario.now)."""
    return prometheus_scenario("worked_example")


@pytest.fixture(scope="session")
def _prom_proxy_session(worked_example_prom: PromServer) -> Iterator[FaultProxy]:
    proxy = FaultProxy(worked_example_prom.url).start()
    yield proxy
    proxy.stop()


@pytest.fixture
def prom_fault_proxy(_prom_proxy_session: FaultProxy) -> Iterator[FaultProxy]:
    """A fault proxy in front of the worked-example Prometheus; faults cleared after use."""
    _prom_proxy_session.clear()
    yield _prom_proxy_session
    _prom_proxy_session.clear()
