"""What changed? Rollouts, Helm upgrades, node and config changes, restarts and Warning
events as timeline items, and the old-vs-new view of a bad release (pure, no I/O).

Sources of the rules:
- Deployment revisions are ReplicaSets annotated ``deployment.kubernetes.io/revision``;
  StatefulSet/DaemonSet revisions are ControllerRevisions (Kubernetes docs, "Deployments",
  "StatefulSets"). Pods of a revision carry its ``pod-template-hash`` /
  ``controller-revision-hash`` label, and their ``imageID`` holds the digest actually run.
- Helm 3 keeps one Secret per release revision (``sh.helm.release.v1.<name>.v<N>``).
- GPU driver and CUDA versions come from GPU feature discovery labels
  (``nvidia.com/cuda.driver.*``, ``nvidia.com/cuda.runtime.*``; NVIDIA GFD README).
- Exit code 137 = SIGKILL (128 + 9), usually the OOM killer; ``OOMKilled`` is the
  kubelet's reason for it (Kubernetes docs, "Assign Memory Resources").
- The handbook's release checklist (seed 000, 场景六): compare revision, tokenizer/config,
  quantization, engine parameters and image digest; check that readiness covers model
  loading and warm-up; mixed old/new replicas.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from itertools import pairwise
from typing import Any

from pydantic import BaseModel, Field

from cockpit.i18n import in_both, name_of
from cockpit.incident import Change
from cockpit.models.kube import (
    ConfigMapLite,
    ContainerSpec,
    EventLite,
    HelmRelease,
    NodeLite,
    PodLite,
    PodSpecLite,
    Revision,
)
from cockpit.models.messages import Arg, Msg
from cockpit.redact import MASK, masked

ENGINE_PARAMS = (
    "--max-num-seqs",
    "--max-model-len",
    "--gpu-memory-utilization",
    "--quantization",
    "--tokenizer",
    "--revision",
    "--tokenizer-revision",
    "--code-revision",
    "--model",
    "--served-model-name",
    "--tensor-parallel-size",
    "--pipeline-parallel-size",
    "--max-num-batched-tokens",
    "--enable-chunked-prefill",
    "--enable-prefix-caching",
    "--kv-cache-dtype",
    "--dtype",
    "--chat-template",
    "--generation-config",
    "--mem-fraction-static",
    "--max-running-requests",
    "--max-total-tokens",
    "--max-batch-prefill-tokens",
    "--speculative-model",
)
"""Engine flags of vLLM / SGLang / TGI that change memory, batching or outputs."""

GFD_DRIVER = "nvidia.com/cuda.driver-version.full"
GFD_CUDA = "nvidia.com/cuda.runtime-version.full"


class DiffLine(BaseModel):
    """One changed field: ``field`` went from ``old`` to ``new`` (``""`` = absent)."""

    field: str
    old: str = ""
    new: str = ""
    engine: bool = False
    """An engine parameter (memory, batching, model/tokenizer revision, quantization)."""

    def text(self) -> str:
        """``field: old → new`` (``+``/``-`` for added/removed); a secret (masked where
        it entered, :mod:`cockpit.redact`) is ``field: ••• (changed)``."""
        if masked(self.old) or masked(self.new):
            return f"{self.field}: {MASK} (changed)"
        if not self.old:
            return f"+ {self.field}: {self.new}"
        if not self.new:
            return f"- {self.field}: {self.old}"
        return f"{self.field}: {self.old} → {self.new}"


class ChangeItem(BaseModel):
    """A change or event for the timeline.

    Attributes:
        key: Stable identity (kind + object + revision) for de-duplication.
        at: When (UTC); ``None`` when the API keeps no time for it (cordon).
        kind: ``rollout | helm | node | config | restart | event | node_condition``, and
            from metrics history (:mod:`cockpit.analysis.history`) also ``readiness |
            allocatable | xid | stopped | alert``.
        summary: One line (English; ``message`` renders it in either language).
        diff: Changed fields (rollouts, Helm values, nodes).
        detail: Extra text (event message, termination message).
        in_window: Whether ``at`` falls inside the incident window.
        until: When it ended (a rollout's last old pod gone); None = a moment, or open.
        origin: ``kubernetes`` (read from the API) or ``metrics`` (derived from history).
        message: The summary as a translatable message (items from metrics history).
        summary_i18n: The summary in each language, for an item read from the API whose
            words cockpit writes around the object's own names (``node gpu-a cordoned``).
    """

    key: str
    at: datetime | None = None
    kind: str
    summary: str
    diff: list[DiffLine] = Field(default_factory=list)
    detail: str = ""
    in_window: bool = True
    severity: str = "info"
    until: datetime | None = None
    origin: str = "kubernetes"
    message: Msg | None = None
    summary_i18n: dict[str, str] = Field(default_factory=dict, exclude=True)

    def text(self, lang: str) -> str:
        """The summary in ``lang``."""
        if self.message is not None:
            return self.message.text(lang)
        return self.summary_i18n.get(lang) or self.summary

    def words(self) -> dict[str, str]:
        """The summary in each language where cockpit worded it (:attr:`message` or
        :attr:`summary_i18n`), empty where it is the cluster's own text."""
        return in_both(self.text) if self.message is not None or self.summary_i18n else {}

    @property
    def event(self) -> str:
        """The event key of what the item records when other sources tell it too (an
        alert firing, :func:`cockpit.incident.alert_event`); empty otherwise."""
        from cockpit.incident import alert_event

        name = self.message.args.get("alert") if self.message is not None else None
        return alert_event(str(name)) if self.kind == "alert" and name else ""

    def detail_text(self) -> str:
        """Diff lines then detail, one per line."""
        lines = [d.text() for d in self.diff]
        if self.detail:
            lines.append(self.detail)
        return "\n".join(lines)

    def to_change(self) -> Change:
        """As an incident :class:`~cockpit.incident.Change` (最近变更), keeping its kind (a
        node change of the driver or CUDA version is ``driver``): B's list, B's table and
        the export name it the same way (:func:`kind_name`); a summary cockpit words
        (:attr:`message`) is kept in both languages (``summary_i18n``)."""
        kind = self.kind or "manual"
        if self.kind == "node" and any(d.field in ("driver", "cuda") for d in self.diff):
            kind = "driver"
        return Change(
            at=self.at,
            kind=kind,
            summary=self.summary,
            summary_i18n=self.words(),
            detail=self.detail_text(),
            source=self.origin,
            event=self.event,
        )


def recorded_change(changes: list[Change], item: ChangeItem) -> Change | None:
    """The incident's change that records ``item`` (same kind, summary and time, as
    :meth:`cockpit.session.IncidentSession.add_change` deduplicates), or ``None``."""
    want = item.to_change()
    return next(
        (c for c in changes if (c.kind, c.summary, c.at) == (want.kind, want.summary, want.at)),
        None,
    )


def time_order(change: Change) -> tuple[bool, float]:
    """The one order of changes (B's table, the export): by time, changes without a time
    last; a suspect mark does not move a change."""
    return (change.at is None, change.at.timestamp() if change.at else 0.0)


def table_changes(changes: list[Change], found: list[ChangeItem]) -> list[tuple[str, Change]]:
    """Step B's "Changes" table: every change the incident holds and every change B found
    and lists (an alert, a restart, a readiness flip) that it does not hold yet, one row
    each, time-ordered (no time last). The count B says it found is the number of rows
    that came from ``found``, marked or not.

    Returns:
        ``(row key, change)``: the change's id when the incident holds it, else
        ``found:<item key>`` with the change the item would record (not added).
    """
    rows = [(c.id, c) for c in changes]
    for item in found:
        if recorded_change(changes, item) is None:
            rows.append((f"found:{item.key}", item.to_change()))
    return sorted(rows, key=lambda r: time_order(r[1]))


def kind_name(kind: str, lang: str) -> str:
    """The one name of a change kind (``xid`` → ``Xid``, ``stopped`` → ``stopped
    reporting``, ``manual`` → ``other``) in ``lang``, read by B's change list and table,
    the Kubernetes timeline panel and the export: the catalogue's ``chg.kind.<kind>``, else
    the kind itself (a kind written by a newer version)."""
    return name_of("chg.kind", kind, lang)


def timeline_line(item: ChangeItem, lang: str) -> str:
    """The Kubernetes timeline panel's line of an item: ``11-29 13:40:00 ✗ [Xid] …`` (its
    severity's mark, :func:`kind_name`, the summary in ``lang``)."""
    mark = {"problem": "✗", "warn": "!", "info": "·"}.get(item.severity, "·")
    at = item.at.strftime("%m-%d %H:%M:%S") if item.at is not None else "--"
    return f"{at} {mark} [{kind_name(item.kind, lang)}] {item.text(lang)}"


def _within(at: datetime | None, since: datetime | None, until: datetime | None) -> bool:
    if at is None:
        return False
    if since is not None and at < since:
        return False
    return not (until is not None and at > until)


# -- spec diffs ----------------------------------------------------------------------------------
def parse_args(args: list[str]) -> tuple[dict[str, str], list[str]]:
    """``--flag value`` / ``--flag=value`` / bare ``--flag`` → ``{flag: value}``; the rest
    (positional arguments) in order."""
    flags: dict[str, str] = {}
    rest: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("--"):
            if "=" in a:
                k, v = a.split("=", 1)
                flags[k] = v
            elif i + 1 < len(args) and not args[i + 1].startswith("--"):
                flags[a] = args[i + 1]
                i += 1
            else:
                flags[a] = "true"
        else:
            rest.append(a)
        i += 1
    return flags, rest


def _probe_text(p: dict[str, Any] | None) -> str:
    return json.dumps(p, sort_keys=True, separators=(",", ":")) if p else ""


def _split_image(image: str) -> tuple[str, str]:
    if "@" in image:
        name, digest = image.split("@", 1)
        return name, digest
    return image, ""


def diff_containers(
    old: ContainerSpec,
    new: ContainerSpec,
    old_digest: str = "",
    new_digest: str = "",
    prefix: str = "",
) -> list[DiffLine]:
    """Differences between two versions of one container: image and digest, args
    (parameter by parameter), command, env, envFrom, resources, probes."""
    out: list[DiffLine] = []
    p = prefix
    oi, od = _split_image(old.image)
    ni, nd = _split_image(new.image)
    od, nd = od or old_digest, nd or new_digest
    if oi != ni:
        out.append(DiffLine(field=f"{p}image", old=oi, new=ni))
    if od != nd and (od or nd):
        out.append(DiffLine(field=f"{p}digest", old=od or "?", new=nd or "?"))
    if old.command != new.command:
        out.append(
            DiffLine(field=f"{p}command", old=" ".join(old.command), new=" ".join(new.command))
        )
    of, orest = parse_args(old.args)
    nf, nrest = parse_args(new.args)
    for k in sorted(set(of) | set(nf), key=lambda x: (x not in ENGINE_PARAMS, x)):
        if of.get(k) != nf.get(k):
            out.append(
                DiffLine(
                    field=f"{p}{k}", old=of.get(k, ""), new=nf.get(k, ""), engine=k in ENGINE_PARAMS
                )
            )
    if orest != nrest:
        out.append(DiffLine(field=f"{p}args", old=" ".join(orest), new=" ".join(nrest)))
    oenv = {e.name: e.value or (f"<{e.value_from}>" if e.value_from else "") for e in old.env}
    nenv = {e.name: e.value or (f"<{e.value_from}>" if e.value_from else "") for e in new.env}
    for k in sorted(set(oenv) | set(nenv)):
        if oenv.get(k) != nenv.get(k):
            out.append(DiffLine(field=f"{p}env {k}", old=oenv.get(k, ""), new=nenv.get(k, "")))
    if old.env_from != new.env_from:
        out.append(
            DiffLine(field=f"{p}envFrom", old=", ".join(old.env_from), new=", ".join(new.env_from))
        )
    for kind, o, n in (
        ("requests", old.requests, new.requests),
        ("limits", old.limits, new.limits),
    ):
        for k in sorted(set(o) | set(n)):
            if o.get(k) != n.get(k):
                out.append(DiffLine(field=f"{p}{kind}.{k}", old=o.get(k, ""), new=n.get(k, "")))
    for name, o2, n2 in (
        ("readinessProbe", old.readiness_probe, new.readiness_probe),
        ("livenessProbe", old.liveness_probe, new.liveness_probe),
        ("startupProbe", old.startup_probe, new.startup_probe),
    ):
        if _probe_text(o2) != _probe_text(n2):
            out.append(DiffLine(field=f"{p}{name}", old=_probe_text(o2), new=_probe_text(n2)))
    return out


def diff_pod_specs(
    old: PodSpecLite,
    new: PodSpecLite,
    old_digests: dict[str, str] | None = None,
    new_digests: dict[str, str] | None = None,
) -> list[DiffLine]:
    """Differences between two pod templates, container by container (by name), with the
    digests actually run (``{container: sha256:…}`` from the revisions' pods)."""
    out: list[DiffLine] = []
    oc = {c.name: c for c in old.containers}
    nc = {c.name: c for c in new.containers}
    multi = len(set(oc) | set(nc)) > 1
    for name in [*oc, *[n for n in nc if n not in oc]]:
        pre = f"{name}: " if multi else ""
        if name not in nc:
            out.append(DiffLine(field=f"container {name}", old=oc[name].image, new=""))
        elif name not in oc:
            out.append(DiffLine(field=f"container {name}", old="", new=nc[name].image))
        else:
            out += diff_containers(
                oc[name],
                nc[name],
                (old_digests or {}).get(name, ""),
                (new_digests or {}).get(name, ""),
                pre,
            )
    if old.node_selector != new.node_selector:
        out.append(
            DiffLine(
                field="nodeSelector",
                old=json.dumps(old.node_selector),
                new=json.dumps(new.node_selector),
            )
        )
    if old.config_maps != new.config_maps:
        out.append(
            DiffLine(
                field="configMaps", old=", ".join(old.config_maps), new=", ".join(new.config_maps)
            )
        )
    return out


def _digests(pods: list[PodLite], rev: Revision) -> dict[str, str]:
    out: dict[str, str] = {}
    for p in pods:
        if rev.template_hash and (
            p.meta.labels.get("pod-template-hash") == rev.template_hash
            or p.meta.labels.get("controller-revision-hash") == rev.template_hash
            or any(o.name == rev.meta.name for o in p.meta.owners)
        ):
            for s in p.container_statuses:
                if s.digest:
                    out.setdefault(s.name, s.digest)
    return out


def _summary_bits(diff: list[DiffLine], limit: int = 4) -> str:
    key = [d for d in diff if d.field.endswith(("image", "digest")) or d.engine]
    rest = [d for d in diff if d not in key]
    bits = [d.text() for d in (key + rest)[:limit]]
    more = len(diff) - len(bits)
    return "; ".join(bits) + (f"; +{more} more" if more > 0 else "")


def _summarised(key: str, /, **args: Arg) -> dict[str, Any]:
    """``summary`` (English) and ``summary_i18n`` of a :class:`ChangeItem`: the message
    ``key`` with ``args`` (object names and technical bits, as they are) in each
    language."""
    words = in_both(Msg(key=key, args=args).text)
    return {"summary": words["en"], "summary_i18n": words}


def rollout_changes(
    revisions: list[Revision],
    pods: list[PodLite],
    since: datetime | None = None,
    until: datetime | None = None,
) -> list[ChangeItem]:
    """One item per new revision of each workload (revision N-1 → N), with the diff.

    Items outside the window are returned with ``in_window=False`` (the UI can hide them).
    """
    groups: dict[tuple[str, str, str], list[Revision]] = {}
    for r in revisions:
        if r.owner:
            groups.setdefault((r.meta.namespace, r.owner_kind, r.owner), []).append(r)
    out: list[ChangeItem] = []
    for (ns, kind, owner), revs in groups.items():
        revs.sort(key=lambda r: r.revision)
        for old, new in pairwise(revs):
            diff = diff_pod_specs(
                old.template, new.template, _digests(pods, old), _digests(pods, new)
            )
            at = new.meta.created
            out.append(
                ChangeItem(
                    key=f"rollout/{ns}/{kind}/{owner}/{new.revision}",
                    at=at,
                    kind="rollout",
                    **_summarised(
                        "kube.change.rollout",
                        kind=kind,
                        ns=ns,
                        owner=owner,
                        old=str(old.revision),
                        new=str(new.revision),
                        bits=_summary_bits(diff) or Msg(key="kube.change.no_template_change"),
                    ),
                    diff=diff,
                    detail=f"change-cause: {new.change_cause}" if new.change_cause else "",
                    in_window=_within(at, since, until),
                    severity="warn",
                )
            )
    return out


def _flatten(prefix: str, value: Any, out: dict[str, str]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    else:
        out[prefix] = json.dumps(value) if not isinstance(value, str) else value


def diff_values(old: dict[str, Any], new: dict[str, Any]) -> list[DiffLine]:
    """Helm values diff on flattened dotted keys (``engine.maxNumSeqs: 256 → 512``)."""
    a: dict[str, str] = {}
    b: dict[str, str] = {}
    _flatten("", old, a)
    _flatten("", new, b)
    return [
        DiffLine(field=k, old=a.get(k, ""), new=b.get(k, ""))
        for k in sorted(set(a) | set(b))
        if a.get(k) != b.get(k)
    ]


def helm_changes(
    releases: list[HelmRelease], since: datetime | None = None, until: datetime | None = None
) -> list[ChangeItem]:
    """One item per Helm release revision after the first: chart and app version, values diff."""
    groups: dict[tuple[str, str], list[HelmRelease]] = {}
    for r in releases:
        groups.setdefault((r.namespace, r.name), []).append(r)
    out: list[ChangeItem] = []
    for (ns, name), rels in groups.items():
        rels.sort(key=lambda r: r.version)
        for old, new in pairwise(rels):
            diff: list[DiffLine] = []
            if old.chart_version != new.chart_version or old.chart != new.chart:
                diff.append(
                    DiffLine(
                        field="chart",
                        old=f"{old.chart}-{old.chart_version}",
                        new=f"{new.chart}-{new.chart_version}",
                    )
                )
            if old.app_version != new.app_version:
                diff.append(DiffLine(field="appVersion", old=old.app_version, new=new.app_version))
            diff += [
                DiffLine(field=f"values.{d.field}", old=d.old, new=d.new)
                for d in diff_values(old.values, new.values)
            ]
            out.append(
                ChangeItem(
                    key=f"helm/{ns}/{name}/{new.version}",
                    at=new.deployed_at,
                    kind="helm",
                    **_summarised(
                        "kube.change.helm",
                        ns=ns,
                        name=name,
                        old=str(old.version),
                        new=str(new.version),
                        status=new.status,
                        bits=_summary_bits(diff, 3),
                    ),
                    diff=diff,
                    detail=new.description,
                    in_window=_within(new.deployed_at, since, until),
                    severity="warn",
                )
            )
    return out


def _majority(values: dict[str, str]) -> str:
    counts: dict[str, int] = {}
    for v in values.values():
        counts[v] = counts.get(v, 0) + 1
    return max(counts, key=lambda v: (counts[v], v)) if counts else ""


def node_changes(
    nodes: list[NodeLite],
    events: list[EventLite],
    since: datetime | None = None,
    until: datetime | None = None,
) -> list[ChangeItem]:
    """New nodes, removed nodes (node-controller events), NotReady transitions, cordons,
    and nodes whose driver / CUDA / kernel / container runtime differs from the majority."""
    out: list[ChangeItem] = []
    versions: dict[str, dict[str, str]] = {"driver": {}, "cuda": {}, "kernel": {}, "runtime": {}}
    for n in nodes:
        lb = n.meta.labels
        drv = lb.get(GFD_DRIVER) or ".".join(
            x
            for x in (
                lb.get("nvidia.com/cuda.driver.major"),
                lb.get("nvidia.com/cuda.driver.minor"),
                lb.get("nvidia.com/cuda.driver.rev"),
            )
            if x
        )
        cuda = lb.get(GFD_CUDA) or ".".join(
            x
            for x in (
                lb.get("nvidia.com/cuda.runtime.major"),
                lb.get("nvidia.com/cuda.runtime.minor"),
            )
            if x
        )
        if drv:
            versions["driver"][n.meta.name] = drv
        if cuda:
            versions["cuda"][n.meta.name] = cuda
        if n.info.kernel_version:
            versions["kernel"][n.meta.name] = n.info.kernel_version
        if n.info.container_runtime_version:
            versions["runtime"][n.meta.name] = n.info.container_runtime_version
    majority = {k: _majority(v) for k, v in versions.items()}
    for n in nodes:
        name = n.meta.name
        vdiff = [
            DiffLine(field=k, old=majority[k], new=versions[k][name])
            for k in ("driver", "cuda", "kernel", "runtime")
            if name in versions[k] and versions[k][name] != majority[k]
        ]
        if _within(n.meta.created, since, until):
            ver = ", ".join(
                f"{k} {versions[k].get(name, '?')}"
                for k in ("driver", "cuda", "kernel", "runtime")
                if name in versions[k]
            )
            out.append(
                ChangeItem(
                    key=f"node/{name}/new",
                    at=n.meta.created,
                    kind="node",
                    **_summarised("kube.change.node_joined", name=name, ver=ver),
                    diff=vdiff,
                    severity="warn" if vdiff else "info",
                )
            )
        elif vdiff:
            out.append(
                ChangeItem(
                    key=f"node/{name}/versions",
                    at=n.meta.created,
                    kind="node",
                    **_summarised(
                        "kube.change.node_differs",
                        name=name,
                        diffs="; ".join(d.text() for d in vdiff),
                    ),
                    diff=vdiff,
                    in_window=False,
                    severity="warn",
                )
            )
        if n.unschedulable:
            ev = next(
                (
                    e
                    for e in events
                    if e.kind == "Node" and e.name == name and e.reason == "NodeNotSchedulable"
                ),
                None,
            )
            at = ev.when if ev else None
            out.append(
                ChangeItem(
                    key=f"node/{name}/cordon",
                    at=at,
                    kind="node",
                    **_summarised("kube.change.node_cordoned", name=name),
                    in_window=_within(at, since, until) if at else True,
                    severity="warn",
                )
            )
        cap = n.capacity.get("nvidia.com/gpu")
        alloc = n.allocatable.get("nvidia.com/gpu")
        if cap and alloc and cap != alloc:
            out.append(
                ChangeItem(
                    key=f"node/{name}/gpu-unhealthy",
                    at=None,
                    kind="node",
                    **_summarised(
                        "kube.change.node_gpu_unhealthy", name=name, alloc=str(alloc), cap=str(cap)
                    ),
                    diff=[DiffLine(field="allocatable nvidia.com/gpu", old=cap, new=alloc)],
                    severity="problem",
                )
            )
    for e in events:
        if (
            e.kind == "Node"
            and e.reason in ("RemovingNode", "DeletingNode", "NodeRemoved")
            and _within(e.when, since, until)
        ):
            out.append(
                ChangeItem(
                    key=f"node/{e.name}/removed/{e.when}",
                    at=e.when,
                    kind="node",
                    **_summarised("kube.change.node_removed", name=e.name, message=e.message),
                    severity="warn",
                )
            )
    return out


def node_condition_items(
    nodes: list[NodeLite], since: datetime | None = None, until: datetime | None = None
) -> list[ChangeItem]:
    """Node condition transitions inside the window (Ready, MemoryPressure, DiskPressure…)."""
    out: list[ChangeItem] = []
    for n in nodes:
        for c in n.conditions:
            if not _within(c.last_transition, since, until):
                continue
            bad = (c.type == "Ready" and c.status != "True") or (
                c.type != "Ready" and c.status == "True"
            )
            state = (
                ("NotReady" if c.status == "False" else "Unknown")
                if c.type == "Ready" and bad
                else f"{c.type}={c.status}"
            )
            out.append(
                ChangeItem(
                    key=f"nodecond/{n.meta.name}/{c.type}/{c.last_transition}",
                    at=c.last_transition,
                    kind="node_condition",
                    **_summarised(
                        "kube.change.node_condition_reason"
                        if c.reason
                        else "kube.change.node_condition",
                        name=n.meta.name,
                        state=state,
                        reason=c.reason,
                    ),
                    detail=c.message,
                    severity="problem" if bad else "info",
                )
            )
    return out


def config_changes(
    configmaps: list[ConfigMapLite],
    pods: list[PodLite],
    since: datetime | None = None,
    until: datetime | None = None,
) -> list[ChangeItem]:
    """ConfigMaps referenced by the pods, with their last change time (managedFields)."""
    used: dict[str, list[str]] = {}
    for p in pods:
        for cm_name in p.spec.config_maps:
            used.setdefault(f"{p.meta.namespace}/{cm_name}", []).append(p.meta.name)
    out: list[ChangeItem] = []
    for cm in configmaps:
        key = f"{cm.meta.namespace}/{cm.meta.name}"
        if key not in used:
            continue
        at = cm.changed_at
        out.append(
            ChangeItem(
                key=f"config/{key}/{at}",
                at=at,
                kind="config",
                **_summarised("kube.change.configmap", key=key, n=len(used[key])),
                detail="keys: "
                + ", ".join(cm.keys)
                + "; pods: "
                + ", ".join(sorted(used[key])[:5]),
                in_window=_within(at, since, until),
                severity="warn" if _within(at, since, until) else "info",
            )
        )
    return out


def restart_items(
    pods: list[PodLite], since: datetime | None = None, until: datetime | None = None
) -> list[ChangeItem]:
    """Container restarts with reason and exit code (OOMKilled, 137, non-zero)."""
    out: list[ChangeItem] = []
    for p in pods:
        for s in p.container_statuses:
            t = s.last_terminated
            if s.restart_count <= 0 and t is None:
                continue
            at = (t.finished_at if t else None) or s.running_since
            reason = t.reason if t else ""
            code = t.exit_code if t else None
            what: str | Msg = reason or (Msg(key="kube.change.killed_oom") if code == 137 else "")
            counted = f"restarts={s.restart_count}"
            ended = f", exit {code}" if code is not None else ""
            sev = (
                "problem"
                if reason == "OOMKilled" or code == 137 or (code not in (None, 0))
                else "warn"
            )
            out.append(
                ChangeItem(
                    key=f"restart/{p.meta.namespace}/{p.meta.name}/{s.name}/{at}",
                    at=at,
                    kind="restart",
                    **_summarised(
                        "kube.change.restart_what" if what else "kube.change.restart",
                        ns=p.meta.namespace,
                        pod=p.meta.name,
                        container=s.name,
                        counted=counted,
                        what=what,
                        ended=ended,
                    ),
                    detail=t.message if t else "",
                    in_window=_within(at, since, until),
                    severity=sev,
                )
            )
    return out


def warning_event_items(
    events: list[EventLite], since: datetime | None = None, until: datetime | None = None
) -> list[ChangeItem]:
    """Kubernetes Warning events inside the window (newest occurrence)."""
    out: list[ChangeItem] = []
    for e in events:
        if e.type != "Warning" or not _within(e.when, since, until):
            continue
        times = f" (×{e.count})" if e.count > 1 else ""
        out.append(
            ChangeItem(
                key=f"event/{e.meta.namespace}/{e.meta.name}",
                at=e.when,
                kind="event",
                summary=f"{e.reason} {e.kind}/{e.name}{times}: {e.message[:160]}",
                detail=e.message,
                severity="warn",
            )
        )
    return out


def timeline(items: list[ChangeItem]) -> list[ChangeItem]:
    """Items in time order (unknown times last), de-duplicated by key."""
    seen: dict[str, ChangeItem] = {}
    for it in items:
        seen.setdefault(it.key, it)
    known = sorted((i for i in seen.values() if i.at is not None), key=lambda i: (i.at, i.kind))
    return known + [i for i in seen.values() if i.at is None]


# -- bad release ---------------------------------------------------------------------------------
READY_MARKERS = (
    re.compile(r"Application startup complete"),
    re.compile(r"Uvicorn running on"),
    re.compile(r"The server is fired up and ready to roll"),
    re.compile(r"\bConnected\b.*\bwebserver\b|Starting Webserver", re.IGNORECASE),
    re.compile(r"Started GRPCInferenceService|Started HTTPService"),
)
"""Lines a model server logs once it can serve: uvicorn (vLLM's OpenAI server), SGLang,
TGI, Triton."""

_TS = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}))\s")


