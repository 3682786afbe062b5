"""Discovery's decisions from query answers (pure): where a source keeps the workload's
labels, the services of a namespace, the serving stack of a scope, and the selectors
that follow from them."""

from __future__ import annotations

import re

from cockpit.analysis.discovery import (
    Discovery,
    Service,
    SourceLabels,
    apply,
    choose,
    instance_regex,
    ip_of_instance,
    label_modes,
    services,
    workload_of,
)
from cockpit.analysis.podnames import workload_pod_regex
from cockpit.analysis.profiles import detect_profiles, render

DCGM = "DCGM_FI_DEV_GPU_UTIL"
VLLM = "vllm:num_requests_running"
SGL = "sglang:num_running_reqs"


def test_the_label_holding_the_namespace_wins() -> None:
    rows = [
        # dcgm-exporter's chart: namespace is the exporter's, the workload is exported_*
        {"__name__": DCGM, "namespace": "gpu-operator", "exported_namespace": "llm"},
        {"__name__": DCGM, "namespace": "gpu-operator"},  # an idle GPU: no workload
        # a PodMonitor: the workload is in namespace
        {"__name__": VLLM, "namespace": "llm"},
        # static_configs: no namespace at all
        {"__name__": SGL},
    ]
    probes = {"dcgm": DCGM, "vllm": VLLM, "sglang": SGL, "tgi": "tgi_queue_size"}
    assert label_modes(probes, rows, "llm") == {
        "dcgm": "exported",
        "vllm": "native",
        "sglang": "instance",
        "tgi": "native",  # no series: what the profile says
    }
    # no namespace in scope: exported_* anywhere means the exporter set them
    assert label_modes(probes, rows, "")["dcgm"] == "exported"
    # honorLabels true and a workload namespace equal to the scope: native
    native = [{"__name__": DCGM, "namespace": "llm", "exported_namespace": "x"}]
    assert label_modes({"dcgm": DCGM}, native, "llm") == {"dcgm": "native"}


def test_services_are_grouped_by_workload_and_stack() -> None:
    found = {
        "vllm": {"vllm-chat-7d9f8c6b5-x2x4z": {"m"}, "vllm-chat-7d9f8c6b5-k8m2p": {"m"}},
        "tgi": {"tgi-chat-5c8d66c76d-q4t7x": {""}, "tgi-embed-0": {""}},
    }
    got = services(found)
    assert [(s.profile, s.workload, len(s.pods), s.models) for s in got] == [
        ("tgi", "tgi-chat", 1, []),
        ("tgi", "tgi-embed", 1, []),
        ("vllm", "vllm-chat", 2, ["m"]),
    ]
    assert workload_of("vllm-chat-7d9f8c6b5-x2x4z") == "vllm-chat"
    assert workload_of("tgi-embed-0") == "tgi-embed"
    assert workload_of("standalone") == "standalone"


def test_the_scope_picks_the_stack_whose_pods_it_names() -> None:
    fleet = [
        Service(
            profile="sglang", workload="sglang-chat", pods=["sglang-chat-abc12-aaaaa"], models=["q"]
        ),
        Service(
            profile="tgi",
            workload="tgi-chat",
            pods=["tgi-chat-abc12-bbbbb", "tgi-chat-abc12-ccccc"],
        ),
        Service(profile="vllm", workload="vllm-chat", pods=["vllm-chat-abc12-ddddd"], models=["m"]),
    ]
    serving = ["sglang", "tgi", "vllm"]
    assert choose(fleet, workload_pod_regex("vllm-chat"), "", serving) == ("vllm", False)
    assert choose(fleet, workload_pod_regex("tgi-chat"), "", serving) == ("tgi", False)
    # a model names vLLM; TGI has no model label and is not excluded by it
    assert choose(fleet, "", "m", serving) == ("tgi", True)
    assert choose(fleet, workload_pod_regex("vllm-chat"), "m", serving) == ("vllm", False)
    # the namespace alone: the one with the most pods, said to be a guess
    assert choose(fleet, "", "", serving) == ("tgi", True)
    # nothing in scope: one detected stack is used, several are not guessed between
    assert choose([], "", "", ["vllm"]) == ("vllm", False)
    assert choose([], "", "", serving) == ("", False)


def test_selectors_follow_the_discovered_labels() -> None:
    det = detect_profiles([DCGM, "DCGM_FI_DEV_GPU_TEMP", SGL, "sglang:num_queue_reqs"])
    found = Discovery(
        sources={
            "dcgm": SourceLabels(profile="dcgm", metric=DCGM, mode="exported"),
            "sglang": SourceLabels(
                profile="sglang",
                metric=SGL,
                mode="instance",
                pod_ips={
                    "sg-chat-abc12-aaaaa": "10.244.1.20",
                    "sg-batch-abc12-bbbbb": "10.244.1.21",
                },
            ),
        }
    )
    scope = {"namespace": "llm", "model": "", "pod": workload_pod_regex("sg-chat")}
    apply(det, found, scope)
    temp = det.get("hardware.temp")
    queue = det.get("serving.queue")
    assert temp is not None and queue is not None
    assert det.selector_for(temp, scope).startswith(
        'exported_namespace="llm",exported_pod=~"sg-chat'
    )
    q = render(queue, sel=det.selector_for(queue, scope))
    assert 'instance=~"10\\\\.244\\\\.1\\\\.20:[0-9]+"' in q  # the chat pod's IP only
    assert "namespace" not in q and "pod" not in q
    # a scope none of whose pods carries the series matches nothing, never everything
    none = {"namespace": "llm", "model": "", "pod": workload_pod_regex("other")}
    apply(det, found, none)
    assert det.selector_for(queue, none) == 'instance=~""'


def test_instances_and_ips() -> None:
    assert ip_of_instance("10.0.0.5:8000") == "10.0.0.5"
    assert ip_of_instance("[fd00::5]:8000") == "fd00::5"
    rx = instance_regex(["10.0.0.5", "fd00::5"])
    assert re.fullmatch(rx, "10.0.0.5:30000") and re.fullmatch(rx, "[fd00::5]:8000")
    assert not re.fullmatch(rx, "10.0.0.50:30000") and not re.fullmatch(rx, "10x0x0x5:1")


def test_a_static_scrape_breakdown_names_pods_by_their_ip() -> None:
    """Per-entity values of a series with only ``instance`` are placed on the pod whose
    ``kube_pod_info{pod_ip}`` it is (an unknown IP stays the instance)."""
    from datetime import UTC, datetime

    from cockpit.analysis.inventory import build_inventory
    from cockpit.collect.breakdown import to_breakdown
    from cockpit.collect.runner import QueryResult, QuerySpec
    from cockpit.models import InstantVector

    info = [
        InstantVector(
            labels={"namespace": "llm", "pod": "sg-chat-abc12-aaaaa", "pod_ip": "10.244.1.20"},
            t=0,
            v=1,
        )
    ]
    inv = build_inventory(info, [], [], [])
    spec = QuerySpec(key="bd:q", query="q", kind="instant", end=datetime(2026, 1, 1, tzinfo=UTC))
    vec = [
        InstantVector(labels={"instance": "10.244.1.20:30000"}, t=0, v=40),
        InstantVector(labels={"instance": "10.9.9.9:30000"}, t=0, v=2),
    ]
    b = to_breakdown(
        "serving.queue:value", "serving.queue", "req", QueryResult(spec=spec, vector=vec), inv
    )
    assert [(e.entity, e.value) for e in b.values] == [
        ("sg-chat-abc12-aaaaa", 40),
        ("10.9.9.9:30000", 2),
    ]
