"""The alerts that may have paged, read from Alertmanager or from Prometheus, and what
choosing one fills in the incident (pure: no I/O).

Two sources, one shape (:class:`PagedAlert`):

- Alertmanager's API v2 (``GET /api/v2/alerts``, ``GET /api/v2/silences``; Alertmanager
  ``api/v2/openapi.yaml``): every alert it holds, ``startsAt`` being when Prometheus saw
  it fire, ``status.state`` ``active``/``suppressed``/``unprocessed`` with the ids of
  the silences (``silencedBy``) and inhibiting alerts (``inhibitedBy``) that suppress
  it. The rule's expression is the ``g0.expr`` parameter of ``generatorURL`` (the graph
  link Prometheus sets, ``rules/alerting.go``).
- Prometheus alone: ``ALERTS{alertname, alertstate="pending"|"firing", …}`` is 1 while an
  alert is active and ``ALERTS_FOR_STATE{alertname, …}`` holds the time it became active
  (Unix seconds; Prometheus docs, "Alerting rules: inspecting alerts during runtime"),
  so a range over the window gives the firing and pending alerts and those resolved
  inside it; the rules (``/api/v1/rules``, ``query``) give each alert's expression.

Both get Alertmanager's fingerprint (:func:`fingerprint`), so ``cockpit --alert
FINGERPRINT`` names the same alert whichever source is configured. Everything read is
outside text: strings are cut to :data:`MAX_TEXT` characters, at most :data:`MAX_ALERTS`
alerts and :data:`MAX_LABELS` labels per alert are kept, and secrets are masked where
they enter (annotations and silence comments through :func:`cockpit.redact.redact_text`,
values of secret-looking label names, userinfo of the generator URL).
"""

from __future__ import annotations

import re
import urllib.parse
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field

from cockpit.models import Series, from_epoch
from cockpit.redact import mask, redact_text, secret_name, split_userinfo

MAX_ALERTS = 500
"""Most alerts kept from one answer (an Alertmanager of a big cluster holds thousands;
the picker shows the configured scope's first)."""
MAX_LABELS = 64
"""Most labels kept per alert (kube-prometheus alerts carry about ten)."""
MAX_TEXT = 2000
"""Longest label value, annotation, expression or comment kept, in characters."""

SEPARATOR_BYTE = 0xFF
"""Between label names and values in a fingerprint (``prometheus/common`` ``model.SeparatorByte``)."""
_FNV_OFFSET = 14695981039346656037
_FNV_PRIME = 1099511628211
_MASK64 = 2**64 - 1


class AlertState(StrEnum):
    """Where an alert stands: ``firing``, ``pending`` (its expression holds, its ``for:``
    has not elapsed) or ``resolved`` (it stopped inside the window)."""

    FIRING = "firing"
    PENDING = "pending"
    RESOLVED = "resolved"


AlertSourceName = Literal["alertmanager", "prometheus"]


class AlertScope(BaseModel):
    """The scope an alert's labels name (empty strings where a label is absent).

    Attributes:
        namespace: ``exported_namespace`` (or ``namespace``).
        deployment: ``deployment``/``statefulset`` label, else read from the pod's name
            (``<deployment>-<hash>-<5 chars>``, ``<statefulset>-<n>``), else ``service``.
        pod: ``exported_pod`` (or ``pod``, ``pod_name``).
        node: ``node`` (or ``kubernetes_node``, ``Hostname`` of dcgm-exporter, ``nodename``).
        model: ``model_name`` (vLLM) or ``model``.
    """

    namespace: str = ""
    deployment: str = ""
    pod: str = ""
    node: str = ""
    model: str = ""


