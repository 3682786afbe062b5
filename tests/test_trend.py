"""Sparklines draw magnitudes: bars start at zero for values that are never negative, so
noise on a steady value never draws as a cliff (a steady 47.9–48.8 req/s looked like a
traffic drop when the bars spanned only its own range)."""

from __future__ import annotations

from cockpit.analysis.gpu_text import sparkline
from cockpit.ui.metrics_common import BARS, spark_text


def test_a_steady_value_draws_level_bars() -> None:
    qps = [48.1, 48.8, 47.9, 47.9, 48.0, 48.5, 48.2]
    assert set(spark_text(qps)) <= set(BARS[-2:]), spark_text(qps)
    assert set(sparkline(qps)) <= {"▇", "█"}, sparkline(qps)


def test_bars_are_proportional_to_the_value() -> None:
    # ×3: the first bar about a third of the second's height
    assert spark_text([100.0, 300.0]) == BARS[2] + BARS[-1]
    assert spark_text([0.0, 0.0, 0.0]) == BARS[0] * 3
    assert sparkline([0.0, 0.0]) == "▁▁"


def test_negative_values_span_their_own_range() -> None:
    assert spark_text([-1.0, 1.0]) == BARS[0] + BARS[-1]
    assert sparkline([-1.0, 1.0]) == "▁█"