def ready_logged_at(log_with_timestamps: str) -> datetime | None:
    """Time of the first "ready to serve" line in a log fetched with ``timestamps=true``."""
    from cockpit.models.kube import parse_time

    for line in log_with_timestamps.splitlines():
        m = _TS.match(line)
        if m and any(p.search(line) for p in READY_MARKERS):
            return parse_time(m.group(1))
    return None


class WarmupCheck(BaseModel):
    """Readiness vs warm-up for one pod.

    Attributes:
        ready_at: ``Ready`` condition transition.
        serving_at: First ready line in the log (``None`` = not logged / log not read).
        early_s: Seconds the pod was Ready before the server logged ready (>0 is the
            readiness-before-warm-up problem of case roll-02).
    """

    pod: str
    ready_at: datetime | None = None
    serving_at: datetime | None = None
    early_s: float | None = None


class ReleaseComparison(BaseModel):
    """Old vs new revision of one workload, side by side."""

    workload: str
    old: Revision | None = None
    new: Revision | None = None
    diff: list[DiffLine] = Field(default_factory=list)
    pods_per_revision: dict[str, int] = Field(default_factory=dict)
    mixed: bool = False
    warmup: list[WarmupCheck] = Field(default_factory=list)
    restarts_new: int = 0
    restarts_old: int = 0


