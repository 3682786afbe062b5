"""Protect-first mitigations as exact commands for the human to copy (never run by cockpit).

Source: seed ``000_98f0f2273dcebb14.txt`` opening rule — "先保护用户与作业，再定位根因：必要时
限流、回滚、隔离坏节点或暂停扩散，随后保全指标、事件、日志和 profile 证据". The kubectl verbs are
from the Kubernetes docs (``kubectl rollout undo|pause``, ``kubectl cordon``/``drain``,
ingress-nginx annotations: ``limit-rps`` counts per client IP and per controller replica;
``global-rate-limit`` and ``global-rate-limit-window`` cap the total with memcached
configured in the controller's ConfigMap — ingress-nginx docs, "Annotations: Rate
Limiting / Global Rate Limiting" — and were removed in ingress-nginx v1.12
(kubernetes/ingress-nginx#11851, listed in the breaking changes of #10186), so they are
offered for older controllers only, with a load balancer in front as the way to cap the
total on newer ones). ``kubectl scale`` and ``kubectl delete pod`` (the ReplicaSet makes a
new one; cordon the node first so a pod of a faulty GPU is not placed there again) are
from the same docs.
"""

from __future__ import annotations

import math

from pydantic import BaseModel

from cockpit.analysis.golden import SignalSummary
from cockpit.commandline import arg
from cockpit.incident import ServiceScope
from cockpit.redact import public_url


class Mitigation(BaseModel):
    """One protect-first option.

    Attributes:
        key: ``record`` | ``rate_limit`` | ``rollback`` | ``isolate_node`` |
            ``pause_rollout`` | ``scale_out`` | ``delete_pod``.
        commands: The commands, one per line, with every value the scope knows filled in;
            unknown values stay as ``<PLACEHOLDER>`` so nothing wrong is copied silently.
        placeholders: Names of the placeholders still to fill.
    """

    key: str
    commands: list[str]
    placeholders: list[str]


def record_flags(
    *,
    prometheus_url: str = "",
    namespace: str = "",
    deployment: str = "",
    selector: str = "",
    model: str = "",
    context: str = "",
    kubeconfig: str = "",
    at: str = "",
) -> list[str]:
    """The ``cockpit record`` options for the sources and time a session reads: a command
    copied out of the app must record what the app shows, whatever flags, environment or
    config file the app was started with (``--at`` when the session looks at the past)."""
    out: list[str] = []
    for flag, value in (
        # The command is shown, copied and kept in the timeline: never with credentials.
        ("--prometheus-url", public_url(prometheus_url)),
        ("-n", namespace),
        ("--deployment", deployment),
        ("-l", "" if deployment else selector),
        ("--model", model),
        ("--context", context),
        ("--kubeconfig", kubeconfig),
        ("--at", at),
    ):
        if value:
            out += [flag, value]
    return out


DEMAND_ORDER = ("access.qps", "serving.qps")
"""The request rates that measure demand, the gateway's first (it counts what clients
sent, failed requests too), then the engine's."""


def demand_ratio(summaries: list[SignalSummary]) -> float | None:
    """Step C's request rate now ÷ its baseline (the first of :data:`DEMAND_ORDER` with
    both), as C computed it; ``None`` when neither is known."""
    by_signal = {s.signal: s for s in summaries}
    for sid in DEMAND_ORDER:
        s = by_signal.get(sid)
        if s is not None and s.ratio is not None and math.isfinite(s.ratio):
            return s.ratio
    return None


def scale_target(replicas_now: int, demand_ratio: float | None) -> int | None:
    """The replica count that brings the load per replica back to its baseline's:
    ``ceil(replicas_now × demand_ratio)``, at least one more than now. ``None`` when the
    replica count or the demand ratio (step C's request rate now ÷ its baseline) is not
    known, or demand did not rise (more replicas would not be the answer to a demand
    that did not grow, whatever else is short).

    >>> scale_target(6, 1.6)
    10
    >>> scale_target(6, 1.05)
    7
    """
    if replicas_now < 1 or demand_ratio is None or not 1.0 < demand_ratio < math.inf:
        return None
    return max(replicas_now + 1, math.ceil(replicas_now * demand_ratio - 1e-9))


