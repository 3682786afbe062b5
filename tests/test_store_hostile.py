"""The save path against a hostile or failing state directory: planted symbolic links are
never followed (neither written through nor chmodded), directories cockpit did not create
are never chmodded, a stale lock of a dead process is taken over, and the background
writer survives a replaced or damaged incident file and saves later edits once it is
repaired."""

from __future__ import annotations

import fcntl
import os
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.incident import Incident
from cockpit.session import IncidentSession
from cockpit.store import (
    CorruptIncident,
    IncidentLocked,
    IncidentStore,
    UnsafeIncidentPath,
)


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _saved(root: Path, incident_id: str = "inc-a") -> IncidentSession:
    session = IncidentSession(IncidentStore(root), Incident(id=incident_id, title="t"))
    session.save()
    return session


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "victim.txt"
    victim.write_text("someone else's file\n")
    os.chmod(victim, 0o644)
    return victim


def test_incident_swapped_for_a_symlink_is_neither_written_nor_chmodded(tmp_path: Path) -> None:
    root = tmp_path / "state"
    session = _saved(root)
    victim = _victim(tmp_path)
    target = root / "inc-a.json"
    target.unlink()
    target.symlink_to(victim)
    with pytest.raises(UnsafeIncidentPath) as info:
        session.set_text("impact", "after the swap")
    assert "symbolic link" in str(info.value)
    assert target.is_symlink()
    assert victim.read_text() == "someone else's file\n"
    assert _mode(victim) == 0o644
    assert "符号链接" in info.value.message("zh")


