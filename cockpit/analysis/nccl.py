"""NCCL hang / timeout: c10d ``ProcessGroupNCCL`` watchdog logs from one or many ranks.

Pure analysis over text lines (no I/O); streaming with bounded memory. Formats
(``../shared/cases/formats.md`` §A2, from upstream ``ProcessGroupNCCL.cpp``):

* ``[Rank R] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=S, OpType=OP,
  NumelIn=N, NumelOut=M, Timeout(ms)=T) ran for X milliseconds before timing out.``
  (torch ≤ 1.12 omits Numel; torch ~1.9 omits SeqNum too).
* the follow-ups of torch 2.3–2.7+ (``Timeout at NCCL work: …``, ``Exception (either an
  error or timeout) detected by watchdog at work: …``, ``failure detected by watchdog at
  work sequence id: … PG status: last enqueued work: …, last completed work: …``),
* ``Work WorkNCCL(...) timed out in blocking wait.``,
* the flight-recorder dump line, the heartbeat monitor (``watchdog got stuck for N
  seconds``), and ``Detected mismatch between collectives on ranks``
  (``TORCH_DISTRIBUTED_DEBUG=DETAIL``).

The method is the handbook's (seed 000, 场景二): find the FIRST failing rank and its first
error, never the last watchdog message; check that all ranks ran the same collective
sequence with the same sizes. Concretely (formats.md §C3): group by SeqNum, take the
minimum sequence and the ranks stuck there; different OpType/Numel at one SeqNum is an
application desync; ranks that never logged (given the world size) are prime suspects;
the earliest non-NCCL error on any rank inside [timeout − Timeout(ms), timeout] is the
likely root cause; ``ran for`` far above ``Timeout(ms)`` means the watchdog itself was
blocked (pytorch#118369: 25,624,887 ms against 1,800,000 ms).
"""

from __future__ import annotations

import re
from collections import Counter, deque
from collections.abc import Mapping

from pydantic import BaseModel, Field

from cockpit.analysis.context_facts import Fact
from cockpit.analysis.logtext import (
    clip,
    clock_text,
    has_keyword,
    line_rank,
    line_time,
    snippet,
    to_int,
)

CATEGORY = "nccl_hang"

# Seconds added before the window start: the collective is enqueued a little after the
# event that starved it, and ``kubectl logs --timestamps`` stamps lines when they are read.
WINDOW_SLACK_S = 60.0
# ``ran for`` above this multiple of Timeout(ms) means the watchdog thread did not look
# for that long (pytorch#118369 shows ~14×; the watchdog polls every few seconds).
BLOCKED_WATCHDOG_FACTOR = 1.5
MAX_SEQ_GROUPS = 4096
MAX_RANKS_PER_GROUP = 4096
MAX_RANKS = 100_000
# Per rank, the first and the last few error lines are kept (logs of several ranks are
# often concatenated, so line order is not time order); at most this many ranks.
KEEP_FIRST_PER_RANK = 16
KEEP_LAST_PER_RANK = 64
MAX_ERROR_RANKS = 1024

# Lower-case substrings of every line the analyzer needs (explain feeds only these).
KEYWORDS = (
    "nccl",
    "watchdog",
    "error",
    "exception",
    "assert",
    "killed",
    "segmentation",
    "sigsegv",
    "core dumped",
    "fatal",
    "checkpoint",
    "saving",
    "save",
    "dataloader",
    "world_size",
    "world size",
    "out of memory",
    "xid",
    "ecc",
    "evaluat",
    "validat",
    "no space left",
    "input/output",
    "stale file",
    "read-only",
    "permission denied",
    "fallen off",
    "illegal",
    "loading dataset",
    "socket",
    "connection reset",
    "connection closed",
    "ibv",
    "completion from peer",
    "destroy",
    "of running main",
    "training",
    "exitcode",
    "exited with",
    "job ",
    "loading data",
    "loading shard",
    "building",
    "mismatch between collectives",
    "net/ib",
    "net/socket",
)
_RANK_ANY = re.compile(r"\[(?:rank|default)(\d{1,6})\]|\[Rank (\d{1,6})\]")
_WORK = re.compile(r"WorkNCCL\(")
_TIMEOUT = re.compile(r"Watchdog caught collective operation timeout")
_RAN_FOR = re.compile(r"ran for (\S+) milliseconds")
_BLOCKING = re.compile(r"timed out in blocking wait")
_F_SEQ = re.compile(r"SeqNum=([^,)\s]+)")
_F_OP = re.compile(r"OpType=([A-Za-z_]+)")
_F_IN = re.compile(r"NumelIn=([^,)\s]+)")
_F_OUT = re.compile(r"NumelOut=([^,)\s]+)")
_F_TIMEOUT = re.compile(r"Timeout\(ms\)=([^,)\s]+)")
_FOLLOW = (
    re.compile(
        r"Timeout at NCCL work: (\d+), last enqueued NCCL work: (\d+), last completed NCCL work: (-?\d+)"
    ),
    re.compile(
        r"detected by watchdog at work: (\d+), last enqueued NCCL work: (\d+), "
        r"last completed NCCL work: (-?\d+)"
    ),
    re.compile(
        r"failure detected by watchdog at work sequence id: (\d+) PG status: "
        r"last enqueued work: (\d+), last completed work: (-?\d+)"
    ),
)
_DUMP = re.compile(
    r"Received a dump signal due to a collective timeout from (?:rank (\d+)|this local rank)"
)
_DUMP_WORK = re.compile(r"Last enqueued NCCL work: (\d+), last completed NCCL work: (-?\d+)")
_HEARTBEAT = re.compile(r"watchdog got stuck for (\d+) seconds")
_FINGERPRINT = re.compile(
    r"Detected mismatch between collectives on ranks\. Rank (\d+) is running inconsistent "
    r"collective: CollectiveFingerPrint\((?:[^)]*?)OpType=([A-Za-z_]+)"
)
_WORLD = re.compile(r"\b(?:world_size|WORLD_SIZE|world size)\s*[=:]\s*(\d{1,6})\b")

