"""Bounded memory against hostile or broken inputs, in a subprocess whose address space is
capped with ``ulimit -v`` (1 GiB): a Prometheus answering 300 MB per query, a gzip bomb and
``/dev/zero`` given to ``--replay``. Each ends with a one-line error naming the limit, exit
status 2, and no traceback (a ``MemoryError`` would show one)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

HELPERS = Path(__file__).parent / "helpers"
LIMIT_KIB = 1024 * 1024  # ulimit -v takes KiB: 1 GiB


def _cockpit(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("cockpit", path=str(Path(sys.executable).parent))
    assert exe
    env = {k: v for k, v in os.environ.items() if not k.startswith("COCKPIT_")}
    env.update(
        COCKPIT_STATE_DIR=str(tmp_path / "state"),
        COCKPIT_CONFIG=str(tmp_path / "none.toml"),
        COCKPIT_LANG="en",
    )
    script = f'ulimit -v {LIMIT_KIB} && exec "$0" "$@"'
    return subprocess.run(
        ["bash", "-c", script, exe, *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def _clean_failure(proc: subprocess.CompletedProcess[str], *words: str) -> None:
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out and "MemoryError" not in out, out[-3000:]
    assert proc.returncode == 2, (proc.returncode, out[-3000:])
    for word in words:
        assert word in proc.stderr, proc.stderr[-3000:]


@pytest.fixture
def huge_prometheus() -> Iterator[Callable[..., str]]:
    servers: list[subprocess.Popen[str]] = []

    def start(*flags: str) -> str:
        proc = subprocess.Popen(
            [sys.executable, str(HELPERS / "huge_prometheus.py"), "300", *flags],
            stdout=subprocess.PIPE,
            text=True,
        )
        servers.append(proc)
        assert proc.stdout is not None
        return f"http://127.0.0.1:{proc.stdout.readline().strip()}"

    yield start
    for proc in servers:
        proc.kill()
        proc.wait()


def test_prometheus_answering_300_mb_per_query(
    tmp_path: Path, huge_prometheus: Callable[..., str]
) -> None:
    url = huge_prometheus()
    proc = _cockpit(tmp_path, "analyze", "--prometheus-url", url, "-n", "llm", "--deployment", "v")
    _clean_failure(proc, "larger than 16 MiB", "prometheus.max_response_mb", "label/__name__")


def test_every_query_of_a_screen_300_mb_at_once(
    tmp_path: Path, huge_prometheus: Callable[..., str]
) -> None:
    """Metric names answer, so every query of the analysis is in flight at once, each
    answering 300 MB: memory stays bounded and each failure is named."""
    url = huge_prometheus("--names-ok")
    proc = _cockpit(tmp_path, "analyze", "--prometheus-url", url, "-n", "llm", "--deployment", "v")
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out and "MemoryError" not in out, out[-3000:]
    assert proc.returncode == 0, out[-3000:]
    assert "prometheus.max_response_mb" in out and "not read" in out


def test_gzip_bomb_to_replay(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.jsonl.gz"
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = b"\0" * 2**20
    with bomb.open("wb") as fh:
        for _ in range(2048):  # 2 GiB of zeros in ~2 MB
            fh.write(comp.compress(zeros))
        fh.write(comp.flush())
    assert bomb.stat().st_size < 4 * 2**20
    proc = _cockpit(tmp_path, "analyze", "--replay", str(bomb))
    _clean_failure(proc, "decompresses to more than 256 MiB")


def test_dev_zero_to_replay(tmp_path: Path) -> None:
    proc = _cockpit(tmp_path, "analyze", "--replay", "/dev/zero")
    _clean_failure(proc, "not gzip-compressed")


DEMO = Path(__file__).resolve().parents[1] / "cockpit" / "scenarios" / "demo.jsonl.gz"


def test_mid_file_gzip_damage_keeps_every_line_before_it(tmp_path: Path) -> None:
    from cockpit.sources.bundle import open_replay

    whole = open_replay(DEMO)
    data = bytearray(DEMO.read_bytes())
    at = len(data) * 6 // 10
    data[at : at + 64] = bytes(64)  # 64 zeroed bytes in the middle of the deflate stream
    damaged = tmp_path / "damaged.jsonl.gz"
    damaged.write_bytes(bytes(data))

    replay = open_replay(damaged)
    assert not replay.meta.complete
    assert any("corrupt data after" in p for p in replay.meta.problems), replay.meta.problems
    # More than half of the calls come before the damage (it sits at 60 % of the file).
    assert whole.call_count * 0.5 < replay.call_count < whole.call_count


def test_a_line_over_the_limit_is_skipped_and_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import cockpit.sources.bundle as bundle

    whole = bundle.open_replay(DEMO)
    # The demo's longest answer is 0.26 MiB: with a 0.1 MiB limit its long lines go.
    monkeypatch.setattr(bundle, "MAX_LINE_BYTES", 100_000)
    replay = bundle.open_replay(DEMO)
    assert any("skipped unread" in p for p in replay.meta.problems), replay.meta.problems
    assert 0 < replay.call_count < whole.call_count


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("x = " + "[" * 2000 + "]" * 2000 + "\n", "too deep to read"),
        ("[" + ".".join(["a"] * 2000) + "]\nx = 1\n", "nests deeper than 8 levels"),
        ('[service]\nnamespace = "' + "a" * (50 * 2**20) + '"\n', "at most 1 MiB"),
        ('[service]\nnamespace = "' + "a" * (200 * 2**10) + '"\n', "a value is at most 65536"),
        ('[prometheus]\ntimeout_s = "' + "z" * 60000 + '"\n', "(60002 characters)"),
    ],
    ids=["nested-2000", "dotted-2000", "value-50MB", "value-200KiB", "bad-60k-value"],
)
def test_config_limits_give_one_short_error(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    text: str,
    said: str,
) -> None:
    from cockpit.cli import main

    cfg = tmp_path / "config.toml"
    cfg.write_text(text)
    monkeypatch.setenv("COCKPIT_CONFIG", str(cfg))
    rc = main(["--state-dir", str(tmp_path / "state"), "--lang", "en", "doctor"])
    out, err = capsys.readouterr()
    assert rc == 2
    assert said in err
    assert "Traceback" not in err and "RecursionError" not in err
    assert len(out + err) < 600, (out + err)[:600]  # the value is never echoed


def test_record_on_a_full_disk_leaves_no_empty_bundle(tmp_path: Path) -> None:
    """The disk refuses every byte (a file size limit of 0 gives the same ``write(2)``
    failure as a full disk, without filling one)."""
    import resource
    import signal

    def no_room() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a kill
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))

    exe = shutil.which("cockpit", path=str(Path(sys.executable).parent))
    assert exe
    out = tmp_path / "evidence.jsonl.gz"
    env = {k: v for k, v in os.environ.items() if not k.startswith("COCKPIT_")}
    env.update(PYTHONDONTWRITEBYTECODE="1", COCKPIT_CONFIG=str(tmp_path / "none.toml"))
    proc = subprocess.run(
        [exe, "record", "--demo", "-o", str(out), "--window", "30m", "--lang", "en"],
        preexec_fn=no_room,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    assert "cannot write" in proc.stderr
    assert not out.exists()
