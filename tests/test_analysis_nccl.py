"""The NCCL analyzer over the c10d formats of formats.md §A2 and multi-rank logs."""

from __future__ import annotations

from cockpit.analysis.nccl import explain_nccl_text


def _wd(rank: int, seq: int, op: str = "ALLREDUCE", n_in: int = 10, n_out: int = 10,
        t: str = "01:45:40", timeout: int = 600000, ran: int = 600013, prefix: str = "") -> str:  # fmt: skip
    return (
        f"{prefix}[rank{rank}]:[E816 {t}.212150935 ProcessGroupNCCL.cpp:607] [Rank {rank}] "
        f"Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, OpType={op}, "
        f"NumelIn={n_in}, NumelOut={n_out}, Timeout(ms)={timeout}) ran for {ran} milliseconds "
        "before timing out."
    )


def test_same_op_everywhere_points_at_silent_rank() -> None:
    text = "\n".join(_wd(r, 500) for r in (0, 1, 2, 4, 5, 6, 7))
    r = explain_nccl_text(text, world_size=8)
    assert r is not None
    assert r.ranks_never_logged == [3]
    assert r.pattern == "missing_ranks"
    assert r.first_failing_rank == 3 and r.first_failing_rank_inferred
    assert "nccl.silent_ranks" in r.next_check_ids


def test_one_rank_log_among_many_silent_ranks_names_no_suspect() -> None:
    """An excerpt holding one rank's watchdog line (world size 8) says nothing about which
    of the seven others failed: no rank is named, least of all the lowest silent one."""
    r = explain_nccl_text(_wd(3, 500), world_size=8)
    assert r is not None
    assert r.ranks_never_logged == [0, 1, 2, 4, 5, 6, 7] and "missing_ranks" in r.flags
    assert r.first_failing_rank is None and r.suspect_rank is None
    assert "nccl.silent_ranks" in r.next_check_ids


def test_one_rank_or_one_seqnum_blames_no_straggler() -> None:
    """A rank is "behind" only next to ranks seen further on: one rank's log, or every
    rank at the same SeqNum, is a timeout with nobody seen lagging."""
    for text in (_wd(3, 500), "\n".join(_wd(r, 500) for r in (0, 1, 2, 3))):
        r = explain_nccl_text(text)
        assert r is not None and r.pattern == "watchdog_timeout", text
        assert "straggler_at_min_seq" not in r.flags and r.first_failing_rank is None


def test_min_seq_and_ranks_stuck_there() -> None:
    text = "\n".join([_wd(0, 101), _wd(1, 101), _wd(2, 100), _wd(3, 101)])
    r = explain_nccl_text(text)
    assert r is not None
    assert r.min_seq == 100 and r.ranks_at_min_seq == [2] and r.max_seq == 101
    assert r.first_failing_rank == 2


def test_gather_numel_out_zero_is_not_a_mismatch() -> None:
    text = "\n".join(
        [_wd(0, 7, "GATHER", 16, 64), _wd(1, 7, "GATHER", 16, 0), _wd(2, 7, "GATHER", 16, 0)]
    )
    r = explain_nccl_text(text)
    assert r is not None and "collective_mismatch" not in r.flags


def test_world_size_from_allgather_numel() -> None:
    text = "\n".join(_wd(r, 9, "_ALLGATHER_BASE", 100, 400) for r in (0, 1, 2))
    r = explain_nccl_text(text)
    assert r is not None
    assert r.world_size == 4 and r.world_size_source == "allgather_numel"
    assert r.ranks_never_logged == [3]


def test_watchdog_blocked_when_ran_for_far_above_timeout() -> None:
    r = explain_nccl_text(_wd(0, 1, timeout=1800000, ran=25624887))
    assert r is not None and "watchdog_blocked" in r.flags
    hb = explain_nccl_text(
        "[rank0]:[E ProcessGroupNCCL.cpp:1] [PG 0 Rank 0] ProcessGroupNCCL's watchdog got stuck "
        "for 480 seconds without making progress in monitoring enqueued collectives."
    )
    assert hb is not None and hb.heartbeat_stuck_s == 480 and hb.pattern == "watchdog_blocked"


