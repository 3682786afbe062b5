"""The suite runs in a home of its own: no user configuration, state or kubeconfig leaks in."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from cockpit.config import Settings, config_path


def _inside_tmp(p: Path | str) -> bool:
    return Path(p).resolve().is_relative_to(Path(tempfile.gettempdir()).resolve())


def test_home_and_xdg_dirs_are_temporary() -> None:
    home = Path(os.environ["HOME"])
    assert _inside_tmp(home) and home.name.startswith("cockpit-test-home-")
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        assert Path(os.environ[var]).is_relative_to(home), var
    assert "KUBECONFIG" not in os.environ


def test_config_and_state_resolve_into_the_temporary_home() -> None:
    home = Path(os.environ["HOME"])
    assert config_path().is_relative_to(home)
    assert Settings().resolved_state_dir().is_relative_to(home)
    assert Path("~/.kube/config").expanduser().is_relative_to(home)
