"""Hostile strings from every source reach no terminal with their control characters.

Every outside source carries :data:`HOSTILE` (OSC 52 clipboard write, OSC 0 title,
``ESC[2J``, the C1 CSI ``\\x9b``, BEL, Rich markup and an ``@click`` action): the local
Kubernetes API server (names, taints, events, termination message, image, args, env,
Helm chart and values), a real Prometheus (pod, node and GPU model label values, its
buildinfo, an error body), the fake libnvidia-ml (GPU name) and ``/proc`` (process name),
a recorded bundle, a pasted log and the config file. Every command and every screen must
show them with the control characters written out (``\\x1b``) and the markup literal.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cockpit.cli import main
from cockpit.neutral import json_text, neutralise
from tests.backends.faultproxy import Fault, FaultProxy
from tests.backends.nvml import FakeNvml
from tests.fixtures.kube.hostile import HOSTILE

pytestmark = pytest.mark.slow

VISIBLE = neutralise(HOSTILE)
"""How the payload must look once shown: ``\\x1b]52;c;…``."""
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
MARKUP = "[b]markup[/b][@click=app.quit]x[/]"


def assert_clean(
    text: str, where: str, *, shown: bool = True, mark: str = "\\x1b]52;c;SGFja2Vk\\x07"
) -> None:
    """No ESC, no C0 other than newline/tab, no DEL or C1 in ``text``; with ``shown``, the
    payload was there and is visible (so the check cannot pass on empty output)."""
    bad = sorted(set(CONTROL.findall(text)))
    assert not bad, f"{where}: control characters {bad!r} reach the output"
    if shown:
        assert mark in text, f"{where}: the hostile string is not shown"


def test_neutralise_and_json_text() -> None:
    assert neutralise(HOSTILE) == (
        "\\x1b]52;c;SGFja2Vk\\x07\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\x07" + MARKUP
    )
    assert neutralise("a\r\nb\tc\x7f") == "a\nb\tc\\x7f"
    assert neutralise(neutralise(HOSTILE)) == neutralise(HOSTILE)
    doc = json_text(json.dumps({"k": HOSTILE}, ensure_ascii=False))
    assert not CONTROL.search(doc) and json.loads(doc) == {"k": HOSTILE}


# -- sources ----------------------------------------------------------------------------
POD_PREFIX = "vllm-llama-9635fbe144-"
THERMAL_NODE = "gpu-node-b1"


@pytest.fixture(scope="module")
def hostile_prom(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A real Prometheus with the last 80 minutes of ``thermal_replica`` (the impact began
    30 minutes before its end), the pods, one node and the GPU model renamed hostile;
    yields ``(url, now as ISO 8601)``."""
    from cockpit.scenarios import get_scenario
    from om_prometheus import serve_openmetrics

    sc = get_scenario("thermal_replica")
    buf = io.StringIO()
    sc.build().write_openmetrics(buf)
    cut = sc.now - 80 * 60
    lines = [
        ln
        for ln in buf.getvalue().splitlines()
        if ln.startswith("#") or float(ln.rsplit(" ", 1)[1]) >= cut
    ]
    text = "\n".join(lines) + "\n"
    text = text.replace(POD_PREFIX, POD_PREFIX + HOSTILE)
    text = text.replace(f'"{THERMAL_NODE}"', f'"{THERMAL_NODE}{HOSTILE}"')
    text = text.replace('"NVIDIA H100 80GB HBM3"', f'"NVIDIA H100 80GB HBM3{HOSTILE}"')
    with serve_openmetrics(text, tmp_path_factory.mktemp("hostile-prom")) as url:
        yield url, sc.now_dt.strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture(scope="module")
def hostile_proxy(hostile_prom: tuple[str, str]) -> Iterator[FaultProxy]:
    """A proxy in front of it whose buildinfo names a hostile version."""
    body = json.dumps(
        {"status": "success", "data": {"version": f"2.53.0{HOSTILE}", "revision": HOSTILE}}
    )
    with FaultProxy(hostile_prom[0]) as proxy:
        proxy.add(Fault(path="/api/v1/status/buildinfo", status=200, body=body))
        yield proxy


SCOPE = ["-n", "llm", "-l", "app=vllm-llama", "--model", "llama-3.1-70b"]


