"""Incident persistence: one JSON file per incident under the XDG state dir.

Every write is atomic and durable: write a temp file in the same directory, ``fsync`` it,
``rename`` over the target, then ``fsync`` the directory (POSIX ``rename(2)`` replaces the
target atomically within a file system; the directory fsync makes the rename itself
survive a power loss — see ``fsync(2)``: "Calling fsync() does not necessarily ensure that
the entry in the directory containing the file has also reached disk"). A reader therefore
always sees either the previous or the new complete file, never a mix.

Safety rules enforced here:

- **Permissions.** The directory is 0700 and every file 0600 (an incident holds request
  IDs, tenant names and error samples). Existing ones with looser modes are tightened and
  the fix is reported in :attr:`IncidentStore.fixed_permissions`.
- **One writer per incident.** The first save of an incident takes an exclusive
  ``flock(2)`` on the sidecar ``.<id>.lock`` and keeps it until :meth:`IncidentStore.release`
  or process exit (the kernel drops it even on ``SIGKILL``). Another process saving the
  same incident gets :class:`IncidentLocked`, naming the holder's PID, instead of
  silently interleaving its writes. Readers (``load``, ``list``, export) need no lock.
- **Never overwrite what we cannot read.** Before the first write of an id in this
  process (or whenever the file changed under us), the existing file is parsed; when it is
  corrupt or from a newer cockpit, the save refuses with :class:`CorruptIncident` /
  :class:`NewerIncidentSchema` and the file is left as it is.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import logging
import os
import socket
import stat
import tempfile
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from cockpit.i18n import t
from cockpit.incident import SCHEMA_VERSION, Incident

log = logging.getLogger(__name__)

DIR_MODE = 0o700
FILE_MODE = 0o600


class CorruptIncident(Exception):
    """An incident file exists but cannot be read; it is left untouched.

    Attributes:
        path: The file.
        reason: Parser or validation message.
    """

    def __init__(self, path: Path, reason: str) -> None:
        text = f"{path}: cannot read incident ({reason}); the file was left as it is."
        if looks_like_incident_file(path):
            text += f" To start over under this id, move it aside first: mv '{path}' '{aside_path(path)}'"
        super().__init__(text)
        self.path = path
        self.reason = reason

    def message(self, lang: str) -> str:
        """The error for the user, in ``lang`` (``zh``/``en``); the move-aside hint only
        for files that are cockpit's own (never ``mv /etc/passwd``)."""
        key = "store.corrupt" if looks_like_incident_file(self.path) else "store.not_incident"
        return t(
            key,
            lang,
            path=str(self.path),
            reason=self.reason,
            aside=str(aside_path(self.path)),
        )


def looks_like_incident_file(path: Path) -> bool:
    """True for ``inc-*.json`` files (cockpit's own naming), the only ones worth moving aside."""
    return path.suffix == ".json" and path.name.startswith("inc-")


class NewerIncidentSchema(CorruptIncident):
    """The file was written by a newer cockpit (its ``schema_version`` is higher than ours).

    It is not damaged, so it is never overwritten: an older cockpit would drop the fields
    it does not know. Upgrade cockpit to open it.

    Attributes:
        found: The file's schema version.
        supported: The newest version this cockpit reads (:data:`SCHEMA_VERSION`).
    """

    def __init__(self, path: Path, found: int, supported: int = SCHEMA_VERSION) -> None:
        self.found = found
        self.supported = supported
        Exception.__init__(
            self,
            f"{path}: written by a newer cockpit (schema {found}; this cockpit reads up to "
            f"{supported}); upgrade cockpit to open it. The file was left as it is.",
        )
        self.path = path
        self.reason = f"schema_version {found} > {supported}"

    def message(self, lang: str) -> str:
        """The error for the user, in ``lang``."""
        return t(
            "store.newer_schema",
            lang,
            path=str(self.path),
            found=self.found,
            supported=self.supported,
        )


class IncidentLocked(OSError):
    """Another process holds the incident's write lock.

    Attributes:
        path: The incident file.
        holder: What the lock file says about its holder (``"pid 123 on host"``), or ``""``.
    """

    def __init__(self, path: Path, holder: str) -> None:
        super().__init__(
            errno.EWOULDBLOCK,
            f"{path}: incident is open for writing in another cockpit process"
            f"{' (' + holder + ')' if holder else ''}; close that one first or open "
            f"this incident read-only (cockpit export / list)",
        )
        self.path = path
        self.holder = holder

    def message(self, lang: str) -> str:
        """The error for the user, in ``lang``."""
        return t("store.locked", lang, path=str(self.path), holder=self.holder or "?")


