"""The layered-logs panel's path (``cockpit.collect.logs.gather_logs``: read, analyse with
the explain engine, follow request IDs) for 10 serving pods with 5 MB of log each, next to
downloading the same 10 logs with the same client and the same query (``sinceTime``,
``limitBytes``, ``tailLines``, ``timestamps``) in the same run.

The logs look like a vLLM server's: stats lines every few seconds, request lines with
their IDs, the engine's HTTP access lines, warnings, a CUDA OOM near the end; a gateway
pod logs ingress-nginx access lines whose request IDs the serving pods carry.

Reports wall time (best of 3 after a warm-up, the two sides interleaved) and the ratio,
and the client process's CPU time per run (the panel path's own cost, apart from the
server's and the other processes' on the machine);
target: the panel path stays under 2x the download. Memory: peak RSS of a process that
only downloads against one that runs the panel path (reads are analysed as they arrive
and dropped, at most 4 pods' logs in memory); target: the panel path's peak RSS stays
within 2x the download's, far below the 50 MB read. The server runs in its own process.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PODS = 10
MB_PER_POD = 5

SERVER = r"""
import sys, random
sys.path.insert(0, sys.argv[1])
from datetime import timedelta
from tests.backends.kube_api import KubeApiServer
from tests.fixtures.kube.objects import T0, container, meta, pod
pods, mb = int(sys.argv[2]), int(sys.argv[3])
rnd = random.Random(7)
srv = KubeApiServer().start()
c = srv.cluster("logs")
for ns in ("llm", "ingress-nginx"):
    c.add({"apiVersion": "v1", "kind": "Namespace", "metadata": meta(ns), "spec": {}})
def stamp(s):
    return (T0 + timedelta(seconds=s)).strftime("%Y-%m-%dT%H:%M:%S.%f000Z")
def clock(s):
    return (T0 + timedelta(seconds=s)).strftime("%m-%d %H:%M:%S")
gateway = []
for i in range(pods):
    name = f"vllm-7d9f-{i:05d}"
    c.add(pod(name, "llm", containers=[container("server", gpus=1)], labels={"app": "vllm"},
              owner=("ReplicaSet", "vllm-7d9f"), ready_at=-100))
    out, size, s = [], 0, -1500.0
    target = mb * 2**20
    while size < target:
        s += 0.05
        k = rnd.random()
        if k < 0.02:
            line = (f"INFO {clock(s)} metrics.py:351] Avg prompt throughput: {rnd.uniform(100, 900):.1f} tokens/s, "
                    f"Avg generation throughput: {rnd.uniform(50, 400):.1f} tokens/s, Running: {rnd.randint(1, 64)} reqs, "
                    f"Swapped: 0 reqs, Pending: {rnd.randint(0, 90)} reqs, GPU KV cache usage: {rnd.uniform(20, 99):.1f}%, CPU KV cache usage: 0.0%.")
        elif k < 0.5:
            rid = f"{rnd.getrandbits(128):032x}"
            line = f"INFO {clock(s)} engine.py:267] Added request chatcmpl-{rid}."
            if len(gateway) < 20000 and rnd.random() < 0.05:
                status = 503 if rnd.random() < 0.1 else 200
                when = (T0 + timedelta(seconds=s)).strftime("%d/%b/%Y:%H:%M:%S +0000")
                gateway.append(f'{stamp(s)} 10.0.0.7 - - [{when}] "POST /v1/chat/completions HTTP/1.1" {status} 120 "-" '
                               f'"python-requests/2.31.0" 512 0.{rnd.randint(100, 999)} [llm-vllm-8000] [] 10.1.0.{i}:8000 0 0.200 {status} {rid}\n')
        elif k < 0.95:
            line = f'INFO:     10.0.0.{rnd.randint(1, 250)}:{rnd.randint(30000, 60000)} - "POST /v1/chat/completions HTTP/1.1" 200 OK'
        elif k < 0.99:
            line = f"WARNING {clock(s)} scheduler.py:1089] Sequence group {rnd.getrandbits(64):x} is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space."
        else:
            line = f"DEBUG {clock(s)} worker.py:233] step {rnd.getrandbits(32)} took {rnd.uniform(5, 90):.2f} ms"
        text = f"{stamp(s)} {line}\n"
        out.append(text)
        size += len(text)
    out.append(f"{stamp(s + 1)} ERROR {clock(s + 1)} engine.py:165] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.11 GiB of which 1.20 GiB is free.\n")
    c.add_log("llm", name, "".join(out))
c.add(pod("ingress-nginx-controller-0", "ingress-nginx", containers=[container("controller")],
          labels={"app.kubernetes.io/component": "controller"}, ready_at=-100))
c.add_log("ingress-nginx", "ingress-nginx-controller-0", "".join(sorted(gateway)))
from pathlib import Path
srv.write_kubeconfig(Path(sys.argv[4]), ["logs"], namespace="llm")
print(srv.port, flush=True)
sys.stdin.read()
"""

DRIVER = r"""
import sys, time, json, asyncio, resource
sys.path.insert(0, sys.argv[1])
from datetime import timedelta
from cockpit.clock import Clock
from cockpit.config import LogsSettings, Settings
from cockpit.context import AppContext
from cockpit.sources.base import Sources
from cockpit.sources.kubernetes import KubeSource
from cockpit.collect.logs import gather_logs, window_start
from tests.fixtures.kube.objects import T0
kc, mode, pods = sys.argv[2], sys.argv[3], int(sys.argv[4])
settings = Settings(logs=LogsSettings(max_mb=8, cohort=pods - 1))
settings.service.namespace = "llm"
settings.service.selector = "app=vllm"

