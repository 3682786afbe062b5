"""Step D: how far does it reach — one GPU, one instance, one node, a node pool, one
revision, or everything — from per-entity values of every anomalous signal.

Method (architecture.md, metrics_kb.md §7.5): compare each entity with the median of its
peers (leave-one-out) and score the difference with the MAD. A z-score is *not* used:
with n replicas and the population σ a single outlier can reach at most √(n−1) (1.73
for 4 replicas), so a fixed z threshold never fires on small deployments.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from cockpit.analysis.golden import BucketEdge
from cockpit.analysis.inventory import Inventory
from cockpit.analysis.stats import max_z, median, robust_score
from cockpit.flow import Branch
from cockpit.models.messages import Arg, Msg, msg, signal_names, unit_suffix
from cockpit.models.signals import SIGNALS

if TYPE_CHECKING:
    from cockpit.analysis.changes import ChangeItem
    from cockpit.analysis.history import RestartCount, WindowInventory

Scope = Literal[
    "single_gpu", "single_instance", "single_node", "node_pool", "revision", "everything", "unknown"
]
SCOPE_ORDER: tuple[Scope, ...] = (
    "single_gpu",
    "single_instance",
    "single_node",
    "node_pool",
    "revision",
    "everything",
)
"""Narrowest first."""

OUTLIER_RATIO = 1.5
"""Ratio to the peer median that makes an outlier (metrics_kb.md §7.5: ">1.5 = outlier
candidate"); its inverse for signals where down is bad."""
OUTLIER_SCORE = 3.5
"""Robust score (|x − median| / 1.4826·MAD) above which a value is unusual (Iglewicz &
Hoaglin's modified z-score cut-off)."""


OUTLIER_ABS: dict[str, float] = {
    "hardware.temp": 10.0,
    "hardware.sm_clock": 200.0,
    "hardware.gpu_util": 20.0,
    "hardware.sm_active": 20.0,
    "runtime.kv_cache": 20.0,
}
"""Signals on a scale where a ratio says little (°C, MHz, %): an absolute gap to the peer
median in the bad direction (display units) counts instead (10 °C, 200 MHz, 20 points)."""


def is_outlier(signal: str, value: float, peer_median: float, score: float | None) -> bool:
    """Whether ``value`` is an outlier against ``peer_median`` for ``signal``.

    The robust score must be ≥ :data:`OUTLIER_SCORE` (or unknown, with under two peers)
    and the gap large in the bad direction: a ratio ≥ 1.5 (≤ 1/1.5 when down is bad), or
    the absolute gap of :data:`OUTLIER_ABS`; peers at zero make any positive value on an
    up-is-bad signal stand out.
    """
    if score is not None and score < OUTLIER_SCORE:
        return False
    info = SIGNALS.get(signal)
    bad = info.bad if info else "up"
    gap = value - peer_median
    if signal in OUTLIER_ABS:
        lim = OUTLIER_ABS[signal]
        return (gap >= lim and bad != "down") or (-gap >= lim and bad != "up")
    if peer_median == 0:
        return value > 0 and bad != "down"
    ratio = value / peer_median
    up = ratio >= OUTLIER_RATIO and bad in ("up", "both")
    down = ratio <= 1 / OUTLIER_RATIO and bad in ("down", "both")
    return up or down


class EntityValue(BaseModel):
    """One entity's value of one signal.

    ``entity`` is the pod name or GPU UUID; ``kind`` says which.
    """

    entity: str
    kind: Literal["pod", "gpu"]
    pod: str = ""
    node: str = ""
    gpu: str = ""
    revision: str = ""
    deployment: str = ""
    value: float
    edge: BucketEdge | None = None
    """For a histogram quantile in its top or lowest bucket, the bound it is only known
    against (``value`` is then what ``histogram_quantile`` answers: the bound, or its
    interpolation inside the lowest bucket)."""


class Breakdown(BaseModel):
    """Per-entity values of one signal (``key`` as in the summaries) and its query."""

    key: str
    signal: str
    unit: str = ""
    query: str = ""
    values: list[EntityValue] = Field(default_factory=list)
    failure: str = ""


class Outlier(BaseModel):
    """An entity that differs from its peers on one signal (ratio and robust score)."""

    key: str
    entity: str
    kind: str
    pod: str = ""
    node: str = ""
    revision: str = ""
    value: float
    peer_median: float
    ratio: float | None
    score: float | None
    peers: int


class SignalScope(BaseModel):
    """The scope one anomalous signal points to, with its outliers."""

    key: str
    scope: Scope
    outliers: list[Outlier] = Field(default_factory=list)
    entities: int = 0
    note: str = ""
    note_msg: Msg | None = None
    unit: str = ""

    def set_note(self, m: Msg) -> None:
        """Set :attr:`note_msg` and its English rendering :attr:`note`."""
        self.note_msg = m
        self.note = m.text("en")


class BlastRadius(BaseModel):
    """The verdict of step D.

    Attributes:
        scope: The decided scope.
        propose: ``E`` (isolate against a healthy cohort) for single GPU / instance / node,
            else ``F`` (shared dependencies and load) — seed 000 flowchart.
        suspect: The entity to isolate (pod name, GPU UUID, node, or the revision of a
            release) when E is proposed.
        suspect_kind: ``pod``, ``gpu``, ``node`` or ``revision``.
        per_signal: The scope each anomalous signal pointed to.
        lines: The numbers behind it, one line per outlier or signal (English).
        line_msgs: The same lines as messages (``evidence.blast.*``) for the UI's language.
        max_z_note: The √(n−1) bound for the largest peer group, as a reminder (English).
        max_z_msg: The same as a message.
        cohort_kind: The cohort E should compare the suspect with (``previous_revision``
            when the scope is one revision: its pod against the other revision's), else
            empty (E's default for the suspect's kind).
        revisions: ``{revision: pods}`` that served in the window (from the inventory and
            the per-pod series); "one revision" needs two or more of them.
        hidden: Serving signals whose service aggregate is within its threshold while a
            few replicas stand out (:func:`note_hidden`), their outliers worst first.
        previous_revision, rollout_start: For a release that completed in the window
            (:func:`with_release`): the revision whose pods are gone, and when the new
            one's first pod appeared (Unix seconds); E reads the previous revision then.
    """

    scope: Scope = "unknown"
    propose: Literal["E", "F", ""] = ""
    suspect: str = ""
    suspect_kind: str = ""
    per_signal: list[SignalScope] = Field(default_factory=list)
    lines: list[str] = Field(default_factory=list)
    line_msgs: list[Msg] = Field(default_factory=list)
    max_z_note: str = ""
    max_z_msg: Msg | None = None
    cohort_kind: str = ""
    revisions: dict[str, int] = Field(default_factory=dict)
    hidden: list[SignalScope] = Field(default_factory=list)
    previous_revision: str = ""
    rollout_start: float | None = None

    def add_line(self, m: Msg) -> None:
        """Append an evidence line (message and its English rendering)."""
        self.line_msgs.append(m)
        self.lines.append(m.text("en"))

    @property
    def branch(self) -> Branch | None:
        """The answer at D this verdict gives: ``release`` when E compares a revision with
        the previous one, ``single`` for another E, ``shared`` for F, ``None`` undecided."""
        if self.propose == "E":
            return Branch.RELEASE if self.scope == "revision" else Branch.SINGLE
        return Branch.SHARED if self.propose == "F" else None

    @property
    def propose_key(self) -> str:
        """The message key of the proposed next step (``metrics.propose.*``), empty when
        nothing is proposed; a release's names the comparison of revisions."""
        if not self.propose:
            return ""
        suffix = "_revision" if self.branch is Branch.RELEASE else ""
        return f"metrics.propose.{self.propose}{suffix}"

    def lines_text(self, lang: str) -> list[str]:
        """The evidence lines in ``lang``, the √(n−1) reminder last (in parentheses)."""
        out = [m.text(lang) for m in self.line_msgs] if self.line_msgs else list(self.lines)
        if self.max_z_msg is not None:
            out.append(f"({self.max_z_msg.text(lang)})")
        elif self.max_z_note:
            out.append(f"({self.max_z_note})")
        return out


def _bad_direction(signal: str) -> str:
    info = SIGNALS.get(signal)
    return info.bad if info else "up"


def find_outliers(b: Breakdown) -> list[Outlier]:
    """Entities of ``b`` that differ from the median of the others, in the bad direction."""
    out: list[Outlier] = []
    vals = b.values
    if len(vals) < 3:
        return out
    for i, ev in enumerate(vals):
        peers = [p.value for j, p in enumerate(vals) if j != i]
        med = median(peers)
        if med is None:
            continue
        score = robust_score(ev.value, peers)
        ratio = ev.value / med if med else None
        is_out = is_outlier(b.signal, ev.value, med, score)
        if is_out:
            out.append(
                Outlier(
                    key=b.key,
                    entity=ev.entity,
                    kind=ev.kind,
                    pod=ev.pod,
                    node=ev.node,
                    revision=ev.revision,
                    value=ev.value,
                    peer_median=med,
                    ratio=ratio,
                    score=None if score is None or math.isinf(score) else score,
                    peers=len(peers),
                )
            )
    return out


def _revision_scope(b: Breakdown) -> str:
    """A revision whose median is ≥ 1.5× (bad direction) the other revisions' median."""
    revs: dict[str, list[float]] = {}
    for ev in b.values:
        if ev.revision:
            revs.setdefault(ev.revision, []).append(ev.value)
    if len(revs) < 2:
        return ""
    bad = _bad_direction(b.signal)
    down: list[str] = []
    for rev, vals in revs.items():
        others = [v for r, vs in revs.items() if r != rev for v in vs]
        m, o = median(vals), median(others)
        if m is None or o is None or o == 0:
            continue
        ratio = m / o
        if bad != "down" and ratio >= OUTLIER_RATIO:
            return rev
        if bad != "up" and ratio <= 1 / OUTLIER_RATIO:
            down.append(rev)
    # Where both sides are bad, the revision that rose is named before the one that
    # (by contrast) looks low.
    return down[0] if down else ""


def revisions_served(inv: Inventory, breakdowns: Iterable[Breakdown] = ()) -> dict[str, int]:
    """``{revision: number of pods}`` of the pods known in the window (the inventory's
    ReplicaSets, and the revision labels of the per-pod series), by name."""
    pods: dict[str, str] = {p.pod: p.revision for p in inv.pods.values() if p.revision}
    for b in breakdowns:
        for v in b.values:
            if v.revision and v.pod:
                pods.setdefault(v.pod, v.revision)
    out: dict[str, int] = {}
    for rev in pods.values():
        out[rev] = out.get(rev, 0) + 1
    return dict(sorted(out.items()))


def signal_scope(b: Breakdown, inv: Inventory) -> SignalScope:
    """The scope one anomalous signal points to. "One revision" needs two or more
    revisions serving in the window (with one, all replicas of it are everything)."""
    res = SignalScope(key=b.key, scope="unknown", entities=len(b.values), unit=b.unit)
    if len(b.values) < 3:
        res.set_note(msg("evidence.scope.too_few", n=len(b.values)))
        if b.values:
            res.scope = "everything"
        return res
    if b.signal == "hardware.xid" and all(v.value == 0 for v in b.values):
        # No GPU reporting now has a new Xid: the row is anomalous from the window's
        # history (a GPU that reported one and then stopped reporting), which the split of
        # the GPUs still here cannot place — it points nowhere, not to everything.
        res.set_note(msg("evidence.scope.window_only"))
        return res
    outs = find_outliers(b)
    res.outliers = outs
    if not outs or len(outs) * 2 > len(b.values):
        rev = _revision_scope(b)
        if rev:
            res.scope = "revision"
            res.set_note(msg("evidence.scope.revision", revision=rev))
        else:
            res.scope = "everything"
            res.set_note(msg("evidence.scope.no_standout"))
        return res
    kinds = {o.kind for o in outs}
    nodes = {o.node for o in outs if o.node}
    if kinds == {"gpu"} and len(outs) == 1:
        res.scope = "single_gpu"
    elif kinds == {"gpu"} and len(nodes) == 1:
        res.scope = "single_node"
    elif len({o.pod or o.entity for o in outs}) == 1:
        res.scope = "single_instance"
    elif len(nodes) == 1:
        res.scope = "single_node"
    else:
        pools = {inv.node_pool.get(n, "") for n in nodes}
        revs = {o.revision for o in outs}
        if len(pools) == 1 and "" not in pools:
            res.scope = "node_pool"
        elif len(revs) == 1 and "" not in revs and len(revisions_served(inv, [b])) >= 2:
            res.scope = "revision"
        else:
            res.scope = "everything"
    return res


def with_release(
    br: BlastRadius, rollouts: Iterable[ChangeItem], inv: WindowInventory
) -> BlastRadius:
    """Step D with the window's history: when the anomalous signals reach everything and
    every replica serving now runs the revision a rollout in the window brought (the
    previous revision's pods are gone), the scope is that revision and the release is the
    suspect; E then compares it with the previous revision as it served before the
    rollout. ``rollouts`` are the history's rollout items (:mod:`cockpit.analysis.history`,
    with their ``revision`` diff old → new), oldest first; any other verdict is returned
    as it is."""
    if br.scope != "everything" or not br.per_signal:
        return br
    for r in reversed(list(rollouts)):
        diff = {d.field: (d.old, d.new) for d in r.diff}
        old, new = diff.get("revision", ("", ""))
        gone, fresh = inv.revisions.get(old), inv.revisions.get(new)
        if not old or fresh is None or set(br.revisions) != {new}:
            continue
        if gone is not None and not inv.is_silent(gone):
            continue
        br.scope, br.propose = "revision", "E"
        br.suspect, br.suspect_kind = new, "revision"
        br.cohort_kind, br.previous_revision = "previous_revision", old
        br.rollout_start = fresh.first_seen
        br.add_line(
            msg(
                "evidence.blast.release",
                rollout=r.message or msg("metrics.likely.item", text=r.summary),
                new=inv.revision_name(new),
                old=inv.revision_name(old),
                n=br.revisions[new],
            )
        )
        _explain_others(br, br.per_signal, "revision", "evidence.blast.differs_release")
        return br
    return br


def access_only() -> BlastRadius:
    """Only the gateway is anomalous: it is shared by every replica, so the scope is
    everything and the next step is F (shared dependencies)."""
    br = BlastRadius(scope="everything", propose="F")
    br.add_line(msg("evidence.blast.access_only"))
    return br


def decide(
    breakdowns: Iterable[Breakdown],
    inv: Inventory,
    restarts: Mapping[str, RestartCount] | None = None,
) -> BlastRadius:
    """Decide the blast radius from the breakdowns of the anomalous signals.

    ``restarts`` are the pods' restarts in the window (step B's count,
    :meth:`~cockpit.analysis.history.WindowInventory.restart_counts`): a restarting suspect
    is named with that count beside its restarts per 5 min.

    The scope pointed to by the most signals wins; ties go to the narrower scope. A GPU
    outlier that serves the outlier pod makes the verdict ``single_gpu`` (the narrowest
    explanation consistent with both).
    """
    bs = list(breakdowns)
    per = [signal_scope(b, inv) for b in bs if b.values]
    br = BlastRadius(per_signal=per, revisions=revisions_served(inv, bs))
    if not per:
        br.add_line(msg("evidence.blast.no_entity_data"))
        return br
    unhealthy = unhealthy_pods(bs)
    pods = {v.pod or v.entity for b in bs for v in b.values if v.kind == "pod"} | set(inv.pods)
    if unhealthy and len(unhealthy) * 2 < max(len(pods), 1):
        # A crash-looping or not-ready replica is the suspect before the replicas that
        # absorbed its traffic (their queues and latencies are the outliers then).
        pod, (what, value) = next(iter(unhealthy.items()))
        br.scope, br.propose = "single_instance", "E"
        br.suspect, br.suspect_kind = pod, "pod"
        count = (restarts or {}).get(pod)
        others = ", ".join(sorted(p for p in unhealthy if p != pod)) or "-"
        if count is not None and count.n:
            line = msg(
                "evidence.blast.unhealthy_restarted",
                pod=pod,
                restarts=count.msg(),
                name=signal_names(what),
                value=value,
                others=others,
            )
        else:
            line = msg(
                "evidence.blast.unhealthy",
                pod=pod,
                name=signal_names(what),
                value=value,
                others=others,
            )
        br.add_line(line)
        _explain_others(br, per, "single_instance", "evidence.blast.differs_unhealthy")
        return br
    counts: dict[str, int] = {}
    for s in per:
        if s.scope != "unknown":
            counts[s.scope] = counts.get(s.scope, 0) + 1
    if not counts:
        return br
    scope = min(counts, key=lambda k: (-counts[k], SCOPE_ORDER.index(k)))  # type: ignore[arg-type]
    gpu_outs = [o for s in per if s.scope == "single_gpu" for o in s.outliers]
    pod_outs = [o for s in per if s.scope == "single_instance" for o in s.outliers]
    why = "evidence.blast.differs"
    if gpu_outs and pod_outs:
        gpu = gpu_outs[0]
        if any(inv.gpu_pod.get(gpu.entity, gpu.pod) == (p.pod or p.entity) for p in pod_outs):
            scope = "single_gpu"
            why = "evidence.blast.differs_gpu_pod"
    br.scope = scope  # type: ignore[assignment]
    br.propose = (
        "E" if scope in ("single_gpu", "single_instance", "single_node", "revision") else "F"
    )
    chosen = [o for s in per if s.scope == scope for o in s.outliers]
    if scope == "single_gpu" and gpu_outs:
        br.suspect, br.suspect_kind = gpu_outs[0].entity, "gpu"
    elif scope == "single_instance" and chosen:
        br.suspect, br.suspect_kind = chosen[0].pod or chosen[0].entity, "pod"
    elif scope == "single_node" and chosen:
        br.suspect, br.suspect_kind = chosen[0].node, "node"
    elif scope == "revision":
        # E against the previous revision: a pod of the suspect revision is compared with
        # the other revision's pods.
        rev = next(
            (
                s.note_msg.args.get("revision", "")
                for s in per
                if s.scope == "revision" and s.note_msg is not None
            ),
            "",
        ) or next((o.revision for o in chosen if o.revision), "")
        pod = next((p.pod for p in inv.pods.values() if p.revision == rev), "") or next(
            (v.pod for b in bs for v in b.values if v.revision == rev and v.pod), ""
        )
        if pod:
            br.suspect, br.suspect_kind, br.cohort_kind = pod, "pod", "previous_revision"
        else:
            br.propose = "F"
        br.add_line(
            msg(
                "evidence.blast.revisions",
                revision=str(rev),
                revisions=", ".join(f"{r} ({n})" for r, n in br.revisions.items()),
            )
        )
    quiet: dict[tuple[str, int, str], tuple[Msg, list[str]]] = {}
    for s in per:
        if s.outliers:
            ranked = sorted(s.outliers, key=_severity)
            for o in ranked[:TOP_OUTLIERS]:
                br.add_line(_outlier_msg(s, o))
            if len(ranked) > TOP_OUTLIERS:
                br.add_line(_the_rest(s.key, ranked[TOP_OUTLIERS:], s.unit))
        else:
            note = s.note_msg or Msg(key="evidence.scope.no_standout")
            group = quiet.setdefault((note.model_dump_json(), s.entities, s.scope), (note, []))
            group[1].append(s.key)
    for (_, entities, scope_id), (note, keys) in quiet.items():
        br.add_line(
            msg(
                "evidence.blast.quiet",
                keys=", ".join(keys),
                names=signal_names(*keys),
                note=note,
                entities=entities,
                scope=msg(f"metrics.scope.{scope_id}"),
            )
        )
    _explain_others(br, per, scope, why)
    n = max((s.entities for s in per), default=0)
    if n > 1:
        br.max_z_msg = msg("evidence.blast.max_z", n=n, bound=max_z(n))
        br.max_z_note = br.max_z_msg.text("en")
    return br


TOP_OUTLIERS = 3
"""Outliers of one signal given a line each, the most extreme first; the rest are summed
up in one line (a service of 200 replicas that all slowed would otherwise list 200 lines
before anything else). Every outlier stays in :attr:`SignalScope.outliers`."""


def _severity(o: Outlier) -> tuple[float, float]:
    """Sort key: the largest robust score first (an infinite one — peers all equal — before
    any), then the ratio furthest from 1."""
    score = math.inf if o.score is None else abs(o.score)
    ratio = math.inf if not o.ratio else max(o.ratio, 1 / o.ratio)
    return (-score, -ratio)


def _outlier_args(s: SignalScope, o: Outlier) -> dict[str, Arg]:
    """What every line about one outlier says: the signal, the entity, its value against the
    peer median with the unit, the ratio and the number of peers."""
    return {
        "key": s.key,
        "name": signal_names(s.key),
        "entity": o.entity,
        "value": o.value,
        "median": o.peer_median,
        "unit": unit_suffix(s.unit),
        "ratio": _ratio_msg(o),
        "peers": o.peers,
    }


def _outlier_msg(s: SignalScope, o: Outlier) -> Msg:
    """One outlier's line: its value against the peer median, the ratio and robust score,
    and the scope its signal points to."""
    score: Msg | str = ""
    if o.score is not None:
        score = (
            msg("evidence.blast.score", score=o.score)
            if o.score < 1000
            else msg("evidence.blast.score_big")
        )
    scope = msg(f"metrics.scope.{s.scope}")
    return msg("evidence.blast.outlier", **_outlier_args(s, o), score=score, scope=scope)


def _hidden_msg(s: SignalScope, o: Outlier) -> Msg:
    """One outlier's line on a signal whose service aggregate is within its threshold."""
    return msg("evidence.blast.hidden", **_outlier_args(s, o))


def detail_msgs(br: BlastRadius) -> list[Msg]:
    """Every outlier behind step D's verdict, for its detail view: per signal a heading
    (how many of how many entities stand out, and the scope the signal points to), then
    one line per outlier, worst first, with none left out; the signals with no outlier,
    then the serving signals that stand out only per replica (:attr:`BlastRadius.hidden`)."""
    out: list[Msg] = []
    for s in br.per_signal:
        head: dict[str, Arg] = {"key": s.key, "name": signal_names(s.key), "entities": s.entities}
        if not s.outliers:
            note = s.note_msg or msg("evidence.scope.no_standout")
            out.append(msg("evidence.blast.detail_none", **head, note=note))
            continue
        scope = msg(f"metrics.scope.{s.scope}")
        out.append(msg("evidence.blast.detail_head", **head, n=len(s.outliers), scope=scope))
        out += [_outlier_msg(s, o) for o in sorted(s.outliers, key=_severity)]
    for s in br.hidden:
        head = {"key": s.key, "name": signal_names(s.key), "entities": s.entities}
        out.append(msg("evidence.blast.detail_hidden", **head, n=len(s.outliers)))
        out += [_hidden_msg(s, o) for o in s.outliers]
    return out


def _ratio_msg(o: Outlier) -> Msg:
    """``×1.36`` against the peer median, or "peers at 0"."""
    if o.ratio is None:
        return msg("evidence.blast.peers_zero")
    return msg("evidence.blast.ratio", ratio=o.ratio)


def _the_rest(key: str, rest: list[Outlier], unit: str) -> Msg:
    """One line for the outliers of ``key`` past the first :data:`TOP_OUTLIERS`: how many,
    of which kind, the range of their values and, when all are positive, how close they
    are to each other (largest ÷ smallest)."""
    lo = min(o.value for o in rest)
    hi = max(o.value for o in rest)
    kind = "gpus" if all(o.kind == "gpu" for o in rest) else "replicas"
    spread: Msg | str = msg("evidence.blast.spread", spread=hi / lo) if lo > 0 else ""
    return msg(
        f"evidence.blast.more_{kind}",
        key=key,
        name=signal_names(key),
        n=len(rest),
        low=lo,
        high=hi,
        unit=unit_suffix(unit),
        spread=spread,
    )


UNHEALTHY_LINES = ("evidence.blast.unhealthy", "evidence.blast.unhealthy_restarted")
"""The keys of the line that names a restarting or not-ready replica as the suspect."""
UNHEALTHY_SIGNALS = ("infra.restarts", "infra.not_ready")
"""Per-pod signals that mark a replica as failing itself (restarts in the window, not
ready), rather than slowed by the load it absorbed."""


def unhealthy_pods(breakdowns: Iterable[Breakdown]) -> dict[str, tuple[str, float]]:
    """``{pod: (signal key, value)}`` of the pods that restarted or were not ready in the
    window (≥ 0.5: the thresholds of those signals), the worst first."""
    found: dict[str, tuple[str, float]] = {}
    for b in breakdowns:
        if b.signal not in UNHEALTHY_SIGNALS:
            continue
        for v in b.values:
            pod = v.pod or v.entity
            if v.value >= 0.5 and v.value > found.get(pod, ("", 0.0))[1]:
                found[pod] = (b.key, v.value)
    return dict(sorted(found.items(), key=lambda kv: -kv[1][1]))


def _explain_others(br: BlastRadius, per: list[SignalScope], scope: str, why: str) -> None:
    """State, with the message ``why``, why the headline differs from signals that point
    elsewhere (the headline and the per-signal lines never disagree silently)."""
    others: dict[str, list[str]] = {}
    for s in per:
        if s.scope not in (scope, "unknown"):
            others.setdefault(s.scope, []).append(s.key)
    for other, keys in others.items():
        br.add_line(
            msg(
                why,
                keys=", ".join(keys),
                names=signal_names(*keys),
                scope=msg(f"metrics.scope.{other}"),
                headline=msg(f"metrics.scope.{scope}"),
            )
        )


def hidden_outliers(breakdowns: Iterable[Breakdown], within: set[str]) -> list[SignalScope]:
    """Serving signals whose service aggregate reads within its threshold (keys in
    ``within``) while a minority of replicas stands out from the others (the same robust
    rule as :func:`find_outliers`): one slow replica in 200 barely moves a service P99, so
    the aggregate alone would hide it. Outliers are sorted worst first."""
    out: list[SignalScope] = []
    for b in breakdowns:
        if b.key not in within or not b.signal.startswith("serving.") or len(b.values) < 3:
            continue
        outs = find_outliers(b)
        if outs and len(outs) * 2 <= len(b.values):
            scope: Scope = (
                "single_instance" if len({o.pod or o.entity for o in outs}) == 1 else "unknown"
            )
            out.append(
                SignalScope(
                    key=b.key,
                    scope=scope,
                    outliers=sorted(outs, key=_severity),
                    entities=len(b.values),
                    unit=b.unit,
                )
            )
    return out


def note_hidden(br: BlastRadius, hidden: list[SignalScope]) -> None:
    """Add the outliers of :func:`hidden_outliers` to the verdict: the
    :data:`TOP_OUTLIERS` worst of each signal get a line, the rest one line."""
    br.hidden = hidden
    for s in hidden:
        for o in s.outliers[:TOP_OUTLIERS]:
            br.add_line(_hidden_msg(s, o))
        if len(s.outliers) > TOP_OUTLIERS:
            br.add_line(_the_rest(s.key, s.outliers[TOP_OUTLIERS:], s.unit))
