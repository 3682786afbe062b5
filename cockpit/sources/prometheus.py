"""Prometheus-compatible query API source (Prometheus, Thanos, Mimir, VictoriaMetrics).

Implements :class:`cockpit.sources.base.MetricsSource` over ``aiohttp``. Every
query carries an explicit evaluation time (``time=`` or ``start``/``end``/``step``) and the
server-side ``timeout=`` parameter; the client side is bounded by the same per-query timeout
(``PrometheusSettings.timeout_s``) and by a semaphore of ``max_concurrency`` queries in
flight. Every failure is raised as a classified :class:`SourceError`:

=====================================  ===============  =================================
what happened                          kind             detail
=====================================  ===============  =================================
connection refused / reset / TLS       unavailable      ``error``
no answer within the timeout           timeout          ``timeout_s``
HTTP 401 / 403                         access_denied    ``status``
HTTP 400 / 422 (``errorType``/``error``) bad_query       ``status``, ``error_type``
HTTP 404                               not_found        ``status`` (wrong path prefix)
HTTP 429 / 5xx                         unavailable      ``status``
non-JSON body, unexpected shape        bad_data         ``status``
=====================================  ===============  =================================

Response handling follows the HTTP API documentation
(https://prometheus.io/docs/prometheus/latest/querying/api/): values are strings
(``"NaN"``, ``"+Inf"``, ``"-Inf"`` included); ``warnings``/``infos``/``stats`` are
ignored; a missing ``resultType`` (seen on some compatible servers) is inferred from the
shape; scalar results become one unlabelled :class:`InstantVector`. Queries longer than
:data:`POST_THRESHOLD` characters are sent as a POST form, which the API accepts for
``/api/v1/query`` and ``/api/v1/query_range``.
"""

from __future__ import annotations

import asyncio
import base64
import gc
import json
import ssl
import urllib.parse
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, NamedTuple

import aiohttp
import msgspec

from cockpit.config import PrometheusSettings
from cockpit.models import InstantVector, Sample, Series, to_epoch
from cockpit.redact import public_url, redact_text
from cockpit.sources.base import ErrorKind, SourceError

SOURCE = "prometheus"
"""The ``source`` field of every failure this module raises."""

POST_THRESHOLD = 1500
"""Queries longer than this many characters are POSTed as a form (URL length limits of
proxies in front of Prometheus are typically 2–8 KiB)."""


METRIC_NAMES_LOOKBACK = timedelta(hours=1)
"""``metric_names(at)`` lists names seen in ``[at - 1h, at + 5m]``."""

_EXCERPT = 300


def _fmt_time(dt: datetime) -> str:
    """Unix seconds with millisecond precision, as the API accepts."""
    return f"{to_epoch(dt):.3f}"


def _fmt_duration(seconds: float) -> str:
    return f"{seconds:g}s"


def _parse_value(raw: Any) -> float:
    """A sample value: the API sends strings; some servers send numbers."""
    if isinstance(raw, bool):
        raise ValueError("boolean sample value")
    if isinstance(raw, (int, float)):
        return float(raw)
    if isinstance(raw, str):
        return float(raw)  # accepts "NaN", "+Inf", "-Inf", "1e3"
    raise ValueError(f"sample value of type {type(raw).__name__}")


def _parse_pair(pair: Any) -> tuple[float, float]:
    if not isinstance(pair, (list, tuple)) or len(pair) != 2:
        raise ValueError(f"sample is not a [time, value] pair: {str(pair)[:80]}")
    return float(pair[0]), _parse_value(pair[1])


def _labels(obj: Any) -> dict[str, str]:
    metric = obj.get("metric", {}) if isinstance(obj, dict) else None
    if metric is None:
        metric = {}
    if not isinstance(metric, dict):
        raise ValueError("'metric' is not an object")
    return {str(k): str(v) for k, v in metric.items()}


