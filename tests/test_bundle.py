"""Evidence bundles: record a real Prometheus, replay offline, derive instants/ranges from
recorded ranges, and fail clearly on corrupt or truncated files."""

from __future__ import annotations

import gzip
import json
import math
import os
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pydantic_core import to_jsonable_python

from cockpit.config import PrometheusSettings
from cockpit.models import Availability, Reading, from_epoch
from cockpit.scenarios.promserver import PromServer
from cockpit.sources.base import ErrorKind, MetricsSource, SourceError
from cockpit.sources.bundle import (
    BundleError,
    BundleMeta,
    BundleWriter,
    Recorder,
    open_replay,
)
from cockpit.sources.prometheus import PrometheusSource

WAITING = 'vllm:num_requests_waiting{namespace="llm-serving"}'
P99 = (
    "histogram_quantile(0.99, sum by (le) (rate("
    'nginx_ingress_controller_request_duration_seconds_bucket{namespace="llm-serving"}[5m])))'
)


def meta(now: datetime) -> BundleMeta:
    return BundleMeta(
        recorded_at=now,
        window_start=now - timedelta(hours=2),
        window_end=now,
        scope={"namespace": "llm-serving"},
        cockpit_version="test",
        note="round trip",
    )


@pytest.fixture
async def recorded(
    worked_example_prom: PromServer, tmp_path: Path
) -> tuple[Path, dict[str, object]]:
    """A bundle recorded from the real server, plus what the live calls returned."""
    sc = worked_example_prom.scenario
    now = sc.now_dt
    path = tmp_path / "evidence.jsonl.gz"
    live = PrometheusSource(PrometheusSettings(url=worked_example_prom.url))
    seen: dict[str, object] = {}
    with BundleWriter(path, meta(now)) as writer:
        rec = Recorder(live, "metrics", writer)
        seen["instant"] = await rec.instant(WAITING, now)
        seen["range"] = await rec.range(WAITING, now - timedelta(hours=1), now, 60)
        seen["p99_range"] = await rec.range(P99, now - timedelta(hours=1), now, 15)
        seen["names"] = await rec.metric_names(at=now)
        seen["nan"] = await rec.instant("0/0", now)
        with pytest.raises(SourceError) as info:
            await rec.instant("sum(", now)
        seen["error"] = info.value
        # live answers to compare derived replays with
        seen["live_instant_30m"] = await live.instant(WAITING, now - timedelta(minutes=30))
        seen["live_range_5m"] = await live.range(
            WAITING, now - timedelta(minutes=40), now - timedelta(minutes=10), 300
        )
        assert writer.stats.ok == {
            "metrics.instant": 2,
            "metrics.range": 2,
            "metrics.metric_names": 1,
        }
        assert writer.stats.failed == {"metrics.instant": 1}
    await live.close()
    return path, seen


async def test_round_trip(
    recorded: tuple[Path, dict[str, object]], worked_example_prom: PromServer
) -> None:
    path, seen = recorded
    now = worked_example_prom.scenario.now_dt
    replay = open_replay(path)
    assert replay.meta.complete and replay.meta.problems == []
    assert replay.meta.recorded_at == now
    assert replay.meta.note == "round trip"
    assert replay.sources() == ["metrics"]
    src = replay.source("metrics")
    assert isinstance(src, MetricsSource)
    assert src.name == "prometheus"
    assert await src.instant(WAITING, now) == seen["instant"]
    assert await src.instant(query=WAITING, at=now) == seen["instant"]
    assert await src.range(WAITING, now - timedelta(hours=1), now, 60) == seen["range"]
    assert await src.metric_names(now) == seen["names"]
    (nan,) = await src.instant("0/0", now)
    assert math.isnan(nan.v)
    with pytest.raises(SourceError) as info:
        await src.instant("sum(", now)
    original = seen["error"]
    assert isinstance(original, SourceError)
    assert info.value.failure == original.failure
    assert info.value.kind is ErrorKind.BAD_QUERY
    await src.close()


