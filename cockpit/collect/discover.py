"""Discovery against Prometheus: where each source keeps the workload's labels, which
services the namespace runs and which serving stack the scope is (the decisions are
:mod:`cockpit.analysis.discovery`'s; this module runs its queries).

At most ``3 + sources joined through instance + serving stacks`` instant queries, once
per scope (the detection that uses them is cached in ``ctx.metrics``).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from cockpit.analysis.discovery import (
    POD_INFO,
    Discovery,
    SourceLabels,
    choose,
    instance_regex,
    ip_of_instance,
    label_modes,
    labels_query,
    pod_ip_query,
    probe_metric,
    promql_string,
    services,
    services_query,
)
from cockpit.analysis.profiles import Detection, selector
from cockpit.collect.runner import QueryResult, QueryRunner, QuerySpec
from cockpit.sources.base import ErrorKind

if TYPE_CHECKING:
    from cockpit.analysis.discovery import LabelMode


def _failure(res: QueryResult) -> str:
    return res.failure.message if res.failure is not None else ""


async def _one(runner: QueryRunner, key: str, query: str, at: datetime) -> QueryResult:
    spec = QuerySpec(key=key, query=query, kind="instant", end=at)
    return (await runner.run([spec]))[key]


async def discover(
    runner: QueryRunner,
    det: Detection,
    names: set[str],
    at: datetime,
    scope: dict[str, str],
) -> Discovery:
    """Find where each detected source keeps the workload's labels and which serving
    stack the scope is, from the answers at ``at``.

    Args:
        runner: The context's query runner.
        det: The detection from the metric names (every stack present).
        names: The target's metric names.
        at: Evaluation time.
        scope: The service scope (``namespace``, ``model``, ``pod`` regex).

    Returns:
        A :class:`Discovery`; ``failure`` is set (and nothing else) when the first query
        fails, so that the caller keeps the detection as it was.
    """
    namespace = scope.get("namespace", "")
    probes = {
        pid: probe_metric(det, pid, names)
        for pid in det.profiles
        if {"namespace", "pod"} & set(det.metas[pid].labels)
    }
    probes = {pid: m for pid, m in probes.items() if m}
    if not probes:
        return Discovery()
    res = await _one(runner, "discover:labels", labels_query(list(probes.values())), at)
    if res.failure is not None:
        missing = (
            res.failure.kind is ErrorKind.NOT_FOUND
            and res.failure.hint_key == "hint.bundle.not_recorded"
        )
        return Discovery(failure=_failure(res), not_recorded=missing)
    modes = label_modes(probes, [v.labels for v in res.vector], namespace)
    pod_ip: dict[str, str] = {}
    if "instance" in modes.values() and POD_INFO in names:
        ips = await _one(runner, "discover:pod_ip", pod_ip_query(namespace), at)
        pod_ip = {
            v.labels["pod"]: v.labels["pod_ip"]
            for v in ips.vector
            if v.labels.get("pod") and v.labels.get("pod_ip")
        }
    by_ip: dict[str, str] = {ip: pod for pod, ip in pod_ip.items()}
    disc = Discovery()
    for pid, metric in probes.items():
        mode: LabelMode = modes[pid]
        src = SourceLabels(profile=pid, metric=metric, mode=mode)
        if mode == "instance":
            inst = await _one(runner, f"discover:instance:{pid}", _by_instance(metric), at)
            pods = sorted(
                {
                    by_ip[ip]
                    for v in inst.vector
                    if (ip := ip_of_instance(v.labels.get("instance", ""))) in by_ip
                }
            )
            src.pod_ips = {p: pod_ip[p] for p in pods}
            if not pods:
                src.mode = "unscoped"
        disc.sources[pid] = src
    found: dict[str, dict[str, set[str]]] = {}
    serving = [pid for pid in det.profiles if det.metas[pid].stack == "serving"]
    for pid in serving:
        own = disc.sources.get(pid)
        if own is None or not namespace:
            continue
        pods_models = await _serving_pods(runner, det, pid, own, namespace, pod_ip, by_ip, at)
        if pods_models:
            found[pid] = pods_models
    disc.services = services(found)
    disc.chosen, disc.ambiguous = choose(
        disc.services, scope.get("pod", ""), scope.get("model", ""), serving
    )
    return disc


def _by_instance(metric: str) -> str:
    return f"count by (instance) ({metric})"


async def _serving_pods(
    runner: QueryRunner,
    det: Detection,
    pid: str,
    src: SourceLabels,
    namespace: str,
    pod_ip: dict[str, str],
    by_ip: dict[str, str],
    at: datetime,
) -> dict[str, set[str]]:
    """Pod → model values of one serving stack's series in ``namespace``."""
    meta = det.metas[pid]
    model_label = meta.labels.get("model", "")
    if src.mode == "instance":
        ips = list(src.pod_ips.values())
        if not ips:
            return {}
        sel = f'instance=~"{promql_string(instance_regex(ips))}"'
        pod_label = "instance"
    elif src.mode == "unscoped":
        return {}
    else:
        labels = dict(meta.labels)
        if src.mode == "exported":
            labels.update({"namespace": "exported_namespace", "pod": "exported_pod"})
        sel = selector({"namespace": namespace}, meta.model_copy(update={"labels": labels}))
        pod_label = labels.get("pod", "")
    if not pod_label:
        return {}
    res = await _one(
        runner,
        f"discover:services:{pid}",
        services_query(src.metric, pod_label, model_label, sel),
        at,
    )
    out: dict[str, set[str]] = {}
    for v in res.vector:
        raw = v.labels.get(pod_label, "")
        pod = by_ip.get(ip_of_instance(raw), "") if pod_label == "instance" else raw
        if pod:
            out.setdefault(pod, set()).add(v.labels.get(model_label, "") if model_label else "")
    return out
