"""The alert picker: typing only filters, ↑/↓ and Enter choose, and choosing fills the
incident (scope, detection time, paged SLI, title) and step A's paged line; at start it
comes up from the real Prometheus's ALERTS when alerts are there."""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, OptionList, Static

from alert_answers import P99_EXPR, alert_list
from cockpit.app import CockpitApp
from cockpit.config import PrometheusSettings, ServiceSettings, Settings
from cockpit.scenarios import worked_example as we
from cockpit.scenarios.promserver import PromServer
from cockpit.sources.base import Sources
from cockpit.sources.prometheus import PrometheusSource
from cockpit.ui.alertpicker import AlertPickerScreen
from testkit import FROZEN, make_ctx


@asynccontextmanager
async def picker_over_a(tmp_path: Path, lang: str) -> AsyncIterator[tuple[CockpitApp, Any]]:
    """The app on step A with the picker of :func:`alert_answers.alert_list` open."""
    app = CockpitApp(ctx=make_ctx(tmp_path, lang=lang), start_step="A")
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        app.show_alert_picker(alert_list())
        await pilot.pause()
        yield app, pilot


async def test_typing_filters_and_never_chooses(tmp_path: Path) -> None:
    async with picker_over_a(tmp_path, "en") as (app, pilot):
        ctx = app.ctx
        assert ctx is not None
        picker = app.screen
        assert isinstance(picker, AlertPickerScreen)
        menu = picker.query_one("#alert-list", OptionList)
        assert menu.option_count == 5
        # the scope's page first; the other namespace's alert last and marked
        assert "VLLMHighP99Latency" in str(menu.get_option_at_index(0).prompt)
        last = str(menu.get_option_at_index(4).prompt)
        assert "BatchJobFailed" in last and "other scope" in last
        silenced = next(
            str(menu.get_option_at_index(i).prompt)
            for i in range(5)
            if "VLLMSlowFirstToken" in str(menu.get_option_at_index(i).prompt)
        )
        assert "silenced (oncall: known: canary rollback running)" in silenced
        # a sentence typed lands in the filter; nothing is chosen, the page stays
        await pilot.press(*"q 1 j k")
        await pilot.pause()
        assert app.screen is picker and picker.query_one("#alert-filter", Input).value == "q 1 j k"
        assert ctx.session is not None and ctx.session.incident.paged_by is None
        await pilot.press(*["backspace"] * 7, *"gpu-node")
        await pilot.pause()
        assert [a.name for a in picker.shown] == ["NodeDown", "GPUThermalThrottling"]
        assert "inhibited by 1 alert" in str(menu.get_option_at_index(1).prompt)
        await pilot.press(*["backspace"] * 8, "down", "up")
        await pilot.pause()
        detail = str(picker.query_one("#alert-detail", Static).render())
        assert "the SLI it measures: end-to-end latency P99" in detail
        await pilot.press("enter")
        await pilot.pause()
        await pilot.pause()
        assert app.current_step() == "A"
        inc = ctx.session.incident
        assert inc.paged_by is not None and inc.paged_by.name == "VLLMHighP99Latency"
        assert inc.title == "VLLMHighP99Latency: P99 latency above 400 ms for 3 minutes"
        assert (inc.service.namespace, inc.service.deployment) == ("llm", "vllm-qwen")
        assert inc.times.detect == FROZEN - timedelta(minutes=14)
        assert inc.paged_by.expr == P99_EXPR and inc.paged_by.sli == "serving.e2e_latency:p99"
        paged = str(app.screen.query_one("#paged-by", Static).render())
        assert "Paged by: VLLMHighP99Latency (firing)" in paged and "P99" in paged


async def test_a_silenced_alert_is_marked_on_step_a(tmp_path: Path) -> None:
    async with picker_over_a(tmp_path, "zh") as (app, pilot):
        ctx = app.ctx
        assert ctx is not None
        await pilot.press(*"SlowFirst", "enter")
        await pilot.pause()
        await pilot.pause()
        assert ctx.session is not None and ctx.session.incident.paged_by is not None
        assert ctx.session.incident.paged_by.silenced
        paged = str(app.screen.query_one("#paged-by", Static).render())
        assert "已静默（oncall: known: canary rollback running）" in paged
        assert "TTFT" in paged


