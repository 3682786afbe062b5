"""Counter families split client-side: one ``sum by (status)`` query gives QPS, the 4xx
and 5xx shares and the timeouts, as their own PromQL would."""

from __future__ import annotations

import pytest

from cockpit.analysis.profiles import SplitSpec
from cockpit.collect.signals import split_series
from cockpit.models import Sample, Series


def _fam(rows: dict[str, list[float]], label: str = "status") -> list[Series]:
    return [
        Series(labels={label: k}, samples=[Sample(60.0 * i, v) for i, v in enumerate(vs)])
        for k, vs in rows.items()
    ]


FAMILY = _fam({"200": [90.0, 80.0], "503": [6.0, 15.0], "502": [4.0, 5.0], "404": [0.0, 0.0]})


@pytest.mark.parametrize(
    ("split", "scale", "want"),
    [
        (SplitSpec(label="status", mode="rate"), 1.0, [100.0, 100.0]),
        (SplitSpec(label="status", match="5..|5xx", mode="percent"), 1.0, [10.0, 20.0]),
        (SplitSpec(label="status", match="5..|5xx", mode="share"), 100.0, [10.0, 20.0]),
        (SplitSpec(label="status", match="504|499", mode="rate"), 1.0, [0.0, 0.0]),
        (SplitSpec(label="status", match="50", mode="rate"), 1.0, [0.0, 0.0]),  # in full
    ],
)
def test_split_values(split: SplitSpec, scale: float, want: list[float]) -> None:
    (got,) = split_series(FAMILY, split, scale)
    assert [p.v for p in got.samples] == pytest.approx(want)


def test_no_traffic_is_zero_share_and_nothing_is_no_data() -> None:
    quiet = _fam({"200": [0.0], "503": [0.0]})
    (share,) = split_series(quiet, SplitSpec(label="status", match="5..", mode="percent"))
    assert share.samples[0].v == 0.0  # clamp_min(total, 1e-9), as the PromQL does
    assert split_series([], SplitSpec(label="status", mode="rate")) == []
    unlabelled = _fam({"x": [1.0]}, label="code")
    assert split_series(unlabelled, SplitSpec(label="status", match="5..")) == []
