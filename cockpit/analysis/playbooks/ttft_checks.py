"""Checks of the TTFT P99 spike playbook (seed 000, 场景四)."""

from __future__ import annotations

import statistics
from datetime import timedelta

from cockpit.analysis.engine_logs import explain_engine_log_text
from cockpit.analysis.playbooks import result as res
from cockpit.analysis.playbooks.common import ratio, restarts
from cockpit.analysis.playbooks.data import PlaybookData
from cockpit.analysis.playbooks.result import CheckEvidence, ItemResult, L
from cockpit.incident import ItemStatus
from cockpit.models.messages import fmt_number

# The prefix-cache hit rate "dropped" at a third less than its baseline (it is no canonical
# signal with a threshold of its own; the latency threshold ×1.5, inverted). Every other
# signal is judged with the drilldown's threshold (Signal.worse).
ROSE = 1.5
# A replica is "clearly slower" at this multiple of its peers' median (robust cohort
# rule of the architecture: ratio to the peer median, not a z-score).
SLOW_REPLICA = 2.0
YOUNG_POD = timedelta(minutes=30)


def _rose(data: PlaybookData, name: str) -> tuple[float | None, CheckEvidence | None]:
    s = data.signal(name)
    if s is None:
        return None, None
    r = ratio(s.now.value, s.baseline.value if s.baseline else None)
    base = s.baseline.value if s.baseline and s.baseline.value is not None else None
    now = s.now.value
    assert now is not None  # data.signal() returns only signals with a value now
    unit = f" {s.now.unit}" if s.now.unit else ""
    which = "signal_baseline_quiet" if s.baseline_from == "quiet" else "signal_baseline"
    ev = CheckEvidence(
        **(
            L(which, name=name, baseline=s.baseline_text() + unit)
            if base is not None
            else L("signal_no_baseline", name=name)
        ),
        value=s.now_text(),
        unit=s.now.unit,
        source="metrics",
        query=s.query,
    )
    return r, ev


def ttft_queue(data: PlaybookData) -> ItemResult:
    """Queue time up? Arrival rate and long-prompt share changed?"""
    if not data.has("metrics"):
        return res.not_available("metrics")
    ev: list[CheckEvidence] = []
    rose: list[str] = []
    compared: list[str] = []
    for name in ("queue_time_p99", "requests_waiting", "arrival_rate", "prompt_tokens_p90"):
        r, e = _rose(data, name)
        if e is not None:
            ev.append(e)
        sig = data.signal(name)
        if r is not None and sig is not None:
            compared.append(name)
            if sig.worse() and r > 1:
                rose.append(name)
    if not ev:
        return res.still_open("playbook.finding.no_signal")
    if not compared:
        # Values now but nothing to compare them with: unknown, not "as usual".
        return res.still_open("playbook.finding.no_baseline", ev)
    if rose:
        return res.problem("playbook.finding.ttft.queue_rose", ev, signals=", ".join(rose))
    return res.ok("playbook.finding.ttft.queue_flat", ev)


def ttft_prefill(data: PlaybookData) -> ItemResult:
    """Prefill head-of-line blocking, KV saturation or preemption in the engine log."""
    if not data.has("kube"):
        return res.not_available("kube")
    r = explain_engine_log_text(data.all_logs()) if data.logs else None
    if r is None:
        return res.still_open("playbook.finding.ttft.no_engine_log")
    ev = [
        CheckEvidence(
            **L("engine_log"),
            value="Waiting max {}; KV cache max {}".format(
                "—" if r.waiting_max is None else r.waiting_max,
                "—" if r.kv_usage is None else f"{r.kv_usage * 100:.1f} %",
            ),
            source="logs",
        )
    ]
    bad = r.cause in ("long_prompt_head_of_line", "kv_cache_saturation", "preemption_recompute")
    # stats lines without the queue field cannot decide it: the user reads the queue metric
    status = (
        ItemStatus.OPEN if r.cause in ("queue_not_reported", "queue_one_line") else ItemStatus.OK
    )
    return res.result(
        ItemStatus.PROBLEM if bad else status,
        "playbook.finding.ttft.engine",
        ev,
        cause=r.cause,
    )


