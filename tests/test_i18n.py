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


def test_every_source_hint_key_exists_and_is_used():
    """Failure hints are keys (``hint_key="hint.…"``) so panels show them in the UI
    language; each one used exists in both languages, and none in the catalogue is dead."""
    used = set()
    for path in ROOT.glob("cockpit/**/*.py"):
        used |= set(re.findall(r"\"(hint\.[a-z_]+\.[a-z_]+)\"", path.read_text()))
    defined = {k for k in catalog() if k.startswith("hint.")}
    assert len(used) >= 30
    assert used == defined


def test_failure_hint_follows_the_ui_language():
    from cockpit.sources.base import ErrorKind, SourceError, SourceFailure

    err = SourceError.of(
        "kubernetes",
        ErrorKind.ACCESS_DENIED,
        "pods is forbidden",
        hint_key="hint.kube.rbac",
        hint_args={"verb": "list", "resource": "pods", "cmd": "kubectl auth can-i list pods"},
    )
    f = err.failure
    assert f.hint == "RBAC refused 'list pods'. Check with: kubectl auth can-i list pods"
    assert f.hint_in("en") == f.hint
    assert f.hint_in("zh") == "RBAC 拒绝了“list pods”。用这条命令核对：kubectl auth can-i list pods"
    # A failure kept in an older bundle has no key: its English hint is shown as it is.
    old = SourceFailure.model_validate(
        {"source": "x", "kind": "timeout", "message": "m", "hint": "h"}
    )
    assert old.hint_in("zh") == "h"
    # Replayed from a bundle, the key survives the round trip.
    again = SourceFailure.model_validate_json(f.model_dump_json())
    assert again.hint_in("zh") == f.hint_in("zh")


def test_formatting_and_fallback():
    example = {"hm": "20:45", "full": "2026-11-29 20:45"}
    assert t("times.unparsed", "en", text="xx", **example).startswith("Cannot read the time xx")
    assert t("no.such.key", "zh") == "no.such.key"


def test_default_lang_from_locale(monkeypatch):
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert default_lang() == "zh"
    monkeypatch.setenv("LC_ALL", "en_US.UTF-8")
    assert default_lang() == "en"


def test_counted_units_read_as_chinese_in_chinese_messages():
    from cockpit.models.messages import Msg, unit_text

    assert unit_text(" restarts", "zh") == " 次重启" and unit_text(" restarts", "en") == " restarts"
    assert unit_text(" ms", "zh") == " ms" and unit_text("req/s", "zh") == "req/s"
    m = Msg(key="evidence.reason.small_change", args={"unit": " pods", "delta": 0, "min_delta": 1})
    assert "个 Pod" in m.text("zh") and "pods" in m.text("en")
    # a difference of percentages is in percentage points, in both languages
    pp = Msg(key="evidence.reason.small_change", args={"unit": "%", "delta": 8.5, "min_delta": 15})
    assert pp.text("en") == "change +8.5 pp below 15 pp"
    assert pp.text("zh") == "变化 +8.5 个百分点，小于阈值 15 个百分点"


def test_large_numbers_are_written_whole_not_in_exponent_notation():
    from cockpit.models.messages import fmt_number

    assert fmt_number(74120.4) == "74,120" and fmt_number(9000, 3) == "9,000"
    assert fmt_number(13.3617) == "13.36" and fmt_number(0.000123) == "0.000123"
    assert fmt_number(float("nan")) == "nan" and fmt_number(-12345.6) == "-12,346"
    assert fmt_number(8.7e-06, 2, "+") == "+0.0000" and fmt_number(0.0) == "0"
    # Message templates format their g fields the same way (sign included).
    from cockpit.models.messages import Msg

    m = Msg(key="evidence.reason.small_change", args={"unit": "", "delta": 1240.0, "min_delta": 5})
    assert m.text("en") == "change +1,240 below 5"


