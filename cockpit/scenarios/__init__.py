"""Scenario generator: realistic metric histories for tests, benchmarks and the demo.

``scenario_registry()`` maps a name to a factory; ``--demo``, tests and benchmarks pick
scenarios by name. The generator writes OpenMetrics for ``promtool tsdb
create-blocks-from openmetrics`` (see :mod:`cockpit.scenarios.promserver`). Metric names
live only in the per-stack emitters under :mod:`cockpit.scenarios.stacks`.
"""

from __future__ import annotations

from collections.abc import Callable

from cockpit.scenarios.base import Scenario, Target

__all__ = ["Scenario", "Target", "get_scenario", "scenario_registry"]


def scenario_registry() -> dict[str, Callable[[], Scenario]]:
    """Every scenario by name (factories are cheap; ``Scenario.build`` is not)."""
    from cockpit.scenarios import drilldown_cases, incidents, installs, large, worked_example

    return {
        worked_example.NAME: worked_example.scenario,
        **drilldown_cases.scenarios(),
        **incidents.scenarios(),
        **large.scenarios(),
        **installs.scenarios(),
    }


def get_scenario(name: str) -> Scenario:
    """The scenario called ``name``.

    Raises:
        KeyError: unknown name (the message lists the known ones).
    """
    reg = scenario_registry()
    if name not in reg:
        raise KeyError(f"unknown scenario {name!r}; known: {', '.join(sorted(reg))}")
    return reg[name]()