def _infer_type(result: Any) -> str:
    """Result type when the server omitted ``resultType``."""
    if isinstance(result, list):
        if len(result) == 2 and not isinstance(result[0], (dict, list)):
            return "scalar"
        if not result:
            return "vector"
        first = result[0]
        if isinstance(first, dict):
            return "matrix" if "values" in first else "vector"
    if isinstance(result, str):
        return "string"
    raise ValueError("cannot infer the result type")


def parse_instant(data: Mapping[str, Any]) -> list[InstantVector]:
    """Parse the ``data`` object of an instant query.

    Returns:
        One :class:`InstantVector` per output series; a scalar becomes one with no labels.
        A matrix (a range-vector selector evaluated as an instant query) yields the last
        sample of each series.

    Raises:
        ValueError: on an unexpected shape or value.
    """
    result = data.get("result")
    rtype = data.get("resultType") or _infer_type(result)
    if rtype == "scalar":
        t, v = _parse_pair(result)
        return [InstantVector(labels={}, t=t, v=v)]
    if rtype == "vector":
        if not isinstance(result, list):
            raise ValueError("vector result is not a list")
        out = []
        for item in result:
            if not isinstance(item, dict):
                raise ValueError("vector element is not an object")
            t, v = _parse_pair(item.get("value"))
            out.append(InstantVector(labels=_labels(item), t=t, v=v))
        return out
    if rtype == "matrix":
        return [
            InstantVector(labels=s.labels, t=s.samples[-1].t, v=s.samples[-1].v)
            for s in _parse_matrix(result)
            if s.samples
        ]
    if rtype == "string":
        raise ValueError("string results are not supported")
    raise ValueError(f"unknown resultType {rtype!r}")


def _parse_matrix(result: Any) -> list[Series]:
    if not isinstance(result, list):
        raise ValueError("matrix result is not a list")
    out = []
    for item in result:
        if not isinstance(item, dict):
            raise ValueError("matrix element is not an object")
        values = item.get("values")
        if values is None:
            values = []
        if not isinstance(values, list):
            raise ValueError("'values' is not a list")
        samples = [Sample(*_parse_pair(p)) for p in values]
        out.append(Series(labels=_labels(item), samples=samples))
    return out


def parse_range(data: Mapping[str, Any]) -> list[Series]:
    """Parse the ``data`` object of a range query.

    Returns:
        One :class:`Series` per output series, samples in time order; a scalar expression
        (``resultType`` scalar, from some compatible servers) becomes one unlabelled series.

    Raises:
        ValueError: on an unexpected shape or value.
    """
    result = data.get("result")
    rtype = data.get("resultType") or _infer_type(result)
    if rtype == "matrix":
        return _parse_matrix(result)
    if rtype == "vector":
        return [
            Series(labels=v.labels, samples=[Sample(t=v.t, v=v.v)]) for v in parse_instant(data)
        ]
    if rtype == "scalar":
        t, v = _parse_pair(result)
        return [Series(labels={}, samples=[Sample(t=t, v=v)])]
    raise ValueError(f"unexpected resultType {rtype!r} for a range query")


class _WireSeries(msgspec.Struct):
    metric: dict[str, str] = {}
    values: list[Sample] = []


class _WireMatrix(msgspec.Struct):
    result: list[_WireSeries]
    resultType: str = ""  # absent on some servers: the general path infers it


class _WireEnvelope(msgspec.Struct):
    status: str
    data: _WireMatrix


_MATRIX = msgspec.json.Decoder(_WireEnvelope, strict=False)


def fast_matrix(body: bytes) -> list[Series] | None:
    """The series of a plain successful matrix answer, decoded straight into samples.

    A range query of a drilldown returns tens of thousands of ``[t, "v"]`` pairs; this
    decodes them without building intermediate JSON objects (about 8× faster than
    ``json`` + :func:`parse_range`). Returns ``None`` for anything else — an error
    envelope, another result type, numbers where strings are expected, ``"+Inf"`` (which
    the fast decoder does not read) — and the caller takes the general path, which
    accepts every variant the module docstring lists.
    """
    # The decode builds one tuple per point; with the collector on, those allocations
    # trigger collections that walk the whole heap (a TUI's is large) and cost 2-5x the
    # decode itself. Nothing decoded here can form a reference cycle.
    collecting = gc.isenabled()
    gc.disable()
    try:
        env = _MATRIX.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    finally:
        if collecting:
            gc.enable()
    if env.status != "success" or env.data.resultType != "matrix":
        return None
    return [Series.model_construct(labels=w.metric, samples=w.values) for w in env.data.result]


