"""Evidence bundles: record any source's calls, replay them offline through the same API.

A bundle is one gzip-compressed JSON-lines file. Line kinds, in order of appearance:

``header`` (first line)
    ``{"kind": "header", "format": 1, "recorded_at", "window_start", "window_end",
    "scope": {...}, "cockpit_version", "note"}`` — see :class:`BundleMeta`.
``source``
    ``{"kind": "source", "source": "metrics", "class": "cockpit.sources.prometheus:…",
    "attrs": {"name": "prometheus"}}`` — written when a :class:`Recorder` is created.
``method``
    ``{"kind": "method", "source", "method", "params": [{"name", "kind", "default"?}]}`` —
    the signature of a recorded coroutine method, so replay can bind positional and keyword
    arguments (and defaults) exactly as the live call did.
call lines
    ``{"k": KEY, "source", "method", "args": {...}, "ok": true, "type": "module:Class",
    "shape": "one" | "list" | "dict", "result": ...}`` or ``{"k": KEY, ..., "ok": false,
    "failure": SourceFailure}``. ``KEY`` is the canonical JSON of ``[source, method, args]``
    and always comes first, so opening a bundle indexes every call without decoding results
    (results are decoded and validated on first use).
``end`` (last line)
    ``{"kind": "end", "calls": N}`` — written by :meth:`BundleWriter.close`; a bundle
    without it was interrupted (every line before the interruption is still usable).

Arguments are canonicalised: datetimes become ``{"$dt": ISO-8601 UTC}``, timedeltas
``{"$td": seconds}``, enums their value, pydantic models their JSON dump. Results keep
their pydantic model type path so replay rebuilds the same models; only classes under the
``cockpit`` package are ever imported from a bundle (opening one never runs foreign code),
and nothing is unpickled.

Replay answers an exact key match first (the newest recording of it). For the metrics
protocol it also derives answers the recording did not make verbatim: an ``instant(q, at)``
or a ``range(q, start, end, step)`` from a recorded ``range`` of the same query that
covers it, taking for each evaluation time the newest recorded sample at or before it
within 5 minutes (Prometheus' default lookback delta,
https://prometheus.io/docs/prometheus/latest/querying/basics/#staleness), the raw
``samples(selector[Ns], at)`` from a recorded raw read of the same selector that covers
``[at - N, at]``, and ``metric_names(at)`` from the recording nearest in time. A pod's ``pod_log`` for another
window (``since_time``, ``tail_lines``, ``limit_bytes``) is cut from a recorded read of the
same container that holds all of it (read from no later, cut by neither its byte limit
nor its tail before that time); when the bundle holds the log only from later, the
failure says since when. Anything else raises
``SourceError(NOT_FOUND, "not in this bundle: …")``.

Lines are read in any JSON spacing. A damaged call line fails only its own call
(``BAD_DATA``) when the call can still be identified, and is otherwise skipped; both are
counted in ``meta.problems``. Only a damaged header makes the whole bundle unreadable.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import gzip
import importlib
import inspect
import json
import math
import os
import re
import zlib
from collections.abc import Awaitable, Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path, PurePath
from typing import IO, Any

from pydantic import BaseModel, SecretStr, ValidationError

from cockpit.models import InstantVector, Sample, Series, to_epoch
from cockpit.models.kube import PodLog
from cockpit.models.messages import msg
from cockpit.sources.base import ErrorKind, SourceError, SourceFailure, Sources

FORMAT_VERSION = 1
"""Bundle format version written in the header; readers refuse newer versions."""

LOOKBACK_S = 300.0
"""Prometheus' default lookback delta (5 min) used when deriving instants from ranges."""

NOT_RECORDED = frozenset({"close", "aclose"})
"""Coroutine methods that are passed through without being recorded."""

ALLOWED_MODEL_PREFIX = "cockpit."
"""Only model classes from these modules are imported when a bundle is opened."""


class BundleError(Exception):
    """A bundle cannot be read: not gzip, corrupt, no header, or a newer format."""


class BundleScope(BaseModel):
    """The service a bundle was recorded for (the fields of ``ServiceSettings``)."""

    namespace: str = ""
    selector: str = ""
    deployment: str = ""
    model: str = ""


class BundleMeta(BaseModel):
    """The header of a bundle.

    Attributes:
        format: Format version (:data:`FORMAT_VERSION`).
        recorded_at: When the recording was made (UTC); replay freezes the clock here.
        window_start: Start of the evidence window (UTC).
        window_end: End of the evidence window (UTC), usually ``recorded_at``.
        scope: The service in scope (namespace, selector, deployment, model, …).
        cockpit_version: Version of cockpit that wrote it.
        note: Free text (what was recorded and why).
        complete: False when the ``end`` line is missing (recording interrupted).
        problems: What was wrong while reading (truncation, skipped lines).
    """

    format: int = FORMAT_VERSION
    recorded_at: datetime
    window_start: datetime | None = None
    window_end: datetime | None = None
    scope: dict[str, str] = {}
    cockpit_version: str = ""
    note: str = ""
    complete: bool = True
    problems: list[str] = []

    @property
    def service(self) -> BundleScope:
        """``scope`` as a model with ``namespace``/``selector``/``deployment``/``model``."""
        return BundleScope(**{k: v for k, v in self.scope.items() if k in BundleScope.model_fields})


# -- canonical JSON ---------------------------------------------------------------------


