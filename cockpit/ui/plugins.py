"""Discovery of panel plugins through the ``cockpit.panels`` entry-point group.

Built-in panels register there exactly like third-party ones. Names are listed without
importing; each load is isolated so that a broken plugin becomes a notice, never a crash.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import entry_points

GROUP = "cockpit.panels"


@dataclass
class PanelLoad:
    """Result of loading one entry point: ``cls`` on success, ``error`` otherwise."""

    name: str
    value: str
    cls: type | None = None
    error: str = ""


def list_panels() -> list[tuple[str, str]]:
    """``(name, "module:Class")`` of every registered panel, without importing them."""
    return sorted((ep.name, ep.value) for ep in entry_points(group=GROUP))


def load_panels() -> list[PanelLoad]:
    """Import every registered panel; failures are captured per plugin."""
    from cockpit.ui.panel import Panel

    out: list[PanelLoad] = []
    for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        item = PanelLoad(name=ep.name, value=ep.value)
        try:
            cls = ep.load()
        except Exception as exc:
            item.error = f"{type(exc).__name__}: {exc}"
        else:
            if isinstance(cls, type) and issubclass(cls, Panel):
                item.cls = cls
            else:
                item.error = f"{ep.value} is not a cockpit Panel"
        out.append(item)
    return out


def panels_for_step(step_id: str, loaded: list[PanelLoad]) -> list[type]:
    """Classes of the loaded panels that declare ``step_id`` in ``STEPS``."""
    return [p.cls for p in loaded if p.cls is not None and step_id in getattr(p.cls, "STEPS", ())]
