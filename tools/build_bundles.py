"""Record the demo bundle (``make demo-bundle``) and the drill bundles (``make drills``).

For each scenario: a real Prometheus backfilled with its series
(:mod:`cockpit.scenarios.promserver`), the suite's local Kubernetes API server
(``tests/backends/kube_api.py``) serving its :attr:`~cockpit.scenarios.Scenario.kube`
objects and pod logs, and an NVML source over the suite's fake libnvidia-ml
(``tests/backends/nvml.py``) scripted with the per-GPU state dcgm-exporter reports at
"now" for the node in question; then every recording plan of ``cockpit record`` runs with
the clock frozen at the scenario's "now" (:func:`cockpit.scenarios.build_demo.record`).
The lines are sorted (the same inputs give the same bytes), every target query is checked
against Prometheus, and a bundle with a failed plan or call, or over its size budget, is
not written.

Run from the repository root (it needs ``tests/backends``)::

    .venv-test/bin/python -m tools.build_bundles --demo
    .venv-test/bin/python -m tools.build_bundles --drills [NAME ...]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from cockpit.config import PrometheusSettings  # noqa: E402
from cockpit.models import from_epoch  # noqa: E402
from cockpit.scenarios import Scenario, get_scenario, promserver  # noqa: E402
from cockpit.scenarios.build_demo import (  # noqa: E402
    DEFAULT_WINDOW,
    DEMO_BUNDLE,
    MAX_BYTES,
    normalize,
    record,
    verify,
)
from cockpit.sources.prometheus import PrometheusSource  # noqa: E402
from tests.backends.kube_api import KubeApiServer  # noqa: E402
from tests.backends.nvml import GPU_IS_LOST, FakeNvml, load_fake_nvml  # noqa: E402

MIB = 1024 * 1024

_DCGM_FIELDS = {
    "DCGM_FI_DEV_GPU_TEMP": ("temp_gpu", 1.0),
    "DCGM_FI_DEV_MEMORY_TEMP": ("temp_mem", 1.0),
    "DCGM_FI_DEV_POWER_USAGE": ("power_mw", 1000.0),
    "DCGM_FI_DEV_GPU_UTIL": ("util_gpu", 1.0),
    "DCGM_FI_DEV_MEM_COPY_UTIL": ("util_mem", 1.0),
    "DCGM_FI_DEV_SM_CLOCK": ("clock_sm", 1.0),
    "DCGM_FI_DEV_MEM_CLOCK": ("clock_mem", 1.0),
    "DCGM_FI_DEV_CLOCKS_EVENT_REASONS": ("clock_reasons", 1.0),
    "DCGM_FI_DEV_FB_USED": ("mem_used", float(MIB)),
}
"""dcgm-exporter field → fake NVML key and the factor from the exporter's unit (W → mW,
MiB → bytes); dcgm-exporter ``default-counters.csv`` and ``nvml.h`` units."""


def gpu_node(scenario: Scenario, objects: list[dict[str, Any]]) -> str:
    """The node whose GPUs the local view shows: the ground truth's suspect node, else the
    node of the first scheduled pod of the deployment in scope."""
    gt = scenario.ground_truth
    if gt is not None and gt.suspect.node:
        return gt.suspect.node
    deployment = scenario.scope.get("deployment", "")
    for obj in objects:
        node = obj.get("spec", {}).get("nodeName")
        if obj["kind"] == "Pod" and node and obj["metadata"]["name"].startswith(deployment):
            return str(node)
    return ""


async def dcgm_script(url: str, node: str, at: int, gpus: int) -> dict[str, Any]:
    """Fake NVML keys for ``node``'s GPUs from what dcgm-exporter reports at ``at``; a GPU
    without series then answers ``NVML_ERROR_GPU_IS_LOST``."""
    prom = PrometheusSource(PrometheusSettings(url=url))
    script: dict[str, Any] = {"count": gpus}
    seen: set[int] = set()
    try:
        when = from_epoch(at)
        for metric, (key, factor) in _DCGM_FIELDS.items():
            for v in await prom.instant(f'{metric}{{Hostname="{node}"}}', when):
                i = int(v.labels.get("gpu", "-1"))
                if not 0 <= i < gpus:
                    continue
                seen.add(i)
                script[f"gpu{i}.{key}"] = round(v.v * factor)
                script[f"gpu{i}.uuid"] = v.labels.get("UUID", "")
                script[f"gpu{i}.name"] = v.labels.get("modelName", "")
                bus = v.labels.get("pci_bus_id", "")
                if bus:
                    script[f"gpu{i}.bus"] = int(bus.split(":")[1], 16)
        free = await prom.instant(f'DCGM_FI_DEV_FB_FREE{{Hostname="{node}"}}', when)
        for v in free:
            i = int(v.labels.get("gpu", "-1"))
            used = script.get(f"gpu{i}.mem_used")
            if used is not None:
                script[f"gpu{i}.mem_total"] = int(used + v.v * MIB)
    finally:
        await prom.close()
    for i in range(gpus):
        if i not in seen:
            script[f"gpu{i}.err"] = GPU_IS_LOST
    return script


@contextmanager
def kube_server(scenario: Scenario, tmp: Path) -> Iterator[tuple[Path | None, list[Any]]]:
    """A kubeconfig of a local API server serving the scenario (None without a
    Kubernetes side), and the objects served."""
    if scenario.kube is None:
        yield None, []
        return
    world = scenario.kube()
    srv = KubeApiServer().start()
    try:
        cluster = srv.cluster(scenario.name)
        cluster.add(*world.objects)
        for (ns, pod, container, previous), text in world.logs.items():
            cluster.add_log(ns, pod, text, container, previous)
        path = srv.write_kubeconfig(
            tmp / "kubeconfig", [scenario.name], namespace=scenario.scope.get("namespace", "")
        )
        yield path, world.objects
    finally:
        srv.stop()


def build_one(
    scenario: Scenario, out: Path, window: timedelta, fake: FakeNvml, *, note: str = ""
) -> int:
    """Record ``scenario`` into ``out``; 0 when written, 1 when refused (said why)."""
    from cockpit.sources.nvml import NvmlSource

    with tempfile.TemporaryDirectory(prefix="cockpit-bundle-") as tmp_s:
        tmp = Path(tmp_s)
        t0 = time.perf_counter()
        blocks, stats = promserver.cached_blocks(scenario)
        with (
            promserver.start(scenario, tmp, blocks=blocks) as srv,
            kube_server(scenario, tmp) as (kubeconfig, objects),
        ):
            print(
                f"{scenario.name}: prometheus {stats.series} series, {stats.samples} samples"
                f"{' (cached blocks)' if stats.cached else ''}; "
                f"kubernetes {len(objects)} objects"
            )
            node = gpu_node(scenario, objects)
            gpu = None
            if node:
                count = next(
                    (
                        int(o["status"]["capacity"].get("nvidia.com/gpu", 0))
                        for o in objects
                        if o["kind"] == "Node" and o["metadata"]["name"] == node
                    ),
                    8,
                )
                fake.values = asyncio.run(dcgm_script(srv.url, node, scenario.now, count))
                fake.write()
                gpu = NvmlSource(node=node, clock=lambda: scenario.now_dt, watch_xid=False)
                print(f"  nvml: {node}, {count} GPUs from dcgm-exporter at now")
            tmp_out = out.with_suffix(".tmp")
            report, writer = asyncio.run(
                record(
                    scenario, srv.url, tmp_out, window, kubeconfig=kubeconfig, gpu=gpu, note=note
                )
            )
            for r in report.plans:
                ok = "ok" if r.ok else "FAILED " + r.error
                print(f"  plan {r.name}: {ok} ({r.seconds:.1f} s)")
            for line in writer.failures:
                print(f"  failed: {line}")
            normalize(tmp_out)
            problems = asyncio.run(verify(scenario, srv.url, tmp_out))
    size = tmp_out.stat().st_size
    if problems or not report.ok or writer.failures:
        for p in problems:
            print(f"  mismatch: {p}", file=sys.stderr)
        print(f"not written: the recording has problems (kept {tmp_out})", file=sys.stderr)
        return 1
    if size > MAX_BYTES:
        print(f"not written: {size} bytes is over the {MAX_BYTES} byte budget", file=sys.stderr)
        return 1
    tmp_out.chmod(0o644)
    tmp_out.replace(out)
    print(
        f"  wrote {out} ({size} bytes, {writer.stats.total} calls) in {time.perf_counter() - t0:.1f} s"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    ap = argparse.ArgumentParser(prog="python -m tools.build_bundles", description=__doc__)
    ap.add_argument("--demo", action="store_true", help="record the demo bundle")
    ap.add_argument("--drills", nargs="*", metavar="NAME", help="record these drills (default all)")
    args = ap.parse_args(argv)
    os.environ["COCKPIT_CONFIG"] = os.devnull  # the user's config must not leak in
    with tempfile.TemporaryDirectory(prefix="cockpit-nvml-") as nv:
        lib = load_fake_nvml(Path(nv) / "lib")
        fake = FakeNvml(lib, Path(nv) / "nvml.cfg")
        os.environ["FAKE_NVML_CONFIG"] = str(fake.config)
        rc = 0
        if args.demo:
            rc |= build_one(get_scenario("worked_example"), DEMO_BUNDLE, DEFAULT_WINDOW, fake)
        if args.drills is not None:
            from cockpit.drills.build import build_drills

            rc |= build_drills(
                args.drills,
                lambda sc, out, window, note: build_one(sc, out, window, fake, note=note),
            )
    return rc


if __name__ == "__main__":
    sys.exit(main())