def test_follow_up_lines_of_every_version() -> None:
    text = "\n".join(
        [
            "[rank1]:[E ProcessGroupNCCL.cpp:1] [PG 1 Rank 1] Timeout at NCCL work: 158046, last "
            "enqueued NCCL work: 158046, last completed NCCL work: 158045.",
            "[rank0]:[E ProcessGroupNCCL.cpp:1] [PG ID 0 PG GUID 0(default_pg) Rank 0] Exception "
            "(either an error or timeout) detected by watchdog at work: 1580, last enqueued NCCL "
            "work: 1582, last completed NCCL work: 1579.",
            "[rank7]:[E ProcessGroupNCCL.cpp:1] [PG ID 0 PG GUID 0(default_pg) Rank 7]  failure "
            "detected by watchdog at work sequence id: 460631 PG status: last enqueued work: "
            "460631, last completed work: 460630",
            "[rank1]:[E ProcessGroupNCCL.cpp:1] [Rank 1] Work WorkNCCL(SeqNum=2521, "
            "OpType=ALLREDUCE, NumelIn=160672064, NumelOut=160672064, Timeout(ms)=600000) timed "
            "out in blocking wait.",
            "[rank2]:[E ProcessGroupNCCL.cpp:1] [PG 0 Rank 2] Received a dump signal due to a "
            "collective timeout from rank 6 and we will try our best to dump the debug info. Last "
            "enqueued NCCL work: 12, last completed NCCL work: 11.",
        ]
    )
    r = explain_nccl_text(text)
    assert r is not None
    prog = {p.rank: p for p in r.progress}
    assert prog[1].last_completed == 158045
    assert prog[0].at_work == 1580 and prog[0].last_enqueued == 1582
    assert prog[7].last_completed == 460630
    assert prog[2].last_completed == 11
    assert r.dump_requested_by_rank == 6
    assert r.first_timeout is not None and r.first_timeout.blocking_wait
    assert r.timeout_ms == 600000


def test_fingerprint_mismatch() -> None:
    r = explain_nccl_text(
        "RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running "
        "inconsistent collective: CollectiveFingerPrint(OpType=ALLGATHER, TensorShape=[41, 256], "
        "TensorDtypes=Float)"
    )
    assert r is not None and r.pattern == "collective_mismatch" and r.odd_one_out_rank == 0


def test_earliest_error_in_window_across_concatenated_rank_logs() -> None:
    """Logs of two ranks pasted one after the other: line order is not time order."""
    rank1 = [
        "2026-03-01T09:00:00Z [rank1]: step 100 loss 2.0",
        "2026-03-01T09:05:00Z [rank1]: RuntimeError: CUDA error: an illegal memory access was "
        "encountered",
    ]
    rank0 = [
        "2026-03-01T08:00:00Z [rank0]: ValueError: an old, unrelated error far before the window",
        "2026-03-01T09:04:59Z [rank0]: OSError: [Errno 5] Input/output error",
        "2026-03-01T09:14:59Z " + _wd(0, 42, t="09:14:59"),
    ]
    r = explain_nccl_text("\n".join(rank0 + rank1))
    assert r is not None
    assert r.pattern == "secondary_to_rank_failure"
    # rank 0's I/O error (09:04:59) precedes rank 1's illegal access (09:05:00)
    assert r.first_error is not None and r.first_error.kind == "io_error"
    assert r.first_failing_rank == 0
    assert r.first_error.seconds_before_timeout == 600.0


def test_launcher_prefixes_and_transport_errors() -> None:
    text = "\n".join(
        [
            "(RayWorkerWrapper pid=1234) node-a:1234:99 [0] NCCL WARN NET/IB : Got completion "
            "from peer 10.0.0.2 with error 12, opcode 0",
            "(RayWorkerWrapper pid=1234) " + _wd(3, 5),
        ]
    )
    r = explain_nccl_text(text)
    assert r is not None
    assert "nccl_transport_error" in r.flags
    assert r.transport_errors and "NET/IB" in r.transport_errors[0].text
    assert "nccl.network" in r.next_check_ids


def test_watchdog_noise_is_not_the_first_error() -> None:
    text = "\n".join(
        [
            _wd(0, 3),
            "[rank0]:[E ProcessGroupNCCL.cpp:1] [Rank 0] Some NCCL operations have failed or "
            "timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations "
            "might run on corrupted/incomplete data.",
            "[rank0]: RuntimeError: [Rank 0] Watchdog caught collective operation timeout",
            "Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/"
            "ProcessGroupNCCL.cpp:565 (most recent call first):",
        ]
    )
    r = explain_nccl_text(text)
    assert r is not None and r.pattern != "secondary_to_rank_failure"
    assert r.errors == []


def test_nothing_nccl_gives_none() -> None:
    assert explain_nccl_text("[rank0]: RuntimeError: boom\nstep 1") is None