async def test_derived_from_recorded_range(
    recorded: tuple[Path, dict[str, object]], worked_example_prom: PromServer
) -> None:
    path, seen = recorded
    now = worked_example_prom.scenario.now_dt
    src = open_replay(path).source("metrics")
    # an instant on the recorded grid equals what Prometheus answers live
    assert await src.instant(WAITING, now - timedelta(minutes=30)) == seen["live_instant_30m"]
    # off the grid: the newest sample at or before, stamped with the evaluation time
    off = now - timedelta(minutes=30, seconds=-20)
    got = await src.instant(WAITING, off)
    assert [(v.labels, v.v) for v in got] == [(v.labels, v.v) for v in seen["live_instant_30m"]]  # type: ignore[attr-defined]
    assert all(v.t == off.timestamp() for v in got)
    # a coarser range inside the recorded one
    assert (
        await src.range(WAITING, now - timedelta(minutes=40), now - timedelta(minutes=10), 300)
        == seen["live_range_5m"]
    )
    # an instant of the P99 expression from its recorded range
    (p99,) = await src.instant(P99, now)
    assert p99.v == pytest.approx(0.62, rel=0.02)


async def test_not_in_bundle(
    recorded: tuple[Path, dict[str, object]], worked_example_prom: PromServer
) -> None:
    path, _ = recorded
    now = worked_example_prom.scenario.now_dt
    src = open_replay(path).source("metrics")
    cases = [
        src.instant("up", now),
        src.instant(WAITING, now - timedelta(hours=3)),  # before the recorded range
        src.range(WAITING, now - timedelta(hours=3), now, 60),
    ]
    for call in cases:
        with pytest.raises(SourceError) as info:
            await call
        assert info.value.kind is ErrorKind.NOT_FOUND
        assert info.value.failure.message.startswith("not in this bundle: ")
    with pytest.raises(SourceError) as info:
        await src.list_pods("llm-serving")
    assert "list_pods" in info.value.failure.message
    kube = open_replay(path).source("kube")
    with pytest.raises(SourceError):
        await kube.list_pods()


async def test_metric_names_nearest_recording(
    recorded: tuple[Path, dict[str, object]], worked_example_prom: PromServer
) -> None:
    path, seen = recorded
    src = open_replay(path).source("metrics")
    assert (
        await src.metric_names(worked_example_prom.scenario.now_dt - timedelta(minutes=3))
        == seen["names"]
    )


def test_bundle_is_private_and_small(recorded: tuple[Path, dict[str, object]]) -> None:
    path, _ = recorded
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    raw = gzip.decompress(path.read_bytes())
    assert path.stat().st_size < len(raw) / 3
    lines = raw.decode().splitlines()
    assert json.loads(lines[0])["kind"] == "header"
    assert json.loads(lines[-1]) == {"kind": "end", "calls": 6}


class ClusterSource:
    """A source with another shape of API (keyword defaults, dict and model results)."""

    name = "kubernetes"

    def __init__(self) -> None:
        self.calls = 0

    async def readings(
        self, namespace: str, *, limit: int = 2, since: datetime | None = None
    ) -> dict[str, Reading]:
        self.calls += 1
        return {f"{namespace}-{i}": Reading.known(float(i), "pods", at=since) for i in range(limit)}

    async def one(self) -> Reading:
        return Reading.unknown("no data from the API")

    async def names(self) -> list[str]:
        return ["a", "b"]

    async def empty(self) -> list[Reading]:
        return []

    async def broken(self) -> str:
        raise SourceError.of(
            "kubernetes",
            ErrorKind.ACCESS_DENIED,
            "pods is forbidden",
            "kubectl auth can-i list pods",
            verb="list",
            resource="pods",
        )

    def sync_helper(self) -> int:
        return 42


async def test_generic_recorder_any_source(tmp_path: Path) -> None:
    path = tmp_path / "kube.jsonl.gz"
    since = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
    inner = ClusterSource()
    with BundleWriter(path, meta(since)) as writer:
        rec = Recorder(inner, "kube", writer)
        live = await rec.readings("llm", since=since)
        await rec.readings("llm", limit=1)
        await rec.one()
        await rec.names()
        await rec.empty()
        with pytest.raises(SourceError):
            await rec.broken()
        assert rec.sync_helper() == 42
        assert rec.name == "kubernetes"
    src = open_replay(path).source("kube")
    assert src.name == "kubernetes"
    # positional vs keyword vs default arguments bind to the same call
    assert await src.readings("llm", since=since) == live
    assert await src.readings(namespace="llm", limit=2, since=since) == live
    assert list((await src.readings("llm", limit=1)).keys()) == ["llm-0"]
    one = await src.one()
    assert isinstance(one, Reading) and one.status is Availability.UNKNOWN
    assert await src.names() == ["a", "b"]
    assert await src.empty() == []
    with pytest.raises(SourceError) as info:
        await src.broken()
    assert info.value.kind is ErrorKind.ACCESS_DENIED
    assert info.value.failure.detail == {"verb": "list", "resource": "pods"}
    with pytest.raises(SourceError) as nf:
        await src.readings("other")
    assert nf.value.kind is ErrorKind.NOT_FOUND


