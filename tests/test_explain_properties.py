"""Property-based tests: no exception escapes any parser, whatever the text.

Arbitrary text, truncated real lines, non-UTF-8 bytes and large inputs go through each
analyzer directly (so a bug shows as a failure, not as an entry in ``errors``) and through
:func:`explain_stream`. The suite keeps the example count modest; ``bench/bench_explain.py``
runs 10k examples per parser.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cockpit.analysis.cuda_errors import explain_cuda_error_text
from cockpit.analysis.engine_logs import explain_engine_log_text
from cockpit.analysis.explain import (
    REGISTRY,
    explain_stream,
    explain_text,
    iter_blocks,
)
from cockpit.analysis.explain_report import to_json, to_text
from cockpit.analysis.metric_artifacts import explain_metric_artifact_text
from cockpit.analysis.nccl import explain_nccl_text
from cockpit.analysis.oom import explain_oom_text
from cockpit.analysis.rollout import explain_rollout_text
from cockpit.analysis.serving import explain_serving_text
from cockpit.analysis.utilization import explain_util_text

EXAMPLES = 200
CASES = Path(__file__).parent / "data" / "cases.jsonl"
ARTIFACTS = [
    json.loads(line)["artifact"] for line in CASES.read_text(encoding="utf-8").splitlines() if line
]
REAL_LINES = sorted({ln for a in ARTIFACTS for ln in a.splitlines() if ln.strip()})

PARSERS: dict[str, Callable[[str], Any]] = {
    "oom": explain_oom_text,
    "nccl": explain_nccl_text,
    "engine_logs": explain_engine_log_text,
    "utilization": explain_util_text,
    "rollout": explain_rollout_text,
    "cuda_error": explain_cuda_error_text,
    "serving": explain_serving_text,
    "metric_artifact": explain_metric_artifact_text,
}
# Parsers plugged in from elsewhere are exercised through the registry too.
for _kind in REGISTRY:
    if _kind.text is not None:
        _fn = _kind.text
        PARSERS[_kind.name] = (lambda text, fn=_fn: fn(text, "zh")) if _kind.takes_lang else _fn


@st.composite
def truncated_real_text(draw: st.DrawFn) -> str:
    """Real artifact lines, cut at random points, shuffled and glued with noise."""
    lines = draw(st.lists(st.sampled_from(REAL_LINES), min_size=1, max_size=12))
    out = []
    for ln in lines:
        cut = draw(st.integers(min_value=0, max_value=len(ln)))
        keep_head = draw(st.booleans())
        out.append(ln[:cut] if keep_head else ln[cut:])
        if draw(st.booleans()):
            out.append(draw(st.text(max_size=40)))
    return "\n".join(out)


def _no_exception(text: str) -> None:
    for fn in PARSERS.values():
        fn(text)
    expl = explain_text(text)
    assert expl.errors == []
    to_text(expl, "zh")
    json.dumps(to_json(expl, "en"))


_SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@_SETTINGS
@given(st.text(max_size=2000))
def test_arbitrary_text(text: str) -> None:
    _no_exception(text)


@_SETTINGS
@given(truncated_real_text())
def test_truncated_real_lines(text: str) -> None:
    _no_exception(text)


@_SETTINGS
@given(st.binary(max_size=4000), st.lists(st.sampled_from(REAL_LINES), max_size=4))
def test_non_utf8_bytes(noise: bytes, lines: list[str]) -> None:
    data = noise + "\n".join(lines).encode("utf-8") + noise[::-1]
    expl = explain_stream(io.BytesIO(data))
    assert expl.errors == []
    text = data.decode("utf-8", errors="replace")
    for fn in PARSERS.values():
        fn(text)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(REAL_LINES), st.integers(min_value=1, max_value=3))
def test_huge_lines_are_cut_and_counted(line: str, factor: int) -> None:
    """A single line far longer than the line limit (no newline) is cut, not buffered."""
    blob = (line * (70_000 * factor // max(1, len(line)) + 1)).encode()
    expl = explain_stream(io.BytesIO(blob + b"\n" + line.encode()))
    assert expl.cut_lines == 1 and expl.lines == 2
    assert expl.errors == []


def test_many_lines_stream() -> None:
    """Tens of thousands of mixed real lines stream through with bounded results."""
    body = "\n".join(REAL_LINES * 200)
    expl = explain_stream(io.BytesIO(body.encode()))
    assert expl.errors == [] and expl.recognised
    for f in expl.findings:
        # bounded: event/sample lists are capped whatever the input size
        for key in ("events", "series", "errors"):
            assert len(f.fields.get(key, [])) <= 128


def test_iter_blocks_handles_crlf_cr_and_bad_bytes() -> None:
    got = [ln for b, _ in iter_blocks(io.BytesIO(b"a\r\nb\rc\n\xff\xfe")) for ln in b]
    assert got == ["a", "b", "c", "\ufffd\ufffd"]


def _reference(data: bytes, max_line: int) -> tuple[list[str], int]:
    """Line by line: LF ends a line (a CR right before it is dropped), cut to max_line
    bytes, decode, then each CR left splits the line; NUL → U+FFFD."""
    parts = data.split(b"\n")
    last_open = parts[-1] != b""  # the input does not end with LF
    if not last_open:
        parts.pop()
    out: list[str] = []
    cut = 0
    for k, p in enumerate(parts):
        ended = k < len(parts) - 1 or not last_open
        if ended and p.endswith(b"\r"):
            p = p[:-1]
        if len(p) > max_line:
            cut += 1
            p = p[:max_line]
        text = p.decode("utf-8", errors="replace").replace("\x00", "\ufffd")
        out.extend(text.split("\r"))
    return out, cut


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    st.lists(st.binary(max_size=300), max_size=40),
    st.integers(min_value=1, max_value=64),
    st.integers(min_value=8, max_value=200),
)
def test_iter_blocks_agrees_with_whole_reading(
    parts: list[bytes], chunk: int, max_line: int
) -> None:
    """Chunked block reading gives the same lines and cuts as reading everything at once."""
    data = b"\n".join(parts)
    blocks = list(iter_blocks(io.BytesIO(data), max_line=max_line, chunk_size=chunk))
    lines = [ln for b, _ in blocks for ln in b]
    want, cut = _reference(data, max_line)
    assert lines == want
    assert sum(c for _, c in blocks) == cut


def test_xid_on_two_gpus_names_both() -> None:
    """The first GPU of a kernel log is not the only one to act on: every GPU it names is
    listed, each with its own verdict; the texts' language is not a field of the log."""
    text = (
        "[123.4] NVRM: Xid (PCI:0000:b3:00): 79, pid=1234, GPU has fallen off the bus.\n"
        "[130.0] NVRM: Xid (PCI:0000:18:00): 94, pid=99, Contained ECC error\n"
    )
    (f,) = explain_text(text).findings
    assert f.fields["gpus_affected"] == ["0000:b3:00", "0000:18:00"]
    assert "0000:18:00: reset when convenient" in f.fields["meaning"]
    assert "lang" not in f.fields
