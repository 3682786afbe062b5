"""Metric readings that are artifacts of how they are measured, not of the workload
(pure, no I/O).

* DCGM ``DCGM_FI_DEV_GPU_UTIL`` is not supported on MIG instances and reads 0 whatever
  runs there; the MIG-aware signals are the profiling fields ``DCGM_FI_PROF_GR_ENGINE_ACTIVE``
  / ``DCGM_FI_PROF_SM_ACTIVE`` / ``DCGM_FI_PROF_DRAM_ACTIVE`` (dcgm-exporter#216, case
  util-10; NVIDIA DCGM docs, "Profiling Metrics" and "MIG support"). A MIG instance's
  series carries the ``GPU_I_PROFILE`` and ``GPU_I_ID`` labels (dcgm-exporter's MIG labels).
"""

from __future__ import annotations

import re

from pydantic import Field

from cockpit.analysis.context_facts import Fact, ReportTail
from cockpit.analysis.logtext import has_keyword, snippet, to_float

KEYWORDS = ("dcgm_fi_dev_gpu_util",)
_SERIES = re.compile(r"DCGM_FI_DEV_GPU_UTIL\{([^}]{0,2000})\}\s+(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)")
_PROFILE = re.compile(r"GPU_I_PROFILE=\"([^\"]{1,40})\"")
_INSTANCE = re.compile(r"GPU_I_ID=\"([^\"]{1,10})\"")
_POD = re.compile(r"\bpod=\"([^\"]{1,253})\"")


class MetricArtifactReport(ReportTail):
    """``cause`` ``mig_gpu_util_unsupported``: every ``DCGM_FI_DEV_GPU_UTIL`` sample of a
    MIG instance (series with ``GPU_I_PROFILE``/``GPU_I_ID``) reads exactly 0.
    ``category`` ``other``: the GPUs are not shown idle by this, the metric cannot see them.
    """

    category: str = "other"
    cause: str = "mig_gpu_util_unsupported"
    mig_series: int = 0
    zero_series: int = 0
    mig_profiles: list[str] = Field(default_factory=list)
    pods: list[str] = Field(default_factory=list)


def detect_line(line: str) -> bool:
    """A ``DCGM_FI_DEV_GPU_UTIL`` series line of a MIG instance."""
    return "DCGM_FI_DEV_GPU_UTIL{" in line and "GPU_I_" in line


class MetricArtifactAnalyzer:
    """Streaming analyzer: :meth:`feed` per line, then :meth:`finish` (bounded state)."""

    def __init__(self) -> None:
        self._mig = 0
        self._zero = 0
        self._nonmig_nonzero = 0
        self._profiles: dict[str, None] = {}
        self._pods: dict[str, None] = {}
        self._lines: list[dict[str, object]] = []
        self._first = 0

    def feed(self, line_no: int, raw: str) -> None:
        """Consume one line (1-based). Never raises on odd input."""
        if not has_keyword(raw, KEYWORDS):
            return
        m = _SERIES.search(raw)
        if m is None:
            return
        labels, value = m.group(1), to_float(m.group(2))
        if value is None:
            return
        if "GPU_I_PROFILE" not in labels and "GPU_I_ID" not in labels:
            return
        self._mig += 1
        if value == 0:
            self._zero += 1
        if (p := _PROFILE.search(labels)) and len(self._profiles) < 32:
            self._profiles[p.group(1)] = None
        if (pod := _POD.search(labels)) and len(self._pods) < 64:
            self._pods[pod.group(1)] = None
        self._first = self._first or line_no
        if len(self._lines) < 8:
            self._lines.append({"line": line_no, "text": snippet(raw, 300)})

    def finish(self) -> MetricArtifactReport | None:
        """The report when every MIG GPU_UTIL sample is 0, else ``None``."""
        if not self._mig or self._zero != self._mig:
            return None
        r = MetricArtifactReport(
            mig_series=self._mig,
            zero_series=self._zero,
            mig_profiles=list(self._profiles),
            pods=list(self._pods),
            lines=self._lines,
            first_line=self._first,
        )
        r.facts = [
            Fact(id="metric.mig_labels", args={"profiles": r.mig_profiles or ["?"]}),
            Fact(id="metric.all_zero", args={"n": r.mig_series}),
        ]
        r.next_check_ids = ["metric.prof_fields", "metric.in_pod"]
        r.mitigation_ids = ["use_prof_fields", "fix_queries"]
        return r


def explain_metric_artifact_text(text: str) -> MetricArtifactReport | None:
    """Analyse a whole text at once (convenience over :class:`MetricArtifactAnalyzer`)."""
    a = MetricArtifactAnalyzer()
    for i, line in enumerate(text.splitlines(), 1):
        a.feed(i, line)
    return a.finish()
