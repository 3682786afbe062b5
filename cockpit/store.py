"""Incident persistence: one JSON file per incident under the XDG state dir.

Every write is atomic and durable: write a temp file in the same directory, ``fsync`` it,
``rename`` over the target, then ``fsync`` the directory (POSIX rename is atomic within a
file system; the directory fsync makes the rename itself survive a crash). Files are 0600,
the directory 0700. A file that fails to parse raises :class:`CorruptIncident` and is never
overwritten.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

from pydantic import ValidationError

from cockpit.incident import Incident


class CorruptIncident(Exception):
    """An incident file exists but cannot be read; it is left untouched.

    Attributes:
        path: The file.
        reason: Parser or validation message.
    """

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: cannot read incident ({reason}); the file was left as it is")
        self.path = path
        self.reason = reason


class IncidentStore:
    """Reads and writes incidents in ``root`` (created 0700 on first use).

    Args:
        root: Directory for ``<id>.json`` files.
    """

    SUFFIX = ".json"

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _ensure_dir(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        with contextlib.suppress(OSError):
            os.chmod(self.root, 0o700)

    def path_for(self, incident_id: str) -> Path:
        """The file of ``incident_id`` (ids are validated to be plain file names)."""
        if not incident_id or "/" in incident_id or incident_id.startswith("."):
            raise ValueError(f"bad incident id: {incident_id!r}")
        return self.root / f"{incident_id}{self.SUFFIX}"

    def save(self, incident: Incident) -> Path:
        """Write ``incident`` atomically and durably; returns its path.

        Raises:
            OSError: when the directory is not writable or the disk is full; the previous
                file content is intact in that case.
        """
        self._ensure_dir()
        target = self.path_for(incident.id)
        data = incident.model_dump_json(indent=1).encode("utf-8")
        fd, tmp = tempfile.mkstemp(prefix=f".{incident.id}.", suffix=".tmp", dir=self.root)
        try:
            os.fchmod(fd, 0o600)
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
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        dfd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
        return target

    def load(self, incident_id: str) -> Incident:
        """Read one incident.

        Raises:
            FileNotFoundError: no such incident.
            CorruptIncident: the file is not a valid incident.
        """
        return self.load_path(self.path_for(incident_id))

    @staticmethod
    def load_path(path: Path) -> Incident:
        """Read an incident file by path (same errors as :meth:`load`)."""
        raw = Path(path).read_bytes()
        try:
            return Incident.model_validate_json(raw)
        except (ValidationError, ValueError, json.JSONDecodeError) as exc:
            raise CorruptIncident(Path(path), str(exc).splitlines()[0]) from exc

    def list(self) -> list[tuple[Path, Incident | CorruptIncident]]:
        """Every incident file, newest first (by ``updated_at``, corrupt ones last)."""
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

        def key(item: tuple[Path, Incident | CorruptIncident]) -> tuple[int, float]:
            inc = item[1]
            if isinstance(inc, Incident):
                return (0, -inc.updated_at.timestamp())
            return (1, 0.0)

        out.sort(key=key)
        return out

    def latest_open(self) -> Incident | None:
        """The most recently updated incident whose status is ``open``."""
        for _, inc in self.list():
            if isinstance(inc, Incident) and inc.status == "open":
                return inc
        return None