# Lines that are the watchdog's own consequences, not a cause.
_NCCL_NOISE = re.compile(
    r"ProcessGroupNCCL|WorkNCCL|watchdog|Watchdog|NCCL operations have failed|"
    r"To avoid data inconsistency|Exception raised from|frame #|terminate called|"
    r"c10d|ChildFailedError|SIGABRT|Signal 6|exitcode|exit code|DistBackendError|"
    r"NCCL communicator|ncclCommAbort|collective operation timeout|process group",
    re.IGNORECASE,
)
_NCCL_TRANSPORT = re.compile(
    r"NCCL WARN|NET/IB|NET/Socket|ncclRemoteError|ncclSystemError|ncclInternalError|"
    r"ncclUnhandledCudaError|ncclInvalidUsage|NCCL error in:|"
    r"remote process exited or there was a network error|"
    r"unhandled system error|unhandled cuda error|internal error - please report|"
    r"IBV_WC_|Connection closed by|Connection reset by peer|socketProgress|"
    r"Got completion from peer|Call to ibv_",
)
# NCCL's result codes (nccl.h ``ncclResult_t``) and the words DistBackendError prints for
# each (torch/csrc/distributed/c10d/NCCLUtils.cpp ``getNcclErrorDetailStr``), most
# specific first: (code, pattern).
_NCCL_CODES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "ncclRemoteError",
        re.compile(r"ncclRemoteError|remote process exited or there was a network error", re.I),
    ),
    ("ncclUnhandledCudaError", re.compile(r"ncclUnhandledCudaError|unhandled cuda error", re.I)),
    ("ncclSystemError", re.compile(r"ncclSystemError|unhandled system error", re.I)),
    ("ncclInternalError", re.compile(r"ncclInternalError|internal error - please report", re.I)),
    ("ncclInvalidUsage", re.compile(r"ncclInvalidUsage|invalid usage", re.I)),
)
_NCCL_VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+)")
_PEER = re.compile(
    r"(?:from|to|peer)\s+(\d{1,3}(?:\.\d{1,3}){3}|[0-9a-fA-F:]*:[0-9a-fA-F:]+)(?:<(\d+)>)?"
)
_SOCKET_RESET = re.compile(r"Connection reset by peer|Connection closed by (?:remote )?peer", re.I)
_IB_STATUS = re.compile(
    r"Got completion from peer .*?with (?:error|status)[ =](\d+)|(IBV_WC_[A-Z_]+)"
)
# ibv_wc_status values NCCL prints as numbers (rdma-core verbs.h).
IB_WC_STATUS = {
    4: "IBV_WC_LOC_PROT_ERR",
    5: "IBV_WC_WR_FLUSH_ERR",
    10: "IBV_WC_REM_ACCESS_ERR",
    12: "IBV_WC_RETRY_EXC_ERR",
    13: "IBV_WC_RNR_RETRY_EXC_ERR",
}
_TRANSPORT_CAUSE = {
    "ncclRemoteError": "nccl_remote_error",
    "ncclUnhandledCudaError": "nccl_unhandled_cuda_error",
    "ncclSystemError": "nccl_system_error",
    "ncclInternalError": "nccl_internal_error",
    "ncclInvalidUsage": "nccl_invalid_usage",
}
# After a job ends: torch ≥ 2.4 warns when the process group was never destroyed
# (ProcessGroupNCCL.cpp "process group has NOT been destroyed before we destruct
# ProcessGroupNCCL. On normal program exit, the application should call
# destroy_process_group"), and launchers print their own end markers.
_DESTROY_WARN = re.compile(
    r"has NOT been destroyed before we destruct ProcessGroupNCCL|"
    r"should call destroy_process_group",
    re.IGNORECASE,
)
_JOB_END = re.compile(
    r"End time of running main|Training (?:completed|finished|done)|training is done|"
    r"exitcode\s*:\s*0\b|exited with (?:code|status) 0\b|Job (?:finished|completed|succeeded)",
    re.IGNORECASE,
)
_GARBAGE_OOM = re.compile(r"Tried to allocate more than 1EB", re.IGNORECASE)
# Non-NCCL errors, most specific first: (kind, pattern).
_ERRORS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("cuda_oom", re.compile(r"CUDA out of memory|OutOfMemoryError|CUDA error: out of memory")),
    ("device_side_assert", re.compile(r"device-side assert|Assertion `.*` failed")),
    ("illegal_memory_access", re.compile(r"illegal memory access|CUDA_ERROR_ILLEGAL_ADDRESS")),
    ("gpu_hardware", re.compile(r"\bXid\b|uncorrectable ECC|ECC error|fallen off the bus")),
    ("cuda_error", re.compile(r"CUDA error:|CUDA_ERROR_|cudaError")),
    (
        "dataloader",
        re.compile(r"DataLoader worker \(pid|dataloader.*(?:timed out|killed|exited)", re.I),
    ),
    (
        "io_error",
        re.compile(
            r"No space left on device|Input/output error|Stale file handle|Read-only file system|"
            r"Permission denied|\b(?:OSError|IOError|BlockingIOError|FileNotFoundError)\b"
        ),
    ),
    ("process_killed", re.compile(r"\bKilled\b|OOMKilled|killed by signal|Out of memory: Killed")),
    ("crash", re.compile(r"Segmentation fault|SIGSEGV|core dumped|Fatal Python error")),
    (
        "exception",
        re.compile(r"(?:^|[\s\]:])(?:[A-Za-z_][\w.]*\.)?([A-Z]\w*(?:Error|Exception)):\s"),
    ),
)
# Activity that can stall one rank while the others wait in a collective.
_EVENTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "checkpoint_save",
        re.compile(
            r"[Ss]aving (?:the )?(?:latest |best |model )?checkpoint|save_checkpoint|"
            r"Saving model|torch\.save|save_pretrained|[Cc]heckpoint saving"
        ),
    ),
    (
        "evaluation",
        re.compile(
            r"\b(?:[Ee]valuat(?:ing|ion)|[Rr]unning validation|[Vv]alidation (?:loop|start))"
        ),
    ),
    (
        "data_loading",
        re.compile(r"[Ll]oading (?:dataset|data|shards?)|[Bb]uilding (?:dataset|index)"),
    ),
)
_EVENT_KIND_TO_PATTERN = {
    "checkpoint_save": "blocked_by_single_rank_io",
    "data_loading": "blocked_by_single_rank_io",
    "evaluation": "blocked_by_single_rank_work",
}


