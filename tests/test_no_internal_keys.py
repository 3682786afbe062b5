"""No internal key reaches a person: every step's text on each of the six incidents, and the
export of an incident with every C and E row pinned, in both languages, name signals and
fields by their human names (``GPU temperature``, never ``hardware.temp:value``; never an
explain field's ``node_effect_text:``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from textual.widget import Widget
from textual.widgets import Button, DataTable, Input, Static

from cockpit.app import CockpitApp
from cockpit.ui.plugins import load_panels
from testkit import fetch_once, settle
from tests.test_incident_story import INCIDENTS
from tests.test_metric_history import ctx_for

INTERNAL = re.compile(r"\b[a-z]+\.[a-z_]+:[a-z0-9]+\b|\b[a-z]+(?:_[a-z]+)*_text:")
"""A signal key (``serving.queue_time:p99``) or a model field named ``…_text``."""

STEPS = "ABCDEFGHI"


def _widget_text(w: Widget) -> list[str]:
    if isinstance(w, DataTable):
        rows = [w.get_row_at(i) for i in range(w.row_count)]
        cols = [str(c.label) for c in w.columns.values()]
        return cols + [str(cell) for row in rows for cell in row]
    if isinstance(w, Input):
        return [w.value, str(w.placeholder)]
    if isinstance(w, (Static, Button)):
        return [str(w.render())]
    return []


def _screen_text(app: CockpitApp) -> list[str]:
    return [x for w in app.screen.query("*") for x in _widget_text(w)]


def leaks(texts: list[str]) -> list[str]:
    """The internal keys ``texts`` show."""
    return sorted({m.group(0) for x in texts for m in INTERNAL.finditer(x)})


def test_the_pattern_finds_what_leaked() -> None:
    shown = ["GPU 2 (GPU-49f3…) hardware.temp:value = 90 °C", "node_effect_text: "]
    assert leaks(shown) == ["hardware.temp:value", "node_effect_text:"]
    assert leaks(["GPU temperature = 90 °C", "http://127.0.0.1:9090", "P99 12:40"]) == []


@pytest.fixture(autouse=True)
def _fetch_once(monkeypatch: pytest.MonkeyPatch) -> None:
    fetch_once(monkeypatch)


@pytest.mark.parametrize("name", INCIDENTS)
async def test_no_step_and_no_export_shows_an_internal_key(
    prometheus_scenario: Any, tmp_path: Path, name: str
) -> None:
    from cockpit.export import render
    from cockpit.plugins.cohort import CohortPanel
    from cockpit.ui.drilldown_view import DrilldownView

    srv = prometheus_scenario(name)
    found: dict[str, list[str]] = {}
    for lang in ("en", "zh"):
        ctx = ctx_for(srv, tmp_path / lang, srv.scenario.scope["deployment"])
        ctx.lang = lang
        ctx.panels = load_panels()
        app = CockpitApp(ctx=ctx, start_step="A")
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(pilot)
            for step in STEPS:
                app.goto(step)
                await settle(pilot)
                if step == "C":
                    view = app.screen.query_one(DrilldownView)
                    table = view.query_one(DataTable)
                    for row in range(table.row_count):
                        table.move_cursor(row=row)
                        view.action_pin()
                if step == "E":
                    for panel in app.screen.query(CohortPanel):
                        table = panel.query_one("#cohort-table", DataTable)
                        for row in range(table.row_count):
                            table.move_cursor(row=row)
                            panel.action_pin()
                await settle(pilot)
                if got := leaks(_screen_text(app)):
                    found[f"{lang} {step}"] = got
        assert ctx.session is not None
        assert ctx.session.incident.evidence, "nothing was pinned"
        for out in ("en", "zh"):
            got = leaks([render(ctx.session.incident, lang=out, fmt="md")])
            if got:
                found[f"{lang} export {out}"] = got
        await ctx.sources.close()
    assert not found, found


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_explain_of_an_xid_shows_no_empty_or_internal_field(lang: str) -> None:
    """F6 and ``cockpit explain`` on a kernel log with an Xid: no ``node_effect_text:``
    (said in the finding's meaning when there is a node effect; empty otherwise)."""
    from cockpit.analysis.explain import explain_text
    from cockpit.analysis.explain_report import to_text

    log = (
        "[Thu Nov 27 12:40:01 2026] NVRM: Xid (PCI:0000:3b:00): 79, pid=48213, "
        "name=python3, GPU has fallen off the bus.\n"
    )
    text = to_text(explain_text(log, lang=lang), lang)
    assert "Xid" in text and "79" in text, text
    assert leaks([text]) == [], text
    assert not re.search(r"^ {4}[^ -][^:]*: *$", text, re.M), text  # an empty field
    with_node = log + "Capacity:\n  nvidia.com/gpu: 8\nAllocatable:\n  nvidia.com/gpu: 7\n"
    text = to_text(explain_text(with_node, lang=lang), lang)
    assert "node_effect_text" not in text
    assert ("7 of 8" if lang == "en" else "7/8") in text, text


@pytest.mark.parametrize(
    ("query", "en", "zh"),
    [
        (
            'avg by () (DCGM_FI_DEV_FB_RESERVED{namespace="a"})',
            "average of the service's GPUs",
            "平均值",
        ),
        ("max by () (DCGM_FI_DEV_FB_RESERVED{})", "highest of the service's GPUs", "最大值"),
        ("", "the service's GPUs together", "全部 GPU"),
    ],
)
def test_a_pinned_gpu_signal_says_which_gpus_it_stands_for(query: str, en: str, zh: str) -> None:
    from cockpit.analysis.golden import SignalSummary
    from cockpit.models import Reading
    from cockpit.pins import signal_evidence

    s = SignalSummary(
        key="hardware.fb_reserved:value",
        signal="hardware.fb_reserved",
        layer="hardware",
        unit="MiB",
        now=Reading.known(511.0, "MiB"),
        query=query,
    )
    ev = signal_evidence(s, "en", step="C")
    assert ev is not None
    assert ev.label == f"memory reserved, {en}"
    assert ev.label_i18n["zh"].startswith("显存保留") and zh in ev.label_i18n["zh"]


SNAKE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
"""A field or class name (``root_xids``, ``fell_off_bus``, ``xid_hw``): never words."""

GPU_LOST = (
    "NVRM: Xid (PCI:0000:18:00): 79, pid=1234, GPU has fallen off the bus.\n"
    "NVRM: GPU 0000:18:00.0: GPU is lost\n"
)


def snake_names(text: str) -> list[str]:
    """The field and class names ``text`` shows."""
    return sorted({m.group(0) for m in SNAKE.finditer(text)})


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_explain_of_a_lost_gpu_names_every_field_in_words(lang: str) -> None:
    """F6 and ``cockpit explain`` on the dmesg of a GPU fallen off the bus: the heading
    and every extracted field have a human name and a human value, no ``xid_hw/…``,
    ``root_xids``, ``first_line`` nor ``severity: fell_off_bus``."""
    from cockpit.analysis.explain import explain_text
    from cockpit.analysis.explain_report import to_json, to_text

    expl = explain_text(GPU_LOST, lang=lang)
    text = to_text(expl, lang)
    fields = text.split(to_json(expl, lang)["findings"][0]["title"], 1)[1]
    shown = [ln for ln in fields.splitlines() if not ln.lstrip().startswith(("L1 ", "L2 "))]
    assert snake_names("\n".join(shown)) == [], text
    assert "(" + "root_xids" + ")" not in text and "escalate_if" not in text
    assert ("根因 Xid: 79" if lang == "zh" else "root Xids: 79") in text, text


def test_every_field_explain_shows_has_a_name_in_words_in_both_languages() -> None:
    """The whole class: every ``explain.field.*`` name reads as words in English as in
    Chinese (never the key itself), and every field the real cases show does too."""
    from cockpit.analysis.explain import explain_text
    from cockpit.analysis.explain_report import field_lines
    from cockpit.i18n import catalog, t
    from tests.test_explain_cases import CASES

    keys = [k for k in catalog() if k.startswith(("explain.field.", "explain.value."))]
    assert len(keys) > 60
    for key in keys:
        for lang in ("en", "zh"):
            assert not SNAKE.fullmatch(t(key, lang)), (key, lang)
    found: dict[str, list[str]] = {}
    for case in CASES:
        for lang in ("en", "zh"):
            for f in explain_text(case["artifact"], lang=lang).findings:
                pairs = [ln.split(": ", 1) for ln in field_lines(f.fields, lang=lang)]
                bad = [x for p in pairs for x in p[:1] + p[1:] if SNAKE.fullmatch(x)]
                bad += [p[0] for p in pairs if SNAKE.search(p[0])]
                if bad:
                    found[f"{case['id']} {lang}"] = bad
    assert not found, found


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_kernel_saying_a_gpu_is_lost_is_hardware_not_an_application_error(
    lang: str,
) -> None:
    """``NVRM: GPU 0000:18:00.0: GPU is lost`` is the driver's word (Xid 79 family), one
    finding with the Xid line; alone it is still read as Xid 79, never as a CUDA runtime
    error of the application."""
    from cockpit.analysis.explain import explain_text

    both = explain_text(GPU_LOST, lang=lang)
    assert both.kinds == ["xid"], both.kinds
    assert [e.line for e in both.findings[0].evidence] == [1, 2]
    alone = explain_text(GPU_LOST.splitlines()[1], lang=lang)
    assert alone.kinds == ["xid"], alone.kinds
    assert alone.findings[0].fields["xid"] == 79 and alone.findings[0].fields["xid_inferred"]
    assert alone.findings[0].fields["likely"] == "hardware"
    # The application's own word for it stays the application's.
    app = explain_text("RuntimeError: CUDA error: GPU is lost\n", lang=lang)
    assert app.kinds == ["cuda_error"], app.kinds


async def test_a_pasted_finding_reads_in_words_in_the_export_of_each_language(
    tmp_path: Path,
) -> None:
    """F6 → Pin on the dmesg of a lost GPU: the export's evidence, in Chinese as in
    English, gives the verdict, the fields and the log line in words — never
    ``category=xid_hw, cause=gpu_lost`` nor a query ``line 1``."""
    from cockpit.export import render
    from testkit import make_ctx

    ctx = make_ctx(tmp_path, lang="zh")
    app = CockpitApp(ctx=ctx, start_step="C")
    async with app.run_test(size=(140, 48)) as pilot:
        await pilot.pause()
        await pilot.press("f6")
        await pilot.pause()
        app.screen.query_one("#paste-text").text = GPU_LOST  # type: ignore[attr-defined]
        app.screen.query_one("#paste-pin", Button).press()
        await app.workers.wait_for_complete()
        await pilot.pause()
    assert ctx.session is not None
    (_ev,) = [e for e in ctx.session.incident.evidence if e.source == "explain"]
    for lang, verdict, field in (
        ("en", "fell off the bus", "root Xids: 79"),
        ("zh", "从总线上掉线", "根因 Xid: 79"),
    ):
        out = render(ctx.session.incident, lang=lang, fmt="md")
        line = next(x for x in out.splitlines() if "NVRM: Xid (PCI:0000:18:00): 79" in x)
        assert verdict in line and field in line, line
        assert snake_names(line.split("`")[0] + line.split("`")[-1]) == [], line
        assert "line 1`" not in line and "=" not in line.split("`")[-1], line


SOURCE_FILE = re.compile(r"\b[\w/]+\.py\b")
"""A source module's file name (``request_failures.py``): never words for a person."""


def test_no_text_a_person_reads_names_a_source_file() -> None:
    """The whole class: every text of the catalogue and every ``*_en`` / ``*_zh`` text of
    the engine profiles (C's explanation of a signal with no data, its note) says what
    it means without naming the file it comes from (that stays in ``source``)."""
    import tomllib

    from cockpit.i18n import catalog

    found = [
        f"{key}.{lang}"
        for key, entry in catalog().items()
        for lang, text in entry.items()
        if SOURCE_FILE.search(str(text))
    ]
    profiles = Path(__file__).parent.parent / "cockpit" / "knowledge" / "profiles"

    def walk(where: str, node: Any) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if k.endswith(("_en", "_zh")) and isinstance(v, str) and SOURCE_FILE.search(v):
                    found.append(f"{where}.{k}")
                walk(f"{where}.{k}", v)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(f"{where}[{i}]", v)

    for path in sorted(profiles.glob("*.toml")):
        walk(path.stem, tomllib.loads(path.read_text(encoding="utf-8")))
    assert not found, found


def test_a_pinned_count_reads_its_unit_in_the_reader_s_language() -> None:
    """A pinned Xid signal counts ``changes``: the Chinese note and the Chinese export say
    ``次变化``-style words, never ``0 changes``."""
    from cockpit.analysis.golden import SignalSummary
    from cockpit.export import render
    from cockpit.incident import Incident
    from cockpit.models import Reading
    from cockpit.models.messages import unit_text
    from cockpit.pins import signal_evidence

    s = SignalSummary(
        key="hardware.xid:value",
        signal="hardware.xid",
        layer="hardware",
        unit="changes",
        now=Reading.known(2.0, "changes"),
        baseline=Reading.known(0.0, "changes"),
        query="max(DCGM_FI_DEV_XID_ERRORS)",
    )
    ev = signal_evidence(s, "en", step="C")
    assert ev is not None
    zh_unit = unit_text("changes", "zh")
    assert zh_unit != "changes"
    assert "changes" not in ev.note_i18n["zh"] and zh_unit.strip() in ev.note_i18n["zh"]
    inc = Incident(id="inc-u", evidence=[ev])
    zh = render(inc, lang="zh", fmt="md")
    line = next(x for x in zh.splitlines() if "DCGM_FI_DEV_XID_ERRORS" in x)
    assert " changes" not in line and zh_unit.strip() in line, line