def test_no_hint_names_a_printable_key_as_a_command():
    # Printable keys are text, never commands: a hint saying "press s" names a key that
    # only types an "s"; the actions are on Alt/Ctrl chords and F-keys.
    lone_key = {
        "en": re.compile(r"\b[Pp]ress ([A-Za-z0-9])(?![\w+])"),
        "zh": re.compile(r"按\s*([A-Za-z0-9])(?![\w+])"),
    }
    bad = [
        f"{key} ({lang}): {text}"
        for key, texts in catalog().items()
        for lang, text in texts.items()
        if lang in lone_key and lone_key[lang].search(text)
    ]
    assert not bad


NOT_COUNTS = {
    # A field followed by a word in -s that is not a count of it: a name and a verb, a list
    # of names, a measured value with its unit.
    ("playbook.ev.gpu_request", "pod"),
    ("metrics.text.scope_selector_resolved_wide", "stacks"),
    ("metrics.text.scope_deployment", "stacks"),
    ("evidence.load.length_mix", "p50_now"),
    ("evidence.load.length_mix", "p95_now"),
}
VERBS_AND_UNITS = {"is", "was", "has", "does", "differs", "overrides", "narrows", "needs", "vs"}
VERBS_AND_UNITS |= {"as", "says", "acts", "exists", "belongs", "contradicts", "fires", "ms", "s"}
COUNTED = re.compile(
    r"\{(\w+)(?::[^}]*)?\}\)? ((?:(?:more|other) )?[A-Za-z][\w/-]*(?:s|\(s\)))(?=\W|$)"
)


def test_every_english_count_agrees_with_its_number():
    """No "1 problems": a count followed by its noun is written ``{n:plural:problem:problems}``
    (never ``{n} problems`` nor ``node(s)``), so that 1 reads in the singular."""
    wrong = []
    for key, entry in catalog().items():
        en = entry["en"]
        if "(s)" in en:
            wrong.append((key, en))
        for m in COUNTED.finditer(en):
            spec = m.group(0).split("}")[0]
            if ":plural:" in spec or (key, m.group(1)) in NOT_COUNTS:
                continue
            if m.group(2).split()[-1] not in VERBS_AND_UNITS:
                wrong.append((key, m.group(0)))
    assert wrong == []


def test_a_count_of_one_is_singular_and_others_plural():
    assert t("playbook.summary", "en", problems=1, ok=2, not_applicable=0, open=0, na=0) == (
        "1 problem, 2 ok, 0 n/a, 0 open, 0 not available"
    )
    assert t("playbook.summary", "en", problems=0, ok=0, not_applicable=0, open=0, na=0).startswith(
        "0 problems,"
    )
    assert t("kube.reason.unschedulable", "en", count=1) == "1 node is cordoned (unschedulable)"
    assert t("kube.reason.unschedulable", "en", count=3) == "3 nodes are cordoned (unschedulable)"
    assert (
        t(
            "metrics.change.restarts",
            "en",
            pod="p",
            container="c",
            n=1.0,
            reason="OOMKilled",
            first="a",
            last="b",
        )
        == "p container c restarted 1 time (last terminated: OOMKilled), a to b"
    )
    assert t("paste.pinned", "en", n="1") == "Pinned 1 finding."
    assert t("paste.pinned", "en", n=2) == "Pinned 2 findings."
    # Chinese has one form: the number and its Chinese measure word.
    assert t("paste.pinned", "zh", n=1) == "已钉住 1 条发现。"


def test_chinese_messages_have_no_english_count_words():
    """A Chinese message counts with its own words (``{n} 个问题``): never a plural form nor an
    English noun after a count."""
    wrong = []
    for key, entry in catalog().items():
        zh = entry["zh"]
        if ":plural:" in zh or "(s)" in zh:
            wrong.append((key, zh))
        for m in COUNTED.finditer(zh):
            if re.fullmatch(r"[A-Za-z]+s", m.group(2)) and m.group(2) not in VERBS_AND_UNITS:
                wrong.append((key, m.group(0)))
    assert wrong == []
