"""The incident store: permissions, the per-incident write lock between processes,
unreadable files never overwritten, schema versions."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from cockpit.incident import SCHEMA_VERSION, Incident
from cockpit.session import IncidentSession
from cockpit.store import (
    CorruptIncident,
    IncidentLocked,
    IncidentStore,
    NewerIncidentSchema,
    atomic_write_bytes,
)

HELPERS = Path(__file__).parent / "helpers"


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _session(root: Path, incident_id: str = "inc-a") -> IncidentSession:
    return IncidentSession(IncidentStore(root), Incident(id=incident_id, title="t"))


def test_new_directory_is_0700_and_files_0600(tmp_path: Path) -> None:
    root = tmp_path / "a" / "state"
    session = _session(root)
    session.set_text("impact", "x")
    assert _mode(root) == 0o700
    assert _mode(root / "inc-a.json") == 0o600
    assert _mode(root / ".inc-a.lock") == 0o600
    assert IncidentStore(root).load("inc-a").impact == "x"


def test_loose_permissions_of_existing_directory_and_file_are_tightened(tmp_path: Path) -> None:
    root = tmp_path / "state"
    first = _session(root)
    first.save()
    first.store.release_all()
    os.chmod(root, 0o755)
    os.chmod(root / "inc-a.json", 0o644)

    store = IncidentStore(root)
    inc = store.load("inc-a")
    assert _mode(root / "inc-a.json") == 0o600
    store.save(inc)
    assert _mode(root) == 0o700
    assert _mode(root / "inc-a.json") == 0o600
    assert any("0755 -> 0700" in note for note in store.fixed_permissions)
    assert any("0644 -> 0600" in note for note in store.fixed_permissions)


def test_corrupt_file_is_never_overwritten(tmp_path: Path) -> None:
    root = tmp_path / "state"
    root.mkdir(mode=0o700)
    path = root / "inc-a.json"
    garbage = b'{"schema_version": 1, "id": "inc-a", "title": "trunc'
    path.write_bytes(garbage)
    os.chmod(path, 0o600)
    session = _session(root)
    with pytest.raises(CorruptIncident) as info:
        session.set_text("impact", "new")
    assert path.read_bytes() == garbage
    assert info.value.path == path
    # The message says where the file is and how to move it aside, in both languages.
    assert str(path) in str(info.value)
    assert "mv '" in str(info.value)
    assert "mv '" in info.value.message("zh") and "移到一旁" in info.value.message("zh")
    assert "move it aside" in info.value.message("en")
    # Loading and listing report it instead of hiding it.
    with pytest.raises(CorruptIncident):
        IncidentStore(root).load("inc-a")
    listed = IncidentStore(root).list()
    assert [(p.name, type(e)) for p, e in listed] == [("inc-a.json", CorruptIncident)]
    # Once the user moved it aside, saving works again.
    os.rename(path, root / "inc-a.json.corrupt-1")
    session.set_text("impact", "new")
    assert IncidentStore(root).load("inc-a").impact == "new"
    assert (root / "inc-a.json.corrupt-1").read_bytes() == garbage


def test_invalid_but_parseable_file_is_corrupt(tmp_path: Path) -> None:
    root = tmp_path / "state"
    root.mkdir(mode=0o700)
    (root / "inc-a.json").write_text(json.dumps({"id": "inc-a", "times": {"start": "never"}}))
    with pytest.raises(CorruptIncident, match=r"times\.start"):
        IncidentStore(root).load("inc-a")
    (root / "inc-b.json").write_text("[1, 2]")
    with pytest.raises(CorruptIncident, match="JSON object"):
        IncidentStore(root).load("inc-b")


def test_file_changed_by_hand_into_garbage_is_detected_before_the_next_save(
    tmp_path: Path,
) -> None:
    root = tmp_path / "state"
    session = _session(root)
    session.set_text("impact", "one")
    path = root / "inc-a.json"
    path.write_text("not json at all")
    with pytest.raises(CorruptIncident):
        session.set_text("impact", "two")
    assert path.read_text() == "not json at all"


def test_file_from_a_newer_cockpit_is_refused_and_kept(tmp_path: Path) -> None:
    root = tmp_path / "state"
    root.mkdir(mode=0o700)
    path = root / "inc-a.json"
    doc = Incident(id="inc-a").model_dump(mode="json")
    doc["schema_version"] = SCHEMA_VERSION + 1
    doc["field_from_the_future"] = {"x": 1}
    raw = json.dumps(doc).encode()
    path.write_bytes(raw)
    with pytest.raises(NewerIncidentSchema) as info:
        IncidentStore(root).load("inc-a")
    assert info.value.found == SCHEMA_VERSION + 1
    assert "newer cockpit" in str(info.value)
    assert "更新版本" in info.value.message("zh")
    with pytest.raises(NewerIncidentSchema):
        _session(root).save()
    assert path.read_bytes() == raw


def test_stale_temp_files_of_a_killed_writer_are_removed_by_the_next_writer(
    tmp_path: Path,
) -> None:
    root = tmp_path / "state"
    first = _session(root)
    first.save()
    first.store.release_all()
    stale = root / ".inc-a.json.abc123.tmp"
    stale.write_bytes(b"half")
    other = root / ".inc-b.json.abc123.tmp"
    other.write_bytes(b"other incident")
    store = IncidentStore(root)
    store.save(store.load("inc-a"))
    assert not stale.exists()
    assert other.exists()


def test_lock_contention_between_two_processes(tmp_path: Path) -> None:
    root = tmp_path / "state"
    holder = subprocess.Popen(
        [sys.executable, str(HELPERS / "lock_holder.py"), str(root), "inc-a"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdin is not None
        line = holder.stdout.readline()
        assert line.startswith("locked "), line
        pid = int(line.split()[1])

        mine = _session(root)
        with pytest.raises(IncidentLocked) as info:
            mine.set_text("impact", "from the second process")
        assert f"pid {pid}" in info.value.holder
        assert f"pid {pid}" in str(info.value)
        assert "另一个 cockpit 进程" in info.value.message("zh")
        # Nothing of ours was written; readers still see the holder's version.
        assert IncidentStore(root).load("inc-a").impact == "written by the holder"
        assert mine.last_save_error is info.value

        holder.stdin.write("exit\n")
        holder.stdin.flush()
        assert holder.wait(timeout=20) == 0
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
    # The holder is gone (the kernel dropped its lock): our pending change is saved now.
    mine.set_text("impact", "from the second process")
    assert IncidentStore(root).load("inc-a").impact == "from the second process"


def test_lock_is_per_incident_and_released_on_request(tmp_path: Path) -> None:
    root = tmp_path / "state"
    first = IncidentStore(root)
    second = IncidentStore(root)  # flock locks are per open file: two stores contend too
    first.save(Incident(id="inc-a"))
    second.save(Incident(id="inc-b"))
    with pytest.raises(IncidentLocked):
        second.save(first.load("inc-a"))
    first.release("inc-a")
    assert not first.holds("inc-a")
    second.save(second.load("inc-a"))
    assert second.holds("inc-a")


def test_bad_ids_are_refused(tmp_path: Path) -> None:
    store = IncidentStore(tmp_path)
    for bad in ("", "../x", ".hidden", "a/b", "a\0b"):
        with pytest.raises(ValueError):
            store.path_for(bad)


def test_atomic_write_replaces_whole_file_with_mode(tmp_path: Path) -> None:
    path = tmp_path / "out.md"
    path.write_text("old content that is longer than the new one")
    os.chmod(path, 0o644)
    atomic_write_bytes(path, b"new")
    assert path.read_bytes() == b"new"
    assert _mode(path) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["out.md"]


def test_list_and_latest(tmp_path: Path) -> None:
    root = tmp_path / "state"
    store = IncidentStore(root)
    a = IncidentSession(store, Incident(id="inc-a", title="a"))
    b = IncidentSession(store, Incident(id="inc-b", title="b"))
    a.save()
    b.save()
    b.close()
    assert [inc.id for _, inc in store.list() if isinstance(inc, Incident)] == ["inc-b", "inc-a"]
    latest_open = store.latest_open()
    latest = store.latest()
    assert latest_open is not None and latest_open.id == "inc-a"
    assert latest is not None and latest.id == "inc-b"


def test_resuming_an_incident_open_elsewhere_says_so_in_the_ui_language(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import argparse

    from cockpit.wiring import BootError, build_context

    monkeypatch.setenv("COCKPIT_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.delenv("COCKPIT_PROMETHEUS__URL", raising=False)
    root = tmp_path / "state"
    holder = IncidentStore(root)
    holder.save(Incident(id="inc-a"))  # this store keeps the incident's lock
    args = argparse.Namespace(state_dir=str(root), resume="inc-a", lang="zh")
    with pytest.raises(BootError) as info:
        build_context(args)
    text = str(info.value)
    assert "正在另一个 cockpit 进程中编辑" in text and "Errno" not in text
    args = argparse.Namespace(state_dir=str(root), resume="inc-zzz", lang="zh")
    with pytest.raises(BootError) as info:
        build_context(args)
    assert "里没有事件 'inc-zzz'" in str(info.value)


def test_stored_strings_load_as_enums_and_are_written_back_as_the_same_strings() -> None:
    from cockpit.flow import Branch
    from cockpit.incident import IncidentStatus, ItemStatus, Mode

    stored = {
        "id": "inc-enums",
        "status": "closed",
        "mode": "demo",
        "scope_branch": "shared",
        "playbooks": {"oom": {"playbook": "oom", "items": [{"item": "x", "status": "n/a"}]}},
    }
    inc = Incident.model_validate(stored)
    assert inc.status is IncidentStatus.CLOSED and inc.mode is Mode.DEMO
    assert inc.scope_branch is Branch.SHARED
    assert inc.playbooks["oom"].items[0].status is ItemStatus.NA
    dumped = inc.model_dump(mode="json")
    assert {k: dumped[k] for k in ("status", "mode", "scope_branch")} == {
        "status": "closed",
        "mode": "demo",
        "scope_branch": "shared",
    }
    assert Incident.model_validate({"id": "inc-x", "scope_branch": ""}).scope_branch == ""
