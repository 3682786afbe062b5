"""``cockpit gpus`` end to end in a subprocess loading the fake NVML library."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.backends.nvml import DRIVER_NOT_LOADED, FakeNvml

COCKPIT = str(Path(sys.executable).parent / "cockpit")


def _run(fake: FakeNvml, *args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = fake.env()
    env["COCKPIT_CONFIG"] = str(tmp_path / "none.toml")
    env.pop("COCKPIT_PROMETHEUS__URL", None)
    return subprocess.run(
        [COCKPIT, "gpus", *args], env=env, capture_output=True, text=True, timeout=60
    )


def test_once_text_decodes_reasons(fake_nvml: FakeNvml, tmp_path: Path) -> None:
    fake_nvml.update({"count": 4, "gpu2.clock_reasons": 0x40, "gpu2.clock_sm": 990})
    fake_nvml.not_supported("nvmlDeviceGetPowerUsage", gpu=1)
    out = _run(fake_nvml, "--once", "--lang", "en", tmp_path=tmp_path)
    assert out.returncode == 1, out.stderr
    text = out.stdout
    assert text.startswith("Source: local NVML")
    assert "HW thermal" in text
    assert "GPU 2: clocks cut: " in text
    assert "GPU 0: ok" in text
    row1 = next(line for line in text.splitlines() if line.startswith("1 "))
    assert "N/A/700" in row1
    # what the two numbers of a cell are, right under the table
    lines = text.splitlines()
    legend = lines[lines.index(next(x for x in lines if x.startswith("3 "))) + 1]
    assert legend.startswith("Pairs: ") and "Power draw/limit" in legend


def test_json_and_lost_gpu(fake_nvml: FakeNvml, tmp_path: Path) -> None:
    fake_nvml.update({"count": 2, "gpu1.err": 15})
    out = _run(fake_nvml, "--once", "--json", tmp_path=tmp_path)
    doc = json.loads(out.stdout)
    gpus = doc["snapshot"]["gpus"]
    assert [g["lost"] for g in gpus] == [False, True]
    assert doc["verdicts"][1]["level"] == "lost"
    assert out.returncode == 1


def test_healthy_exit_zero_in_chinese(fake_nvml: FakeNvml, tmp_path: Path) -> None:
    fake_nvml.update({"count": 2})
    out = _run(fake_nvml, "--once", "--lang", "zh", tmp_path=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "来源：本机 NVML" in out.stdout and "空闲" in out.stdout


def test_driver_not_loaded_without_prometheus(fake_nvml: FakeNvml, tmp_path: Path) -> None:
    fake_nvml.set(init=DRIVER_NOT_LOADED)
    out = _run(fake_nvml, "--once", "--lang", "en", tmp_path=tmp_path)
    assert out.returncode == 2
    assert "driver not loaded" in out.stderr.lower() and "no Prometheus URL" in out.stderr


def test_node_through_prometheus(fake_nvml: FakeNvml, dcgm_prometheus, tmp_path: Path) -> None:
    # The DCGM history ends at a fixed time; the command evaluates at wall-clock now, so
    # it must say there is nothing for the node rather than show zeros.
    out = _run(
        fake_nvml,
        "--once",
        "--lang",
        "en",
        "--node",
        "gpu-node-a",
        "--prometheus-url",
        dcgm_prometheus.url,
        tmp_path=tmp_path,
    )
    assert out.returncode == 2
    assert "dcgm: not_found: no dcgm-exporter series for node 'gpu-node-a'" in out.stderr


def _at_eval_time(
    fake: FakeNvml, prom: Any, tmp_path: Path, *extra: str
) -> subprocess.CompletedProcess[str]:
    """``gpus --once`` in English against the DCGM history, at its evaluation time."""
    return _run(
        fake,
        "--once",
        "--lang",
        "en",
        "--prometheus-url",
        prom.url,
        "--at",
        "2026-11-29T21:00",
        *extra,
        tmp_path=tmp_path,
    )


def test_node_through_prometheus_at_a_time(
    fake_nvml: FakeNvml, dcgm_prometheus, tmp_path: Path
) -> None:
    out = _at_eval_time(fake_nvml, dcgm_prometheus, tmp_path, "--node", "gpu-node-b")
    assert out.returncode == 1, out.stderr
    text = out.stdout
    assert text.startswith("Source: dcgm-exporter in Prometheus (node gpu-node-b)")
    assert "HW thermal" in text and "GPU 2: clocks cut: " in text
    assert "GPU 3: 2 uncorrected ECC errors" in text


def test_a_past_moment_or_a_pipe_prints_one_snapshot_without_screen_codes(
    fake_nvml: FakeNvml, dcgm_prometheus, tmp_path: Path
) -> None:
    """Without --once, --at (a frozen moment) and a piped output each print one snapshot
    and exit: no refresh loop reprinting the same view, no clear-screen codes."""
    fake_nvml.update({"count": 2})
    at = _run(
        fake_nvml,
        "--lang",
        "en",
        "--prometheus-url",
        dcgm_prometheus.url,
        "--at",
        "2026-11-29T21:00",
        "--node",
        "gpu-node-b",
        tmp_path=tmp_path,
    )
    piped = _run(fake_nvml, "--lang", "en", "--interval", "0.2", tmp_path=tmp_path)
    # Each run returned by itself (a refresh loop would run into _run's timeout).
    for out in (at, piped):
        assert out.returncode in (0, 1), out.stderr
        assert "\x1b" not in out.stdout and out.stdout.startswith("Source: ")
        assert out.stdout.count("Source: ") == 1


def test_without_a_node_the_worst_node_is_shown(
    fake_nvml: FakeNvml, dcgm_prometheus, tmp_path: Path
) -> None:
    """No local NVML and no --node: every node is read and the one whose GPUs look worst
    is shown (gpu-node-b: HW thermal, clocks cut, uncorrected ECC), not the first by name."""
    fake_nvml.set(init=DRIVER_NOT_LOADED)
    out = _at_eval_time(fake_nvml, dcgm_prometheus, tmp_path)
    assert out.returncode == 1, out.stderr
    assert "Source: dcgm-exporter in Prometheus (node gpu-node-b)" in out.stdout
    assert "showing gpu-node-b, the node whose GPUs look worst (one of 2" in out.stdout
