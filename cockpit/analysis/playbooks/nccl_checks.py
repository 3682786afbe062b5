"""Checks of the NCCL hang / timeout playbook (seed 000, 场景二)."""

from __future__ import annotations

import re

from cockpit.analysis.nccl import NcclAnalyzer, NcclReport
from cockpit.analysis.playbooks import result as res
from cockpit.analysis.playbooks.common import GPU_RESOURCE, restarts
from cockpit.analysis.playbooks.data import PlaybookData
from cockpit.analysis.playbooks.result import CheckEvidence, ItemResult, L
from cockpit.incident import ItemStatus

# PyTorch's default NCCL process-group timeout: 10 min since torch 2.2
# (``default_pg_nccl_timeout``), 30 min before. Above 30 min it was raised on purpose.
DEFAULT_TIMEOUT_MS = 1_800_000
_ENV_PREFIXES = ("NCCL_", "TORCH_NCCL_", "CUDA_", "NVIDIA_", "LD_LIBRARY_PATH")
_XID_LINE = re.compile(r"NVRM: Xid \(PCI:[^)]*\): (\d+)")


def _report(data: PlaybookData) -> NcclReport | None:
    a = NcclAnalyzer(world_size=world_size(data))
    n = 0
    for pod in sorted(data.logs):
        for line in data.logs[pod].splitlines():
            n += 1
            a.feed(n, line)
    return a.finish()


def world_size(data: PlaybookData) -> int | None:
    """Ranks of the job: one per requested GPU when every pod requests GPUs (torchrun
    starts ``nproc_per_node`` = GPUs per pod), else unknown."""
    if not data.pods:
        return None
    gpus = [p.requests().get(GPU_RESOURCE, 0.0) for p in data.pods]
    if all(g >= 1 for g in gpus):
        return int(sum(gpus))
    return None


def _watchdog_report(data: PlaybookData) -> NcclReport | ItemResult:
    """The NCCL analysis of the pods' logs, or the result saying why there is none."""
    if not data.has("kube"):
        return res.not_available("kube")
    r = _report(data)
    return res.still_open("playbook.finding.nccl.no_watchdog") if r is None else r


def nccl_first_rank(data: PlaybookData) -> ItemResult:
    """The first failing rank and its first error — never the last watchdog line."""
    r = _watchdog_report(data)
    if isinstance(r, ItemResult):
        return r
    ev: list[CheckEvidence] = []
    if r.first_error is not None:
        ev.append(
            CheckEvidence(
                **L(
                    "first_error",
                    rank=r.first_error.rank if r.first_error.rank is not None else "?",
                    line=r.first_error.line,
                ),
                value=r.first_error.text[:300],
                source="logs",
            )
        )
    if r.last_watchdog is not None:
        ev.append(
            CheckEvidence(
                **L("last_watchdog"),
                value=r.last_watchdog.text[:200],
                source="logs",
            )
        )
    return res.problem(
        "playbook.finding.nccl.first_rank",
        ev,
        rank=r.first_failing_rank if r.first_failing_rank is not None else "?",
        kind=r.first_error.kind if r.first_error else "?",
        pattern=r.pattern,
    )


def nccl_sequence(data: PlaybookData) -> ItemResult:
    """Same collective (OpType/Numel) at the same SeqNum on every rank?"""
    r = _watchdog_report(data)
    if isinstance(r, ItemResult):
        return r
    ev = [
        CheckEvidence(label=f"rank {k}", value=v, source="logs")
        for k, v in list(r.ops_at_seq.items())[:16]
    ]
    if "collective_mismatch" in r.flags:
        return res.problem(
            "playbook.finding.nccl.mismatch",
            ev,
            seq=r.mismatch_seq if r.mismatch_seq is not None else "?",
            odd=", ".join(map(str, r.odd_one_out_ranks)) or "?",
        )
    return res.ok("playbook.finding.nccl.same", ev, seq=r.min_seq if r.min_seq is not None else "?")


