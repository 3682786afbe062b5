"""Step C: five layers × golden signals, a verdict per layer, and the seed's reading rules.

Seed 003 §一: "先定位层，再定位点" — each layer answers one question: was the anomaly
introduced here? §二 gives the rules for reading the signals together, encoded in
:func:`reading_rules` with the seed's wording in the i18n file (``metrics.rule.*``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, Field

from cockpit.analysis.golden import LayerVerdictValue, SignalSummary, judge_msg, reading_msg
from cockpit.models.messages import Msg, msg, signal_label, signal_names
from cockpit.models.signals import LAYERS

GPU_SATURATED_PCT = 95.0
"""GPU util at or above this is "near saturation" (seed 003 §四 example: 98 %)."""


class LayerVerdict(BaseModel):
    """One layer's verdict with the evidence that decided it.

    Attributes:
        layer: access / serving / runtime / hardware / infrastructure.
        verdict: anomalous (some signal anomalous), normal (signals known, none anomalous)
            or no_data (no signal of the layer has data).
        evidence: Keys of the summaries that decided it (the anomalous ones, else the
            normal ones that were checked); for ``no_data``, the exported signals that
            could not decide, each with its reason (failed query, no series, no baseline).
        lines: ``"<key>: <reason>"`` per evidence key, rendered in English.
        line_msgs: The same lines as messages (``evidence.layer.line``) for the UI's language.
        missing: ``"<metric> — <how to enable>"`` for the layer's missing signals and
            ``"<signal id>: <reason>"`` for its unsupported ones, in English
            (``analyze --json``).
        missing_i18n: The same lines as a reader sees them, per language (``zh``/``en``),
            an unsupported signal by its human name (:meth:`missing_in`).
        signals_total, signals_decided: How many of the layer's signals were asked for
            (missing ones included), and how many had data to decide on: a layer called
            normal on 2 of 10 signals says so (the seed: no data is never healthy).
        busier: For the hardware layer anomalous only for signals that rise with the
            load while nothing faulty was seen in the window
            (:func:`cockpit.analysis.history.apply_hardware_window`): ``not_faulty`` when
            the fault signals were read, ``not_ruled_out`` when some are not exported; the
            headline says so beside "anomalous" (:meth:`headline`).
    """

    layer: str
    verdict: LayerVerdictValue = "no_data"
    evidence: list[str] = Field(default_factory=list)
    lines: list[str] = Field(default_factory=list)
    line_msgs: list[Msg] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)
    missing_i18n: dict[str, list[str]] = Field(default_factory=dict)
    signals_total: int = 0
    signals_decided: int = 0
    busier: Literal["", "not_faulty", "not_ruled_out"] = ""

    def missing_in(self, lang: str) -> list[str]:
        """:attr:`missing` as shown in ``lang``."""
        return self.missing_i18n.get(lang, self.missing)

    def headline(self, lang: str) -> str:
        """The verdict as the layer's headline says it: ``anomalous``, and for GPUs that
        are only busier, ``anomalous — busier with the load, not faulty``."""
        from cockpit.i18n import t

        verdict = t(f"metrics.verdict.{self.verdict}", lang)
        if self.busier:
            verdict += t(f"metrics.text.busier.{self.busier}", lang)
        return verdict

    @property
    def mark(self) -> str:
        """The verdict's mark: ``✖`` anomalous, ``▲`` anomalous only for signals that rise
        with the load while nothing faulty was seen (:attr:`busier`: changed, not a
        fault), ``✔`` normal, ``◐`` normal on the signals that had data while the others
        had none (:attr:`partial`: no data is never passed as healthy), ``?`` no data."""
        if self.verdict == "anomalous" and self.busier == "not_faulty":
            return "▲"
        if self.partial:
            return "◐"
        return {"anomalous": "✖", "normal": "✔", "no_data": "?"}[self.verdict]

    @property
    def partial(self) -> bool:
        """Called normal while some of its signals had no data."""
        return self.verdict == "normal" and self.signals_decided < self.signals_total

    def lines_text(self, lang: str) -> list[str]:
        """:attr:`lines` in ``lang``."""
        return [m.text(lang) for m in self.line_msgs] if self.line_msgs else list(self.lines)


class RuleFinding(BaseModel):
    """A reading rule of seed 003 and whether the data matches it.

    Attributes:
        id: ``p99_only``, ``p50_and_p99``, ``p50_and_p99_longer``, ``ttft_not_tpot``,
            ``ttft_and_tpot``,
            ``gpu_saturated_queue``, ``gpu_saturated_no_queue``, ``errors_up``,
            ``latency_and_throughput``, ``throughput_down_only``.
        status: ``fired`` (conditions met), ``not_fired`` (data says no) or ``no_data``.
        evidence: Summary keys the rule looked at.
        readings: Those signals' readings as the table shows them (value, change,
            verdict: :func:`~cockpit.analysis.golden.reading_msg`), so that a rule is read
            on the numbers beside it.
    """

    id: str
    status: Literal["fired", "not_fired", "no_data"]
    evidence: list[str] = Field(default_factory=list)
    readings: list[Msg] = Field(default_factory=list)

    def line(self, lang: str) -> str:
        """The rule's readings joined in ``lang`` (empty without any)."""
        return " · ".join(m.text(lang) for m in self.readings)