def aside_path(path: Path) -> Path:
    """Where to move a file that cannot be read, to keep it for inspection."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return path.with_name(f"{path.name}.corrupt-{stamp}")


def _fsync_dir(directory: Path) -> None:
    dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def atomic_write_bytes(path: Path, data: bytes, mode: int = FILE_MODE) -> Path:
    """Write ``data`` to ``path`` atomically and durably (temp, fsync, rename, dir fsync).

    Args:
        path: Target file; its directory must exist.
        data: The complete new content.
        mode: Permission bits of the new file (default 0600).

    Returns:
        ``path``.

    Raises:
        OSError: directory not writable, disk full, …; the previous content is intact.
    """
    path = Path(path)
    directory = path.parent
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(directory)
    return path


@dataclass(frozen=True)
class _Seen:
    """Identity of a file version this process wrote or read successfully."""

    ino: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> _Seen:
        return cls(st.st_ino, st.st_size, st.st_mtime_ns)


class IncidentStore:
    """Reads and writes incidents in ``root`` (created 0700 on first use).

    Args:
        root: Directory for ``<id>.json`` files (and their ``.<id>.lock`` sidecars).

    Attributes:
        fixed_permissions: Human-readable notes about modes tightened on existing files
            or the directory (``"/path: 0644 -> 0600"``), for the UI to mention once.
    """

    SUFFIX = ".json"
    LOCK_SUFFIX = ".lock"

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.fixed_permissions: list[str] = []
        self._locks: dict[str, int] = {}
        self._seen: dict[str, _Seen] = {}
        # Re-entrant: a SIGHUP/SIGTERM handler may save while the main thread is saving.
        self._mutex = threading.RLock()
        self._dir_checked = False

    # -- permissions ---------------------------------------------------------------------
    def _ensure_dir(self) -> None:
        if self._dir_checked:
            return
        self.root.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
        self._fix_mode(self.root, DIR_MODE)
        self._dir_checked = True

    def _fix_mode(self, path: Path, want: int) -> None:
        """Tighten ``path`` to ``want`` when group/other have any access.

        Raises:
            PermissionError: the mode is too open and we cannot change it (not the owner).
        """
        st = os.stat(path)
        have = stat.S_IMODE(st.st_mode)
        if have & 0o077 == 0:
            return
        try:
            os.chmod(path, want)
        except PermissionError as exc:
            raise PermissionError(
                exc.errno,
                f"{path} is accessible to other users (mode {have:04o}) and cannot be "
                f"changed to {want:04o}: {exc.strerror}",
            ) from exc
        note = f"{path}: {have:04o} -> {want:04o}"
        self.fixed_permissions.append(note)
        log.info("tightened permissions of %s", note)

    # -- paths ---------------------------------------------------------------------------
    def path_for(self, incident_id: str) -> Path:
        """The file of ``incident_id`` (ids are validated to be plain file names)."""
        if (
            not incident_id
            or "/" in incident_id
            or "\\" in incident_id
            or "\0" in incident_id
            or incident_id.startswith(".")
        ):
            raise ValueError(f"bad incident id: {incident_id!r}")
        return self.root / f"{incident_id}{self.SUFFIX}"

    def lock_path_for(self, incident_id: str) -> Path:
        """The sidecar lock file of ``incident_id`` (hidden, so listings skip it)."""
        self.path_for(incident_id)
        return self.root / f".{incident_id}{self.LOCK_SUFFIX}"

    # -- locking -------------------------------------------------------------------------
    def acquire(self, incident_id: str) -> None:
        """Take the exclusive write lock of ``incident_id`` (no-op when already held).

        Also removes temp files a killed writer of this incident left behind (safe: only
        the lock holder writes them).

        Raises:
            IncidentLocked: another process holds it.
            OSError: the lock file cannot be created.
        """
        with self._mutex:
            if incident_id in self._locks:
                return
            self._ensure_dir()
            lock_path = self.lock_path_for(incident_id)
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = ""
                with contextlib.suppress(OSError, UnicodeDecodeError):
                    holder = os.pread(fd, 256, 0).decode("utf-8").strip()
                os.close(fd)
                raise IncidentLocked(self.path_for(incident_id), holder) from None
            except BaseException:
                os.close(fd)
                raise
            with contextlib.suppress(OSError):
                os.fchmod(fd, FILE_MODE)
                info = f"pid {os.getpid()} on {socket.gethostname()}".encode()
                os.ftruncate(fd, 0)
                os.pwrite(fd, info, 0)
            self._locks[incident_id] = fd
            self._remove_stale_temps(incident_id)

    def release(self, incident_id: str) -> None:
        """Drop the write lock of ``incident_id`` (no-op when not held)."""
        with self._mutex:
            fd = self._locks.pop(incident_id, None)
            self._seen.pop(incident_id, None)
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, 0)
                os.close(fd)

    def release_all(self) -> None:
        """Drop every lock this store holds."""
        for incident_id in list(self._locks):
            self.release(incident_id)

    def __del__(self) -> None:
        # A store dropped without release() must not keep its incidents locked.
        with contextlib.suppress(Exception):
            for fd in self._locks.values():
                os.close(fd)
            self._locks.clear()

    def holds(self, incident_id: str) -> bool:
        """Whether this store holds the write lock of ``incident_id``."""
        return incident_id in self._locks

    def _remove_stale_temps(self, incident_id: str) -> None:
        name = f"{incident_id}{self.SUFFIX}"
        for tmp in self.root.glob(f".{name}.*.tmp"):
            with contextlib.suppress(OSError):
                tmp.unlink()

    # -- writing -------------------------------------------------------------------------
    def save(self, incident: Incident) -> Path:
        """Write ``incident`` atomically and durably; returns its path.

        The first save of an id takes its write lock (see :meth:`acquire`) and checks the
        existing file, if any, is readable.

        Raises:
            IncidentLocked: another process is writing this incident.
            CorruptIncident: the existing file cannot be read (it is left untouched;
                the message says where it is and how to move it aside).
            NewerIncidentSchema: the existing file is from a newer cockpit.
            OSError: when the directory is not writable or the disk is full; the previous
                file content is intact in that case.
        """
        data = incident.model_dump_json(indent=1).encode("utf-8")
        with self._mutex:
            self.acquire(incident.id)
            target = self.path_for(incident.id)
            self._check_overwritable(incident.id, target)
            atomic_write_bytes(target, data, FILE_MODE)
            self._seen[incident.id] = _Seen.of(os.stat(target))
        return target

    def _check_overwritable(self, incident_id: str, target: Path) -> None:
        try:
            st = os.stat(target)
        except FileNotFoundError:
            return
        if self._seen.get(incident_id) == _Seen.of(st):
            return
        self._fix_mode(target, FILE_MODE)
        self.load_path(target)  # raises CorruptIncident / NewerIncidentSchema

    # -- reading -------------------------------------------------------------------------
    def load(self, incident_id: str) -> Incident:
        """Read one incident.

        Raises:
            FileNotFoundError: no such incident.
            CorruptIncident: the file is not a valid incident.
            NewerIncidentSchema: the file is from a newer cockpit.
        """
        path = self.path_for(incident_id)
        if path.exists():
            with contextlib.suppress(OSError):
                self._fix_mode(path, FILE_MODE)
        return self.load_path(path)

    @staticmethod
    def load_path(path: Path) -> Incident:
        """Read an incident file by path (same errors as :meth:`load`)."""
        path = Path(path)
        raw = path.read_bytes()
        try:
            doc: Any = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise CorruptIncident(path, str(exc).splitlines()[0]) from exc
        if not isinstance(doc, dict):
            raise CorruptIncident(path, f"expected a JSON object, found {type(doc).__name__}")
        version = doc.get("schema_version")
        if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
            raise NewerIncidentSchema(path, version)
        try:
            return Incident.model_validate(doc)
        except ValidationError as exc:
            errors = exc.errors()
            if errors:
                where = ".".join(str(p) for p in errors[0]["loc"])
                detail = f"{where}: {errors[0]['msg']}"
            else:
                detail = str(exc).splitlines()[0]
            raise CorruptIncident(path, f"{exc.error_count()} invalid field(s), {detail}") from exc

    def list(self) -> list[tuple[Path, Incident | CorruptIncident]]:
        """Every incident file, newest first (by ``updated_at``, unreadable ones last)."""
        if not self.root.is_dir():
            return []
        out: list[tuple[Path, Incident | CorruptIncident]] = []
        for path in self.root.glob(f"*{self.SUFFIX}"):
            if path.name.startswith("."):
                continue
            try:
                out.append((path, self.load_path(path)))
            except CorruptIncident as exc:
                out.append((path, exc))
            except OSError as exc:
                out.append((path, CorruptIncident(path, str(exc))))

        def key(item: tuple[Path, Incident | CorruptIncident]) -> tuple[int, float, str]:
            inc = item[1]
            if isinstance(inc, Incident):
                return (0, -inc.updated_at.timestamp(), item[0].name)
            return (1, 0.0, item[0].name)

        out.sort(key=key)
        return out

    def latest_open(self) -> Incident | None:
        """The most recently updated incident whose status is ``open``."""
        for _, inc in self.list():
            if isinstance(inc, Incident) and inc.status == "open":
                return inc
        return None

    def latest(self) -> Incident | None:
        """The most recently updated readable incident, open or closed."""
        for _, inc in self.list():
            if isinstance(inc, Incident):
                return inc
        return None