class PagedAlert(BaseModel):
    """One alert, from Alertmanager or Prometheus.

    Attributes:
        name: ``alertname``.
        fingerprint: Alertmanager's fingerprint of the label set (16 hex digits).
        state: firing, pending or resolved.
        source: ``alertmanager`` or ``prometheus``.
        labels: The alert's labels (``alertname`` included, ``alertstate`` not).
        summary, description: The annotations of that name (empty from ``ALERTS``
            alone: the rule's own annotation is used when it has no template).
        starts_at: When it started firing (UTC): Alertmanager's ``startsAt``, or the
            first firing sample of ``ALERTS`` in the window, or ``ALERTS_FOR_STATE`` +
            the rule's ``for:``; ``None`` for a pending alert.
        active_at: When its expression started to hold (``ALERTS_FOR_STATE``); ``None``
            from Alertmanager.
        ends_at: When it resolved (a resolved alert), else ``None``.
        expr: The rule's PromQL expression; empty when neither the generator URL nor
            the rules gave it.
        silenced_by: Ids of the silences that mute it.
        silences: Those silences as ``createdBy: comment`` lines.
        inhibited_by: Fingerprints of the alerts that inhibit it.
        in_scope: Whether it concerns the configured namespace/deployment.
        scope: The scope its labels name.
        sli: The signal of ours its expression measures (``serving.e2e_latency:p99``),
            empty when it measures none of them.
    """

    name: str
    fingerprint: str
    state: AlertState
    source: AlertSourceName
    labels: dict[str, str] = Field(default_factory=dict)
    summary: str = ""
    description: str = ""
    starts_at: datetime | None = None
    active_at: datetime | None = None
    ends_at: datetime | None = None
    expr: str = ""
    silenced_by: list[str] = Field(default_factory=list)
    silences: list[str] = Field(default_factory=list)
    inhibited_by: list[str] = Field(default_factory=list)
    in_scope: bool = True
    scope: AlertScope = Field(default_factory=AlertScope)
    sli: str = ""

    @property
    def silenced(self) -> bool:
        """Muted by at least one silence."""
        return bool(self.silenced_by)

    @property
    def inhibited(self) -> bool:
        """Inhibited by at least one other alert."""
        return bool(self.inhibited_by)

    @property
    def detected_at(self) -> datetime | None:
        """The detection time it offers: when it started firing (:attr:`starts_at`); for a
        pending alert, when it became active; ``None`` for a firing or resolved alert whose
        firing start is unknown (its pending time is never offered: it did not page then)."""
        if self.starts_at is not None:
            return self.starts_at
        return self.active_at if self.state is AlertState.PENDING else None

    def title(self) -> str:
        """The incident title it gives: ``alertname: summary``, or the alert name and
        the scope its labels name."""
        if self.summary:
            return _cut(f"{self.name}: {self.summary}", 200)
        where = "/".join(
            x
            for x in (
                self.scope.namespace,
                self.scope.deployment or self.scope.pod or self.scope.node,
            )
            if x
        )
        return _cut(f"{self.name} ({where})" if where else self.name, 200)


def _cut(text: str, limit: int = MAX_TEXT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def fingerprint(labels: dict[str, str]) -> str:
    """Alertmanager's fingerprint of a label set: 64-bit FNV-1a over the label names in
    sorted order, each followed by :data:`SEPARATOR_BYTE`, its value and the separator
    again (``prometheus/common`` ``model.labelSetToFingerprint``), as 16 hex digits."""
    h = _FNV_OFFSET
    for name in sorted(labels):
        for part in (name, labels[name]):
            for byte in part.encode("utf-8"):
                h = ((h ^ byte) * _FNV_PRIME) & _MASK64
            h = ((h ^ SEPARATOR_BYTE) * _FNV_PRIME) & _MASK64
    return f"{h:016x}"


def clean_labels(raw: Any) -> dict[str, str]:
    """An alert's labels as strings, bounded (:data:`MAX_LABELS`, :data:`MAX_TEXT`), the
    values of secret-looking names masked; ``__name__`` and ``alertstate`` left out."""
    if not isinstance(raw, dict):
        return {}
    out: dict[str, str] = {}
    for key, value in raw.items():
        name = str(key)[:200]
        if name in ("__name__", "alertstate"):
            continue
        if len(out) >= MAX_LABELS:
            break
        text = _cut(str(value))
        out[name] = mask(text) if secret_name(name) else text
    return out


def _text(raw: Any) -> str:
    """An annotation or comment: a string, cut and with its secrets masked."""
    return redact_text(_cut(raw)) if isinstance(raw, str) else ""


def _time(raw: Any) -> datetime | None:
    """An RFC 3339 time of the API (``2026-11-27T12:55:30.123Z``); ``None`` when absent,
    unreadable or Go's zero time (``0001-01-01T00:00:00Z``, "not set")."""
    if not isinstance(raw, str) or not raw:
        return None
    text = raw.strip().replace("Z", "+00:00").replace("z", "+00:00")
    # Python reads at most 6 fractional digits; Go writes up to 9.
    text = re.sub(r"(\.\d{6})\d+", r"\1", text)
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        return None
    if at.tzinfo is None or at.year < 1971:
        return None
    return at


def expr_of_generator(url: Any) -> str:
    """The expression in a Prometheus generator URL (``…/graph?g0.expr=…``), empty when
    there is none; the URL's userinfo is dropped first."""
    if not isinstance(url, str) or not url:
        return ""
    bare, _, _ = split_userinfo(url[: MAX_TEXT * 4])
    try:
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(bare).query)
    except ValueError:
        return ""
    values = query.get("g0.expr") or []
    return _cut(values[0]) if values else ""


