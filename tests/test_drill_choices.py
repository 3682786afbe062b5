"""The suspects a trainee chooses from: the bundle's own entities, named as the key names
them (a GPU as node/index with its UUID), without repeats."""

from __future__ import annotations

from cockpit.analysis.history import GpuEntity, PodEntity, RevisionEntity, WindowInventory
from cockpit.analysis.inventory import Inventory, PodInfo
from cockpit.drills.choices import parse_value, suspect_choices


def test_choices_join_the_history_the_series_and_the_gateway() -> None:
    inv = WindowInventory(
        start=0,
        end=600,
        pods={"chat-5645b0181d-abcde": PodEntity(name="chat-5645b0181d-abcde", node="n-a")},
        revisions={"chat-5645b0181d": RevisionEntity(name="chat-5645b0181d", deployment="chat")},
        gpus={
            "GPU-1": GpuEntity(uuid="GPU-1", node="n-a", index="0", pods=["chat-5645b0181d-abcde"])
        },
        nodes={"n-a": ["GPU-1"]},
    )
    series = Inventory(
        pods={"chat-5645b0181d-fghij": PodInfo(pod="chat-5645b0181d-fghij", node="n-b")},
        gpu_node={"GPU-2": "n-b", "GPU-1": "n-a"},
    )
    out = suspect_choices(inv, "chat", series, ["ingress-nginx", "", "ingress-nginx"])
    got = [(c.kind, c.name, c.uuid) for c in out]
    assert got == [
        ("gateway", "ingress-nginx", ""),
        ("service", "chat", ""),
        ("revision", "chat-5645b0181d", ""),
        ("pod", "chat-5645b0181d-abcde", ""),
        ("pod", "chat-5645b0181d-fghij", ""),
        ("node", "n-a", ""),
        ("node", "n-b", ""),
        ("gpu", "n-a/0", "GPU-1"),
        ("gpu", "GPU-2", "GPU-2"),
    ]
    assert all(parse_value(c.value) == (c.kind, c.name, c.uuid) for c in out)
    assert "n-a" in out[3].label and "GPU 0" in out[7].label
