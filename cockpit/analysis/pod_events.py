"""A container restarting in a loop, as ``kubectl describe pod`` / ``get events`` show it
(pure, no I/O).

A crash loop says that the container keeps exiting, not why: kubelet's ``BackOff`` event
(``Back-off restarting failed container``) and the ``CrashLoopBackOff`` waiting reason
(Kubernetes docs, "Debug Running Pods" / "Pod Lifecycle"). The why is in the container's
last state (``Last State: Terminated``, ``Reason: OOMKilled``, ``Exit Code: 137``) and in
the previous container's log (``kubectl logs --previous``). ``OOMKilled`` is the
container's *host* memory limit (cgroup), not GPU memory. When the paste also shows what
made it exit (a lost GPU, a CUDA error, a CUDA OOM), the loop is listed as that cause's
consequence (:mod:`cockpit.analysis.cascade`).
"""

from __future__ import annotations

import re

from cockpit.analysis.context_facts import Fact, LineKeeper, ReportTail
from cockpit.analysis.logtext import clip, has_keyword, to_int

KEYWORDS = ("crashloopbackoff", "back-off restarting", "backoff", "oomkilled", "exit code")
_LOOP = re.compile(r"CrashLoopBackOff|Back-off restarting failed container")
_OOMKILLED = re.compile(r"\bOOMKilled\b")
_EXIT = re.compile(r"Exit Code:\s*(\d{1,3})\b")
_RESTARTS = re.compile(r"Restart Count:\s*(\d+)")


class CrashLoopReport(ReportTail):
    """``cause``: ``container_oomkilled`` (the last state says ``OOMKilled``: the pod's
    memory limit, host RAM) or ``crash_loop_undetermined`` (the paste shows the loop and
    not why). ``exit_code`` is the last one shown; ``restarts`` the largest count."""

    category: str = "other"
    cause: str
    oomkilled: bool = False
    exit_code: int | None = None
    restarts: int | None = None


def detect_line(line: str) -> bool:
    """A crash-loop line (event or waiting reason)."""
    return bool(_LOOP.search(line))


class CrashLoopAnalyzer:
    """Streaming analyzer: :meth:`feed` per line, then :meth:`finish` (bounded state)."""

    def __init__(self) -> None:
        self._seen = LineKeeper()
        self._loop = False
        self._oomkilled = False
        self._exit: int | None = None
        self._restarts: int | None = None

    def feed(self, line_no: int, raw: str) -> None:
        """Consume one line (1-based). Never raises on odd input."""
        if not has_keyword(raw, KEYWORDS) and "Restart Count" not in raw:
            return
        line = clip(raw)
        if _LOOP.search(line):
            self._loop = True
            self._seen.keep(line_no, line)
        if _OOMKILLED.search(line):
            self._oomkilled = True
            self._seen.keep(line_no, line)
        if m := _EXIT.search(line):
            self._exit = to_int(m.group(1))
        if m2 := _RESTARTS.search(line):
            n = to_int(m2.group(1))
            if n is not None:
                self._restarts = max(self._restarts or 0, n)

    def finish(self) -> CrashLoopReport | None:
        """The report, or ``None`` when no crash loop is shown."""
        if not self._loop:
            return None
        cause = "container_oomkilled" if self._oomkilled else "crash_loop_undetermined"
        r = CrashLoopReport(
            cause=cause,
            oomkilled=self._oomkilled,
            exit_code=self._exit,
            restarts=self._restarts,
            lines=self._seen.lines,
            first_line=self._seen.first,
        )
        r.facts = [Fact(id="pod.loop", args={"restarts": self._restarts or "?"})]
        if self._exit is not None:
            r.facts.append(Fact(id="pod.exit_code", args={"code": self._exit}))
        r.next_check_ids = ["pod.previous_logs", "pod.last_state"]
        if self._oomkilled:
            r.next_check_ids.append("pod.memory_limit")
        r.mitigation_ids = ["raise_memory_limit"] if self._oomkilled else ["fix_first_error"]
        return r