def _pods_of(rev: Revision, pods: list[PodLite]) -> list[PodLite]:
    return [
        p
        for p in pods
        if (
            rev.template_hash
            and (
                p.meta.labels.get("pod-template-hash") == rev.template_hash
                or p.meta.labels.get("controller-revision-hash") == rev.template_hash
            )
        )
        or any(o.name == rev.meta.name for o in p.meta.owners)
    ]


def compare_release(
    workload: str,
    revisions: list[Revision],
    pods: list[PodLite],
    logs: dict[str, str] | None = None,
) -> ReleaseComparison:
    """Compare the two newest revisions of ``workload`` (``Kind/ns/name`` or ``name``).

    Args:
        logs: ``{pod name: log text fetched with timestamps=true}`` of new-revision pods.
    """
    name = workload.split("/")[-1]
    revs = sorted((r for r in revisions if r.owner == name), key=lambda r: r.revision)
    out = ReleaseComparison(workload=workload)
    if not revs:
        return out
    out.new = revs[-1]
    out.old = revs[-2] if len(revs) > 1 else None
    for r in revs:
        n = len([p for p in _pods_of(r, pods) if p.phase in ("Running", "Pending")])
        if n:
            out.pods_per_revision[str(r.revision)] = n
    out.mixed = len(out.pods_per_revision) > 1
    if out.old is not None:
        out.diff = diff_pod_specs(
            out.old.template, out.new.template, _digests(pods, out.old), _digests(pods, out.new)
        )
        out.restarts_old = sum(
            s.restart_count for p in _pods_of(out.old, pods) for s in p.container_statuses
        )
    new_pods = _pods_of(out.new, pods)
    out.restarts_new = sum(s.restart_count for p in new_pods for s in p.container_statuses)
    for p in new_pods:
        cond = p.condition("Ready")
        ready = cond.last_transition if cond and cond.status == "True" else None
        serving = (
            ready_logged_at((logs or {}).get(p.meta.name, ""))
            if logs and p.meta.name in logs
            else None
        )
        early = (serving - ready).total_seconds() if ready and serving else None
        out.warmup.append(
            WarmupCheck(pod=p.meta.name, ready_at=ready, serving_at=serving, early_s=early)
        )
    return out
