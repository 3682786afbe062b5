"""Out-of-range numbers and times are usage errors, never hangs or tracebacks."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cockpit.timeparse import TimeParseError, parse_duration, parse_time

COCKPIT = str(Path(sys.executable).with_name("cockpit"))
NOW = datetime(2026, 11, 29, 21, 0, tzinfo=UTC)


@pytest.mark.parametrize("text", ["0001-01-01T00:00", "9999-12-31T23:59", "-99999999d", "1"])
def test_times_outside_the_epoch_range_are_refused(text: str) -> None:
    with pytest.raises(TimeParseError):
        parse_time(text, NOW)


@pytest.mark.parametrize("text", ["0m", "99999999999999d", "3651d", "-2h"])
def test_durations_must_be_positive_and_bounded(text: str) -> None:
    with pytest.raises(TimeParseError):
        parse_duration(text)
    assert parse_duration("3650d").days == 3650


@pytest.mark.parametrize(
    "args",
    [
        ["record", "--concurrency", "0"],
        ["record", "--concurrency", "-1"],
        ["record", "--timeout", "nan"],
        ["doctor", "--timeout", "0"],
        ["doctor", "--timeout", "inf"],
        ["gpus", "--once", "--interval", "-1"],
        ["explain", "--world-size", "0", "/dev/null"],
    ],
)
def test_bad_numbers_are_usage_errors(args: list[str]) -> None:
    proc = subprocess.run(
        [COCKPIT, *args], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "error: argument" in proc.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["--window", "99999999999999d"],
        ["--at", "0001-01-01T00:00"],
        ["--at", "9999-01-01"],
        # shorter than the signals' 5 min rate window: it would be compared with itself
        ["--window", "1s"],
        ["--window", "4m"],
    ],
)
def test_analyze_refuses_out_of_range_windows_cleanly(args: list[str]) -> None:
    proc = subprocess.run(
        [COCKPIT, "analyze", "--demo", *args], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr


def test_a_truncated_bundle_is_replayed_with_a_warning(tmp_path: Path) -> None:
    from cockpit.wiring import demo_bundle_path

    cut = tmp_path / "cut.jsonl.gz"
    data = demo_bundle_path().read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    for lang, words in (("en", "incomplete evidence bundle"), ("zh", "证据包不完整")):
        proc = subprocess.run(
            [COCKPIT, "analyze", "--replay", str(cut), "--lang", lang],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert words in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("command", ["analyze", "record", "gpus"])
def test_at_before_the_command_is_kept(command: str) -> None:
    from cockpit.cli import attach_negative_values, build_parser

    extra = ["-o", "b.jsonl.gz"] if command == "record" else []
    parse = build_parser(only=command).parse_args
    before = parse(["--at", "2026-11-27T12:55", command, *extra])
    after = parse([command, "--at", "2026-11-27T12:30", *extra])
    neither = parse([command, *extra])
    assert (before.at, after.at, neither.at) == ("2026-11-27T12:55", "2026-11-27T12:30", None)
    relative = attach_negative_values([command, "--at", "-6h", "-n", "llm", *extra])
    assert parse(relative).at == "-6h"


def test_relative_values_are_attached_only_after_their_options() -> None:
    from cockpit.cli import attach_negative_values

    assert attach_negative_values(["analyze", "--window", "-1h", "-n", "-2"]) == [
        "analyze",
        "--window=-1h",
        "-n",
        "-2",
    ]
    assert attach_negative_values(["--at", "-x", "--at"]) == ["--at", "-x", "--at"]


def test_window_of_a_minus_duration_is_a_usage_error_not_a_parse_error() -> None:
    proc = subprocess.run(
        [COCKPIT, "analyze", "--demo", "--window", "-1h"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "expected one argument" not in proc.stderr, proc.stderr


def test_the_tui_without_a_terminal_says_what_to_run(tmp_path: Path) -> None:
    """`cockpit` in a pipe or a cron job: no escape codes, no empty incident left behind,
    and the headless commands named instead."""
    state = tmp_path / "state"
    proc = subprocess.run(
        [COCKPIT, "--demo", "--state-dir", str(state), "--lang", "en"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert "needs a terminal" in proc.stderr and "cockpit analyze" in proc.stderr
    assert "\x1b[" not in proc.stderr
    assert not state.exists() or not list(state.glob("inc-*.json"))


def test_an_unknown_option_of_a_command_shows_that_command_s_usage() -> None:
    proc = subprocess.run(
        [COCKPIT, "analyze", "--demo", "--bogus"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("usage: cockpit analyze")
    assert "cockpit analyze: error: unrecognized arguments: --bogus" in proc.stderr


def test_an_unreadable_time_is_said_once() -> None:
    proc = subprocess.run(
        [COCKPIT, "analyze", "--demo", "--at", "garbage"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.count("garbage") == 1 and "is not a time" in proc.stderr


def test_analyze_says_most_likely_as_d_and_g_do() -> None:
    """``cockpit analyze``'s "Most likely" block is the one steps D and G show: the same
    lines, at most two per part, parts in the same order, open alternatives included."""
    import json

    from cockpit.analysis.conclusion import PARTS, SHOWN

    text = subprocess.run(
        [COCKPIT, "analyze", "--demo", "--lang", "en"], capture_output=True, text=True, timeout=60
    ).stdout.splitlines()
    doc = json.loads(
        subprocess.run(
            [COCKPIT, "analyze", "--demo", "--lang", "en", "--json"],
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
    )
    start = next(i for i, x in enumerate(text) if x.startswith("Most likely"))
    block = text[start + 1 : text.index("", start)]
    parts = [x.split(":", 1)[0].removeprefix("  · ") for x in block if x.startswith("  · ")]
    for part in PARTS:
        assert parts.count(part) <= SHOWN, block
    assert parts == sorted(parts, key=PARTS.index), parts
    cited = doc["conclusion"]["evidence"]
    assert len(parts) == sum(min(len(v["text"]), SHOWN) for v in cited.values()), (block, cited)


def test_most_likely_lines_are_one_rendering() -> None:
    """D/G's view and analyze's text read :meth:`Conclusion.lines`: two lines per part at
    most, in the parts' order, then the open alternatives."""
    from cockpit.analysis.conclusion import Alternative, Conclusion
    from cockpit.models.messages import msg
    from cockpit.ui.likely_view import likely_text

    three = [
        msg("metrics.scope.revision"),
        msg("metrics.scope.everything"),
        msg("metrics.scope.unknown"),
    ]
    c = Conclusion(
        cause="release",
        evidence={"suspect": three[:1], "layer": three},
        alternatives=[Alternative(cause="gpu_lost", evidence=three[:1])],
    )
    lines = c.lines("en")
    assert [x.split(":")[0] for x in lines[1:]] == [
        "  · layer",
        "  · layer",
        "  · suspect",
        "  ? " + lines[-1][4:].split(":")[0],
    ]
    assert likely_text(c, "en") == "\n".join(lines)
