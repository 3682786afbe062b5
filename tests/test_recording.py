"""Recording plans, `cockpit record` against a real Prometheus, and the shipped demo bundle."""

from __future__ import annotations

import argparse
import asyncio
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.clock import Clock
from cockpit.commands.record_cmd import _record, parse_time, parse_window
from cockpit.config import Settings
from cockpit.context import AppContext
from cockpit.models import from_epoch
from cockpit.recording import family_selector, plan_step, plans, register_plan, run_plans
from cockpit.scenarios import get_scenario
from cockpit.scenarios.build_demo import DEMO_BUNDLE, MAX_BYTES
from cockpit.scenarios.promserver import PromServer
from cockpit.sources.base import ErrorKind, SourceError, Sources
from cockpit.sources.bundle import open_replay
from tests.backends.faultproxy import closed_port_url


def test_parse_window_and_time() -> None:
    assert parse_window("2h") == timedelta(hours=2)
    assert parse_window("1h30m") == timedelta(minutes=90)
    assert parse_window("1d") == timedelta(days=1)
    assert parse_window("600") == timedelta(minutes=10)
    for bad in ("", "2 hours", "0m", "h2", "2h-"):
        with pytest.raises(ValueError):
            parse_window(bad)
    assert parse_time("2026-11-27T12:55Z") == datetime(2026, 11, 27, 12, 55, tzinfo=UTC)
    assert parse_time("2026-11-27T20:55+08:00") == datetime(2026, 11, 27, 12, 55, tzinfo=UTC)
    assert parse_time("1795784100") == datetime(2026, 11, 27, 12, 55, tzinfo=UTC)
    with pytest.raises(ValueError):
        parse_time("yesterday")


def test_plan_step_and_selector() -> None:
    end = datetime(2026, 11, 27, 12, 55, tzinfo=UTC)
    assert plan_step(end - timedelta(minutes=30), end) == 15
    assert plan_step(end - timedelta(hours=2), end) == 30
    assert plan_step(end - timedelta(days=1), end) == 240
    assert (
        family_selector("vllm:num_requests_waiting", "ns")
        == 'vllm:num_requests_waiting{namespace="ns"}'
    )
    assert family_selector("kube_node_labels", "ns") == "kube_node_labels"
    assert family_selector("DCGM_FI_DEV_GPU_UTIL", "") == "DCGM_FI_DEV_GPU_UTIL"


def test_register_plan_rejects_a_second_owner() -> None:
    async def mine(ctx: AppContext, start: datetime, end: datetime) -> None:
        return None

    register_plan("test-only-plan", mine)
    register_plan("test-only-plan", mine)  # same function: fine
    assert plans()["test-only-plan"] is mine
    with pytest.raises(ValueError, match="already registered"):
        register_plan("test-only-plan")(lambda ctx, s, e: mine(ctx, s, e))
    assert "metric_families" in plans()


async def test_run_plans_isolates_failures() -> None:
    done: list[str] = []

    async def good(ctx: AppContext, start: datetime, end: datetime) -> None:
        done.append("good")

    async def slow(ctx: AppContext, start: datetime, end: datetime) -> None:
        await asyncio.sleep(5)

    async def buggy(ctx: AppContext, start: datetime, end: datetime) -> None:
        raise RuntimeError("plan bug")

    ctx = AppContext(settings=Settings(), sources=Sources(), clock=Clock(), lang="en")
    end = datetime(2026, 11, 27, tzinfo=UTC)
    report = await run_plans(
        ctx,
        end - timedelta(hours=1),
        end,
        names=["good", "slow", "buggy"],
        extra={"good": good, "slow": slow, "buggy": buggy},
        timeout_s=0.2,
    )
    by = {r.name: r for r in report.plans}
    assert by["good"].ok and done == ["good"]
    assert by["good"].calls.started == 0  # no recorded source: nothing counted
    assert not by["slow"].ok and "0.2 s" in by["slow"].error
    assert not by["buggy"].ok and "plan bug" in by["buggy"].error
    assert not report.ok
    with pytest.raises(KeyError, match="unknown recording plan"):
        await run_plans(ctx, end, end, names=["nope"])


