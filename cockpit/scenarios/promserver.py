"""Run a real Prometheus on a scenario's history (tests, benchmarks, the demo build).

Steps (facts measured on these machines: ``shared/design/test-backends.md``):

1. generate the scenario's OpenMetrics, split by metric family into one file per CPU;
2. ``promtool tsdb create-blocks-from openmetrics --max-block-duration=720h`` on each file
   in parallel (one block per file instead of one per 2 h: promtool re-reads its whole
   input for every block it cuts, so the default costs ~14 passes over 27 h of history);
3. keep the blocks in a cache keyed by the generator's source and the promtool version
   (a second run skips 1 and 2);
4. copy the blocks into a fresh data directory and start ``prometheus`` on 127.0.0.1 with
   a free port, its own config (``scrape_configs: []``), retention 100 y; poll ``/-/ready``.

Overlapping blocks (same time range, different series) are merged at query time by
Prometheus ≥ 2.39 without any flag.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from cockpit.scenarios.base import Scenario

READY_TIMEOUT_S = 60.0
INSTALL_HINT = (
    "install Debian's prometheus package (it ships promtool): "
    "apt-get install -y --no-install-recommends prometheus  (or run `make test`, which does it)"
)


class PromServerError(RuntimeError):
    """promtool or prometheus is missing, failed, or never became ready."""


def tool(name: str) -> str:
    """Absolute path of ``promtool``/``prometheus``.

    Raises:
        PromServerError: when it is not installed (with the install command).
    """
    path = shutil.which(name)
    if path is None:
        raise PromServerError(f"{name} not found on PATH; {INSTALL_HINT}")
    return path


def _promtool_version() -> str:
    out = subprocess.run(
        [tool("promtool"), "--version"], capture_output=True, text=True, timeout=30
    )
    return (out.stdout or out.stderr).splitlines()[0] if (out.stdout or out.stderr) else "?"


ENGINE_FILES = (
    "base.py",
    "histogram.py",
    "metricset.py",
    "signals.py",
    "timeaxis.py",
    "topology.py",
    "promserver.py",
)
"""Generator modules every scenario depends on (with ``stacks/*.py`` and its own module)."""


def generator_fingerprint(scenario: Scenario) -> str:
    """Cache key of a scenario's backfilled blocks: a hash of its name, the engine and
    stack emitters' source, the module that builds it (and the scenario modules it names
    in ``GENERATOR_DEPENDS``), and promtool's version. Editing
    another scenario's module does not invalidate this one."""
    import inspect

    h = hashlib.sha256(scenario.name.encode())
    root = Path(__file__).parent
    files = [root / f for f in ENGINE_FILES] + sorted((root / "stacks").glob("*.py"))
    try:
        own = inspect.getsourcefile(scenario.build)
    except TypeError:  # not a plain function: hash every scenario module
        own = None
    if own is not None:
        files.append(Path(own))
        # a scenario module built from another's helpers names it (``GENERATOR_DEPENDS``)
        module = inspect.getmodule(scenario.build)
        files.extend(root / f for f in getattr(module, "GENERATOR_DEPENDS", ()))
    else:
        files.extend(sorted(p for p in root.glob("*.py") if p.name not in ENGINE_FILES))
    for path in files:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    h.update(_promtool_version().encode())
    return h.hexdigest()[:16]


def cache_root() -> Path:
    """Where backfilled blocks are cached (``COCKPIT_SCENARIO_CACHE`` overrides)."""
    env = os.environ.get("COCKPIT_SCENARIO_CACHE")
    if env:
        return Path(env)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("cockpit")) / "scenarios"


@dataclass
class BackfillStats:
    """What a backfill cost.

    Attributes:
        series: Series written.
        samples: Samples written.
        generate_s: Seconds to build the series and write OpenMetrics.
        promtool_s: Seconds promtool took (wall clock, processes in parallel).
        cached: True when the blocks came from the cache (the times are then 0).
    """

    series: int = 0
    samples: int = 0
    generate_s: float = 0.0
    promtool_s: float = 0.0
    cached: bool = False


def backfill(scenario: Scenario, blocks_dir: Path, *, parts: int | None = None) -> BackfillStats:
    """Write the scenario's TSDB blocks into ``blocks_dir`` (created).

    Raises:
        PromServerError: promtool missing or failing (its output included).
    """
    promtool = tool("promtool")
    parts = parts or max(1, min(4, os.cpu_count() or 1))
    stats = BackfillStats()
    t0 = time.perf_counter()
    ms = scenario.build()
    stats.series, stats.samples = ms.series_count, ms.sample_count
    blocks_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="cockpit-om-") as tmp:
        files = []
        for i, group in enumerate(ms.partition(parts)):
            path = Path(tmp) / f"part{i}.om"
            with path.open("w", encoding="utf-8") as out:
                ms.write_openmetrics(out, group)
            files.append(path)
        del ms
        stats.generate_s = time.perf_counter() - t0
        t1 = time.perf_counter()
        procs = [
            subprocess.Popen(
                [
                    promtool,
                    "tsdb",
                    "create-blocks-from",
                    "openmetrics",
                    "--max-block-duration=720h",
                    str(f),
                    str(blocks_dir),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            for f in files
        ]
        errors = []
        try:
            for p in procs:
                _, err = p.communicate(timeout=600)
                if p.returncode != 0:
                    errors.append(err.strip()[-2000:])
        except BaseException:  # interrupted (Ctrl-C, a stop signal) or too slow
            _kill_all(procs)
            raise
        stats.promtool_s = time.perf_counter() - t1
    if errors:
        raise PromServerError("promtool create-blocks-from failed: " + " | ".join(errors))
    return stats


def _kill_all(procs: list[subprocess.Popen[str]] | list[subprocess.Popen[bytes]]) -> None:
    """Kill and reap every process still running."""
    for p in procs:
        if p.poll() is None:
            p.kill()
    for p in procs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            p.wait(timeout=10)


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """Terminate a server process: SIGTERM, then SIGKILL when it has not ended after 10 s."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def cached_blocks(scenario: Scenario, *, single: bool = False) -> tuple[Path, BackfillStats]:
    """The scenario's blocks, backfilled once per generator version and cached.

    ``single`` asks for one block holding every series (one promtool pass over the whole
    history, slower to build) instead of one overlapping block per part: what a
    Prometheus that scraped the history itself holds, and what it turns the overlapping
    blocks into by compacting them about a minute after it starts.

    Returns:
        The directory holding the block directories, and the backfill cost (``cached``
        True when nothing was generated).
    """
    root = cache_root()
    name = f"{scenario.name}.single" if single else scenario.name
    final = root / f"{name}-{generator_fingerprint(scenario)}"
    if final.is_dir() and any(final.iterdir()):
        return final, BackfillStats(cached=True)
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=root))
    try:
        stats = backfill(scenario, tmp, parts=1 if single else None)
        with contextlib.suppress(OSError):
            tmp.rename(final)  # another process may have won the race: use its copy
        if not final.is_dir():
            raise PromServerError(f"could not store blocks in {final}")
        _prune(root, name, keep=final)
        return final, stats
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


CACHE_KEEP = 3
"""Backfilled versions kept per scenario (older generator versions are removed)."""


def _prune(root: Path, name: str, *, keep: Path) -> None:
    """Remove all but the newest :data:`CACHE_KEEP` cached versions of scenario ``name``."""
    versions = sorted(
        (p for p in root.glob(f"{name}-*") if p.is_dir() and p.name.count("-") >= 1),
        key=lambda p: p.stat().st_mtime,
        reverse=True,
    )
    versions = [p for p in versions if p.name[len(name) + 1 :].isalnum()]
    for old in versions[CACHE_KEEP:]:
        if old != keep:
            shutil.rmtree(old, ignore_errors=True)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PromServer:
    """A running ``prometheus`` process serving a scenario.

    Attributes:
        url: ``http://127.0.0.1:PORT``.
        scenario: The scenario it serves.
        data_dir: Its TSDB directory.
        ready_s: Seconds from start to ``/-/ready``.
        backfill: What producing the blocks cost.
        query_log: Prometheus's own query log (``global: query_log_file``): one JSON
            line per query it evaluated (``params.query``, ``start``, ``end``, ``step``).
    """

    url: str
    scenario: Scenario
    data_dir: Path
    process: subprocess.Popen[bytes]
    ready_s: float
    backfill: BackfillStats = field(default_factory=BackfillStats)
    _log: Path | None = None
    query_log: Path | None = None

    def stop(self) -> None:
        """Terminate the server (SIGTERM, then SIGKILL after 10 s)."""
        stop_process(self.process)

    def __enter__(self) -> PromServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


CONFIG = "global:\n  scrape_interval: 15s\n  evaluation_interval: 15s\nscrape_configs: []\n"


def config_text(query_log: Path | None, rule_file: Path | None = None) -> str:
    """The server's configuration: no scrape, every query logged to ``query_log`` (no
    query log when None), the rules of ``rule_file`` loaded when given."""
    head, rest = CONFIG.split("\n", 1)
    rules = f"rule_files: [{json.dumps(str(rule_file))}]\n" if rule_file is not None else ""
    logged = f"  query_log_file: {json.dumps(str(query_log))}\n" if query_log is not None else ""
    return f"{head}\n{logged}{rest}{rules}"


def start(
    scenario: Scenario,
    workdir: Path,
    *,
    blocks: Path | None = None,
    rules: str = "",
    single_block: bool = False,
    query_log: bool = True,
) -> PromServer:
    """Start Prometheus on a copy of the scenario's blocks under ``workdir``.

    ``single_block`` serves the history from one block (:func:`cached_blocks`): no
    overlapping blocks merged at query time and no compaction of them starting a minute
    later, as on a Prometheus in production (benchmarks). ``query_log`` False leaves the
    query log off, Prometheus's default (it writes one JSON line per query).

    ``rules`` is a rule file's YAML (``groups:`` of alerting and recording rules) to load:
    ``/api/v1/rules`` then lists them. They are evaluated at wall-clock time, where a
    scenario's history has no samples, so they write no ``ALERTS`` of their own.

    Raises:
        PromServerError: prometheus missing, exited early, or not ready within 60 s.
    """
    binary = tool("prometheus")
    stats = BackfillStats(cached=True)
    if blocks is None:
        blocks, stats = cached_blocks(scenario, single=single_block)
    workdir.mkdir(parents=True, exist_ok=True)
    data = workdir / "data"
    if data.exists():
        shutil.rmtree(data)
    shutil.copytree(blocks, data)
    config = workdir / "prometheus.yml"
    log_file = workdir / "queries.log" if query_log else None
    rule_file = None
    if rules:
        rule_file = workdir / "rules.yml"
        rule_file.write_text(rules, encoding="utf-8")
    config.write_text(config_text(log_file, rule_file), encoding="utf-8")
    log = workdir / "prometheus.log"
    last_error = ""
    for _attempt in range(3):
        port = free_port()
        t0 = time.perf_counter()
        with log.open("wb") as logf:
            proc = subprocess.Popen(
                [
                    binary,
                    f"--config.file={config}",
                    f"--storage.tsdb.path={data}",
                    "--storage.tsdb.retention.time=100y",
                    f"--web.listen-address=127.0.0.1:{port}",
                    "--log.level=warn",
                ],
                stdout=logf,
                stderr=subprocess.STDOUT,
            )
        url = f"http://127.0.0.1:{port}"
        try:
            while time.perf_counter() - t0 < READY_TIMEOUT_S:
                if proc.poll() is not None:
                    break
                try:
                    with urllib.request.urlopen(f"{url}/-/ready", timeout=2) as resp:
                        if resp.status == 200:
                            return PromServer(
                                url,
                                scenario,
                                data,
                                proc,
                                time.perf_counter() - t0,
                                stats,
                                log,
                                log_file,
                            )
                except (urllib.error.URLError, ConnectionError, TimeoutError):
                    pass
                time.sleep(0.05)
        except BaseException:  # interrupted while waiting: never leave it running
            _kill_all([proc])
            raise
        _kill_all([proc])
        last_error = log.read_text(encoding="utf-8", errors="replace")[-2000:]
    raise PromServerError(f"prometheus did not become ready: {last_error}")
