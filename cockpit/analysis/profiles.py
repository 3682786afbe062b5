"""Metric profiles: which serving/hardware stack a Prometheus target exposes, and the PromQL
for every canonical signal in that stack's own metric names.

Profiles are data (``cockpit/knowledge/profiles/*.toml``, each citing its sources); this
module loads them, merges user overrides, detects which apply from the target's metric
names, and renders queries. Pure: no I/O except reading the packaged TOML files.

Canonical signal ids are ``<layer>.<name>`` (see :data:`cockpit.models.signals.SIGNALS`). A signal whose metric is
missing is reported with *which* metric is missing and how to enable it — never as zero.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationInfo, model_validator

# Labels that identify an entity, in order of preference. DCGM's node label was renamed
# Hostname -> hostname (dcgm-exporter PR #655, 2026-05-12): match both. A series with
# `exported_pod` was scraped with honorLabels false: its `pod` is the exporter's own and
# `exported_pod` the workload's (Prometheus scrape_config honor_labels), so it comes first.
ENTITY_LABELS: dict[str, tuple[str, ...]] = {
    "pod": ("exported_pod", "pod", "pod_name"),
    "node": ("node", "Hostname", "hostname", "kubernetes_node"),
    "gpu": ("UUID", "uuid", "gpu_uuid"),
    "instance": ("instance",),
}
"""Entity kinds and the label names that carry them (metrics_kb.md §1.1, §8.4)."""

# The unified labels of seed 003 §五 ("统一标签：service、instance、gpu_id、model、request_id")
# and the label names that are their equivalents in the stacks we know.
UNIFIED_LABELS: dict[str, tuple[str, ...]] = {
    "service": ("service", "app", "deployment", "job", "envoy_cluster_name", "ingress"),
    "instance": ("instance", "pod", "exported_pod", "Hostname", "hostname", "node"),
    "gpu_id": ("UUID", "uuid", "gpu_uuid", "gpu"),
    "model": ("model_name", "model", "served_model_name"),
    "request_id": ("request_id", "trace_id", "batch_id"),
}
"""Seed 003 §五 unified labels → equivalent label names per stack."""


class SplitSpec(BaseModel):
    """A counter signal read from its family's per-label rates: ``sum by (<label>)
    (rate(<counter>[5m]))`` is one query for every signal of the family (QPS, the 4xx and
    5xx shares, timeouts), split client-side, instead of one query each, every ratio
    recomputing its denominator. Equivalent to the signal's ``query``, which is still what
    per-entity breakdowns run and what is shown.

    Attributes:
        label: The label the family is split by (``status``, ``finished_reason``).
        match: Regex the label's value must match in full, as PromQL's ``=~`` does
            (``5..|5xx``); empty: every series.
        mode: ``rate`` (the matching series' rate), ``share`` (matching / all, a
            fraction, then ``scale``) or ``percent`` (the same × 100).
    """

    label: str
    match: str = ""
    mode: Literal["rate", "share", "percent"] = "rate"


class SignalSpec(BaseModel):
    """One canonical signal in one stack's metric names.

    Attributes:
        id: Canonical id (a key of :data:`~cockpit.models.signals.SIGNALS`).
        kind: ``histogram`` (base name; quantiles from ``_bucket``), ``counter_rate``,
            ``gauge`` or ``expr`` (``query`` template).
        metrics: Alternative metric names, newest first (version aliases).
        requires: Other metrics the query needs (all must exist).
        presence: The exact series name that proves the signal exists (default derived).
        query: Template for ``expr``: ``$M`` chosen metric, ``$sel`` label matchers,
            ``$w`` rate window, ``$by`` grouping labels.
        queries: Alternative → its own ``expr`` template, for an alternative exposed
            another way (dcgm-exporter's windowed Xid counter instead of the last-Xid
            gauge, TensorRT-LLM's request gauge under a ``request_type`` label); the
            others use ``query``.
        agg: Aggregation of a gauge across series (``sum``/``avg``/``max``/``min``).
        scale: Factor to the display unit.
        unit: Display unit.
        average_only: True when the stack gives averages, not percentiles (Triton).
        split: When set, the whole-service value comes from the counter family's
            per-label rates (:class:`SplitSpec`, :func:`render_family`).
    """

    id: str
    kind: Literal["histogram", "counter_rate", "gauge", "expr"]
    metrics: list[str]
    requires: list[str] = Field(default_factory=list)
    presence: str = ""
    query: str = ""
    queries: dict[str, str] = Field(default_factory=dict)
    agg: str = "sum"
    scale: float = 1.0
    unit: str = ""
    average_only: bool = False
    split: SplitSpec | None = None
    enable_en: str = ""
    enable_zh: str = ""
    note_en: str = ""
    note_zh: str = ""
    alias_note_en: str = ""
    alias_note_zh: str = ""
    source: str = ""

    def presence_names(self) -> list[str]:
        """Series names whose presence proves each alternative (same order as ``metrics``)."""
        if self.presence:
            return [self.presence] + [m for m in self.metrics[1:]]
        if self.kind == "histogram":
            return [f"{m}_bucket" for m in self.metrics]
        return list(self.metrics)


SERIES_SUFFIXES = ("_bucket", "_count", "_sum")
"""Suffixes of a histogram's series: ``x_bucket`` is covered by the source of ``x``."""


class UpstreamSource(BaseModel):
    """Where a profile's metric names were read: the upstream file and the version (tag,
    commit or release line) that defines them, or, for names no exporter emits, a
    naming convention said as such.

    Attributes:
        metrics: The metric names this source defines.
        file: Upstream project and path (``vllm-project/vllm vllm/v1/metrics/loggers.py``).
        version: The version or commit read (``0.12 line``, ``v3.3.7 (db931fc)``).
        convention: True for names no upstream exporter emits (a convention cockpit
            proposes); then ``file``/``version`` may be empty and the notes say so.
        note_en, note_zh: What the convention is (required for a convention).

    Raises:
        ValueError: a source without file or version, or a convention without its notes.
    """

    metrics: list[str]
    file: str = ""
    version: str = ""
    convention: bool = False
    note_en: str = ""
    note_zh: str = ""

    @model_validator(mode="after")
    def _complete(self) -> UpstreamSource:
        if self.convention:
            if not (self.note_en and self.note_zh):
                raise ValueError(f"convention {self.metrics} needs note_en and note_zh")
        elif not (self.file and self.version):
            raise ValueError(f"{self.metrics}: an upstream source needs a file and a version")
        return self


class ProfileMeta(BaseModel):
    """Header of a profile file."""

    id: str
    name: str
    stack: str
    detect: list[str]
    source: str = ""
    enable_en: str = ""
    enable_zh: str = ""
    missing_en: str = ""
    missing_zh: str = ""
    labels: dict[str, str] = Field(default_factory=dict)
    """Scope key → this stack's label name: ``namespace``, ``model``, ``service`` and
    ``pod`` (the name of the workload's pod, narrowed by ``service.deployment``); a key left
    out is not applied to this stack's series."""
    unsupported: dict[str, dict[str, str]] = Field(default_factory=dict)
    upstream: list[UpstreamSource] = Field(default_factory=list)
    """The upstream file and version of every metric the profile names (see
    :class:`UpstreamSource`); required of the shipped profiles."""

    def source_of(self, metric: str) -> UpstreamSource | None:
        """The upstream source of a metric name (a histogram's series by its base name)."""
        bases = [metric] + [metric[: -len(x)] for x in SERIES_SUFFIXES if metric.endswith(x)]
        for src in self.upstream:
            if any(b in src.metrics for b in bases):
                return src
        return None


class Profile(BaseModel):
    """A stack's metric profile: header plus its signals.

    Validated with the context ``{"shipped": True}`` (the packaged profiles), every metric
    named in ``detect``, a signal's ``metrics``, ``requires`` or ``presence`` must have an
    :attr:`ProfileMeta.upstream` source (a user's override file need not).

    Raises:
        ValueError: a shipped profile names a metric without an upstream source.
    """

    profile: ProfileMeta
    signal: list[SignalSpec] = Field(default_factory=list)

    @model_validator(mode="after")
    def _sourced(self, info: ValidationInfo) -> Profile:
        if not (info.context or {}).get("shipped"):
            return self
        unsourced = sorted(m for m in self.metric_names() if self.source_of(m) is None)
        if unsourced:
            raise ValueError(f"{self.id}: no upstream file and version for {unsourced}")
        return self

    def metric_names(self) -> set[str]:
        """Every metric name the profile names (detect, metrics, requires, presence)."""
        names = set(self.profile.detect)
        for s in self.signal:
            names.update(s.metrics)
            names.update(s.requires)
            if s.presence:
                names.add(s.presence)
        return names

    def source_of(self, metric: str) -> UpstreamSource | None:
        """:meth:`ProfileMeta.source_of` of this profile."""
        return self.profile.source_of(metric)

    @property
    def id(self) -> str:
        """Profile id (``vllm``, ``dcgm``…)."""
        return self.profile.id


def _merge(base: Profile, extra: Profile) -> Profile:
    """``extra`` overrides ``base`` signal by signal (same id) and in its header fields."""
    signals = {s.id: s for s in base.signal}
    for s in extra.signal:
        signals[s.id] = s
    meta = base.profile.model_copy(
        update={
            k: v
            for k, v in extra.profile.model_dump().items()
            if v not in ("", [], {}) and k != "id"
        }
    )
    return Profile(profile=meta, signal=list(signals.values()))


@cache
def builtin_profiles() -> tuple[Profile, ...]:
    """The profiles shipped in ``cockpit/knowledge/profiles``."""
    root = resources.files("cockpit.knowledge") / "profiles"
    out = []
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            data = tomllib.loads(entry.read_text(encoding="utf-8"))
            out.append(Profile.model_validate(data, context={"shipped": True}))
    return tuple(out)


def profile_names(ids: Iterable[str]) -> str:
    """The detected stacks as their exporters call themselves (``dcgm-exporter, vLLM``),
    comma-separated, ``-`` for none; a profile cockpit does not ship keeps its id."""
    names = {p.id: p.profile.name for p in builtin_profiles()}
    return ", ".join(names.get(i, i) for i in ids) or "-"


def load_profiles(
    extra_files: Iterable[Path] = (),
    disable: Iterable[str] = (),
) -> list[Profile]:
    """Built-in profiles merged with user files (same schema; same id = override/extend).

    Raises:
        OSError: an extra file cannot be read.
        tomllib.TOMLDecodeError, pydantic.ValidationError: an extra file is malformed.
    """
    by_id = {p.id: p for p in builtin_profiles()}
    for path in extra_files:
        extra = Profile.model_validate(tomllib.loads(Path(path).read_text(encoding="utf-8")))
        by_id[extra.id] = _merge(by_id[extra.id], extra) if extra.id in by_id else extra
    off = set(disable)
    return [p for p in by_id.values() if p.id not in off]


class ResolvedSignal(BaseModel):
    """A signal of a detected profile, resolved against the target's metric names.

    ``metric`` is the alternative in use (``None`` when missing); ``missing`` lists the
    names that were looked for; ``alias`` is set when an older name is in use.
    """

    id: str
    profile: str
    spec: SignalSpec
    metric: str | None = None
    missing: list[str] = Field(default_factory=list)
    alias: bool = False
    unsupported: str = ""

    @property
    def available(self) -> bool:
        """True when the signal can be queried."""
        return self.metric is not None and not self.missing


class Detection(BaseModel):
    """Which profiles apply, and every canonical signal resolved.

    Attributes:
        profiles: Ids of the detected profiles.
        signals: Canonical id → the resolved signal (from the first detected profile that
            defines it; an available alternative wins over a missing one).
        missing: Canonical id → resolved entries whose metrics are missing.
        unsupported: Canonical id → reason, when a detected stack cannot produce it (in
            the detection's language).
        unsupported_i18n: The same reasons in each language (``{id: {"zh": …, "en": …}}``),
            which the screens render in theirs after a language switch.
        metas: Profile id → its header, with the label names where discovery found the
            workload (``exported_namespace`` under ``honorLabels: false``).
        joins: Profile id → the ``instance`` regex of the scope's pods, for a source
            scraped without ``namespace``/``pod`` labels (joined through the pods' IPs,
            :mod:`cockpit.analysis.discovery`).
    """

    profiles: list[str] = Field(default_factory=list)
    signals: dict[str, ResolvedSignal] = Field(default_factory=dict)
    unsupported: dict[str, str] = Field(default_factory=dict)
    unsupported_i18n: dict[str, dict[str, str]] = Field(default_factory=dict)
    metas: dict[str, ProfileMeta] = Field(default_factory=dict)
    joins: dict[str, str] = Field(default_factory=dict)

    def selector_for(self, resolved: ResolvedSignal, scope: dict[str, str]) -> str:
        """Label matchers of ``scope`` in the profile's label names (see :func:`selector`);
        for a source joined through ``instance``, the namespace and pod are that join."""
        return self.scope_selector(resolved.profile, scope)

    def scope_selector(
        self, profile_id: str, scope: dict[str, str], fallback: ProfileMeta | None = None
    ) -> str:
        """:meth:`selector_for` by profile id, for a query the profiles do not define (a
        playbook's own PromQL over that exporter's series); ``fallback`` gives the label
        names when the profile was not detected (``""`` without either)."""
        meta = self.metas.get(profile_id, fallback)
        if meta is None:
            return ""
        join = self.joins.get(profile_id)
        if join is None:
            return selector(scope, meta)
        rest = selector({k: v for k, v in scope.items() if k not in ("namespace", "pod")}, meta)
        escaped = join.replace("\\", "\\\\").replace('"', '\\"')  # a PromQL string
        return ",".join(p for p in (rest, f'instance=~"{escaped}"') if p)

    def enable_hint(self, resolved: ResolvedSignal, lang: str) -> str:
        """How to enable a missing signal of a detected stack: the signal's own hint, else
        the profile's ``missing_*`` text (how this stack turns a metric on), else a
        generic note naming the stack."""
        own = resolved.spec.enable_zh if lang == "zh" else resolved.spec.enable_en
        if own:
            return own
        meta = self.metas.get(resolved.profile)
        if meta is None:
            return ""
        hint = meta.missing_zh if lang == "zh" else meta.missing_en
        if hint:
            return hint
        if lang == "zh":
            return f"此 {meta.name} 未导出该指标（版本或启动参数）；请检查它的 /metrics"
        return f"not exported by this {meta.name} (version or flags); check its /metrics"

    def get(self, signal_id: str) -> ResolvedSignal | None:
        """The resolved signal for a canonical id, or ``None`` when no profile defines it."""
        return self.signals.get(signal_id)

    def unscoped(self, key: str) -> list[str]:
        """Names of the detected stacks whose series a scope ``key`` (``pod``,
        ``model``…) cannot narrow: their profile maps no label for it."""
        return [m.name for pid in self.profiles if key not in (m := self.metas[pid]).labels]


def detect_profiles(
    metric_names: Iterable[str],
    profiles: Iterable[Profile] | None = None,
    force: Iterable[str] = (),
    lang: str = "en",
) -> Detection:
    """Pick the profiles whose ``detect`` metrics the target exposes and resolve signals.

    Args:
        metric_names: ``/api/v1/label/__name__/values`` of the target.
        profiles: Profiles to consider (default: built-in).
        force: Profile ids to use even when not detected (user override).
        lang: Language of the ``unsupported`` reasons.

    Returns:
        A :class:`Detection`. A stack that is present but lacks a signal's metric yields a
        resolved entry with ``missing`` set, so the UI can say which metric is missing.
    """
    names = set(metric_names)
    forced = set(force)
    plist = list(profiles) if profiles is not None else list(builtin_profiles())
    det = Detection()
    for prof in plist:
        if prof.id not in forced and not any(d in names for d in prof.profile.detect):
            continue
        det.profiles.append(prof.id)
        det.metas[prof.id] = prof.profile
        for sid, reason in prof.profile.unsupported.items():
            det.unsupported.setdefault(sid, reason.get(lang) or reason.get("en", ""))
            det.unsupported_i18n.setdefault(
                sid, {x: reason.get(x) or reason.get("en", "") for x in ("zh", "en")}
            )
        for spec in prof.signal:
            resolved = resolve_signal(spec, names, prof.id)
            current = det.signals.get(spec.id)
            if current is None or (not current.available and resolved.available):
                det.signals[spec.id] = resolved
    # A signal one stack cannot produce but another provides is not unsupported.
    for sid in list(det.unsupported):
        if sid in det.signals and det.signals[sid].available:
            del det.unsupported[sid]
            det.unsupported_i18n.pop(sid, None)
    return det


def resolve_signal(spec: SignalSpec, names: set[str], profile_id: str) -> ResolvedSignal:
    """Resolve one signal against the metric names present."""
    chosen: str | None = None
    alias = False
    for i, (metric, probe) in enumerate(zip(spec.metrics, spec.presence_names(), strict=False)):
        if probe in names:
            chosen, alias = metric, i > 0
            break
    missing = [] if chosen else [spec.presence_names()[0]]
    missing += [r for r in spec.requires if r not in names]
    return ResolvedSignal(
        id=spec.id,
        profile=profile_id,
        spec=spec,
        metric=chosen,
        missing=missing,
        alias=alias,
    )


# --------------------------------------------------------------------------- PromQL


REGEX_SCOPE_KEYS = frozenset({"pod"})
"""Scope keys whose value is a regex (``=~``): ``pod`` holds the pod names of a workload
(:func:`cockpit.analysis.podnames.workload_pod_regex`)."""


def selector(labels: dict[str, str], profile: ProfileMeta) -> str:
    """Label matchers for the service scope in this profile's label names.

    Args:
        labels: Scope keys (``namespace``, ``model``, ``service``, ``pod``) → values; empty
            values are skipped; ``pod`` is a regex (see :data:`REGEX_SCOPE_KEYS`).
        profile: Maps scope keys to the stack's label names (``model`` → ``model_name``);
            a key the profile does not map is not applied to its series.

    Returns:
        ``namespace="llm",model_name="m",pod=~"vllm-…"`` (without braces), possibly empty.
    """
    parts = []
    for key, value in labels.items():
        label = profile.labels.get(key)
        if label and value:
            escaped = value.replace("\\", "\\\\").replace('"', '\\"')
            op = "=~" if key in REGEX_SCOPE_KEYS else "="
            parts.append(f'{label}{op}"{escaped}"')
    return ",".join(parts)


_EMPTY_MATCHER = re.compile(r"\{\s*,|,\s*\}")


def _tidy(q: str) -> str:
    return _EMPTY_MATCHER.sub(lambda m: "{" if m.group(0).startswith("{") else "}", q)


def render(
    resolved: ResolvedSignal,
    sel: str = "",
    window: str = "5m",
    by: Iterable[str] = (),
    quantile: float | None = None,
) -> str:
    """The PromQL for a resolved signal.

    Args:
        resolved: An available signal.
        sel: Label matchers without braces (see :func:`selector`).
        window: Rate window (``5m``; keep ≥ 4× the scrape interval, metrics_kb.md §7).
        by: Grouping labels (``pod``, ``Hostname``…); empty = one series for the service.
        quantile: For histograms, the quantile (0.5, 0.95, 0.99, 0.999).

    Raises:
        ValueError: the signal is not available, or a histogram without a quantile.
    """
    spec = resolved.spec
    metric = resolved.metric
    if metric is None:
        raise ValueError(f"{resolved.id}: metric missing ({', '.join(resolved.missing)})")
    by_s = ", ".join(by)
    scale = f" * {spec.scale:g}" if spec.scale != 1.0 else ""
    if spec.kind == "histogram":
        if quantile is None:
            raise ValueError(f"{resolved.id}: histogram needs a quantile")
        grouping = f"le, {by_s}" if by_s else "le"
        q = (
            f"histogram_quantile({quantile:g}, sum by ({grouping}) "
            f"(rate({metric}_bucket{{{sel}}}[{window}])))"
        )
        return _tidy(q + scale)
    if spec.kind == "counter_rate":
        return _tidy(f"sum by ({by_s}) (rate({metric}{{{sel}}}[{window}])){scale}")
    if spec.kind == "gauge":
        return _tidy(f"{spec.agg} by ({by_s}) ({metric}{{{sel}}}){scale}")
    q = (
        spec.queries.get(metric, spec.query)
        .replace("$M", metric)
        .replace("$sel", sel)
        .replace("$w", window)
        .replace("$by", by_s)
    )
    q = _tidy(q)
    return f"({q}){scale}" if scale else q


def render_buckets(
    resolved: ResolvedSignal, sel: str = "", window: str = "5m", by: Iterable[str] = ()
) -> str:
    """Bucket rates of a histogram signal summed over the scope: ``sum by (le) (rate(…))``,
    or per group of ``by`` labels (``sum by (le, pod, …)``).

    One query of this gives every quantile of the signal (computed client-side as
    ``histogram_quantile`` does), instead of one query per quantile.

    Raises:
        ValueError: the signal is not an available histogram.
    """
    if resolved.metric is None or resolved.spec.kind != "histogram":
        raise ValueError(f"{resolved.id}: not an available histogram")
    grouping = ", ".join(("le", *by))
    return _tidy(f"sum by ({grouping}) (rate({resolved.metric}_bucket{{{sel}}}[{window}]))")


def render_family(resolved: ResolvedSignal, sel: str = "", window: str = "5m") -> str:
    """The per-label rates of a split signal's counter family: ``sum by (<label>)
    (rate(<counter>{sel}[5m]))`` (see :class:`SplitSpec`).

    Raises:
        ValueError: the signal is not available or has no ``split``.
    """
    split = resolved.spec.split
    if resolved.metric is None or split is None:
        raise ValueError(f"{resolved.id}: not an available split signal")
    return _tidy(f"sum by ({split.label}) (rate({resolved.metric}{{{sel}}}[{window}]))")
