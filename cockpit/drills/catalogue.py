"""The drills shipped in the package: one directory per drill under ``bundles/``::

    cockpit/drills/bundles/<id>/bundle.jsonl.gz   the recorded incident (an evidence bundle)
    cockpit/drills/bundles/<id>/key.json          its answer key (:class:`AnswerKey`)

A directory whose key does not load, whose key's ``id`` is not the directory's name, or
that has no bundle, fails the whole catalogue with :class:`DrillError` naming the file:
a broken drill is a packaging error, never a drill that scores against a wrong key.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from pydantic import ValidationError

from cockpit.drills.key import AnswerKey

BUNDLE = "bundle.jsonl.gz"
KEY = "key.json"


class DrillError(Exception):
    """A drill of the catalogue is broken (message names the file and why), or a drill
    asked for by name does not exist."""


@dataclass(frozen=True)
class Drill:
    """One drill: its answer key and the path of its bundle."""

    key: AnswerKey
    bundle: Path

    @property
    def id(self) -> str:
        """The drill's id (its directory name)."""
        return self.key.id


def load_drill(directory: Path) -> Drill:
    """The drill in ``directory`` (``bundle.jsonl.gz`` + ``key.json``).

    Raises:
        DrillError: the key is missing or invalid, names another id, or the bundle is
            missing.
    """
    key_path = directory / KEY
    bundle = directory / BUNDLE
    try:
        key = AnswerKey.model_validate_json(key_path.read_bytes())
    except OSError as e:
        raise DrillError(f"{key_path}: {e.strerror or e}") from e
    except ValidationError as e:
        raise DrillError(f"{key_path}: {e}") from e
    if key.id != directory.name:
        raise DrillError(f"{key_path}: id {key.id!r} is not the directory's name")
    if not bundle.is_file():
        raise DrillError(f"{bundle}: no bundle")
    return Drill(key=key, bundle=bundle)


def catalogue_dir() -> Path:
    """The package's ``bundles/`` directory."""
    return Path(str(resources.files("cockpit.drills") / "bundles"))


@cache
def catalogue() -> dict[str, Drill]:
    """Every shipped drill by id, sorted by id (see the module docstring).

    Raises:
        DrillError: a drill directory is broken.
    """
    root = catalogue_dir()
    dirs = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))
    return {d.name: load_drill(d) for d in dirs}


def get_drill(drill_id: str) -> Drill:
    """The shipped drill ``drill_id``.

    Raises:
        DrillError: there is no such drill (the message lists those there are).
    """
    drills = catalogue()
    if drill_id not in drills:
        raise DrillError(f"no drill {drill_id!r}; there are: {', '.join(drills) or 'none'}")
    return drills[drill_id]