async def test_escape_closes_without_an_alert(tmp_path: Path) -> None:
    async with picker_over_a(tmp_path, "en") as (app, pilot):
        ctx = app.ctx
        assert ctx is not None
        await pilot.press("escape")
        await pilot.pause()
        assert app.current_step() == "A"
        assert ctx.session is not None and ctx.session.incident.paged_by is None
        assert not app.screen.query_one("#paged-by", Static).display


@pytest.fixture(scope="module")
def prom_alerts(prometheus_scenario) -> PromServer:  # type: ignore[no-untyped-def]
    return prometheus_scenario("worked_example")


async def test_at_start_the_picker_offers_prometheus_alerts(
    tmp_path: Path, prom_alerts: PromServer
) -> None:
    settings = Settings(
        prometheus=PrometheusSettings(url=prom_alerts.url),
        service=ServiceSettings(namespace=we.NAMESPACE),
    )
    ctx = make_ctx(
        tmp_path,
        lang="en",
        settings=settings,
        sources=Sources(metrics=PrometheusSource(settings.prometheus)),
        frozen_at=prom_alerts.scenario.now_dt,
    )
    app = CockpitApp(ctx=ctx, start_step="A")
    app.args = argparse.Namespace()  # started from the command line, no --resume/--alert
    assert app._offer_alerts_at_start()
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        app.fetch_alerts(True)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, AlertPickerScreen)
        assert app.screen.shown[0].name == "VLLMHighP99Latency"
        await pilot.press("enter")
        await pilot.pause()
        assert ctx.session is not None
        inc = ctx.session.incident
        firing = next(a.firing_at for a in we.ALERTS if a.name == "VLLMHighP99Latency")
        assert inc.times.detect is not None and inc.times.detect.timestamp() == firing
        assert inc.service.deployment == we.DEPLOYMENT
        assert ctx.settings.service.deployment == we.DEPLOYMENT
    app.args = argparse.Namespace(resume="latest")
    assert not app._offer_alerts_at_start()


async def test_the_palette_offers_the_picker(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path, lang="zh")
    app = CockpitApp(ctx=ctx, start_step="A")
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "从告警开始" in titles
        cmd = next(c for c in app.get_system_commands(app.screen) if c.title == "从告警开始")
        cmd.callback()
        await app.workers.wait_for_complete()
        await pilot.pause()
        # no alert source in this context: said, and no picker
        assert not isinstance(app.screen, AlertPickerScreen)


async def test_outside_text_in_the_picker_is_shown_as_it_is(tmp_path: Path) -> None:
    """Label values and annotations are text: markup is not interpreted and control
    characters reach the screen written out (the output boundary)."""
    from alert_answers import ALERTS, SILENCES
    from cockpit.analysis.paged import finish, from_alertmanager
    from cockpit.collect.paged import AlertList, signal_metrics

    hostile = {
        **ALERTS[0],
        "labels": {
            "alertname": "Evil[bold]X[/bold]",
            "namespace": "llm",
            "pod": "p\x1b]52;c;aGk=\x07",
        },
        "annotations": {"summary": "[red]not red[/red] \x9b2J"},
    }
    alerts = finish(from_alertmanager([hostile], SILENCES), "llm", "", signal_metrics())
    listed = AlertList(source="alertmanager", since=FROZEN, until=FROZEN, alerts=alerts)
    app = CockpitApp(ctx=make_ctx(tmp_path, lang="en"), start_step="A")
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        app.show_alert_picker(listed)
        await pilot.pause()
        menu = app.screen.query_one("#alert-list", OptionList)
        line = str(menu.get_option_at_index(0).prompt)
        assert "Evil[bold]X[/bold]" in line
        shown = app.export_screenshot()
        assert "Evil[bold]X[/bold]" in shown.replace("&#160;", " ")
        assert "\x1b]52" not in shown and "\\x1b]52" in shown
        detail = str(app.screen.query_one("#alert-detail", Static).render())
        assert "[red]not red[/red]" in detail


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_enter_with_no_matching_alert_says_so(tmp_path: Path, lang: str) -> None:
    async with picker_over_a(tmp_path, lang) as (app, pilot):
        picker = app.screen
        assert isinstance(picker, AlertPickerScreen)
        await pilot.press(*"zzz-no-such-alert")
        await pilot.pause()
        assert picker.shown == []
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is picker  # nothing chosen, the picker stays
        said = [n.message for n in app._notifications]
        want = "Esc" if lang == "en" else "Esc 跳过"
        assert len(said) == 1 and want in said[0], said
        assert app.ctx is not None and app.ctx.session is not None
        assert app.ctx.session.incident.paged_by is None
