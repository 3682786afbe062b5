"""One policy for a worker's unexpected exception (a bug, a source answering in a way no
one foresaw): it is shown where the worker belongs, written with its traceback to
``<state dir>/logs/errors.log``, and it never ends the app or touches the incident.

Every worker is started with ``exit_on_error=False`` (Textual's default, ``True``, ends the
app on the first exception) and every node that starts workers mixes in
:class:`ContainsWorkerErrors`, whose ``Worker.StateChanged`` handler (the message does not
bubble, so each owner handles its own) applies :func:`worker_failed`. Expected failures
(``SourceError``, timeouts) are still handled by the workers themselves, with their own
messages.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from textual.worker import Worker, WorkerState

from cockpit.i18n import t

log = logging.getLogger(__name__)

LOG_NAME = "errors.log"


def error_log_path(app: Any) -> Path | None:
    """``<state dir>/logs/errors.log`` of the app's incident store (``None`` before boot)."""
    ctx = getattr(app, "ctx", None)
    session = getattr(ctx, "session", None)
    if session is None:
        return None
    return Path(session.store.root) / "logs" / LOG_NAME


def append_error_log(path: Path, where: str, error: BaseException) -> None:
    """Append one entry (UTC time, owner, traceback) to ``path``: directory 0700, file
    0600, never through a symbolic link. Failures are logged, never raised."""
    text = (
        f"--- {datetime.now(UTC).isoformat(timespec='seconds')} {where}\n"
        + "".join(traceback.format_exception(error))
    ).encode("utf-8", "replace")
    try:
        path.parent.mkdir(mode=0o700, exist_ok=True)
        fd = os.open(
            path,
            os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
        )
        try:
            os.write(fd, text)
        finally:
            os.close(fd)
    except OSError:
        log.warning("could not write %s", path, exc_info=True)


def worker_failed(owner: Any, worker: Worker[Any]) -> str:
    """Apply the policy to ``worker`` (in state ERROR) of the DOM node ``owner``: the
    sentence is shown by ``owner.show_worker_error`` and the traceback is appended to
    the error log in a thread (no file I/O on the event loop). Returns the sentence."""
    error = worker.error
    assert error is not None
    app = owner.app
    ctx = getattr(app, "ctx", None)
    lang = getattr(ctx, "lang", "en")
    path = error_log_path(app)
    where = f"{type(owner).__name__} worker {worker.name or worker.group}"
    message = f"{type(error).__name__}: {error}"
    text = t(
        "worker.failed", lang, error=message, log=str(path) if path else t("worker.no_log", lang)
    )
    log.error("%s failed", where, exc_info=error)
    if path is not None:
        threading.Thread(
            target=append_error_log, args=(path, where, error), name="cockpit-error-log"
        ).start()
    with contextlib.suppress(Exception):  # the owner may be half unmounted
        owner.show_worker_error(text)
        return text
    with contextlib.suppress(Exception):
        app.notify(text, severity="error", timeout=30, markup=False)
    return text


class ContainsWorkerErrors:
    """Mixin for every Textual node that starts workers (see the module doc).

    ``show_worker_error`` shows the sentence; the default is an error notification on
    the screen the user is on. Views with a status line of their own override it.
    """

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Contain a failed worker of this node."""
        node: object = event.worker.node
        if event.state is WorkerState.ERROR and node is self:
            worker_failed(self, event.worker)

    def show_worker_error(self, text: str) -> None:
        """Show ``text`` (why a worker of this node failed, and where the log is)."""
        app: Any = getattr(self, "app")  # noqa: B009 - a Textual DOMNode's app
        app.notify(text, severity="error", timeout=30, markup=False)