class WorkInfo(BaseModel):
    """One ``WorkNCCL(...)`` as a rank reported it (fields the line carries)."""

    rank: int | None = None
    seq: int | None = None
    op: str | None = None
    numel_in: int | None = None
    numel_out: int | None = None
    timeout_ms: int | None = None
    ran_for_ms: int | None = None
    blocking_wait: bool = False
    line: int = 0
    time: str | None = None
    text: str = ""

    def signature(self) -> str:
        """``ALLREDUCE(2106881)`` / ``ALLREDUCE`` when Numel is missing."""
        op = self.op or "?"
        if self.numel_in is None and self.numel_out is None:
            return op
        if self.numel_out is not None and self.numel_out != self.numel_in:
            return f"{op}({self.numel_in},{self.numel_out})"
        return f"{op}({self.numel_in})"


class ErrorLine(BaseModel):
    """A non-watchdog error or notable event on some rank."""

    kind: str
    line: int
    rank: int | None = None
    time: str | None = None
    seconds_before_timeout: float | None = None
    text: str = ""


class RankProgress(BaseModel):
    """What a rank's follow-up line said about its queue (per process group)."""

    rank: int
    at_work: int | None = None
    last_enqueued: int | None = None
    last_completed: int | None = None


class NcclReport(BaseModel):
    """What the NCCL analyzer concluded.

    ``pattern`` (the most specific that holds): ``secondary_to_rank_failure``,
    ``collective_mismatch``, ``blocked_by_single_rank_io``,
    ``blocked_by_single_rank_work``, ``nccl_transport_error``, ``watchdog_blocked``,
    ``missing_ranks``, ``straggler_at_min_seq`` (only when some ranks are seen at a higher
    SeqNum than others), ``watchdog_timeout`` (a collective timed out, nothing more can be
    told from the excerpt). ``flags`` lists every one that holds.
    ``first_failing_rank`` / ``first_error`` point at the cause; ``last_watchdog`` is
    given only to show what NOT to stop at.
    """

    category: str = CATEGORY
    pattern: str
    flags: list[str] = Field(default_factory=list)
    timeout_ms: int | None = None
    seq: int | None = None
    min_seq: int | None = None
    ranks_at_min_seq: list[int] = Field(default_factory=list)
    max_seq: int | None = None
    ops_at_seq: dict[str, str] = Field(default_factory=dict)
    mismatch_seq: int | None = None
    odd_one_out_rank: int | None = None
    odd_one_out_ranks: list[int] = Field(default_factory=list)
    first_failing_rank: int | None = None
    first_failing_rank_inferred: bool = False
    suspect_rank: int | None = None
    first_error: ErrorLine | None = None
    primary: str | None = None
    preceding_event: ErrorLine | None = None
    gap_s: int | None = None
    first_timeout: WorkInfo | None = None
    last_watchdog: WorkInfo | None = None
    timeouts_seen: int = 0
    ranks_timed_out: list[int] = Field(default_factory=list)
    ranks_seen: list[int] = Field(default_factory=list)
    world_size: int | None = None
    world_size_source: str | None = None
    ranks_never_logged: list[int] = Field(default_factory=list)
    ranks_without_timeout: list[int] = Field(default_factory=list)
    progress: list[RankProgress] = Field(default_factory=list)
    dump_requested_by_rank: int | None = None
    heartbeat_stuck_s: int | None = None
    max_ran_for_ms: int | None = None
    errors: list[ErrorLine] = Field(default_factory=list)
    transport_errors: list[ErrorLine] = Field(default_factory=list)
    legacy_format: bool = False
    likely: str | None = None
    nccl_error: str | None = None
    nccl_version: str | None = None
    peer: str | None = None
    socket_reset: bool = False
    ib_status: str | None = None
    facts: list[Fact] = Field(default_factory=list)
    first_line: int = 0
    next_check_ids: list[str] = Field(default_factory=list)
    mitigation_ids: list[str] = Field(default_factory=list)