_POD_OF_DEPLOYMENT = re.compile(r"^(?P<name>[a-z0-9][a-z0-9.-]*?)-[a-z0-9]{5,10}-[a-z0-9]{5}$")
_POD_OF_STATEFULSET = re.compile(r"^(?P<name>[a-z0-9][a-z0-9.-]*?)-\d+$")


def scope_of(labels: dict[str, str]) -> AlertScope:
    """The namespace, workload, pod, node and model an alert's labels name."""

    def first(*names: str) -> str:
        return next((labels[n] for n in names if labels.get(n)), "")

    # ``exported_*`` is the workload's own label when the exporter was scraped with
    # ``honorLabels: false`` (dcgm-exporter's chart): then ``namespace``/``pod`` name
    # the exporter's pod, not the workload (Prometheus docs, ``honor_labels``).
    pod = first("exported_pod", "pod", "pod_name")
    deployment = first("exported_deployment", "deployment", "statefulset")
    if not deployment and pod:
        m = _POD_OF_DEPLOYMENT.match(pod) or _POD_OF_STATEFULSET.match(pod)
        deployment = m.group("name") if m else ""
    if not deployment:
        deployment = first("service")
    return AlertScope(
        namespace=first("exported_namespace", "namespace"),
        deployment=deployment,
        pod=pod,
        node=first("node", "kubernetes_node", "Hostname", "nodename", "exported_node"),
        model=first("model_name", "model"),
    )


def in_scope(scope: AlertScope, namespace: str, deployment: str) -> bool:
    """Whether an alert concerns the configured service: another namespace is out; with
    a deployment configured, an alert naming another workload (or a pod of another) is
    out; alerts naming no namespace (a node, a GPU) are kept."""
    if namespace and scope.namespace and scope.namespace != namespace:
        return False
    return not (deployment and scope.deployment and scope.deployment != deployment)


_METRIC = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
_QUANTILE = re.compile(r"histogram_quantile\s*\(\s*(0?\.\d+|1(?:\.0*)?)")
_SUFFIXES = ("_bucket", "_sum", "_count")


def sli_of(expr: str, signal_metrics: dict[str, list[str]]) -> str:
    """The signal of ours an alert expression measures: the first signal (in the order
    of ``signal_metrics``) one of whose metric names the expression reads (histogram
    series ``_bucket``/``_sum``/``_count`` count as the histogram), with ``:p99``-style
    statistic when it takes a ``histogram_quantile``; empty when it reads none.

    Args:
        expr: PromQL.
        signal_metrics: Signal id → metric names (the metric profiles'
            ``[[signal]] metrics``).
    """
    if not expr:
        return ""
    names = set()
    for word in _METRIC.findall(expr):
        names.add(word)
        for suffix in _SUFFIXES:
            if word.endswith(suffix):
                names.add(word[: -len(suffix)])
    for sid, metrics in signal_metrics.items():
        if any(m in names for m in metrics):
            q = _QUANTILE.search(expr)
            if q is None:
                return sid
            pct = round(float(q.group(1)) * 100, 1)
            return f"{sid}:p{pct:g}"
    return ""


def _silence_lines(raw_silences: list[dict[str, Any]]) -> dict[str, str]:
    """Silence id → ``createdBy: comment``."""
    out: dict[str, str] = {}
    for s in raw_silences[: MAX_ALERTS * 4]:
        sid = s.get("id") if isinstance(s, dict) else None
        if not isinstance(sid, str):
            continue
        who = _text(s.get("createdBy"))
        out[sid[:100]] = _cut(
            f"{who}: {_text(s.get('comment'))}" if who else _text(s.get("comment")), 300
        )
    return out


def _obj(raw: Any) -> dict[str, Any]:
    """``raw`` when it is a JSON object, else an empty one."""
    return raw if isinstance(raw, dict) else {}


def _strings(raw: Any) -> list[str]:
    return [str(x)[:100] for x in raw[:MAX_LABELS]] if isinstance(raw, list) else []