def test_record_command_against_real_prometheus(
    worked_example_prom: PromServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sc = worked_example_prom.scenario
    out = tmp_path / "ev.jsonl.gz"
    at = sc.now_dt.isoformat()
    rc = main(
        [
            "record",
            "-o",
            str(out),
            "--prometheus-url",
            worked_example_prom.url,
            "--namespace",
            "llm-serving",
            "--at",
            at,
            "--window",
            "30m",
            "--lang",
            "en",
            "--note",
            "before restart",
            "--plan",
            "metric_families",
        ]
    )
    printed = capsys.readouterr().out
    assert rc == 0, printed
    assert "plan metric_families: done" in printed
    assert "metrics.range:" in printed and f"wrote {out}" in printed
    replay = open_replay(out)
    assert replay.meta.complete
    assert replay.meta.recorded_at == sc.now_dt
    assert replay.meta.window_start == sc.now_dt - timedelta(minutes=30)
    assert replay.meta.scope["namespace"] == "llm-serving"
    assert replay.meta.note == "before restart"
    src = replay.source("metrics")

    async def check() -> None:
        waiting = await src.instant('vllm:num_requests_waiting{namespace="llm-serving"}', sc.now_dt)
        assert len(waiting) == 4 and all(v.v > 70 for v in waiting)
        yesterday = await src.instant(
            'vllm:num_requests_waiting{namespace="llm-serving"}', sc.now_dt - timedelta(days=1)
        )
        assert len(yesterday) == 4 and all(v.v < 20 for v in yesterday)
        nodes = await src.instant("kube_node_labels", sc.now_dt)
        assert {v.labels["node"] for v in nodes} == {"gpu-node-a1", "gpu-node-a2"}

    asyncio.run(check())


def test_record_command_prometheus_down(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "down.jsonl.gz"
    # A fresh process: other tests load the suite's fake libnvidia-ml into this one, and
    # a working GPU source would (rightly) make the recording succeed.
    import subprocess
    import sys

    proc = subprocess.run(
        [
            str(Path(sys.executable).with_name("cockpit")),
            "record",
            "-o",
            str(out),
            "--prometheus-url",
            closed_port_url(),
            "--lang",
            "en",
            "--at",
            "1795784100",
            "--state-dir",
            str(tmp_path / "state"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert re.search(r"metrics\.metric_names: 0 recorded, \d+ failed", proc.stdout)
    assert "unavailable" in proc.stdout
    assert "no call succeeded" in proc.stderr
    src = open_replay(out).source("metrics")

    async def check() -> None:
        with pytest.raises(SourceError) as info:
            await src.metric_names(from_epoch(1795784100))
        assert info.value.kind is ErrorKind.UNAVAILABLE

    asyncio.run(check())
    # Recording again onto an existing bundle keeps it, unless --force says otherwise.
    before = out.read_bytes()
    again = subprocess.run(proc.args, capture_output=True, text=True, timeout=120)
    assert again.returncode == 2 and "--force" in again.stderr
    assert out.read_bytes() == before
    forced = subprocess.run([*proc.args, "--force"], capture_output=True, text=True, timeout=120)
    assert forced.returncode == 1 and "no call succeeded" in forced.stderr


def test_record_command_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["record", "-o", str(tmp_path / "x.gz"), "--window", "soon", "--lang", "zh"]) == 2
    assert "无法识别的时间窗口" in capsys.readouterr().err
    assert main(["record", "-o", str(tmp_path / "x.gz"), "--at", "yesterday", "--lang", "en"]) == 2
    assert "cannot read the time" in capsys.readouterr().err
    rc = main(
        [
            "record",
            "-o",
            str(tmp_path / "no-dir" / "x.gz"),
            "--prometheus-url",
            "http://127.0.0.1:9",
            "--lang",
            "en",
        ]
    )
    assert rc == 2
    assert "cannot write" in capsys.readouterr().err
    assert not (tmp_path / "no-dir").exists()
    # A misspelt plan is refused before the bundle exists: no stub blocks the retry.
    out = tmp_path / "typo.jsonl.gz"
    rc = main(["record", "-o", str(out), "--demo", "--plan", "nosuch", "--lang", "en"])
    assert rc == 2 and not out.exists()
    assert (
        "unknown recording plan: nosuch (known: alerts, changes, gpu, kube"
        in capsys.readouterr().err
    )


def test_record_without_any_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = argparse.Namespace(
        output=str(tmp_path / "x.gz"), plan=None, note="", timeout=5.0, concurrency=2
    )
    sources = Sources(missing={"metrics": "no Prometheus URL", "kube": "no kubeconfig"})
    rc = asyncio.run(_record(args, Settings(), sources, timedelta(hours=1), "en", None))
    assert rc == 2
    err = capsys.readouterr().err
    assert "nothing to record" in err and "no Prometheus URL" in err
    assert not (tmp_path / "x.gz").exists()


# -- the demo bundle shipped in the package --------------------------------------------


def test_demo_bundle_ships_and_answers_offline() -> None:
    sc = get_scenario("worked_example")
    assert DEMO_BUNDLE.is_file(), "run `make demo-bundle`"
    assert DEMO_BUNDLE.stat().st_size < MAX_BYTES
    replay = open_replay(DEMO_BUNDLE)
    assert replay.meta.complete and not replay.meta.problems
    assert replay.meta.recorded_at == sc.now_dt
    assert replay.meta.scope["namespace"] == "llm-serving"
    assert replay.meta.service.namespace == "llm-serving"
    assert replay.meta.service.model == "qwen2.5-72b-instruct"
    src = replay.source("metrics")

    async def check() -> None:
        for target in sc.targets:
            (v,) = await src.instant(target.query, from_epoch(target.at))
            assert v.v == pytest.approx(target.expected, rel=target.rel_tol), target.name

    asyncio.run(check())