def nccl_alive_xid(data: PlaybookData) -> ItemResult:
    """Ranks' pods alive and not restarted; Xid on their nodes (GPU source or logs)."""
    if not data.has("kube"):
        return res.not_available("kube")
    ev: list[CheckEvidence] = []
    bad = []
    for p in data.pods:
        ready = all(cs.ready for cs in p.container_statuses) if p.container_statuses else False
        if p.phase != "Running" or not ready or restarts(p):
            bad.append(p.meta.name)
            ev.append(
                CheckEvidence(
                    label=p.meta.name,
                    value=f"{p.phase} ready={ready} restarts={restarts(p)} node={p.spec.node_name}",
                    source="kube",
                )
            )
    xids = []
    for snap in data.gpus:
        for g in snap.gpus:
            if g.last_xid.value is not None and g.last_xid.value > 0:
                xids.append(f"{snap.node} GPU {g.index}: Xid {g.last_xid.value:.0f}")
    for pod, text in data.logs.items():
        for m in _XID_LINE.finditer(text):
            xids.append(f"{pod}: Xid {m.group(1)}")
    ev += [CheckEvidence(label="Xid", value=x, source="gpu") for x in xids[:10]]
    if bad or xids:
        return res.problem(
            "playbook.finding.nccl.alive_problem", ev, pods=", ".join(bad) or "-", xids=len(xids)
        )
    missing = [] if data.has("gpu") else ["gpu"]
    return ItemResult(
        status=ItemStatus.OK,
        finding_key="playbook.finding.nccl.alive_ok",
        finding_args={"n": len(data.pods), "gpu_note": ", ".join(missing)},
        missing=missing,
    )


def nccl_versions_env(data: PlaybookData) -> ItemResult:
    """Images, NCCL/CUDA env vars and driver versions that differ between ranks."""
    if not data.has("kube"):
        return res.not_available("kube")
    diffs: list[CheckEvidence] = []
    by_key: dict[str, dict[str, str]] = {}
    for p in data.pods:
        for c in p.spec.containers[:1]:
            by_key.setdefault("image", {})[p.meta.name] = c.image
            for e in c.env:
                if e.name.startswith(_ENV_PREFIXES):
                    by_key.setdefault(f"env {e.name}", {})[p.meta.name] = e.value or e.value_from
        for cs in p.container_statuses[:1]:
            by_key.setdefault("image digest", {})[p.meta.name] = cs.digest
    drivers = {snap.node or "?": snap.driver_version or "?" for snap in data.gpus}
    if drivers:
        by_key["driver"] = drivers
    names = {p.meta.name for p in data.pods}
    for key, values in sorted(by_key.items()):
        if key.startswith("env") and set(values) != names:
            diffs.append(
                CheckEvidence(
                    **L("env_partial", name=key), value=f"{len(values)}/{len(names)}", source="kube"
                )
            )
        elif len(set(values.values())) > 1:
            diffs.append(
                CheckEvidence(
                    label=key,
                    value="; ".join(f"{k}={v}" for k, v in sorted(values.items()))[:300],
                    source="kube",
                )
            )
    if diffs:
        return res.problem("playbook.finding.nccl.versions_differ", diffs, n=len(diffs))
    return ItemResult(
        status=ItemStatus.OK,
        finding_key="playbook.finding.nccl.versions_same",
        finding_args={"n": len(data.pods)},
        missing=[] if data.has("gpu") else ["gpu"],
    )


def nccl_timeout_raised(data: PlaybookData) -> ItemResult:
    """Was the timeout raised instead of fixing the cause?"""
    if not data.has("kube"):
        return res.not_available("kube")
    r = _report(data)
    if r is None or r.timeout_ms is None:
        return res.still_open("playbook.finding.nccl.timeout_unknown")
    ev = [CheckEvidence(label="Timeout(ms)", value=str(r.timeout_ms), unit="ms", source="logs")]
    if r.timeout_ms > DEFAULT_TIMEOUT_MS:
        return res.problem("playbook.finding.nccl.timeout_raised", ev, ms=r.timeout_ms)
    return res.ok("playbook.finding.nccl.timeout_default", ev, ms=r.timeout_ms)
