"""Upstream-faithful exposition histories for the profile tests.

Every series is written with the exact name, OpenMetrics type and own labels its exporter
emits (``tests/data/upstream/metrics.json``, which cites the upstream file and version of
each stack), plus the target labels a PodMonitor scrape adds. A name, type or label the
catalogue does not hold raises, so a test cannot drift from what the exporters expose.

Histories are 2 h at a 15 s step ending at :data:`END`; an incident ramps in over
[``END`` − 30 min, ``END`` − 20 min] (:func:`ramp`), so ``--window 40m`` leaves a quiet
40 min baseline before the window.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path

END = 1767225600
"""2026-01-01T00:00:00Z."""
AT = "2026-01-01T00:00:00Z"
STEP = 15
SPAN = 2 * 3600
CATALOGUE = Path(__file__).resolve().parents[1] / "data" / "upstream" / "metrics.json"

Level = Callable[[float], float]
"""A value as a function of the incident's progress (0 before it, 1 once ramped in)."""


def ramp(t: int) -> float:
    """The incident's progress at ``t``: 0 until END − 30 min, 1 from END − 20 min."""
    start, full = END - 30 * 60, END - 20 * 60
    return min(1.0, max(0.0, (t - start) / (full - start)))


def between(base: float, now: float) -> Level:
    """``base`` before the incident, ``now`` once it has ramped in."""
    return lambda x: base + (now - base) * x


def pod_labels(namespace: str, pod: str, container: str, port: int, ip: str) -> dict[str, str]:
    """The target labels a prometheus-operator PodMonitor adds to every series."""
    return {
        "namespace": namespace,
        "pod": pod,
        "container": container,
        "endpoint": "metrics",
        "instance": f"{ip}:{port}",
        "job": f"{namespace}/{container}",
    }


def _lognormal_cdf(x: float, median: float, sigma: float) -> float:
    if x <= 0:
        return 0.0
    return 0.5 * (1.0 + math.erf((math.log(x) - math.log(median)) / (sigma * math.sqrt(2.0))))


def _fmt(v: float) -> str:
    return repr(round(v, 6)) if not math.isinf(v) else "+Inf"


def _labels(labels: dict[str, str]) -> str:
    if not labels:
        return ""
    body = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    return "{" + body + "}"


class Exposition:
    """A history of one or more stacks, checked against the catalogue as it is written."""

    def __init__(self) -> None:
        cat = json.loads(CATALOGUE.read_text(encoding="utf-8"))
        self._scrape = set(cat["scrape_labels"])
        self._known: dict[str, dict[str, object]] = {}
        for stack in cat["stacks"].values():
            self._known.update(stack["metrics"])
        self._families: dict[str, list[str]] = {}
        self._types: dict[str, str] = {}
        self.times = list(range(END - SPAN, END + 1, STEP))

    def _check(self, name: str, kind: str, labels: dict[str, str]) -> None:
        spec = self._known.get(name)
        if spec is None:
            raise KeyError(f"{name}: no upstream exporter emits this name")
        if spec["type"] != kind:
            raise ValueError(f"{name}: upstream type is {spec['type']}, not {kind}")
        own = set(spec["labels"])  # type: ignore[call-overload]
        extra = set(labels) - own - self._scrape
        if extra:
            raise ValueError(f"{name}: labels {sorted(extra)} are not upstream's")
        self._types[name] = kind

    def gauge(self, name: str, labels: dict[str, str], level: Level) -> None:
        """A gauge at ``level(ramp(t))``."""
        self._check(name, "gauge", labels)
        self._levels(name, labels, level)

    def windowed(self, name: str, labels: dict[str, str], level: Level, since: float = 0.0) -> None:
        """An exporter-synthesized count over its last window (dcgm-exporter's
        ``DCGM_EXP_*``: a counter exposed without ``_total``, whose value is the window's
        count), present from the incident's progress ``since`` on (the series appears with
        its first event)."""
        self._check(name, "unknown", labels)
        self._levels(name, labels, level, since)

    def _levels(self, name: str, labels: dict[str, str], level: Level, since: float = 0.0) -> None:
        rows = self._families.setdefault(name, [])
        rows += [
            f"{name}{_labels(labels)} {_fmt(level(ramp(t)))} {t}"
            for t in self.times
            if ramp(t) >= since
        ]

    def counter(self, name: str, labels: dict[str, str], rate: Level, start: float = 0.0) -> None:
        """A counter growing at ``rate(ramp(t))`` per second (``counter`` for a ``_total``
        name, ``unknown`` for one exposed without it)."""
        kind = "counter" if name.endswith("_total") else "unknown"
        self._check(name, kind, labels)
        rows = self._families.setdefault(name, [])
        v = start
        for t in self.times:
            v += rate(ramp(t)) * STEP
            rows.append(f"{name}{_labels(labels)} {_fmt(v)} {t}")

    def histogram(
        self,
        name: str,
        labels: dict[str, str],
        rate: Level,
        median: Level,
        bounds: Sequence[float],
        sigma: float = 0.5,
    ) -> None:
        """A cumulative histogram of ``rate`` observations per second whose values are
        log-normal around ``median(ramp(t))``."""
        self._check(name, "histogram", labels)
        rows = self._families.setdefault(name, [])
        les = [*bounds, math.inf]
        counts = [0.0] * len(les)
        total = 0.0
        acc = 0.0
        for t in self.times:
            x = ramp(t)
            n = rate(x) * STEP
            m = median(x)
            total += n
            acc += n * m * math.exp(sigma * sigma / 2)
            for i, le in enumerate(les):
                counts[i] += n * (1.0 if math.isinf(le) else _lognormal_cdf(le, m, sigma))
            for le, c in zip(les, counts, strict=True):
                lab = _labels({**labels, "le": _fmt(le)})
                rows.append(f"{name}_bucket{lab} {_fmt(c)} {t}")
            rows.append(f"{name}_count{_labels(labels)} {_fmt(total)} {t}")
            rows.append(f"{name}_sum{_labels(labels)} {_fmt(acc)} {t}")

    def text(self) -> str:
        """The OpenMetrics text promtool backfills (``# EOF`` included)."""
        out: list[str] = []
        for name, rows in self._families.items():
            out.append(f"# TYPE {name} {self._types[name]}")
            out += rows
        out.append("# EOF")
        return "\n".join(out) + "\n"


SECONDS_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160)
"""Latency buckets in seconds (SGLang's time histograms span these)."""
TGI_DURATION_BUCKETS = tuple(0.00015 * 1.5**k for k in range(35))
"""TGI's duration buckets: 35 of 0.00015 × 1.5ᵏ s (router/src/server.rs:1938, v3.3.7)."""
TGI_LENGTH_BUCKETS = tuple(4096 / 100 * k for k in range(1, 101))
"""TGI's length buckets: 100 linear ones of max_input_tokens / 100 (here 4096)."""
TOKEN_BUCKETS = (100, 300, 500, 1000, 2000, 4000, 8000, 12000, 16000, 20000, 25000, 30000)
"""SGLang's token-length buckets (metrics_collector.py)."""
