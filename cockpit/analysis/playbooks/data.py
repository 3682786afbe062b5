"""What the playbook checks read: data already fetched from the sources (no I/O here).

Filled by :mod:`cockpit.collect.playbooks`; tests build it directly. A source that was
not available is named in ``missing`` with the reason, and every check that needs it
answers "not available: <source>" instead of guessing.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from cockpit.analysis.load import Finding
from cockpit.i18n import UNKNOWN
from cockpit.models import Reading
from cockpit.models.gpu import GpuNodeSnapshot
from cockpit.models.kube import EventLite, NodeLite, PodLite
from cockpit.models.messages import fmt_number


class Signal(BaseModel):
    """A metric signal for the incident window.

    Attributes:
        now: Value at the incident clock's now (an instant query).
        baseline: The same signal in the baseline window (``None`` when not queried).
        per_instance: ``{pod or instance: value}`` now, when queried per replica, in the
            unit of ``now``.
        per_instance_query: The PromQL behind ``per_instance``.
        baseline_from: ``""`` when ``baseline`` is the configured offset (1 d or 7 d
            earlier); ``"quiet"`` when that had no series and the value 2 h before now
            (before the incident window) was used instead.
        query: The PromQL behind ``now``.
        signal_id: The canonical signal it is (``serving.queue``), when it is one: it is
            judged with that signal's threshold
            (:func:`cockpit.analysis.golden.judge_msg`), as in steps C and D.
        verdict: The verdict steps A and C give it, when ``now`` and ``baseline`` were read
            from their result (the service's own scope); empty otherwise.
    """

    now: Reading
    baseline: Reading | None = None
    per_instance: dict[str, float] = Field(default_factory=dict)
    per_instance_query: str = ""
    baseline_from: str = ""
    query: str = ""
    signal_id: str = ""
    verdict: str = ""
    top_bucket: float | None = None
    bottom_bucket: float | None = None
    lowest_bound: float | None = None

    def now_text(self) -> str:
        """``now``'s number as C shows it (the unit apart): ``≥ 159,200`` for a quantile
        in its histogram's top bucket, ``≤ 300`` in its lowest (read from the drilldown's
        row, :attr:`cockpit.analysis.golden.SignalSummary.top_bucket`), else the value."""
        from cockpit.analysis.golden import bound_number

        bounded = bound_number(self.top_bucket, self.bottom_bucket)
        if bounded is not None:
            return bounded
        return fmt_number(self.now.value, 3) if self.now.value is not None else UNKNOWN

    def baseline_text(self) -> str:
        """The baseline's number as C shows it: ``≤ 300`` below the histogram's lowest
        bound (an interpolation inside the lowest bucket), else the value."""
        base = self.baseline.value if self.baseline is not None else None
        if base is None:
            return UNKNOWN
        if self.lowest_bound is not None and base < self.lowest_bound:
            return f"≤ {fmt_number(self.lowest_bound)}"
        return fmt_number(base, 3)

    def worse(self) -> bool | None:
        """Anomalous on its bad side: the drilldown's verdict when read from it, else the
        same judgement of ``now`` against ``baseline`` with the signal's threshold; a
        signal that is not a canonical one is judged as a latency (×1.5). ``None`` without
        a value or a baseline."""
        from cockpit.analysis.golden import judge_msg

        now = self.now.value
        base = self.baseline.value if self.baseline is not None else None
        if self.verdict:
            return None if self.verdict == "no_data" else self.verdict == "anomalous"
        if now is None or base is None:
            return None
        verdict, _ = judge_msg(self.signal_id or "serving.e2e_latency", now, base)
        return verdict == "anomalous"


class ModelConfig(BaseModel):
    """The served model's shape, from its ``config.json`` or the user.

    Attributes:
        params_b: Parameters in billions.
        num_layers: ``num_hidden_layers``.
        num_kv_heads: ``num_key_value_heads`` (= attention heads without GQA).
        head_dim: ``hidden_size / num_attention_heads`` unless given.
        dtype_bytes: Bytes per weight (2 for fp16/bf16, 1 for fp8/int8).
        kv_dtype_bytes: Bytes per KV element (2, or 1 with an fp8 KV cache).
    """

    params_b: float | None = None
    num_layers: int | None = None
    num_kv_heads: int | None = None
    head_dim: int | None = None
    dtype_bytes: float = 2.0
    kv_dtype_bytes: float = 2.0


class PlaybookData(BaseModel):
    """Everything the checks may read.

    Attributes:
        pods: The service's (or job's) pods.
        logs: ``{pod name: log text}`` (tail; previous instance appended when restarted).
        nodes: Nodes (all, or those of the pods).
        events: Events about the pods (FailedScheduling…).
        daemonsets: ``{name: (desired, ready)}`` of GPU device-plugin DaemonSets.
        gpus: GPU snapshots of the pods' nodes (NVML local or DCGM via Prometheus).
        metrics: Named signals (see :mod:`cockpit.collect.playbooks` for the names).
        model: The model's shape when known.
        missing: ``{source: reason}`` for sources that are not available.
        load: Step F's findings for the service (:class:`~cockpit.analysis.load.Finding`,
            by id), read from F's result when the playbook checks the service itself: an
            item that asks what F asks answers with F's finding, never a second one.
    """

    pods: list[PodLite] = Field(default_factory=list)
    logs: dict[str, str] = Field(default_factory=dict)
    nodes: list[NodeLite] = Field(default_factory=list)
    events: list[EventLite] = Field(default_factory=list)
    daemonsets: dict[str, tuple[int, int]] = Field(default_factory=dict)
    gpus: list[GpuNodeSnapshot] = Field(default_factory=list)
    metrics: dict[str, Signal] = Field(default_factory=dict)
    model: ModelConfig | None = None
    missing: dict[str, str] = Field(default_factory=dict)
    load: dict[str, Finding] = Field(default_factory=dict)

    def has(self, source: str) -> bool:
        """True when ``source`` (``kube``, ``gpu``, ``metrics``) was available."""
        return source not in self.missing

    def signal(self, name: str) -> Signal | None:
        """The signal ``name`` when it has a known value now."""
        s = self.metrics.get(name)
        return s if s is not None and s.now.value is not None else None

    def all_logs(self) -> str:
        """Every pod's log, one after another, each line prefixed by nothing."""
        return "\n".join(self.logs[k] for k in sorted(self.logs))