def detect_line(line: str) -> bool:
    """Cheap test: is ``line`` a c10d/NCCL watchdog line?"""
    return "WorkNCCL" in line or "ProcessGroupNCCL" in line or "watchdog got stuck" in line


def _parse_work(line: str, line_no: int, rank: int | None, t: float | None) -> WorkInfo:
    idx = line.find("WorkNCCL(")
    seg = line[idx : idx + 600]
    w = WorkInfo(rank=rank, line=line_no, time=clock_text(t), text=snippet(line, 400))
    m = _F_SEQ.search(seg)
    w.seq = to_int(m.group(1)) if m else None
    m = _F_OP.search(seg)
    w.op = m.group(1).upper() if m else None
    m = _F_IN.search(seg)
    w.numel_in = to_int(m.group(1)) if m else None
    m = _F_OUT.search(seg)
    w.numel_out = to_int(m.group(1)) if m else None
    m = _F_TIMEOUT.search(seg)
    w.timeout_ms = to_int(m.group(1)) if m else None
    m = _RAN_FOR.search(line)
    w.ran_for_ms = to_int(m.group(1)) if m else None
    w.blocking_wait = bool(_BLOCKING.search(line))
    return w


_Entry = tuple[str, int, "int | None", str]  # kind, line, rank, text


class _Bucketed:
    """Bounded store of (time, entry): the first and last few per rank."""

    def __init__(self, first: int = KEEP_FIRST_PER_RANK, last: int = KEEP_LAST_PER_RANK) -> None:
        self._first_n = first
        self._last_n = last
        self._first: dict[int | None, list[tuple[float | None, _Entry]]] = {}
        self._last: dict[int | None, deque[tuple[float | None, _Entry]]] = {}

    def add(self, t: float | None, entry: _Entry) -> None:
        rank = entry[2]
        head = self._first.get(rank)
        if head is None:
            if len(self._first) >= MAX_ERROR_RANKS:
                return
            head = self._first[rank] = []
            self._last[rank] = deque(maxlen=self._last_n)
        if len(head) < self._first_n:
            head.append((t, entry))
        else:
            self._last[rank].append((t, entry))

    def __bool__(self) -> bool:
        return bool(self._first)

    def entries(self) -> list[tuple[float | None, ErrorLine]]:
        out: list[tuple[float | None, ErrorLine]] = []
        for rank, head in self._first.items():
            for t, (kind, line, r, text) in [*head, *self._last[rank]]:
                out.append(
                    (t, ErrorLine(kind=kind, line=line, rank=r, time=clock_text(t), text=text))
                )
        out.sort(key=lambda x: x[1].line)
        return out