def shown_readings(rules: list[RuleFinding], lang: str) -> list[str]:
    """The line of numbers under each rule, as C and ``analyze`` show them: a matching
    rule's readings always; a rule that does not match shows what it was read on too
    (so that "a client that changed the lengths — does not match" reads as the latency
    pattern it is, not as a verdict on the cause), once for rules read on the same
    numbers in a row; empty for a rule without data."""
    out: list[str] = []
    last = ""
    for r in rules:
        line = r.line(lang) if r.status != "no_data" else ""
        shown = line if line and (r.status == "fired" or line != last) else ""
        out.append(shown)
        last = line or last
    return out


class Drilldown(BaseModel):
    """The whole of step C: layer verdicts, reading rules and every summary."""

    layers: list[LayerVerdict] = Field(default_factory=list)
    rules: list[RuleFinding] = Field(default_factory=list)
    summaries: list[SignalSummary] = Field(default_factory=list)

    def layer(self, name: str) -> LayerVerdict:
        """The verdict of layer ``name``."""
        return next(v for v in self.layers if v.layer == name)

    def anomalous(self) -> list[SignalSummary]:
        """Summaries judged anomalous."""
        return [s for s in self.summaries if s.verdict == "anomalous"]


def layer_verdicts(summaries: Iterable[SignalSummary]) -> list[LayerVerdict]:
    """A verdict per layer (all five, in the seed's order)."""
    by_layer: dict[str, list[SignalSummary]] = {name: [] for name in LAYERS}
    for s in summaries:
        if s.layer in by_layer:
            by_layer[s.layer].append(s)
    out = []
    for name in LAYERS:
        items = by_layer[name]
        v = LayerVerdict(layer=name)
        v.missing = _missing_lines(items, "en", human=False)
        v.missing_i18n = {lang: _missing_lines(items, lang) for lang in ("zh", "en")}
        bad = [s for s in items if s.verdict == "anomalous"]
        # A changed signal (×2 on its harmless side) is decided and shown first among the
        # normal ones: it does not make its layer anomalous.
        ok = [s for s in items if s.verdict == "changed"] + [
            s for s in items if s.verdict == "normal"
        ]
        v.signals_total = len({s.signal for s in items})
        v.signals_decided = len({s.signal for s in bad + ok})
        if bad:
            v.verdict = "anomalous"
            chosen = sorted(bad, key=_strength, reverse=True)
        elif ok:
            v.verdict = "normal"
            chosen = ok
        else:
            # Undecided: say why for each signal that is exported (a failed query, no
            # series, no baseline); missing and unsupported ones are listed in `missing`.
            chosen = [s for s in items if not s.missing and s.now.status.value != "unsupported"]
        v.evidence = [s.key for s in chosen]
        v.line_msgs = _lines(chosen)
        v.lines = [m.text("en") for m in v.line_msgs]
        out.append(v)
    return out


