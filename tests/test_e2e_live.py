"""End to end, live mode against a real Prometheus backfilled with the seed's worked
example: walk A→I with Pilot, pin evidence, record a hypothesis and an experiment, check
recovery and export. The export must carry the example's numbers as measured by PromQL
(P99 180→620 ms, QPS 1200→900, errors 0.2 %→1.8 %, GPU util 72 %→98 %)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from cockpit.app import CockpitApp
from cockpit.config import PrometheusSettings, Settings
from cockpit.export import render
from cockpit.sources.base import Sources
from cockpit.sources.prometheus import PrometheusSource
from cockpit.ui.plugins import load_panels
from testkit import make_ctx


def _live_ctx(tmp_path, prom, lang="zh"):
    settings = Settings(prometheus=PrometheusSettings(url=prom.url, timeout_s=20))
    sources = Sources(
        metrics=PrometheusSource(settings.prometheus),
        missing={"kube": "not in this test", "gpu": "not in this test"},
    )
    panels = [p for p in load_panels() if p.name in ("golden_signals", "cohort")]
    return make_ctx(
        tmp_path,
        lang=lang,
        sources=sources,
        settings=settings,
        frozen_at=prom.scenario.now_dt,
        panels=panels,
    )


async def _settle(app, pilot, rounds=3):
    for _ in range(rounds):
        await app.workers.wait_for_complete()
        await pilot.pause()


def _number(text: str) -> float:
    return float(re.sub(r"[^0-9.]", "", text))


@pytest.mark.slow
async def test_walk_a_to_i_and_export_measured_numbers(tmp_path, worked_example_prom):
    prom = worked_example_prom
    ctx = _live_ctx(tmp_path, prom)
    session = ctx.session
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(160, 60)) as pilot:
        await _settle(app, pilot)
        screen = app.screen
        # A: the first SLO breach is offered as the impact start; take it.
        offer = screen.query_one("#breach-offer")
        assert offer.has_class("-shown")
        screen.query_one("#breach-use").press()
        await pilot.pause()
        start = session.incident.times.start
        truth = prom.scenario.incident_start_dt
        assert abs(start - truth) <= timedelta(minutes=5)
        # Pin the measured golden signals.
        for key in (
            "golden-access-latency--p99",
            "golden-access-qps--value",
            "golden-access-error_ratio_5xx--value",
            "golden-hardware-gpu_util--value",
        ):
            row = screen.query_one(f"#{key}")
            row.pin()
        await pilot.pause()
        pinned = {e.label: e for e in session.incident.evidence}
        assert len(pinned) == 4
        p99 = next(e for e in pinned.values() if "P99" in e.label)
        assert (
            600 <= _number(p99.value) <= 640
            and p99.unit == "ms"
            and "histogram_quantile" in p99.query
        )
        qps = next(e for e in pinned.values() if "QPS" in e.label)
        assert 870 <= _number(qps.value) <= 930
        err = next(e for e in pinned.values() if "5xx" in e.label)
        assert 1.6 <= _number(err.value) <= 2.0
        gpu = next(e for e in pinned.values() if "GPU" in e.label)
        assert 95 <= _number(gpu.value) <= 100

        # B → C → D (shared) → F → G → H → I, with the keys and buttons a user has.
        screen.set_focus(None)
        await pilot.press("alt+right")
        await _settle(app, pilot)
        assert app.current_step() == "B"
        await pilot.press("alt+right")
        await _settle(app, pilot)
        assert app.current_step() == "C"
        await pilot.press("alt+right")
        await _settle(app, pilot)
        assert app.current_step() == "D"
        app.screen.query_one("#branch-shared").press()
        await _settle(app, pilot)
        assert app.current_step() == "F"
        assert session.incident.scope_branch == "shared"
        app.screen.set_focus(None)
        await pilot.press("alt+right")
        await _settle(app, pilot)
        assert app.current_step() == "G"
        g = app.screen
        g.query_one("#hyp-statement").value = "显存碎片叠加温度降频，批处理效率下降"
        g.query_one("#hyp-falsifier").value = "重启释放碎片后批大小不回升、P99 不下降"
        g.query_one("#hyp-add").press()
        await pilot.pause()
        g.query_one("#hyp-evidence").value = p99.id
        await pilot.pause()
        assert session.incident.hypotheses[0].evidence_ids == [p99.id]
        app.goto("H")
        await _settle(app, pilot)
        h = app.screen
        h.query_one("#exp-variable").value = "vllm 进程重启（释放碎片）"
        h.query_one("#exp-sli").value = "P99"
        h.query_one("#exp-before").value = f"{p99.value} ms"
        h.query_one("#exp-add").press()
        await pilot.pause()
        assert len(session.incident.experiments) == 1
        app.goto("I")
        await _settle(app, pilot)
        i = app.screen
        i.query_one("#verify-check").press()
        await _settle(app, pilot, 5)
        rec = session.incident.recovery
        assert rec.checked_at is not None
        assert rec.recovered is False  # at the scenario's "now" the incident is still on
        assert any("620" in line or "P99" in line.upper() for line in rec.lines)
        i.query_one(
            "#input-root_cause_technical"
        ).text = "显存碎片 12%→34% 使批大小 8→3，叠加 GPU 83 °C 降频"
        await pilot.pause()
        i.query_one("#export-preview-btn").press()
        await pilot.pause()

    session.flush()
    stored = session.store.load(session.incident.id)
    assert stored.path[:7] == ["A", "B", "C", "D", "F", "G", "H"]
    md = render(stored, lang="zh", fmt="md")
    assert md.startswith("# 事故：")
    for value in (p99.value, qps.value, err.value, gpu.value):
        assert value in md
    assert "histogram_quantile" in md
    assert "显存碎片" in md
    en = render(stored, lang="en", fmt="md")
    assert p99.value in en and "Root cause" in en
    # the impact start taken from the SLO breach says which signal crossed which SLO
    assert "First SLO breach in the data: " in en and "(gateway latency P99 = " in en
    assert "（网关延迟 P99 = " in md


async def test_prometheus_failures_are_shown_in_place(
    tmp_path, prom_fault_proxy, worked_example_prom
):
    """Down, slow beyond the timeout, 5xx, 4xx and malformed JSON: the panel says so, the
    app keeps working, and nothing in the incident is lost."""
    prom = worked_example_prom
    cases = [
        ({"status": 503}, "unavailable"),
        ({"status": 400}, "bad_query"),
        ({"mode": "garbage"}, "bad_data"),
        ({"mode": "truncate"}, "bad_data"),
        ({"delay_s": 5.0}, "timeout"),
    ]
    for n, (fault, expect) in enumerate(cases):
        prom_fault_proxy.clear()
        prom_fault_proxy.add(path="/api/v1/", **fault)
        settings = Settings(prometheus=PrometheusSettings(url=prom_fault_proxy.url, timeout_s=1.5))
        sources = Sources(metrics=PrometheusSource(settings.prometheus))
        panels = [p for p in load_panels() if p.name == "golden_signals"]
        ctx = make_ctx(
            tmp_path / f"{n}-{expect}",
            lang="en",
            sources=sources,
            settings=settings,
            frozen_at=prom.scenario.now_dt,
            panels=panels,
        )
        ctx.session.set_text("impact", f"kept through {expect}")
        app = CockpitApp(ctx=ctx, start_step="A")
        async with app.run_test(size=(140, 50)) as pilot:
            await _settle(app, pilot)
            panel = app.screen.query_one("#panel-golden_signals")
            assert panel.failure is not None, expect
            assert panel.failure.kind.value == expect
            status = str(panel.query_one(".panel--status").render())
            assert "⚠" in status
            # The rest keeps working: edit a field, move on, come back.
            app.screen.query_one("#input-title").value = f"title {expect}"
            app.screen.set_focus(None)
            await pilot.press("alt+right")
            await pilot.pause()
            assert app.current_step() == "B"
        ctx.session.flush()
        stored = ctx.session.store.load(ctx.session.incident.id)
        assert stored.impact == f"kept through {expect}"
        assert stored.title == f"title {expect}"
