"""``docs/json.md`` against real output: every command it documents is run (on the demo
bundle, the local Kubernetes API server, the fake NVML library, sample incidents and the
shared cases) and the keys of every object in its JSON must be exactly the keys of the
doc's jsonc block for it, so that a field added without documenting it (or documented but
gone) fails here.

The conventions of the blocks (see "Reading this page" in the doc): a bare name as a value
(``Reading``, ``[SourceFailure]``) is the block of that name; an object with one key in
angle brackets (``{"<resource>": 8.0}``) is a map whose values have the shape shown;
``"…"`` is any value.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from cockpit.analysis.playbooks.spec import PLAYBOOK_IDS
from cockpit.cli import main
from cockpit.scenarios.promserver import PromServer
from cockpit.store import IncidentStore
from tests.backends.alertmanager import AlertmanagerServer, iso
from tests.backends.kube_api import Fault, KubeApiServer
from tests.backends.nvml import FakeNvml
from tests.conftest import DATA, UNDIAGNOSED_CASES
from tests.helpers.sample_incident import empty_incident, full_incident

DOC = Path(__file__).resolve().parents[1] / "docs" / "json.md"
COCKPIT = str(Path(sys.executable).parent / "cockpit")
ENV_KEYS = (
    "COCKPIT_STATE_DIR",
    "COCKPIT_LANG",
    "COCKPIT_PROMETHEUS__URL",
    "COCKPIT_SERVICE__NAMESPACE",
    "COCKPIT_SERVICE__SELECTOR",
    "COCKPIT_SERVICE__DEPLOYMENT",
    "COCKPIT_KUBERNETES__CONTEXT",
)

COMMANDS = (
    "explain",
    "pending",
    "changes",
    "gpus",
    "doctor",
    "list",
    "playbook",
    "export",
    "drill_list",
    "alerts",
    "drill_score",
    "logs",
)
"""The blocks that document a command's whole output (the others are shared objects)."""

UNSEEN_OK: set[tuple[str, str]] = {
    # No fixture revision has tolerations; the shape is the model's (Toleration).
    ("Revision", ".template.tolerations[]"),
    # The demo's nodes and the fake NVML report no Xid in the window; the lost GPU's Xid
    # is listed by the text output on the gpu_lost incident (tests/test_window_reading.py).
    ("gpus", ".xids[]"),
}
"""Objects of the doc that no fixture produces (each with the reason)."""

ANY = "…"