def _missing_lines(items: list[SignalSummary], lang: str, human: bool = True) -> list[str]:
    """``<metric> — <how to enable>`` per missing metric, then ``<signal>: <reason>`` per
    unsupported signal (its human name when ``human``, else its id), in ``lang``."""
    unsupported = [s for s in items if s.now.status.value == "unsupported"]
    return sorted(
        {f"{m} — {hint}" if (hint := s.enable_text(lang)) else m for s in items for m in s.missing}
    ) + sorted(
        {
            f"{signal_label(s.signal, lang) if human else s.signal}: {s.reason_text(lang)}"
            for s in unsupported
        }
    )


def _strength(s: SignalSummary) -> tuple[int, float]:
    """How strongly an anomalous summary departs from its baseline, for listing the
    strongest evidence first: a ceiling crossed, then the larger factor either way
    (×9 up before ×3 up before ×0.5 down), then a change from a zero baseline."""
    key = s.reason_msg.key if s.reason_msg is not None else ""
    if key == "evidence.reason.ceiling":
        return (2, 0.0)
    if s.ratio is not None and s.ratio > 0:
        return (1, max(s.ratio, 1.0 / s.ratio))
    return (0, 0.0)


def _find(summaries: list[SignalSummary], keys: Iterable[str]) -> SignalSummary | None:
    by_key = {s.key: s for s in summaries}
    for k in keys:
        s = by_key.get(k)
        if s is not None and s.verdict != "no_data":
            return s
    return None


def signal_row(summaries: list[SignalSummary], signal_id: str) -> SignalSummary | None:
    """The row that stands for a whole signal in a reading rule: its most departed
    anomalous stat if any (a rule never calls a signal normal while one of its rows in the
    table is anomalous), else its P99 (P95, then any decided stat); ``None`` without data.
    """
    rows = [s for s in summaries if s.signal == signal_id and s.verdict != "no_data"]
    bad = [s for s in rows if s.verdict == "anomalous"]
    if bad:
        return max(bad, key=_strength)
    for stat in ("p99", "p95", "avg", "value", "p50", "max"):
        found = next((s for s in rows if s.stat == stat), None)
        if found is not None:
            return found
    return rows[0] if rows else None


def queue_growing(queue: SignalSummary) -> bool | None:
    """The one definition of "the queue is growing" (seed 003 §二: sustained 100 % GPU
    with a growing queue is a bottleneck): the waiting requests now are anomalous above
    their baseline, or anomalous above the window's own first part (a queue that built up
    inside the window, whatever the baseline), both by the queue's threshold
    (:data:`~cockpit.analysis.golden.SIGNAL_THRESHOLDS`: ×2 and at least 5 more).

    Returns:
        ``None`` without a value now.
    """
    if queue.now.value is None:
        return None
    if queue.verdict == "anomalous" and queue.up:
        return True
    early = queue_early(queue)
    if early is None:
        return False
    return judge_msg(queue.signal, queue.now.value, early)[0] == "anomalous"


def queue_early(queue: SignalSummary) -> float | None:
    """Mean of the first 10 minutes of a window (``None`` when the window is shorter than
    twice that): what :func:`queue_growing` compares the queue now with."""
    if not queue.spark_t:
        return None
    t0 = queue.spark_t[0]
    if queue.spark_t[-1] - t0 < 1200:
        return None
    early = [v for t, v in zip(queue.spark_t, queue.spark, strict=False) if t < t0 + 600]
    return sum(early) / len(early) if early else None


LENGTH_ROWS = (
    "serving.output_len:p50",
    "serving.output_len:p95",
    "serving.prompt_len:p50",
    "serving.prompt_len:p95",
)
"""The request-length rows that tell "longer requests" from a capacity loss."""


