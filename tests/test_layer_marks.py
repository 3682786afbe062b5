"""C's layer marks: a hardware layer that is only busier with the load is not marked as a
fault; one whose fault signals are partly missing still is."""

from __future__ import annotations

from cockpit.analysis.layers import LayerVerdict


def test_busier_gpus_are_marked_changed_not_faulty() -> None:
    busy = LayerVerdict(layer="hardware", verdict="anomalous", busier="not_faulty")
    assert busy.mark == "▲" and "busier" in busy.headline("en")
    blind = LayerVerdict(layer="hardware", verdict="anomalous", busier="not_ruled_out")
    assert blind.mark == "✖"
    assert LayerVerdict(layer="serving", verdict="anomalous").mark == "✖"
    assert LayerVerdict(layer="serving", verdict="normal").mark == "✔"
    assert LayerVerdict(layer="serving", verdict="no_data").mark == "?"