# -- the doc's blocks ----------------------------------------------------------------------
def jsonc_to_json(text: str) -> str:
    """The block as JSON: ``//`` comments and trailing commas dropped, bare names turned
    into ``{"$ref": name}``."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
        elif c in "}]":
            while out and out[-1].isspace():
                out.pop()
            if out and out[-1] == ",":
                out.pop()
            out.append(c)
            i += 1
        elif c.isalpha():
            m = re.match(r"[A-Za-z_][A-Za-z0-9_]*", text[i:])
            assert m is not None
            word = m.group(0)
            out.append(word if word in ("true", "false", "null") else json.dumps({"$ref": word}))
            i += len(word)
        else:
            out.append(c)
            i += 1
    return "".join(out)


def doc_blocks() -> dict[str, Any]:
    """``{name: parsed block}`` of every ``<!-- shape: name -->`` block of the doc."""
    text = DOC.read_text(encoding="utf-8")
    blocks: dict[str, Any] = {}
    for m in re.finditer(r"<!-- shape: (\w+) -->\s*```jsonc\n(.*?)```", text, re.S):
        name, body = m.group(1), m.group(2)
        assert name not in blocks, f"two blocks named {name}"
        try:
            blocks[name] = json.loads(jsonc_to_json(body))
        except json.JSONDecodeError as exc:
            pytest.fail(f"docs/json.md block {name} is not valid jsonc: {exc}")
    return blocks


BLOCKS = doc_blocks()


def _ref(value: Any) -> str | None:
    if isinstance(value, dict) and set(value) == {"$ref"}:
        return str(value["$ref"])
    return None


def _map_value(value: dict[str, Any]) -> Any:
    """The value shape of a map (``{"<key>": shape}``), or ``None`` for an object."""
    if len(value) == 1:
        (key,) = value
        if key.startswith("<") and key.endswith(">"):
            return value[key]
    return ...


class Checker:
    """Compares outputs with the blocks and records which documented objects were met."""

    def __init__(self) -> None:
        self.seen: set[tuple[str, str]] = set()

    def check(self, block: str, out: Any) -> None:
        self._cmp(BLOCKS[block], out, block, "")

    def _cmp(self, doc: Any, out: Any, block: str, path: str) -> None:
        where = f"{block}{path or ' (top level)'}"
        if (name := _ref(doc)) is not None:
            assert name in BLOCKS, f"{where}: no block named {name} in docs/json.md"
            self._cmp(BLOCKS[name], out, name, "")
            return
        if out is None or doc == ANY:
            return
        if isinstance(doc, dict):
            assert isinstance(out, dict), f"{where}: documented as an object, got {out!r:.80}"
            shape = _map_value(doc)
            if shape is not ...:
                for key, value in out.items():
                    self._cmp(shape, value, block, f"{path}.<{key}>")
                return
            self.seen.add((block, path))
            assert set(out) == set(doc), (
                f"{where}: undocumented keys {sorted(set(out) - set(doc))}, "
                f"documented but absent {sorted(set(doc) - set(out))}"
            )
            for key, value in doc.items():
                self._cmp(value, out[key], block, f"{path}.{key}")
        elif isinstance(doc, list):
            assert isinstance(out, list), f"{where}: documented as an array, got {out!r:.80}"
            if doc:
                for item in out:
                    self._cmp(doc[0], item, block, f"{path}[]")
            else:
                assert not any(isinstance(x, dict | list) for x in out), (
                    f"{where}: documented as [], but its items are objects: {out[0]!r:.120}"
                )
        else:
            assert not isinstance(out, dict | list), (
                f"{where}: documented as {doc!r}, got an object or array: {out!r:.120}"
            )


def doc_objects() -> set[tuple[str, str]]:
    """Every object (not map) of every block, as ``(block, path)``."""
    found: set[tuple[str, str]] = set()

    def walk(doc: Any, block: str, path: str) -> None:
        if _ref(doc) is not None:
            return
        if isinstance(doc, dict):
            shape = _map_value(doc)
            if shape is not ...:
                walk(shape, block, f"{path}.<>")
                return
            found.add((block, path))
            for key, value in doc.items():
                walk(value, block, f"{path}.{key}")
        elif isinstance(doc, list) and doc:
            walk(doc[0], block, f"{path}[]")

    for name, block in BLOCKS.items():
        walk(block, name, "")
    return found


# -- running the commands --------------------------------------------------------------------
@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No configuration file and no settings from the environment."""
    for key in ENV_KEYS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("COCKPIT_CONFIG", str(tmp_path / "no-config.toml"))
    return tmp_path


def run_json(capsys: pytest.CaptureFixture[str], *argv: str, rc: tuple[int, ...] = (0,)) -> Any:
    code = main(list(argv))
    out = capsys.readouterr().out
    assert code in rc, (argv, code)
    return json.loads(out)


def cases() -> list[dict[str, Any]]:
    path = DATA / "cases.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@pytest.fixture(scope="module")
def checker() -> Iterator[Checker]:
    c = Checker()
    yield c


def test_every_command_has_a_block() -> None:
    assert set(COMMANDS) <= set(BLOCKS), sorted(set(COMMANDS) - set(BLOCKS))