def longer_requests(summaries: list[SignalSummary]) -> list[SignalSummary]:
    """The length rows (:data:`LENGTH_ROWS`) that grew past their threshold: the table
    calls them ``anomalous`` or ``changed`` and they are above their baseline. Empty when
    requests are no longer than before (or no length histogram is exported)."""
    by_key = {s.key: s for s in summaries}
    return [
        s
        for k in LENGTH_ROWS
        if (s := by_key.get(k)) is not None
        and s.verdict in ("anomalous", "changed")
        and (s.ratio or 0.0) > 1.0
    ]


LATENCY_PREFERENCE = ("access.latency", "serving.e2e_latency", "serving.ttft")
"""User-facing latency first: the gateway sees what users see, and vLLM's e2e histogram
starts at a 0.3 s bucket, too coarse for a P50 (metrics_kb.md §2.1)."""


def reading_rules(summaries: list[SignalSummary]) -> list[RuleFinding]:
    """Evaluate the seed's reading rules against the summaries.

    Seed 003 §二: P50 normal but P99 soaring → queueing, batching wait or one throttled
    GPU; P50 and P99 up together → overall capacity shortage or a slower upstream
    dependency. Seed 000 (TTFT P99 scenario): TPOT normal and TTFT bad → queue and
    prefill first; both bad → overload, GPU or a shared dependency. Seed 003 §二: GPU
    util at 100 % is not a bottleneck by itself; sustained 100 % with a growing queue is.
    Seed 003 §一/§四: errors up → serving or access layer; latency and throughput worse
    together → compute or queueing; throughput down with latency and errors normal →
    hardware throttling or infrastructure network.
    """
    out: list[RuleFinding] = []
    p50 = p99 = None
    for sid in LATENCY_PREFERENCE:
        p50 = _find(summaries, [f"{sid}:p50"])
        p99 = _find(summaries, [f"{sid}:p99"])
        if p50 and p99:
            break
    if p50 and p99:
        ev = [p50.key, p99.key]
        up99 = p99.verdict == "anomalous"
        up50 = p50.verdict == "anomalous"
        longer = longer_requests(summaries)
        out.append(
            RuleFinding(
                id="p99_only", status="fired" if up99 and not up50 else "not_fired", evidence=ev
            )
        )
        # Both up with requests no longer than before: capacity or upstream; with longer
        # requests the same two rows say each request asks for more work (a release or a
        # client changed the lengths), which the length rows tell apart.
        out.append(
            RuleFinding(
                id="p50_and_p99",
                status="fired" if up99 and up50 and not longer else "not_fired",
                evidence=ev,
            )
        )
        out.append(
            RuleFinding(
                id="p50_and_p99_longer",
                status="fired" if up99 and up50 and longer else "not_fired",
                evidence=ev + [s.key for s in longer],
            )
        )
    else:
        out += [
            RuleFinding(id="p99_only", status="no_data"),
            RuleFinding(id="p50_and_p99", status="no_data"),
            RuleFinding(id="p50_and_p99_longer", status="no_data"),
        ]

    ttft = signal_row(summaries, "serving.ttft")
    tpot = signal_row(summaries, "serving.tpot")
    if ttft and tpot:
        ev = [ttft.key, tpot.key]
        bad_t, bad_p = ttft.verdict == "anomalous", tpot.verdict == "anomalous"
        out.append(
            RuleFinding(
                id="ttft_not_tpot",
                status="fired" if bad_t and not bad_p else "not_fired",
                evidence=ev,
            )
        )
        out.append(
            RuleFinding(
                id="ttft_and_tpot", status="fired" if bad_t and bad_p else "not_fired", evidence=ev
            )
        )
    else:
        out += [
            RuleFinding(id="ttft_not_tpot", status="no_data"),
            RuleFinding(id="ttft_and_tpot", status="no_data"),
        ]

    gpu = _find(summaries, ["hardware.gpu_util:value"])
    queue = _find(summaries, ["serving.queue:value"])
    if gpu and gpu.window_avg.ok:
        # "Sustained": the windowed value over the recent part, not one instant sample.
        saturated = (gpu.now.value or 0.0) >= GPU_SATURATED_PCT
        growing = bool(queue and queue_growing(queue))
        ev = [gpu.key] + ([queue.key] if queue else [])
        if queue is None or queue_growing(queue) is None:
            out.append(RuleFinding(id="gpu_saturated_queue", status="no_data", evidence=ev))
        else:
            out.append(
                RuleFinding(
                    id="gpu_saturated_queue",
                    status="fired" if saturated and growing else "not_fired",
                    evidence=ev,
                )
            )
        out.append(
            RuleFinding(
                id="gpu_saturated_no_queue",
                status="fired"
                if saturated and queue is not None and queue_growing(queue) is False
                else "not_fired",
                evidence=ev,
            )
        )
    else:
        out += [
            RuleFinding(id="gpu_saturated_queue", status="no_data"),
            RuleFinding(id="gpu_saturated_no_queue", status="no_data"),
        ]

    errs = [
        s
        for s in summaries
        if s.signal in ("serving.error_ratio", "access.error_ratio_5xx") and s.verdict != "no_data"
    ]
    if errs:
        out.append(
            RuleFinding(
                id="errors_up",
                status="fired" if any(s.verdict == "anomalous" for s in errs) else "not_fired",
                evidence=[s.key for s in errs],
            )
        )
    else:
        out.append(RuleFinding(id="errors_up", status="no_data"))

    qps = _find(summaries, ["serving.qps:value", "access.qps:value", "serving.gen_tps:value"])
    if p99 and qps:
        lat_bad = p99.verdict == "anomalous"
        thr_down = qps.verdict == "anomalous" and (qps.ratio or 1.0) < 1.0
        err_bad = any(s.verdict == "anomalous" for s in errs)
        ev = [p99.key, qps.key]
        out.append(
            RuleFinding(
                id="latency_and_throughput",
                status="fired" if lat_bad and thr_down else "not_fired",
                evidence=ev,
            )
        )
        out.append(
            RuleFinding(
                id="throughput_down_only",
                status="fired" if thr_down and not lat_bad and not err_bad else "not_fired",
                evidence=ev,
            )
        )
    else:
        out += [
            RuleFinding(id="latency_and_throughput", status="no_data"),
            RuleFinding(id="throughput_down_only", status="no_data"),
        ]
    return out


