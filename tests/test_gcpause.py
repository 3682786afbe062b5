"""The collector held off during an analysis comes back as it was, after the last of
overlapping holds."""

from __future__ import annotations

import gc

from cockpit.collect.gcpause import collector_held


def test_overlapping_holds_give_the_collector_back_after_the_last() -> None:
    assert gc.isenabled()
    outer = collector_held()
    inner = collector_held()
    outer.__enter__()
    inner.__enter__()
    assert not gc.isenabled()
    outer.__exit__(None, None, None)
    assert not gc.isenabled()  # the other analysis still runs
    inner.__exit__(None, None, None)
    assert gc.isenabled()


def test_a_collector_disabled_before_stays_disabled() -> None:
    gc.disable()
    try:
        with collector_held():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_failed_analysis_gives_the_collector_back() -> None:
    try:
        with collector_held():
            raise RuntimeError("no answer")
    except RuntimeError:
        pass
    assert gc.isenabled()
