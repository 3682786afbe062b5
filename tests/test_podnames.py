"""Pod names of a workload: the regex that narrows PromQL to a deployment's pods."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from cockpit.analysis.podnames import is_workload_pod, workload_pod_regex

SAFE = "bcdfghjklmnpqrstvwxz2456789"  # rand.SafeEncodeString's alphabet
NAME = st.from_regex(r"[a-z][a-z0-9]{0,8}(-[a-z0-9]{1,8}){0,3}", fullmatch=True)


@given(NAME, st.text(SAFE, min_size=1, max_size=10), st.text(SAFE, min_size=5, max_size=5))
def test_deployment_pods_match(name: str, pod_hash: str, suffix: str) -> None:
    assert is_workload_pod(f"{name}-{pod_hash}-{suffix}", name)


@given(NAME, st.integers(0, 999))
def test_statefulset_pods_match(name: str, ordinal: int) -> None:
    assert is_workload_pod(f"{name}-{ordinal}", name)


@given(NAME, st.text(SAFE, min_size=1, max_size=10), st.text(SAFE, min_size=5, max_size=5))
def test_a_longer_deployment_of_the_same_prefix_does_not_match(
    name: str, pod_hash: str, suffix: str
) -> None:
    assert not is_workload_pod(f"{name}-embed-{pod_hash}-{suffix}", name)
    assert not is_workload_pod(f"{name}x-{pod_hash}-{suffix}", name)


def test_names_are_literal_and_long_names_match_by_prefix() -> None:
    assert is_workload_pod("a.b-0", "a.b") and not is_workload_pod("axb-0", "a.b")
    assert workload_pod_regex("") == "" and not is_workload_pod("x-0", "")
    assert not is_workload_pod("x-0", "x|y") and re.escape("|") in workload_pod_regex("x|y")
    long = "inference-" + "x" * 40  # the generated part is cut after 58 characters
    assert is_workload_pod(f"{long}-5d8f"[:58] + "abcde", long)
