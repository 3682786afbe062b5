"""Read-only Kubernetes source over the official ``kubernetes`` client (37.x).

Only GET requests are ever sent (get, list, watch, pod logs), plus the
SelfSubjectAccessReview POST of :meth:`KubeSource.check_access`, which changes nothing.
The client is imported and built lazily, on the first call and in the executor: its
import costs about a second (``shared/design/test-backends.md``), which must not delay
the first frame.

Requests go through the client's ``ApiClient`` (kubeconfig, contexts, in-cluster
service-account config, TLS and bearer tokens are the client's) with
``_request_timeout`` on every call; responses are parsed from raw JSON into the slim
models of :mod:`cockpit.models.kube`, because the typed models reject
``eventTime: null`` in ``events.k8s.io/v1`` and are slow on large lists (measured in
``bench/bench_pending.py``). Lists are paged with ``limit``/``continue`` and narrowed
with field and label selectors.

Errors are :class:`~cockpit.sources.base.SourceError`, classified: 403 → access denied
with the verb and resource refused and the ``kubectl auth can-i`` line; timeouts; 5xx →
unavailable; 404 → not found; a body that is not JSON → bad data.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import gzip
import json
import os
import re
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from cockpit.commandline import namespace_flag
from cockpit.models.kube import (
    AccessCheck,
    Condition,
    ConfigMapLite,
    DaemonSetLite,
    EventLite,
    GangLite,
    HelmRelease,
    Meta,
    NodeInfo,
    NodeLite,
    NodeRequests,
    OwnerRef,
    PodLite,
    PodLog,
    PriorityClassLite,
    ResourceQuotaLite,
    Revision,
    Taint,
    controller_revision_of,
    daemonset_of,
    event_of,
    gang_of,
    meta_of,
    parse_quantity,
    parse_time,
    pod_of,
    replicaset_of,
)
from cockpit.redact import redact_log, redact_tree
from cockpit.sources.base import ErrorKind, SourceError

SOURCE = "kubernetes"
T = TypeVar("T")

PAGE_SIZE = 500
"""Items per list page (``kubectl`` uses 500 too)."""
BULK_PAGE_SIZE = 5000
"""Page size for the node-requests scan over every pod (fewer round trips)."""

_FORBIDDEN = re.compile(
    r'cannot (?P<verb>[\w-]+) resource "(?P<resource>[^"]+)"'
    r'(?: in API group "(?P<group>[^"]*)")?'
    r'(?: in the namespace "(?P<ns>[^"]+)")?'
)

_PLURAL_OF = {
    "pods": "",
    "nodes": "",
    "events": "",
    "configmaps": "",
    "secrets": "",
    "resourcequotas": "",
    "namespaces": "",
    "persistentvolumeclaims": "",
}


def can_i_command(
    verb: str, resource: str, namespace: str = "", group: str = "", subresource: str = ""
) -> str:
    """The ``kubectl auth can-i`` line that checks one permission.

    ``can_i_command("list", "pods", "llm")`` → ``kubectl auth can-i list pods -n llm``.
    """
    res = f"{resource}.{group}" if group else resource
    if subresource:
        res = f"{res}/{subresource}"
    return f"kubectl auth can-i {verb} {res}{namespace_flag(namespace)}"


def _verb_from_path(path: str, is_list: bool) -> str:
    if path.endswith("/log"):
        return "get"
    return "list" if is_list else "get"


def classify(
    exc: BaseException, path: str = "", is_list: bool = False, namespace: str = ""
) -> SourceError:
    """Turn a client exception into a classified :class:`SourceError`."""
    if isinstance(exc, SourceError):
        return exc
    status = getattr(exc, "status", None)
    body = getattr(exc, "body", None) or ""
    message = ""
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if body:
        try:
            message = json.loads(body).get("message", "")
        except (ValueError, AttributeError):
            message = body[:300]
    name = type(exc).__name__
    text = str(exc)
    if status == 403 or status == 401:
        m = _FORBIDDEN.search(message)
        parts = [p for p in path.split("/") if p]
        resource = m.group("resource") if m else (parts[-1] if parts else "?")
        if resource == "log":
            resource = "pods"
        verb = m.group("verb") if m else _verb_from_path(path, is_list)
        group = (m.group("group") or "") if m else ""
        ns = (m.group("ns") or "") if m else namespace
        sub = "log" if path.endswith("/log") else ""
        cmd = can_i_command(verb, resource, ns, group, sub)
        what = (
            "unauthorized (401): the credentials were refused"
            if status == 401
            else (message or f"forbidden: {verb} {resource}")
        )
        return SourceError.of(
            SOURCE,
            ErrorKind.ACCESS_DENIED,
            what,
            hint_key="hint.kube.rbac",
            hint_args={"verb": verb, "resource": resource, "cmd": cmd},
            status=str(status),
            verb=verb,
            resource=resource,
            group=group,
            namespace=ns,
            command=cmd,
        )
    if status == 404:
        return SourceError.of(
            SOURCE, ErrorKind.NOT_FOUND, message or f"not found: {path}", status="404", path=path
        )
    if isinstance(status, int) and status >= 500:
        return SourceError.of(
            SOURCE,
            ErrorKind.UNAVAILABLE,
            f"HTTP {status} from the API server: {message or getattr(exc, 'reason', '')}",
            hint_key="hint.kube.server_failed",
            status=str(status),
            path=path,
        )
    if isinstance(status, int) and status in (400, 422, 410):
        return SourceError.of(
            SOURCE, ErrorKind.BAD_QUERY, message or text, status=str(status), path=path
        )
    low = f"{name} {text}".lower()
    if "timeout" in low or "timed out" in low:
        return SourceError.of(
            SOURCE,
            ErrorKind.TIMEOUT,
            f"no answer from the API server in time ({path})",
            hint_key="hint.kube.timeout",
            path=path,
        )
    if isinstance(exc, ValueError):
        return SourceError.of(
            SOURCE,
            ErrorKind.BAD_DATA,
            f"the API server sent a body that is not valid JSON ({path}): {text[:120]}",
            hint_key="hint.kube.bad_json",
            path=path,
        )
    return SourceError.of(
        SOURCE,
        ErrorKind.UNAVAILABLE,
        f"{name}: {text[:300]}",
        hint_key="hint.kube.unreachable",
        path=path,
    )


class KubeSource:
    """Read-only access to one cluster (one kubeconfig context), optionally one namespace.

    Args:
        kubeconfig: Kubeconfig path; default ``$KUBECONFIG`` or ``~/.kube/config``; when
            none exists and the process runs in a pod, the in-cluster service account.
        context: Kubeconfig context; default the current one.
        namespace: Default namespace of namespaced calls; default the context's, else
            ``default``.
        timeout_s: Per-request timeout in seconds (``_request_timeout``).
        workers: Threads of the executor running the client's synchronous calls.
        max_response_mb: Largest answer read, in MiB (one page of a list, a log); a
            larger one fails that request with ``BAD_DATA`` naming the path and the limit.

    Every method is a coroutine returning pydantic models and raising only
    :class:`SourceError`.
    """

    name = SOURCE

    def __init__(
        self,
        kubeconfig: str | Path | None = None,
        context: str | None = None,
        namespace: str | None = None,
        timeout_s: float = 10.0,
        workers: int = 4,
        max_response_mb: float = 64.0,
    ) -> None:
        self.kubeconfig = str(kubeconfig) if kubeconfig else None
        self.max_response_mb = max_response_mb
        self.context = context or None
        self._namespace = namespace or None
        self.timeout_s = timeout_s
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="kube")
        self._prefetch = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kube-prefetch")
        self._client: Any = None
        self._lock = threading.Lock()
        self.requests_sent = 0
        """Number of HTTP requests sent (for the benchmark)."""

    # -- client construction ----------------------------------------------------------------
    @property
    def namespace(self) -> str:
        """The namespace in scope (after the client is built: the context's default)."""
        return self._namespace or "default"

    def _build(self) -> Any:
        from kubernetes import config as kconfig_module

        kconfig: Any = kconfig_module  # the loader functions are untyped
        from kubernetes.client import Configuration
        from kubernetes.client.api_client import ApiClient

        cfg = Configuration()
        path = self.kubeconfig or os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or None
        default_path = Path("~/.kube/config").expanduser()
        try:
            if path or default_path.exists():
                kconfig.load_kube_config(
                    config_file=path, context=self.context, client_configuration=cfg
                )
                if self._namespace is None:
                    _, active = kconfig.list_kube_config_contexts(config_file=path)
                    if self.context:
                        contexts, _ = kconfig.list_kube_config_contexts(config_file=path)
                        active = next((c for c in contexts if c["name"] == self.context), active)
                    self._namespace = (active or {}).get("context", {}).get("namespace") or None
            elif os.environ.get("KUBERNETES_SERVICE_HOST"):
                kconfig.load_incluster_config(client_configuration=cfg)
                ns_file = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
                if self._namespace is None and ns_file.exists():
                    self._namespace = ns_file.read_text().strip() or None
            else:
                raise SourceError.of(
                    SOURCE,
                    ErrorKind.NOT_CONFIGURED,
                    "no kubeconfig found and not running in a pod",
                    hint_key="hint.kube.no_config",
                )
        except SourceError:
            raise
        except Exception as exc:  # kubeconfig parse errors, missing context…
            raise SourceError.of(
                SOURCE,
                ErrorKind.NOT_CONFIGURED,
                f"cannot load the Kubernetes configuration: {exc}",
                hint_key="hint.kube.bad_config",
            ) from exc
        # Fail fast: a retry hides a timeout behind another timeout.
        cfg.retries = False
        return ApiClient(configuration=cfg)

    def _api(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = self._build()
            return self._client

    async def _run(self, fn: Callable[[], T]) -> T:
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, fn)
        except SourceError:
            raise
        except Exception as exc:
            raise classify(exc) from exc

    async def default_namespace(self) -> str:
        """The namespace in scope: ``--namespace``, else the kubeconfig context's, else the
        service account's, else ``default`` (a coroutine so that a replayed source
        answers it from the bundle)."""
        await self.connect()
        return self.namespace

    async def connect(self) -> None:
        """Build the client now (imports the library; runs in the executor)."""
        if self._client is None:
            await self._run(self._api)

    async def close(self) -> None:
        """Close connections and stop the executor."""
        client = self._client
        self._client = None
        if client is not None:
            with contextlib.suppress(Exception):
                client.close()
        self._executor.shutdown(wait=False, cancel_futures=True)
        self._prefetch.shutdown(wait=False, cancel_futures=True)

    # -- raw requests (sync, in the executor) -------------------------------------------------
    def _request(
        self,
        method: str,
        path: str,
        query: list[tuple[str, Any]] | None = None,
        body: Any = None,
        accept: str = "application/json",
        is_list: bool = False,
        namespace: str = "",
    ) -> bytes:
        api = self._api()
        headers = {"Accept": accept}
        if body is not None:
            headers["Content-Type"] = "application/json"
        try:
            params = api.param_serialize(
                method=method,
                resource_path=path,
                query_params=query or [],
                header_params=headers,
                body=body,
                auth_settings=["BearerToken"],
            )
            self.requests_sent += 1
            resp = api.call_api(*params, _request_timeout=self.timeout_s)
            data: bytes = self._read_bounded(resp, path)
            status = resp.status
        except SourceError:
            raise
        except Exception as exc:
            raise classify(exc, path, is_list, namespace) from exc
        if not 200 <= status < 300:
            from kubernetes.client.exceptions import ApiException

            err = ApiException(status=status, reason=getattr(resp, "reason", ""))
            err.body = data.decode("utf-8", "replace")
            raise classify(err, path, is_list, namespace)
        return data

    def _read_bounded(self, resp: Any, path: str) -> bytes:
        """The body of the client's response, streamed up to ``max_response_mb`` (after
        gzip decoding); past it the connection is dropped and the request fails.

        Raises:
            SourceError: ``BAD_DATA`` naming the path and the limit.
        """
        raw = getattr(resp, "response", None)
        if raw is None or not hasattr(raw, "stream"):
            return bytes(resp.read())
        limit = int(self.max_response_mb * 2**20)
        body = bytearray()
        for chunk in raw.stream(2**16, decode_content=True):
            body += chunk
            if len(body) > limit:
                with contextlib.suppress(Exception):
                    raw.close()
                mb = f"{self.max_response_mb:g}"
                raise SourceError.of(
                    SOURCE,
                    ErrorKind.BAD_DATA,
                    f"the answer to {path} is larger than {mb} MiB "
                    f"(kubernetes.max_response_mb); not read",
                    hint_key="hint.kube.too_large",
                    hint_args={"mb": mb},
                    path=path,
                    limit_mb=mb,
                )
        return bytes(body)

    def _json(
        self, path: str, query: list[tuple[str, Any]] | None = None, type_: Any = Any, **kw: Any
    ) -> Any:
        data = self._request("GET", path, query, **kw)
        try:
            return msgspec.json.decode(data, type=type_)
        except (msgspec.DecodeError, ValueError) as exc:
            raise classify(ValueError(str(exc)), path) from exc

    def _list_raw(
        self,
        path: str,
        field_selector: str = "",
        label_selector: str = "",
        page_size: int | None = None,
        on_page: Callable[[list[dict[str, Any]]], None] | None = None,
        namespace: str = "",
    ) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        cont = ""
        while True:
            q: list[tuple[str, Any]] = [("limit", page_size or PAGE_SIZE)]
            if field_selector:
                q.append(("fieldSelector", field_selector))
            if label_selector:
                q.append(("labelSelector", label_selector))
            if cont:
                q.append(("continue", cont))
            doc = self._json(path, q, is_list=True, namespace=namespace)
            if not isinstance(doc, dict) or not isinstance(doc.get("items", []), list):
                raise SourceError.of(SOURCE, ErrorKind.BAD_DATA, f"not a list: {path}", path=path)
            items = doc.get("items") or []
            if on_page is not None:
                on_page(items)
            else:
                out.extend(items)
            cont = (doc.get("metadata") or {}).get("continue") or ""
            if not cont:
                return out

    @staticmethod
    def _path(prefix: str, plural: str, namespace: str | None, name: str = "") -> str:
        ns = f"/namespaces/{namespace}" if namespace else ""
        tail = f"/{name}" if name else ""
        return f"{prefix}{ns}/{plural}{tail}"

    async def _list(
        self,
        prefix: str,
        plural: str,
        parse: Callable[[dict[str, Any]], T],
        namespace: str | None,
        field_selector: str = "",
        label_selector: str = "",
    ) -> list[T]:
        path = self._path(prefix, plural, namespace)

        def work() -> list[T]:
            return [
                parse(o)
                for o in self._list_raw(
                    path, field_selector, label_selector, namespace=namespace or ""
                )
            ]

        return await self._run(work)

    def _scope(self, namespace: str | None) -> str | None:
        """``None`` → the default namespace; ``"*"`` or ``""`` → all namespaces."""
        if namespace is None:
            return self.namespace
        return None if namespace in ("*", "") else namespace

    # -- pods, nodes, events ------------------------------------------------------------------
    async def list_pods(
        self, namespace: str | None = None, field_selector: str = "", label_selector: str = ""
    ) -> list[PodLite]:
        """Pods in ``namespace`` (``"*"`` = all; ``None`` = the default namespace)."""
        await self.connect()
        return await self._list(
            "/api/v1", "pods", pod_of, self._scope(namespace), field_selector, label_selector
        )

    async def get_pod(self, name: str, namespace: str | None = None) -> PodLite:
        """One pod."""
        await self.connect()
        ns = self._scope(namespace) or self.namespace
        path = self._path("/api/v1", "pods", ns, name)
        return await self._run(lambda: pod_of(self._json(path, namespace=ns)))

    async def list_nodes(self, label_selector: str = "") -> list[NodeLite]:
        """Every node (optionally narrowed by a label selector).

        Decoded straight into the fields :class:`NodeLite` keeps: a real node carries
        ``status.images`` (hundreds of entries) and ``managedFields`` that a dict-based
        parse would build and throw away.
        """
        await self.connect()

        def work() -> list[NodeLite]:
            out: list[NodeLite] = []
            cont = ""
            while True:
                q: list[tuple[str, Any]] = [("limit", PAGE_SIZE)]
                if label_selector:
                    q.append(("labelSelector", label_selector))
                if cont:
                    q.append(("continue", cont))
                page = self._json("/api/v1/nodes", q, type_=_NodeList, is_list=True)
                out.extend(_node_from_struct(n) for n in page.items)
                cont = page.metadata.continue_
                if not cont:
                    return out

        return await self._run(work)

    async def list_events(
        self, namespace: str | None = None, field_selector: str = ""
    ) -> list[EventLite]:
        """core/v1 Events (``eventTime`` may be null there)."""
        await self.connect()
        return await self._list(
            "/api/v1", "events", event_of, self._scope(namespace), field_selector
        )

    async def node_requests(self) -> NodeRequests:
        """Summed effective requests of every non-terminated, bound pod, per node.

        Reads all pods with ``status.phase!=Succeeded,status.phase!=Failed,spec.nodeName!=``
        in pages of :data:`BULK_PAGE_SIZE`, keeping only node name and requests per page
        (bounded memory). What ``kubectl describe node`` calls "Allocated resources".
        """
        await self.connect()
        result = NodeRequests()
        by_node: dict[str, dict[str, float]] = {}
        pods: dict[str, int] = {}
        scanned = 0

        sel = "status.phase!=Succeeded,status.phase!=Failed,spec.nodeName!="

        def fetch(cont: str) -> bytes:
            q: list[tuple[str, Any]] = [("limit", BULK_PAGE_SIZE), ("fieldSelector", sel)]
            if cont:
                q.append(("continue", cont))
            return self._request("GET", "/api/v1/pods", q, is_list=True)

        def scan() -> None:
            nonlocal scanned
            data = fetch("")
            while True:
                # Ask for the next page while this one is decoded: the API server
                # writes list metadata (with the continue token) before the items.
                peeked = _peek_continue(data)
                ahead = self._prefetch.submit(fetch, peeked) if peeked else None
                try:
                    page = msgspec.json.decode(data, type=_PodRequestsList)
                except (msgspec.DecodeError, ValueError) as exc:
                    if ahead is not None:
                        ahead.cancel()
                    raise classify(ValueError(str(exc)), "/api/v1/pods") from exc
                for pod in page.items:
                    scanned += 1
                    spec = pod.spec
                    if spec is None or not spec.nodeName:
                        continue
                    node = spec.nodeName
                    acc = by_node.setdefault(node, {})
                    pods[node] = pods.get(node, 0) + 1
                    for k, v in _requests_typed(spec).items():
                        acc[k] = acc.get(k, 0.0) + v
                cont = page.metadata.continue_
                if ahead is not None and cont == peeked:
                    data = ahead.result()
                elif cont:
                    if ahead is not None:
                        ahead.cancel()
                    data = fetch(cont)
                else:
                    return

        await self._run(scan)
        result.by_node = by_node
        result.pods = pods
        result.pods_scanned = scanned
        return result

    async def pod_log(
        self,
        name: str,
        namespace: str | None = None,
        container: str = "",
        previous: bool = False,
        tail_lines: int | None = 200,
        timestamps: bool = False,
        since_time: datetime | None = None,
        limit_bytes: int | None = None,
        redact: bool = True,
    ) -> PodLog:
        """A pod's log (``GET .../pods/NAME/log``, the call behind the client's
        ``read_namespaced_pod_log``), with secrets redacted as it enters.

        Args:
            previous: The last terminated instance of the container (a restarted or
                crash-looping one).
            tail_lines: At most that many lines from the end (``None``: no tail).
            timestamps: Each line prefixed with the kubelet's RFC 3339 time.
            since_time: Only lines written at or after this time (``sinceTime``, whole
                seconds, UTC).
            limit_bytes: At most that many bytes (``limitBytes``); the answer is then
                marked ``truncated`` when it is that long.
            redact: ``False``: the text as the API server sent it, for a caller that
                masks every line it keeps itself (the layered-logs panel,
                :class:`cockpit.sources.logs.KubeLogSource`); never recorded that way.

        Raises:
            SourceError: classified (400 for a ``previous`` container that never
                terminated, 404 for an unknown pod).
        """
        await self.connect()
        ns = self._scope(namespace) or self.namespace
        q: list[tuple[str, Any]] = []
        if container:
            q.append(("container", container))
        if previous:
            q.append(("previous", "true"))
        if tail_lines is not None:
            q.append(("tailLines", tail_lines))
        if timestamps:
            q.append(("timestamps", "true"))
        if since_time is not None:
            q.append(("sinceTime", since_time.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")))
        if limit_bytes is not None:
            q.append(("limitBytes", limit_bytes))
        path = self._path("/api/v1", "pods", ns, name) + "/log"

        def work() -> tuple[int, str]:
            data = self._request("GET", path, q, accept="*/*", namespace=ns)
            # Redacted here, in the executor, only on the lines that may hold a credential.
            text = data.decode("utf-8", "replace")
            return len(data), redact_log(text) if redact else text

        size, text = await self._run(work)
        return PodLog(
            namespace=ns,
            pod=name,
            container=container,
            previous=previous,
            tail_lines=tail_lines,
            since_time=since_time,
            limit_bytes=limit_bytes,
            truncated=limit_bytes is not None and size >= limit_bytes,
            text=text,
            size=size,
        )

    # -- workloads and revisions -----------------------------------------------------------------

    async def list_revisions(
        self, namespace: str | None = None, label_selector: str = ""
    ) -> list[Revision]:
        """ReplicaSets (Deployment revisions) and ControllerRevisions (StatefulSet ones)."""
        await self.connect()
        ns = self._scope(namespace)
        rss, crs = await asyncio.gather(
            self._list("/apis/apps/v1", "replicasets", replicaset_of, ns, "", label_selector),
            self._list(
                "/apis/apps/v1",
                "controllerrevisions",
                controller_revision_of,
                ns,
                "",
                label_selector,
            ),
        )
        return rss + crs

    async def list_daemonsets(
        self, namespace: str | None = "*", label_selector: str = ""
    ) -> list[DaemonSetLite]:
        """DaemonSets (default: all namespaces — the GPU device plugin lives elsewhere)."""
        await self.connect()
        return await self._list(
            "/apis/apps/v1", "daemonsets", daemonset_of, self._scope(namespace), "", label_selector
        )

    async def list_helm_releases(self, namespace: str | None = None) -> list[HelmRelease]:
        """Helm 3 release revisions (Secrets labelled ``owner=helm``), decoded.

        The Secret's ``data.release`` is base64 (Secret API) of base64 (Helm's storage
        driver) of gzip of the release JSON (helm ``pkg/storage/driver/util.go``).
        """
        await self.connect()
        ns = self._scope(namespace)
        raws = await self._run(
            lambda: self._list_raw(
                self._path("/api/v1", "secrets", ns), "type=helm.sh/release.v1", "owner=helm"
            )
        )
        out = []
        for obj in raws:
            rel = decode_helm_release(obj)
            if rel is not None:
                out.append(rel)
        return out

    async def list_configmaps(self, namespace: str | None = None) -> list[ConfigMapLite]:
        """ConfigMaps (names, keys, last change time; values are not kept)."""
        await self.connect()

        def parse(o: dict[str, Any]) -> ConfigMapLite:
            return ConfigMapLite(meta=meta_of(o), keys=sorted((o.get("data") or {}).keys()))

        return await self._list("/api/v1", "configmaps", parse, self._scope(namespace))

    async def list_resource_quotas(self, namespace: str | None = None) -> list[ResourceQuotaLite]:
        """ResourceQuotas with ``hard`` and ``used``."""
        await self.connect()

        def parse(o: dict[str, Any]) -> ResourceQuotaLite:
            st = o.get("status") or {}
            return ResourceQuotaLite(
                meta=meta_of(o),
                hard={
                    k: str(v)
                    for k, v in (st.get("hard") or (o.get("spec") or {}).get("hard") or {}).items()
                },
                used={k: str(v) for k, v in (st.get("used") or {}).items()},
            )

        return await self._list("/api/v1", "resourcequotas", parse, self._scope(namespace))

    async def list_priority_classes(self) -> list[PriorityClassLite]:
        """PriorityClasses."""
        await self.connect()

        def parse(o: dict[str, Any]) -> PriorityClassLite:
            return PriorityClassLite(
                name=(o.get("metadata") or {}).get("name", ""),
                value=int(o.get("value") or 0),
                preemption_policy=o.get("preemptionPolicy") or "PreemptLowerPriority",
                global_default=bool(o.get("globalDefault")),
            )

        return await self._list("/apis/scheduling.k8s.io/v1", "priorityclasses", parse, None)

    async def list_gangs(self, namespace: str | None = None) -> list[GangLite]:
        """Volcano PodGroups and Kueue Workloads; a CRD that is not installed gives none."""
        await self.connect()
        ns = self._scope(namespace)
        out: list[GangLite] = []
        for prefix, plural in (
            ("/apis/scheduling.volcano.sh/v1beta1", "podgroups"),
            ("/apis/kueue.x-k8s.io/v1beta1", "workloads"),
        ):
            try:
                out += await self._list(prefix, plural, gang_of, ns)
            except SourceError as exc:
                if exc.kind is not ErrorKind.NOT_FOUND:
                    raise
        return out

    # -- permissions ------------------------------------------------------------------------------
    async def check_access(
        self, verb: str, resource: str, namespace: str = "", group: str = "", subresource: str = ""
    ) -> AccessCheck:
        """Ask the API server whether this identity may ``verb`` ``resource``
        (a SelfSubjectAccessReview POST; it changes nothing)."""
        await self.connect()
        attrs: dict[str, str] = {"verb": verb, "resource": resource, "group": group}
        if namespace:
            attrs["namespace"] = namespace
        if subresource:
            attrs["subresource"] = subresource
        body = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": attrs},
        }
        cmd = can_i_command(verb, resource, namespace, group, subresource)
        path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"

        def work() -> AccessCheck:
            data = self._request("POST", path, body=body)
            doc = json.loads(data)
            st = doc.get("status") or {}
            return AccessCheck(
                verb=verb,
                resource=resource,
                group=group,
                namespace=namespace,
                subresource=subresource,
                allowed=bool(st.get("allowed")),
                reason=st.get("reason") or st.get("evaluationError") or "",
                command=cmd,
            )

        return await self._run(work)


class _Resources(msgspec.Struct, gc=False):
    requests: dict[str, str | int | float] | None = None
    limits: dict[str, str | int | float] | None = None


class _Container(msgspec.Struct, gc=False):
    resources: _Resources | None = None


class _Spec(msgspec.Struct, gc=False):
    nodeName: str = ""
    containers: list[_Container] = []
    initContainers: list[_Container] = []


class _PodRequests(msgspec.Struct, gc=False):
    spec: _Spec | None = None


class _ListMeta(msgspec.Struct, frozen=True, gc=False):
    continue_: str = msgspec.field(default="", name="continue")


class _PodRequestsList(msgspec.Struct, gc=False):
    """Only what the node-requests scan needs: msgspec skips every other field without
    building it, which is what makes a 50,000-pod scan affordable (bench_pending)."""

    items: list[_PodRequests] = []
    metadata: _ListMeta = _ListMeta()


class _Field(msgspec.Struct, gc=False):
    time: str | None = None


class _Owner(msgspec.Struct, gc=False):
    kind: str = ""
    name: str = ""


class _Meta(msgspec.Struct, gc=False):
    name: str = ""
    namespace: str = ""
    uid: str = ""
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    creationTimestamp: str | None = None
    ownerReferences: list[_Owner] | None = None
    managedFields: list[_Field] | None = None


class _Taint(msgspec.Struct, gc=False):
    key: str = ""
    value: str | None = None
    effect: str = ""


class _NodeSpec(msgspec.Struct, gc=False):
    taints: list[_Taint] | None = None
    unschedulable: bool | None = None


class _Cond(msgspec.Struct, gc=False):
    type: str = ""
    status: str = ""
    reason: str | None = None
    message: str | None = None
    lastTransitionTime: str | None = None


class _NodeInfo(msgspec.Struct, gc=False):
    kernelVersion: str = ""
    osImage: str = ""
    containerRuntimeVersion: str = ""
    kubeletVersion: str = ""


class _NodeStatus(msgspec.Struct, gc=False):
    capacity: dict[str, str | int | float] | None = None
    allocatable: dict[str, str | int | float] | None = None
    conditions: list[_Cond] | None = None
    nodeInfo: _NodeInfo | None = None


class _Node(msgspec.Struct, gc=False):
    metadata: _Meta = msgspec.field(default_factory=_Meta)
    spec: _NodeSpec | None = None
    status: _NodeStatus | None = None


class _NodeList(msgspec.Struct, gc=False):
    items: list[_Node] = []
    metadata: _ListMeta = _ListMeta()


def _meta_from_struct(m: _Meta) -> Meta:
    times = [parse_time(f.time) for f in m.managedFields or ()]
    known = [t for t in times if t is not None]
    return Meta.model_construct(
        name=m.name,
        namespace=m.namespace,
        uid=m.uid,
        labels=m.labels or {},
        annotations=m.annotations or {},
        created=parse_time(m.creationTimestamp),
        owners=[
            OwnerRef.model_construct(kind=o.kind, name=o.name) for o in m.ownerReferences or ()
        ],
        last_update=max(known) if known else None,
    )


def _node_from_struct(n: _Node) -> NodeLite:
    """The same :class:`NodeLite` as ``node_of`` builds from a dict."""
    spec = n.spec or _NodeSpec()
    st = n.status or _NodeStatus()
    info = st.nodeInfo or _NodeInfo()
    return NodeLite.model_construct(
        meta=_meta_from_struct(n.metadata),
        taints=[
            Taint.model_construct(key=t.key, value=t.value or "", effect=t.effect)
            for t in spec.taints or ()
        ],
        unschedulable=bool(spec.unschedulable),
        capacity={k: str(v) for k, v in (st.capacity or {}).items()},
        allocatable={k: str(v) for k, v in (st.allocatable or {}).items()},
        conditions=[
            Condition.model_construct(
                type=c.type,
                status=c.status,
                reason=c.reason or "",
                message=c.message or "",
                last_transition=parse_time(c.lastTransitionTime),
            )
            for c in st.conditions or ()
        ],
        info=NodeInfo.model_construct(
            kernel_version=info.kernelVersion,
            os_image=info.osImage,
            container_runtime_version=info.containerRuntimeVersion,
            kubelet_version=info.kubeletVersion,
        ),
    )


_QTY_CACHE: dict[str | int | float, float | None] = {}


def _qty(v: str | int | float) -> float | None:
    q = _QTY_CACHE.get(v, -1.0)
    if q == -1.0:
        q = parse_quantity(v)
        if len(_QTY_CACHE) < 10_000:
            _QTY_CACHE[v] = q
    return q


_CONTINUE = re.compile(rb'"continue"\s*:\s*"([^"]*)"')


def _peek_continue(data: bytes) -> str:
    """The continue token from the head of a list body (``""`` when not in the first
    2 KiB: the scan then waits for the full decode)."""
    head = data[:2048]
    items_at = head.find(b'"items"')
    if items_at >= 0:
        head = head[:items_at]
    m = _CONTINUE.search(head)
    return m.group(1).decode() if m else ""


def _requests_typed(spec: _Spec) -> dict[str, float]:
    """Effective requests of a partially decoded pod spec (see ``effective_requests``)."""
    total: dict[str, float] = {}
    for c in spec.containers:
        res = c.resources
        if res is None:
            continue
        reqs = res.requests or {}
        for k, v in reqs.items():
            q = _qty(v)
            if q is not None:
                total[k] = total.get(k, 0.0) + q
        for k, v in (res.limits or {}).items():
            if k not in reqs:
                q = _qty(v)
                if q is not None:
                    total[k] = total.get(k, 0.0) + q
    for c in spec.initContainers:
        if c.resources is None:
            continue
        for k, v in (c.resources.requests or {}).items():
            q = _qty(v)
            if q is not None and q > total.get(k, 0.0):
                total[k] = q
    return total


def decode_helm_release(secret: dict[str, Any]) -> HelmRelease | None:
    """Decode a ``sh.helm.release.v1.<name>.v<N>`` Secret; ``None`` if it is not one.

    ``data.release`` → base64 (Secret) → base64 (Helm) → gzip (magic ``1f 8b``, Helm
    skips gunzip when absent) → JSON release.
    """
    raw = (secret.get("data") or {}).get("release")
    if not raw:
        return None
    try:
        inner = base64.b64decode(raw)
        blob = base64.b64decode(inner)
        if blob[:2] == b"\x1f\x8b":
            blob = gzip.decompress(blob)
        rel = json.loads(blob)
    except (ValueError, OSError):
        return None
    info = rel.get("info") or {}
    chart = (rel.get("chart") or {}).get("metadata") or {}
    return HelmRelease(
        name=rel.get("name") or "",
        namespace=rel.get("namespace") or (secret.get("metadata") or {}).get("namespace", ""),
        version=int(rel.get("version") or 0),
        status=info.get("status") or "",
        chart=chart.get("name") or "",
        chart_version=chart.get("version") or "",
        app_version=chart.get("appVersion") or "",
        # Values under a secret-looking key are masked; the manifest is never kept.
        values=redact_tree(rel.get("config") or {}),
        deployed_at=parse_time(info.get("last_deployed")),
        description=info.get("description") or "",
    )
