"""Which labels carry the workload on each source, and which services run in the scope.

Pure: the collector (:mod:`cockpit.collect.discover`) runs the queries this module writes
and hands their answers back; nothing here does I/O.

Three facts are found once per source and per service scope:

1. **Where the workload's labels are** (:func:`label_modes`). A Prometheus Operator
   ServiceMonitor with ``honorLabels: false`` — the default of the dcgm-exporter and
   ingress-nginx charts (dcgm-exporter ``deployment/values.yaml``, ingress-nginx
   ``charts/ingress-nginx/values.yaml``) — renames the exporter's own ``namespace``/``pod``/
   ``container`` labels to ``exported_namespace``/``exported_pod``/``exported_container``
   and sets ``namespace``/``pod`` to the exporter's (Prometheus ``honor_labels``,
   https://prometheus.io/docs/prometheus/latest/configuration/configuration/#scrape_config).
   A ``static_configs`` scrape (SGLang's docs) adds neither: then the series are joined to
   pods through ``instance`` (``ip:port``) and kube-state-metrics'
   ``kube_pod_info{pod_ip}`` (kube-state-metrics ``docs/metrics/workload/pod-metrics.md``).
2. **Which engine serves which pods** (:func:`services`): every serving stack's pods in the
   namespace, grouped by the workload their names come from; two engines in a namespace
   are two services.
3. **Which serving stack the scope is** (:func:`choose`): the engine whose series carry the
   scope's pods (or model); the metric names of the other engines are never used for it.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from cockpit.analysis.profiles import Detection

LabelMode = Literal["native", "exported", "instance", "unscoped"]
"""Where a source's series carry the workload: in ``namespace``/``pod`` (``native``), in
``exported_namespace``/``exported_pod`` (``exported``: scraped with ``honorLabels:
false``), nowhere but through ``instance`` → pod IP (``instance``: a static scrape joined
through kube-state-metrics), or nowhere at all (``unscoped``: no namespace label and no
pod IPs to join with)."""

EXPORTED = {"namespace": "exported_namespace", "pod": "exported_pod"}
"""Scope key → the label that carries it when the scrape did not honour the exporter's
labels (Prometheus prefixes a clashing target label's value with ``exported_``)."""

POD_INFO = "kube_pod_info"
"""kube-state-metrics' pod info series; its ``pod_ip`` joins a static scrape's ``instance``."""

SCOPED_KEYS = ("namespace", "pod")
"""Scope keys a source's label mode decides (``model`` is the engine's own label)."""


class SourceLabels(BaseModel):
    """Where one detected source keeps the workload's labels.

    Attributes:
        profile: Profile id (``dcgm``, ``vllm``…).
        metric: The series looked at (one of the profile's detect metrics).
        mode: See :data:`LabelMode`.
        pod_ips: With ``instance``: pod → IP of the namespace's pods whose IP is an
            ``instance`` of the source's series.
    """

    profile: str
    metric: str
    mode: LabelMode = "native"
    pod_ips: dict[str, str] = Field(default_factory=dict)


class Service(BaseModel):
    """One service found in the namespace: an engine and the workload its pods belong to.

    Attributes:
        profile: The serving stack's profile id.
        workload: Deployment/StatefulSet name the pod names come from (the pod's own name
            when it follows neither pattern).
        pods: Its pods that carry the engine's series now, sorted.
        models: The engine's model label values on those series (empty: no model label).
    """

    profile: str
    workload: str
    pods: list[str] = Field(default_factory=list)
    models: list[str] = Field(default_factory=list)


class Discovery(BaseModel):
    """What discovery found for one service scope (``cockpit doctor`` prints it).

    Attributes:
        sources: Profile id → where its workload labels are.
        services: Every service found in the namespace, by stack then workload.
        chosen: The serving stack the scope is analysed with (``""``: none detected, or
            discovery failed and every detected stack is used as before).
        ambiguous: More than one serving stack matches the scope (no deployment, selector
            or model tells them apart): the one with the most pods is chosen.
        failure: Why discovery could not run (a failed query), in English; empty when it ran.
        not_recorded: The failure is a replayed recording that holds no answer to the
            discovery queries (made by a cockpit that did not send them).
    """

    sources: dict[str, SourceLabels] = Field(default_factory=dict)
    services: list[Service] = Field(default_factory=list)
    chosen: str = ""
    ambiguous: bool = False
    failure: str = ""
    not_recorded: bool = False


def probe_metric(det: Detection, profile: str, names: set[str]) -> str:
    """The first of ``profile``'s detect metrics the target exposes (its first one when
    none is: a forced profile)."""
    detect = det.metas[profile].detect
    return next((d for d in detect if d in names), detect[0] if detect else "")


def promql_string(value: str) -> str:
    """``value`` escaped for a double-quoted PromQL string (backslash and quote)."""
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _regex_alt(names: list[str]) -> str:
    return "|".join(re.escape(n) for n in names)


def labels_query(probes: list[str]) -> str:
    """One instant query that tells, per probe metric, which ``namespace`` and
    ``exported_namespace`` values its series carry (one row per pair)."""
    return (
        "count by (__name__, namespace, exported_namespace) "
        f'({{__name__=~"{_regex_alt(sorted(set(probes)))}"}})'
    )


def label_modes(
    probes: dict[str, str],
    rows: list[dict[str, str]],
    namespace: str,
) -> dict[str, LabelMode]:
    """Where each source keeps the workload's namespace, from :func:`labels_query`'s rows.

    Args:
        probes: Profile id → its probe metric.
        rows: The label sets of the answer (``__name__``, ``namespace``,
            ``exported_namespace``; an absent label is missing or ``""``).
        namespace: The scope's namespace (``""``: none given).

    Returns:
        Profile id → mode. The label holding the scope's namespace wins; without one, a
        source with any ``exported_namespace`` keeps its workload there (the exporter set
        it), a source none of whose series has a namespace is ``instance`` (the caller
        turns it ``unscoped`` when no pod IP answers), and the rest is ``native``. A
        source with no rows keeps ``native`` (what the profile says).
    """
    out: dict[str, LabelMode] = {}
    for profile, metric in probes.items():
        mine = [r for r in rows if r.get("__name__") == metric]
        if not mine:
            out[profile] = "native"
            continue
        native_hit = bool(namespace) and any(r.get("namespace") == namespace for r in mine)
        exported_hit = bool(namespace) and any(
            r.get("exported_namespace") == namespace for r in mine
        )
        if native_hit:
            out[profile] = "native"
        elif exported_hit or any(r.get("exported_namespace") for r in mine):
            out[profile] = "exported"
        elif not any(r.get("namespace") for r in mine):
            out[profile] = "instance"
        else:
            out[profile] = "native"
    return out


def pod_ip_query(namespace: str) -> str:
    """Pod name → pod IP of the namespace's pods (kube-state-metrics)."""
    sel = f'namespace="{promql_string(namespace)}",' if namespace else ""
    return f'max by (pod, pod_ip) ({POD_INFO}{{{sel}pod_ip!=""}})'


def instance_regex(ips: list[str]) -> str:
    """``instance`` values of the pods at ``ips``: ``ip:port`` for any port (IPv6 in
    brackets as Prometheus writes it)."""
    parts = []
    for ip in sorted(set(ips)):
        host = f"[{ip}]" if ":" in ip else ip
        parts.append(re.escape(host) + ":[0-9]+")
    return "|".join(parts)


def ip_of_instance(instance: str) -> str:
    """The host part of an ``instance`` label (``10.0.0.5:8000`` → ``10.0.0.5``)."""
    if instance.startswith("["):
        return instance[1:].split("]", 1)[0]
    return instance.rsplit(":", 1)[0] if instance.count(":") == 1 else instance


def scope_labels_for(mode: LabelMode) -> dict[str, str]:
    """Scope key → label name overrides for a source in ``mode`` (see :data:`EXPORTED`)."""
    return dict(EXPORTED) if mode == "exported" else {}


def services_query(metric: str, pod_label: str, model_label: str, sel: str) -> str:
    """The pods (and model values) carrying one serving stack's probe metric in scope."""
    by = ", ".join(x for x in (pod_label, model_label) if x)
    return f"count by ({by}) ({metric}{{{sel}}})"


_GENERATED = re.compile(r"^(?P<w>.+)-[a-z0-9]{1,10}-[a-z0-9]{5}$")
_ORDINAL = re.compile(r"^(?P<w>.+)-[0-9]+$")


def workload_of(pod: str) -> str:
    """The Deployment or StatefulSet a pod's name comes from (Kubernetes' generated names,
    see :mod:`cockpit.analysis.podnames`); the pod's own name otherwise."""
    m = _GENERATED.match(pod) or _ORDINAL.match(pod)
    return m.group("w") if m else pod


def services(found: dict[str, dict[str, set[str]]]) -> list[Service]:
    """Services from each serving stack's pods: ``found`` is profile id → pod → model
    values. One service per (stack, workload), sorted by stack then workload."""
    out = []
    for profile in sorted(found):
        by_workload: dict[str, dict[str, set[str]]] = {}
        for pod, models in found[profile].items():
            by_workload.setdefault(workload_of(pod), {})[pod] = models
        for workload, pods in sorted(by_workload.items()):
            values = sorted({m for ms in pods.values() for m in ms if m})
            out.append(
                Service(profile=profile, workload=workload, pods=sorted(pods), models=values)
            )
    return out


def choose(
    found: list[Service], pod_regex: str, model: str, serving: list[str]
) -> tuple[str, bool]:
    """The serving stack the scope is analysed with, and whether that was a guess.

    Args:
        found: The services of the namespace.
        pod_regex: The scope's pod-name regex (deployment or selector; ``""``: none).
        model: The scope's model (``""``: none).
        serving: The detected serving stacks (used when no service was found).

    Returns:
        ``(profile, ambiguous)``: the stack whose pods match ``pod_regex`` and whose model
        values include ``model`` (a stack without a model label is not excluded by it);
        among several, the one with the most matching pods, ``ambiguous`` set. ``""`` when
        no detected serving stack has series in scope and there is more than one.
    """
    pattern = re.compile(pod_regex) if pod_regex else None
    score: dict[str, int] = {}
    for svc in found:
        if model and svc.models and model not in svc.models:
            continue
        pods = [p for p in svc.pods if pattern is None or pattern.fullmatch(p)]
        if pods:
            score[svc.profile] = score.get(svc.profile, 0) + len(pods)
    if not score:
        return (serving[0], False) if len(serving) == 1 else ("", False)
    best = sorted(score, key=lambda p: (-score[p], p))
    return best[0], len(best) > 1


def apply(det: Detection, disc: Discovery, scope: dict[str, str]) -> None:
    """Make ``det`` query each source where its workload labels are: a source in
    ``exported`` mode reads ``namespace``/``pod`` from ``exported_*``; one in ``instance``
    mode is narrowed to the ``instance`` of the scope's pods (``""`` when none of them
    carries its series: nothing matches, never the whole Prometheus)."""
    pod = scope.get("pod", "")
    pattern = re.compile(pod) if pod else None
    for pid, src in disc.sources.items():
        meta = det.metas.get(pid)
        if meta is None:
            continue
        if src.mode == "exported":
            labels = {k: EXPORTED.get(k, v) if k in EXPORTED else v for k, v in meta.labels.items()}
            det.metas[pid] = meta.model_copy(update={"labels": labels})
        elif src.mode == "instance":
            ips = [ip for p, ip in src.pod_ips.items() if pattern is None or pattern.fullmatch(p)]
            det.joins[pid] = instance_regex(ips)
