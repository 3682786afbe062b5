"""Export of the incident template: golden files in zh/en × Markdown/JSON from a fully
populated and an empty incident, template order, markers, JSON shape and round trip.

Regenerate the golden files after an intended change with
``COCKPIT_REGEN_GOLDEN=1 pytest tests/test_export.py`` and review the diff."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta, timezone
from pathlib import Path

import pytest

from cockpit.export import (
    TEMPLATE_KEYS,
    ExportDocument,
    build_document,
    format_offset,
    render,
)
from cockpit.i18n import t
from cockpit.incident import Evidence, Incident, IncidentTimes
from tests.conftest import DATA
from tests.helpers.sample_incident import ALERT_RULE, at, empty_incident, full_incident

GOLDEN = Path(__file__).parent / "golden" / "export"
TZ = timezone(timedelta(hours=8))
REGEN = os.environ.get("COCKPIT_REGEN_GOLDEN") == "1"

# The template at the end of seed 000_98f0f2273dcebb14.txt ("事故记录最小模板"), verbatim.
SEED_TEMPLATE = """# 事故：<标题>
- 影响：
- 开始 / 检测 / 缓解 / 恢复时间：
- 用户症状与 SLO：
- 最近变更：
- 关键证据：
- 根因（技术 + 系统性）：
- 临时缓解：
- 长期行动项（owner / deadline / 验证方式）：
- 哪个监控或流程本可更早发现："""

CASES = [
    (which, lang, fmt)
    for which in ("full", "empty")
    for lang in ("zh", "en")
    for fmt in ("md", "json")
]


def _incident(which: str) -> Incident:
    return full_incident() if which == "full" else empty_incident()


@pytest.mark.parametrize(("which", "lang", "fmt"), CASES)
def test_export_matches_golden_file(which: str, lang: str, fmt: str) -> None:
    out = render(_incident(which), lang, fmt, TZ)  # type: ignore[arg-type]
    path = GOLDEN / f"{which}.{lang}.{fmt}"
    if REGEN:
        path.write_text(out, encoding="utf-8")
    assert out == path.read_text(encoding="utf-8")


def test_seed_template_constant_is_the_seed_text() -> None:
    seed = DATA / "seeds" / "000_98f0f2273dcebb14.txt"
    assert SEED_TEMPLATE in seed.read_text(encoding="utf-8")


def _template_labels_zh() -> list[str]:
    lines = SEED_TEMPLATE.splitlines()
    return [lines[0].removeprefix("# ").split("：")[0]] + [
        line.removeprefix("- ").removesuffix("：") for line in lines[1:]
    ]


def test_zh_labels_are_the_seed_wording_in_seed_order() -> None:
    assert [t(f"export.field.{k}", "zh") for k in TEMPLATE_KEYS] == _template_labels_zh()


@pytest.mark.parametrize("which", ["full", "empty"])
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_markdown_has_every_template_field_in_order(which: str, lang: str) -> None:
    out = render(_incident(which), lang, "md", TZ)  # type: ignore[arg-type]
    lines = out.splitlines()
    colon = t("export.colon", lang)
    assert lines[0].startswith(f"# {t('export.field.title', lang)}{colon}")
    positions = []
    for key in TEMPLATE_KEYS[1:]:
        prefix = f"- {t(f'export.field.{key}', lang)}{colon}".rstrip()
        found = [i for i, line in enumerate(lines) if line.startswith(prefix)]
        assert len(found) == 1, (key, found)
        positions.append(found[0])
    assert positions == sorted(positions)
    # The template comes before every appendix.
    first_appendix = next(i for i, line in enumerate(lines) if line.startswith("## "))
    assert positions[-1] < first_appendix


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_empty_incident_marks_every_field_not_filled(lang: str) -> None:
    out = render(empty_incident(), lang, "md", TZ)  # type: ignore[arg-type]
    marker = t("export.not_filled", lang)
    colon = t("export.colon", lang).strip()
    template_part = out.split("\n## ")[0]
    content = [line for line in template_part.splitlines() if line.strip()]
    for line in content:
        # Either the field says it is not filled, or it is the heading of a group
        # (times, symptoms/SLO, root cause) whose sub-lines say so.
        assert line.endswith(marker) or line.endswith(colon), line
    # title, impact, 4 times, symptoms + SLO, changes, evidence, 2 root causes,
    # mitigation, actions, earlier detection
    assert template_part.count(marker) == 15
    doc = build_document(empty_incident(), lang)  # type: ignore[arg-type]
    assert not any(getattr(doc.template, k).filled for k in TEMPLATE_KEYS)


def test_full_incident_fills_every_field_and_shows_no_marker_in_the_template() -> None:
    doc = build_document(full_incident(), "en", TZ)
    assert all(getattr(doc.template, k).filled for k in TEMPLATE_KEYS)
    out = render(full_incident(), "en", "md", TZ)
    template_part = out.split("\n## ")[0]
    # Only the second action item lacks a deadline and a verification.
    assert template_part.count("(not filled)") == 2


def test_evidence_lists_value_unit_time_and_query() -> None:
    out = render(full_incident(), "en", "md", TZ)
    line = next(x for x in out.splitlines() if x.startswith("  - P99 latency: 620 ms"))
    assert "at 2026-11-28T12:25:00Z" in line
    assert "query `histogram_quantile(0.99, sum by (le)" in line


def test_changes_are_in_the_time_order_of_b_and_suspects_are_marked_in_place() -> None:
    from cockpit.analysis.changes import table_changes

    inc = full_incident()
    doc = build_document(inc, "zh", TZ)
    changes = doc.template.recent_changes.changes
    # One order everywhere: B's table's (by time, no time last), the suspect not moved up.
    assert [c.id for c in changes] == ["chg-helm", "chg-node", "chg-manual"]
    assert [c.id for c in changes] == [key for key, _ in table_changes(inc.changes, [])]
    out = render(full_incident(), "zh", "md", TZ)
    section = out.split("- 最近变更：")[1].split("\n- ")[0]
    second = section.strip().splitlines()[1].strip()
    assert second.startswith("- **[可疑]** 2026-11-28T11:30:00Z · 节点 · gpu-node-7")


def test_times_are_utc_with_local_offset_and_order_is_checked() -> None:
    inc = full_incident()
    out = render(inc, "en", "md", TZ)
    assert "- Start: 2026-11-28T12:00:00Z (local 2026-11-28 20:00:00 +08:00)" in out
    assert "the local offset at export was +08:00" in out
    bad = inc.model_copy(update={"times": IncidentTimes(start=at(10), detect=at(5))})
    out = render(bad, "en", "md", TZ)
    assert "times out of order: Detected is before Start" in out
    assert build_document(bad, "en", TZ).template.times.order_problems == ["detect<start"]
    assert format_offset(timezone(timedelta(hours=-5, minutes=-30))) == "-05:30"


def test_alert_rule_goes_with_the_earlier_detection_field() -> None:
    for lang in ("zh", "en"):
        out = render(full_incident(), lang, "md", TZ)  # type: ignore[arg-type]
        field = out.split(f"- {t('export.field.earlier_detection', lang)}")[1].split("\n## ")[0]
        assert "```yaml" in field
        assert "alert: LLMServingP99High" in field
    doc = json.loads(render(full_incident(), "en", "json", TZ))
    assert doc["template"]["earlier_detection"]["alert_rule"] == ALERT_RULE


def test_json_shape_is_stable_and_in_template_order() -> None:
    for which in ("full", "empty"):
        doc = json.loads(render(_incident(which), "zh", "json", TZ))
        assert list(doc) == [
            "format",
            "format_version",
            "lang",
            "local_offset",
            "record",
            "labels",
            "template",
            "appendices",
        ]
        assert doc["format"] == "cockpit.incident-export"
        assert doc["format_version"] == 1
        assert list(doc["template"]) == list(TEMPLATE_KEYS)
        assert list(doc["labels"]) == list(TEMPLATE_KEYS)
        assert list(doc["appendices"]) == [
            "timeline",
            "hypotheses",
            "experiments",
            "path",
            "collect_first",
            "playbooks",
            "recovery",
            "corrections",
        ]
        for key in TEMPLATE_KEYS:
            assert isinstance(doc["template"][key]["filled"], bool)
    empty = json.loads(render(empty_incident(), "en", "json", TZ))
    assert empty["template"]["impact"] == {"filled": False, "value": None}


def test_json_round_trip_reproduces_the_record() -> None:
    inc = full_incident()
    text = render(inc, "en", "json", TZ)
    back = ExportDocument.model_validate_json(text)
    assert back == build_document(inc, "en", TZ)
    assert back.template.key_evidence.items == inc.evidence
    assert back.template.long_term_actions.items == inc.actions
    assert back.appendices.hypotheses == inc.hypotheses
    assert back.appendices.experiments == inc.experiments
    assert back.appendices.collect_first == inc.collect
    assert back.template.times.start == inc.times.start
    assert back.template.root_cause.technical == inc.root_cause_technical
    # The schema is available for consumers and names every template field.
    schema = ExportDocument.model_json_schema()
    assert set(TEMPLATE_KEYS) <= set(schema["$defs"]["Template"]["properties"])


def test_export_reflects_a_change_to_the_record() -> None:
    inc = full_incident()
    inc.evidence.append(
        Evidence(id="ev-new", label="queue length", value="85", unit="req", at=at(27), query="q")
    )
    out = render(inc, "en", "md", TZ)
    assert "queue length: 85 req · at 2026-11-28T12:27:00Z · query `q`" in out
    assert "queue length" not in render(full_incident(), "en", "md", TZ)


def test_an_experiment_without_its_sli_says_not_filled_once() -> None:
    """An experiment recorded without the SLI and its values reads one "(not filled)",
    not "(not filled): (not filled) → (not filled)"; with values but no SLI name, the
    values alone."""
    from cockpit.incident import Experiment

    inc = full_incident()
    inc.experiments = [
        Experiment(number=1, variable="max_num_seqs", from_value="256", to_value="128"),
        Experiment(number=2, variable="replicas", after="310 ms"),
    ]
    out = render(inc, "en", "md", TZ)
    assert "  - SLI: (not filled)\n" in out
    assert "(not filled): (not filled)" not in out
    assert "(not filled) → 310 ms (before → after)" in out


def test_texts_cockpit_wrote_come_in_the_export_language() -> None:
    """An incident worked in Chinese, exported in English: what cockpit wrote (a pinned
    value's label and note, the recovery lines) is in English; what the user typed stays."""
    inc = full_incident()
    inc.evidence.append(
        Evidence(
            id="ev-gen",
            label="网关延迟 P99",
            value="620",
            unit="ms",
            at=at(27),
            query="q",
            note="基线 180；当前 620 ms",
            label_i18n={"zh": "网关延迟 P99", "en": "gateway latency P99"},
            note_i18n={"zh": "基线 180；当前 620 ms", "en": "baseline 180; now 620 ms"},
        )
    )
    from cockpit.incident import TimelineEntry, TimelineKind

    inc.timeline.append(
        TimelineEntry(
            at=at(28),
            kind=TimelineKind.MITIGATION,
            text="缓解：先保全证据",
            text_i18n={"zh": "缓解：先保全证据", "en": "Mitigation: preserve evidence first"},
        )
    )
    inc.recovery.lines = ["✗ 网关延迟 P99：最近 610"]
    inc.recovery.lines_i18n = {
        "zh": ["✗ 网关延迟 P99：最近 610"],
        "en": ["✗ gateway latency P99: last 610"],
    }
    en = render(inc, "en", "md", TZ)
    assert "gateway latency P99: 620 ms" in en and "baseline 180; now 620 ms" in en
    assert "✗ gateway latency P99: last 610" in en
    assert "Mitigation: preserve evidence first" in en
    assert "网关延迟" not in en and "先保全证据" not in en
    zh = render(inc, "zh", "md", TZ)
    assert "网关延迟 P99：620 ms" in zh or "网关延迟 P99: 620 ms" in zh
    assert "✗ 网关延迟 P99：最近 610" in zh
    # the JSON export carries the texts in its language only
    doc = json.loads(render(inc, "en", "json", TZ))
    ev = doc["template"]["key_evidence"]["items"][-1]
    assert ev["label"] == "gateway latency P99" and "label_i18n" not in ev
    assert "lines_i18n" not in doc["appendices"]["recovery"]
    assert all("text_i18n" not in e for e in doc["appendices"]["timeline"])
    mitigations = doc["template"]["mitigation"]["actions_taken"]
    assert mitigations[-1]["text"] == "Mitigation: preserve evidence first"


def test_render_refuses_unknown_format_and_language() -> None:
    with pytest.raises(ValueError):
        render(full_incident(), "zh", "html")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        render(full_incident(), "fr")  # type: ignore[arg-type]


def test_core_modules_do_not_import_textual() -> None:
    code = (
        "import sys, cockpit.export, cockpit.store, cockpit.lifecycle, cockpit.clipboard;"
        "import cockpit.commands.list_cmd, cockpit.commands.export_cmd;"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_export_follows_links_and_never_replaces_special_files(tmp_path: Path) -> None:
    import os
    import threading

    from cockpit.store import write_atomic

    target = tmp_path / "postmortem.md"
    target.write_text("old")
    link = tmp_path / "latest.md"
    link.symlink_to(target)
    assert write_atomic(link, "new") == target
    assert link.is_symlink() and target.read_text() == "new"

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_atomic(fifo, "through the pipe")
    reader.join(5)
    assert got == [b"through the pipe"] and fifo.is_fifo()

    if Path("/dev/full").exists():
        with pytest.raises(OSError):
            write_atomic(Path("/dev/full"), "x" * 100_000)
        assert Path("/dev/full").is_char_device()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_recovery_check_before_the_mitigation_says_it_cannot_judge_it(lang: str) -> None:
    """A check run before the recorded mitigation (a replay frozen before it, a check
    pressed too early) tells the state at its time: the export says so beside its "not
    recovered", instead of contradicting the recovery time above it; a check after the
    recovery says nothing more."""
    from cockpit.session import check_predates

    inc = full_incident()
    inc.recovery.checked_at, inc.recovery.recovered = at(30), False
    assert check_predates(inc.recovery, inc.times.mitigate, inc.times.recover) == (
        "mitigate",
        inc.times.mitigate,
    )
    out = render(inc, lang, "md", TZ)  # type: ignore[arg-type]
    assert t("export.recovery.no", lang) in out
    head = t("export.recovery.before_mitigate", lang, checked="X", at="Y").split("X")[0]
    assert head in out
    inc.recovery.checked_at = at(50)
    assert check_predates(inc.recovery, inc.times.mitigate, inc.times.recover) == (
        "recover",
        inc.times.recover,
    )
    inc.recovery.checked_at, inc.recovery.recovered = at(90), True
    assert check_predates(inc.recovery, inc.times.mitigate, inc.times.recover) is None
    out = render(inc, lang, "md", TZ)  # type: ignore[arg-type]
    assert head not in out


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_live_incident_read_as_of_an_earlier_time_says_so_in_its_mode(lang: str) -> None:
    """``--at`` on a live Prometheus: the title bar says "as of …", and so does the
    export's mode, never a bare "live"."""
    from cockpit.incident import OpenedWith

    inc = full_incident()
    assert inc.mode == "live"
    plain = render(inc, lang, "md", TZ)  # type: ignore[arg-type]
    as_of = t("mode.at", lang, at="").strip().split(" ")[0]
    inc.opened_with = OpenedWith(at=at(0))
    out = render(inc, lang, "md", TZ)  # type: ignore[arg-type]
    line = next(x for x in out.splitlines() if t("export.record.mode", lang) in x)
    assert t("mode.live", lang) in line and as_of in line
    assert as_of not in next(x for x in plain.splitlines() if t("export.record.mode", lang) in x)
