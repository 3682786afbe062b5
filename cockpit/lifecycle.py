"""Save the incident and exit cleanly on SIGHUP and SIGTERM.

An ssh connection that drops sends ``SIGHUP`` to the session's processes; ``kill`` and
container runtimes send ``SIGTERM``. Python's default for both is to die at once, losing
whatever the user was typing. :class:`ExitGuard` installs handlers that first call the
registered *flushers* (which move pending input, such as a half-typed field, into the
session), save the session, release its write lock and then exit with status
``128 + signum`` (the shell convention for "terminated by signal N").

Used by the Textual app (pass ``exit_callback`` that schedules ``App.exit`` so the terminal
is restored by Textual) and by headless commands (the default callback raises
:class:`SystemExit`, which unwinds ``finally`` blocks normally). No Textual import here.

A dropped ssh connection leaves a dead terminal: every write to it fails (``EIO``), or
blocks when the other end stopped reading. A UI's orderly shutdown writes to it (restore
the screen, show the cursor) and can hang there for ever, holding the incident's lock. The
app therefore passes ``exit_deadline_s``: once the record is saved and the lock released,
a process whose terminal is dead ends at once (``os._exit``; there is no screen to
restore), and one whose terminal lives ends with ``os._exit`` if the orderly exit has not
finished by the deadline; a second signal after the save ends it at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import signal
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterable
from types import FrameType
from typing import Any, Protocol

DEFAULT_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGHUP, signal.SIGTERM)


class _Saves(Protocol):
    """What the guard needs from :class:`cockpit.session.IncidentSession`."""

    def save(self) -> None: ...


def _raise_exit(status: int) -> None:
    raise SystemExit(status)


class ExitGuard:
    """Signal handlers that save the current session before exiting.

    Args:
        session: A callable returning the session to save (or ``None`` when no incident
            is open yet). A callable, because the app may switch incidents.
        exit_callback: Called with the exit status once the session is saved. Default:
            raise ``SystemExit(status)``. The Textual app passes a function that asks the
            app to exit (``app.call_later(app.exit, return_code=status)``), since raising
            inside the event loop would skip restoring the terminal.
        signals: The signals to handle (default SIGHUP and SIGTERM).
        log: Where to report a failed save (default ``sys.stderr``; after SIGHUP the
            terminal may be gone, so write errors there are ignored).
        flush_timeout_s: How long to wait for a background writer (a session with a
            ``flush(timeout)`` method, like the TUI's) to put the last change on disk.
        exit_deadline_s: When set (the TUI), seconds after the save within which the
            process is gone: at once when the terminal is dead, else ``os._exit`` ends an
            exit still stuck at the deadline (the record is on disk and the lock released
            by then). ``None`` (headless commands, tests that signal themselves): the exit
            callback alone ends the process.

    Attributes:
        saved: True once a signal-triggered save succeeded.
        last_error: The exception of a failed save, if any.
        received: The signal number handled, or ``None``.
    """

    def __init__(
        self,
        session: Callable[[], _Saves | None],
        exit_callback: Callable[[int], None] | None = None,
        signals: Iterable[signal.Signals] = DEFAULT_SIGNALS,
        log: Callable[[str], None] | None = None,
        flush_timeout_s: float = 10.0,
        exit_deadline_s: float | None = None,
    ) -> None:
        self._session = session
        self.flush_timeout_s = flush_timeout_s
        self.exit_deadline_s = exit_deadline_s
        self._exit = exit_callback or _raise_exit
        self._signals = tuple(signals)
        self._log = log or _stderr
        self._flushers: list[Callable[[], None]] = []
        self._previous: dict[signal.Signals, Any] = {}
        self._handling = False
        self._done = False
        self.saved = False
        self.last_error: BaseException | None = None
        self.received: int | None = None

    def add_flusher(self, flush: Callable[[], None]) -> None:
        """Register a callable that moves pending input into the session before the save."""
        self._flushers.append(flush)

    def install(self) -> ExitGuard:
        """Install the handlers (main thread only, as :func:`signal.signal` requires).

        Returns:
            ``self``, so ``guard = ExitGuard(...).install()`` reads well.

        Raises:
            ValueError: when called outside the main thread.
        """
        if threading.current_thread() is not threading.main_thread():
            raise ValueError("signal handlers can only be installed from the main thread")
        for sig in self._signals:
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def uninstall(self) -> None:
        """Restore the handlers that were there before :meth:`install`."""
        for sig, prev in self._previous.items():
            signal.signal(sig, prev)
        self._previous.clear()

    def __enter__(self) -> ExitGuard:
        return self.install()

    def __exit__(self, *exc: object) -> None:
        self.uninstall()

    def save_now(self) -> bool:
        """Flush pending input and save; returns whether the save succeeded.

        Errors are recorded in :attr:`last_error` and reported through ``log``, never
        raised: this runs on the way out.
        """
        for flush in list(self._flushers):
            try:
                flush()
            except Exception as exc:  # a broken flusher must not prevent the save
                self.last_error = exc
                self._log(f"cockpit: could not take pending input: {exc}")
        session = self._session()
        if session is None:
            return True
        try:
            session.save()
            # A session that writes in a background thread (the TUI's) must be drained
            # before the process exits, or the daemon writer dies with the last change.
            drain = getattr(session, "flush", None)
            if callable(drain) and not drain(self.flush_timeout_s):
                error = getattr(session, "last_save_error", None)
                raise OSError(f"the incident writer did not finish: {error or 'timed out'}")
        except Exception as exc:
            self.last_error = exc
            self._log(f"cockpit: could not save the incident on exit: {exc}")
            return False
        self.saved = True
        store = getattr(session, "store", None)
        incident = getattr(session, "incident", None)
        if store is not None and incident is not None and hasattr(store, "release"):
            with contextlib.suppress(OSError):
                store.release(incident.id)
        return True

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self._handling:
            # A second signal while saving: keep saving. After the save, the orderly
            # exit is stuck somewhere (a dead terminal): end now, nothing is lost.
            if self._done and self.exit_deadline_s is not None:
                os._exit(128 + signum)
            return
        self._handling = True
        self.received = signum
        self.save_now()
        self._done = True
        if self.exit_deadline_s is not None:
            if terminal_is_dead():
                # Nothing to restore on a terminal that is gone, and the UI's writer may
                # already have died on it: the record is saved, end here.
                detach_terminal()
                os._exit(128 + signum)
            _exit_by(self.exit_deadline_s, 128 + signum)
        self._exit(128 + signum)


def terminal_is_dead(fds: Iterable[int] = (0, 1, 2)) -> bool:
    """True when one of ``fds`` is a terminal that hung up (its ssh connection or
    terminal window is gone: ``tcgetattr`` fails with ``EIO``). A file, pipe or live
    terminal is not dead."""
    for fd in fds:
        try:
            termios.tcgetattr(fd)
        except termios.error as exc:
            if exc.args and exc.args[0] in (errno.EIO, errno.ENXIO):
                return True
        except (OSError, ValueError):
            continue
    return False


def detach_terminal() -> None:
    """Point stdin, stdout and stderr at ``/dev/null``: writes that would fail or block on
    a dead terminal then succeed at once, so an orderly exit can run to its end."""
    try:
        null = os.open(os.devnull, os.O_RDWR)
    except OSError:
        return
    for fd in (0, 1, 2):
        with contextlib.suppress(OSError):
            os.dup2(null, fd)
    os.close(null)


def _exit_by(deadline_s: float, status: int) -> None:
    """End the process with ``status`` after ``deadline_s`` unless it ended before (a
    daemon thread: it dies with an orderly exit)."""

    def watchdog() -> None:
        time.sleep(deadline_s)
        os._exit(status)

    threading.Thread(target=watchdog, name="cockpit-exit-deadline", daemon=True).start()


def _stderr(text: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(text + "\n")
        sys.stderr.flush()


def wake_loop(exit_app: Callable[[int], None]) -> Callable[[int], None]:
    """Wrap ``exit_app`` so that, called from a signal handler, it wakes an asyncio loop.

    A Python signal handler runs on the main thread between two steps of whatever runs
    there; for a Textual app that is the event loop, possibly asleep in ``select()``.
    ``loop.call_soon`` (and Textual's ``call_later``) from there does not wake it, so the
    exit would wait for the next timer (seconds). ``call_soon_threadsafe`` writes to the
    loop's self-pipe and the exit runs at once. Without a running loop ``exit_app`` is
    called directly.

    Example (in the app)::

        install_exit_handlers(lambda: self.ctx.session,
                              wake_loop(lambda status: self.exit(return_code=status)))
    """

    def callback(status: int) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            exit_app(status)
            return
        loop.call_soon_threadsafe(exit_app, status)

    return callback


def install_exit_handlers(
    session: Callable[[], _Saves | None],
    exit_callback: Callable[[int], None] | None = None,
    exit_deadline_s: float | None = None,
) -> ExitGuard:
    """Install SIGHUP/SIGTERM handlers that save ``session()`` and exit.

    Shorthand for ``ExitGuard(session, exit_callback, exit_deadline_s=…).install()``; see
    :class:`ExitGuard`.
    """
    return ExitGuard(session, exit_callback, exit_deadline_s=exit_deadline_s).install()