def context():
    kube = KubeSource(kubeconfig=kc, context="logs", namespace="llm", timeout_s=120)
    ctx = AppContext(settings=settings, sources=Sources(kube=kube), clock=Clock(frozen_at=T0 + timedelta(minutes=30)), lang="en")
    ctx.metrics.suspect = ("vllm-7d9f-00000", "pod")
    return ctx

async def download(ctx):
    # What the panel's reads fetch, with the same query, through the same client and
    # executor (4 threads), without analysing anything.
    kube = ctx.sources.kube
    since = window_start(ctx).strftime("%Y-%m-%dT%H:%M:%SZ")
    limit = int(settings.logs.max_mb * 2**20)
    names = [("ingress-nginx", "ingress-nginx-controller-0", "controller")]
    names += [("llm", f"vllm-7d9f-{i:05d}", "server") for i in range(pods)]
    await kube.connect()
    async def one(ns, pod, cont):
        q = [("container", cont), ("tailLines", settings.logs.tail_lines), ("timestamps", "true"),
             ("sinceTime", since), ("limitBytes", limit)]
        path = f"/api/v1/namespaces/{ns}/pods/{pod}/log"
        data = await kube._run(lambda: kube._request("GET", path, q, accept="*/*"))
        return len(data)
    sizes = await asyncio.gather(*(one(*n) for n in names))
    return {"bytes": sum(sizes)}

async def panel(ctx):
    r = await gather_logs(ctx)
    kinds = sorted({f.kind for lay in r.layers for f in lay.findings})
    return {"bytes": sum(x.bytes for x in r.reads), "kinds": kinds,
            "followed": r.request_ids.status, "lines": sum(x.lines for x in r.reads)}

for line in sys.stdin:
    ctx = context()
    t0, c0 = time.perf_counter(), time.process_time()
    out = asyncio.run(download(ctx) if mode == "download" else panel(ctx))
    out["wall"] = time.perf_counter() - t0
    out["cpu"] = time.process_time() - c0
    asyncio.run(ctx.sources.close())
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out), flush=True)
"""


def main() -> list[str]:
    py = sys.executable
    lines: list[str] = []
    t0 = time.perf_counter()
    kc = Path(tempfile.mkdtemp(prefix="bench-logs-")) / "config"
    server = subprocess.Popen(
        [py, "-c", SERVER, str(ROOT), str(PODS), str(MB_PER_POD), str(kc)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    drivers: list[subprocess.Popen[str]] = []
    try:
        assert server.stdout is not None
        server.stdout.readline()  # the port: the kubeconfig is written
        lines.append(
            f"generated {PODS} serving pods x {MB_PER_POD} MB of vLLM-like log and a gateway "
            f"in {time.perf_counter() - t0:.1f} s"
        )
        for mode in ("download", "panel"):
            drivers.append(
                subprocess.Popen(
                    [py, "-c", DRIVER, str(ROOT), str(kc), mode, str(PODS)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                )
            )

        def run(d: subprocess.Popen[str]) -> dict[str, object]:
            assert d.stdin is not None and d.stdout is not None
            d.stdin.write("run\n")
            d.stdin.flush()
            return dict(json.loads(d.stdout.readline()))

        rounds = [(run(drivers[0]), run(drivers[1])) for _ in range(4)]
        dl = min((r[0] for r in rounds[1:]), key=lambda r: float(str(r["wall"])))
        pn = min((r[1] for r in rounds[1:]), key=lambda r: float(str(r["wall"])))
        dl_wall, pn_wall = float(str(dl["wall"])), float(str(pn["wall"]))
        dl_rss = max(float(str(r[0]["rss_mb"])) for r in rounds)
        pn_rss = max(float(str(r[1]["rss_mb"])) for r in rounds)
        mib = float(str(dl["bytes"])) / 2**20
        dl_cpu = min(float(str(r[0]["cpu"])) for r in rounds[1:])
        pn_cpu = min(float(str(r[1]["cpu"])) for r in rounds[1:])
        lines.append(
            f"download of {PODS} logs + the gateway's ({mib:.1f} MiB, same query and client): "
            f"{dl_wall:.2f} s"
        )
        lines.append(
            f"panel path (read, explain engine per layer, request IDs followed): {pn_wall:.2f} s, "
            f"{pn['lines']} lines, findings {', '.join(map(str, pn['kinds']))}; "
            f"request IDs {pn['followed']}"
        )
        lines.append(f"ratio panel path / download: {pn_wall / dl_wall:.2f}x (target < 2x)")
        lines.append(
            f"client CPU per run (least of 3, every thread of the client's process): "
            f"panel path {pn_cpu:.2f} s, download only {dl_cpu:.2f} s"
        )
        lines.append(
            f"peak RSS: panel path {pn_rss:.0f} MB vs download only {dl_rss:.0f} MB "
            f"(ratio {pn_rss / dl_rss:.2f}x, target < 2x; {mib:.0f} MiB read)"
        )
    finally:
        for d in drivers:
            if d.stdin:
                d.stdin.close()
            d.wait(timeout=60)
        if server.stdin:
            server.stdin.close()
        server.wait(timeout=30)
    return lines


if __name__ == "__main__":
    for line in main():
        print(line)