class NcclAnalyzer:
    """Streaming NCCL analyzer: :meth:`feed` each line, then :meth:`finish`.

    Args:
        world_size: Number of ranks, when the user knows it; otherwise inferred from
            all-gather ``NumelOut/NumelIn`` or a ``world_size=`` line when present.
    """

    def __init__(self, world_size: int | None = None) -> None:
        self._world_size = world_size
        self._ws_source = "given" if world_size else None
        self._ws_inferred: Counter[int] = Counter()
        self._groups: dict[int, dict[int, WorkInfo]] = {}
        self._legacy: dict[int, WorkInfo] = {}
        self._timeouts: list[tuple[float | None, int, WorkInfo]] = []
        self._timeouts_seen = 0
        self._last_watchdog: WorkInfo | None = None
        self._ranks_seen: set[int] = set()
        self._ranks_timed_out: set[int] = set()
        self._progress: dict[int, RankProgress] = {}
        self._errors = _Bucketed()
        self._transport = _Bucketed(first=8, last=8)
        self._tx: dict[str, str] = {}
        self._destroy: ErrorLine | None = None
        self._job_end: ErrorLine | None = None
        self._events = _Bucketed()
        self._fingerprint: list[tuple[int, str, int]] = []
        self._dump_rank: int | None = None
        self._heartbeat: int | None = None
        self._first_line = 0
        self._any_time = False

    def scan_block(self, first_line: int, lines: list[str]) -> None:
        """Note the ranks named anywhere in a block of lines (cheap, whole-block regex).

        ``explain`` calls this for every block, also for lines it does not :meth:`feed`,
        so "ranks that never logged" counts every line of every rank.
        """
        if len(self._ranks_seen) >= MAX_RANKS:
            return
        for a, b in set(_RANK_ANY.findall("\n".join(lines))):
            if len(self._ranks_seen) >= MAX_RANKS:
                break
            self._ranks_seen.add(int(a or b))

    def feed(self, line_no: int, raw: str) -> None:
        """Consume one line (1-based ``line_no``). Never raises on odd input."""
        if not has_keyword(raw, KEYWORDS):
            return
        line = clip(raw)
        rank = line_rank(line, loose=False)
        if rank is not None and len(self._ranks_seen) < MAX_RANKS:
            self._ranks_seen.add(rank)
        if _DESTROY_WARN.search(line):
            self._destroy = self._destroy or ErrorLine(
                kind="destroy_warning", line=line_no, rank=rank, text=snippet(line, 300)
            )
            return
        if _JOB_END.search(line):
            self._job_end = self._job_end or ErrorLine(
                kind="job_end", line=line_no, rank=rank, text=snippet(line, 300)
            )
            return
        if "WorkNCCL(" in line:
            self._on_work(line_no, line, rank)
            return
        if ("NCCL" in line or "atchdog" in line) and self._on_nccl_followup(line_no, line, rank):
            return
        if "rank" in line and (m := _FINGERPRINT.search(line)):
            self._fingerprint.append((int(m.group(1)), m.group(2).upper(), line_no))
            self._first_line = self._first_line or line_no
            return
        if (m := _WORLD.search(line)) and self._ws_source != "given":
            ws = to_int(m.group(1))
            if ws:
                self._world_size, self._ws_source = ws, "log"
        if _NCCL_TRANSPORT.search(line):
            self._add_error(self._transport, "nccl_transport", line_no, line, rank)
            self._on_transport(line)
            return
        if _NCCL_NOISE.search(line) or _GARBAGE_OOM.search(line):
            # an impossible allocation follows an abort: never the first error
            return
        for kind, rx in _ERRORS:
            if rx.search(line):
                self._add_error(self._errors, kind, line_no, line, rank)
                return
        for kind, rx in _EVENTS:
            if rx.search(line):
                self._add_error(self._events, kind, line_no, line, rank)
                return

    def _on_transport(self, line: str) -> None:
        """Fold what a transport-error line says (first value of each kind wins)."""
        tx = self._tx
        if "code" not in tx:
            for code, rx in _NCCL_CODES:
                if rx.search(line):
                    tx["code"] = code
                    break
        if "version" not in tx and (m := _NCCL_VERSION.search(line)):
            tx["version"] = m.group(1)
        if "peer" not in tx and (m2 := _PEER.search(line)):
            tx["peer"] = m2.group(1)
        if _SOCKET_RESET.search(line):
            tx["reset"] = "1"
        if "ib" not in tx and (m3 := _IB_STATUS.search(line)):
            status = to_int(m3.group(1)) if m3.group(1) else None
            tx["ib"] = m3.group(2) or IB_WC_STATUS.get(status or -1, f"status {status}")

    def _clean_exit(self) -> NcclReport:
        """Only the exit-time warning (and perhaps a job-end marker): nothing failed."""
        d = self._destroy
        r = NcclReport(
            category="other",
            pattern="exit_without_destroy_process_group",
            likely="exit_without_destroy_process_group",
            first_line=d.line if d else 0,
        )
        r.errors = [e for e in (self._job_end, d) if e is not None]
        r.errors += [e for _, e in self._errors.entries()[:20]]
        r.facts = [Fact(id="nccl.destroy_warning", line=d.line if d else 0)]
        if self._job_end is not None:
            r.facts.insert(0, Fact(id="nccl.job_ended", line=self._job_end.line))
        if self._errors:
            r.facts.append(Fact(id="nccl.errors_besides", args={"n": len(self._errors.entries())}))
        r.next_check_ids = ["nccl.exit_status"]
        r.mitigation_ids = ["call_destroy"]
        return r

    def _transport_only(self) -> NcclReport:
        """A report for NCCL transport errors without any watchdog line."""
        r = NcclReport(pattern="nccl_transport_error", first_line=self._first_line)
        r.flags = ["nccl_transport_error"]
        r.transport_errors = [e for _, e in self._transport.entries()[:20]]
        r.first_line = min((e.line for e in r.transport_errors), default=0)
        r.ranks_seen = sorted(self._ranks_seen)
        r.errors = [e for _, e in self._errors.entries()[:50]]
        self._fill_transport(r)
        r.next_check_ids = _checks(r)
        r.mitigation_ids = _mitigations(r)
        return r

    def _fill_transport(self, r: NcclReport) -> None:
        tx = self._tx
        r.nccl_error = tx.get("code")
        r.nccl_version = tx.get("version")
        r.peer = tx.get("peer")
        r.socket_reset = "reset" in tx
        r.ib_status = tx.get("ib")
        if r.pattern == "nccl_transport_error":
            r.likely = _TRANSPORT_CAUSE.get(r.nccl_error or "", "nccl_transport_error")
            if r.ib_status and r.nccl_error in (None, "ncclRemoteError", "ncclSystemError"):
                r.likely = "ib_completion_error"
        r.facts = _transport_facts(r)

    def _add_error(
        self, into: _Bucketed, kind: str, line_no: int, line: str, rank: int | None
    ) -> None:
        t = line_time(line)
        self._any_time = self._any_time or t is not None
        into.add(t, (kind, line_no, rank, snippet(line, 400)))

    def _on_work(self, line_no: int, line: str, rank: int | None) -> None:
        t = line_time(line)
        self._any_time = self._any_time or t is not None
        w = _parse_work(line, line_no, rank, t)
        self._first_line = self._first_line or line_no
        is_timeout = bool(_TIMEOUT.search(line)) or w.blocking_wait
        if is_timeout:
            self._timeouts_seen += 1
            self._last_watchdog = w
            if rank is not None:
                self._ranks_timed_out.add(rank)
            if len(self._timeouts) < 256:
                self._timeouts.append((t, line_no, w))
            else:
                # keep the earliest by time
                worst = max(range(len(self._timeouts)), key=lambda i: self._tkey(self._timeouts[i]))
                if self._tkey((t, line_no, w)) < self._tkey(self._timeouts[worst]):
                    self._timeouts[worst] = (t, line_no, w)
        n_in, n_out = w.numel_in, w.numel_out
        if n_in and n_out:
            if w.op in ("ALLGATHER", "_ALLGATHER_BASE") and n_out % n_in == 0:
                self._ws_inferred[n_out // n_in] += 1
            elif w.op in ("REDUCESCATTER", "_REDUCE_SCATTER_BASE") and n_in % n_out == 0:
                self._ws_inferred[n_in // n_out] += 1
        if rank is None:
            return
        if w.seq is None:
            if is_timeout and rank not in self._legacy:
                self._legacy[rank] = w
            return
        group = self._groups.get(w.seq)
        if group is None:
            if len(self._groups) >= MAX_SEQ_GROUPS:
                return
            group = self._groups[w.seq] = {}
        if rank not in group and len(group) < MAX_RANKS_PER_GROUP:
            group[rank] = w

    @staticmethod
    def _tkey(item: tuple[float | None, int, WorkInfo]) -> tuple[float, int]:
        t, line_no, _ = item
        return (t if t is not None else float("inf"), line_no)

    def _on_nccl_followup(self, line_no: int, line: str, rank: int | None) -> bool:
        for rx in _FOLLOW:
            m = rx.search(line)
            if m and rank is not None:
                p = self._progress.setdefault(rank, RankProgress(rank=rank))
                p.at_work = to_int(m.group(1))
                p.last_enqueued = to_int(m.group(2))
                p.last_completed = to_int(m.group(3))
                return True
        m2 = _DUMP.search(line)
        if m2:
            if m2.group(1) is not None and self._dump_rank is None:
                self._dump_rank = int(m2.group(1))
            m3 = _DUMP_WORK.search(line)
            if m3 and rank is not None:
                p = self._progress.setdefault(rank, RankProgress(rank=rank))
                p.last_enqueued = to_int(m3.group(1))
                p.last_completed = to_int(m3.group(2))
            self._first_line = self._first_line or line_no
            return True
        m4 = _HEARTBEAT.search(line)
        if m4:
            self._heartbeat = max(self._heartbeat or 0, int(m4.group(1)))
            self._first_line = self._first_line or line_no
            return True
        return False

    # -- conclusions ------------------------------------------------------------------
    def finish(self) -> NcclReport | None:
        """The report, or ``None`` when the text held no NCCL watchdog evidence."""
        if not (
            self._timeouts or self._groups or self._legacy or self._fingerprint or self._heartbeat
        ):
            if self._transport:
                return self._transport_only()
            return self._clean_exit() if self._destroy else None
        r = NcclReport(pattern="straggler_at_min_seq", first_line=self._first_line)
        r.timeouts_seen = self._timeouts_seen
        r.last_watchdog = self._last_watchdog
        r.ranks_timed_out = sorted(self._ranks_timed_out)
        r.ranks_seen = sorted(self._ranks_seen)
        r.heartbeat_stuck_s = self._heartbeat
        r.dump_requested_by_rank = self._dump_rank
        r.progress = [self._progress[k] for k in sorted(self._progress)]
        timeouts = sorted(self._timeouts, key=self._tkey)
        first_t: float | None = None
        if timeouts:
            first_t, _, first = timeouts[0]
            r.first_timeout = first
            r.timeout_ms = first.timeout_ms
            rans = [w.ran_for_ms for _, _, w in timeouts if w.ran_for_ms is not None]
            r.max_ran_for_ms = max(rans) if rans else None
        self._world(r)
        flags: list[str] = []

        # 1. earliest non-NCCL error inside the window
        err = self._window_pick(self._errors, first_t, r.timeout_ms)
        if err is not None:
            flags.append("secondary_to_rank_failure")
            r.first_error = err
            r.primary = err.kind
            if err.rank is not None:
                r.first_failing_rank = err.rank

        # 2. desync: different signatures at one SeqNum, legacy ops, fingerprint mismatch
        self._mismatch(r, flags)

        # 3. one rank busy with I/O or evaluation while the others wait
        ev = self._window_pick(self._events, first_t, r.timeout_ms)
        if ev is not None:
            pattern = _EVENT_KIND_TO_PATTERN.get(ev.kind, "blocked_by_single_rank_io")
            flags.append(pattern)
            r.preceding_event = ev
            if ev.seconds_before_timeout is not None:
                r.gap_s = round(ev.seconds_before_timeout)
            if r.suspect_rank is None:
                # Unprefixed progress/checkpoint lines come from rank 0 in the usual
                # "log on rank 0 only" setup (Lightning, HF Trainer, accelerate).
                r.suspect_rank = ev.rank if ev.rank is not None else 0
                r.first_failing_rank_inferred = ev.rank is None

        if self._transport:
            flags.append("nccl_transport_error")
            r.transport_errors = [e for _, e in self._transport.entries()[:20]]

        if (
            r.max_ran_for_ms
            and r.timeout_ms
            and r.max_ran_for_ms > BLOCKED_WATCHDOG_FACTOR * r.timeout_ms
        ) or self._heartbeat:
            flags.append("watchdog_blocked")

        if r.ranks_never_logged:
            flags.append("missing_ranks")

        self._min_seq(r)
        if r.ranks_at_min_seq and len(r.ranks_at_min_seq) < len(self._ranks_with_seq()):
            flags.append("straggler_at_min_seq")
        # With one rank's log, or every rank at the same SeqNum, nobody is seen lagging:
        # a collective timed out, and the other ranks' logs are needed to say more.
        flags.append("watchdog_timeout")
        r.flags = list(dict.fromkeys(flags))
        r.pattern = r.flags[0]

        if r.first_failing_rank is None:
            if r.pattern == "collective_mismatch" and r.odd_one_out_rank is not None:
                r.first_failing_rank = r.odd_one_out_rank
            elif r.pattern in ("blocked_by_single_rank_io", "blocked_by_single_rank_work"):
                r.first_failing_rank = r.suspect_rank
                r.first_failing_rank_inferred = True
            elif len(r.ranks_never_logged) == 1:
                # One silent rank among ranks that did log is a suspect; several silent
                # ranks usually mean the excerpt holds fewer ranks' logs, and the lowest
                # of them would be an arbitrary pick.
                r.first_failing_rank = r.ranks_never_logged[0]
                r.first_failing_rank_inferred = True
            elif r.ranks_at_min_seq and len(r.ranks_at_min_seq) < len(
                r.ranks_timed_out or r.ranks_at_min_seq
            ):
                r.first_failing_rank = r.ranks_at_min_seq[0]
                r.first_failing_rank_inferred = True
        if r.suspect_rank is None:
            r.suspect_rank = r.first_failing_rank
        if r.first_error is None:
            r.first_error = self._first_error_fallback(r)
        if r.first_error is not None and r.first_error.line:
            r.first_line = min(x for x in (r.first_line, r.first_error.line) if x)
        r.errors = [e for _, e in self._errors.entries()[:50]]
        if self._transport:
            self._fill_transport(r)
        r.next_check_ids = _checks(r)
        r.mitigation_ids = _mitigations(r)
        return r

    def _first_error_fallback(self, r: NcclReport) -> ErrorLine | None:
        if r.pattern in ("blocked_by_single_rank_io", "blocked_by_single_rank_work"):
            return r.preceding_event
        # The first failing rank's own watchdog line, else the earliest watchdog line.
        pick: WorkInfo | None = None
        if r.first_failing_rank is not None:
            for _, _, w in sorted(self._timeouts, key=self._tkey):
                if w.rank == r.first_failing_rank:
                    pick = w
                    break
        pick = pick or r.first_timeout
        if pick is None:
            return None
        return ErrorLine(
            kind="watchdog_timeout", line=pick.line, rank=pick.rank, time=pick.time, text=pick.text
        )

    def _world(self, r: NcclReport) -> None:
        if self._world_size:
            r.world_size, r.world_size_source = self._world_size, self._ws_source
        elif self._ws_inferred:
            r.world_size, r.world_size_source = (
                self._ws_inferred.most_common(1)[0][0],
                "allgather_numel",
            )
        # Without a single rank-tagged line, "never logged" would name every rank.
        if r.world_size and r.world_size <= MAX_RANKS and self._ranks_seen:
            seen = self._ranks_seen
            r.ranks_never_logged = [i for i in range(r.world_size) if i not in seen][:1000]
            if self._ranks_timed_out:
                r.ranks_without_timeout = [
                    i for i in range(r.world_size) if i not in self._ranks_timed_out
                ][:1000]

    def _window_pick(
        self,
        items: _Bucketed,
        first_t: float | None,
        timeout_ms: int | None,
    ) -> ErrorLine | None:
        if not items:
            return None
        entries = items.entries()
        if first_t is not None and timeout_ms:
            lo = first_t - timeout_ms / 1000.0 - WINDOW_SLACK_S
            inside = [(t, e) for t, e in entries if t is not None and lo <= t <= first_t]
            if inside:
                t, e = min(inside, key=lambda x: (x[0], x[1].line))
                e = e.model_copy(update={"seconds_before_timeout": round(first_t - t, 3)})
                return e
            untimed = [e for t, e in entries if t is None]
            return untimed[0] if untimed and not self._any_timed(entries) else None
        # Without timestamps: the first error line in the text (log order).
        return min((e for _, e in entries), key=lambda e: e.line)

    @staticmethod
    def _any_timed(entries: list[tuple[float | None, ErrorLine]]) -> bool:
        return any(t is not None for t, _ in entries)

    def _mismatch(self, r: NcclReport, flags: list[str]) -> None:
        for seq in sorted(self._groups):
            group = self._groups[seq]
            sigs = {rank: w.signature() for rank, w in group.items()}
            # GATHER: NumelOut=0 on non-root ranks is normal, compare op and NumelIn only.
            cmp = {
                rank: (w.op, w.numel_in) if w.op == "GATHER" else (w.op, w.numel_in, w.numel_out)
                for rank, w in group.items()
            }
            if len(set(cmp.values())) > 1:
                flags.append("collective_mismatch")
                r.mismatch_seq = seq
                r.seq = seq
                r.ops_at_seq = {str(k): v for k, v in sorted(sigs.items())}
                self._odd(r, cmp)
                return
        if len(self._legacy) >= 2:
            ops = {rank: w.op for rank, w in self._legacy.items()}
            if len(set(ops.values())) > 1:
                flags.append("collective_mismatch")
                r.legacy_format = True
                r.ops_at_seq = {str(k): str(v) for k, v in sorted(ops.items())}
                self._odd(r, ops)
                return
        if self._legacy and not self._groups:
            r.legacy_format = True
            r.ops_at_seq = {str(k): w.signature() for k, w in sorted(self._legacy.items())}
        if self._fingerprint:
            flags.append("collective_mismatch")
            rank, op, _ = self._fingerprint[0]
            r.odd_one_out_rank = rank
            r.odd_one_out_ranks = [rank]
            r.ops_at_seq = {str(rank): op}

    @staticmethod
    def _odd(r: NcclReport, sig_by_rank: Mapping[int, object]) -> None:
        counts = Counter(sig_by_rank.values())
        if len(counts) < 2:
            return
        ordered = counts.most_common()
        if ordered[-1][1] < ordered[0][1]:
            minority = {s for s, c in ordered if c < ordered[0][1]}
            odd = sorted(k for k, s in sig_by_rank.items() if s in minority)
            r.odd_one_out_ranks = odd
            r.odd_one_out_rank = odd[0] if len(odd) == 1 else None

    def _ranks_with_seq(self) -> set[int]:
        """Ranks whose SeqNum (or last completed collective) the excerpt shows."""
        if self._groups:
            return {k for g in self._groups.values() for k in g}
        return {p.rank for p in self._progress.values() if p.last_completed is not None}

    def _min_seq(self, r: NcclReport) -> None:
        if not self._groups and not self._progress:
            return
        if self._groups:
            r.min_seq = min(self._groups)
            r.max_seq = max(self._groups)
            r.ranks_at_min_seq = sorted(self._groups[r.min_seq])
            if r.seq is None:
                r.seq = r.min_seq
            if not r.ops_at_seq:
                g = self._groups[r.min_seq]
                r.ops_at_seq = {str(k): w.signature() for k, w in sorted(g.items())}
        elif self._progress:
            done = {
                p.rank: p.last_completed
                for p in self._progress.values()
                if p.last_completed is not None
            }
            if done:
                low = min(done.values())
                r.min_seq = low + 1
                r.ranks_at_min_seq = sorted(k for k, v in done.items() if v == low)


def _transport_facts(r: NcclReport) -> list[Fact]:
    out: list[Fact] = []
    if r.nccl_error:
        out.append(
            Fact(
                id="nccl.transport_code",
                args={"code": r.nccl_error, "version": r.nccl_version or "?"},
                line=r.transport_errors[0].line if r.transport_errors else 0,
            )
        )
    if r.nccl_error == "ncclRemoteError":
        out.append(Fact(id="nccl.remote_exit"))
    if r.socket_reset:
        out.append(Fact(id="nccl.socket_reset", args={"peer": r.peer or "?"}))
    if r.ib_status:
        out.append(Fact(id="nccl.ib_status", args={"status": r.ib_status, "peer": r.peer or "?"}))
    if r.pattern == "nccl_transport_error" and not r.timeouts_seen:
        out.append(Fact(id="nccl.not_timeout"))
    return out


def _checks(r: NcclReport) -> list[str]:
    ids: list[str] = []
    if r.pattern == "secondary_to_rank_failure":
        ids += ["nccl.first_error_rank"]
    if "collective_mismatch" in r.flags:
        ids += ["nccl.debug_detail", "nccl.flight_recorder", "nccl.dataloader_len"]
    if r.pattern in ("blocked_by_single_rank_io", "blocked_by_single_rank_work"):
        ids += ["nccl.storage_latency", "nccl.rank0_only_work"]
    if "nccl_transport_error" in r.flags:
        if r.peer or r.nccl_error == "ncclRemoteError":
            ids += ["nccl.peer_log"]
        ids += ["nccl.ib_health", "nccl.debug_net", "nccl.network"]
    if "watchdog_blocked" in r.flags:
        ids += ["nccl.watchdog_blocked"]
    if r.ranks_never_logged:
        ids += ["nccl.silent_ranks"]
    # The handbook's order (seed 000, 场景二 检查顺序 1–5).
    ids += ["nccl.same_sequence", "nccl.alive_xid", "nccl.nccl_tests", "nccl.versions_env"]
    return list(dict.fromkeys(ids))


def _mitigations(r: NcclReport) -> list[str]:
    ids: list[str] = []
    if r.pattern == "secondary_to_rank_failure":
        ids.append("fix_primary_error")
    if "collective_mismatch" in r.flags:
        ids.append("align_collectives")
    if r.pattern in ("blocked_by_single_rank_io", "blocked_by_single_rank_work"):
        ids.append("async_checkpoint")
    if r.pattern == "nccl_transport_error":
        ids.append("cordon_bad_link")
    ids.append("no_timeout_raise")
    return ids


def explain_nccl_text(text: str, world_size: int | None = None) -> NcclReport | None:
    """Analyse a whole text at once (convenience over :class:`NcclAnalyzer`)."""
    a = NcclAnalyzer(world_size=world_size)
    for i, line in enumerate(text.splitlines(), 1):
        a.feed(i, line)
    return a.finish()