@pytest.fixture
def env(tmp_path: Path, kubeconfig: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Kubernetes at the ``hostile`` cluster, a config file with hostile values, a state
    dir of its own; yields the config file."""
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        # A key no setting reads: every command warns about it, naming it.
        f"{json.dumps('note' + HOSTILE)} = 1\n[kubernetes]\ncontext = {json.dumps('hostile')}\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    monkeypatch.setenv("COCKPIT_CONFIG", str(cfg))
    monkeypatch.setenv("COCKPIT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    yield cfg


def run(
    capsys: pytest.CaptureFixture[str], *argv: str, rc: tuple[int, ...] = (0, 1), err: bool = False
) -> str:
    """stdout (``err``: stderr) of ``cockpit --lang en ARGV``, once stderr is checked clean."""
    code = main(["--lang", "en", *argv])
    out = capsys.readouterr()
    assert code in rc, (argv, code, out.err[-2000:])
    assert_clean(out.err, f"{argv} (stderr)", shown=False)
    return out.err if err else out.out


def run_json(
    capsys: pytest.CaptureFixture[str],
    *argv: str,
    rc: tuple[int, ...] = (0, 1),
    payload: str = HOSTILE,
) -> Any:
    code = main(["--lang", "en", *argv, "--json"])
    out = capsys.readouterr()
    assert code in rc, (argv, code, out.err[-2000:])
    assert_clean(out.out + out.err, f"{argv} --json", shown=False)
    doc = json.loads(out.out)
    assert any(payload in v for v in strings(doc)), f"{argv}: the payload is not in the JSON"
    return doc


def strings(doc: Any) -> Iterator[str]:
    """Every string of a decoded JSON document (keys and values)."""
    if isinstance(doc, str):
        yield doc
    elif isinstance(doc, dict):
        for k, v in doc.items():
            yield k
            yield from strings(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from strings(v)


# -- commands ---------------------------------------------------------------------------
def test_kubernetes_commands(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kube = ["--context", "hostile"]
    assert_clean(run(capsys, "pending", *kube), "pending")
    run_json(capsys, "pending", *kube)
    changes = ["changes", *kube, "--until", "2026-03-10T12:30:00Z"]
    out = run(capsys, *changes)
    assert_clean(out, "changes")
    assert MARKUP in out
    run_json(capsys, *changes)
    out = run(capsys, "playbook", "pod_pending", *kube, "-n", "llm", rc=(0, 1, 2))
    assert_clean(out, "playbook pod_pending")
    out = run(
        capsys, "playbook", "bad_rollout", *kube, "-n", "llm", "--deployment", "vllm", rc=(0, 1, 2)
    )
    assert_clean(out, "playbook bad_rollout")


def test_prometheus_commands(
    env: Path,
    hostile_prom: tuple[str, str],
    hostile_proxy: FaultProxy,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url, now = hostile_prom
    prom = ["--prometheus-url", url, *SCOPE]
    out = run(capsys, "analyze", *prom, "--at", now, "--window", "30m")
    assert_clean(out, "analyze")
    run_json(capsys, "analyze", *prom, "--at", now, "--window", "30m")
    out = run(
        capsys,
        "gpus",
        "--once",
        "--prometheus-url",
        url,
        "--node",
        THERMAL_NODE + HOSTILE,
        "--at",
        now,
    )
    assert_clean(out, "gpus --node")
    out = run(capsys, "playbook", "low_util", *prom, "--at", now, rc=(0, 1, 2))
    assert_clean(out, "playbook low_util", shown=False)
    # doctor: the buildinfo version and a hostile config value
    out = run(
        capsys,
        "doctor",
        "--prometheus-url",
        hostile_proxy.url,
        *SCOPE,
        "--timeout",
        "20",
        rc=(0, 1),
    )
    assert_clean(out, "doctor")
    run_json(capsys, "doctor", "--prometheus-url", hostile_proxy.url, *SCOPE, rc=(0, 1))
    # an error body
    with FaultProxy(url) as broken:
        broken.add(Fault(path="/api/v1/", status=500, body=f"upstream says {HOSTILE}"))
        out = run(
            capsys,
            "analyze",
            "--prometheus-url",
            broken.url,
            *SCOPE,
            "--at",
            now,
            rc=(0, 1, 2),
            err=True,
        )
        assert_clean(out, "analyze (error body)")


def test_nvml_gpu_and_process_names(
    env: Path, fake_nvml: FakeNvml, capsys: pytest.CaptureFixture[str]
) -> None:
    # A process whose name (/proc/PID/comm, 15 bytes) is hostile, on GPU 1.
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import ctypes,sys,time;ctypes.CDLL(None).prctl(15,b'\\x1b]0;pwn\\x07\\x9b2J',0,0,0);"
            "print('ok',flush=True);time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == b"ok"
        fake_nvml.update(
            {
                "count": 2,
                "gpu0.name": f"NVIDIA H100{HOSTILE}",
                "gpu1.procs": f"{child.pid}:{1024 * 1024 * 1024}",
            }
        )
        out = run(capsys, "gpus", "--once")
        assert_clean(out, "gpus")
        assert "\\x1b]0;pwn\\x07" in out  # the process name, shown visibly
        run_json(capsys, "gpus", "--once")
    finally:
        child.kill()
        child.wait()


PASTE = (
    f"Warning  FailedScheduling  12s  default-scheduler  0/1 nodes are available: 1 node(s) "
    f"had untolerated taint {{gpu{HOSTILE}: }}. preemption: 0/1 nodes are available: 1 "
    "Preemption is not helpful for scheduling..\r\n"
    f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB{HOSTILE}\r\n"
)


def test_paste_explained(env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paste = tmp_path / "paste.log"
    paste.write_text(PASTE, encoding="utf-8")
    # explain drops the ESC sequences a terminal pastes along; the C1 CSI stays, visible.
    assert_clean(run(capsys, "explain", str(paste)), "explain", mark="\\x9b31m\\x07" + MARKUP)
    run_json(capsys, "explain", str(paste), payload="\x9b31m\x07" + MARKUP)


@pytest.fixture(scope="module")
def hostile_bundle(
    hostile_prom: tuple[str, str], kubeconfig: Path, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """A bundle recorded from the hostile Kubernetes cluster and Prometheus (with a
    hostile note in its header); what ``record`` printed is checked clean."""
    url, now = hostile_prom
    out = tmp_path_factory.mktemp("bundle") / "hostile bundle.jsonl.gz"
    argv = ["--lang", "en", "record", "-o", str(out), "--prometheus-url", url, *SCOPE]
    argv += ["--kubeconfig", str(kubeconfig), "--context", "hostile", "--at", now]
    argv += ["--window", "30m", "--note", f"note {HOSTILE}"]
    printed = io.StringIO()
    with (
        pytest.MonkeyPatch.context() as mp,
        contextlib.redirect_stdout(printed),
        contextlib.redirect_stderr(printed),
    ):
        mp.setenv("XDG_STATE_HOME", str(out.parent / "xdg"))
        assert main(argv) in (0, 1)
    assert_clean(printed.getvalue(), "record", shown=False)
    assert f"cockpit --replay '{out}'" in printed.getvalue()  # a command: quoted
    return out


def test_bundle_replayed_by_every_command(
    env: Path, hostile_bundle: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    replay = ["--replay", str(hostile_bundle)]
    assert_clean(run(capsys, *replay, "analyze", "--window", "30m"), "analyze --replay")
    assert_clean(
        run(capsys, *replay, "changes", *SCOPE, "--until", "2026-03-10T12:30:00Z"),
        "changes --replay",
    )
    assert_clean(run(capsys, *replay, "pending", *SCOPE), "pending --replay")
    assert_clean(
        run(capsys, *replay, "gpus", "--once", "--node", THERMAL_NODE + HOSTILE, rc=(0, 1, 2)),
        "gpus --replay",
    )
    for book in ("pod_pending", "bad_rollout", "low_util", "ttft_spike", "cuda_oom", "nccl_hang"):
        out = run(capsys, *replay, "playbook", book, rc=(0, 1, 2))
        assert_clean(out, f"playbook {book} --replay", shown=False)


def test_incident_listed_and_exported(
    env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cockpit.store import IncidentStore
    from tests.helpers.sample_incident import full_incident

    inc = full_incident()
    inc.title = f"P99 {HOSTILE}"
    inc.impact = f"users of {HOSTILE}"
    inc.changes[0].summary = f"rollout {HOSTILE}"
    inc.changes[0].detail = f"image {HOSTILE}"
    inc.evidence[0].label = f"pod {HOSTILE}"
    inc.evidence[0].query = f'up{{pod="{HOSTILE}"}}'
    inc.timeline[0].text = f"pasted {HOSTILE}"
    inc.hypotheses[0].statement = f"node {HOSTILE}"
    inc.collect.error_samples[0].text = f"error {HOSTILE}"
    IncidentStore(tmp_path / "state").save(inc)
    assert_clean(run(capsys, "list", "--all"), "list")
    run_json(capsys, "list", "--all")
    md = run(capsys, "export", "latest")
    assert_clean(md, "export md")
    assert MARKUP in md
    run_json_export = main(["--lang", "en", "export", "latest", "--format", "json"])
    out = capsys.readouterr().out
    assert run_json_export == 0
    assert_clean(out, "export json", shown=False)
    assert any(HOSTILE in v for v in strings(json.loads(out)))
    target = tmp_path / "out.md"
    assert main(["--lang", "en", "export", "latest", "-o", str(target)]) == 0
    assert_clean(target.read_text(encoding="utf-8"), "export -o")


# -- screens ----------------------------------------------------------------------------
TERMINAL_ATTACKS = ("\x1b]52", "\x1b]0;", "\x1b[2J", "\x9b", "\x07")
"""The payload's sequences, which cockpit's own output never writes."""


def screen_output(app: Any) -> tuple[str, str]:
    """``(text, terminal bytes)`` of the current screen: every cell's text, and the update
    the app would write to a real terminal (what the headless driver drops)."""
    comp = app.screen._compositor
    text = "\n".join("".join(seg.text for seg in strip) for strip in comp.render_strips())
    return text, comp.render_full_update().render_segments(app.console)


async def _settle(app: Any, pilot: Any) -> None:
    for _ in range(3):
        await app.workers.wait_for_complete()
        await pilot.pause()


async def test_every_screen_of_a_replayed_hostile_bundle(
    env: Path, tmp_path: Path, hostile_bundle: Path
) -> None:
    from cockpit.app import CockpitApp
    from cockpit.ui.plugins import load_panels
    from cockpit.wiring import build_context

    args = argparse.Namespace(
        replay=str(hostile_bundle),
        lang="en",
        state_dir=str(tmp_path / "tui-state"),
        namespace="llm",
        selector="app=vllm-llama",
        model="llama-3.1-70b",
    )
    ctx = build_context(args)
    assert ctx.session is not None
    ctx.session.incident.title = f"title {HOSTILE}"
    ctx.panels = load_panels()
    app = CockpitApp(ctx=ctx, start_step="A")
    seen: list[str] = []

    def check(where: str) -> None:
        text, seq = screen_output(app)
        assert_clean(text, where, shown=False)
        for attack in TERMINAL_ATTACKS:
            assert attack not in seq, f"{where}: {attack!r} written to the terminal"
        seen.append(text)

    async with app.run_test(size=(200, 60)) as pilot:
        await _settle(app, pilot)
        for step in "ABCDEFGHI":
            app.goto(step)
            await _settle(app, pilot)
            check(f"step {step}")
        await pilot.press("f2")
        await _settle(app, pilot)
        check("F2 protect first")
        await pilot.press("escape")
        await pilot.press("f6")
        await _settle(app, pilot)
        screen = app.screen
        screen.query_one("#paste-text").text = PASTE
        screen.query_one("#paste-explain").press()
        await _settle(app, pilot)
        check("F6 paste")
        screen.query_one("#paste-pin").press()
        await _settle(app, pilot)
        await pilot.press("escape")
        await pilot.press("f7")
        await _settle(app, pilot)
        check("F7 playbooks")
        await pilot.press("1", "enter")
        await _settle(app, pilot)
        check("F7 playbook")
        await pilot.press("escape")
        await pilot.press("f1")
        await _settle(app, pilot)
        check("F1 help")
    everything = "\n".join(seen)
    assert "\\x1b]52;c;SGFja2Vk\\x07" in everything
    assert MARKUP in everything  # shown literally, never interpreted


async def test_live_screens_with_hostile_kubernetes_and_nvml(
    env: Path, tmp_path: Path, kubeconfig: Path, fake_nvml: FakeNvml
) -> None:
    from cockpit.app import CockpitApp
    from cockpit.ui.plugins import load_panels
    from cockpit.wiring import build_context

    fake_nvml.update({"count": 2, "gpu0.name": f"NVIDIA H100{HOSTILE}"})
    args = argparse.Namespace(
        lang="en",
        state_dir=str(tmp_path / "tui-state"),
        namespace="llm",
        selector="app=vllm",
        deployment="vllm",
        kubeconfig=str(kubeconfig),
        context="hostile",
    )
    ctx = build_context(args)
    ctx.panels = load_panels()
    app = CockpitApp(ctx=ctx, start_step="B")
    seen: list[str] = []
    async with app.run_test(size=(200, 60)) as pilot:
        for step in "BE":
            app.goto(step)
            await _settle(app, pilot)
            text, seq = screen_output(app)
            assert_clean(text, f"live step {step}", shown=False)
            for attack in TERMINAL_ATTACKS:
                assert attack not in seq, f"live step {step}: {attack!r} written"
            seen.append(text)
    assert "\\x1b]52;c;SGFja2Vk\\x07" in seen[0]  # B: the changes
    assert "\\x1b]52;c;SGFja2Vk\\x07" in seen[1]  # E: GPU name, scheduling


# -- printed commands -------------------------------------------------------------------
def test_printed_commands_keep_each_name_one_word(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shlex

    from cockpit.analysis.mitigations import mitigations
    from cockpit.analysis.playbooks.render import fill_command
    from cockpit.commandline import arg
    from cockpit.incident import ServiceScope
    from cockpit.sources.kubernetes import can_i_command

    doc = run_json(capsys, "pending", "--context", "hostile")
    (analysis,) = doc["analyses"]
    words = [shlex.split(c, comments=True) for c in analysis["commands"]]
    assert ["kubectl", "describe", "pod", f"trainer-{HOSTILE}", "-n", "llm"] in words
    node = f"gpu-b{HOSTILE}"
    assert ["kubectl", "get", "node", node, "-o", "jsonpath={.status.allocatable}"] in words
    assert any(f"spec.nodeName={node}" in w for w in words)

    evil = "vllm; curl x|sh"
    scope = ServiceScope(namespace="llm $(id)", deployment=evil, selector="app=a b")
    for m in mitigations(scope, node=evil, ingress=evil, record_flags=["-n", "a b"]):
        for cmd in m.commands:
            parts = shlex.split(cmd, comments=True)
            assert ";" not in parts and "sh" not in parts, cmd
    rollback = next(m for m in mitigations(scope) if m.key == "rollback").commands[1]
    assert shlex.split(rollback) == [
        "kubectl",
        "-n",
        "llm $(id)",
        "rollout",
        "undo",
        f"deployment/{evil}",
    ]
    filled = fill_command(
        "kubectl -n <namespace> rollout status deployment/<deployment>", "a b", evil
    )
    assert shlex.split(filled)[2] == "a b" and shlex.split(filled)[-1] == f"deployment/{evil}"
    assert shlex.split(can_i_command("list", "pods", "x;y")) == [
        "kubectl",
        "auth",
        "can-i",
        "list",
        "pods",
        "-n",
        "x;y",
    ]
    assert arg("vllm-0") == "vllm-0" and arg("", "pod") == "<pod>" and arg("<pod>") == "<pod>"


def test_config_values_echoed_by_doctor(
    env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COCKPIT_STATE_DIR")
    cfg = tmp_path / "hostile.toml"
    state = tmp_path / f"state{HOSTILE}"
    cfg.write_text(f"state_dir = {json.dumps(str(state))}\n", encoding="utf-8")
    out = run(capsys, "--config", str(cfg), "doctor", "--timeout", "5", rc=(0, 1))
    assert_clean(out, "doctor (config values)")
    run_json(capsys, "--config", str(cfg), "doctor", "--timeout", "5")
