"""Every metric a shipped profile names carries the upstream file and version it was read
in (validated when the profiles load); names no exporter emits are a convention, and
``cockpit doctor`` says so."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib import resources
from pathlib import Path

import pytest
from pydantic import ValidationError
from upstream_om import AT, Exposition, between, pod_labels

from cockpit.analysis.profiles import Profile, builtin_profiles, load_profiles
from om_prometheus import serve_openmetrics

COCKPIT = str(Path(sys.executable).with_name("cockpit"))


def test_every_shipped_metric_names_its_upstream_file_and_version() -> None:
    checked = 0
    for prof in builtin_profiles():
        for name in prof.metric_names():
            src = prof.source_of(name)
            assert src is not None, (prof.id, name)
            assert src.convention or (src.file and src.version), (prof.id, name)
            checked += 1
    assert checked > 100


def _shipped(name: str) -> dict[str, object]:
    root = resources.files("cockpit.knowledge") / "profiles"
    return tomllib.loads((root / name).read_text(encoding="utf-8"))


def test_a_shipped_profile_with_an_unsourced_metric_fails_to_load() -> None:
    data = _shipped("tgi.toml")
    meta = data["profile"]
    assert isinstance(meta, dict)
    meta["upstream"] = [u for u in meta["upstream"] if "tgi_queue_size" not in u["metrics"]]
    with pytest.raises(ValidationError, match="tgi_queue_size"):
        Profile.model_validate(data, context={"shipped": True})
    # A source without its version is refused too.
    data = _shipped("tgi.toml")
    meta = data["profile"]
    assert isinstance(meta, dict)
    meta["upstream"][0]["version"] = ""
    with pytest.raises(ValidationError, match="version"):
        Profile.model_validate(data, context={"shipped": True})


def test_a_users_override_file_needs_no_sources(tmp_path: Path) -> None:
    extra = tmp_path / "mine.toml"
    extra.write_text(
        '[profile]\nid = "mine"\nname = "Mine"\nstack = "serving"\ndetect = ["my_queue"]\n'
        '[[signal]]\nid = "serving.queue"\nkind = "gauge"\nmetrics = ["my_queue"]\n',
        encoding="utf-8",
    )
    assert "mine" in {p.id for p in load_profiles([extra])}


def test_conventions_and_corrected_notes() -> None:
    by_id = {p.id: p for p in builtin_profiles()}
    torch = by_id["torch_alloc"]
    src = torch.source_of("pytorch_cuda_memory_reserved_bytes")
    assert src is not None and src.convention and "convention" in src.note_en
    frag = torch.signal[0]
    assert "convention" in frag.enable_en and "约定" in frag.enable_zh
    # No exporter-emitted name is marked a convention.
    for prof in builtin_profiles():
        if prof.id != "torch_alloc":
            assert not any(u.convention for u in prof.profile.upstream), prof.id
    sglang = by_id["sglang"]
    assert "srt/observability/metrics_collector.py" in sglang.profile.source
    assert all("observability/metrics_collector.py" in s.source for s in sglang.signal)
    sm = next(s for s in by_id["dcgm"].signal if s.id == "hardware.sm_active")
    assert "commented out in both" in sm.source and "also in dcp" not in sm.source


def _doctor(url: str, lang: str) -> str:
    proc = subprocess.run(
        [COCKPIT, "--lang", lang, "--at", AT, "doctor", "--prometheus-url", url],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "COCKPIT_CONFIG": "/nonexistent", "LANG": "C.UTF-8"},
    )
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout


def test_doctor_says_the_allocator_names_are_a_convention(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    ex = Exposition()
    lab = {**pod_labels("llm", "vllm-qwen-6b8c9d-z9x8c", "vllm", 8000, "10.0.7.3"), "device": "0"}
    ex.gauge("pytorch_cuda_memory_reserved_bytes", lab, between(7.0e10, 7.2e10))
    ex.gauge("pytorch_cuda_memory_allocated_bytes", lab, between(6.0e10, 5.0e10))
    with serve_openmetrics(ex.text(), tmp_path_factory.mktemp("torch-alloc")) as url:
        en = _doctor(url, "en")
        zh = _doctor(url, "zh")
    assert "torch_alloc" in en
    assert "GPU memory fragmentation: pytorch_cuda_memory_reserved_bytes" in en
    assert "is a convention, not a standard (a naming convention cockpit proposes" in en
    assert "显存碎片率：pytorch_cuda_memory_reserved_bytes" in zh and "是约定而非标准" in zh