def _write_sample(path: Path, calls: int = 5, close: bool = True) -> BundleWriter:
    writer = BundleWriter(path, meta(datetime(2026, 11, 27, 12, 55, tzinfo=UTC)))
    writer.add_source("metrics", object())
    for i in range(calls):
        writer.write_call("metrics", "names", {"i": i}, result=[f"m{i}"] * 50)
    if close:
        writer.close()
    return writer


def test_crash_keeps_recorded_lines(tmp_path: Path) -> None:
    path = tmp_path / "crashed.jsonl.gz"
    writer = _write_sample(path, close=False)  # as if the process died here
    replay = open_replay(path)
    assert not replay.meta.complete
    assert replay.meta.problems and "ends early" in replay.meta.problems[0]
    assert replay.call_count == 5
    writer.close()
    assert open_replay(path).meta.complete


def test_truncated_file_keeps_complete_lines(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl.gz"
    _write_sample(path, calls=200)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    replay = open_replay(path)
    assert not replay.meta.complete
    assert 0 < replay.call_count < 200
    assert any("ends early" in p for p in replay.meta.problems)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty"),
        (b'{"kind": "header"}\n', "not gzip"),
        (b"\x1f\x8b\x08\x00garbage-garbage-garbage", "corrupt"),
        (gzip.compress(b"not json at all\n"), "header line is not JSON"),
        (gzip.compress(b'{"kind": "call"}\n'), "not a bundle header"),
        (
            gzip.compress(
                b'{"kind": "header", "format": 99, "recorded_at": "2026-11-27T12:55:00Z"}\n'
            ),
            "newer",
        ),
        (gzip.compress(b'{"kind": "header", "format": 1}\n'), "invalid header"),
        (
            gzip.compress(
                b'{"kind": "header", "format": "one", "recorded_at": "2026-11-27T12:55:00Z"}\n'
            ),
            "invalid format",
        ),
    ],
)
def test_corrupt_bundle_clear_error(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.jsonl.gz"
    path.write_bytes(content)
    with pytest.raises(BundleError, match=message):
        open_replay(path)


def test_missing_file_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match="cannot read bundle"):
        open_replay(tmp_path / "nope.jsonl.gz")


async def test_foreign_model_type_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "foreign.jsonl.gz"
    head = {"kind": "header", "format": 1, "recorded_at": "2026-11-27T12:55:00+00:00"}
    key = json.dumps(["metrics", "names", {}], sort_keys=True, separators=(",", ":"))
    call = {
        "k": key,
        "source": "metrics",
        "method": "names",
        "args": {},
        "ok": True,
        "type": "os:system",
        "shape": "one",
        "result": "x",
    }
    path.write_bytes(
        gzip.compress(
            (json.dumps(head) + "\n" + json.dumps(call, separators=(",", ":")) + "\n").encode()
        )
    )
    src = open_replay(path).source("metrics")
    with pytest.raises(SourceError, match="refusing") as info:
        await src.names()
    assert info.value.kind is ErrorKind.BAD_DATA
    assert "damaged evidence bundle" in info.value.failure.message


