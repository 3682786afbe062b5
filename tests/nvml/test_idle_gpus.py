"""Idle GPUs are not warnings and are not compared with busy ones (a node serving on four
GPUs and keeping four spare has no outlier)."""

from __future__ import annotations

from cockpit.analysis.gpu_health import Level, cohort_view, is_idle, why_gpu
from cockpit.models import Reading
from cockpit.models.gpu import GpuSnapshot


def gpu(i: int, busy: bool, **kw: float) -> GpuSnapshot:
    base = {
        "util_gpu": 95.0 if busy else 0.0,
        "power_draw": 650.0 if busy else 70.0,
        "temp_gpu": 70.0 if busy else 33.0,
        "sm_clock": 1980.0 if busy else 345.0,
        "mem_used": 70000.0 if busy else 500.0,
        "clock_reasons": 0.0 if busy else 0x1,
        "pcie_gen": 5.0 if busy else 1.0,
        "pcie_gen_max": 5.0,
        "pcie_width": 16.0,
        "pcie_width_max": 16.0,
    }
    base.update(kw)
    return GpuSnapshot(index=i, **{k: Reading.known(v) for k, v in base.items()})


def test_spare_gpus_next_to_busy_ones_are_neither_outliers_nor_warnings():
    gpus = [gpu(i, busy=i < 4) for i in range(8)]
    view = cohort_view(gpus)
    assert view.outliers == []
    for g in gpus:
        verdict = why_gpu(g, gpus, cohort=view)
        assert verdict.level in (Level.OK, Level.INFO), (g.index, verdict.line)
    idle = why_gpu(gpus[6], gpus, cohort=view, lang="zh")
    assert [f.key for f in idle.findings] == ["idle"] and "空闲" in idle.line
    # A busy GPU says nothing of the spare ones.
    assert why_gpu(gpus[0], gpus, cohort=view).findings == []


def test_busy_gpus_are_still_compared_with_each_other():
    gpus = [gpu(i, busy=i < 4) for i in range(8)]
    gpus[2] = gpu(2, busy=True, sm_clock=990.0, power_draw=420.0, temp_gpu=88.0)
    view = cohort_view(gpus)
    assert view.outliers == [2]
    assert why_gpu(gpus[2], gpus, cohort=view).level is Level.WARN


def test_a_lone_busy_gpu_among_idle_ones_is_not_an_outlier():
    gpus = [gpu(i, busy=i == 0) for i in range(4)]
    assert cohort_view(gpus).outliers == []
    assert why_gpu(gpus[0], gpus).level is Level.OK


def test_unknown_utilisation_is_neither_idle_nor_busy():
    blank = GpuSnapshot(index=0)
    assert is_idle(blank) is None
    assert is_idle(gpu(1, busy=False)) is True and is_idle(gpu(2, busy=True)) is False
