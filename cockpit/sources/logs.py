"""Where layered logs come from: the :class:`LogSource` protocol and its Kubernetes
implementation over :class:`~cockpit.sources.kubernetes.KubeSource`.

:class:`KubeLogSource` only sends ``GET .../pods/NAME/log`` (and lists pods): every read
has ``timestamps=true``, ``sinceTime`` (the start of the incident window), ``limitBytes``
(``[logs] max_mb``) and ``tailLines`` (``[logs] tail_lines``), under a timeout
(``[logs] timeout_s``). A container that restarted or is crash-looping is read
``previous=true`` first: the instance that died holds the error. Secrets are redacted by
the Kubernetes source as the text enters, unless a read asks for the text unmasked
(``redact=False``: the layered-logs analysis, which masks every line it keeps, so a 5 MB
log is not searched for credentials as a whole); that is only ever asked of the live
source, never of a recording, so a bundle holds no secret. Here colour sequences are
dropped and every other control character is written out visibly
(:func:`cockpit.neutral.neutralise`), so a log line is harmless wherever it is shown.

Because it calls the Kubernetes source's methods, ``cockpit record`` tees its calls into
a bundle and ``--replay`` answers them, like any other Kubernetes call.
"""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel

from cockpit.config import LogsSettings
from cockpit.models.kube import PodLite
from cockpit.neutral import neutralise
from cockpit.sources.base import ErrorKind, SourceError, SourceFailure
from cockpit.sources.kubernetes import KubeSource

Role = Literal["gateway", "suspect", "cohort", "named", "serving"]
_SGR = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


class LogRead(BaseModel):
    """One container's log as read (or why it could not be).

    Attributes:
        namespace / pod / container: What was read.
        role: ``gateway`` (access logs), ``suspect``, ``cohort``, ``named`` (asked for by
            name) or ``serving`` (another pod of the service).
        previous: The previous (terminated) instance of the container.
        since: The ``sinceTime`` asked for (UTC, whole seconds).
        text: The lines, each with the kubelet's timestamp; neutralised, and redacted
            unless read with ``redact=False`` (then whoever keeps a line masks it:
            :func:`cockpit.redact.redact_text`).
        bytes: Size of the answer in bytes.
        truncated: The answer reached ``limitBytes``: the log goes on past it.
        restarts: The container's restart count when read.
        failure: Why it could not be read (then ``text`` is empty).
    """

    namespace: str
    pod: str
    container: str = ""
    role: Role = "serving"
    previous: bool = False
    since: datetime | None = None
    text: str = ""
    bytes: int = 0
    truncated: bool = False
    restarts: int = 0
    failure: SourceFailure | None = None


@runtime_checkable
class LogSource(Protocol):
    """Reads pods' logs for a window.

    Raises:
        SourceError: from :meth:`pods` only; :meth:`read_pod` puts failures in the reads.
    """

    name: str

    async def pods(
        self, namespace: str | None, label_selector: str = "", field_selector: str = ""
    ) -> list[PodLite]:
        """Pods to read (``namespace`` ``None``: the default one)."""
        ...

    async def pod(self, name: str, namespace: str | None) -> PodLite:
        """One pod."""
        ...

    async def read_pod(
        self, pod: PodLite, role: Role, since: datetime, *, redact: bool = True
    ) -> list[LogRead]:
        """The log of ``pod``'s main container since ``since``: the previous instance
        first when the container restarted, then the current one (``redact=False``: see
        :attr:`LogRead.text`)."""
        ...


def main_container(pod: PodLite) -> str:
    """The container whose log is read: ``kubectl.kubernetes.io/default-container`` when
    the pod names one, else the first container."""
    named = pod.meta.annotations.get("kubectl.kubernetes.io/default-container", "")
    names = [c.name for c in pod.spec.containers]
    if named in names:
        return named
    return names[0] if names else ""


_CONTROLS = dict.fromkeys((*range(0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)))
"""The control characters :func:`cockpit.neutral.neutralise` writes out (``\r`` too)."""


def _clean(text: str) -> str:
    """Colour sequences dropped, other control characters written out visibly. Whether
    there is any is found with one ``str.translate`` (a few milliseconds for 5 MB, a
    tenth of a regular-expression scan); a log without any is returned as it is."""
    if "\x1b" in text:
        text = _SGR.sub("", text)
    if len(text.translate(_CONTROLS)) == len(text):
        return text
    return neutralise(text)