def _failed(s: SignalSummary) -> str:
    """The failure text of a signal whose query failed ("" otherwise)."""
    m = s.reason_msg
    if m is not None and m.key == "evidence.reason.failure":
        return str(m.args.get("failure", ""))
    return ""


def _lines(chosen: list[SignalSummary]) -> list[Msg]:
    """One line per signal; signals whose queries failed with the same message share one
    line naming them all (a Prometheus that is down is said once per layer, not once per
    signal)."""
    out: list[Msg] = []
    grouped: dict[str, list[SignalSummary]] = {}
    for s in chosen:
        failure = _failed(s)
        if failure:
            grouped.setdefault(failure, []).append(s)
    done: set[str] = set()
    for s in chosen:
        failure = _failed(s)
        if failure and len(grouped[failure]) > 1:
            if failure not in done:
                done.add(failure)
                keys = [x.key for x in grouped[failure]]
                out.append(
                    msg(
                        "evidence.layer.failed_group",
                        n=len(keys),
                        keys=", ".join(keys),
                        names=signal_names(*keys),
                        failure=failure,
                    )
                )
            continue
        out.append(
            msg(
                "evidence.layer.line",
                key=s.key,
                name=signal_names(s.key),
                reason=s.reason_msg or s.reason,
            )
        )
    return out


def drilldown(summaries: list[SignalSummary]) -> Drilldown:
    """Layer verdicts and reading rules from the step-C summaries."""
    rules = reading_rules(summaries)
    by_key = {s.key: s for s in summaries}
    for r in rules:
        r.readings = [reading_msg(by_key[k]) for k in r.evidence if k in by_key]
    return Drilldown(layers=layer_verdicts(summaries), rules=rules, summaries=summaries)
