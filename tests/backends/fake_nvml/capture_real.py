"""Take a real NVML snapshot through cockpit's source, anonymise it, save it as a test
fixture, and check the fake library's defaults against it.

Run on a machine with an NVIDIA GPU and driver (from the repository root)::

    .venv-test/bin/python tests/backends/fake_nvml/capture_real.py tests/fixtures/nvml/real.json

UUIDs become ``GPU-00000000-0000-0000-0000-<index>``, bus ids ``00000000:<index+1>:00.0``,
process PIDs and pod data are dropped. The comparison prints, per field, the real and the
fake default (availability, unit, value) and exits 1 when the fake differs in
availability or unit, or a default is off by more than a factor of two.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

SNAPSHOT_CODE = (
    "import asyncio, sys\n"
    "from cockpit.sources.nvml import NvmlSource\n"
    "async def main():\n"
    "    s = NvmlSource(watch_xid=False, node='anon')\n"
    "    snap = await s.snapshot()\n"
    "    await s.close()\n"
    "    sys.stdout.write(snap.model_dump_json())\n"
    "asyncio.run(main())\n"
)


def anonymise(snap: dict[str, Any]) -> dict[str, Any]:
    """Replace identities; drop processes (PIDs, pods)."""
    for g in snap["gpus"]:
        i = int(g["index"])
        g["uuid"] = f"GPU-00000000-0000-0000-0000-{i:012x}"
        g["pci_bus_id"] = f"00000000:{i + 1:02X}:00.0"
        g["processes"] = [] if g.get("processes") is not None else None
        g["processes_note"] = None
    snap["node"] = "anon"
    return snap


def take(env: dict[str, str] | None = None) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", SNAPSHOT_CODE],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return dict(json.loads(out.stdout))


def compare(real: dict[str, Any], fake: dict[str, Any]) -> list[str]:
    """Differences between the first real GPU and the first fake GPU."""
    problems: list[str] = []
    r, f = real["gpus"][0], fake["gpus"][0]
    for key, rv in r.items():
        fv = f.get(key)
        if not (isinstance(rv, dict) and "status" in rv and isinstance(fv, dict)):
            continue
        line = f"{key:28} real {rv['status']:11} {rv.get('value')!s:>14} {rv.get('unit', '')}"
        line += f" | fake {fv['status']:11} {fv.get('value')!s:>14} {fv.get('unit', '')}"
        bad = rv["status"] != fv["status"] or rv.get("unit") != fv.get("unit")
        a, b = rv.get("value"), fv.get("value")
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a > 0 and b > 0:
            bad = bad or not (0.5 <= b / a <= 2.0)
        print(("✗ " if bad else "  ") + line)
        if bad:
            problems.append(key)
    return problems


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests/fixtures/nvml/real.json"
    real = anonymise(take())
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(real, indent=1, ensure_ascii=False), encoding="utf-8")
    print(f"saved {out} ({len(real['gpus'])} GPUs, driver {real.get('driver_version')})")

    from tests.backends.nvml import FakeNvml, build_fake_nvml

    with tempfile.TemporaryDirectory() as d:
        lib = build_fake_nvml(Path(d))
        fake_cfg = FakeNvml(lib, Path(d) / "fake.cfg")
        env = fake_cfg.env(dict(os.environ))
        fake = take(env)
    problems = compare(real, fake)
    print("fake defaults match the real GPU" if not problems else f"differ: {', '.join(problems)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
