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


def test_a_layer_normal_on_part_of_its_signals_is_not_ticked() -> None:
    """Normal on 2 of its 3 signals, the third without data: not a plain ✔ (no data is
    never passed as healthy), and the headline says how many decided."""
    part = LayerVerdict(layer="infra", verdict="normal", signals_decided=2, signals_total=3)
    assert part.partial and part.mark == "◐"
    whole = LayerVerdict(layer="infra", verdict="normal", signals_decided=3, signals_total=3)
    assert not whole.partial and whole.mark == "✔"
