"""Fake NVML backend: ``nvidia-ml-py`` loading a ``libnvidia-ml.so.1`` compiled from
``fake_nvml/fake_nvml.c`` by the suite (gcc), scripted through a ``key=value`` file named
by ``FAKE_NVML_CONFIG`` (re-read by the library whenever it changes).

In-process use: the session fixture loads the compiled library with ``ctypes.CDLL(path)``
before anything calls ``nvmlInit``; its soname makes pynvml's ``CDLL("libnvidia-ml.so.1")``
reuse it. Subprocess use: :meth:`FakeNvml.env` sets ``LD_LIBRARY_PATH`` (changing it inside
a running process has no effect on the loader).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent
C_SOURCE = HERE / "fake_nvml" / "fake_nvml.c"

# nvmlReturn_t codes the tests script.
NOT_SUPPORTED = 3
DRIVER_NOT_LOADED = 9
GPU_IS_LOST = 15
UNKNOWN = 999
XID_EVENT = 8


def build_fake_nvml(dest: Path) -> Path:
    """Compile the fake library into ``dest`` and return the ``.so`` path.

    Raises:
        RuntimeError: when gcc is missing or the build fails.
    """
    gcc = shutil.which("gcc")
    if gcc is None:
        raise RuntimeError("gcc is needed to build the fake libnvidia-ml.so.1")
    dest.mkdir(parents=True, exist_ok=True)
    out = dest / "libnvidia-ml.so.1"
    subprocess.run(
        [
            gcc,
            "-O2",
            "-Wall",
            "-shared",
            "-fPIC",
            "-Wl,-soname,libnvidia-ml.so.1",
            "-o",
            str(out),
            str(C_SOURCE),
            "-lpthread",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return out


_loaded: Path | None = None


def load_fake_nvml(dest: Path) -> Path:
    """Build the fake library into ``dest`` and load it into this process, once per
    process (later calls return the already loaded one: pynvml keeps the first)."""
    global _loaded
    if _loaded is None:
        lib = build_fake_nvml(dest)
        ctypes.CDLL(str(lib), mode=ctypes.RTLD_GLOBAL)
        _loaded = lib
    return _loaded


class FakeNvml:
    """The script of the fake library: values and error codes per GPU and per function.

    ``set(**kv)`` merges keys (``gpu0.power_mw=300000``, ``fn.nvmlDeviceGetPowerUsage=3``)
    and rewrites the file atomically, so a running source sees the change on its next call.
    """

    def __init__(self, lib: Path, config: Path) -> None:
        self.lib = lib
        self.config = config
        self.values: dict[str, Any] = {}
        self.write()

    def write(self) -> None:
        tmp = self.config.with_suffix(".tmp")
        tmp.write_text("".join(f"{k}={v}\n" for k, v in self.values.items()), encoding="utf-8")
        os.replace(tmp, self.config)

    def set(self, **kv: Any) -> FakeNvml:
        """Merge ``kv`` (use ``gpu0__power_mw`` for ``gpu0.power_mw``) and rewrite."""
        for k, v in kv.items():
            self.values[k.replace("__", ".")] = v
        self.write()
        return self

    def update(self, mapping: dict[str, Any]) -> FakeNvml:
        """Merge dotted keys and rewrite."""
        self.values.update(mapping)
        self.write()
        return self

    def unset(self, *keys: str) -> FakeNvml:
        for k in keys:
            self.values.pop(k, None)
        self.write()
        return self

    def lose_gpu(self, index: int, code: int = GPU_IS_LOST) -> None:
        """Make GPU ``index`` fall off the bus: every call on it returns ``code``."""
        self.set(**{f"gpu{index}.err": code})

    def not_supported(self, func: str, gpu: int | None = None) -> None:
        """Make ``func`` return NOT_SUPPORTED (on one GPU, or on all)."""
        key = f"gpu{gpu}.fn.{func}" if gpu is not None else f"fn.{func}"
        self.set(**{key: NOT_SUPPORTED})

    def add_xid(self, gpu: int, xid: int) -> None:
        """Append a scripted Xid event (delivered once by ``nvmlEventSetWait_v2``)."""
        events = [e for e in str(self.values.get("events", "")).split(",") if e]
        events.append(f"{gpu}:{XID_EVENT}:{xid}")
        self.set(events=",".join(events))

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """Environment for a subprocess that should load this fake library."""
        env = dict(os.environ if base is None else base)
        env["LD_LIBRARY_PATH"] = str(self.lib.parent)
        env["FAKE_NVML_CONFIG"] = str(self.config)
        return env


@pytest.fixture(scope="session")
def fake_nvml_lib(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The compiled fake library, loaded into this process once (soname trick)."""
    return load_fake_nvml(tmp_path_factory.mktemp("fake-nvml"))


@pytest.fixture
def fake_nvml(fake_nvml_lib: Path, tmp_path: Path) -> Iterator[FakeNvml]:
    """A fresh script for this test (8 idle H100 GPUs by default), pointed to by
    ``FAKE_NVML_CONFIG`` for the in-process library."""
    fake = FakeNvml(fake_nvml_lib, tmp_path / "fake-nvml.cfg")
    old = os.environ.get("FAKE_NVML_CONFIG")
    os.environ["FAKE_NVML_CONFIG"] = str(fake.config)
    try:
        yield fake
    finally:
        if old is None:
            os.environ.pop("FAKE_NVML_CONFIG", None)
        else:
            os.environ["FAKE_NVML_CONFIG"] = old
