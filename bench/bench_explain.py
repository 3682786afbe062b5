"""``cockpit explain`` speed and memory, and 10k fuzz examples per parser.

1. Generates a ~100 MB multi-rank training log (64 ranks' logs concatenated, ordinary
   step lines and warnings, one rank hitting a CUDA OOM, the others' watchdog timeouts)
   and runs ``cockpit explain FILE --json`` on it in a subprocess, reporting wall time,
   throughput and peak RSS. Baselines measured in the same run: reading the same file
   line by line in Python (time), and ``cockpit explain`` on a one-line file (RSS).
   Bounded memory means the RSS ratio stays near 1 whatever the input size.
2. Runs 10,000 hypothesis examples per parser (arbitrary text and truncated real lines);
   any exception escaping a parser fails the benchmark.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGET_BYTES = 100 * 1024 * 1024
RANKS = 64
FUZZ_EXAMPLES = 10_000


def generate_log(path: Path, target: int = TARGET_BYTES, ranks: int = RANKS) -> int:
    """Write the multi-rank log; returns its size in bytes."""
    rng = random.Random(7)
    per_rank = target // ranks
    failing = 37
    with path.open("w", encoding="utf-8") as fh:
        written = 0
        for rank in range(ranks):
            size = 0
            step = 0
            sec = 0
            while size < per_rank:
                sec += 1
                hh, rem = divmod(sec // 20, 3600)
                mm, ss = divmod(rem, 60)
                ts = f"2026-02-18T{8 + hh % 12:02d}:{mm:02d}:{ss:02d}.{rng.randrange(1000):03d}Z"
                step += 1
                if step % 97 == 0:
                    line = (
                        f"{ts} [rank{rank}]: UserWarning: The dataloader does not have many "
                        f"workers which may be a bottleneck (step {step})\n"
                    )
                else:
                    line = (
                        f"{ts} [rank{rank}]: step {step} loss {rng.random() * 3:.4f} "
                        f"lr {rng.random() * 1e-4:.3e} grad_norm {rng.random() * 10:.3f} "
                        f"tokens/s {rng.randrange(10000, 90000)}\n"
                    )
                fh.write(line)
                size += len(line)
            tail_ts = "2026-02-18T20:10:02.000Z"
            if rank == failing:
                line = (
                    f"2026-02-18T20:00:01.000Z [rank{rank}]: torch.OutOfMemoryError: CUDA out of "
                    "memory. Tried to allocate 2.00 GiB. GPU 5 has a total capacity of 79.15 GiB "
                    "of which 1.02 GiB is free. Including non-PyTorch memory, this process has "
                    "78.12 GiB memory in use. Of the allocated memory 75.00 GiB is allocated by "
                    "PyTorch, and 1.50 GiB is reserved by PyTorch but unallocated.\n"
                )
            else:
                line = (
                    f"{tail_ts} [rank{rank}]:[E218 20:10:02.000000000 ProcessGroupNCCL.cpp:632] "
                    f"[Rank {rank}] Watchdog caught collective operation timeout: "
                    "WorkNCCL(SeqNum=91234, OpType=ALLREDUCE, NumelIn=306176, NumelOut=306176, "
                    "Timeout(ms)=600000) ran for 600027 milliseconds before timing out.\n"
                )
            fh.write(line)
            written += size + len(line)
    return written


def _run_explain(path: Path) -> tuple[float, int, dict[str, Any]]:
    """Wall seconds, peak RSS (KiB) and parsed JSON of ``cockpit explain`` on ``path``."""
    code = (
        "import resource, sys\n"
        "from cockpit.cli import main\n"
        "rc = main(sys.argv[1:])\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
    )
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", code, "explain", str(path), "--json", "--world-size", str(RANKS)],
        capture_output=True,
        check=False,
        timeout=900,
        env={**os.environ, "LANG": "en_US.UTF-8"},
    )
    wall = time.perf_counter() - t0
    rss_kib = int(proc.stderr.decode().strip().splitlines()[-1])
    return wall, rss_kib, json.loads(proc.stdout)


def _baseline_read(path: Path) -> float:
    t0 = time.perf_counter()
    n = 0
    with path.open("rb") as fh:
        for raw in fh:
            n += len(raw.decode("utf-8", errors="replace"))
    return time.perf_counter() - t0


def bench_large_log() -> list[str]:
    """Time and memory of ``cockpit explain`` on ~100 MB of multi-rank log."""
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "multi_rank.log"
        tiny = Path(tmp) / "tiny.log"
        size = generate_log(big)
        tiny.write_text("hello\n", encoding="utf-8")
        _, rss_tiny, _ = _run_explain(tiny)
        base = _baseline_read(big)
        wall, rss_big, data = _run_explain(big)
    nccl = next(f for f in data["findings"] if f["kind"] == "nccl")
    ok = (
        nccl["fields"]["first_failing_rank"] == 37
        and nccl["fields"]["primary"] == "cuda_oom"
        and data["category"] == "cuda_oom"
    )
    mb = size / 1024 / 1024
    return [
        f"explain on {mb:.0f} MB / {RANKS} ranks: {wall:.1f} s wall, {mb / wall:.1f} MB/s; "
        f"baseline line read {base:.1f} s (ratio {wall / base:.1f}x)",
        f"peak RSS {rss_big / 1024:.0f} MiB vs {rss_tiny / 1024:.0f} MiB on a one-line file "
        f"(ratio {rss_big / rss_tiny:.2f}x)",
        f"first failing rank found: {nccl['fields']['first_failing_rank']} "
        f"({nccl['fields']['primary']}) — {'correct' if ok else 'WRONG'}",
    ]


def bench_fuzz() -> list[str]:
    """10k hypothesis examples per parser; any escaping exception fails the run."""
    sys.path.insert(0, str(ROOT))
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from cockpit.analysis.engine_logs import explain_engine_log_text
    from cockpit.analysis.explain import REGISTRY
    from cockpit.analysis.nccl import explain_nccl_text
    from cockpit.analysis.oom import explain_oom_text
    from cockpit.analysis.rollout import explain_rollout_text
    from cockpit.analysis.utilization import explain_util_text
    from tests.test_explain_properties import truncated_real_text

    parsers: dict[str, Callable[[str], Any]] = {
        "oom": explain_oom_text,
        "nccl": explain_nccl_text,
        "engine_logs": explain_engine_log_text,
        "utilization": explain_util_text,
        "rollout": explain_rollout_text,
    }
    for kind in REGISTRY:
        if kind.text is not None:
            fn_text = kind.text
            parsers[kind.name] = (
                (lambda text, f=fn_text: f(text, "en")) if kind.takes_lang else fn_text
            )
    lines = []
    strategy = st.one_of(
        st.text(max_size=1500),
        truncated_real_text(),
        st.binary(max_size=1500).map(lambda b: b.decode("utf-8", errors="replace")),
    )
    for name, fn in parsers.items():
        t0 = time.perf_counter()
        count = _fuzz_one(fn, strategy, given, settings, HealthCheck)
        lines.append(
            f"fuzz {name}: {count} examples, no exception, {time.perf_counter() - t0:.1f} s"
        )
    return lines


def _fuzz_one(fn: Callable[..., Any], strategy: Any, given: Any, settings: Any, hc: Any) -> int:
    """Run ``fn`` on FUZZ_EXAMPLES generated texts; returns the example count."""
    count = 0

    @settings(
        max_examples=FUZZ_EXAMPLES, deadline=None, database=None, suppress_health_check=list(hc)
    )
    @given(strategy)
    def run(text: str) -> None:
        nonlocal count
        count += 1
        fn(text)

    run()
    return count


def main() -> list[str]:
    """Report lines for ``bench/run.py``."""
    return bench_large_log() + bench_fuzz()


if __name__ == "__main__":
    for line in main():
        print(line)
