"""``cockpit --resume`` reopens an incident on everything its screens' analysis reads: the
service scope, the ``--at`` time, the Prometheus it was opened with and the baseline chosen,
so A's and C's rows read the same values and verdicts after resume as before, and as
``cockpit analyze`` does with the same scope."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

COCKPIT = str(Path(sys.executable).with_name("cockpit"))


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    import os

    for key in list(os.environ):
        if key.startswith("COCKPIT_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("COCKPIT_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("COCKPIT_STATE_DIR", str(tmp_path / "state"))
    return tmp_path


def _at(srv: Any) -> str:
    return datetime.fromtimestamp(srv.scenario.now, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def _rows(ctx: Any) -> tuple[dict[str, tuple[Any, str]], dict[str, tuple[Any, str]]]:
    """A's and C's rows as ``{signal: (now, verdict)}``."""
    from cockpit.collect import steps
    from cockpit.collect.cache import screen_window

    try:
        window = screen_window(ctx)
        golden = await steps.golden(ctx, window)
        dd = await steps.drilldown(ctx, window)
    finally:
        await ctx.sources.close()
    a = {r.key: (r.now.value, r.verdict) for r in golden.rows}
    c = {r.key: (r.now.value, r.verdict) for r in dd.drilldown.summaries}
    return a, c


async def test_resume_reads_the_scope_time_sources_and_baseline_it_was_opened_with(
    prometheus_scenario: Any, clean_env: Path
) -> None:
    from cockpit.collect.cache import screen_window, set_baseline
    from cockpit.wiring import build_context

    srv = prometheus_scenario("throttled_gpu")
    sc = srv.scenario
    scope = {"namespace": sc.scope["namespace"], "deployment": sc.scope["deployment"]}
    first = build_context(
        argparse.Namespace(lang="en", prometheus_url=srv.url, at=_at(srv), **scope)
    )
    screen_window(first)
    set_baseline(first, "quiet")  # the responder compared with the quiet hours
    before_a, before_c = await _rows(first)
    assert any(v == "anomalous" for _, v in before_c.values())
    first.session.flush()
    first.session.store.release_all()  # as when that process exits

    # Reopened with no flag at all: the analysis reads what it read before.
    resumed = build_context(argparse.Namespace(resume="latest"))
    assert resumed.session.incident.service.describe() == first.session.incident.service.describe()
    assert (resumed.settings.service.namespace, resumed.settings.service.deployment) == (
        scope["namespace"],
        scope["deployment"],
    )
    assert screen_window(resumed).baseline == "quiet"
    after_a, after_c = await _rows(resumed)
    assert after_a == before_a
    assert after_c == before_c
    resumed.session.store.release_all()

    # ... which is what `cockpit analyze` says of the same scope, time and baseline.
    proc = subprocess.run(
        [
            COCKPIT,
            "analyze",
            "--prometheus-url",
            srv.url,
            "--at",
            _at(srv),
            "-n",
            scope["namespace"],
            "--deployment",
            scope["deployment"],
            "--baseline",
            "quiet",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=180,
        env={"PATH": "/usr/bin:/bin", "COCKPIT_CONFIG": "/nonexistent", "LANG": "C.UTF-8"},
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    analyzed = {s["key"]: (s["now"], s["verdict"]) for s in doc["signals"]}
    for key, (now, verdict) in after_c.items():
        if key in analyzed:
            assert analyzed[key][1] == verdict, key
            if now is not None and analyzed[key][0] is not None:
                assert analyzed[key][0] == pytest.approx(now), key


def test_a_scope_flag_on_resume_overrides_the_saved_scope_and_says_so(clean_env: Path) -> None:
    from cockpit.wiring import build_context

    first = build_context(argparse.Namespace(lang="en", namespace="llm", deployment="vllm"))
    first.session.store.release_all()
    later = build_context(argparse.Namespace(resume="latest", namespace="other"))
    assert later.settings.service.namespace == "other"
    assert later.settings.service.deployment == ""
    assert any("--namespace other" in w and "(llm)" in w for w in later.warnings)
    # the title bar and the next resume read the scope investigated now
    assert later.session.incident.service.namespace == "other"
    later.session.store.release_all()
    again = build_context(argparse.Namespace(resume="latest"))
    assert again.settings.service.namespace == "other"