def from_alertmanager(
    raw_alerts: list[dict[str, Any]], raw_silences: list[dict[str, Any]]
) -> list[PagedAlert]:
    """Alertmanager's alerts (``/api/v2/alerts``) with the comments of the silences that
    mute them (``/api/v2/silences``). Malformed entries are skipped; at most
    :data:`MAX_ALERTS` are read. Every alert Alertmanager holds is firing as far as
    Prometheus is concerned; silences and inhibitions are kept beside the state."""
    notes = _silence_lines(raw_silences)
    out: list[PagedAlert] = []
    for raw in raw_alerts[:MAX_ALERTS]:
        if not isinstance(raw, dict):
            continue
        labels = clean_labels(raw.get("labels"))
        name = labels.get("alertname", "")
        if not name:
            continue
        status = _obj(raw.get("status"))
        silenced = _strings(status.get("silencedBy"))
        annotations = _obj(raw.get("annotations"))
        fp = raw.get("fingerprint")
        out.append(
            PagedAlert(
                name=name,
                fingerprint=fp[:32] if isinstance(fp, str) and fp else fingerprint(labels),
                state=AlertState.FIRING,
                source="alertmanager",
                labels=labels,
                summary=_text(annotations.get("summary")),
                description=_text(annotations.get("description")),
                starts_at=_time(raw.get("startsAt")),
                expr=expr_of_generator(raw.get("generatorURL")),
                silenced_by=silenced,
                silences=[notes[s] for s in silenced if s in notes],
                inhibited_by=_strings(status.get("inhibitedBy")),
                scope=scope_of(labels),
            )
        )
    return out


def from_prometheus(
    alerts: list[Series],
    for_state: list[Series],
    window_start: datetime,
    window_end: datetime,
    step_s: float,
) -> list[PagedAlert]:
    """Alerts from a range over the window of ``ALERTS`` and of ``ALERTS_FOR_STATE``.

    An alert is firing or pending when its series has a sample at the window's end (one
    ``step_s`` of slack), resolved when its samples stop before (``ends_at`` = the last
    one). ``starts_at`` is its first firing sample when that is not the window's first
    point, else left to :func:`with_rules` (``ALERTS_FOR_STATE`` + ``for:``).
    """
    end = window_end.timestamp()
    active: dict[str, float] = {}
    for s in for_state:
        labels = clean_labels(s.labels)
        vals = [p.v for p in s.samples if p.v == p.v and p.v > 0]
        if vals:
            active[fingerprint(labels)] = vals[-1]
    groups: dict[str, dict[str, list[float]]] = {}
    label_sets: dict[str, dict[str, str]] = {}
    for s in alerts:
        state = s.labels.get("alertstate", "firing")
        labels = clean_labels(s.labels)
        if not labels.get("alertname"):
            continue
        fp = fingerprint(labels)
        times = [p.t for p in s.samples if p.v == p.v and p.v > 0]
        if not times:
            continue
        label_sets[fp] = labels
        groups.setdefault(fp, {}).setdefault(state, []).extend(times)
    out: list[PagedAlert] = []
    first_point = window_start.timestamp() + step_s
    for fp, states in list(groups.items())[:MAX_ALERTS]:
        labels = label_sets[fp]
        firing = sorted(states.get("firing", []))
        pending = sorted(states.get("pending", []))
        last = max(firing[-1:] + pending[-1:])
        if last >= end - 1.5 * step_s:
            state = (
                AlertState.FIRING
                if firing and (not pending or firing[-1] >= pending[-1])
                else AlertState.PENDING
            )
            ends_at = None
        else:
            state, ends_at = AlertState.RESOLVED, from_epoch(last)
        started = firing[0] if firing and firing[0] >= first_point else None
        act = active.get(fp)
        out.append(
            PagedAlert(
                name=labels["alertname"],
                fingerprint=fp,
                state=state,
                source="prometheus",
                labels=labels,
                starts_at=from_epoch(started) if started is not None else None,
                active_at=from_epoch(act) if act is not None else None,
                ends_at=ends_at,
                scope=scope_of(labels),
            )
        )
    return out


def with_rules(alerts: list[PagedAlert], rules: list[dict[str, Any]]) -> list[PagedAlert]:
    """The alerts with what their alerting rule (``/api/v1/rules``) says: the expression
    when none came with the alert, the ``summary``/``description`` annotations when the
    alert has none and the rule's hold no template (``{{ … }}`` is rendered by
    Prometheus per alert, which ``ALERTS`` does not keep), and the firing time of an
    alert firing since before the window (``ALERTS_FOR_STATE`` + ``for:``). A rule is
    matched by name and by its own labels."""
    by_name: dict[str, list[dict[str, Any]]] = {}
    for r in rules:
        name = r.get("name")
        if isinstance(name, str):
            by_name.setdefault(name, []).append(r)
    out = []
    for a in alerts:
        rule = next(
            (
                r
                for r in by_name.get(a.name, [])
                if all(a.labels.get(str(k)) == str(v) for k, v in _obj(r.get("labels")).items())
            ),
            None,
        )
        if rule is None:
            out.append(a)
            continue
        update: dict[str, Any] = {}
        if not a.expr and isinstance(rule.get("query"), str):
            update["expr"] = _cut(rule["query"])
        notes = _obj(rule.get("annotations"))
        for key in ("summary", "description"):
            value = notes.get(key)
            if not getattr(a, key) and isinstance(value, str) and "{{" not in value:
                update[key] = _text(value)
        duration = rule.get("duration")
        if (
            a.starts_at is None
            and a.active_at is not None
            and a.state is not AlertState.PENDING
            and isinstance(duration, (int, float))
        ):
            update["starts_at"] = from_epoch(a.active_at.timestamp() + float(duration))
        out.append(a.model_copy(update=update) if update else a)
    return out


