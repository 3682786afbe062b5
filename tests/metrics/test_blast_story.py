"""Step D a reader can trust: "one revision" only with two revisions serving, a failing
replica before the survivors that absorbed its traffic, the headline never silently
against the per-signal lines, and the branch D concludes offered."""

from __future__ import annotations

from cockpit.analysis.blast_radius import Breakdown, EntityValue, decide, revisions_served
from cockpit.analysis.cohort import auto_cohort, compare
from cockpit.analysis.inventory import Inventory, PodInfo


def inventory(revisions: dict[str, str]) -> Inventory:
    """Pods ``{name: revision}`` of deployment ``vllm``, two per node."""
    inv = Inventory()
    for i, (pod, rev) in enumerate(sorted(revisions.items())):
        inv.pods[pod] = PodInfo(pod=pod, node=f"n{i // 2}", revision=rev, deployment="vllm")
    return inv


def per_pod(inv: Inventory, key: str, values: dict[str, float]) -> Breakdown:
    return Breakdown(
        key=key,
        signal=key.split(":")[0],
        values=[
            EntityValue(
                entity=p,
                kind="pod",
                pod=p,
                node=inv.pods[p].node,
                revision=inv.pods[p].revision,
                value=v,
            )
            for p, v in sorted(values.items())
        ],
    )


ONE_REV = {f"vllm-aaa-{i}": "vllm-aaa" for i in range(6)}


def test_one_revision_needs_two_revisions_serving() -> None:
    inv = inventory(ONE_REV)
    # all six replicas slow, one revision: everything, not "one revision"
    b = per_pod(inv, "serving.e2e_latency:p99", {p: 600.0 + i for i, p in enumerate(ONE_REV)})
    br = decide([b], inv)
    assert br.scope == "everything" and br.propose == "F"
    assert revisions_served(inv) == {"vllm-aaa": 6}
    # three pods of a new revision slow next to three of the old one: one revision, named
    # with pod counts, and D offers E against the previous revision
    two = {
        **{f"vllm-aaa-{i}": "vllm-aaa" for i in range(3)},
        **{f"vllm-bbb-{i}": "vllm-bbb" for i in range(3)},
    }
    inv = inventory(two)
    b = per_pod(inv, "serving.output_len:p95", {p: 720.0 if "bbb" in p else 310.0 for p in two})
    br = decide([b], inv)
    assert br.scope == "revision" and br.propose == "E"
    assert br.revisions == {"vllm-aaa": 3, "vllm-bbb": 3}
    assert br.suspect.startswith("vllm-bbb-") and br.cohort_kind == "previous_revision"
    assert any("vllm-aaa (3), vllm-bbb (3)" in line for line in br.lines)
    c = auto_cohort(br.suspect, "pod", inv, [b], "previous_revision")
    assert c.members == [f"vllm-aaa-{i}" for i in range(3)]
    assert compare(c, [b], inv).outliers == ["serving.output_len:p95"]


def test_a_crash_looping_replica_is_the_suspect_before_the_survivors() -> None:
    inv = inventory(ONE_REV)
    # the five survivors absorb the load: their queues are the ones that look odd …
    queue = per_pod(
        inv,
        "serving.queue:value",
        {p: (0.0 if p == "vllm-aaa-3" else 80.0 + i) for i, p in enumerate(ONE_REV)},
    )
    restarts = per_pod(
        inv, "infra.restarts:value", {p: (7.0 if p == "vllm-aaa-3" else 0.0) for p in ONE_REV}
    )
    br = decide([queue, restarts], inv)
    assert br.scope == "single_instance" and br.propose == "E"
    assert br.suspect == "vllm-aaa-3" and br.suspect_kind == "pod"
    assert "restarted or not ready" in br.lines[0]
    # with the window's count (step B's) the line quotes it, and the conclusion is still
    # this instance's failure
    from cockpit.analysis.conclusion import conclude
    from cockpit.analysis.history import RestartCount
    from cockpit.analysis.layers import Drilldown

    counted = decide([queue, restarts], inv, {"vllm-aaa-3": RestartCount(pod="vllm-aaa-3", n=12)})
    assert counted.suspect == "vllm-aaa-3"
    assert "restarted 12 times in the window" in counted.lines[0]
    for d in (br, counted):
        c = conclude(Drilldown(), d, [])
        assert (c.cause, c.scope, c.suspect.pod) == (
            "instance_failure",
            "single_instance",
            d.suspect,
        )
    # half the replicas failing is no single instance: the usual vote decides
    half = per_pod(
        inv, "infra.restarts:value", {p: (3.0 if int(p[-1]) < 3 else 0.0) for p in ONE_REV}
    )
    assert not any("restarted or not ready" in line for line in decide([half], inv).lines)


def test_the_headline_says_why_it_differs_from_a_signal() -> None:
    inv = inventory(ONE_REV)
    everyone = per_pod(inv, "serving.ttft:p99", {p: 500.0 + i for i, p in enumerate(ONE_REV)})
    also = per_pod(inv, "serving.tpot:p99", {p: 90.0 + i for i, p in enumerate(ONE_REV)})
    one = per_pod(
        inv, "serving.queue:value", {p: (400.0 if p == "vllm-aaa-1" else 10.0) for p in ONE_REV}
    )
    br = decide([everyone, also, one], inv)
    assert br.scope == "everything"
    assert any(s.scope == "single_instance" for s in br.per_signal)
    differs = [line for line in br.lines if "the verdict is still all replicas" in line]
    assert differs and "queue length" in differs[0]
    zh = br.lines_text("zh")
    assert any("结论仍是「全部副本」" in line for line in zh)


def test_two_hundred_replicas_give_the_top_outliers_and_a_count_of_the_rest() -> None:
    """40 of 200 replicas slowed (on 20 nodes): three lines name the worst, one line
    counts the other 37 with their range and spread; every outlier is still kept."""
    pods = {f"vllm-aaa-{i:03d}": "vllm-aaa" for i in range(200)}
    inv = inventory(pods)
    values = {p: 100.0 + (i % 7) * 0.1 for i, p in enumerate(sorted(pods))}
    slow = sorted(pods)[:40]
    for i, p in enumerate(slow):
        values[p] = 400.0 + i  # the last ones the worst
    b = per_pod(inv, "serving.ttft:p99", values)
    br = decide([b], inv)
    per = next(s for s in br.per_signal if s.key == "serving.ttft:p99")
    assert len(per.outliers) == 40
    named = [line for line in br.lines if line.startswith("TTFT P99: vllm-aaa-")]
    assert len(named) == 3
    assert [p in line for p, line in zip(slow[::-1][:3], named, strict=True)] == [True] * 3
    assert "TTFT P99: and 37 more replicas, from 400 to 436, within ×1.09 of each other" in br.lines
    assert len(br.lines) == 4
    zh = br.lines_text("zh")
    assert any("另有 37 个副本同样偏离，取值 400–436，彼此相差在 ×1.09 以内" in x for x in zh)