class _WireElement(msgspec.Struct):
    value: Sample
    metric: dict[str, str] = {}


class _WireVector(msgspec.Struct):
    result: list[_WireElement]
    resultType: str = ""


class _WireVectorEnvelope(msgspec.Struct):
    status: str
    data: _WireVector


_VECTOR = msgspec.json.Decoder(_WireVectorEnvelope, strict=False)


def fast_vector(body: bytes) -> list[InstantVector] | None:
    """The rows of a plain successful vector answer (an instant query), decoded straight
    into values, as :func:`fast_matrix` decodes a matrix (about 5× faster than ``json``
    + :func:`parse_instant` with a model validated per row). ``None`` for anything else
    (an error envelope, a scalar or a matrix, ``"+Inf"``): the caller takes the general
    path."""
    try:
        env = _VECTOR.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if env.status != "success" or env.data.resultType != "vector":
        return None
    return [
        InstantVector.model_construct(labels=w.metric, t=w.value.t, v=w.value.v)
        for w in env.data.result
    ]


def env_proxy(url: str) -> str | None:
    """The proxy the environment names for ``url`` (``HTTPS_PROXY``/``HTTP_PROXY``/
    ``ALL_PROXY``, lower case too), or ``None`` when there is none or ``NO_PROXY``
    exempts its host; read once per source, as the standard library reads them."""
    import urllib.request

    parts = urllib.parse.urlsplit(url)
    proxies = urllib.request.getproxies()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy or not parts.hostname or urllib.request.proxy_bypass(parts.netloc):
        return None
    return proxy


INFLIGHT_ANSWERS = 4
"""Answers being read at once may hold this many times ``max_response_mb`` together (64
queries of a screen in flight at the limit would otherwise hold 64 × the limit)."""


class _Answer(NamedTuple):
    """One HTTP answer, read in full."""

    status: int
    body: bytes

    @property
    def is_success(self) -> bool:
        return 200 <= self.status < 300

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The body as JSON; ``ValueError`` when it is not."""
        return json.loads(self.body)


def _origin(url: str) -> tuple[str, str, int | None]:
    """The origin of ``url``: scheme, host (lowercase) and port (the scheme's default
    when none is given)."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        return ("", "", None)
    scheme = parts.scheme.lower()
    default = {"http": 80, "https": 443}.get(scheme)
    return (scheme, (parts.hostname or "").lower(), port or default)