def test_writer_mode_even_with_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        path = tmp_path / "b.jsonl.gz"
        _write_sample(path, calls=1)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_replay_builds_sources(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl.gz"
    _write_sample(path, calls=1)
    sources = open_replay(path).build_sources()
    assert sources.metrics is not None
    assert sources.kube is None and "not recorded" in sources.missing["kube"]
    assert from_epoch(0).year == 1970


class Odd:
    name = "odd"

    async def thing(self) -> object:
        return object()

    async def value(self) -> int:
        return 7


async def test_unrecordable_result_and_closed_writer_never_break_the_live_call(
    tmp_path: Path,
) -> None:
    path = tmp_path / "odd.jsonl.gz"
    writer = BundleWriter(path, meta(datetime(2026, 11, 27, 12, 55, tzinfo=UTC)))
    rec = Recorder(Odd(), "gpu", writer)
    assert isinstance(await rec.thing(), object)
    assert "gpu.thing" in writer.stats.skipped
    writer.close()
    assert await rec.value() == 7  # a late call after the recording ended
    assert "gpu.value" in writer.stats.lost
    src = open_replay(path).source("gpu")
    with pytest.raises(SourceError) as info:
        await src.value()
    assert info.value.kind is ErrorKind.NOT_FOUND


async def test_damaged_call_line_fails_in_place(tmp_path: Path) -> None:
    path = tmp_path / "damaged.jsonl.gz"
    head = {"kind": "header", "format": 1, "recorded_at": "2026-11-27T12:55:00+00:00"}
    good_key = json.dumps(
        ["metrics", "metric_names", {"at": {"$dt": "2026-11-27T12:55:00+00:00"}}],
        sort_keys=True,
        separators=(",", ":"),
    )
    bad_key = json.dumps(
        ["metrics", "instant", {"at": {"$dt": "2026-11-27T12:55:00+00:00"}, "query": "up"}],
        sort_keys=True,
        separators=(",", ":"),
    )
    good = json.dumps(
        {
            "k": good_key,
            "source": "metrics",
            "method": "metric_names",
            "ok": True,
            "type": "json",
            "shape": "list",
            "result": ["up"],
        },
        separators=(",", ":"),
    )
    bad = '{"k":' + json.dumps(bad_key) + ',"source":"metrics",BROKEN'
    path.write_bytes(
        gzip.compress(
            "\n".join([json.dumps(head), bad, good, '{"kind":"end","calls":2}', ""]).encode()
        )
    )
    src = open_replay(path).source("metrics")
    at = datetime(2026, 11, 27, 12, 55, tzinfo=UTC)
    assert await src.metric_names(at) == ["up"]
    with pytest.raises(SourceError) as info:
        await src.instant("up", at)
    assert info.value.kind is ErrorKind.BAD_DATA
    assert "line 2" in info.value.failure.message


# -- damaged and reformatted lines (the shipped demo bundle is a real recording) ---------

DEMO = Path(__file__).resolve().parent.parent / "cockpit" / "scenarios" / "demo.jsonl.gz"


def _demo_lines() -> list[str]:
    return gzip.decompress(DEMO.read_bytes()).decode().split("\n")


def _write_lines(path: Path, lines: list[str]) -> Path:
    path.write_bytes(gzip.compress("\n".join(lines).encode()))
    return path


async def _ask(replay: object, line: str) -> str:
    """Replay the call recorded on ``line`` (an intact copy of it); its answer as text."""
    rec = json.loads(line)
    src = replay.source(rec["source"])  # type: ignore[attr-defined]
    answer = await getattr(src, rec["method"])(**rec["args"])
    # keys sorted: a bundle rewritten with sort_keys holds the same mappings, in key order
    return json.dumps(to_jsonable_python(answer), sort_keys=True)


def _call_lines(lines: list[str]) -> list[int]:
    return [i for i, ln in enumerate(lines) if ln.startswith('{"k":')]


def _damage(line: str, where: str) -> str:
    if where == "prefix":  # a byte inserted before the line
        return "\x00" + line
    if where == "first_char":  # the opening brace overwritten
        return "#" + line[1:]
    if where == "key":  # inside the call key (the fields after it survive)
        return line[:12] + '"' + line[13:]
    if where == "result":  # in the middle of the result
        mid = len(line) // 2
        return line[:mid] + '"}]{' + line[mid:]
    raise AssertionError(where)


@pytest.mark.parametrize("where", ["prefix", "first_char", "key", "result"])
async def test_damaged_line_fails_only_its_call(tmp_path: Path, where: str) -> None:
    lines = _demo_lines()
    calls = _call_lines(lines)
    idx = calls[len(calls) // 2]
    neighbours = [calls[len(calls) // 2 - 1], calls[len(calls) // 2 + 1], calls[0], calls[-1]]
    intact = open_replay(DEMO)
    damaged_lines = list(lines)
    damaged_lines[idx] = _damage(lines[idx], where)
    with pytest.raises(ValueError):
        json.loads(damaged_lines[idx])  # the damage really breaks the line
    replay = open_replay(_write_lines(tmp_path / f"{where}.jsonl.gz", damaged_lines))
    assert replay.meta.complete
    assert replay.call_count == intact.call_count
    lineno = idx + 1
    if where == "result":  # found on first use: the key came first and survived
        assert replay.meta.problems == []
    else:
        assert replay.meta.problems == [
            f"1 damaged call line (line {lineno}): replaying that call fails"
        ]
    with pytest.raises(SourceError) as info:
        await _ask(replay, lines[idx])
    assert info.value.kind is ErrorKind.BAD_DATA
    assert f"damaged evidence bundle: line {lineno}: not JSON" in info.value.failure.message
    for other in neighbours:
        assert await _ask(replay, lines[other]) == await _ask(intact, lines[other])


async def test_unreadable_line_is_skipped_with_a_warning(tmp_path: Path) -> None:
    lines = _demo_lines()
    calls = _call_lines(lines)
    gone, kept = calls[3], calls[4]
    damaged_lines = list(lines)
    damaged_lines[gone] = "\x00\x00 garbage \x00\x00"
    damaged_lines[calls[5]] = '{"k": 12, "source": 3}'  # JSON, but no call in it
    replay = open_replay(_write_lines(tmp_path / "unreadable.jsonl.gz", damaged_lines))
    intact = open_replay(DEMO)
    assert replay.call_count == intact.call_count - 2
    assert replay.meta.complete
    assert replay.meta.problems == [
        f"2 unreadable lines skipped (lines {gone + 1}, {calls[5] + 1}): a call recorded "
        "there is missing from the replay"
    ]
    assert await _ask(replay, lines[kept]) == await _ask(intact, lines[kept])
    # a call the replay cannot find says that it may have been on a skipped line
    with pytest.raises(SourceError) as info:
        await replay.source("metrics").instant("never_recorded", datetime(2000, 1, 1, tzinfo=UTC))
    assert info.value.kind is ErrorKind.NOT_FOUND
    assert f"2 unreadable lines skipped, lines {gone + 1}, {calls[5] + 1}: it may have" in (
        info.value.failure.message
    )


@pytest.mark.parametrize("sort_keys", [False, True])
async def test_bundle_reformatted_with_ordinary_json_spacing(
    tmp_path: Path, sort_keys: bool
) -> None:
    lines = _demo_lines()
    spaced = [json.dumps(json.loads(ln), sort_keys=sort_keys) if ln else ln for ln in lines]
    assert spaced[_call_lines(lines)[0]].startswith('{"args": ' if sort_keys else '{"k": "')
    replay = open_replay(_write_lines(tmp_path / "spaced.jsonl.gz", spaced))
    intact = open_replay(DEMO)
    assert replay.meta.complete and replay.meta.problems == []
    assert replay.call_count == intact.call_count
    for idx in _call_lines(lines):
        assert await _ask(replay, lines[idx]) == await _ask(intact, lines[idx])


async def test_raw_samples_are_recorded_and_a_shorter_read_is_cut_from_them(
    worked_example_prom: PromServer, tmp_path: Path
) -> None:
    """A raw read (``samples``) replays as recorded; one of the same selector over a
    shorter span ending no later is cut from it (both ends included) and equals what the
    server answers live; one reaching before the recording is not in the bundle."""
    now = worked_example_prom.scenario.now_dt
    path = tmp_path / "raw.jsonl.gz"
    live = PrometheusSource(PrometheusSettings(url=worked_example_prom.url))
    try:
        with BundleWriter(path, meta(now)) as writer:
            rec = Recorder(live, "metrics", writer)
            whole = await rec.samples(f"{WAITING}[3600s]", now)
            assert writer.stats.ok == {"metrics.samples": 1}
        earlier = now - timedelta(minutes=20)
        want = await live.samples(f"{WAITING}[900s]", earlier)
    finally:
        await live.close()
    src = open_replay(path).source("metrics")
    assert whole and await src.samples(f"{WAITING}[3600s]", now) == whole
    got = await src.samples(f"{WAITING}[900s]", earlier)
    assert got == want and got != whole
    for call in (
        src.samples(f"{WAITING}[7200s]", now),
        src.samples("up[900s]", earlier),
        src.samples(f"{WAITING}[900s]", now + timedelta(minutes=1)),
    ):
        with pytest.raises(SourceError) as info:
            await call
        assert info.value.kind is ErrorKind.NOT_FOUND