def _scale_commands(
    ns: str, dep: str, replicas_now: int, demand_ratio: float | None, lang: str
) -> list[str]:
    """``kubectl scale`` with the replica count :func:`scale_target` gives, said in a
    comment line; ``<REPLICAS>`` (with the count now, when known) otherwise. The ratio is
    the one C shows (two decimals), and the count is computed from it as written."""
    from cockpit.i18n import t

    ratio = round(demand_ratio, 2) if demand_ratio is not None else None
    target = scale_target(replicas_now, ratio)
    out = [f"kubectl -n {ns} get deployment/{dep}"]
    if target is not None and ratio is not None:
        out.append(
            "# "
            + t(
                "protect.comment.scale_by_demand",
                lang,
                now=replicas_now,
                ratio=f"{ratio:.2f}",
                target=target,
            )
        )
        out.append(f"kubectl -n {ns} scale deployment/{dep} --replicas={target}")
        return out
    if replicas_now > 0:
        key = "replicas_now" if ratio is None else "replicas_now_flat"
        out.append("# " + t(f"protect.comment.{key}", lang, now=replicas_now))
    out.append(f"kubectl -n {ns} scale deployment/{dep} --replicas=<REPLICAS>")
    return out


def mitigations(
    scope: ServiceScope,
    *,
    incident_id: str = "",
    node: str = "",
    pod: str = "",
    ingress: str = "",
    window: str = "2h",
    record_flags: list[str] | None = None,
    bundle_path: str = "",
    first: str = "",
    lang: str = "en",
    pod_restarted: bool | None = None,
    replicas_now: int = 0,
    demand_ratio: float | None = None,
) -> list[Mitigation]:
    """The seven protect-first options for ``scope``, evidence preservation first (or the
    option ``first`` names, then evidence preservation).

    Args:
        scope: Namespace/deployment/selector of the service.
        incident_id: Names the evidence bundle file.
        node: A suspect node, when the flow found one.
        pod: A suspect pod (crash-looping, or on a faulty GPU), when the flow found one.
        ingress: The Ingress in front of the service, when known.
        window: How much history ``cockpit record`` keeps.
        record_flags: The options that point ``cockpit record`` at the sources the session
            reads (see :func:`record_flags`), so the copied command records the same
            service, cluster and time.
        bundle_path: In a replay, the evidence bundle itself: preserving the evidence is
            copying it (there is nothing live to record).
        first: The key of the option that matches the current conclusion (see
            :func:`first_for`); listed first.
        lang: The language of the comment lines among the commands (``# …``).
        pod_restarted: Whether the suspect pod's containers restarted in the history read
            (``None``: unknown). Only a restarted container has a ``--previous`` log to
            save (kubectl refuses it otherwise); unknown, it is offered under a comment
            saying when it applies.
        replicas_now: Pods of the Deployment serving at the window's end (the window's
            inventory; ``0``: unknown).
        demand_ratio: Step C's request rate now ÷ its baseline (``None``: unknown); with
            ``replicas_now`` it fills the scale-out count (:func:`scale_target`).
    """
    from cockpit.i18n import t

    ns = arg(scope.namespace, "NAMESPACE")
    dep = arg(scope.deployment, "DEPLOYMENT")
    nd = arg(node, "NODE")
    ing = arg(ingress, "INGRESS")
    pd = arg(pod, "POD")
    bundle = f"incident-{incident_id or 'evidence'}.jsonl.gz"
    sel = f" -l {arg(scope.selector)}" if scope.selector else ""
    flags = "".join(f" {arg(f)}" for f in record_flags or [])
    keep = (
        f"cp {arg(bundle_path)} {bundle}"
        if bundle_path
        else f"cockpit record -o {bundle} --window {window}{flags}"
    )
    opts = [
        Mitigation(
            key="record",
            commands=[
                keep,
                f"kubectl -n {ns} get events --sort-by=.lastTimestamp > events.txt",
                f"kubectl -n {ns} logs{sel or f' deployment/{dep}'} --all-containers "
                "--timestamps --tail=-1 > logs.txt",
            ],
            placeholders=[],
        ),
        Mitigation(
            key="rate_limit",
            commands=[
                f"kubectl -n {ns} annotate ingress {ing} "
                "nginx.ingress.kubernetes.io/limit-rps=<RPS> --overwrite",
                "# " + t("protect.comment.global_rate_limit", lang),
                f"kubectl -n {ns} annotate ingress {ing} "
                "nginx.ingress.kubernetes.io/global-rate-limit=<RPS> "
                "nginx.ingress.kubernetes.io/global-rate-limit-window=1s --overwrite",
            ],
            placeholders=[],
        ),
        Mitigation(
            key="rollback",
            commands=[
                f"kubectl -n {ns} rollout history deployment/{dep}",
                f"kubectl -n {ns} rollout undo deployment/{dep}",
                f"kubectl -n {ns} rollout status deployment/{dep}",
            ],
            placeholders=[],
        ),
        Mitigation(
            key="isolate_node",
            commands=[
                f"kubectl cordon {nd}",
                f"kubectl drain {nd} --ignore-daemonsets --delete-emptydir-data",
            ],
            placeholders=[],
        ),
        Mitigation(
            key="pause_rollout",
            commands=[f"kubectl -n {ns} rollout pause deployment/{dep}"],
            placeholders=[],
        ),
        Mitigation(
            key="scale_out",
            commands=_scale_commands(ns, dep, replicas_now, demand_ratio, lang),
            placeholders=[],
        ),
        Mitigation(
            key="delete_pod",
            commands=[
                # the pod's logs are gone with it: saved first
                *_pod_logs(ns, pd, pod_restarted, lang),
                f"kubectl cordon {nd}",
                f"kubectl -n {ns} delete pod {pd}",
            ],
            placeholders=[],
        ),
    ]
    if first:
        opts.sort(key=lambda o: o.key != first)
    for opt in opts:
        found: list[str] = []
        for cmd in opt.commands:
            for part in cmd.split("<")[1:]:
                name = part.split(">", 1)[0]
                if name and name not in found:
                    found.append(name)
        opt.placeholders = found
    return opts


