"""Step E: the suspect against its healthy cohort, signal by signal.

Seed 000 ("隔离对比健康实例"): pick the cohort automatically — the other
replicas of the same deployment and revision; the other GPUs on the same node; the
previous revision — state its definition, and show the suspect vs the cohort median for
every golden signal and DCGM field, outliers highlighted. The same robust rule as step D
(:mod:`cockpit.analysis.blast_radius`) decides what is an outlier.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, Field

from cockpit.analysis.blast_radius import Breakdown, EntityValue, is_outlier
from cockpit.analysis.changes import ChangeItem
from cockpit.analysis.golden import (
    BucketEdge,
    SignalSummary,
    edge_msg,
    is_changed,
    judge_msg,
    value_msg,
)
from cockpit.analysis.history import RestartCount, WindowInventory, xid_msg, xids_of
from cockpit.analysis.inventory import Inventory
from cockpit.analysis.stats import median, robust_score
from cockpit.models.messages import Msg, fmt_number, signal_label

CohortKind = Literal["replicas", "node_gpus", "previous_revision", "all_gpus", "custom"]


class CohortDef(BaseModel):
    """Who the suspect is compared with, and why.

    Attributes:
        suspect: Pod name, GPU UUID, node name or revision (ReplicaSet).
        suspect_kind: ``pod``, ``gpu``, ``node`` or ``revision``.
        kind: How the cohort was chosen.
        members: Entity names in the cohort (suspect excluded).
        definition_en, definition_zh: The definition stated to the user.
    """

    suspect: str
    suspect_kind: Literal["pod", "gpu", "node", "revision"]
    kind: CohortKind
    members: list[str] = Field(default_factory=list)
    definition_en: str = ""
    definition_zh: str = ""

    def definition(self, lang: str) -> str:
        """The definition in ``lang``."""
        return self.definition_zh if lang == "zh" else self.definition_en


class CohortRow(BaseModel):
    """Suspect vs cohort median for one signal.

    Attributes:
        changed: Not an outlier, but the suspect is ×2 or more (or half or less) the cohort
            median (:func:`cockpit.analysis.golden.is_changed`, C's "changed" rule): a move
            on the harmless side is still shown.
        outlier: Across a cohort (replicas, GPUs, now): the suspect stands out from its
            peers (:func:`~cockpit.analysis.blast_radius.is_outlier`). A release against
            the revision it replaced (before and after, C's question): C's verdict rule
            (:func:`~cockpit.analysis.golden.judge_msg`, C's thresholds) calls the change
            ``anomalous``, so E and C never judge one move two ways.
        per: Whose value ``suspect`` and ``cohort_median`` are: one replica's (the median
            of the suspect's replicas for a revision) or one GPU's.
        service, service_msg: Step C's service-wide value of the same key now (a total or
            a quantile over every request; :func:`with_service`), shown beside the
            per-entity medians so that two different numbers are never read as one.
        window: What the window's history says of the suspect on this row
            (:func:`with_history`): the Xid codes its GPUs reported in the window (B's and
            C's items), or, without a value now, when its series stopped reporting and its
            last value; None when the history adds nothing.
        suspect_edge, median_edge: A histogram quantile's bound when the suspect's value
            or the cohort's median is only known against its top or lowest bucket
            (:func:`median_edge`): shown as that bound (``≤ 300 ms, lowest bucket``), as C
            shows the service's.
    """

    key: str
    signal: str
    unit: str = ""
    suspect: float | None = None
    cohort_median: float | None = None
    cohort_n: int = 0
    ratio: float | None = None
    score: float | None = None
    outlier: bool = False
    changed: bool = False
    query: str = ""
    window: Msg | None = None
    per: Literal["replica", "gpu"] = "replica"
    service: float | None = None
    service_msg: Msg | None = None
    suspect_edge: BucketEdge | None = None
    median_edge: BucketEdge | None = None

    def label(self, lang: str) -> str:
        """The row's name, saying it is one entity's value (``output tokens/s per
        replica``, ``GPU util per GPU``): never the label of step C's service-wide row
        (a total, or a quantile over every request), which E shows beside it."""
        from cockpit.i18n import t

        return t(f"metrics.cohort.per_{self.per}", lang, name=signal_label(self.key, lang))


class CohortComparison(BaseModel):
    """The cohort, its rows, and the keys where the suspect is an outlier.

    Attributes:
        restarts: The suspect pod's (or its GPU's pod's) restarts in the window, step B's
            count (:meth:`~cockpit.analysis.history.WindowInventory.suspect_restarts`);
            None when unknown. The ``infra.restarts`` row is restarts per 5 min.
    """

    cohort: CohortDef
    rows: list[CohortRow] = Field(default_factory=list)
    restarts: RestartCount | None = None

    @property
    def empty(self) -> bool:
        """No member in the cohort (a pod's "previous revision" when there is none): it
        compares nothing, so no row is an outlier and the heading says so."""
        return not self.cohort.members

    @property
    def outliers(self) -> list[str]:
        """Keys of the rows where the suspect is an outlier (a release: anomalous against
        the previous revision by C's thresholds); none against an empty cohort."""
        if self.empty:
            return []
        return [r.key for r in self.rows if r.outlier]

    @property
    def heading_key(self) -> str:
        """The catalogue key of the line naming :attr:`outliers`: a release's rows are
        judged by C's thresholds (``anomalous``), a cohort's by how far the suspect stands
        from its peers (``outlier``), two questions named apart; an empty cohort's says
        there is nothing to compare with."""
        if self.empty:
            return "metrics.text.cohort_empty"
        if self.cohort.suspect_kind == "revision":
            return "metrics.text.cohort_anomalous"
        return "metrics.text.cohort_outliers"


def available_kinds(suspect_kind: str) -> list[CohortKind]:
    """Cohort kinds that make sense for a suspect kind (the UI offers these)."""
    if suspect_kind == "gpu":
        return ["all_gpus", "node_gpus", "custom"]
    if suspect_kind == "node":
        return ["all_gpus", "custom"]
    if suspect_kind == "revision":
        return ["previous_revision", "custom"]  # a release has no replicas of its own to vary
    return ["replicas", "previous_revision", "custom"]


def _gpu_entities(breakdowns: Iterable[Breakdown]) -> dict[str, EntityValue]:
    return {v.entity: v for b in breakdowns for v in b.values if v.kind == "gpu"}


def auto_cohort(
    suspect: str,
    suspect_kind: Literal["pod", "gpu", "node"],
    inv: Inventory,
    breakdowns: list[Breakdown],
    kind: CohortKind | None = None,
    members: list[str] | None = None,
) -> CohortDef:
    """Choose the cohort of ``suspect`` (or build the one the user asked for).

    Args:
        suspect: Pod name, GPU UUID or node.
        suspect_kind: What ``suspect`` is.
        inv: Placement and revisions.
        breakdowns: Per-entity values (to find the GPUs and pods that exist).
        kind: Cohort kind; default: replicas for a pod, every other GPU of the service
            for a GPU (the peers step D's blast radius compares it with, so that E opens
            on D's numbers), all GPUs on other nodes for a node. ``previous_revision``
            when only one revision served in the window: the replicas, and the
            definition says why (an empty cohort compares nothing).
        members: For ``custom``: the entities to compare with.
    """
    gpus = _gpu_entities(breakdowns)
    pods = {v.entity for b in breakdowns for v in b.values if v.kind == "pod"} | set(inv.pods)
    if kind is None:
        kind = {"pod": "replicas", "gpu": "all_gpus", "node": "all_gpus"}[suspect_kind]  # type: ignore[assignment]
    assert kind is not None
    if kind == "custom":
        m = [x for x in (members or []) if x != suspect]
        return CohortDef(
            suspect=suspect,
            suspect_kind=suspect_kind,
            kind=kind,
            members=m,
            definition_en=f"chosen by the user: {', '.join(m)}",
            definition_zh=f"用户指定：{', '.join(m)}",
        )
    if kind == "node_gpus":
        node = inv.gpu_node.get(suspect) or (gpus[suspect].node if suspect in gpus else "")
        m = sorted(
            g for g, v in gpus.items() if g != suspect and (inv.gpu_node.get(g) or v.node) == node
        )
        return CohortDef(
            suspect=suspect,
            suspect_kind=suspect_kind,
            kind=kind,
            members=m,
            definition_en=f"the other GPUs on node {node or '?'} ({len(m)})",
            definition_zh=f"同一节点 {node or '?'} 上的其他 GPU（{len(m)} 块）",
        )
    if kind == "all_gpus":
        if suspect_kind == "node":
            m = sorted(g for g, v in gpus.items() if (inv.gpu_node.get(g) or v.node) != suspect)
            return CohortDef(
                suspect=suspect,
                suspect_kind=suspect_kind,
                kind=kind,
                members=m,
                definition_en=f"GPUs on the other nodes ({len(m)})",
                definition_zh=f"其他节点上的 GPU（{len(m)} 块）",
            )
        m = sorted(g for g in gpus if g != suspect)
        return CohortDef(
            suspect=suspect,
            suspect_kind=suspect_kind,
            kind=kind,
            members=m,
            definition_en=f"every other GPU of the service ({len(m)})",
            definition_zh=f"该服务的所有其他 GPU（{len(m)} 块）",
        )
    me = inv.pod(suspect)
    if kind == "previous_revision":
        revs = sorted(
            {
                p.revision
                for p in inv.pods.values()
                if p.deployment == me.deployment and p.revision and p.revision != me.revision
            }
        )
        prev = revs[-1] if revs else ""
        m = sorted(p.pod for p in inv.pods.values() if p.revision == prev and prev)
        if not m:
            # only one revision served in the window: an empty cohort compares nothing,
            # the replicas of the suspect's own revision do (and the definition says so)
            same = auto_cohort(suspect, suspect_kind, inv, breakdowns, "replicas")
            return same.model_copy(
                update={
                    "definition_en": f"no other revision of {me.deployment or '?'} in the "
                    f"window: {same.definition_en}",
                    "definition_zh": f"窗口内 {me.deployment or '?'} 没有其他版本："
                    f"{same.definition_zh}",
                }
            )
        return CohortDef(
            suspect=suspect,
            suspect_kind=suspect_kind,
            kind=kind,
            members=m,
            definition_en=f"replicas of the other revision {prev or '(none found)'} of {me.deployment or '?'} ({len(m)})",
            definition_zh=f"{me.deployment or '?'} 另一版本 {prev or '（未找到）'} 的副本（{len(m)} 个）",
        )
    m = sorted(
        p
        for p in pods
        if p != suspect
        and (inv.pod(p).deployment == me.deployment)
        and (inv.pod(p).revision == me.revision)
    )
    return CohortDef(
        suspect=suspect,
        suspect_kind=suspect_kind,
        kind="replicas",
        members=m,
        definition_en=f"other replicas of {me.deployment or '?'} revision {me.revision or '?'} ({len(m)})",
        definition_zh=f"{me.deployment or '?'} 同版本 {me.revision or '?'} 的其他副本（{len(m)} 个）",
    )


def _value_of(
    b: Breakdown, entity: str, kind: str, inv: Inventory, gpu_pod: dict[str, str]
) -> list[EntityValue]:
    """Values of ``entity`` in ``b``; a node's values are its GPUs' or pods' values, and a
    GPU's value of a signal split by pod (the serving signals) is the value of the pod that
    holds it (``gpu_pod``: GPU UUID → pod)."""
    if kind == "node":
        return [v for v in b.values if (v.node or inv.gpu_node.get(v.gpu, "")) == entity]
    if kind == "pod":
        # GPU series of a pod count as the pod's (DCGM --kubernetes maps GPUs to pods).
        return [v for v in b.values if v.entity == entity or (v.kind == "gpu" and v.pod == entity)]
    own = [v for v in b.values if v.entity == entity]
    pod = gpu_pod.get(entity, "")
    if own or not pod:
        return own
    return [v for v in b.values if v.kind == "pod" and v.entity == pod]


def gpu_pods(breakdowns: Iterable[Breakdown], inv: Inventory) -> dict[str, str]:
    """``{GPU UUID: pod}`` from the inventory and the DCGM series' ``pod`` label
    (dcgm-exporter with ``--kubernetes``)."""
    out = dict(inv.gpu_pod)
    for b in breakdowns:
        for v in b.values:
            if v.kind == "gpu" and v.pod:
                out.setdefault(v.entity, v.pod)
    return out


def compare(cohort: CohortDef, breakdowns: list[Breakdown], inv: Inventory) -> CohortComparison:
    """Suspect vs cohort median for every breakdown; outliers by ratio and robust score.

    A GPU suspect's serving signals (split by pod) are those of the pod holding it, against
    the pods holding its cohort's GPUs: a slow GPU shows its replica's TTFT, inter-token
    latency, end-to-end latency and queue beside the cohort's."""
    out = CohortComparison(cohort=cohort)
    members = set(cohort.members)
    held = gpu_pods(breakdowns, inv)
    for b in breakdowns:
        mine = _value_of(b, cohort.suspect, cohort.suspect_kind, inv, held)
        if cohort.kind == "all_gpus" and cohort.suspect_kind == "node":
            peers = [v for v in b.values if v.entity in members]
        else:
            peers = []
            for m in members:
                kind = "pod" if cohort.suspect_kind == "pod" else "gpu"
                peers += _value_of(b, m, kind, inv, held)
        out.rows.append(_row(b, mine, peers, per_of(b, cohort)))
    return out


def per_of(b: Breakdown, cohort: CohortDef) -> Literal["replica", "gpu"]:
    """Whose value a row of ``b`` compares: one GPU's when the suspect is a GPU or a node
    and ``b`` is split by GPU, else one replica's."""
    by_gpu = bool(b.values) and all(v.kind == "gpu" for v in b.values)
    return "gpu" if by_gpu and cohort.suspect_kind in ("gpu", "node") else "replica"


def with_service(out: CohortComparison, summaries: list[SignalSummary]) -> CohortComparison:
    """Put step C's service-wide value now (:func:`~cockpit.analysis.golden.value_msg`,
    as C shows it: a top-bucket quantile as its bound) beside each row of the same key."""
    by_key = {s.key: s for s in summaries}
    for row in out.rows:
        s = by_key.get(row.key)
        if s is not None:
            row.service, row.service_msg = s.now.value, value_msg(s)
    return out


def median_edge(values: list[EntityValue]) -> BucketEdge | None:
    """The bound the median of ``values`` is only known against: the edge of the middle
    value (both middle values of an even count) when it is a histogram quantile in the top
    or lowest bucket, the same side for both. At least half the values are then at most
    (at least) that bound, so their true median is too; ``None`` otherwise."""
    ranked = sorted((v for v in values if math.isfinite(v.value)), key=lambda v: v.value)
    if not ranked:
        return None
    mid = len(ranked) // 2
    middle = ranked[mid : mid + 1] if len(ranked) % 2 else ranked[mid - 1 : mid + 1]
    edges = [v.edge for v in middle]
    if any(e is None for e in edges) or len({e.side for e in edges if e is not None}) != 1:
        return None
    return edges[0]


def _row(
    b: Breakdown,
    mine_at: list[EntityValue],
    peers_at: list[EntityValue],
    per: Literal["replica", "gpu"] = "replica",
    *,
    before_after: bool = False,
) -> CohortRow:
    """The row of ``b``: the median of the suspect's values against the cohort's. Across
    a cohort the outlier rule decides; ``before_after`` (a release against the revision it
    replaced) C's verdict rule on the two medians does. A median known only as a bucket
    bound carries it (:func:`median_edge`)."""
    row = CohortRow(key=b.key, signal=b.signal, unit=b.unit, query=b.query, per=per)
    mine = [v.value for v in mine_at]
    peers = [v.value for v in peers_at]
    row.cohort_n = len(peers)
    if mine:
        row.suspect = median(mine)
        row.suspect_edge = median_edge(mine_at)
    row.cohort_median = median(peers)
    row.median_edge = median_edge(peers_at)
    if row.suspect is not None and row.cohort_median is not None:
        if row.cohort_median:
            row.ratio = row.suspect / row.cohort_median
        score = robust_score(row.suspect, peers)
        row.score = None if score is None or score == float("inf") else score
        sides = [e.side if e is not None else "" for e in (row.suspect_edge, row.median_edge)]
        if before_after and sides == ["bottom", "bottom"]:
            # both inside the histogram's lowest bucket: no change can be read, as C
            # judges it (cockpit.analysis.golden.judge_lowest_bucket)
            row.ratio = None
        elif before_after:
            verdict = judge_msg(b.signal, row.suspect, row.cohort_median)[0]
            row.outlier = verdict == "anomalous"
            row.changed = not row.outlier and (verdict == "changed" or is_changed(row.ratio))
        else:
            row.outlier = is_outlier(b.signal, row.suspect, row.cohort_median, score)
            row.changed = not row.outlier and is_changed(row.ratio)
    return row


def compare_revisions(
    new: str,
    old: str,
    now: list[Breakdown],
    then: list[Breakdown],
    *,
    deployment: str = "",
    at: str = "",
) -> CohortComparison:
    """A release against the revision it replaced: per signal, the median of the new
    revision's replicas now against the median of the previous revision's replicas in
    ``then`` (the same signals read before the rollout, ``at`` ``HH:MM``, when its pods
    are gone now; or read now while both serve, ``at`` empty). Outliers by the same rule
    as :func:`compare`."""
    old_pods = sorted({v.pod for b in then for v in b.values if v.revision == old and v.pod})
    when_en = f" at {at}, before the rollout (its pods are gone: from the metrics history)"
    when_zh = f"发布前 {at} 时（其 pod 已不在：来自指标历史）"
    # each side is the median of its replicas' own values (a P99 per replica), not C's
    # service-wide quantile: said, so that 30,000 ms here and 30,052 ms in C are not
    # read as one number computed twice
    cdef = CohortDef(
        suspect=new,
        suspect_kind="revision",
        kind="previous_revision",
        members=old_pods,
        definition_en=f"replicas of the previous revision {old} of {deployment or '?'} "
        f"({len(old_pods)}){when_en if at else ', now'}; each side the median of its "
        "replicas' own values (per replica), not the service-wide value of step C, shown "
        "beside them; judged by step C's thresholds",
        definition_zh=f"{deployment or '?'} 上一版本 {old} 的副本（{len(old_pods)} 个），"
        f"{when_zh if at else '当前'}；两侧都是各副本自身数值的中位数（每副本），而非步骤 C "
        "的全服务数值（列在旁边）；按步骤 C 的阈值判断",
    )
    out = CohortComparison(cohort=cdef)
    earlier = {b.key: b for b in then}
    for b in now:
        before = earlier.get(b.key)
        mine = [v for v in b.values if v.revision == new]
        peers = [v for v in before.values if v.revision == old] if before else []
        out.rows.append(_row(b, mine, peers, before_after=True))
    return out


def _gpus_of(inv: WindowInventory, name: str, kind: str) -> list[str]:
    """The GPU keys of an entity: a GPU itself, the GPUs a pod held, a node's GPUs."""
    if kind == "gpu":
        return [name]
    if kind == "node":
        return list(inv.nodes.get(name, []))
    p = inv.pods.get(name)
    return list(p.gpus) if p is not None else []


def with_history(
    out: CohortComparison,
    inv: WindowInventory,
    items: list[ChangeItem],
    t0: float | None = None,
    t1: float | None = None,
) -> CohortComparison:
    """Add to E's rows what the window's history (``[t0, t1]``, Unix seconds) says of the
    suspect, so that E quotes the facts B, C and ``analyze`` read from the same history:

    - its restarts in the window (:meth:`WindowInventory.suspect_restarts`);
    - on the ``hardware.xid`` row, the Xid codes its GPUs reported in the window
      (:func:`~cockpit.analysis.history.xids_of`: a lost GPU's Xid 79 has no "now"), the row
      an outlier when no GPU of the cohort reported one;
    - on a row without a value now, when the suspect's series stopped reporting (a silent
      GPU for a hardware row, a pod whose serving series stopped for a serving or runtime
      row) and its last value: absent, never an unknown "—".

    A revision (a release) is compared before and after, not from the history: unchanged.
    """
    c = out.cohort
    if c.suspect_kind == "revision":
        return out
    out.restarts = inv.suspect_restarts(c.suspect, c.suspect_kind, t0, t1)
    gpus = _gpus_of(inv, c.suspect, c.suspect_kind)
    xids = xids_of(items, gpus, t0)
    member_kind = "pod" if c.suspect_kind == "pod" else "gpu"
    peers = [g for m in c.members for g in _gpus_of(inv, m, member_kind)]
    silent = [inv.gpus[g] for g in gpus if g in inv.gpus and inv.is_silent(inv.gpus[g])]
    pod = inv.pods.get(c.suspect) if c.suspect_kind == "pod" else None
    pod_silent = pod is not None and pod in inv.silent_pods()
    for row in out.rows:
        layer = row.signal.split(".", 1)[0]
        if row.signal == "hardware.xid" and xids:
            row.window = xid_msg(xids)
            # against no peer, nothing stands out: an empty cohort compares nothing
            row.outlier = bool(c.members) and not xids_of(items, peers, t0)
        elif row.suspect is not None:
            continue
        elif layer == "hardware" and silent:
            g = silent[0]
            row.window = _stopped(g.last_seen, g.last_values.get(row.signal), row.unit)
        elif layer in ("serving", "runtime") and pod_silent and pod is not None:
            row.window = _stopped(pod.serving_last, None, row.unit)
    return out


def suspect_text(r: CohortRow, lang: str) -> str:
    """The suspect's reading on a row as E's table, its pin and ``cockpit analyze`` show
    it: its value (``3 restarts``), the window's history beside it (``0 changes · in the
    window: Xid 79 (13:40:00)``), or that history alone when there is no value now (a
    lost GPU's Xid, a series that stopped): never an unknown "—" beside an outlier mark."""
    from cockpit.i18n import fmt_value
    from cockpit.models.messages import unit_text

    if r.suspect_edge is not None and r.suspect is not None:
        mine = edge_msg(r.suspect_edge, r.unit).text(lang)
    else:
        mine = fmt_value(r.suspect, unit_text(r.unit, lang))
    if r.window is None:
        return mine
    seen = r.window.text(lang)
    return seen if r.suspect is None else f"{mine} · {seen}"


def median_text(r: CohortRow, lang: str) -> str:
    """The cohort's median on a row as E's table, its pin and ``cockpit analyze`` show it:
    ``297 ms``, or the bucket bound it is only known against (``≤ 300 ms, lowest bucket``,
    as C writes the service's), never ``histogram_quantile``'s interpolation inside it."""
    from cockpit.i18n import fmt_value
    from cockpit.models.messages import unit_text

    if r.median_edge is not None and r.cohort_median is not None:
        return edge_msg(r.median_edge, r.unit).text(lang)
    return fmt_value(r.cohort_median, unit_text(r.unit, lang))


def _stopped(at: float | None, last: float | None, unit: str) -> Msg:
    """``stopped reporting at 13:40:15 (last 84 %)``."""
    from datetime import UTC, datetime

    hm = datetime.fromtimestamp(at, UTC).strftime("%H:%M:%S") if at is not None else "?"
    if last is None:
        return Msg(key="metrics.cohort.stopped", args={"at": hm})
    return Msg(
        key="metrics.cohort.stopped_last",
        args={"at": hm, "last": fmt_number(last, 3), "unit": unit},
    )
