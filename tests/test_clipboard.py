"""OSC 52 clipboard: exact bytes, tmux/screen wrapping, and a write to a real terminal."""

from __future__ import annotations

import base64
import errno
import os
import pty
import sys

from cockpit.clipboard import SCREEN_CHUNK, copy_to_terminal, detect_wrap, osc52


def test_bare_sequence_bytes() -> None:
    assert osc52("hello") == b"\x1b]52;c;aGVsbG8=\x07"
    assert osc52("事故") == b"\x1b]52;c;" + base64.b64encode("事故".encode()) + b"\x07"
    assert osc52(b"x", selection="p") == b"\x1b]52;p;eA==\x07"


def test_tmux_passthrough_doubles_escapes() -> None:
    assert osc52("hello", "tmux") == b"\x1bPtmux;\x1b\x1b]52;c;aGVsbG8=\x07\x1b\\"


def test_screen_passthrough_is_chunked() -> None:
    assert osc52("hello", "screen") == b"\x1bP\x1b]52;c;aGVsbG8=\x07\x1b\\"
    text = "x" * 1000
    out = osc52(text, "screen")
    inner = osc52(text)
    chunks = out.split(b"\x1b\\")
    assert chunks[-1] == b""
    chunks = chunks[:-1]
    assert all(c.startswith(b"\x1bP") for c in chunks)
    assert all(len(c) - 2 <= SCREEN_CHUNK for c in chunks)
    assert b"".join(c[2:] for c in chunks) == inner
    assert len(chunks) == -(-len(inner) // SCREEN_CHUNK)


def test_detect_wrap() -> None:
    assert detect_wrap({}) == "none"
    assert detect_wrap({"TMUX": "/tmp/tmux-0/default,1,0"}) == "tmux"
    assert detect_wrap({"STY": "1234.pts-0.host"}) == "screen"
    assert detect_wrap({"TMUX": "x", "STY": "y"}) == "tmux"
    assert detect_wrap({"TMUX": ""}) == "none"


def test_no_terminal_is_reported_not_raised(tmp_path: object) -> None:
    result = copy_to_terminal("x", tty="/nonexistent/tty", env={})
    assert not result.ok
    assert "/nonexistent/tty" in result.reason


def _run_on_pty(code: str, env: dict[str, str]) -> bytes:
    pid, master = pty.fork()
    if pid == 0:  # child: its controlling terminal is the pty
        try:
            os.execve(sys.executable, [sys.executable, "-c", code], env)
        finally:
            os._exit(127)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError as exc:
            if exc.errno != errno.EIO:  # EIO: the child closed the terminal
                raise
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, (status, out)
    return out


def test_copy_writes_the_sequence_to_the_controlling_terminal() -> None:
    code = (
        "from cockpit.clipboard import copy_to_terminal;"
        "r = copy_to_terminal('事故 P99 620 ms');"
        "assert r.ok and r.wrap == 'tmux', r"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "STY")}
    env["TMUX"] = "/tmp/tmux-test/default,1,0"
    out = _run_on_pty(code, env)
    assert out == osc52("事故 P99 620 ms", "tmux")