def ttft_scaling(data: PlaybookData) -> ItemResult:
    """Scaling, cold loads or a rollout: young pods, restarts, several image digests."""
    if not data.has("kube"):
        return res.not_available("kube")
    ev: list[CheckEvidence] = []
    starts = [p.start_time for p in data.pods if p.start_time is not None]
    newest = max(starts) if starts else None
    oldest = min(starts) if starts else None
    young = [
        p.meta.name
        for p in data.pods
        if p.start_time
        and newest
        and oldest
        and newest - oldest > YOUNG_POD
        and p.start_time > newest - YOUNG_POD
    ]
    digests = {cs.digest for p in data.pods for cs in p.container_statuses[:1] if cs.digest}
    restarted = [p.meta.name for p in data.pods if restarts(p)]
    if young:
        ev.append(CheckEvidence(**L("young_pods"), value=", ".join(young), source="kube"))
    if len(digests) > 1:
        ev.append(
            CheckEvidence(**L("image_digests"), value=", ".join(sorted(digests)), source="kube")
        )
    if restarted:
        ev.append(CheckEvidence(**L("restarted"), value=", ".join(restarted), source="kube"))
    hit, e = _rose(data, "prefix_cache_hit_rate")
    if e is not None:
        ev.append(e)
    cache_drop = hit is not None and hit < 1 / ROSE
    if young or len(digests) > 1 or restarted or cache_drop:
        return res.problem("playbook.finding.ttft.scaling", ev)
    return res.ok("playbook.finding.ttft.no_scaling", ev)


def ttft_slow_replica(data: PlaybookData) -> ItemResult:
    """One replica clearly slower than its peers (TTFT P99 per pod)."""
    s = data.metrics.get("ttft_p99")
    if s is None or not s.per_instance:
        return (
            res.not_available("metrics")
            if not data.has("metrics")
            else res.still_open("playbook.finding.no_signal")
        )
    values = s.per_instance
    ev = [
        CheckEvidence(
            label=f"TTFT P99 {k}",
            value=fmt_number(v),
            unit=s.now.unit,
            source="metrics",
            query=s.per_instance_query or s.query,
        )
        for k, v in sorted(values.items())
    ]
    if len(values) < 2:
        return res.result(ItemStatus.NA, "playbook.finding.ttft.one_replica", ev)
    slow = []
    for k, v in values.items():
        peers = [x for kk, x in values.items() if kk != k]
        med = statistics.median(peers)
        if med > 0 and v / med >= SLOW_REPLICA:
            slow.append(k)
    if slow:
        return res.problem(
            "playbook.finding.ttft.slow_replica", ev, replicas=", ".join(sorted(slow))
        )
    return res.ok("playbook.finding.ttft.replicas_even", ev)


def ttft_tpot_rule(data: PlaybookData) -> ItemResult:
    """TPOT normal + TTFT worse → queueing/prefill; both worse → overload/GPU/shared."""
    if not data.has("metrics"):
        return res.not_available("metrics")
    rt, et = _rose(data, "ttft_p99")
    rp, ep = _rose(data, "tpot_p99")
    ev = [e for e in (et, ep) if e is not None]
    if rt is None or rp is None:
        # Both signals there but one without a baseline is "no baseline", not "no signal".
        have = data.signal("ttft_p99") is not None and data.signal("tpot_p99") is not None
        return res.still_open(
            "playbook.finding.no_baseline" if have else "playbook.finding.no_signal", ev
        )
    ttft, tpot = data.signal("ttft_p99"), data.signal("tpot_p99")
    bad_t = bool(ttft and ttft.worse() and rt > 1)
    bad_p = bool(tpot and tpot.worse() and rp > 1)
    if bad_t and not bad_p:
        key = "playbook.finding.ttft.rule_queue_prefill"
    elif bad_t and bad_p:
        key = "playbook.finding.ttft.rule_overload"
    else:
        return res.ok("playbook.finding.ttft.rule_no_spike", ev)
    return res.problem(key, ev, ttft=f"{rt:.1f}", tpot=f"{rp:.1f}")


def ttft_before_gpu(data: PlaybookData) -> ItemResult:
    """Time spent before the GPU (gateway P99 − serving P99 against the baseline's gap, and
    the engine's queue time): step F's finding ``before_gpu``, read as F computed it. The
    item asks about ingress, auth, the gateway and downstreams (seed 000 场景四): a finding
    fired by the engine's queue time alone answers it "no" (the queue is the item before)."""
    if not data.has("metrics"):
        return res.not_available("metrics")
    found = data.load.get("before_gpu")
    if found is None:
        return res.still_open("playbook.finding.ttft.before_gpu_unread")
    # F's own sentences, in both languages (the finding is rendered in the reader's)
    reading = {"en": "; ".join(found.text("en")), "zh": "；".join(found.text("zh"))}
    ev: list[CheckEvidence] = []
    if found.status == "fired" and found.by == ["queue"]:
        # F fired on the engine's queue time alone: the wait is inside the engine (the
        # queue item above), not in ingress, auth, the gateway or a downstream
        return res.ok("playbook.finding.ttft.before_gpu_queue_only", ev, reading=reading)
    if found.status == "fired":
        return res.problem("playbook.finding.ttft.before_gpu_fired", ev, reading=reading)
    if found.status == "not_fired":
        return res.ok("playbook.finding.ttft.before_gpu_clear", ev, reading=reading)
    return res.still_open("playbook.finding.ttft.before_gpu_no_data", ev, reading=reading)