class PrometheusSource:
    """Read-only client of a Prometheus-compatible HTTP API.

    Args:
        settings: URL, authentication, TLS, compression, timeout and concurrency
            (:class:`cockpit.config.PrometheusSettings`).

    The ``aiohttp`` session is made on first use inside the running event loop (one pool
    of at most ``max_concurrency`` connections); :meth:`close` releases it. aiohttp's
    C-parsed HTTP/1.1 costs about a third of the client CPU per request of
    httpx/httpcore (bench_drilldown: 64 queries of one screen, see ``make bench``).

    Every public coroutine raises :class:`SourceError` only.
    """

    name = SOURCE
    too_large_hint = "hint.prom.too_large"
    """The hint of an answer over ``max_response_mb`` (it names the setting to raise)."""

    def __init__(self, settings: PrometheusSettings) -> None:
        self.settings = settings
        self.base_url = settings.url.rstrip("/")
        self.shown_url = public_url(self.base_url)
        """The URL as errors and hints name it (:func:`cockpit.redact.public_url`)."""
        self._config_error: SourceError | None = None
        self._sem = asyncio.Semaphore(settings.max_concurrency)
        headers = {
            "Accept": "application/json",
            "User-Agent": "cockpit",
            "Accept-Encoding": "gzip" if settings.compression else "identity",
        }
        headers.update(settings.headers)
        token = self._token()
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if settings.username:
            password = settings.password.get_secret_value() if settings.password else ""
            pair = f"{settings.username}:{password}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
        self._headers = headers
        self._private_headers = frozenset(
            {*(k.lower() for k in settings.headers), "authorization", "cookie"}
        )
        self._guarded = bool(self._private_headers & {k.lower() for k in headers})
        """Whether this source sends anything :meth:`_same_origin_credentials` guards: the
        middleware is installed only then (aiohttp's middleware chain cost about a fifth
        of each request's client CPU: 150 trivial queries at once, 47 → 38 ms)."""
        self._ssl: ssl.SSLContext | bool = True
        if settings.insecure:
            self._ssl = False
        elif settings.ca_file is not None:
            try:
                self._ssl = ssl.create_default_context(cafile=str(settings.ca_file))
            except (OSError, ssl.SSLError) as exc:
                self._config_error = SourceError.of(
                    self.name,
                    ErrorKind.NOT_CONFIGURED,
                    f"cannot load CA file {settings.ca_file}: {exc}",
                    hint_key="hint.prom.ca_file",
                )
        if not self.base_url and self._config_error is None:
            self._config_error = SourceError.of(
                self.name,
                ErrorKind.NOT_CONFIGURED,
                "no Prometheus URL configured",
                hint_key="hint.prom.no_url",
            )
        parts = urllib.parse.urlsplit(self.base_url)
        if (
            self.base_url
            and self._config_error is None
            and (parts.scheme not in ("http", "https") or not parts.hostname)
        ):
            self._config_error = SourceError.of(
                self.name,
                ErrorKind.NOT_CONFIGURED,
                f"not an http(s) URL: {self.shown_url!r}",
                hint_key="hint.prom.scheme",
            )
        self._proxy = env_proxy(self.base_url)
        self._origin = _origin(self.base_url)
        self._session: aiohttp.ClientSession | None = None
        self._buffered = 0  # bytes of answers being read right now (all queries)
        self._session_loop: asyncio.AbstractEventLoop | None = None

    def _session_now(self) -> aiohttp.ClientSession:
        """The session of the running event loop (a new one after the loop changed)."""
        session = self._session
        loop = asyncio.get_running_loop()
        if session is None or session.closed or self._session_loop is not loop:
            if session is not None and not session.closed:
                # Made in an event loop that has ended: nothing can be awaited there any
                # more, so its pool is left to the garbage collector.
                session.detach()
            self._session_loop = loop
            session = aiohttp.ClientSession(
                headers=self._headers,
                connector=aiohttp.TCPConnector(limit=self.settings.max_concurrency, ssl=self._ssl),
                timeout=aiohttp.ClientTimeout(total=self.settings.timeout_s),
                auto_decompress=True,
                # trust_env would look up ~/.netrc and the proxy variables in a thread
                # for every request; the proxy is read once instead.
                trust_env=False,
                proxy=self._proxy,
                middlewares=(self._same_origin_credentials,) if self._guarded else (),
            )
            self._session = session
        return session

    async def _same_origin_credentials(
        self, req: aiohttp.ClientRequest, handler: aiohttp.ClientHandlerType
    ) -> aiohttp.ClientResponse:
        """Send credentials (Authorization, Cookie, every configured custom header such as
        ``X-Api-Key``) to the configured server only: a redirect to another origin gets
        the request without them. aiohttp drops only Authorization itself; this runs for
        every hop of a redirect chain."""
        if _origin(str(req.url)) != self._origin:
            for name in self._private_headers:
                req.headers.popall(name, None)
        return await handler(req)

    def _token(self) -> str:
        s = self.settings
        if s.bearer_token_file is not None:
            try:
                return s.bearer_token_file.read_text(encoding="utf-8").strip()
            except OSError as exc:
                self._config_error = SourceError.of(
                    self.name,
                    ErrorKind.NOT_CONFIGURED,
                    f"cannot read bearer token file {s.bearer_token_file}: {exc.strerror or exc}",
                    hint_key="hint.prom.token_file",
                )
                return ""
        if s.bearer_token is not None:
            return s.bearer_token.get_secret_value().strip()
        return ""

    # -- the MetricsSource protocol -------------------------------------------------

    async def instant(self, query: str, at: datetime) -> list[InstantVector]:
        """Evaluate ``query`` at ``at`` (``/api/v1/query``).

        Returns:
            One entry per output series (``t`` in Unix seconds); a scalar is one unlabelled
            entry. Values may be NaN or ±Inf exactly as the server computed them.

        Raises:
            SourceError: classified (see the module docstring).
        """
        params = {"query": query, "time": _fmt_time(at), "timeout": self._server_timeout()}
        resp = await self._request("/api/v1/query", params, query)
        if resp.is_success and (rows := fast_vector(resp.body)) is not None:
            return rows
        data = self._data(resp, "/api/v1/query", query)
        try:
            return parse_instant(data)
        except (ValueError, TypeError) as exc:
            raise self._bad_data(str(exc), query=query) from None

    async def range(
        self, query: str, start: datetime, end: datetime, step_s: float
    ) -> list[Series]:
        """Evaluate ``query`` over ``[start, end]`` every ``step_s`` seconds
        (``/api/v1/query_range``).

        Returns:
            One :class:`Series` per output series, samples in time order.

        Raises:
            SourceError: classified; ``bad_query`` when ``step_s`` is not positive or
                ``end`` is before ``start``.
        """
        if step_s <= 0 or end < start:
            raise SourceError.of(
                self.name,
                ErrorKind.BAD_QUERY,
                f"invalid range: start={start.isoformat()} end={end.isoformat()} step={step_s}",
                hint_key="hint.prom.bad_range",
                query=query,
            )
        params = {
            "query": query,
            "start": _fmt_time(start),
            "end": _fmt_time(end),
            "step": f"{step_s:g}",
            "timeout": self._server_timeout(),
        }
        resp = await self._request("/api/v1/query_range", params, query)
        if resp.is_success and (series := fast_matrix(resp.body)) is not None:
            return series
        data = self._data(resp, "/api/v1/query_range", query)
        try:
            return parse_range(data)
        except (ValueError, TypeError) as exc:
            raise self._bad_data(str(exc), query=query) from None

    async def samples(self, query: str, at: datetime) -> list[Series]:
        """The raw samples of the range selector ``query`` (``metric{…}[2h]``) evaluated at
        ``at`` (``/api/v1/query``, result type ``matrix``): each series' samples at their
        own timestamps in ``[at - range, at]``, in time order, without the staleness
        markers (Prometheus drops them from range selectors). About a hundred times cheaper
        for the server than a range query of ``timestamp(metric{…})``, which selects the
        series again at every step.

        Raises:
            SourceError: classified (see the module docstring); ``bad_data`` when the
                answer is not a matrix (``query`` is not a range selector).
        """
        params = {"query": query, "time": _fmt_time(at), "timeout": self._server_timeout()}
        resp = await self._request("/api/v1/query", params, query)
        if resp.is_success and (series := fast_matrix(resp.body)) is not None:
            return series
        data = self._data(resp, "/api/v1/query", query)
        try:
            rtype = data.get("resultType") or _infer_type(data.get("result"))
            if rtype != "matrix":
                raise ValueError(f"expected a matrix of raw samples, got resultType {rtype!r}")
            return _parse_matrix(data.get("result"))
        except (ValueError, TypeError, AttributeError) as exc:
            raise self._bad_data(str(exc), query=query) from None

    async def metric_names(self, at: datetime) -> list[str]:
        """Metric names with samples in ``[at - 1h, at + 5m]``
        (``/api/v1/label/__name__/values``), sorted.

        Raises:
            SourceError: classified.
        """
        return await self.names_between(at - METRIC_NAMES_LOOKBACK, at + timedelta(minutes=5))

    async def names_between(self, start: datetime, end: datetime) -> list[str]:
        """Names of the metrics the server holds series of in ``[start, end]``
        (``/api/v1/label/__name__/values`` with ``start`` and ``end``), sorted.

        The server answers from the blocks of its history that overlap the range
        (https://prometheus.io/docs/prometheus/latest/querying/api/#querying-label-values):
        an empty list means it holds no sample at all there; a name may be listed for a
        block that only overlaps the range.

        Raises:
            SourceError: classified.
        """
        params = {"start": _fmt_time(start), "end": _fmt_time(end)}
        data = await self._api("/api/v1/label/__name__/values", params, method="GET")
        if not isinstance(data, list) or not all(isinstance(n, str) for n in data):
            raise self._bad_data("label values are not a list of strings")
        return sorted(data)

    async def rules(self) -> list[dict[str, Any]]:
        """The alerting rules the server evaluates (``/api/v1/rules?type=alert``), as sent:
        one object per rule (``name``, ``query`` — the rule's expression —, ``labels``,
        ``annotations``, ``duration`` in seconds), every group's rules in order. The
        objects are outside text: :mod:`cockpit.analysis.paged` reads them.

        Raises:
            SourceError: classified; ``bad_data`` when ``groups`` is not a list.
        """
        data = await self._api("/api/v1/rules", {"type": "alert"}, method="GET")
        groups = data.get("groups") if isinstance(data, dict) else None
        if not isinstance(groups, list):
            raise self._bad_data("rules: 'groups' is not a list")
        return [
            r
            for g in groups
            if isinstance(g, dict) and isinstance(g.get("rules"), list)
            for r in g["rules"]
            if isinstance(r, dict) and r.get("type", "alerting") == "alerting"
        ]

    async def ping(self) -> str:
        """One line saying what answered, for ``cockpit doctor``.

        Tries ``/api/v1/status/buildinfo`` (Prometheus, Thanos, VictoriaMetrics), then
        ``/-/ready``, then the instant query ``vector(1)``.

        Returns:
            E.g. ``"Prometheus 2.42.0 (revision …)"`` or ``"ready"``.

        Raises:
            SourceError: classified, from the last attempt.
        """
        try:
            info = await self._api("/api/v1/status/buildinfo", {}, method="GET")
            if isinstance(info, dict) and info.get("version"):
                rev = str(info.get("revision") or "")
                return f"Prometheus-compatible {info['version']}" + (
                    f" (revision {rev[:12]})" if rev else ""
                )
        except SourceError as exc:
            transport_level = "status" not in exc.failure.detail
            if transport_level or exc.kind is ErrorKind.ACCESS_DENIED:
                raise
        try:
            resp = await self._send("GET", "/-/ready", {})
            if resp.status == 200:
                return resp.text.strip() or "ready"
        except SourceError:
            pass
        await self.instant("vector(1)", datetime.now().astimezone())
        return "query API answers"

    async def close(self) -> None:
        """Close the connection pool (a no-op when none was opened)."""
        session, self._session = self._session, None
        if session is not None and not session.closed:
            await session.close()

    # -- plumbing -------------------------------------------------------------------

    def _server_timeout(self) -> str:
        return _fmt_duration(self.settings.timeout_s)

    def _bad_data(self, message: str, *, status: int | None = None, query: str = "") -> SourceError:
        detail: dict[str, Any] = {"query": query} if query else {}
        if status is not None:
            detail["status"] = str(status)
        return SourceError.of(
            self.name,
            ErrorKind.BAD_DATA,
            f"unexpected response: {message}",
            hint_key="hint.prom.bad_data",
            **detail,
        )

    async def _send(
        self, method: str, path: str, params: dict[str, str], query: str = ""
    ) -> _Answer:
        if self._config_error is not None:
            raise self._config_error
        timeout = self.settings.timeout_s
        url = self.base_url + path
        async with self._sem:
            try:
                async with asyncio.timeout(timeout):
                    session = self._session_now()
                    kwargs: dict[str, Any] = (
                        {"data": params} if method == "POST" else {"params": params}
                    )
                    async with session.request(method, url, **kwargs) as resp:
                        return _Answer(resp.status, await self._read_bounded(resp, path, query))
            except TimeoutError:
                raise SourceError.of(
                    self.name,
                    ErrorKind.TIMEOUT,
                    f"no answer from {self.shown_url}{path} within {timeout:g} s",
                    hint_key="hint.prom.timeout",
                    timeout_s=f"{timeout:g}",
                    path=path,
                ) from None
            except (aiohttp.ClientError, ValueError, OSError) as exc:
                raise self._transport_error(path, exc) from None

    async def _read_bounded(self, resp: aiohttp.ClientResponse, path: str, query: str) -> bytes:
        """The body, read chunk by chunk up to ``max_response_mb`` (after gzip decoding),
        with every answer being read at once sharing a budget of
        :data:`INFLIGHT_ANSWERS` of those: an answer past either is abandoned and its
        connection closed, so huge matrices (a selector matching a whole cluster, a
        hostile server) can never take the process's memory, however many queries are in
        flight.

        Raises:
            SourceError: ``BAD_DATA`` naming the query (or path) and the limit.
        """
        limit = int(self.settings.max_response_mb * 2**20)
        budget = limit * INFLIGHT_ANSWERS
        length = resp.content_length
        body = bytearray()
        over_budget = False
        try:
            if length is None or length <= limit:
                async for chunk in resp.content.iter_chunked(2**16):
                    body += chunk
                    self._buffered += len(chunk)
                    if len(body) > limit:
                        break
                    if self._buffered > budget:
                        over_budget = True
                        break
                else:
                    return bytes(body)
        finally:
            self._buffered -= len(body)
        resp.close()
        mb = f"{self.settings.max_response_mb:g}"
        what = query or path
        message = (
            f"the answers being read at once are over {budget / 2**20:g} MiB "
            f"({INFLIGHT_ANSWERS} × {self.name}.max_response_mb); {what} not read"
            if over_budget
            else f"the answer to {what} is larger than {mb} MiB "
            f"({self.name}.max_response_mb); not read"
        )
        raise SourceError.of(
            self.name,
            ErrorKind.BAD_DATA,
            message,
            hint_key=self.too_large_hint,
            hint_args={"mb": mb},
            path=path,
            query=query,
            limit_mb=mb,
        )

    def _transport_error(self, path: str, exc: Exception) -> SourceError:
        # The client's message can quote the URL or the proxy it was given, secrets and all.
        text = redact_text(str(exc)) or type(exc).__name__
        if isinstance(exc, aiohttp.ClientProxyConnectionError | aiohttp.ClientHttpProxyError):
            key = "hint.prom.proxy"
        elif "WRONG_VERSION_NUMBER" in text or "record layer failure" in text:
            key = "hint.prom.not_tls"
        elif isinstance(exc, aiohttp.ClientSSLError | ssl.SSLError) or (
            "CERTIFICATE_VERIFY_FAILED" in text
        ):
            key = "hint.prom.tls"
        elif isinstance(exc, aiohttp.ClientConnectorDNSError):
            key = "hint.prom.dns"
        elif isinstance(exc, aiohttp.ClientConnectorError | aiohttp.InvalidURL | ValueError):
            key = "hint.prom.connect"
        else:
            key = "hint.prom.broken"
        host = urllib.parse.urlsplit(self.base_url).hostname or self.shown_url
        return SourceError.of(
            self.name,
            ErrorKind.UNAVAILABLE,
            f"{type(exc).__name__}: {text}",
            hint_key=key,
            hint_args={
                "url": self.shown_url,
                "host": host,
                "proxy": public_url(self._proxy or ""),
            },
            path=path,
            error=type(exc).__name__,
        )

    async def _api(
        self,
        path: str,
        params: dict[str, str],
        *,
        query: str = "",
        method: str | None = None,
    ) -> Any:
        """Send one API request and return the ``data`` member of a success envelope."""
        return self._data(await self._request(path, params, query, method), path, query)

    async def _request(
        self, path: str, params: dict[str, str], query: str = "", method: str | None = None
    ) -> _Answer:
        """Send one API request (POST for a long query) and return the raw response."""
        if method is None:
            method = "POST" if len(query) > POST_THRESHOLD else "GET"
        return await self._send(method, path, params, query)

    def _data(self, resp: _Answer, path: str, query: str = "") -> Any:
        """The ``data`` member of a success envelope, or the classified failure."""
        status = resp.status
        body: Any = None
        try:
            body = resp.json()
        except ValueError:
            body = None
        envelope = body if isinstance(body, dict) else None
        if 200 <= status < 300:
            if envelope is None:
                excerpt = resp.text[:_EXCERPT]
                raise self._bad_data(
                    f"HTTP {status} body is not JSON: {excerpt!r}", status=status, query=query
                )
            if envelope.get("status") == "error":
                raise self._api_error(status, envelope, path, query)
            if "data" not in envelope:
                raise self._bad_data("no 'data' member in the answer", status=status, query=query)
            return envelope["data"]
        raise self._http_error(status, envelope, resp.text, path, query)

    def _api_error(
        self, status: int, envelope: Mapping[str, Any], path: str, query: str
    ) -> SourceError:
        etype = str(envelope.get("errorType") or "")
        message = str(envelope.get("error") or "")
        detail: dict[str, Any] = {"status": str(status), "error_type": etype, "path": path}
        if query:
            detail["query"] = query
        if etype == "timeout":
            return SourceError.of(
                self.name,
                ErrorKind.TIMEOUT,
                message or "query timed out on the server",
                hint_key="hint.prom.server_timeout",
                **detail,
            )
        if etype in ("bad_data", "execution") or status in (400, 422):
            # Server limits (Prometheus --query.max-samples, the 11,000-point cap of a
            # range query) are not PromQL mistakes: the way out is a narrower window.
            too_big = any(
                words in message for words in ("too many samples", "exceeded maximum resolution")
            )
            return SourceError.of(
                self.name,
                ErrorKind.BAD_QUERY,
                message or f"HTTP {status} {etype}",
                hint_key="hint.prom.too_big" if too_big else "hint.prom.rejected",
                **detail,
            )
        return SourceError.of(
            self.name,
            ErrorKind.UNAVAILABLE,
            message or f"HTTP {status} {etype}",
            hint_key="hint.prom.internal",
            **detail,
        )

    def _http_error(
        self,
        status: int,
        envelope: Mapping[str, Any] | None,
        text: str,
        path: str,
        query: str,
    ) -> SourceError:
        if envelope is not None and ("errorType" in envelope or "error" in envelope):
            if status in (401, 403):
                pass
            else:
                return self._api_error(status, envelope, path, query)
        excerpt = text.strip()[:_EXCERPT]
        detail: dict[str, Any] = {"status": str(status), "path": path}
        if query:
            detail["query"] = query
        if status in (401, 403):
            return SourceError.of(
                self.name,
                ErrorKind.ACCESS_DENIED,
                f"HTTP {status} from {self.shown_url}{path}: {excerpt}".rstrip(": "),
                hint_key="hint.prom.denied",
                **detail,
            )
        if status in (400, 422):
            return SourceError.of(
                self.name,
                ErrorKind.BAD_QUERY,
                excerpt or f"HTTP {status}",
                hint_key="hint.prom.rejected_plain",
                **detail,
            )
        if status == 404:
            suffix = next(
                (x for x in ("/api/v1", "/graph", "/query") if self.base_url.endswith(x)), ""
            )
            return SourceError.of(
                self.name,
                ErrorKind.NOT_FOUND,
                f"HTTP 404 for {self.shown_url}{path}",
                hint_key="hint.prom.url_suffix" if suffix else "hint.prom.not_found",
                hint_args={"suffix": suffix} if suffix else None,
                **detail,
            )
        if status == 429:
            key = "hint.prom.rate_limited"
        elif status >= 500:
            key = "hint.prom.server_failed"
        else:
            key = "hint.prom.unexpected_status"
        return SourceError.of(
            self.name,
            ErrorKind.UNAVAILABLE,
            f"HTTP {status} from {self.shown_url}{path}" + (f": {excerpt}" if excerpt else ""),
            hint_key=key,
            **detail,
        )
