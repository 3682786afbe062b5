"""A set of metric families over a time axis, and its OpenMetrics writer.

The engine knows nothing about metric names: per-stack emitters
(:mod:`cockpit.scenarios.stacks`) call :meth:`MetricSet.gauge`, :meth:`MetricSet.counter`
and :meth:`MetricSet.histogram` with their own names and labels.

OpenMetrics for ``promtool tsdb create-blocks-from openmetrics`` (facts measured here, see
``shared/design/test-backends.md``): timestamps in **seconds**; the samples of a series in
time order; counters and bucket counts cumulative; the file ends with ``# EOF``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO

from cockpit.scenarios.histogram import Shape
from cockpit.scenarios.signals import Signal
from cockpit.scenarios.timeaxis import TimeAxis


@dataclass
class _Series:
    labels: dict[str, str]
    values: list[float]
    suffix: str = ""
    extra: tuple[tuple[str, str], ...] = ()
    times: tuple[int, ...] | None = None


@dataclass
class _Family:
    name: str
    type: str
    help: str
    unit: str = ""
    series: list[_Series] = field(default_factory=list)


def _escape(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels_text(labels: Mapping[str, str], extra: Sequence[tuple[str, str]] = ()) -> str:
    items = [*sorted(labels.items()), *extra]
    if not items:
        return ""
    return "{" + ",".join(f'{k}="{_escape(str(v))}"' for k, v in items) + "}"


def _fmt(v: float) -> str:
    if v != v:
        return "NaN"
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.6g}" if abs(v) < 1e6 else f"{v:.12g}"


class MetricSet:
    """Metric families whose samples sit on ``axis``.

    Args:
        axis: The sample times of every series.
    """

    def __init__(self, axis: TimeAxis) -> None:
        self.axis = axis
        self._families: dict[str, _Family] = {}
        self._dt = axis.dt()
        self._span: tuple[int, int] | None = None
        self._scrape: tuple[dict[str, str], bool, tuple[str, ...]] | None = None

    @contextmanager
    def span(self, start: int, end: int) -> Iterator[None]:
        """Series added inside the block keep only their samples in ``[start, end)``
        (Unix seconds): a pod that appears or goes away, a GPU whose exporter series
        vanish. Values are still computed over the whole axis (counters accumulate from
        the first sample), so pass rates that are 0 outside the span for counters that
        should start near their ``start`` value."""
        outer = self._span
        lo, hi = (start, end) if outer is None else (max(start, outer[0]), min(end, outer[1]))
        self._span = (lo, hi)
        try:
            yield
        finally:
            self._span = outer

    @contextmanager
    def scraped(
        self,
        target: Mapping[str, str],
        *,
        honor_labels: bool = False,
        drop: Sequence[str] = (),
    ) -> Iterator[None]:
        """Series added inside the block are stored as Prometheus stores a scrape of a
        target with the labels ``target``: with ``honor_labels`` false (the Prometheus
        default, and the ServiceMonitors of the dcgm-exporter and ingress-nginx charts) an
        exposed label that clashes with a target label is kept as ``exported_<name>`` and
        the target's value wins; with it true the exposed value wins. ``drop`` removes
        labels the emitter adds for a Kubernetes scrape (``namespace``, ``pod``,
        ``container`` of a ``static_configs`` target, which has none). Prometheus
        ``scrape_config.honor_labels``:
        https://prometheus.io/docs/prometheus/latest/configuration/configuration/#scrape_config
        """
        outer = self._scrape
        self._scrape = (dict(target), honor_labels, tuple(drop))
        try:
            yield
        finally:
            self._scrape = outer

    def _relabel(self, labels: Mapping[str, str]) -> dict[str, str]:
        if self._scrape is None:
            return dict(labels)
        target, honor, drop = self._scrape
        out = {k: v for k, v in labels.items() if k not in drop}
        for k, v in target.items():
            if k in out and not honor:
                out[f"exported_{k}"] = out[k]
            if k not in out or not honor:
                out[k] = v
        return out

    def _add(self, fam: _Family, series: _Series) -> None:
        if self._scrape is not None:
            series.labels = self._relabel(series.labels)
        if self._span is not None:
            lo, hi = self._span
            times = series.times if series.times is not None else self.axis.points
            keep = [(t, v) for t, v in zip(times, series.values, strict=True) if lo <= t < hi]
            if not keep:
                return
            series.times = tuple(t for t, _ in keep)
            series.values = [v for _, v in keep]
        fam.series.append(series)

    def _family(self, name: str, mtype: str, help_: str, unit: str = "") -> _Family:
        fam = self._families.get(name)
        if fam is None:
            fam = _Family(name, mtype, help_, unit)
            self._families[name] = fam
        elif fam.type != mtype:
            raise ValueError(f"{name} declared as {fam.type} and {mtype}")
        return fam

    def _check(self, values: Sequence[float]) -> None:
        if len(values) != len(self.axis):
            raise ValueError(f"{len(values)} values for {len(self.axis)} sample times")

    @property
    def series_count(self) -> int:
        """Number of series (each bucket, ``_sum`` and ``_count`` counted)."""
        return sum(len(f.series) for f in self._families.values())

    @property
    def sample_count(self) -> int:
        """Number of samples that will be written."""
        return sum(len(s.values) for f in self._families.values() for s in f.series)

    def metric_names(self) -> list[str]:
        """Sample names as Prometheus stores them (``_total``, ``_bucket``, … included)."""
        out: list[str] = []
        for fam in self._families.values():
            for suffix in dict.fromkeys(s.suffix for s in fam.series):
                out.append(fam.name + suffix)
            if fam.type == "histogram":
                out = list(dict.fromkeys(out))
        return out

    def gauge(self, name: str, labels: Mapping[str, str], values: Signal, help_: str = "") -> None:
        """A gauge series with one value per sample time."""
        self._check(values)
        self._add(self._family(name, "gauge", help_), _Series(dict(labels), list(values)))

    def sparse_gauge(
        self,
        name: str,
        labels: Mapping[str, str],
        start: int,
        end: int,
        value: float,
        help_: str = "",
    ) -> None:
        """A gauge with samples only at the sample times in ``[start, end)`` (absent
        elsewhere, like ``ALERTS`` outside an alert's active period)."""
        times = tuple(t for t in self.axis.points if start <= t < end)
        if times:
            fam = self._family(name, "gauge", help_)
            self._add(fam, _Series(dict(labels), [value] * len(times), times=times))

    def counter(
        self,
        name: str,
        labels: Mapping[str, str],
        rate: Signal,
        *,
        start: float = 0.0,
        integer: bool = True,
        help_: str = "",
    ) -> None:
        """A counter whose per-second increase at each sample time is ``rate``.

        Args:
            name: Sample name, ending in ``_total`` (the family name drops it).
            rate: Increase per second (integrated over each step: cumulative values).
            start: Value at the first sample (a process started before the history).
            integer: Round the cumulative value (counts of events are whole numbers).
        """
        if not name.endswith("_total"):
            raise ValueError(f"counter sample name {name!r} must end in _total")
        out = self._integrate(rate, start, integer)
        fam = self._family(name[: -len("_total")], "counter", help_)
        self._add(fam, _Series(dict(labels), out, suffix="_total"))

    def cumulative(
        self,
        name: str,
        labels: Mapping[str, str],
        rate: Signal,
        *,
        start: float = 0.0,
        integer: bool = True,
        help_: str = "",
    ) -> None:
        """A counter exposed without the ``_total`` suffix (typed ``unknown`` in
        OpenMetrics), as dcgm-exporter does (``DCGM_FI_DEV_POWER_VIOLATION``, …)."""
        out = self._integrate(rate, start, integer)
        self._add(self._family(name, "unknown", help_), _Series(dict(labels), out))

    def _integrate(self, rate: Signal, start: float, integer: bool) -> list[float]:
        self._check(rate)
        cum, out = start, []
        for r, dt in zip(rate, self._dt, strict=True):
            cum += max(0.0, r) * dt
            out.append(float(round(cum)) if integer else cum)
        return out

    def histogram(
        self,
        name: str,
        labels: Mapping[str, str],
        count_rate: Signal,
        mix: Sequence[tuple[Shape, Signal]],
        *,
        scale: float = 1.0,
        help_: str = "",
    ) -> None:
        """A histogram (``_bucket``/``_sum``/``_count``) of ``count_rate`` observations
        per second, distributed as the weighted mix of shapes.

        Args:
            count_rate: Observations per second at each sample time.
            mix: ``(shape, weight signal)`` pairs; weights are normalised per sample.
                All shapes must share the same bounds.
            scale: Multiplier from the shapes' unit to the metric's (e.g. 1000 for ms).
        """
        self._check(count_rate)
        if not mix:
            raise ValueError("a histogram needs at least one shape")
        bounds = mix[0][0].bounds
        if any(s.bounds != bounds for s, _ in mix):
            raise ValueError("all shapes of a histogram must share bounds")
        nb = len(bounds)
        cum = [0.0] * nb
        cum_n = 0.0
        cum_sum = 0.0
        per_bound: list[list[float]] = [[] for _ in range(nb)]
        counts: list[float] = []
        sums: list[float] = []
        for idx, (r, dt) in enumerate(zip(count_rate, self._dt, strict=True)):
            n = max(0.0, r) * dt
            ws = [w[idx] for _, w in mix]
            tot = sum(ws) or 1.0
            mean = 0.0
            for k in range(nb):
                frac = sum(s.cdf[k] * w for (s, _), w in zip(mix, ws, strict=True)) / tot
                cum[k] += n * frac
                per_bound[k].append(float(round(cum[k])))
            mean = sum(s.mean * w for (s, _), w in zip(mix, ws, strict=True)) / tot
            cum_n += n
            cum_sum += n * mean * scale
            counts.append(float(round(cum_n)))
            sums.append(cum_sum)
        fam = self._family(name, "histogram", help_)
        lab = dict(labels)
        for k, b in enumerate(bounds):
            le = _fmt(b * scale) if b * scale != int(b * scale) else f"{b * scale:.1f}"
            self._add(fam, _Series(lab, per_bound[k], "_bucket", (("le", le),)))
        self._add(fam, _Series(lab, counts, "_bucket", (("le", "+Inf"),)))
        self._add(fam, _Series(lab, sums, "_sum"))
        self._add(fam, _Series(lab, counts, "_count"))

    def lines(self, families: Sequence[str] | None = None) -> Iterator[str]:
        """The OpenMetrics text (of ``families``, default all), in chunks of whole lines."""
        pts = self.axis.points
        chosen = (
            self._families.values() if families is None else [self._families[f] for f in families]
        )
        for fam in chosen:
            if fam.help:
                yield f"# HELP {fam.name} {fam.help}\n"
            yield f"# TYPE {fam.name} {fam.type}\n"
            for s in fam.series:
                prefix = f"{fam.name}{s.suffix}{_labels_text(s.labels, s.extra)} "
                times = s.times if s.times is not None else pts
                yield "".join(
                    f"{prefix}{_fmt(v)} {t}\n" for v, t in zip(s.values, times, strict=True)
                )
        yield "# EOF\n"

    def partition(self, parts: int) -> list[list[str]]:
        """Family names split into ``parts`` groups of similar sample counts (for
        backfilling with several ``promtool`` processes in parallel)."""
        groups: list[list[str]] = [[] for _ in range(max(1, parts))]
        sizes = [0] * len(groups)
        by_size = sorted(
            self._families.values(), key=lambda f: -sum(len(s.values) for s in f.series)
        )
        for fam in by_size:
            i = sizes.index(min(sizes))
            groups[i].append(fam.name)
            sizes[i] += sum(len(s.values) for s in fam.series)
        return [g for g in groups if g]

    def write_openmetrics(self, out: IO[str], families: Sequence[str] | None = None) -> int:
        """Write the OpenMetrics text (of ``families``, default all) to ``out``.

        Returns:
            The number of samples written.
        """
        for chunk in self.lines(families):
            out.write(chunk)
        chosen = (
            self._families.values() if families is None else [self._families[f] for f in families]
        )
        return sum(len(s.values) for f in chosen for s in f.series)
