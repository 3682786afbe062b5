"""Most likely, said once: one conclusion from steps C–F and the window's history (pure).

The conclusion names the primary layer, the scope, the suspect entity and the cause, with
a confidence and the alternatives still open; each part cites the evidence it rests on
(the same verdicts, blast radius, load findings and history items the screens show).

The causes and their rules, in the order they are tried (the seed's "先定位层，再定位点"
and the flowchart's branches; the first cause whose direct evidence is present wins, the
others whose evidence is present stay open as alternatives):

``gpu_lost``
    A GPU whose DCGM series reported earlier in the window and stopped (history), or an
    Xid that marks a GPU lost (79: fallen off the bus; xid.json). Layer hardware, scope
    one GPU, suspect that GPU and the pod that held it.
``release``
    A rollout inside the window (a new revision appeared, history) while serving signals
    are anomalous or changed. Layer serving, scope one revision, suspect old → new.
``thermal_throttle``
    Step D found one GPU and its temperature, clock or throttle signals are the outliers.
    Layer hardware, scope one GPU.
``gateway_errors``
    Gateway 5xx up while the servers' error ratio is not (step F ``gateway_errors``).
    Layer access, scope everything, suspect the gateway.
``kv_cache_overload``
    KV cache at its ceiling or preemptions up (runtime anomalous) with the queue growing.
    Layer runtime, scope everything, suspect the service (capacity).
``demand_surge``
    More requests than in the baseline (step F ``arrival_rate`` fired upward: the arrival
    rate at ≥ ×1.25, golden.py's traffic threshold) while the queue grows or the queue time
    is anomalous. Layer serving, scope everything, suspect the service (capacity). With a
    KV-cache overload it is the same capacity story: its evidence joins that cause's
    instead of standing as an alternative.
``long_prompts``
    The prompt-length mix shifted (step F ``long_prompts``, from the length histogram or
    tokens per request). Layer serving, scope everything, suspect a client.
``instance_failure``
    Step D's suspect restarted or was not ready. Layer infrastructure, one instance.
otherwise ``unknown``, on the first anomalous layer (low confidence).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from cockpit.analysis.blast_radius import UNHEALTHY_LINES, BlastRadius
from cockpit.analysis.changes import ChangeItem
from cockpit.analysis.golden import SignalSummary, reading_msg
from cockpit.analysis.history import WindowInventory, entity_msg
from cockpit.analysis.layers import Drilldown, queue_growing
from cockpit.analysis.load import Finding
from cockpit.models.messages import Msg, msg

Confidence = Literal["high", "medium", "low"]

LOST_XIDS = frozenset({79})
"""Xid codes after which the GPU is gone from the bus (xid.json: 79 "GPU has fallen off
the bus")."""

THERMAL_SIGNALS = (
    "hardware.temp",
    "hardware.sm_clock",
    "hardware.throttle",
    "hardware.thermal_violation",
)
"""The signals of a throttled GPU (seed 003 §四: temperature, SM clock, clock-event reasons)."""


class Suspect(BaseModel):
    """The entity to act on.

    Attributes:
        kind: ``gpu``, ``pod``, ``node``, ``revision``, ``gateway``, ``client``, ``service``
            or ``""``.
        name: How every screen names it (``qwen-chat-…-rp2gj on gpu-node-b GPU 0
            (GPU-5568…)``; ``old → new`` for a release).
        pod, node, gpu_index, uuid: For a GPU or a pod.
        deployment: The workload.
        old_revision, new_revision, old_version, new_version: For a release.
    """

    kind: str = ""
    name: str = ""
    pod: str = ""
    node: str = ""
    gpu_index: str = ""
    uuid: str = ""
    deployment: str = ""
    old_revision: str = ""
    new_revision: str = ""
    old_version: str = ""
    new_version: str = ""


class Alternative(BaseModel):
    """A cause still open, with the evidence for it."""

    cause: str
    evidence: list[Msg] = Field(default_factory=list)


class Conclusion(BaseModel):
    """The one-line "most likely" of steps D and G and ``cockpit analyze``.

    Attributes:
        primary_layer: Where the anomaly was introduced (a layer of step C, or ``""``).
        scope: Step D's scope word (``single_gpu``, ``revision``, ``everything``…).
        suspect: The entity to act on.
        cause: One of the causes of the module docstring, or ``unknown``.
        confidence: ``high`` (direct evidence and the blast radius agree), ``medium``
            (direct evidence only, or alternatives open), ``low`` (no cause found).
        evidence: Per part (``layer``, ``scope``, ``suspect``, ``cause``) the messages it
            rests on.
        alternatives: Other causes whose evidence is also present.
    """

    primary_layer: str = ""
    scope: str = "unknown"
    suspect: Suspect = Field(default_factory=Suspect)
    cause: str = "unknown"
    confidence: Confidence = "low"
    evidence: dict[str, list[Msg]] = Field(default_factory=dict)
    alternatives: list[Alternative] = Field(default_factory=list)

    def line(self) -> Msg:
        """The conclusion as one line (``metrics.likely.line``)."""
        alts = ", ".join(a.cause for a in self.alternatives)
        return msg(
            "metrics.likely.line",
            cause=msg(f"metrics.cause.{self.cause}"),
            layer=msg(f"metrics.layer.{self.primary_layer}") if self.primary_layer else "-",
            scope=msg(f"metrics.scope.{self.scope}"),
            suspect=entity_msg(self.suspect.name) if self.suspect.name else "-",
            confidence=msg(f"metrics.confidence.{self.confidence}"),
            alternatives=msg("metrics.likely.alternatives", causes=_causes(self.alternatives))
            if alts
            else "",
        )

    def text(self, lang: str) -> str:
        """:meth:`line` in ``lang``."""
        return self.line().text(lang)

    def lines(self, lang: str) -> list[str]:
        """The conclusion line, then per part (:data:`PARTS`) up to :data:`SHOWN` lines of
        what it rests on, then each open alternative with its first evidence: what steps D
        and G and ``cockpit analyze``'s text all show."""
        from cockpit.i18n import t

        out = [self.text(lang)]
        for part in PARTS:
            for m in self.evidence.get(part, [])[:SHOWN]:
                out.append(f"  · {t(f'metrics.likely.part.{part}', lang)}: {m.text(lang)}")
        for a in self.alternatives:
            for m in a.evidence[:1]:
                out.append(f"  ? {t(f'metrics.cause.{a.cause}', lang)}: {m.text(lang)}")
        return out


PARTS = ("cause", "layer", "scope", "suspect")
"""The parts of a conclusion, in the order they are shown."""
SHOWN = 2
"""Evidence lines shown per part (``cockpit analyze --json`` holds them all)."""


def _causes(alts: list[Alternative]) -> Msg:
    """The alternatives' cause names as one message (each translated, joined)."""
    out = msg(f"metrics.cause.{alts[0].cause}")
    for a in alts[1:]:
        out = msg("metrics.likely.list", first=out, next=msg(f"metrics.cause.{a.cause}"))
    return out


class _Candidate(BaseModel):
    cause: str
    layer: str
    scope: str
    suspect: Suspect
    evidence: dict[str, list[Msg]]
    direct: bool = True


def _by_key(dd: Drilldown) -> dict[str, SignalSummary]:
    return {s.key: s for s in dd.summaries}


def _bad(dd: Drilldown, *signals: str) -> list[SignalSummary]:
    return [s for s in dd.summaries if s.signal in signals and s.verdict == "anomalous"]


def _item_msg(item: ChangeItem) -> Msg:
    return item.message or msg("metrics.likely.item", text=item.summary)


def _gpu_suspect(inv: WindowInventory | None, uuid: str) -> Suspect:
    """A GPU as the suspect, named with its node, index and the pod that last held it."""
    g = inv.gpus.get(uuid) if inv is not None and uuid else None
    if inv is None or g is None:
        return Suspect(kind="gpu", uuid=uuid, name=uuid)
    pod = g.pods[-1] if g.pods else ""
    p = inv.pods.get(pod)
    return Suspect(
        kind="gpu",
        name=inv.name(pod=pod, gpu=uuid),
        pod=pod,
        node=g.node,
        gpu_index=g.index,
        uuid=uuid,
        deployment=p.deployment if p else "",
    )


def _gpu_lost(
    dd: Drilldown, br: BlastRadius, inv: WindowInventory | None, items: list[ChangeItem]
) -> _Candidate | None:
    lost_xid = [
        i
        for i in items
        if i.kind == "xid" and any(i.detail == f"err_code={code}" for code in LOST_XIDS)
    ]
    silent = inv.silent_gpus() if inv is not None else []
    if not silent and not lost_xid:
        return None
    ev: dict[str, list[Msg]] = {"cause": [], "suspect": [], "scope": [], "layer": []}
    ev["cause"] += [_item_msg(i) for i in lost_xid]
    ev["cause"] += [_item_msg(i) for i in items if i.kind == "stopped" and "gpu" in i.key]
    ev["cause"] += [_item_msg(i) for i in items if i.kind == "allocatable"]
    g = silent[0] if silent else None
    if g is None and inv is not None:
        uuid = lost_xid[0].key.split("/")[2] if lost_xid else ""
        g = inv.gpus.get(uuid)
    sus = _gpu_suspect(inv, g.uuid if g is not None else "")
    if g is not None and inv is not None:
        ev["suspect"].append(
            msg("metrics.likely.gpu_held", gpu=inv.name_msg(gpu=g.uuid), pod=sus.pod or "-")
        )
    if br.suspect and br.suspect == sus.pod:
        ev["scope"] += br.line_msgs[:1]
    ev["layer"].append(msg("metrics.likely.layer_hardware_lost"))
    return _Candidate(
        cause="gpu_lost", layer="hardware", scope="single_gpu", suspect=sus, evidence=ev
    )


def _release(
    dd: Drilldown, inv: WindowInventory | None, items: list[ChangeItem]
) -> _Candidate | None:
    rollouts = [i for i in items if i.kind == "rollout" and i.origin == "metrics"]
    if not rollouts:
        rollouts = [i for i in items if i.kind == "rollout" and i.in_window]
    moved = [
        s for s in dd.summaries if s.layer == "serving" and s.verdict in ("anomalous", "changed")
    ]
    if not rollouts or not moved:
        return None
    r = rollouts[-1]
    diff = {d.field: (d.old, d.new) for d in r.diff}
    old, new = diff.get("revision", ("", ""))
    oldv, newv = diff.get("version", ("", ""))
    deployment = ""
    if inv is not None and new in inv.revisions:
        deployment = inv.revisions[new].deployment
    name = f"{inv.revision_name(old) if inv else old} → {inv.revision_name(new) if inv else new}"
    sus = Suspect(
        kind="revision",
        name=name,
        deployment=deployment,
        old_revision=old,
        new_revision=new,
        old_version=oldv,
        new_version=newv,
    )
    strongest = sorted(moved, key=lambda s: -(max(s.ratio, 1 / s.ratio) if s.ratio else 0))[:3]
    ev = {
        "cause": [_item_msg(r)],
        "layer": [reading_msg(s) for s in strongest],
        "scope": [_item_msg(r)],
        "suspect": [_item_msg(r)],
    }
    return _Candidate(cause="release", layer="serving", scope="revision", suspect=sus, evidence=ev)


def _thermal(dd: Drilldown, br: BlastRadius, inv: WindowInventory | None) -> _Candidate | None:
    hot = _bad(dd, *THERMAL_SIGNALS)
    if not hot or br.scope != "single_gpu" or br.suspect_kind != "gpu":
        return None
    sus = _gpu_suspect(inv, br.suspect)
    own = [m for m in br.line_msgs if m.args.get("entity") == br.suspect] or br.line_msgs
    ev = {
        "cause": [reading_msg(s) for s in hot],
        "layer": [reading_msg(s) for s in hot[:1]],
        "scope": own[:3],
        "suspect": own[:3],
    }
    return _Candidate(
        cause="thermal_throttle", layer="hardware", scope="single_gpu", suspect=sus, evidence=ev
    )


def _finding(load: list[Finding], fid: str) -> Finding | None:
    return next((f for f in load if f.id == fid and f.status == "fired"), None)


def _finding_msgs(f: Finding) -> list[Msg]:
    out = list(f.detail)
    if f.note_msg is not None:
        out.append(f.note_msg)
    return out or [msg("metrics.likely.finding", id=f.id)]


def gateway_name(labels: dict[str, str]) -> str:
    """The gateway as every screen names it, from its series' labels (ingress-nginx's
    ``ingress``, ``service``, ``host``, ``controller_namespace``, ``controller_pod``):
    ``ingress qwen-chat-gw (llm.example.internal) → service qwen-chat, controller
    ingress-nginx/ingress-nginx-controller-…``; parts it lacks are left out, ``""`` when it
    has none."""
    parts = []
    if labels.get("ingress"):
        host = f" ({labels['host']})" if labels.get("host") else ""
        parts.append(f"ingress {labels['ingress']}{host}")
    if labels.get("service"):
        parts.append(f"service {labels['service']}")
    head = " → ".join(parts)
    pod = labels.get("controller_pod", "")
    if pod:
        ns = labels.get("controller_namespace", "")
        ctl = f"controller {ns}/{pod}" if ns else f"controller {pod}"
        return f"{head}, {ctl}" if head else ctl
    return head


def _gateway(
    dd: Drilldown, load: list[Finding], gateway: str, gateway_pod: str = ""
) -> _Candidate | None:
    f = _finding(load, "gateway_errors")
    if f is None:
        return None
    bad = _bad(dd, "access.error_ratio_5xx", "access.timeouts")
    ev = {
        "cause": [reading_msg(s) for s in bad] + _finding_msgs(f),
        "layer": [reading_msg(s) for s in bad] or _finding_msgs(f),
        "scope": [msg("evidence.blast.access_only")],
        "suspect": [msg("metrics.likely.gateway", gateway=gateway or "-")],
    }
    return _Candidate(
        cause="gateway_errors",
        layer="access",
        scope="everything",
        suspect=Suspect(kind="gateway", name=gateway, pod=gateway_pod or gateway),
        evidence=ev,
    )


def _kv(dd: Drilldown, deployment: str) -> _Candidate | None:
    kv = _bad(dd, "runtime.kv_cache", "runtime.preemptions")
    queue = _by_key(dd).get("serving.queue:value")
    if not kv or queue is None or not queue_growing(queue):
        return None
    ev = {
        "cause": [reading_msg(s) for s in kv] + [reading_msg(queue)],
        "layer": [reading_msg(s) for s in kv],
        "scope": [msg("metrics.likely.all_replicas")],
        "suspect": [msg("metrics.likely.capacity", deployment=deployment or "-")],
    }
    return _Candidate(
        cause="kv_cache_overload",
        layer="runtime",
        scope="everything",
        suspect=Suspect(kind="service", name=deployment, deployment=deployment),
        evidence=ev,
    )


def _surge(dd: Drilldown, load: list[Finding], deployment: str) -> _Candidate | None:
    f = _finding(load, "arrival_rate")
    if f is None or f.numbers.get("ratio", 0.0) <= 1.0:
        return None
    queue = _by_key(dd).get("serving.queue:value")
    waiting = _bad(dd, "serving.queue_time")
    growing = queue is not None and bool(queue_growing(queue))
    if not growing and not waiting:
        return None
    backed_up = ([queue] if growing and queue is not None else []) + waiting[:1]
    ev = {
        "cause": _finding_msgs(f) + [reading_msg(s) for s in backed_up],
        "layer": [reading_msg(s) for s in backed_up],
        "scope": [msg("metrics.likely.all_replicas")],
        "suspect": [
            msg(
                "metrics.likely.capacity_demand",
                deployment=deployment or "-",
                ratio=f.numbers["ratio"],
            )
        ],
    }
    return _Candidate(
        cause="demand_surge",
        layer="serving",
        scope="everything",
        suspect=Suspect(kind="service", name=deployment, deployment=deployment),
        evidence=ev,
    )


def _long_prompts(dd: Drilldown, load: list[Finding], deployment: str) -> _Candidate | None:
    f = _finding(load, "long_prompts")
    if f is None:
        return None
    ttft = _bad(dd, "serving.ttft", "serving.queue_time")
    ev = {
        "cause": _finding_msgs(f),
        "layer": [reading_msg(s) for s in ttft[:2]] or _finding_msgs(f),
        "scope": [msg("metrics.likely.all_replicas")],
        "suspect": [msg("metrics.likely.client")],
    }
    return _Candidate(
        cause="long_prompts",
        layer="serving",
        scope="everything",
        suspect=Suspect(kind="client", name="", deployment=deployment),
        evidence=ev,
    )


def _instance(br: BlastRadius, inv: WindowInventory | None) -> _Candidate | None:
    if br.suspect_kind != "pod" or not br.line_msgs:
        return None
    if br.line_msgs[0].key not in UNHEALTHY_LINES:
        return None
    name = inv.name(pod=br.suspect) if inv is not None else br.suspect
    return _Candidate(
        cause="instance_failure",
        layer="infrastructure",
        scope="single_instance",
        suspect=Suspect(kind="pod", name=name, pod=br.suspect),
        evidence={k: br.line_msgs[:1] for k in ("cause", "layer", "scope", "suspect")},
    )


def conclude(
    dd: Drilldown,
    br: BlastRadius,
    load: list[Finding],
    inv: WindowInventory | None = None,
    items: list[ChangeItem] | None = None,
    *,
    deployment: str = "",
    gateway: str = "",
    gateway_pod: str = "",
) -> Conclusion:
    """The most likely cause (see the module docstring for the rules and their order).

    Args:
        dd: Step C (verdicts are read as they are, never recomputed).
        br: Step D.
        load: Step F's findings.
        inv, items: The window's inventory and the change list from metrics history
            (and Kubernetes), when collected.
        deployment: The workload in scope (names the service for a capacity cause).
        gateway: The gateway as :func:`gateway_name` names it (else its stack's name),
            the suspect of gateway errors; ``gateway_pod`` its controller pod when known.
    """
    items = items or []
    kv = _kv(dd, deployment)
    surge = _surge(dd, load, deployment)
    if kv is not None and surge is not None:
        # More demand filling the KV cache is one capacity story, told once.
        kv.evidence["cause"] += surge.evidence["cause"][:1]
        surge = None
    found = [
        c
        for c in (
            _gpu_lost(dd, br, inv, items),
            _release(dd, inv, items),
            _thermal(dd, br, inv),
            _gateway(dd, load, gateway, gateway_pod),
            kv,
            surge,
            _long_prompts(dd, load, deployment),
            _instance(br, inv),
        )
        if c is not None
    ]
    if not found:
        bad = [v for v in dd.layers if v.verdict == "anomalous"]
        out = Conclusion(scope=br.scope, cause="unknown", confidence="low")
        if bad:
            out.primary_layer = bad[0].layer
            out.evidence["layer"] = bad[0].line_msgs[:3]
        if br.suspect:
            out.suspect = Suspect(kind=br.suspect_kind, name=br.suspect)
        out.evidence["scope"] = br.line_msgs[:3]
        return out
    best, rest = found[0], found[1:]
    # A replica failing because its GPU was lost is the same story, not an alternative.
    rest = [
        c
        for c in rest
        if not (
            c.cause == "instance_failure" and c.suspect.pod and c.suspect.pod == best.suspect.pod
        )
    ]
    agree = br.scope == best.scope or (
        best.scope == "single_gpu" and br.scope in ("single_instance", "single_gpu")
    )
    confidence: Confidence = "high" if agree and not rest else "medium"
    return Conclusion(
        primary_layer=best.layer,
        scope=best.scope,
        suspect=best.suspect,
        cause=best.cause,
        confidence=confidence,
        evidence=best.evidence,
        alternatives=[
            Alternative(cause=c.cause, evidence=c.evidence.get("cause", [])) for c in rest
        ],
    )
