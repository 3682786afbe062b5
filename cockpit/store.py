"""Incident persistence: one JSON file per incident under the XDG state dir.

Every write is atomic and durable: write a temp file in the same directory, ``fsync`` it,
``rename`` over the target, then ``fsync`` the directory (POSIX ``rename(2)`` replaces the
target atomically within a file system; the directory fsync makes the rename itself
survive a power loss — see ``fsync(2)``: "Calling fsync() does not necessarily ensure that
the entry in the directory containing the file has also reached disk"). A reader therefore
always sees either the previous or the new complete file, never a mix.

Safety rules enforced here:

- **Permissions.** The directory is 0700 and every file 0600 (an incident holds request
  IDs, tenant names and error samples). Files with looser modes are tightened and the fix
  is reported in :attr:`IncidentStore.fixed_permissions`. A directory is tightened only
  when cockpit created it (it leaves the marker file :data:`MARKER` in it); one it did not
  create (a link to a shared folder, a directory made by hand) is never changed, only
  reported in :attr:`IncidentStore.warnings`.
- **No symbolic links.** Files are opened with ``O_NOFOLLOW`` and checked to be regular
  files before they are read for a rewrite, chmodded or replaced: a link planted in the
  state directory (to ``~/.ssh/...`` or another user's file) is refused with
  :class:`UnsafeIncidentPath`, never followed.
- **One writer per incident.** The first save of an incident takes an exclusive
  ``flock(2)`` on the sidecar ``.<id>.lock`` and keeps it until :meth:`IncidentStore.release`
  or process exit (the kernel drops it even on ``SIGKILL``). Another process saving the
  same incident gets :class:`IncidentLocked`, naming the holder's PID, instead of
  silently interleaving its writes. Readers (``load``, ``list``, export) need no lock.
  A lock whose recorded holder is a process of this host that no longer exists (the lock
  lives on in a child that inherited it) is stale: it is taken over — the lock file is
  replaced by a new one — and :attr:`IncidentStore.warnings` says so.
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
from cockpit.incident import SCHEMA_VERSION, Incident, IncidentStatus

log = logging.getLogger(__name__)

DIR_MODE = 0o700
FILE_MODE = 0o600
MARKER = ".cockpit-state-dir"
"""File cockpit leaves in a state directory it created: only such a directory (owned by
this user, not a link) has its permissions tightened."""


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


class UnsafeIncidentPath(CorruptIncident):
    """A path in the state directory is a symbolic link or not a regular file; cockpit
    neither follows nor replaces it (a link planted there could make it write or chmod
    another file).

    Attributes:
        what: ``"symlink"`` or ``"not_regular"``.
    """

    def __init__(self, path: Path, what: str) -> None:
        self.what = what
        kind = "a symbolic link" if what == "symlink" else "not a regular file"
        Exception.__init__(
            self,
            f"{path} is {kind}; cockpit does not follow or replace it. Remove it (or put "
            f"the incident file itself there) and the next change is saved.",
        )
        self.path = path
        self.reason = kind

    def message(self, lang: str) -> str:
        """The error for the user, in ``lang``."""
        return t(f"store.unsafe_{self.what}", lang, path=str(self.path))


def open_nofollow(path: Path, flags: int = os.O_RDONLY, mode: int = FILE_MODE) -> int:
    """``os.open`` that never follows a symbolic link and only opens regular files.

    Returns:
        The file descriptor (close-on-exec).

    Raises:
        UnsafeIncidentPath: ``path`` is a link (``ELOOP`` from ``O_NOFOLLOW``) or not a
            regular file (a FIFO is opened non-blocking, so this never hangs).
        OSError: any other error of ``open(2)``.
    """
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafeIncidentPath(Path(path), "symlink") from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UnsafeIncidentPath(Path(path), "not_regular")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


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


def dir_problem(root: Path) -> tuple[str, dict[str, str]] | None:
    """What is wrong with the state directory ``root`` for keeping private records, as
    ``(i18n key, params)``, or ``None`` when it is a directory of this user that no one
    else can reach.

    ``store.dir_owner``: owned by another user (root's ``/tmp``, a colleague's folder);
    ``store.dir_loose``: group or other have any access (``0755``, a shared ``1777``).
    A link is judged by the directory it points to, and named as a link.

    Raises:
        OSError: ``root`` cannot be examined (missing, no permission).
    """
    st = os.stat(root)
    link = os.path.islink(root)
    where = f"{root} -> {os.path.realpath(root)}" if link else str(root)
    mode = stat.S_IMODE(st.st_mode)
    if st.st_uid != os.geteuid():
        return ("store.dir_owner", {"path": where, "uid": str(st.st_uid), "mode": f"{mode:04o}"})
    if mode & 0o077:
        return ("store.dir_loose", {"path": where, "mode": f"{mode:04o}"})
    return None


def dead_local_pid(holder: str) -> int | None:
    """The PID a lock file names (``"pid 123 on host"``) when it is on this host and no
    such process exists; ``None`` otherwise (alive, another host, or unreadable)."""
    parts = holder.split()
    if len(parts) != 4 or parts[0] != "pid" or parts[2] != "on" or not parts[1].isdigit():
        return None
    if parts[3] != socket.gethostname():
        return None
    pid = int(parts[1])
    if pid <= 0 or pid == os.getpid():
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return pid
    except OSError:
        return None  # alive, another user's
    return None


def write_atomic(path: Path, text: str, *, follow_links: bool = True) -> Path:
    """Write a text file (an export) to ``path`` atomically with mode 0600, creating its
    directory (0700).

    For a path the user named (``-o FILE``) a symbolic link is followed (its target is
    replaced, the link stays); a path that is not a regular file (a FIFO, ``/dev/stdout``,
    a device) is written to as it is, never replaced by a file. With
    ``follow_links=False`` (files under the state directory, where a planted link could
    point anywhere) anything but a regular file or nothing is refused.

    Returns:
        The path written (the link's target for a link).

    Raises:
        UnsafeIncidentPath: ``follow_links`` is false and ``path`` is a link or not a
            regular file.
        OSError: the directory cannot be created or written, or the device refuses the
            data (``/dev/full``); an existing regular file is intact.
    """
    path = Path(path).expanduser()
    if not follow_links and os.path.lexists(path):
        mode = os.lstat(path).st_mode
        if stat.S_ISLNK(mode):
            raise UnsafeIncidentPath(path, "symlink")
        if not stat.S_ISREG(mode):
            raise UnsafeIncidentPath(path, "not_regular")
    if path.is_symlink():
        path = path.resolve()
    data = text.encode("utf-8")
    try:
        st = path.stat()
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        with open(path, "wb") as fh:
            fh.write(data)
        return path
    path.parent.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    return atomic_write_bytes(path, data, FILE_MODE)


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
        warnings: What the UI should say once, as ``(i18n key, params)``: a state
            directory cockpit did not create that other users can reach (left as it is),
            a stale lock taken over.
    """

    SUFFIX = ".json"
    LOCK_SUFFIX = ".lock"

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.fixed_permissions: list[str] = []
        self.warnings: list[tuple[str, dict[str, str]]] = []
        self._locks: dict[str, int] = {}
        self._seen: dict[str, _Seen] = {}
        # Re-entrant: a SIGHUP/SIGTERM handler may save while the main thread is saving.
        self._mutex = threading.RLock()
        self._dir_checked = False

    # -- permissions ---------------------------------------------------------------------
    def ensure_dir(self) -> None:
        """Create the directory (0700, with :data:`MARKER`) when missing; tighten it when
        cockpit created it, otherwise note in :attr:`warnings` what is unsafe about it.

        Raises:
            OSError: it cannot be created or examined.
        """
        if self._dir_checked:
            return
        try:
            self.root.mkdir(parents=True, mode=DIR_MODE)
        except FileExistsError:
            pass
        else:
            self._leave_marker()
        problem = dir_problem(self.root)
        if problem is not None:
            if problem[0] == "store.dir_loose" and self._created_by_cockpit():
                self._tighten_dir()
            else:
                self.warnings.append(problem)
                log.warning("state directory %s: %s", self.root, problem)
        self._dir_checked = True

    def _leave_marker(self) -> None:
        with contextlib.suppress(OSError):
            fd = os.open(
                self.root / MARKER,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                FILE_MODE,
            )
            os.write(fd, b"created by cockpit, which keeps this directory private (0700)\n")
            os.close(fd)

    def _created_by_cockpit(self) -> bool:
        try:
            st = os.lstat(self.root)
            marker = os.lstat(self.root / MARKER)
        except OSError:
            return False
        uid = os.geteuid()
        return (
            stat.S_ISDIR(st.st_mode)
            and st.st_uid == uid
            and stat.S_ISREG(marker.st_mode)
            and marker.st_uid == uid
        )

    def _tighten_dir(self) -> None:
        fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            have = stat.S_IMODE(os.fstat(fd).st_mode)
            os.fchmod(fd, DIR_MODE)
        finally:
            os.close(fd)
        note = f"{self.root}: {have:04o} -> {DIR_MODE:04o}"
        self.fixed_permissions.append(note)
        log.info("tightened permissions of %s", note)

    def _fix_mode(self, path: Path, want: int) -> None:
        """Tighten the regular file ``path`` to ``want`` when group/other have any access
        (through its descriptor: a link is never followed).

        Raises:
            UnsafeIncidentPath: ``path`` is a link or not a regular file.
            PermissionError: the mode is too open and we cannot change it (not the owner).
        """
        fd = open_nofollow(path)
        try:
            have = stat.S_IMODE(os.fstat(fd).st_mode)
            if have & 0o077 == 0:
                return
            try:
                os.fchmod(fd, want)
            except PermissionError as exc:
                raise PermissionError(
                    exc.errno,
                    f"{path} is accessible to other users (mode {have:04o}) and cannot be "
                    f"changed to {want:04o}: {exc.strerror}",
                ) from exc
        finally:
            os.close(fd)
        note = f"{path}: {have:04o} -> {want:04o}"
        self.fixed_permissions.append(note)
        log.info("tightened permissions of %s", note)

    def warning_texts(self, lang: str) -> list[str]:
        """:attr:`warnings` and :attr:`fixed_permissions` as sentences in ``lang``."""
        return [t(key, lang, **params) for key, params in self.warnings] + [
            t("store.permissions_fixed", lang, what=note) for note in self.fixed_permissions
        ]

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
            self.ensure_dir()
            lock_path = self.lock_path_for(incident_id)
            fd = self._take_lock(incident_id, lock_path)
            with contextlib.suppress(OSError):
                os.fchmod(fd, FILE_MODE)
                info = f"pid {os.getpid()} on {socket.gethostname()}".encode()
                os.ftruncate(fd, 0)
                os.pwrite(fd, info, 0)
            self._locks[incident_id] = fd
            self._remove_stale_temps(incident_id)

    @staticmethod
    def _try_lock(fd: int) -> str | None:
        """``None`` when the exclusive lock on ``fd`` was taken, else what the lock file
        says about its holder (``""`` when unreadable)."""
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            with contextlib.suppress(OSError, UnicodeDecodeError):
                return os.pread(fd, 256, 0).decode("utf-8").strip()
            return ""
        return None

    def _take_lock(self, incident_id: str, lock_path: Path) -> int:
        fd = open_nofollow(lock_path, os.O_RDWR | os.O_CREAT)
        try:
            holder = self._try_lock(fd)
            if holder is None:
                return fd
            dead = dead_local_pid(holder)
            if dead is None:
                raise IncidentLocked(self.path_for(incident_id), holder)
            same_file = os.lstat(lock_path).st_ino == os.fstat(fd).st_ino
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
        return self._take_over(incident_id, lock_path, same_file, dead, holder)

    def _take_over(
        self, incident_id: str, lock_path: Path, same_file: bool, pid: int, holder: str
    ) -> int:
        """Replace a lock file whose holder (``pid``, on this host) is gone but whose lock
        lives on in a process that inherited it; returns the descriptor of the new, locked
        file. A guard lock makes two cockpits that find the same stale lock take turns;
        the second sees that the file was replaced and finds the first one's lock."""
        guard_path = lock_path.with_name(lock_path.name + ".takeover")
        guard = open_nofollow(guard_path, os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(guard, fcntl.LOCK_EX)
            stale = open_nofollow(lock_path, os.O_RDWR | os.O_CREAT)
            try:
                # Only the file found stale is removed, never one another cockpit has
                # just put in its place.
                if same_file and self._try_lock(stale) == holder:
                    os.unlink(lock_path)
            finally:
                os.close(stale)
            fd = open_nofollow(lock_path, os.O_RDWR | os.O_CREAT)
            now = self._try_lock(fd)
            if now is not None:
                os.close(fd)
                raise IncidentLocked(self.path_for(incident_id), now)
        finally:
            os.close(guard)
        self.warnings.append(
            ("store.stale_lock", {"path": str(self.path_for(incident_id)), "pid": str(pid)})
        )
        log.warning("took over the stale lock of %s (%s no longer runs)", incident_id, holder)
        return fd

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
            UnsafeIncidentPath: the incident or lock file is a symbolic link (or not a
                regular file); it is neither followed nor replaced.
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
            st = os.lstat(target)
        except FileNotFoundError:
            return
        if stat.S_ISLNK(st.st_mode):
            raise UnsafeIncidentPath(target, "symlink")
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeIncidentPath(target, "not_regular")
        if self._seen.get(incident_id) == _Seen.of(st):
            return
        self._fix_mode(target, FILE_MODE)
        self.load_path(target, follow=False)  # raises CorruptIncident / NewerIncidentSchema

    # -- reading -------------------------------------------------------------------------
    def load(self, incident_id: str) -> Incident:
        """Read one incident.

        Raises:
            FileNotFoundError: no such incident.
            CorruptIncident: the file is not a valid incident.
            NewerIncidentSchema: the file is from a newer cockpit.
            UnsafeIncidentPath: the file is a symbolic link or not a regular file (it is
                neither read nor chmodded).
        """
        path = self.path_for(incident_id)
        if os.path.lexists(path):
            with contextlib.suppress(PermissionError):
                self._fix_mode(path, FILE_MODE)
        return self.load_path(path, follow=False)

    @staticmethod
    def load_path(path: Path, *, follow: bool = True) -> Incident:
        """Read an incident file by path (same errors as :meth:`load`).

        Args:
            path: The file.
            follow: False for files in the state directory: a symbolic link is refused
                (:class:`UnsafeIncidentPath`) instead of read. True for a path the user
                names on the command line.
        """
        path = Path(path)
        if follow:
            raw = path.read_bytes()
        else:
            fd = open_nofollow(path)
            with os.fdopen(fd, "rb") as fh:
                raw = fh.read()
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
            incident = Incident.model_validate(doc)
        except ValidationError as exc:
            errors = exc.errors()
            if errors:
                where = ".".join(str(p) for p in errors[0]["loc"])
                detail = f"{where}: {errors[0]['msg']}"
            else:
                detail = str(exc).splitlines()[0]
            raise CorruptIncident(path, f"{exc.error_count()} invalid field(s), {detail}") from exc
        # An older file was brought to this shape while it was read (see
        # Experiment._structure_old_change); it is saved as this version from now on.
        incident.schema_version = SCHEMA_VERSION
        return incident

    def list(self) -> list[tuple[Path, Incident | CorruptIncident]]:
        """Every incident file, newest first (by ``updated_at``, unreadable ones last)."""
        if not self.root.is_dir():
            return []
        out: list[tuple[Path, Incident | CorruptIncident]] = []
        for path in self.root.glob(f"*{self.SUFFIX}"):
            if path.name.startswith("."):
                continue
            try:
                out.append((path, self.load_path(path, follow=False)))
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
            if isinstance(inc, Incident) and inc.status is IncidentStatus.OPEN:
                return inc
        return None

    def latest(self) -> Incident | None:
        """The most recently updated readable incident, open or closed."""
        for _, inc in self.list():
            if isinstance(inc, Incident):
                return inc
        return None