def _clean_and_size(text: str, size: int | None) -> tuple[str, int]:
    """:func:`_clean` of ``text`` and its size in bytes: ``size`` (as the API server sent
    it) when known, else its length in UTF-8 (its length when it is ASCII, which
    ``str.isascii`` says without reading it)."""
    if size is None:
        size = len(text) if text.isascii() else len(text.encode("utf-8", "replace"))
    return _clean(text), size


class KubeLogSource:
    """:class:`LogSource` over the Kubernetes source (live, recorded or replayed).

    Args:
        kube: A :class:`~cockpit.sources.kubernetes.KubeSource` (or its recorder or
            replay, which answer the same methods).
        settings: ``[logs]`` (limits and timeout).
    """

    name = "kubernetes"

    def __init__(self, kube: Any, settings: LogsSettings) -> None:
        self.kube = kube
        self.settings = settings

    async def pods(
        self, namespace: str | None, label_selector: str = "", field_selector: str = ""
    ) -> list[PodLite]:
        """Pods by label and field selector."""
        pods: list[PodLite] = await self.kube.list_pods(
            namespace, field_selector=field_selector, label_selector=label_selector
        )
        return pods

    async def pod(self, name: str, namespace: str | None) -> PodLite:
        """One pod by name."""
        pod: PodLite = await self.kube.get_pod(name, namespace)
        return pod

    async def read(
        self,
        namespace: str,
        pod: str,
        container: str,
        previous: bool,
        since: datetime,
        *,
        redact: bool = True,
    ) -> LogRead:
        """One container's log since ``since`` (whole seconds), bounded by the settings.

        ``redact=False`` reads the text unmasked (:attr:`LogRead.text`) from a live
        Kubernetes source only: a recording or a replay is always asked for it masked,
        so no bundle holds a secret.

        Raises:
            SourceError: classified; ``TIMEOUT`` after ``[logs] timeout_s``.
        """
        limit = int(self.settings.max_mb * 2**20)
        since = since.astimezone(UTC).replace(microsecond=0)
        unmasked = {} if redact or not isinstance(self.kube, KubeSource) else {"redact": False}
        try:
            log = await asyncio.wait_for(
                self.kube.pod_log(
                    pod,
                    namespace,
                    container=container,
                    previous=previous,
                    tail_lines=self.settings.tail_lines,
                    timestamps=True,
                    since_time=since,
                    limit_bytes=limit,
                    **unmasked,
                ),
                self.settings.timeout_s,
            )
        except TimeoutError:
            raise SourceError.of(
                "kubernetes",
                ErrorKind.TIMEOUT,
                f"the log of {namespace}/{pod} was not read within "
                f"{self.settings.timeout_s:g} s (logs.timeout_s)",
                hint_key="hint.kube.timeout",
            ) from None
        # Off the event loop: a 5 MB log takes tens of milliseconds to look through.
        text, size = await asyncio.to_thread(_clean_and_size, log.text, log.size)
        return LogRead(
            namespace=namespace,
            pod=pod,
            container=container,
            previous=previous,
            since=since,
            text=text,
            bytes=size,
            truncated=log.truncated,
        )

    async def read_pod(
        self, pod: PodLite, role: Role, since: datetime, *, redact: bool = True
    ) -> list[LogRead]:
        """The previous instance first when the container restarted or is crash-looping,
        then the current one; a failed read is kept with its failure (``redact``: see
        :meth:`read`)."""
        container = main_container(pod)
        status = next((c for c in pod.container_statuses if c.name == container), None)
        restarts = status.restart_count if status is not None else 0
        crash = status is not None and status.waiting_reason == "CrashLoopBackOff"
        order = [True, False] if restarts > 0 or crash else [False]
        out: list[LogRead] = []
        for previous in order:
            try:
                r = await self.read(
                    pod.meta.namespace, pod.meta.name, container, previous, since, redact=redact
                )
            except SourceError as exc:
                r = LogRead(
                    namespace=pod.meta.namespace,
                    pod=pod.meta.name,
                    container=container,
                    previous=previous,
                    since=since.astimezone(UTC).replace(microsecond=0),
                    failure=exc.failure,
                )
            r.role = role
            r.restarts = restarts
            out.append(r)
        return out
