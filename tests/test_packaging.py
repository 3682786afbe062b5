"""Packaging and import hygiene: the core never imports Textual; screens and plugins
install as cockpit.screens / cockpit.plugins; the wheel carries every module and data file."""

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = [
    "cockpit.models",
    "cockpit.flow",
    "cockpit.incident",
    "cockpit.session",
    "cockpit.store",
    "cockpit.config",
    "cockpit.i18n",
    "cockpit.context",
    "cockpit.wiring",
    "cockpit.analysis.recovery",
    "cockpit.analysis.mitigations",
]


def test_core_does_not_import_textual():
    code = (
        "import importlib, sys, json\n"
        f"for m in {CORE!r}: importlib.import_module(m)\n"
        "print(json.dumps(sorted(k for k in sys.modules if k.split('.')[0] in ('textual', 'rich'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_cli_help_does_not_import_heavy_clients():
    code = (
        "import sys, json\n"
        "from cockpit.cli import build_parser\n"
        "build_parser(light=True).parse_known_args([])\n"
        "heavy = ('kubernetes', 'pynvml', 'aiohttp', 'httpx', 'textual', 'pydantic', 'msgspec')\n"
        "print(json.dumps(sorted({k.split('.')[0] for k in sys.modules if k.split('.')[0] in heavy})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_every_runtime_dependency_is_imported():
    """No declared runtime dependency that the code (cockpit, screens, plugins) never imports."""
    import re
    import tomllib
    from importlib.metadata import packages_distributions

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.split(r"[<>=!~ ;\[]", d, maxsplit=1)[0].lower().replace("_", "-") for d in declared}
    imported: set[str] = set()
    pattern = re.compile(r"^\s*(?:from|import)\s+(\w+)", re.M)
    for folder in ("cockpit", "screens", "plugins"):
        for path in (ROOT / folder).rglob("*.py"):
            imported.update(pattern.findall(path.read_text(encoding="utf-8")))
    dists = packages_distributions()
    used = {d.lower().replace("_", "-") for m in imported for d in dists.get(m, [])}
    assert names <= used, sorted(names - used)


def test_mapped_packages_import_through_cockpit():
    import cockpit.plugins
    import cockpit.screens.impact

    assert Path(cockpit.screens.impact.__file__).parent.name == "screens"
    assert Path(cockpit.plugins.__file__).parent.name == "plugins"


@pytest.mark.slow
def test_wheel_lists_every_module(tmp_path):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    wheel = next(tmp_path.glob("cockpit-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = set()
    for folder, pkg in (
        ("cockpit", "cockpit"),
        ("screens", "cockpit/screens"),
        ("plugins", "cockpit/plugins"),
    ):
        for path in (ROOT / folder).rglob("*.py"):
            rel = path.relative_to(ROOT / folder).as_posix()
            expected.add(f"{pkg}/{rel}")
    for path in (ROOT / "cockpit" / "knowledge").rglob("*.toml"):
        expected.add("cockpit/" + path.relative_to(ROOT / "cockpit").as_posix())
    assert sorted(expected - names) == []
    assert not any(n.startswith(("screens/", "plugins/")) for n in names)


def test_every_folder_of_package_data_is_a_listed_package():
    """A folder under ``cockpit/`` holding data files (the catalogue's i18n, each drill
    bundle) is listed in ``[tool.setuptools] packages``: otherwise setuptools warns, once per
    folder, that the package "would be ignored", on every ``pip install``."""
    import tomllib

    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    folders = {
        "cockpit." + p.relative_to(ROOT / "cockpit").as_posix().replace("/", ".")
        for p in (ROOT / "cockpit").rglob("*")
        if p.is_dir()
        and p.name != "__pycache__"
        and not p.name.startswith(".")
        and any(f.is_file() and f.suffix != ".pyc" for f in p.iterdir())
    }
    assert sorted(folders - listed) == []


@pytest.mark.slow
def test_pip_install_is_quiet_and_the_installed_package_finds_its_data(tmp_path):
    """``pip install .`` (what ``make demo`` runs) prints no setuptools warning, and the
    installed package (not this checkout) finds every drill bundle and the catalogue."""
    target = tmp_path / "site"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    noise = [
        line
        for line in (done.stdout + done.stderr).splitlines()
        if "Location 'file:" not in line  # pip's note on an absent local index, not the build
    ]
    assert not any(
        w in line for line in noise for w in ("would be ignored", "Warning", "deprecated")
    ), "\n".join(noise)
    code = (
        "import json, cockpit\n"
        "from cockpit.drills.catalogue import catalogue\n"
        "from cockpit.i18n import t\n"
        "print(json.dumps([cockpit.__file__, sorted(catalogue()), t('key.help', 'zh')]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"},
    )
    where, drills, word = json.loads(out.stdout)
    assert where.startswith(str(target))
    shipped = sorted(p.name for p in (ROOT / "cockpit/drills/bundles").iterdir() if p.is_dir())
    assert drills == shipped and len(drills) >= 8
    assert word == "帮助"
