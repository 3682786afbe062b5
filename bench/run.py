"""``make bench``: runs every ``bench/bench_*.py`` (each has ``main() -> list[str]`` returning
report lines) and prints the reports. Each benchmark measures its baseline in the same run
and reports ratios, never absolute pass/fail times."""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path


def main() -> int:
    here = Path(__file__).parent
    only = set(sys.argv[1:])
    failed = 0
    for path in sorted(here.glob("bench_*.py")):
        if only and path.stem not in only:
            continue
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec and spec.loader
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        print(f"== {path.stem}", flush=True)
        t0 = time.perf_counter()
        try:
            for line in mod.main():
                print(f"   {line}", flush=True)
        except Exception as exc:
            failed += 1
            print(f"   FAILED: {type(exc).__name__}: {exc}", flush=True)
        print(f"   ({time.perf_counter() - t0:.1f} s)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
