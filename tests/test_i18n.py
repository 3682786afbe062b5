import re
from pathlib import Path

from cockpit.i18n import catalog, default_lang, t

ROOT = Path(__file__).resolve().parents[1]


def test_every_message_has_both_languages():
    missing = {k: v for k, v in catalog().items() if not v.get("zh") and not v.get("en")}
    one_sided = [k for k, v in catalog().items() if set(v) != {"zh", "en"}]
    assert not missing and not one_sided


def test_every_literal_key_used_in_code_exists():
    keys = set(catalog())
    used = set()
    for path in [
        *ROOT.glob("cockpit/**/*.py"),
        *ROOT.glob("screens/*.py"),
        *ROOT.glob("plugins/*.py"),
    ]:
        for m in re.finditer(
            r"\bt\(\s*\"([a-z][a-z0-9_]*(?:\.[A-Za-z0-9_]+)+)\"", path.read_text()
        ):
            used.add(m.group(1))
    assert sorted(used - keys) == []


def test_formatting_and_fallback():
    assert t("times.unparsed", "en", text="xx").startswith("Cannot read the time xx")
    assert t("no.such.key", "zh") == "no.such.key"


def test_default_lang_from_locale(monkeypatch):
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert default_lang() == "zh"
    monkeypatch.setenv("LC_ALL", "en_US.UTF-8")
    assert default_lang() == "en"
