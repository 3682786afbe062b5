"""Snapshot tests (pytest-textual-snapshot): SVGs are stored under
``snapshots/__snapshots__/<test module>/``. Update with ``--snapshot-update`` on a whole
module (not a single node id) and look at every changed SVG before accepting it."""

from __future__ import annotations

import os

# Deterministic rendering: no animations, fixed colour depth.
os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
os.environ.setdefault("COLORTERM", "truecolor")