def test_load_and_export_of_a_linked_incident_refuse_without_chmod(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "state"
    _saved(root).store.release_all()
    real = tmp_path / "elsewhere.json"
    os.replace(root / "inc-a.json", real)
    os.chmod(real, 0o644)
    (root / "inc-a.json").symlink_to(real)

    with pytest.raises(UnsafeIncidentPath):
        IncidentStore(root).load("inc-a")
    rc = main(["--state-dir", str(root), "--lang", "en", "export", "inc-a"])
    err = capsys.readouterr().err
    assert rc == 1
    assert "symbolic link" in err
    assert _mode(real) == 0o644
    listed = IncidentStore(root).list()
    assert [type(item) for _, item in listed] == [UnsafeIncidentPath]


def test_lock_file_symlink_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "state"
    _saved(root).store.release_all()
    victim = _victim(tmp_path)
    lock = root / ".inc-a.lock"
    lock.unlink()
    lock.symlink_to(victim)
    store = IncidentStore(root)
    with pytest.raises(UnsafeIncidentPath):
        store.save(Incident(id="inc-a"))
    assert victim.read_text() == "someone else's file\n"
    assert _mode(victim) == 0o644


def test_export_file_under_the_state_dir_never_follows_a_link(tmp_path: Path) -> None:
    root = tmp_path / "state"
    session = _saved(root)
    victim = _victim(tmp_path)
    exports = root / "exports"
    exports.mkdir(mode=0o700)
    (exports / "inc-a.en.md").symlink_to(victim)
    with pytest.raises(UnsafeIncidentPath):
        session.write_export("# export\n", "en", "md")
    assert victim.read_text() == "someone else's file\n"
    assert session.write_export("# export\n", "zh", "md").read_text() == "# export\n"


def _doctor_state_line(capsys: pytest.CaptureFixture[str]) -> str:
    return next(x for x in capsys.readouterr().out.splitlines() if "Incident directory" in x)


def test_shared_state_dir_is_not_chmodded_and_doctor_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    link = tmp_path / "state"
    link.symlink_to(shared)

    session = _saved(link)
    assert stat.S_IMODE(os.stat(shared).st_mode) == 0o1777
    texts = session.store.warning_texts("en")
    assert any("1777" in line and "left it as it is" in line for line in texts), texts

    rc = main(["--state-dir", str(link), "--lang", "en", "doctor"])
    line = _doctor_state_line(capsys)
    assert line.startswith("✗"), line
    assert "1777" in line
    assert rc == 1
    assert stat.S_IMODE(os.stat(shared).st_mode) == 0o1777


def test_doctor_fails_a_0777_state_dir_and_passes_a_private_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    loose = tmp_path / "loose"
    loose.mkdir()
    os.chmod(loose, 0o777)
    main(["--state-dir", str(loose), "--lang", "en", "doctor"])
    line = _doctor_state_line(capsys)
    assert line.startswith("✗") and "0777" in line, line
    assert _mode(loose) == 0o777

    private = tmp_path / "private"
    main(["--state-dir", str(private), "--lang", "en", "doctor"])
    line = _doctor_state_line(capsys)
    assert line.startswith("✓") and "0700" in line, line


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _hold_lock(root: Path, holder: str) -> int:
    """Hold the incident's lock the way a child that inherited it does: the flock is
    alive, the process the lock file names is not (or is)."""
    fd = os.open(root / ".inc-a.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.ftruncate(fd, 0)
    os.pwrite(fd, holder.encode(), 0)
    return fd


def test_stale_lock_of_a_dead_pid_is_taken_over_with_a_message(tmp_path: Path) -> None:
    root = tmp_path / "state"
    _saved(root).store.release_all()
    pid = _dead_pid()
    fd = _hold_lock(root, f"pid {pid} on {socket.gethostname()}")
    try:
        store = IncidentStore(root)
        store.save(Incident(id="inc-a", title="taken over"))
        assert store.holds("inc-a")
        texts = store.warning_texts("en")
        assert any(str(pid) in line and "taken over" in line for line in texts), texts
        # The new lock is exclusive: a third process is refused while this one holds it.
        with pytest.raises(IncidentLocked):
            IncidentStore(root).acquire("inc-a")
    finally:
        os.close(fd)


def test_lock_of_a_live_process_is_not_taken_over(tmp_path: Path) -> None:
    root = tmp_path / "state"
    _saved(root).store.release_all()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    fd = _hold_lock(root, f"pid {sleeper.pid} on {socket.gethostname()}")
    try:
        with pytest.raises(IncidentLocked) as info:
            IncidentStore(root).acquire("inc-a")
        assert str(sleeper.pid) in info.value.holder
    finally:
        os.close(fd)
        sleeper.kill()
        sleeper.wait()


def _wait(predicate, seconds: float = 10.0) -> bool:  # type: ignore[no-untyped-def]
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


@pytest.mark.parametrize("damage", ["garbage", "symlink"])
def test_background_writer_survives_a_replaced_file_and_saves_once_repaired(
    tmp_path: Path, damage: str
) -> None:
    root = tmp_path / "state"
    results: list[BaseException | None] = []
    session = IncidentSession(
        IncidentStore(root), Incident(id="inc-a", title="t"), on_save_result=results.append
    )
    session.save()
    session.start_background()
    session.RETRY_S = 0.2
    target = root / "inc-a.json"
    session.set_text("impact", "before")
    assert session.flush(5)
    good = target.read_bytes()

    if damage == "garbage":
        target.write_bytes(b'{"schema_version": 1, "id": "inc-a", "titl')
    else:
        victim = _victim(tmp_path)
        target.unlink()
        target.symlink_to(victim)
    session.set_text("impact", "during the damage")
    assert _wait(lambda: session.last_save_error is not None)
    assert isinstance(session.last_save_error, CorruptIncident)
    assert results and isinstance(results[0], CorruptIncident)
    writer = session._writer
    assert writer is not None and writer.is_alive()
    session.set_text("symptoms", "typed while broken")
    session.add_error_sample("503 for tenant-7", request_id="req-1")
    assert session.incident.impact == "during the damage"

    # Repair: the damaged file (or the link) is moved aside; no new edit is needed.
    os.replace(target, root / "inc-a.json.corrupt")
    assert _wait(lambda: session.last_save_error is None)
    assert results[-1] is None
    saved = IncidentStore.load_path(target)
    assert saved.impact == "during the damage"
    assert saved.symptoms == "typed while broken"
    assert [s.request_id for s in saved.collect.error_samples] == ["req-1"]
    assert good != target.read_bytes()
    session.set_text("impact", "after")
    assert session.flush(5)
    assert IncidentStore.load_path(target).impact == "after"
    if damage == "symlink":
        assert (tmp_path / "victim.txt").read_text() == "someone else's file\n"
    session.stop()


def test_background_writer_survives_an_unexpected_exception(tmp_path: Path) -> None:
    """Not only OSError: a failure of any kind inside the write keeps the writer alive."""
    root = tmp_path / "state"
    store = IncidentStore(root)
    session = IncidentSession(store, Incident(id="inc-a", title="t"))
    session.save()
    session.start_background()
    session.RETRY_S = 0.2
    real_save = store.save
    broken = threading.Event()
    broken.set()

    def flaky(incident: Incident) -> Path:
        if broken.is_set():
            raise RuntimeError("serialiser bug")
        return real_save(incident)

    store.save = flaky  # type: ignore[method-assign]
    session.set_text("impact", "kept")
    assert _wait(lambda: isinstance(session.last_save_error, RuntimeError))
    broken.clear()
    assert _wait(lambda: session.last_save_error is None)
    assert IncidentStore.load_path(root / "inc-a.json").impact == "kept"
    session.stop()


async def test_the_tui_says_at_once_that_the_file_was_damaged_and_when_it_saves_again(
    tmp_path: Path,
) -> None:
    from cockpit.app import CockpitApp
    from testkit import make_ctx

    ctx = make_ctx(tmp_path, lang="en")
    session = ctx.session
    session.start_background()
    session.RETRY_S = 0.2
    app = CockpitApp(ctx=ctx)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        target = tmp_path / f"{session.incident.id}.json"
        target.write_bytes(b"\x00damaged")
        session.set_text("impact", "typed after the damage")
        assert _wait(lambda: session.last_save_error is not None)
        await pilot.pause(0.3)  # well inside the 1 s poll: the writer's report came first
        shown = [n.message for n in app._notifications]
        assert any("Cannot read the incident file" in m and str(target) in m for m in shown), shown
        assert app.is_running
        os.replace(target, tmp_path / "damaged.json")
        assert _wait(lambda: session.last_save_error is None)
        await pilot.pause(0.3)
        assert any("saved again" in n.message for n in app._notifications)
    assert IncidentStore.load_path(target).impact == "typed after the damage"
