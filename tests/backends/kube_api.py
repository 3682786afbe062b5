"""A local Kubernetes API server for the suite (and the benchmark).

A stdlib ``ThreadingHTTPServer`` serving schema-valid objects from fixtures, good enough
for the official ``kubernetes`` client (sync) and the installed ``kubectl`` (get,
describe, logs). One server holds several clusters, each under ``/clusters/<name>`` (a
kubeconfig ``server:`` URL may carry a path prefix), so every scenario gets its own
cluster without another port.

What it implements:
- discovery (``/version``, ``/api``, ``/apis``, ``/api/v1``, ``/apis/<group>/<version>``);
- get and list for core, apps, events, scheduling, Volcano and Kueue resources, with
  ``fieldSelector`` (any dotted path, ``=``/``==``/``!=``), ``labelSelector`` (equality,
  set-based, existence), ``limit``/``continue`` pagination;
- ``meta.k8s.io/v1 Table`` answers for ``kubectl get``;
- pod logs (``container``, ``previous``, ``tailLines``, ``timestamps``, ``sinceTime``,
  ``sinceSeconds``, ``limitBytes`` applied in the kubelet's order);
- ``SelfSubjectAccessReview`` POST answered from configured rules (allowed by default);
- a request log, and fault injection per path (status, delay, times, truncated JSON, a 403
  with an RBAC ``Status`` message).

List pages are serialised once per (path, selectors) and sliced as bytes, so the server
is not the bottleneck of the 50,000-pod benchmark.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pytest


@dataclass(frozen=True)
class ResourceType:
    """One served resource (an ``APIResourceList`` entry)."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    short: tuple[str, ...] = ()

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def prefix(self) -> str:
        return f"/apis/{self.group}/{self.version}" if self.group else "/api/v1"