def firing_lookback(alerts: list[PagedAlert], window_start: datetime) -> datetime | None:
    """Where an earlier read of ``ALERTS{alertstate="firing"}`` must start so that
    :func:`with_firing_starts` finds every unknown firing start: the earliest
    ``active_at`` before ``window_start`` of a firing or resolved alert without
    ``starts_at``; ``None`` when no alert needs it."""
    times = [
        a.active_at
        for a in alerts
        if a.starts_at is None
        and a.state is not AlertState.PENDING
        and a.active_at is not None
        and a.active_at < window_start
    ]
    return min(times, default=None)


def with_firing_starts(alerts: list[PagedAlert], firing: list[Series]) -> list[PagedAlert]:
    """The alerts with the firing start :func:`from_prometheus` and :func:`with_rules`
    left unknown (firing since before the window, no rule's ``for:``) read from an
    earlier range of ``ALERTS{alertstate="firing"}`` (``firing``): the first firing
    sample of the same fingerprint at or after the alert's ``active_at``, so an earlier
    episode of the same alert is not taken for this one. Alerts it cannot fill stay as
    they are."""
    first: dict[str, list[float]] = {}
    for s in firing:
        if s.labels.get("alertstate", "firing") != "firing":
            continue
        times = [p.t for p in s.samples if p.v == p.v and p.v > 0]
        if times:
            first.setdefault(fingerprint(clean_labels(s.labels)), []).extend(times)
    out = []
    for a in alerts:
        seen = first.get(a.fingerprint)
        if a.starts_at is not None or a.state is AlertState.PENDING or not seen:
            out.append(a)
            continue
        since = a.active_at.timestamp() if a.active_at is not None else float("-inf")
        after = [t for t in seen if t >= since]
        out.append(a.model_copy(update={"starts_at": from_epoch(min(after))}) if after else a)
    return out


_STATE_ORDER = {AlertState.FIRING: 0, AlertState.PENDING: 1, AlertState.RESOLVED: 2}
SEVERITY_ORDER = ("critical", "page", "error", "high", "warning", "medium", "info", "low", "none")
"""``severity`` label values, most urgent first (kube-prometheus-stack rules use
critical/warning/info/none; other rule sets page/high/medium/low); others come after."""


def _severity_rank(alert: PagedAlert) -> int:
    sev = alert.labels.get("severity", "").lower()
    return SEVERITY_ORDER.index(sev) if sev in SEVERITY_ORDER else len(SEVERITY_ORDER)


def finish(
    alerts: list[PagedAlert],
    namespace: str,
    deployment: str,
    signal_metrics: dict[str, list[str]],
) -> list[PagedAlert]:
    """The alerts with scope and SLI filled, in the order the picker lists them: those
    naming the configured scope first, then those naming no namespace (a node, a GPU),
    then the other scopes'; within each, firing before pending before resolved, unmuted
    before silenced or inhibited, by severity (:data:`SEVERITY_ORDER`), most recent
    start first, then by name."""
    done = [
        a.model_copy(
            update={
                "in_scope": in_scope(a.scope, namespace, deployment),
                "sli": sli_of(a.expr, signal_metrics),
            }
        )
        for a in alerts
    ]
    done.sort(
        key=lambda a: (
            2 if not a.in_scope else 0 if a.scope.namespace else 1,
            _STATE_ORDER[a.state],
            a.silenced or a.inhibited,
            _severity_rank(a),
            -(a.detected_at.timestamp() if a.detected_at else 0.0),
            a.name,
            a.fingerprint,
        )
    )
    return done


def find_alert(alerts: list[PagedAlert], key: str) -> PagedAlert | None:
    """The alert ``key`` names: its fingerprint, else its ``alertname`` (the first in
    the list's order, so the configured scope's firing one before the others)."""
    key = key.strip()
    if not key:
        return None
    low = key.lower()
    for a in alerts:
        if a.fingerprint.lower() == low:
            return a
    return next((a for a in alerts if a.name == key), None)