def _pod_logs(ns: str, pod: str, restarted: bool | None, lang: str) -> list[str]:
    """The commands that save a pod's logs before it is deleted: the crashed container's
    (``--previous``) where it restarted, the running one's where it did not, both with a
    comment on when the first applies where that is unknown."""
    from cockpit.i18n import t

    current = f"kubectl -n {ns} logs {pod} --all-containers --timestamps > {pod}.log"
    previous = (
        f"kubectl -n {ns} logs {pod} --previous --all-containers --timestamps > {pod}-previous.log"
    )
    if restarted is True:
        return [previous]
    if restarted is False:
        return [current]
    return [current, "# " + t("protect.comment.previous_log", lang), previous]


FIRST_BY_SUSPECT = {
    "gpu": "delete_pod",
    "pod": "delete_pod",
    "node": "isolate_node",
    "revision": "rollback",
    "client": "rate_limit",
    "service": "scale_out",
}
"""The mitigation that matches what the suspect is: a faulty GPU or a crash-looping pod →
cordon its node and delete the pod; a bad node → cordon and drain it; a release → roll it
back; a client → rate-limit it; the whole service short of capacity → scale out."""


FIRST_BY_CAUSE = {
    "gpu_lost": "delete_pod",
    "thermal_throttle": "delete_pod",
    "instance_failure": "delete_pod",
    "release": "rollback",
    "kv_cache_overload": "scale_out",
    "demand_surge": "scale_out",
    "long_prompts": "rate_limit",
}
"""The mitigation that matches the most-likely cause
(:mod:`cockpit.analysis.conclusion`): a lost or throttled GPU and a failing instance →
cordon the node and delete the pod; a release → roll it back; capacity (KV cache, more
demand) → scale out; a long-prompt client → rate-limit it. Gateway errors and an unknown
cause name none (the suspect's kind decides)."""


def first_for(suspect_kind: str, cause: str = "") -> str:
    """The key of the mitigation to list first: the one matching the conclusion's
    ``cause`` (:data:`FIRST_BY_CAUSE`), else the one matching a suspect of
    ``suspect_kind`` (:data:`FIRST_BY_SUSPECT`); ``""`` for neither."""
    return FIRST_BY_CAUSE.get(cause, "") or FIRST_BY_SUSPECT.get(suspect_kind, "")
