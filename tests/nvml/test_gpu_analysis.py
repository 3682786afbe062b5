"""Xid decoding against every xid_hw case, clock-event decoding, why-lines and cohorts."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from cockpit.analysis.clocks import ClockSeverity, decode_clock_reasons
from cockpit.analysis.gpu_health import Level, cohort_view, why_gpu
from cockpit.analysis.xid import explain_xid_text, lookup_xid
from cockpit.models import Reading
from cockpit.models.gpu import GpuSnapshot, XidEvent, normalize_pci
from tests.conftest import DATA, case_params

CASES = [
    json.loads(line)
    for line in (DATA / "cases.jsonl").read_text(encoding="utf-8").splitlines()
    if line.strip()
]
# xid_hw cases that carry kernel-log (NVRM) lines; an application's CUDA error of the same
# category (xid-10: "uncorrectable ECC error encountered") is decoded by cuda_errors.
XID_CASES = [c for c in CASES if c["category"] == "xid_hw" and "NVRM" in c["artifact"]]

# The cases' free-text "likely" mapped onto cockpit's vocabulary.
LIKELY = {
    "suspect_hardware": "suspect_hardware",
    "application_bug": "application_bug",
    "PCIe/power/thermal hardware fault": "hardware",
}


def test_there_are_xid_cases() -> None:
    assert len(XID_CASES) >= 5


@pytest.mark.parametrize("case", case_params(XID_CASES))
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_xid_case_decodes_as_expected(case: dict, lang: str) -> None:
    exp = case["expected"]
    res = explain_xid_text(case["artifact"], lang=lang)
    assert res.found
    if "xid" in exp:
        assert exp["xid"] in res.root_xids
    if "xids" in exp:
        assert set(exp["xids"]) <= set(res.root_xids)
    if exp.get("xid_inferred"):
        occ = [o for o in res.occurrences if o.xid == exp["xid"]]
        assert occ and all(o.inferred for o in occ)
    groups = [g for r in res.gpus for g in r.groups]
    main = next(g for g in groups if g.xid == exp.get("xid", (exp.get("xids") or [0])[0]))
    if "gpu" in exp:
        assert main.pci == normalize_pci(exp["gpu"])
    if "distinct_pids" in exp:
        assert len(main.pids) == exp["distinct_pids"]
    if "likely" in exp:
        want = next(v for k, v in LIKELY.items() if exp["likely"].startswith(k))
        assert main.likely == want
    if "severity" in exp:
        assert main.info.severity == exp["severity"]
    if "check" in exp:
        assert "ROW_REMAPPER" in main.info.check
    if "escalate_if" in exp:
        assert "95" in main.info.escalate_if and "64" in main.info.escalate_if
    if "secondary" in exp:
        sec = exp["secondary"]
        g2 = next(g for g in groups if g.xid == sec["xid"])
        assert g2.pci == normalize_pci(sec["gpu"])
        assert g2.likely == "informational"
    if "gpus" in exp:
        for pci, words in exp["gpus"].items():
            rep = res.gpu(pci)
            assert rep is not None, pci
            if "RMA" in words:
                assert rep.verdict == "rma_candidate"
            if "not initialized" in words:
                assert rep.verdict == "not_initialized" and rep.init_failed
    if exp.get("node_action", "").startswith("none"):
        assert all(r.verdict in ("application", "no_action") for r in res.gpus)
    if lang == "en" and isinstance(exp.get("action"), list):
        text = " ".join(a for g in groups for a in g.actions).lower()
        for word in (
            "drain",
            "reset",
            "restart",
            "power-cycle",
            "dcgmi diag",
            "a/b",
            "device-plugin",
        ):
            if any(word in a.lower() for a in exp["action"]):
                assert word in text, word


def test_follow_on_collapses_into_root() -> None:
    text = (
        "[ 100.1] NVRM: Xid (PCI:0000:3b:00): 149, NETIR_LINK_EVT Fatal XC0 i0 Link 00 (0x025001c6 0x0)\n"
        "[ 100.2] NVRM: Xid (PCI:0000:3b:00): 45, pid=812, name=python3, Ch 00000001 caused by previous Xid 149\n"
        "[ 100.3] NVRM: Xid (PCI:0000:3b:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)\n"
        "[ 100.4] NVRM: Xid (PCI:0000:3b:00): 45, pid=813, name=python3, Ch 00000002 caused by previous Xid 149\n"
    )
    res = explain_xid_text(text)
    assert res.root_xids == [149]
    (gpu,) = res.gpus
    (group,) = gpu.groups
    assert group.xid == 149 and group.count == 1
    assert group.followons == {45: 2, 154: 1}
    assert group.likely == "hardware"


def test_many_gpus_same_program_is_application() -> None:
    text = "\n".join(
        f"NVRM: Xid (PCI:0000:{bus}:00): 31, pid={pid}, name=mold, Ch 00000008, intr 00000000. "
        "MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_3 faulted @ 0x7f_0. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ"
        for bus, pid in (("18", 10), ("2a", 11), ("3a", 12))
    )
    res = explain_xid_text(text)
    assert {r.verdict for r in res.gpus} == {"application"}
    assert any("3 GPUs" in f for f in res.findings)


def test_variants_old_driver_and_119_wordings() -> None:
    text = (
        "[Wed Jan 27 23:04:35 2021] NVRM: Xid (PCI:0000:3d:00): 43, pid=35521, Ch 00000008\n"
        "NVRM: Xid (PCI:0000:1a:00): 119, pid=1, name=nvidia-smi, Timeout waiting for RPC from GSP! Expected function 76 (GSP_RM_CONTROL) (0x20801348 0x410).\n"
        "NVRM: Xid (PCI:0000:1b:00): 119, pid='<unknown>', name=<unknown>, Timeout after 6s of waiting for RPC response from GPU0 GSP! Expected function 4097 (GSP_INIT_DONE) (0x0 0x0).\n"
        "NVRM: Xid (PCI:0000:1c:00): 13, Graphics Exception: ESR 0x50 0x1\n"
    )
    res = explain_xid_text(text, lang="zh")
    occ = {o.pci: o for o in res.occurrences}
    assert occ["0000:3d:00"].pid == 35521 and occ["0000:3d:00"].process is None
    assert occ["0000:3d:00"].at == "Wed Jan 27 23:04:35 2021"
    assert occ["0000:1b:00"].pid is None and occ["0000:1b:00"].process is None
    assert occ["0000:1c:00"].pid is None and occ["0000:1c:00"].message.startswith("Graphics")
    assert res.gpu("0000:1a:00.0").groups[0].likely == "driver"
    assert res.gpu("0000:1a:00").groups[0].info.name == "GSP RPC 超时"


def test_nothing_to_explain() -> None:
    assert not explain_xid_text("just some log line\n").found


def test_catalogue_lookup_both_languages() -> None:
    en, zh = lookup_xid(79), lookup_xid(79, "zh")
    assert en.bucket == "RESTART_BM" and en.likely == ["hardware"]
    assert "总线" in zh.name and en.sources
    assert not lookup_xid(4242).known


@pytest.mark.parametrize(
    ("mask", "severity", "labels"),
    [
        (0x0, ClockSeverity.NORMAL, []),
        (0x1, ClockSeverity.NORMAL, ["gpu_idle"]),
        (0x4, ClockSeverity.INFO, ["power_cap"]),
        (0x20, ClockSeverity.WARN, ["sw_thermal"]),
        (0x44, ClockSeverity.TROUBLE, ["hw_thermal", "power_cap"]),
        (0x80, ClockSeverity.TROUBLE, ["hw_power_brake"]),
        (0x8, ClockSeverity.TROUBLE, ["hw_slowdown"]),
    ],
)
def test_clock_reasons(mask: int, severity: ClockSeverity, labels: list[str]) -> None:
    d = decode_clock_reasons(mask)
    assert d.severity is severity
    assert [r.label for r in d.reasons] == labels
    assert decode_clock_reasons(mask, "zh").summary


def test_clock_unknown_bits_reported() -> None:
    d = decode_clock_reasons(0x1000)
    assert d.unknown_bits == 0x1000 and "0x1000" in d.summary


def _gpu(i: int, **kw: float) -> GpuSnapshot:
    base = {
        "util_gpu": 95.0,
        "power_draw": 650.0,
        "temp_gpu": 62.0 + i % 3,
        "sm_clock": 1980.0 - 15 * (i % 2),
        "mem_used": 70000.0,
        "clock_reasons": 0.0,
        "pcie_gen": 5.0,
        "pcie_gen_max": 5.0,
        "pcie_width": 16.0,
        "pcie_width_max": 16.0,
    }
    base.update(kw)
    return GpuSnapshot(index=i, **{k: Reading.known(v) for k, v in base.items()})


def test_cohort_flags_only_the_throttled_gpu() -> None:
    gpus = [_gpu(i) for i in range(8)]
    gpus[5] = _gpu(5, sm_clock=990.0, power_draw=420.0, temp_gpu=88.0, clock_reasons=0x40)
    view = cohort_view(gpus)
    assert view.outliers == [5]
    row = view.rows[5]
    assert set(row.outlier_metrics) >= {"sm_clock", "power", "temp"}
    v = why_gpu(gpus[5], gpus, cohort=view)
    assert v.level is Level.BAD
    assert v.findings[0].key == "clock.hw_thermal"
    assert why_gpu(gpus[0], gpus, cohort=view).level is Level.OK


def test_cohort_of_four_uses_mad_not_zscore() -> None:
    # With 4 values a classic z-score can never exceed 1.5; MAD still finds the outlier.
    gpus = [_gpu(i, power_draw=p) for i, p in enumerate([650.0, 640.0, 655.0, 300.0])]
    assert cohort_view(gpus).outliers == [3]


def test_small_spread_is_not_an_outlier() -> None:
    gpus = [_gpu(i, temp_gpu=60.0 + i) for i in range(8)]
    assert cohort_view(gpus).outliers == []


def test_lost_gpu_and_unknown_readings() -> None:
    lost = GpuSnapshot(index=2, lost=True, lost_reason="GPU is lost")
    v = why_gpu(lost, [_gpu(0), _gpu(1)], lang="zh")
    assert v.level is Level.LOST and "丢失" in v.line
    blank = GpuSnapshot(index=1)
    assert why_gpu(blank).level is Level.UNKNOWN


def test_power_cap_alone_and_pcie_and_remap() -> None:
    gpus = [_gpu(i) for i in range(4)]
    gpus[1] = _gpu(1, clock_reasons=0x4, pcie_width=8.0, remap_pending=1.0, remap_failure=1.0)
    v = why_gpu(gpus[1], gpus)
    keys = {f.key for f in v.findings}
    assert {"clock.power_cap", "pcie.degraded", "remap.pending", "remap.failure"} <= keys
    assert v.level is Level.BAD
    # All capped at full load: normal.
    capped = [_gpu(i, clock_reasons=0x4) for i in range(4)]
    assert why_gpu(capped[0], capped).level is Level.OK


def test_idle_link_trained_down_is_not_flagged() -> None:
    gpus = [_gpu(i, util_gpu=0.0, pcie_gen=1.0) for i in range(4)]
    assert why_gpu(gpus[0], gpus).findings == []


def test_xid_event_in_why_line() -> None:
    ev = XidEvent(at=datetime(2026, 1, 1, tzinfo=UTC), xid=48, gpu_index=0)
    v = why_gpu(_gpu(0), [_gpu(1), _gpu(2)], xids=[ev])
    assert v.level is Level.BAD and "Xid 48" in v.line


def test_sparkline_compresses_every_sample_and_keeps_gaps() -> None:
    from cockpit.analysis.gpu_text import sparkline

    # 61 samples (30 min at 30 s): a step 11 samples before the end shows in 12 cells;
    # bars start at zero, so 66 °C is three quarters of the height of 89 °C.
    assert sparkline([66.0] * 50 + [89.0] * 11, 12) == "▆" * 10 + "██"
    # The newest sample is always in the last cell; the oldest in the first.
    assert sparkline([float(v) for v in range(61)], 12)[0] == "▁"
    assert sparkline([float(v) for v in range(61)], 12)[-1] == "█"
    # A cell is the mean of its run (a step down is a step, not hidden by a max).
    assert sparkline([1980.0] * 30 + [1155.0] * 31, 4) == "██▅▅"
    # A run with no sample is a gap, never 0; fewer samples than cells: one cell each.
    assert sparkline([None] * 30 + [1.0, 2.0] * 15 + [2.0], 12)[:5] == " " * 5
    assert sparkline([1.0, 2.0, 3.0], 12) == "▃▆█"
    assert sparkline([None, None], 12) == ""


def test_sparklines_of_several_gpus_share_one_scale_per_metric() -> None:
    """An idle GPU's steady 70 W does not draw as full bars beside a busy GPU's 550 W:
    every GPU's power is drawn against the largest power any of them drew."""
    from cockpit.analysis.gpu_text import shared_tops, sparkline

    idle, busy = [70.0] * 8, [550.0] * 8
    tops = shared_tops([{"power": idle, "temp": [None] * 8}, {"power": busy}])
    assert tops == {"power": 550.0}
    assert sparkline(idle, 8) == "█" * 8  # alone, a steady value fills its own scale
    assert sparkline(idle, 8, tops["power"]) == "▂" * 8
    assert sparkline(busy, 8, tops["power"]) == "█" * 8
    # a top below the series' own maximum never clips it
    assert sparkline([1.0, 2.0, 3.0], 12, 1.0) == "▃▆█"