RESOURCES: tuple[ResourceType, ...] = (
    ResourceType("", "v1", "pods", "Pod", True, ("po",)),
    ResourceType("", "v1", "nodes", "Node", False, ("no",)),
    ResourceType("", "v1", "events", "Event", True, ("ev",)),
    ResourceType("", "v1", "namespaces", "Namespace", False, ("ns",)),
    ResourceType("", "v1", "configmaps", "ConfigMap", True, ("cm",)),
    ResourceType("", "v1", "secrets", "Secret", True),
    ResourceType("", "v1", "resourcequotas", "ResourceQuota", True, ("quota",)),
    ResourceType("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, ("pvc",)),
    ResourceType("apps", "v1", "deployments", "Deployment", True, ("deploy",)),
    ResourceType("apps", "v1", "replicasets", "ReplicaSet", True, ("rs",)),
    ResourceType("apps", "v1", "statefulsets", "StatefulSet", True, ("sts",)),
    ResourceType("apps", "v1", "daemonsets", "DaemonSet", True, ("ds",)),
    ResourceType("apps", "v1", "controllerrevisions", "ControllerRevision", True),
    ResourceType("events.k8s.io", "v1", "events", "Event", True, ("ev",)),
    ResourceType("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, ("pc",)),
    ResourceType("scheduling.volcano.sh", "v1beta1", "podgroups", "PodGroup", True, ("pg",)),
    ResourceType("kueue.x-k8s.io", "v1beta1", "workloads", "Workload", True, ("wl",)),
)
_BY_PATH = {(r.prefix, r.plural): r for r in RESOURCES}
_READ_VERBS = ["get", "list", "watch"]
SSAR_PATH = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"


def _rfc3339(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- selectors ---------------------------------------------------------------------------
def _dig(obj: Any, path: str) -> str:
    cur = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(part)
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


def field_matcher(selector: str) -> Any:
    """A predicate for a ``fieldSelector`` (``a.b=c,d!=e``); ``None`` for an empty one."""
    terms: list[tuple[str, str, bool]] = []
    for raw in (s.strip() for s in selector.split(",")):
        if not raw:
            continue
        if "!=" in raw:
            k, v = raw.split("!=", 1)
            terms.append((k.strip(), v.strip(), False))
        else:
            k, v = raw.split("==", 1) if "==" in raw else raw.split("=", 1)
            terms.append((k.strip(), v.strip(), True))
    if not terms:
        return None
    return lambda obj: all((_dig(obj, k) == v) is eq for k, v, eq in terms)


_SET_RE = re.compile(r"^\s*([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")


def label_matcher(selector: str) -> Any:
    """A predicate for a ``labelSelector`` (equality, ``in``/``notin``, ``k``, ``!k``)."""
    parts: list[str] = []
    depth, cur = 0, ""
    for ch in selector:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    tests: list[Any] = []
    for raw in (p.strip() for p in parts):
        if not raw:
            continue
        m = _SET_RE.match(raw)
        if m:
            key, op, vals = m.group(1), m.group(2), {v.strip() for v in m.group(3).split(",")}
            if op == "in":
                tests.append(lambda lb, k=key, vs=vals: lb.get(k) in vs)
            else:
                tests.append(lambda lb, k=key, vs=vals: lb.get(k) not in vs)
        elif "!=" in raw:
            k, v = (s.strip() for s in raw.split("!=", 1))
            tests.append(lambda lb, k=k, v=v: lb.get(k) != v)
        elif "=" in raw:
            k, v = (s.strip() for s in (raw.split("==", 1) if "==" in raw else raw.split("=", 1)))
            tests.append(lambda lb, k=k, v=v: lb.get(k) == v)
        elif raw.startswith("!"):
            absent = raw[1:].strip()
            tests.append(lambda lb, k=absent: k not in lb)
        else:
            tests.append(lambda lb, k=raw: k in lb)
    if not tests:
        return None
    return lambda obj: all(t((obj.get("metadata") or {}).get("labels") or {}) for t in tests)


# -- state -------------------------------------------------------------------------------
@dataclass
class Fault:
    """An injected failure for requests whose path matches ``path`` (a regex searched in
    the full request path, ``/clusters/<name>/api/v1/...``, so a fault hits one cluster).

    Attributes:
        status: HTTP status to answer (0 = answer normally, after ``delay``).
        delay: Seconds to wait before answering.
        times: How many requests it applies to (``None`` = all).
        truncate: Answer 200 with the JSON body cut in half.
        rbac: For a 403, the ``(verb, resource)`` refused; builds the apiserver's message.
    """

    path: str
    status: int = 0
    delay: float = 0.0
    times: int | None = None
    truncate: bool = False
    rbac: tuple[str, str] | None = None
    hits: int = 0


@dataclass
class Cluster:
    """Objects of one cluster, keyed by resource type, plus pod logs and RBAC rules."""

    name: str
    objects: dict[ResourceType, list[dict[str, Any]]] = field(default_factory=dict)
    logs: dict[tuple[str, str, str, bool], str] = field(default_factory=dict)
    denied: set[tuple[str, str]] = field(default_factory=set)
    """``(verb, resource)`` pairs a SelfSubjectAccessReview answers as denied."""
    _cache: dict[tuple[Any, ...], list[bytes]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, *objs: dict[str, Any]) -> None:
        """Add objects (any kind served); keeps each list sorted by namespace/name."""
        for obj in objs:
            rt = kind_to_type(obj["apiVersion"], obj["kind"])
            meta = obj.setdefault("metadata", {})
            meta.setdefault("uid", f"uid-{rt.plural}-{meta.get('namespace', '')}-{meta['name']}")
            meta.setdefault("resourceVersion", "1")
            meta.setdefault("creationTimestamp", "2026-01-01T00:00:00Z")
            self.objects.setdefault(rt, []).append(obj)
            if rt.kind == "Event" and rt.group == "":
                # The same event as events.k8s.io/v1 sees it (kubectl get events reads that).
                self.objects.setdefault(_EVENTS_V1, []).append(_to_events_v1(obj))
        for lst in self.objects.values():
            lst.sort(key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))
        with self._lock:
            self._cache.clear()

    def add_log(
        self, namespace: str, pod: str, text: str, container: str = "", previous: bool = False
    ) -> None:
        """Register a pod's log (``container`` "" = the default container)."""
        self.logs[(namespace, pod, container, previous)] = text

    def items(self, rt: ResourceType, namespace: str | None, fsel: str, lsel: str) -> list[bytes]:
        """Serialised objects that match, cached per query."""
        key = (rt, namespace, fsel, lsel)
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None:
            return hit
        fm, lm = field_matcher(fsel), label_matcher(lsel)
        out = []
        for obj in self.objects.get(rt, []):
            if namespace is not None and obj["metadata"].get("namespace") != namespace:
                continue
            if fm is not None and not fm(obj):
                continue
            if lm is not None and not lm(obj):
                continue
            out.append(json.dumps(obj, separators=(",", ":")).encode())
        with self._lock:
            self._cache[key] = out
        return out

    def find(self, rt: ResourceType, namespace: str | None, name: str) -> dict[str, Any] | None:
        for obj in self.objects.get(rt, []):
            meta = obj["metadata"]
            if meta["name"] == name and (namespace is None or meta.get("namespace") == namespace):
                return obj
        return None


_EVENTS_V1 = next(r for r in RESOURCES if r.group == "events.k8s.io")


def _to_events_v1(ev: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": ev["metadata"],
        "eventTime": ev.get("eventTime"),
        "regarding": ev.get("involvedObject", {}),
        "reason": ev.get("reason", ""),
        "note": ev.get("message", ""),
        "type": ev.get("type", ""),
        "reportingController": ev.get("reportingComponent", ""),
        "reportingInstance": ev.get("reportingInstance", ""),
        "deprecatedCount": ev.get("count", 1),
        "deprecatedFirstTimestamp": ev.get("firstTimestamp"),
        "deprecatedLastTimestamp": ev.get("lastTimestamp"),
        "deprecatedSource": ev.get("source", {}),
    }


def kind_to_type(api_version: str, kind: str) -> ResourceType:
    for rt in RESOURCES:
        if rt.group_version == api_version and rt.kind == kind:
            return rt
    raise KeyError(f"{api_version} {kind} is not served")


@dataclass
class RequestRecord:
    """One request the server received."""

    method: str
    cluster: str
    path: str
    query: dict[str, list[str]]
    status: int


# -- the server --------------------------------------------------------------------------
class KubeApiServer:
    """The server: clusters, the request log and the faults.

    Use :meth:`start` / :meth:`stop`, or the ``kube_api`` fixture.
    """

    def __init__(self) -> None:
        self.clusters: dict[str, Cluster] = {}
        self.requests: list[RequestRecord] = []
        self.faults: list[Fault] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.port = 0

    # lifecycle
    def start(self) -> KubeApiServer:
        server = self
        handler = type("Handler", (_Handler,), {"server_ref": server})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    # configuration
    def cluster(self, name: str) -> Cluster:
        """The cluster called ``name`` (created empty on first use)."""
        with self._lock:
            if name not in self.clusters:
                self.clusters[name] = Cluster(name)
            return self.clusters[name]

    def url(self, cluster: str) -> str:
        return f"http://127.0.0.1:{self.port}/clusters/{cluster}"

    def inject(self, fault: Fault) -> Fault:
        """Add a fault; remove it with :meth:`clear_faults` or let ``times`` run out."""
        with self._lock:
            self.faults.append(fault)
        return fault

    def clear_faults(self) -> None:
        with self._lock:
            self.faults.clear()

    def write_kubeconfig(
        self,
        path: Path,
        clusters: list[str],
        current: str | None = None,
        namespace: str = "default",
    ) -> Path:
        """A kubeconfig with one context per cluster (context name = cluster name)."""
        doc = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": c, "cluster": {"server": self.url(c)}} for c in clusters],
            "users": [{"name": "tester", "user": {"token": "test-token"}}],
            "contexts": [
                {"name": c, "context": {"cluster": c, "user": "tester", "namespace": namespace}}
                for c in clusters
            ],
            "current-context": current or clusters[0],
            "preferences": {},
        }
        path.write_text(json.dumps(doc, indent=1))
        return path

    def requests_for(self, cluster: str) -> list[RequestRecord]:
        with self._lock:
            return [r for r in self.requests if r.cluster == cluster]

    def _record(self, rec: RequestRecord) -> None:
        with self._lock:
            self.requests.append(rec)

    def _fault_for(self, path: str) -> Fault | None:
        with self._lock:
            for f in self.faults:
                if re.search(f.path, path) and (f.times is None or f.hits < f.times):
                    f.hits += 1
                    return f
        return None


def _status_body(
    code: int, reason: str, message: str, details: dict[str, Any] | None = None
) -> bytes:
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details:
        body["details"] = details
    return json.dumps(body).encode()


_REASONS = {
    400: "BadRequest",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    410: "Expired",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


class _Handler(BaseHTTPRequestHandler):
    server_ref: KubeApiServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    # plumbing
    def _send(self, code: int, body: bytes, ctype: str = "application/json") -> None:
        self._status = code
        # Log before the answer leaves: a client that has read it may look at the log at
        # once, and must find its request there.
        self._log_request()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _log_request(self) -> None:
        if self._logged:
            return
        self._logged = True
        method, cluster_name, path, query = self._req
        self.server_ref._record(RequestRecord(method, cluster_name, path, query, self._status))

    def _send_chunks(self, code: int, parts: Iterator[bytes]) -> None:
        data = b"".join(parts)
        self._send(code, data)

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def _dispatch(self, method: str) -> None:
        srv = self.server_ref
        split = urlsplit(self.path)
        query = parse_qs(split.query)
        path = full_path = unquote(split.path)
        cluster_name = ""
        m = re.match(r"^/clusters/([^/]+)(/.*)?$", path)
        if m:
            cluster_name, path = m.group(1), m.group(2) or "/"
        self._status = 0
        self._logged = False
        self._req = (method, cluster_name, path, query)
        body_in = b""
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            body_in = self.rfile.read(length)
        try:
            fault = srv._fault_for(full_path)
            if fault is not None and fault.delay:
                time.sleep(fault.delay)
            if fault is not None and fault.status:
                self._fail(fault, path)
            else:
                self._serve(method, cluster_name, path, query, body_in, fault)
        except (BrokenPipeError, ConnectionResetError):
            self._status = 499
        finally:
            self._log_request()  # when no answer was sent (broken pipe, hang-up)

    def _fail(self, fault: Fault, path: str) -> None:
        code = fault.status
        if code == 403:
            verb, resource = fault.rbac or ("list", _guess_resource(path))
            ns = re.search(r"/namespaces/([^/]+)/", path)
            group = ""
            gm = re.match(r"^/apis/([^/]+)/", path)
            if gm:
                group = gm.group(1)
            where = f' in the namespace "{ns.group(1)}"' if ns else " at the cluster scope"
            msg = (
                f'{resource} is forbidden: User "system:serviceaccount:llm:oncall" cannot '
                f'{verb} resource "{resource}" in API group "{group}"{where}'
            )
            self._send(403, _status_body(403, "Forbidden", msg, {"kind": resource}))
            return
        reason = _REASONS.get(code, "InternalError")
        self._send(code, _status_body(code, reason, f"injected failure: HTTP {code}"))

    def _serve(
        self,
        method: str,
        cluster_name: str,
        path: str,
        query: dict[str, list[str]],
        body_in: bytes,
        fault: Fault | None,
    ) -> None:
        srv = self.server_ref
        if method == "POST" and path == SSAR_PATH:
            self._ssar(srv.cluster(cluster_name), body_in)
            return
        if method != "GET":
            self._send(405, _status_body(405, "MethodNotAllowed", f"{method} is not allowed here"))
            return
        disc = _discovery(path)
        if disc is not None:
            self._send(200, json.dumps(disc).encode())
            return
        cluster = srv.clusters.get(cluster_name)
        if cluster is None:
            self._send(404, _status_body(404, "NotFound", f"no cluster {cluster_name!r}"))
            return
        route = _route(path)
        if route is None:
            self._send(404, _status_body(404, "NotFound", f"the server could not find {path}"))
            return
        rt, ns, name, sub = route
        q = {k: v[-1] for k, v in query.items()}
        if q.get("watch") in ("true", "True", "1"):
            # Watches end at once (an empty stream): nothing changes in fixtures.
            self._send(200, b"", "application/json;stream=watch")
            return
        if name is None:
            body = self._list(cluster, rt, ns, q)
        elif sub == "log":
            self._log(cluster, ns or "", name, q)
            return
        else:
            obj = cluster.find(rt, ns, name)
            if obj is None:
                self._send(
                    404,
                    _status_body(
                        404,
                        "NotFound",
                        f'{rt.plural} "{name}" not found',
                        {"name": name, "kind": rt.plural},
                    ),
                )
                return
            if "as=Table" in (self.headers.get("Accept") or ""):
                body = json.dumps(_table(rt, [obj], q.get("includeObject") == "Object")).encode()
            else:
                body = json.dumps(obj).encode()
        if fault is not None and fault.truncate:
            body = body[: max(1, len(body) // 2)]
        self._send(200, body)

    def _list(self, cluster: Cluster, rt: ResourceType, ns: str | None, q: dict[str, str]) -> bytes:
        items = cluster.items(rt, ns, q.get("fieldSelector", ""), q.get("labelSelector", ""))
        start = 0
        cont = q.get("continue", "")
        if cont:
            start = int(json.loads(base64.urlsafe_b64decode(cont.encode()))["start"])
        limit = int(q.get("limit") or 0)
        end = len(items) if limit <= 0 else min(len(items), start + limit)
        meta: dict[str, Any] = {"resourceVersion": "1"}
        if end < len(items):
            meta["continue"] = base64.urlsafe_b64encode(
                json.dumps({"start": end}).encode()
            ).decode()
            meta["remainingItemCount"] = len(items) - end
        if "as=Table" in (self.headers.get("Accept") or ""):
            objs = [json.loads(b) for b in items[start:end]]
            table = _table(rt, objs, q.get("includeObject") == "Object")
            table["metadata"] = meta
            return json.dumps(table).encode()
        head = json.dumps(
            {"kind": f"{rt.kind}List", "apiVersion": rt.group_version, "metadata": meta}
        ).encode()
        return head[:-1] + b',"items":[' + b",".join(items[start:end]) + b"]}"

    def _log(self, cluster: Cluster, ns: str, pod: str, q: dict[str, str]) -> None:
        container = q.get("container", "")
        previous = q.get("previous") in ("true", "True", "1")
        podobj = cluster.find(_BY_PATH[("/api/v1", "pods")], ns, pod)
        if podobj is None:
            self._send(404, _status_body(404, "NotFound", f'pods "{pod}" not found'))
            return
        text = cluster.logs.get((ns, pod, container, previous))
        if text is None and container:
            first = (podobj.get("spec", {}).get("containers") or [{}])[0].get("name")
            if container == first:
                text = cluster.logs.get((ns, pod, "", previous))
        if text is None:
            if previous:
                msg = f'previous terminated container "{container or "main"}" in pod "{pod}" not found'
                self._send(400, _status_body(400, "BadRequest", msg))
                return
            text = ""
        since = _since_of(q)
        if since is not None:
            text = "".join(_lines_since(text, since))
        if q.get("timestamps") not in ("true", "True", "1"):
            text = _TS_PREFIX.sub("", text)
        tail = q.get("tailLines")
        if tail:
            lines = text.splitlines(keepends=True)
            text = "".join(lines[-int(tail) :]) if int(tail) > 0 else ""
        body = text.encode()
        limit = q.get("limitBytes")
        if limit:
            body = body[: int(limit)]
        self._send(200, body, "text/plain")

    def _ssar(self, cluster: Cluster, body_in: bytes) -> None:
        try:
            review = json.loads(body_in or b"{}")
            attrs = review["spec"]["resourceAttributes"]
        except (ValueError, KeyError):
            self._send(400, _status_body(400, "BadRequest", "not a SelfSubjectAccessReview"))
            return
        verb, resource = attrs.get("verb", ""), attrs.get("resource", "")
        sub = attrs.get("subresource", "")
        key = f"{resource}/{sub}" if sub else resource
        denied = (verb, key) in cluster.denied or ("*", key) in cluster.denied
        review["status"] = {"allowed": not denied}
        if denied:
            review["status"]["reason"] = "no RBAC policy matched"
        review.setdefault("apiVersion", "authorization.k8s.io/v1")
        review.setdefault("kind", "SelfSubjectAccessReview")
        review.setdefault("metadata", {})
        self._send(201, json.dumps(review).encode())


_TS_PREFIX = re.compile(r"^\d{4}-\d{2}-\d{2}T[\d:.]+Z ", re.MULTILINE)
"""Fixture logs carry kubelet-style timestamps; they are sent only with ``timestamps=true``."""


def _since_of(q: dict[str, str]) -> float | None:
    """``sinceTime`` (RFC 3339) or ``sinceSeconds`` (before now) as Unix seconds."""
    if q.get("sinceTime"):
        return datetime.fromisoformat(q["sinceTime"].replace("Z", "+00:00")).timestamp()
    if q.get("sinceSeconds"):
        return time.time() - int(q["sinceSeconds"])
    return None


def _lines_since(text: str, since: float) -> Iterator[str]:
    """The lines of ``text`` whose kubelet timestamp is at or after ``since`` (a line
    without one follows the line before it, as a continuation of a multi-line entry)."""
    keep = True
    for line in text.splitlines(keepends=True):
        m = _TS_PREFIX.match(line)
        if m is not None:
            stamp = m.group().strip().replace("Z", "+00:00")
            keep = datetime.fromisoformat(stamp).timestamp() >= since
        if keep:
            yield line


def _guess_resource(path: str) -> str:
    parts = [p for p in path.split("/") if p]
    for p in reversed(parts):
        if any(r.plural == p for r in RESOURCES):
            return p
    return parts[-1] if parts else ""


def _route(path: str) -> tuple[ResourceType, str | None, str | None, str | None] | None:
    m = re.match(r"^(/api/v1|/apis/[^/]+/[^/]+)(/.*)$", path)
    if not m:
        return None
    prefix, rest = m.group(1), [p for p in m.group(2).split("/") if p]
    ns: str | None = None
    if len(rest) >= 3 and rest[0] == "namespaces":
        ns, rest = rest[1], rest[2:]
    if not rest:
        return None
    rt = _BY_PATH.get((prefix, rest[0]))
    if rt is None:
        if prefix == "/api/v1" and rest[0] == "namespaces" and len(rest) == 2:
            return _BY_PATH[("/api/v1", "namespaces")], None, rest[1], None
        return None
    name = rest[1] if len(rest) > 1 else None
    sub = rest[2] if len(rest) > 2 else None
    return rt, ns, name, sub


def _discovery(path: str) -> dict[str, Any] | None:
    if path == "/version":
        return {
            "major": "1",
            "minor": "31",
            "gitVersion": "v1.31.0",
            "platform": "linux/amd64",
            "goVersion": "go1.22",
            "compiler": "gc",
        }
    if path == "/api":
        return {
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [
                {"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}
            ],
        }
    groups: dict[str, list[str]] = {}
    for rt in RESOURCES:
        if rt.group:
            groups.setdefault(rt.group, [])
            if rt.version not in groups[rt.group]:
                groups[rt.group].append(rt.version)
    groups["authorization.k8s.io"] = ["v1"]
    if path == "/apis":
        return {
            "kind": "APIGroupList",
            "apiVersion": "v1",
            "groups": [
                {
                    "name": g,
                    "versions": [{"groupVersion": f"{g}/{v}", "version": v} for v in vs],
                    "preferredVersion": {"groupVersion": f"{g}/{vs[0]}", "version": vs[0]},
                }
                for g, vs in groups.items()
            ],
        }
    m = re.match(r"^(/api/v1|/apis/([^/]+)/([^/]+))/?$", path)
    if not m:
        m2 = re.match(r"^/apis/([^/]+)/?$", path)
        if m2 and m2.group(1) in groups:
            g = m2.group(1)
            return {
                "kind": "APIGroup",
                "apiVersion": "v1",
                "name": g,
                "versions": [{"groupVersion": f"{g}/{v}", "version": v} for v in groups[g]],
                "preferredVersion": {
                    "groupVersion": f"{g}/{groups[g][0]}",
                    "version": groups[g][0],
                },
            }
        return None
    prefix = m.group(1)
    gv = "v1" if prefix == "/api/v1" else f"{m.group(2)}/{m.group(3)}"
    res: list[dict[str, Any]] = []
    for rt in RESOURCES:
        if rt.prefix == prefix:
            entry: dict[str, Any] = {
                "name": rt.plural,
                "singularName": rt.kind.lower(),
                "namespaced": rt.namespaced,
                "kind": rt.kind,
                "verbs": _READ_VERBS,
            }
            if rt.short:
                entry["shortNames"] = list(rt.short)
            res.append(entry)
            if rt.plural == "pods":
                res.append(
                    {
                        "name": "pods/log",
                        "singularName": "",
                        "namespaced": True,
                        "kind": "Pod",
                        "verbs": ["get"],
                    }
                )
    if gv == "authorization.k8s.io/v1":
        res.append(
            {
                "name": "selfsubjectaccessreviews",
                "singularName": "selfsubjectaccessreview",
                "namespaced": False,
                "kind": "SelfSubjectAccessReview",
                "verbs": ["create"],
            }
        )
    if not res:
        return None
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": res}


# -- Table answers for kubectl get --------------------------------------------------------
def _age(obj: dict[str, Any]) -> str:
    return obj.get("metadata", {}).get("creationTimestamp", "")


def _table(rt: ResourceType, objs: list[dict[str, Any]], full: bool = False) -> dict[str, Any]:
    """A ``meta.k8s.io/v1`` Table; rows carry the whole object when ``full``
    (``includeObject=Object``, which ``kubectl get --sort-by`` asks for)."""
    cols: list[tuple[str, str]] = [("Name", "string")]
    rows: list[dict[str, Any]] = []
    for obj in objs:
        meta = obj["metadata"]
        cells: list[Any] = [meta["name"]]
        if rt.kind == "Pod":
            statuses = obj.get("status", {}).get("containerStatuses") or []
            ready = sum(1 for s in statuses if s.get("ready"))
            total = len(obj.get("spec", {}).get("containers") or [])
            restarts = sum(int(s.get("restartCount", 0)) for s in statuses)
            phase = obj.get("status", {}).get("phase", "")
            cells += [
                f"{ready}/{total}",
                phase,
                restarts,
                _age(obj),
                obj.get("spec", {}).get("nodeName", "<none>"),
            ]
        elif rt.kind == "Node":
            conds = {c["type"]: c["status"] for c in obj.get("status", {}).get("conditions") or []}
            status = "Ready" if conds.get("Ready") == "True" else "NotReady"
            if obj.get("spec", {}).get("unschedulable"):
                status += ",SchedulingDisabled"
            gpu = obj.get("status", {}).get("allocatable", {}).get("nvidia.com/gpu", "<none>")
            ver = obj.get("status", {}).get("nodeInfo", {}).get("kubeletVersion", "")
            cells += [status, gpu, _age(obj), ver]
        elif rt.kind == "Event":
            io = obj.get("involvedObject") or obj.get("regarding") or {}
            cells += [
                obj.get("type", ""),
                obj.get("reason", ""),
                f"{io.get('kind', '')}/{io.get('name', '')}",
                obj.get("message") or obj.get("note", ""),
            ]
        else:
            cells += [_age(obj)]
        rows.append(
            {
                "cells": cells,
                "object": obj
                if full
                else {
                    "kind": "PartialObjectMetadata",
                    "apiVersion": "meta.k8s.io/v1",
                    "metadata": meta,
                },
            }
        )
    if rt.kind == "Pod":
        cols += [
            ("Ready", "string"),
            ("Status", "string"),
            ("Restarts", "integer"),
            ("Age", "string"),
            ("Node", "string"),
        ]
    elif rt.kind == "Node":
        cols += [("Status", "string"), ("GPU", "string"), ("Age", "string"), ("Version", "string")]
    elif rt.kind == "Event":
        cols += [
            ("Type", "string"),
            ("Reason", "string"),
            ("Object", "string"),
            ("Message", "string"),
        ]
    else:
        cols += [("Age", "string")]
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": "1"},
        "columnDefinitions": [
            {
                "name": n,
                "type": t,
                "format": "name" if n == "Name" else "",
                "description": n,
                "priority": 0,
            }
            for n, t in cols
        ],
        "rows": rows,
    }


# -- pytest fixtures ---------------------------------------------------------------------
_SERVERS: list[KubeApiServer] = []


@pytest.fixture(scope="session")
def kube_api() -> Iterator[KubeApiServer]:
    """A started local API server with every fixture cluster of ``tests/fixtures/kube``."""
    from tests.fixtures.kube import scenarios

    srv = KubeApiServer().start()
    _SERVERS.append(srv)
    for name, build in scenarios.SCENARIOS.items():
        build(srv.cluster(name))
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def kubeconfig(kube_api: KubeApiServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A kubeconfig with one context per fixture cluster (namespace ``llm``)."""
    path = tmp_path_factory.mktemp("kube") / "config"
    return kube_api.write_kubeconfig(path, sorted(kube_api.clusters), namespace="llm")


@pytest.fixture(autouse=True, scope="session")
def _only_reads_sent() -> Iterator[None]:
    """Session-wide check: every request the suite sent to a local API server was a GET,
    except SelfSubjectAccessReview POSTs (they change nothing)."""
    yield
    for srv in _SERVERS:
        writes = [
            (r.method, r.path)
            for r in srv.requests
            if r.method != "GET" and not (r.method == "POST" and r.path == SSAR_PATH)
        ]
        assert not writes, f"non-read requests sent to the Kubernetes API: {writes[:10]}"


def now_rfc3339(ts: float) -> str:
    """RFC 3339 UTC timestamp of ``ts`` (Unix seconds), for fixture builders."""
    return _rfc3339(ts)