def test_explain(
    env: Path, capsys: pytest.CaptureFixture[str], checker: Checker, tmp_path: Path
) -> None:
    kinds = set()
    for case in cases():
        if case["id"] in UNDIAGNOSED_CASES:
            continue
        f = tmp_path / f"{case['id']}.txt"
        f.write_text(case["artifact"], encoding="utf-8")
        doc = run_json(capsys, "explain", str(f), "--json", "--lang", "en")
        checker.check("explain", doc)
        kinds.update(doc["kinds"])
    assert {"cuda_oom", "nccl", "xid", "failed_scheduling"} <= kinds
    f = tmp_path / "nothing.txt"
    f.write_text("hello\n")
    doc = run_json(capsys, "explain", str(f), "--json", rc=(1,))
    checker.check("explain", doc)
    assert doc["recognised"] is False and doc["category"] is None


def test_pending(
    env: Path,
    kube_api: KubeApiServer,
    kubeconfig: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    checker: Checker,
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    for ctx in ("pend-01", "pend-03", "pend-04", "pend-06"):
        checker.check("pending", run_json(capsys, "pending", "--context", ctx, "--json"))
    doc = run_json(capsys, "pending", "--context", "capacity", "-A", "--json")
    checker.check("pending", doc)
    assert doc["analyses"][0]["message"]["reasons"] and doc["analyses"][0]["quotas"]
    kube_api.inject(Fault(path="/clusters/faulty/api/v1/namespaces/llm/resourcequotas", status=403))
    try:
        doc = run_json(capsys, "pending", "--context", "faulty", "--json")
    finally:
        kube_api.clear_faults()
    checker.check("pending", doc)
    assert doc["failures"][0]["kind"] == "access_denied"


def test_changes(
    env: Path,
    kube_api: KubeApiServer,
    kubeconfig: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    checker: Checker,
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    until = "2026-03-10T12:30:00Z"
    doc = run_json(capsys, "changes", "--context", "rollout", "--until", until, "--json")
    checker.check("changes", doc)
    assert {i["kind"] for i in doc["items"]} >= {"rollout", "helm", "node", "restart", "event"}
    assert any(r["warmup"] for r in doc["releases"])
    kube_api.inject(Fault(path="/clusters/faulty/api/v1/namespaces/llm/configmaps", status=403))
    try:
        doc = run_json(capsys, "changes", "--context", "faulty", "--until", until, "--json")
    finally:
        kube_api.clear_faults()
    checker.check("changes", doc)
    assert doc["failures"]


def test_changes_from_metrics(
    env: Path,
    prometheus_scenario: Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    checker: Checker,
) -> None:
    """Kubernetes absent: the changes the metrics history shows (a rollout, in the
    scenario of a release)."""
    srv = prometheus_scenario("bad_release")
    monkeypatch.setenv("KUBECONFIG", "/nonexistent")
    until = "2026-11-29T15:00:00Z"
    argv = ("changes", "--prometheus-url", srv.url, "-n", "llm", "--deployment", "qwen-chat")
    doc = run_json(capsys, *argv, "--since", "6h", "--until", until, "--json")
    checker.check("changes", doc)
    assert doc["sources"] == ["metrics"] and any(i["message"] for i in doc["items"])


def test_gpus(
    env: Path, fake_nvml: FakeNvml, capsys: pytest.CaptureFixture[str], checker: Checker
) -> None:
    # the demo bundle: the recorded local NVML view of its node, and DCGM series of another
    doc = run_json(capsys, "--demo", "--lang", "en", "gpus", "--once", "--json", rc=(1,))
    checker.check("gpus", doc)
    assert doc["snapshot"]["source"] == "nvml" and doc["snapshot"]["node"] == "gpu-node-a1"
    doc = run_json(
        capsys,
        "--demo",
        "--lang",
        "en",
        "gpus",
        "--once",
        "--json",
        "--node",
        "gpu-node-a2",
        rc=(1,),
    )
    checker.check("gpus", doc)
    assert doc["snapshot"]["source"] == "dcgm" and doc["snapshot"]["warning_msgs"]
    # local NVML (the fake library), one GPU throttled and running this process
    fake_nvml.update(
        {
            "count": 2,
            "gpu1.clock_reasons": 0x40,
            "gpu1.procs": f"{os.getpid()}:{1024 * 1024 * 1024}",
        }
    )
    run_env = fake_nvml.env()
    out = subprocess.run(
        [COCKPIT, "gpus", "--once", "--json", "--lang", "en"],
        env=run_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 1, out.stderr
    doc = json.loads(out.stdout)
    checker.check("gpus", doc)
    assert doc["snapshot"]["source"] == "nvml"
    assert doc["snapshot"]["gpus"][1]["processes"] and doc["verdicts"][1]["findings"]


def test_doctor(
    env: Path,
    kubeconfig: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    checker: Checker,
) -> None:
    state = str(env / "state")
    doc = run_json(capsys, "--demo", "--lang", "en", "doctor", "--json", "--state-dir", state)
    checker.check("doctor", doc)
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    doc = run_json(
        capsys, "doctor", "--json", "--context", "capacity", "--state-dir", state, rc=(0, 1)
    )
    checker.check("doctor", doc)
    names = [s["name"] for s in doc["sections"]]
    assert names == ["config", "state", "metrics", "kube", "gpu", "alerts"]


def test_list(env: Path, capsys: pytest.CaptureFixture[str], checker: Checker) -> None:
    root = env / "state"
    store = IncidentStore(root)
    store.save(full_incident())
    store.save(empty_incident())
    store.release_all()
    (root / "inc-broken.json").write_text('{"id": "inc-broken", "title": ')
    os.chmod(root / "inc-broken.json", 0o600)
    doc = run_json(capsys, "list", "--all", "--json", "--state-dir", str(root))
    assert len(doc) == 3 and doc[2]["error"]
    for row in doc:
        checker.check("list", [row])
    assert run_json(capsys, "list", "--json", "--state-dir", str(env / "none")) == []


def test_drill_list(env: Path, capsys: pytest.CaptureFixture[str], checker: Checker) -> None:
    for lang in ("en", "zh"):
        doc = run_json(capsys, "drill", "--list", "--json", "--lang", lang)
        checker.check("drill_list", doc)
        assert "worked_example" in {d["id"] for d in doc}


def test_drill_score(env: Path, capsys: pytest.CaptureFixture[str], checker: Checker) -> None:
    from drill_ctx import drill_ctx

    from cockpit.drills.catalogue import get_drill

    root = env / "state"
    ctx = drill_ctx(root, "worked_example", "en")
    key, s = get_drill("worked_example").key, ctx.session
    s.visit("A")
    s.set_drill_answer("G", layer=key.primary_layer, suspect_kind="node", suspect_name="n1")
    s.submit_drill_answer("G")
    s.flush()
    s.store.release_all()
    for lang in ("en", "zh"):
        doc = run_json(
            capsys, "drill", "score", "latest", "--json", "--lang", lang, "--state-dir", str(root)
        )
        checker.check("drill_score", doc)
        assert doc["missed"] and doc["evidence"] and doc["answers"][0]["correct"] is True


def test_playbook(
    env: Path,
    kubeconfig: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    checker: Checker,
) -> None:
    for book in PLAYBOOK_IDS:
        doc = run_json(capsys, "--demo", "--lang", "en", "playbook", book, "--json", rc=(0, 2))
        checker.check("playbook", doc)
    shape = ("vllm-0", "vllm-1", "params=70", "layers=80", "kv_heads=8", "head_dim=128")
    doc = run_json(capsys, "--demo", "playbook", "cuda_oom", *shape, "--json")
    checker.check("playbook", doc)
    assert doc["scope"]["model"]["num_layers"] == 80
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    doc = run_json(capsys, "playbook", "pod_pending", "--context", "pend-04", "--json")
    checker.check("playbook", doc)
    assert any(e["source"] == "kube" for i in doc["items"] for e in i["evidence"])


def test_export(env: Path, capsys: pytest.CaptureFixture[str], checker: Checker) -> None:
    root = env / "state"
    store = IncidentStore(root)
    for inc in (full_incident(), empty_incident()):
        store.save(inc)
    store.release_all()
    for ident in ("inc-2026-11-28-p99", "inc-empty"):
        for lang in ("en", "zh"):
            doc = run_json(
                capsys,
                "export",
                ident,
                "--format",
                "json",
                "--lang",
                lang,
                "--state-dir",
                str(root),
            )
            checker.check("export", doc)


def test_alerts(
    env: Path,
    alertmanager_server: AlertmanagerServer,
    worked_example_prom: PromServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    checker: Checker,
) -> None:
    """Alertmanager (an alert silenced, one inhibited) and Prometheus ALERTS alone."""
    now = datetime.now(UTC)
    fire = {"startsAt": iso(now - timedelta(minutes=5)), "endsAt": iso(now + timedelta(hours=1))}
    alertmanager_server.post_alerts(
        [
            {"labels": {"alertname": "DocsSilenced", "namespace": "llm"}, **fire},
            {
                "labels": {"alertname": "NodeDown", "node": "docs-n1", "severity": "critical"},
                **fire,
            },
            {"labels": {"alertname": "DocsGPU", "node": "docs-n1", "severity": "warning"}, **fire},
        ]
    )
    alertmanager_server.silence({"alertname": "DocsSilenced"}, "docs")
    monkeypatch.setenv("COCKPIT_ALERTMANAGER__URL", alertmanager_server.url)
    doc = run_json(capsys, "alerts", "--json", "-n", "llm")
    checker.check("alerts", doc)
    assert any(a["silenced_by"] for a in doc["alerts"])
    assert any(a["inhibited_by"] for a in doc["alerts"])
    monkeypatch.delenv("COCKPIT_ALERTMANAGER__URL")
    at = str(worked_example_prom.scenario.now)
    prom = ("--prometheus-url", worked_example_prom.url, "--at", at)
    doc = run_json(capsys, "alerts", *prom, "--json")
    checker.check("alerts", doc)
    assert doc["source"] == "prometheus" and doc["alerts"][0]["active_at"]
    assert {f["detail"]["what"] for f in doc["failures"]} == set()  # rules: none loaded
    doc = run_json(capsys, "alerts", "--prometheus-url", "http://127.0.0.1:9", "--json", rc=(2,))
    checker.check("alerts", doc)
    assert doc["failures"]


def test_logs(
    env: Path,
    kube_api: KubeApiServer,
    kubeconfig: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    checker: Checker,
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    scope = ("--context", "logs", "-n", "llm", "-l", "app=vllm", "--json")
    doc = run_json(capsys, "--at", "2026-03-10T12:30:00Z", "logs", *scope)
    checker.check("logs", doc)
    assert doc["request_ids"]["followed"] and doc["layers"][0]["access"]["requests"] == 5
    doc = run_json(capsys, "--at", "2026-03-10T12:30:00Z", "logs", "--layer", "runtime", *scope)
    checker.check("logs", doc)
    assert [lay["layer"] for lay in doc["layers"]] == ["runtime"]


def test_every_documented_object_was_checked(checker: Checker) -> None:
    """Runs last: each object of the doc met at least one real output (else the test
    above would pass on empty lists)."""
    if not set(COMMANDS) <= {b for b, _ in checker.seen}:
        pytest.skip("needs the tests above in the same run")
    unseen = doc_objects() - checker.seen - UNSEEN_OK
    assert not unseen, f"documented objects no output contained: {sorted(unseen)}"
    stale = UNSEEN_OK & checker.seen
    assert not stale, f"now produced by a fixture, drop from UNSEEN_OK: {sorted(stale)}"