def _utc(dt: datetime) -> datetime:
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def canonical(value: Any) -> Any:
    """The canonical JSON-able form of an argument (used in keys and ``args``).

    Raises:
        TypeError: for values that have no canonical form.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value
    if isinstance(value, enum.Enum):
        return canonical(value.value)
    if isinstance(value, datetime):
        return {"$dt": _utc(value).isoformat()}
    if isinstance(value, timedelta):
        return {"$td": value.total_seconds()}
    if isinstance(value, BaseModel):
        return canonical(value.model_dump(mode="json"))
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((canonical(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    raise TypeError(f"cannot record an argument of type {type(value).__name__}")


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=True)


def call_key(source: str, method: str, args: dict[str, Any]) -> str:
    """The canonical key of a call (``args`` already canonical)."""
    return _dumps([source, method, args])


def _json_default(value: Any) -> Any:
    """``json.dumps`` hook for ``model_dump(mode="python")`` output (keeps NaN/Inf)."""
    if isinstance(value, datetime):
        return _utc(value).isoformat()
    if isinstance(value, (date, time)):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, SecretStr):
        return "**********"
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, BaseModel):
        return value.model_dump(mode="python")
    return str(value)


def _type_path(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


@functools.cache
def _import_model(path: str) -> type[BaseModel]:
    module, _, qualname = path.partition(":")
    if not module.startswith(ALLOWED_MODEL_PREFIX) or not qualname:
        raise BundleError(f"refusing to load model type {path!r} (only cockpit models)")
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    if not (isinstance(obj, type) and issubclass(obj, BaseModel)):
        raise BundleError(f"{path!r} is not a pydantic model")
    return obj


def encode_result(value: Any) -> dict[str, Any]:
    """``{"type", "shape", "result"}`` for a call result.

    Shapes: ``one`` (a model or a JSON value), ``list`` (of models of one class, or JSON
    values), ``dict`` (str → model of one class). ``type`` is ``module:Class`` for models
    and ``json`` for plain JSON values.

    Raises:
        TypeError: when the value cannot be represented.
    """
    if isinstance(value, BaseModel):
        return {"type": _type_path(type(value)), "shape": "one", "result": value.model_dump()}
    if isinstance(value, list) and value and all(type(v) is Series for v in value):
        return {"type": SERIES_TYPE, "shape": "series", "result": [_pack_series(s) for s in value]}
    if isinstance(value, (list, tuple)):
        classes = {type(v) for v in value}
        if value and all(isinstance(v, BaseModel) for v in value):
            if len(classes) == 1:
                cls = classes.pop()
                return {
                    "type": _type_path(cls),
                    "shape": "list",
                    "result": [v.model_dump() for v in value],
                }
            return {
                "type": "mixed",
                "shape": "list",
                "result": [{"type": _type_path(type(v)), "v": v.model_dump()} for v in value],
            }
        if any(isinstance(v, BaseModel) for v in value):
            raise TypeError("a list mixing models and plain values")
        return {"type": "json", "shape": "list", "result": list(value)}
    if isinstance(value, dict) and value and all(isinstance(v, BaseModel) for v in value.values()):
        classes = {type(v) for v in value.values()}
        if len(classes) != 1:
            raise TypeError("a dict of models of several classes")
        return {
            "type": _type_path(classes.pop()),
            "shape": "dict",
            "result": {str(k): v.model_dump() for k, v in value.items()},
        }
    # Plain JSON (str, numbers, None, dicts/lists of those); fails loudly otherwise.
    json.dumps(value, allow_nan=True)
    return {"type": "json", "shape": "one", "result": value}


def _validate(cls: type[BaseModel], raw: Any) -> BaseModel:
    try:
        return cls.model_validate(raw)
    except ValidationError:
        # Strict models accept ISO strings for datetimes only in JSON mode.
        return cls.model_validate_json(json.dumps(raw, allow_nan=True))


def decode_result(rec: dict[str, Any]) -> Any:
    """Rebuild a result written by :func:`encode_result`.

    Raises:
        BundleError: unknown model type or data that no longer validates.
    """
    rtype, shape = rec.get("type"), rec.get("shape", "one")
    raw: Any = rec.get("result")
    try:
        if rtype == "json":
            return list(raw) if shape == "list" else raw
        if rtype == "mixed":
            return [_validate(_import_model(item["type"]), item["v"]) for item in raw]
        if not isinstance(rtype, str):
            raise BundleError(f"call line without a result type: {rtype!r}")
        if shape == "series":
            if rtype != SERIES_TYPE:
                raise BundleError(f"series shape with type {rtype!r}")
            return [_unpack_series(item) for item in raw]
        cls = _import_model(rtype)
        if shape == "list":
            return [_validate(cls, item) for item in raw]
        if shape == "dict":
            return {k: _validate(cls, v) for k, v in raw.items()}
        return _validate(cls, raw)
    except (ValidationError, TypeError, KeyError, AttributeError, ImportError, ValueError) as exc:
        raise BundleError(f"cannot rebuild a recorded {rtype} result: {exc}") from exc


SERIES_TYPE = "cockpit.models:Series"


def _pack_series(s: Series) -> list[Any]:
    """``[labels, runs, values]``: sample times as ``[t0, step, count]`` runs (a range
    result sits on a regular grid, with gaps where the series was absent)."""
    runs: list[list[float]] = []
    times = [x.t for x in s.samples]
    i = 0
    while i < len(times):
        t0 = times[i]
        if i + 1 < len(times):
            step = times[i + 1] - t0
            n = 2
            while i + n < len(times) and abs(times[i + n] - (t0 + n * step)) < 1e-6:
                n += 1
        else:
            step, n = 0.0, 1
        runs.append([_num(t0), _num(step), n])
        i += n
    return [s.labels, runs, [x.v for x in s.samples]]


def _num(x: float) -> float:
    return int(x) if x == int(x) else x


def _unpack_series(item: Any) -> Series:
    labels, runs, values = item
    if not isinstance(labels, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in labels.items()
    ):
        raise ValueError("series labels must map strings to strings")
    times: list[float] = []
    for t0, step, n in runs:
        times.extend(float(t0) + k * float(step) for k in range(int(n)))
    if len(times) != len(values) or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in values
    ):
        raise ValueError("series times and values do not match")
    return Series.model_construct(
        labels=labels,
        samples=[Sample(t, float(v)) for t, v in zip(times, values, strict=True)],
    )


# -- writing ----------------------------------------------------------------------------


@dataclass
class CallStats:
    """What a writer recorded, per ``source.method``."""

    ok: dict[str, int] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    lost: dict[str, str] = field(default_factory=dict)
    """Calls that could not be written (``source.method`` → the write error)."""

    @property
    def total(self) -> int:
        """Calls written (successes and failures)."""
        return sum(self.ok.values()) + sum(self.failed.values())


@dataclass
class CallTally:
    """Calls made through any :class:`Recorder` while this tally is current (see
    :data:`call_tally`): how one recording plan went.

    Attributes:
        started: Calls made (with arguments the method accepts).
        recorded: Answered and written to the bundle.
        failed: Answered with an error (written to the bundle too).
        not_stored: Answered but not written (unrecordable result, or the write failed).
    """

    started: int = 0
    recorded: int = 0
    failed: int = 0
    not_stored: int = 0

    @property
    def unanswered(self) -> int:
        """Calls still waiting for their answer (cut off by a timeout or a plan error)."""
        return max(0, self.started - self.recorded - self.failed - self.not_stored)


call_tally: ContextVar[CallTally | None] = ContextVar("cockpit_call_tally", default=None)
"""The tally the calls of the current task (and the tasks it starts) count into."""


class BundleWriter:
    """Writes a bundle line by line; every line is flushed (``Z_SYNC_FLUSH``), so a crash
    keeps every call recorded before it.

    Args:
        path: Output file (``.jsonl.gz`` by convention); created with mode 0600 because
            evidence may contain internal names.
        meta: The header.

    Use as a context manager or call :meth:`close`.
    """

    def __init__(self, path: str | os.PathLike[str], meta: BundleMeta) -> None:
        self.path = Path(path)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        self._raw: IO[bytes] = os.fdopen(fd, "wb")
        self._gz = gzip.GzipFile(fileobj=self._raw, mode="wb", compresslevel=6, mtime=0)
        self.stats = CallStats()
        self.failures: list[str] = []
        """One line per failed call: ``source.method(args): kind: message``."""
        self._methods: set[tuple[str, str]] = set()
        self._sources: set[str] = set()
        self._closed = False
        header = {
            "kind": "header",
            **meta.model_dump(mode="json", exclude={"complete", "problems"}),
        }
        try:
            self._line(header)
        except BaseException:
            # A full disk (or a file size limit) before the header: what is there is no
            # bundle, and a stub would only block the retry.
            self._closed = True
            with contextlib.suppress(OSError, ValueError):
                self._raw.close()
            with contextlib.suppress(OSError):
                self.path.unlink()
            raise

    def _line(self, obj: dict[str, Any]) -> None:
        if self._closed:
            raise ValueError("bundle writer is closed")
        data = json.dumps(obj, separators=(",", ":"), allow_nan=True, default=_json_default)
        self._gz.write(data.encode("utf-8") + b"\n")
        self._gz.flush(zlib.Z_SYNC_FLUSH)
        self._raw.flush()

    def add_source(self, source: str, inner: Any) -> None:
        """Describe a recorded source (class path and its ``name`` attribute)."""
        if source in self._sources:
            return
        self._sources.add(source)
        attrs = {}
        name = getattr(inner, "name", None)
        if isinstance(name, str):
            attrs["name"] = name
        self._line(
            {"kind": "source", "source": source, "class": _type_path(type(inner)), "attrs": attrs}
        )

    def add_method(self, source: str, method: str, sig: inspect.Signature) -> None:
        """Record a method's signature once, so replay binds arguments identically."""
        if (source, method) in self._methods:
            return
        self._methods.add((source, method))
        params = []
        for p in sig.parameters.values():
            entry: dict[str, Any] = {"name": p.name, "kind": p.kind.name}
            if p.default is not inspect.Parameter.empty:
                try:
                    entry["default"] = canonical(p.default)
                except TypeError:
                    entry["default"] = None
            params.append(entry)
        self._line({"kind": "method", "source": source, "method": method, "params": params})

    def write_call(
        self,
        source: str,
        method: str,
        args: dict[str, Any],
        *,
        result: Any = None,
        failure: SourceFailure | None = None,
    ) -> str:
        """Append one call (``args`` canonical) with its result or its failure.

        Returns:
            ``"recorded"``, ``"failed"`` (the failure was written), or ``"not_stored"``
            (a result with no recordable form).
        """
        label = f"{source}.{method}"
        line: dict[str, Any] = {
            "k": call_key(source, method, args),
            "source": source,
            "method": method,
            "args": args,
        }
        if failure is not None:
            line["ok"] = False
            line["failure"] = failure.model_dump(mode="json")
            self._line(line)
            shown = ", ".join(f"{k}={_show(v)}" for k, v in args.items())
            self.failures.append(f"{label}({shown}): {failure.kind.value}: {failure.message}")
            self.stats.failed[label] = self.stats.failed.get(label, 0) + 1
            return "failed"
        try:
            line.update(encode_result(result))
        except TypeError as exc:
            self.stats.skipped[label] = str(exc)
            return "not_stored"
        line["ok"] = True
        self._line(line)
        self.stats.ok[label] = self.stats.ok.get(label, 0) + 1
        return "recorded"

    def close(self) -> None:
        """Write the ``end`` line and close the file (idempotent)."""
        if self._closed:
            return
        try:
            self._line({"kind": "end", "calls": self.stats.total})
            self._closed = True
            self._gz.close()
            self._raw.flush()
            os.fsync(self._raw.fileno())
        except BaseException:
            self._closed = True
            with contextlib.suppress(OSError, ValueError):
                self._raw.close()
            # What reached the disk before the failure replays as an interrupted
            # recording; an empty file is removed.
            with contextlib.suppress(OSError):
                if self.path.stat().st_size == 0:
                    self.path.unlink()
            raise
        self._raw.close()

    def __enter__(self) -> BundleWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _bind(sig: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    out: dict[str, Any] = {}
    for name, value in bound.arguments.items():
        kind = sig.parameters[name].kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            for k, v in value.items():
                out[k] = canonical(v)
        elif kind is inspect.Parameter.VAR_POSITIONAL:
            out[name] = canonical(list(value))
        else:
            out[name] = canonical(value)
    return out


class Recorder:
    """Tees every coroutine-method call of ``inner`` (errors too) into a bundle.

    Works for any source object (metrics, Kubernetes, GPU): public ``async def`` methods
    are wrapped generically; other attributes pass through unchanged. ``close`` is not
    recorded.

    Args:
        inner: The live source.
        source_name: Its field name in :class:`cockpit.sources.base.Sources` (``metrics``,
            ``kube``, ``gpu``).
        writer: Where calls go.
    """

    def __init__(self, inner: Any, source_name: str, writer: BundleWriter) -> None:
        self._inner = inner
        self._source_name = source_name
        self._writer = writer
        writer.add_source(source_name, inner)

    @property
    def inner(self) -> Any:
        """The wrapped source."""
        return self._inner

    def __getattr__(self, attr: str) -> Any:
        value = getattr(self._inner, attr)
        if attr.startswith("_") or attr in NOT_RECORDED or not inspect.iscoroutinefunction(value):
            return value
        wrapped = self._wrap(attr, value)
        self.__dict__[attr] = wrapped
        return wrapped

    def _wrap(
        self, method: str, func: Callable[..., Awaitable[Any]]
    ) -> Callable[..., Awaitable[Any]]:
        sig = inspect.signature(func)
        source, writer = self._source_name, self._writer

        def tee(cargs: dict[str, Any], **outcome: Any) -> None:
            # The live call must never fail because the bundle cannot be written (disk
            # full, writer already closed): the loss is counted in ``writer.stats``.
            try:
                writer.add_method(source, method, sig)
                written = writer.write_call(source, method, cargs, **outcome)
            except (OSError, ValueError) as exc:
                writer.stats.lost[f"{source}.{method}"] = str(exc)
                written = "not_stored"
            tally = call_tally.get()
            if tally is not None:
                setattr(tally, written, getattr(tally, written) + 1)

        @functools.wraps(func)
        async def recorded(*args: Any, **kwargs: Any) -> Any:
            try:
                cargs = _bind(sig, args, kwargs)
            except TypeError:
                return await func(*args, **kwargs)  # wrong call: let the source complain
            tally = call_tally.get()
            if tally is not None:
                tally.started += 1
            try:
                result = await func(*args, **kwargs)
            except SourceError as exc:
                tee(cargs, failure=exc.failure)
                raise
            except Exception as exc:
                failure = SourceFailure(
                    source=source,
                    kind=ErrorKind.BAD_DATA,
                    message=f"{type(exc).__name__}: {exc}",
                    detail={"exception": type(exc).__name__},
                )
                tee(cargs, failure=failure)
                raise
            tee(cargs, result=result)
            return result

        return recorded


# -- reading ----------------------------------------------------------------------------


@dataclass
class _Call:
    source: str
    method: str
    args: dict[str, Any]
    lineno: int
    text: str
    _decoded: dict[str, Any] | None = None

    def record(self) -> dict[str, Any]:
        """The decoded line.

        Raises:
            BundleError: the line is damaged (not JSON, or not a call object).
        """
        if self._decoded is None:
            try:
                decoded = json.loads(self.text)
            except ValueError as exc:
                raise BundleError(f"line {self.lineno}: not JSON ({exc})") from exc
            if not isinstance(decoded, dict):
                raise BundleError(f"line {self.lineno}: not a call object")
            self._decoded = decoded
        return self._decoded

    def intact(self) -> dict[str, Any] | None:
        """The decoded line, or None when it is damaged."""
        try:
            return self.record()
        except BundleError:
            return None


_DECODER = json.JSONDecoder()
_WS = re.compile(r"[ \t\r]*")
_KEY_PREFIX = re.compile(r'\{[ \t\r]*"k"[ \t\r]*:')
"""A call line whose key comes first, in any JSON spacing."""
_KEY_ANYWHERE = re.compile(r'"k"[ \t\r]*:')
"""Where a damaged call line's key may still be found."""


def _parse_key(key: Any) -> tuple[str, str, dict[str, Any]] | None:
    """``(source, method, args)`` of a canonical call key, or None when it is not one."""
    if not isinstance(key, str):
        return None
    try:
        parsed = json.loads(key)
    except ValueError:
        return None
    if not isinstance(parsed, list) or len(parsed) != 3:
        return None
    source, method, args = parsed
    if not isinstance(source, str) or not isinstance(method, str) or not isinstance(args, dict):
        return None
    return source, method, args


def _key_at(line: str, pos: int) -> tuple[str, tuple[str, str, dict[str, Any]]] | None:
    """The key string starting at ``pos`` (after optional spaces) and its parts."""
    if line[pos : pos + 1] != '"':
        m = _WS.match(line, pos)
        pos = m.end() if m else pos
    try:
        key, _ = _DECODER.raw_decode(line, pos)
    except ValueError:
        return None
    parts = _parse_key(key)
    return (key, parts) if parts is not None else None


def _field_at(line: str, name: str) -> Any:
    """The value of the first ``"name":`` field in a damaged line (None when unreadable)."""
    m = re.search(rf'"{name}"[ \t\r]*:[ \t\r]*', line)
    if m is None:
        return None
    try:
        return _DECODER.raw_decode(line, m.end())[0]
    except ValueError:
        return None


def _salvage_key(line: str) -> tuple[str, tuple[str, str, dict[str, Any]]] | None:
    """The call key of a damaged line, from its key or else from its ``source``,
    ``method`` and ``args`` fields, when the damage spared them."""
    for m in _KEY_ANYWHERE.finditer(line):
        found = _key_at(line, m.end())
        if found is not None:
            return found
    source, method = _field_at(line, "source"), _field_at(line, "method")
    args = _field_at(line, "args")
    if isinstance(source, str) and isinstance(method, str) and isinstance(args, dict):
        return call_key(source, method, args), (source, method, args)
    return None


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"


def _lines_list(linenos: list[int]) -> str:
    """``line 4`` or ``lines 4, 11, …`` (the first ten)."""
    shown = ", ".join(str(n) for n in linenos[:10])
    more = ", …" if len(linenos) > 10 else ""
    return f"line {shown}" if len(linenos) == 1 else f"lines {shown}{more}"


MAX_BUNDLE_BYTES = 256 * 2**20
"""Most bytes a bundle may decompress to (the demo's 3 h of evidence is 6 MiB). A gzip
bomb or an endless stream stops here with :class:`BundleError` instead of filling memory."""
MAX_LINE_BYTES = 32 * 2**20
"""Longest line read (the demo's longest answer is 0.3 MiB); a longer one is skipped as
unreadable, its call fails in place."""
_CHUNK = 8192
"""Compressed bytes fed to zlib at a time: damage loses at most the text of one chunk."""


def _read_text(path: Path, max_bytes: int = MAX_BUNDLE_BYTES) -> tuple[str, list[str]]:
    """Decompress ``path`` as a stream, never holding more than ``max_bytes`` of text: a
    stream that ends early or is damaged mid-way yields every line before the damage
    (with the reason in the returned problems).

    Raises:
        BundleError: unreadable, empty, not gzip, damaged before any text, more than
            ``max_bytes`` decompressed (a bomb, ``/dev/zero``), or not UTF-8.
    """
    problems: list[str] = []
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below, read in chunks
    except OSError as exc:
        raise BundleError(f"cannot read bundle {path}: {exc.strerror or exc}") from exc
    with fh:
        try:
            first = fh.read(_CHUNK)
        except OSError as exc:
            raise BundleError(f"cannot read bundle {path}: {exc.strerror or exc}") from exc
        if not first:
            raise BundleError(f"{path} is empty: not an evidence bundle")
        if first[:2] != b"\x1f\x8b":
            raise BundleError(f"{path} is not gzip-compressed: not an evidence bundle")
        out = bytearray()
        d = zlib.decompressobj(wbits=31)
        pending = first
        while True:
            if not pending:
                pending = fh.read(_CHUNK)
                if not pending:
                    if not d.eof:
                        problems.append(
                            "the file ends early (recording interrupted?); kept every complete line"
                        )
                    break
            try:
                # At most one byte past the limit: a bomb never grows past it.
                out += d.decompress(pending, max_bytes + 1 - len(out))
            except zlib.error as exc:
                if not out:
                    raise BundleError(f"{path} is corrupt (gzip: {exc})") from exc
                problems.append(
                    f"corrupt data after {len(out)} bytes (gzip: {exc}); "
                    "kept every complete line before it"
                )
                break
            if len(out) > max_bytes:
                raise BundleError(
                    f"{path} decompresses to more than {max_bytes // 2**20} MiB, the limit "
                    "for an evidence bundle (a recording is a few MiB): not read"
                )
            pending = d.unconsumed_tail
            if d.eof:
                pending = d.unused_data + pending  # concatenated gzip members
                if pending or (pending := fh.read(_CHUNK)):
                    if pending[:2] != b"\x1f\x8b":
                        break  # trailing garbage after the last member
                    d = zlib.decompressobj(wbits=31)
                else:
                    break
    if problems:
        # Keep whole lines only: the text after the last newline was cut by the damage.
        cut = out.rfind(b"\n")
        del out[cut + 1 :]
    try:
        return out.decode("utf-8"), problems
    except UnicodeDecodeError as exc:
        raise BundleError(f"{path} is corrupt (not UTF-8 text: {exc})") from exc


class Replay:
    """An opened bundle: its header and one replay source per recorded source.

    Attributes:
        path: The file.
        meta: The header (with ``complete`` and ``problems`` filled in).
    """

    def __init__(self, path: Path, text: str, problems: list[str]) -> None:
        self.path = path
        self._calls: dict[str, list[_Call]] = {}
        self._by_method: dict[tuple[str, str], list[_Call]] = {}
        self._methods: dict[tuple[str, str], inspect.Signature] = {}
        self._source_attrs: dict[str, dict[str, str]] = {}
        self._source_class: dict[str, str] = {}
        self._unreadable: list[int] = []
        lines = text.split("\n")
        if text and not text.endswith("\n"):
            lines.pop()  # partial last line of an interrupted recording
        lines = [ln for ln in lines if ln]
        if not lines:
            raise BundleError(f"{path}: no header line")
        try:
            head = json.loads(lines[0])
        except (ValueError, RecursionError) as exc:
            raise BundleError(f"{path}: the header line is not JSON ({exc})") from exc
        if not isinstance(head, dict) or head.get("kind") != "header":
            raise BundleError(f"{path}: the first line is not a bundle header")
        try:
            version = int(head.get("format", 0))
        except (TypeError, ValueError):
            raise BundleError(f"{path}: invalid format version {head.get('format')!r}") from None
        if version > FORMAT_VERSION:
            raise BundleError(
                f"{path}: bundle format {head.get('format')} is newer than this cockpit "
                f"understands ({FORMAT_VERSION}); upgrade cockpit"
            )
        head.pop("kind", None)
        try:
            meta = BundleMeta.model_validate(head)
        except ValidationError as exc:
            raise BundleError(f"{path}: invalid header: {exc}") from exc
        interrupted = bool(problems)  # the file itself ends early or is cut
        complete = False
        damaged: list[int] = []  # call lines whose key survived: those calls fail in place
        unreadable: list[int] = []  # lines with nothing recoverable: skipped
        oversized: list[int] = []  # lines past MAX_LINE_BYTES: skipped unread
        for lineno, line in enumerate(lines[1:], start=2):
            if len(line) > MAX_LINE_BYTES:
                oversized.append(lineno)
                continue
            # Fast path: the writer puts the call key first, so the call is indexed
            # without decoding its result (decoded, and checked, on first use).
            if line.startswith('{"k":'):
                found = _key_at(line, 5)
            elif line.startswith("{") and (m := _KEY_PREFIX.match(line)):
                found = _key_at(line, m.end())
            else:
                found = None
            if found is not None:
                self._add_call(found, lineno, line)
                continue
            try:
                obj = json.loads(line)
            except (ValueError, RecursionError):  # RecursionError: nested past Python's stack
                obj = None
            if not isinstance(obj, dict):
                found = _salvage_key(line)
                if found is not None:
                    self._add_call(found, lineno, line)
                    damaged.append(lineno)
                else:
                    unreadable.append(lineno)
                continue
            if "k" in obj:
                key = obj["k"]
                parts = _parse_key(key)
                if parts is None:
                    src, meth, args = obj.get("source"), obj.get("method"), obj.get("args")
                    if isinstance(src, str) and isinstance(meth, str) and isinstance(args, dict):
                        key, parts = call_key(src, meth, args), (src, meth, args)
                if parts is None:
                    unreadable.append(lineno)
                else:
                    self._add_call((key, parts), lineno, line)
                continue
            kind = obj.get("kind")
            try:
                if kind == "source":
                    self._source_attrs[obj["source"]] = dict(obj.get("attrs") or {})
                    self._source_class[obj["source"]] = str(obj.get("class", ""))
                elif kind == "method":
                    self._methods[(obj["source"], obj["method"])] = _signature(obj["params"])
                elif kind == "end":
                    complete = True
                else:
                    problems.append(f"line {lineno}: unknown line kind {kind!r} skipped")
            except (KeyError, TypeError, ValueError):
                unreadable.append(lineno)
        self._unreadable = unreadable
        if oversized:
            problems.append(
                f"{_count(len(oversized), 'line')} longer than {MAX_LINE_BYTES // 2**20} MiB "
                f"({_lines_list(oversized)}) skipped unread"
            )
        if damaged:
            problems.append(
                f"{_count(len(damaged), 'damaged call line')} ({_lines_list(damaged)}): "
                f"replaying {'that call' if len(damaged) == 1 else 'those calls'} fails"
            )
        if unreadable:
            problems.append(
                f"{_count(len(unreadable), 'unreadable line')} skipped "
                f"({_lines_list(unreadable)}): a call recorded there is missing from the replay"
            )
        if not complete and not interrupted:
            problems.append("no end line (recording interrupted?); kept every complete line")
        self.meta = meta.model_copy(update={"complete": complete, "problems": problems})

    def _add_call(
        self, found: tuple[str, tuple[str, str, dict[str, Any]]], lineno: int, line: str
    ) -> None:
        key, (source, method, args) = found
        call = _Call(source, method, args, lineno, line)
        self._calls.setdefault(key, []).append(call)
        self._by_method.setdefault((source, method), []).append(call)

    def sources(self) -> list[str]:
        """Names of the recorded sources (``metrics``, ``kube``, ``gpu``, …)."""
        names = set(self._source_attrs) | {s for s, _ in self._by_method}
        return sorted(names)

    def source(self, name: str) -> ReplaySource:
        """A replay object answering the recorded source's coroutine methods."""
        return ReplaySource(self, name)

    @property
    def call_count(self) -> int:
        """Number of recorded calls."""
        return sum(len(v) for v in self._calls.values())

    def build_sources(self) -> Sources:
        """A :class:`cockpit.sources.base.Sources` with every recorded source replayed and a
        reason in ``missing`` for the others."""
        present = set(self.sources())
        srcs = Sources()
        for field_name in ("metrics", "kube", "gpu"):
            if field_name in present:
                setattr(srcs, field_name, self.source(field_name))
            else:
                srcs.set_missing(field_name, msg("source.missing.bundle", bundle=self.path.name))
        if "alerts" in present:
            # Alertmanager's answers; without them the alerts come from the metrics.
            srcs.alerts = self.source("alerts")
        return srcs

    # -- lookup ---------------------------------------------------------------------

    def _signature(self, source: str, method: str) -> inspect.Signature | None:
        sig = self._methods.get((source, method))
        if sig is None and source == "metrics":
            sig = _METRICS_SIGNATURES.get(method)
        return sig

    def answer(
        self, source: str, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        """Answer one call from the recording.

        Raises:
            SourceError: the recorded failure, or ``NOT_FOUND`` when the bundle has no
                answer.
        """
        sig = self._signature(source, method)
        if sig is not None:
            try:
                cargs = _bind(sig, args, kwargs)
            except TypeError as exc:
                raise SourceError.of(source, ErrorKind.BAD_QUERY, f"{method}: {exc}") from None
        else:
            cargs = {f"arg{i}": canonical(a) for i, a in enumerate(args)}
            cargs.update({k: canonical(v) for k, v in kwargs.items()})
        calls = self._calls.get(call_key(source, method, cargs))
        if calls:
            return self._result(calls[-1])
        derived = self._derive(source, method, cargs)
        if derived is not _MISSING:
            return derived
        if method == "pod_log" and (lacking := self._pod_log_lacks(source, cargs)):
            raise SourceError.of(
                self._source_attrs.get(source, {}).get("name", source),
                ErrorKind.NOT_FOUND,
                lacking,
                hint_key="hint.bundle.not_recorded",
                bundle=str(self.path.name),
            )
        shown = ", ".join(f"{k}={_show(v)}" for k, v in cargs.items())
        note = ""
        if self._unreadable:
            note = (
                f" ({_count(len(self._unreadable), 'unreadable line')} skipped, "
                f"{_lines_list(self._unreadable)}: it may have been recorded there)"
            )
        raise SourceError.of(
            self._source_attrs.get(source, {}).get("name", source),
            ErrorKind.NOT_FOUND,
            f"not in this bundle: {method}({shown}){note}",
            hint_key="hint.bundle.not_recorded",
            bundle=str(self.path.name),
        )

    def _result(self, call: _Call) -> Any:
        rec = call.record()
        if not rec.get("ok"):
            try:
                failure = SourceFailure.model_validate(rec.get("failure"))
            except ValidationError as exc:
                raise BundleError(f"line {call.lineno}: invalid recorded failure: {exc}") from exc
            raise SourceError(failure)
        return decode_result(rec)

    def _pod_logs(self, source: str, cargs: dict[str, Any]) -> list[tuple[_Call, PodLog]]:
        """Recorded answers for the log of the pod and container ``cargs`` ask for (same
        instance, with timestamps), oldest first."""
        same = ("name", "namespace", "container", "previous", "timestamps")
        out = []
        for c in self._by_method.get((source, "pod_log"), []):
            if any(c.args.get(k) != cargs.get(k) for k in same) or not cargs.get("timestamps"):
                continue
            if not (c.intact() or {}).get("ok"):
                continue
            log = self._result(c)
            if isinstance(log, PodLog):
                out.append((c, log))
        return out

    def _derive_pod_log(self, source: str, cargs: dict[str, Any]) -> Any:
        """A pod's log for a window the recording did not ask for, cut from a recorded
        read of the same container that holds all of it: read from no later than the
        window's start, not cut by ``limitBytes``, and not cut by ``tailLines`` after it
        (lines whose kubelet timestamp is at or after ``since_time``, then the tail and
        the byte limit asked for, as the API server does)."""
        since = _dt(cargs.get("since_time"))
        for c, log in reversed(self._pod_logs(source, cargs)):
            if _pod_log_from(c, log) is None or not _pod_log_covers(c, log, since):
                continue
            lines = _log_lines_since(log.text, since)
            tail = cargs.get("tail_lines")
            if isinstance(tail, int):
                lines = lines[-tail:] if tail > 0 else []
            data = "".join(lines).encode("utf-8")
            limit = cargs.get("limit_bytes")
            truncated = isinstance(limit, int) and len(data) >= limit
            if isinstance(limit, int):
                data = data[:limit]
            return PodLog(
                namespace=log.namespace,
                pod=log.pod,
                container=log.container,
                previous=log.previous,
                tail_lines=tail if isinstance(tail, int) else None,
                since_time=since,
                limit_bytes=limit if isinstance(limit, int) else None,
                truncated=truncated,
                text=data.decode("utf-8", "ignore"),
            )
        return _MISSING

    def _pod_log_lacks(self, source: str, cargs: dict[str, Any]) -> str:
        """Why a pod's log for ``cargs``'s window cannot be answered when the bundle holds
        other reads of it (``""`` when it holds none)."""
        held = self._pod_logs(source, cargs)
        if not held:
            return ""
        since = _dt(cargs.get("since_time"))
        asked = f"since {since.isoformat()}" if since is not None else "from its start"
        which = "previous" if cargs.get("previous") else "current"
        froms = []
        for c, log in held:
            start = _pod_log_from(c, log)
            if start is None:
                froms.append("a read cut by its byte limit")
            else:
                froms.append(f"from {start.isoformat()}" if start != _EPOCH else "whole")
        return (
            f"the bundle holds the {which} log of {cargs.get('namespace')}/{cargs.get('name')} "
            f"only {', '.join(dict.fromkeys(froms))}; the replay cannot answer it {asked}"
        )

    def _derive(self, source: str, method: str, cargs: dict[str, Any]) -> Any:
        if method == "pod_log":
            return self._derive_pod_log(source, cargs)
        if method == "metric_names":
            candidates = [
                c for c in self._by_method.get((source, method), []) if (c.intact() or {}).get("ok")
            ]
            at = _dt(cargs.get("at"))
            if not candidates:
                return _MISSING
            if at is None:
                return self._result(candidates[-1])
            target = to_epoch(at)

            def distance(c: _Call) -> float:
                rec_at = _dt(c.args.get("at"))
                return abs(to_epoch(rec_at) - target) if rec_at is not None else math.inf

            return self._result(min(candidates, key=distance))
        if method == "samples":
            return self._derive_samples(source, cargs)
        if method not in ("instant", "range"):
            return _MISSING
        query = cargs.get("query")
        if method == "instant":
            at = _dt(cargs.get("at"))
            if at is None:
                return _MISSING
            lo = hi = to_epoch(at)
            grid = [lo]
        else:
            start, end = _dt(cargs.get("start")), _dt(cargs.get("end"))
            step = cargs.get("step_s")
            if start is None or end is None or not isinstance(step, (int, float)) or step <= 0:
                return _MISSING
            lo, hi = to_epoch(start), to_epoch(end)
            n = math.floor((hi - lo) / step + 1e-9)
            grid = [lo + i * step for i in range(n + 1)]
        best: _Call | None = None
        best_step: float = math.inf
        for c in self._by_method.get((source, "range"), []):
            if c.args.get("query") != query:
                continue
            rs, re_ = _dt(c.args.get("start")), _dt(c.args.get("end"))
            rstep = c.args.get("step_s")
            if rs is None or re_ is None or not isinstance(rstep, (int, float)):
                continue
            covers = to_epoch(rs) - 1e-6 <= lo and hi <= to_epoch(re_) + 1e-6
            if covers and rstep <= best_step and (c.intact() or {}).get("ok"):
                best, best_step = c, rstep  # finest step; newest among equals
        if best is None:
            return _MISSING
        series: list[Series] = self._result(best)
        if method == "instant":
            out_i = []
            for s in series:
                v = _at_or_before(s.samples, grid[0])
                if v is not None:
                    out_i.append(InstantVector(labels=dict(s.labels), t=grid[0], v=v))
            return out_i
        out_r = []
        for s in series:
            samples = []
            for t in grid:
                v = _at_or_before(s.samples, t)
                if v is not None:
                    samples.append(Sample(t=t, v=v))
            if samples:
                out_r.append(Series(labels=dict(s.labels), samples=samples))
        return out_r

    def _derive_samples(self, source: str, cargs: dict[str, Any]) -> Any:
        """The raw samples of ``selector[Ns]`` at ``at``, cut from a recorded raw read of
        the same selector that covers ``[at - N, at]`` (the newest among those), the
        samples at both ends included as Prometheus 2.x includes them."""
        asked = _RANGE_SELECTOR.fullmatch(str(cargs.get("query", "")))
        at = _dt(cargs.get("at"))
        if asked is None or at is None:
            return _MISSING
        hi = to_epoch(at)
        lo = hi - int(asked.group(2))
        for c in reversed(self._by_method.get((source, "samples"), [])):
            held = _RANGE_SELECTOR.fullmatch(str(c.args.get("query", "")))
            rec_at = _dt(c.args.get("at"))
            if held is None or rec_at is None or held.group(1) != asked.group(1):
                continue
            r_hi = to_epoch(rec_at)
            if not (r_hi >= hi - 1e-6 and r_hi - int(held.group(2)) <= lo + 1e-6):
                continue
            if not (c.intact() or {}).get("ok"):
                continue
            series: list[Series] = self._result(c)
            out = []
            for s in series:
                pts = [x for x in s.samples if lo - 5e-4 <= x.t <= hi + 5e-4]
                if pts:
                    out.append(Series.model_construct(labels=dict(s.labels), samples=pts))
            return out
        return _MISSING


_MISSING = object()
_RANGE_SELECTOR = re.compile(r"(.+)\[(\d{1,9})s\]", re.DOTALL)
"""``selector[Ns]``: the raw reads the history asks for (``samples``)."""


def _at_or_before(samples: list[Sample], t: float) -> float | None:
    """Value of the newest sample at or before ``t`` within the lookback delta."""
    lo, hi = 0, len(samples)
    while lo < hi:
        mid = (lo + hi) // 2
        if samples[mid].t <= t + 1e-6:
            lo = mid + 1
        else:
            hi = mid
    if lo == 0:
        return None
    s = samples[lo - 1]
    return s.v if t - s.t <= LOOKBACK_S else None


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_KUBELET_STAMP = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z ")


def _stamp_of(line: str) -> datetime | None:
    m = _KUBELET_STAMP.match(line)
    if m is None:
        return None
    try:
        at = datetime.fromisoformat(m.group(1)).replace(tzinfo=UTC)
    except ValueError:
        return None
    return at.replace(microsecond=int((m.group(2) or "").ljust(6, "0")[:6]))


def _log_lines_since(text: str, since: datetime | None) -> list[str]:
    """The lines of ``text`` whose kubelet timestamp is at or after ``since`` (a line
    without one follows the line before it)."""
    lines = text.splitlines(keepends=True)
    if since is None:
        return lines
    out, keep = [], True
    for line in lines:
        at = _stamp_of(line)
        if at is not None:
            keep = at >= since
        if keep:
            out.append(line)
    return out


def _pod_log_from(call: _Call, log: PodLog) -> datetime | None:
    """Since when a recorded read holds every line of the log (:data:`_EPOCH`: the whole
    log; ``None``: it holds no complete span, cut by its byte limit). A read cut by its
    ``tailLines`` holds every line after its first line's time."""
    if log.truncated:
        return None
    tail = call.args.get("tail_lines")
    lines = log.text.splitlines()
    if isinstance(tail, int) and len(lines) >= tail:
        first = _stamp_of(lines[0] + " ") if lines else None
        # Lines of that same instant may have been cut: complete strictly after it.
        return first + timedelta(microseconds=1) if first is not None else None
    return _dt(call.args.get("since_time")) or _EPOCH


def _pod_log_covers(call: _Call, log: PodLog, since: datetime | None) -> bool:
    """Whether the recorded read holds every line a read ``since`` would return."""
    start = _pod_log_from(call, log)
    if start is None:
        return False
    return start == _EPOCH if since is None else since >= start


def _dt(value: Any) -> datetime | None:
    if isinstance(value, dict) and "$dt" in value:
        try:
            return _utc(datetime.fromisoformat(str(value["$dt"])))
        except ValueError:
            return None
    return None


def _show(value: Any) -> str:
    dt = _dt(value)
    if dt is not None:
        return dt.isoformat()
    text = json.dumps(value, ensure_ascii=False, allow_nan=True)
    return text if len(text) <= 200 else text[:197] + "…"


_PARAM_KINDS = {k.name: k for k in inspect._ParameterKind}


def _signature(params: Iterable[dict[str, Any]]) -> inspect.Signature:
    out = []
    for p in params:
        kind = _PARAM_KINDS.get(str(p.get("kind")), inspect.Parameter.POSITIONAL_OR_KEYWORD)
        default = p.get("default", inspect.Parameter.empty)
        if isinstance(default, dict) and "$dt" in default:
            default = _dt(default)
        out.append(inspect.Parameter(str(p["name"]), kind, default=default))
    return inspect.Signature(out)


def _metrics_signatures() -> dict[str, inspect.Signature]:
    P = inspect.Parameter
    pk = P.POSITIONAL_OR_KEYWORD
    return {
        "instant": inspect.Signature([P("query", pk), P("at", pk)]),
        "range": inspect.Signature([P("query", pk), P("start", pk), P("end", pk), P("step_s", pk)]),
        "samples": inspect.Signature([P("query", pk), P("at", pk)]),
        "metric_names": inspect.Signature([P("at", pk)]),
    }


_METRICS_SIGNATURES = _metrics_signatures()
"""Signatures of the metrics protocol, used when a bundle never recorded a method."""


class ReplaySource:
    """Answers a recorded source's coroutine methods from the bundle.

    Any public attribute is an ``async`` callable (so a panel's call to a method the
    recording never made raises a classified ``NOT_FOUND`` in place rather than crashing);
    ``name`` is the live source's ``name``; ``close`` does nothing.
    """

    def __init__(self, replay: Replay, source: str) -> None:
        self._replay = replay
        self._source = source
        self.name = replay._source_attrs.get(source, {}).get("name", source)
        self.recorded_class = replay._source_class.get(source, "")

    async def close(self) -> None:
        """Nothing to release."""

    def __getattr__(self, attr: str) -> Callable[..., Awaitable[Any]]:
        if attr.startswith("_"):
            raise AttributeError(attr)
        replay, source = self._replay, self._source

        async def replayed(*args: Any, **kwargs: Any) -> Any:
            try:
                return replay.answer(source, attr, args, kwargs)
            except BundleError as exc:
                raise SourceError.of(
                    self.name,
                    ErrorKind.BAD_DATA,
                    f"damaged evidence bundle: {exc}",
                    hint_key="hint.bundle.damaged",
                    bundle=replay.path.name,
                ) from exc

        replayed.__name__ = attr
        self.__dict__[attr] = replayed
        return replayed


def open_replay(path: str | os.PathLike[str]) -> Replay:
    """Open an evidence bundle for replay (offline; imports only cockpit model classes).

    A recording interrupted by a crash opens with ``meta.complete`` False and the reason in
    ``meta.problems``; every complete line before the interruption is answered.

    Raises:
        BundleError: not a bundle, corrupt before the header, a damaged header, or a
            newer format version (a damaged later line fails only its own call).
    """
    p = Path(path)
    text, problems = _read_text(p)
    return Replay(p, text, problems)
