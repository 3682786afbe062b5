"""At 80×24 every step opens at its top, shows whole times, keeps one-line fields apart,
fits its keys in the footer, and lays the export preview out in its place (not over the
panel under it)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

import pytest
from textual.containers import Horizontal
from textual.widgets import Input, Label

from cockpit.app import STEP_SCREENS, CockpitApp
from cockpit.i18n import t
from cockpit.timeparse import fmt_time
from demo_ctx import demo_ctx


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("step", list(STEP_SCREENS))
async def test_a_step_at_80x24_opens_at_its_top_and_keeps_fields_apart(tmp_path, step, lang):
    ctx = demo_ctx(tmp_path, lang)
    app = CockpitApp(ctx=ctx, start_step=step)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        # The panels loading (a table choosing its best row) do not scroll the page.
        assert app.screen.query_one("#step-body").scroll_y == 0, step
        # One-line fields side by side have a column between them.
        for row in app.screen.query(Horizontal):
            shown = [w for w in row.children if w.display and w.region.width]
            for left, right in itertools.pairwise(shown):
                if isinstance(right, Input) and isinstance(left, Input | Label):
                    # A field's text never runs into its neighbour's, nor its label's.
                    assert right.region.x > left.region.right, (step, left.id, right.id)
        # Every key the footer shows is on screen, none cut at the right edge.
        footer = app.screen.query_one("CockpitFooter")
        keys = list(footer.query("FooterKey"))
        width = sum(k.outer_size.width for k in keys) + sum(
            w.outer_size.width for w in footer.children if w not in keys and w.display
        )
        assert keys and width <= 80, [(k.key, k.outer_size.width) for k in keys]


@pytest.mark.parametrize("step", ["A", "I"])
async def test_the_four_times_are_shown_whole_at_80x24(tmp_path, step):
    ctx = demo_ctx(tmp_path, "en")
    when = datetime(2026, 11, 27, 12, 11, tzinfo=UTC)
    for name in ("start", "detect", "mitigate", "recover"):
        ctx.session.set_time(name, when)
    app = CockpitApp(ctx=ctx, start_step=step)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        for name in ("start", "detect", "mitigate", "recover"):
            field = app.screen.query_one(f"#time-{name}", Input)
            assert field.value == fmt_time(when)
            assert field.content_region.width > len(field.value), (name, field.content_region)


async def test_is_preview_is_laid_out_in_place_not_over_the_back_test(tmp_path):
    ctx = demo_ctx(tmp_path, "en")
    app = CockpitApp(ctx=ctx, start_step="I")
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        app.screen.query_one("#export-preview-btn").press()
        box = app.screen.query_one("#export-box")
        preview = app.screen.query_one("#export-preview")
        for _ in range(50):  # the Markdown is built in the background
            await pilot.pause(0.1)
            if preview.region.height > 2:
                break
        await pilot.pause()
        assert preview.region.height > 2
        assert box.region.height == preview.region.height
        after = app.screen.query_one("#bt-table")
        assert after.region.y >= box.region.bottom


GLOBAL_KEYS = ["f1", "f6", "f7", "f8", "alt+left", "alt+right", "ctrl+p"]
"""Help, paste evidence, playbooks, history, back/next and the palette: on every footer."""


def _footer_keys(app: CockpitApp) -> list[tuple[str, int, int]]:
    footer = app.screen.query_one("CockpitFooter")
    return sorted(
        (k.region.x, k.region.right, k.key)
        for k in footer.query("FooterKey")
        if k.display and k.region.width
    )


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
@pytest.mark.parametrize("step", list(STEP_SCREENS))
async def test_the_footer_keeps_the_global_keys_whatever_has_focus(tmp_path, step, size):
    """With focus on nothing and on each kind of widget of the step in turn (a panel's table,
    a field, a button), the footer shows the global keys, none cut, and a focused panel's keys
    only where they fit after them."""
    ctx = demo_ctx(tmp_path, "en")
    app = CockpitApp(ctx=ctx, start_step=step)
    width = size[0]
    async with app.run_test(size=size) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        kinds: dict[str, object] = {"nothing": None}
        for widget in app.screen.focus_chain:
            kinds.setdefault(type(widget).__name__, widget)
        for kind, widget in kinds.items():
            app.screen.set_focus(widget, scroll_visible=False)  # type: ignore[arg-type]
            await pilot.pause()
            await pilot.pause()
            shown = _footer_keys(app)
            keys = [key for _, _, key in shown]
            for key in GLOBAL_KEYS:
                # Compact, Back and Next are one key (alt+←→): its binding is Next's.
                if width < 110 and key == "alt+left":
                    continue
                assert key in keys, (step, kind, key, shown)
            for left, right in itertools.pairwise(shown):
                assert left[1] <= right[0], (step, kind, shown)  # no key drawn over another
            assert shown[-1][1] <= width, (step, kind, shown)  # none past the right edge
            # The global keys come first, left to right in this order.
            order = [k for k in keys if k in GLOBAL_KEYS and k != "ctrl+p"]
            assert order == [k for k in GLOBAL_KEYS if k in order], (step, kind, keys)
            assert keys[: len(order)] == order, (step, kind, keys)


async def test_every_text_area_wraps_a_long_line_in_sight(tmp_path):
    """F6's paste box and every multi-line field of every step wrap a long pasted line at 80
    columns: its end is on screen without scrolling right."""
    from textual.widgets import TextArea

    line = "Xid 79 on node gpu-node-3: " + " ".join(f"word{i}" for i in range(40)) + " THE-END"
    ctx = demo_ctx(tmp_path, "en")
    app = CockpitApp(ctx=ctx, start_step="A")
    seen: set[str] = set()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()

        async def check(where: str) -> None:
            for area in app.screen.query(TextArea):
                seen.add(f"{where}:{area.id}")
                assert area.soft_wrap, (where, area.id)

        for step in STEP_SCREENS:
            app.goto(step)
            await pilot.pause()
            await check(step)
        await pilot.press("f6")
        await pilot.pause()
        area = app.screen.query_one("#paste-text", TextArea)
        area.focus()
        area.insert(line)
        await pilot.pause()
        await check("F6")
        assert area.max_scroll_x == 0 and area.scroll_x == 0
        assert area.wrapped_document.height > 1
        shown = "".join(
            "".join(seg.text for seg in strip) for strip in app.screen._compositor.render_strips()
        )
        assert "THE-END" in shown
    assert any(s.startswith("F6:") for s in seen) and any("gpu-paste" in s for s in seen), seen


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("step", list(STEP_SCREENS))
async def test_no_field_or_row_of_a_step_is_cut(tmp_path, step, lang, size):
    """At 80×24 and 160×48 no widget of a step reaches past the right edge of the box it
    sits in (a row of fields, a panel), every text field shows its example whole (the
    four times' examples, the cohort's suspect field) and its value whole, every button
    its label; at 80 columns every table of the step and its panels fits the screen's
    width, no cell cut and none reached by scrolling sideways (see :data:`WIDER_THAN_80`)."""
    from textual.widget import Widget
    from textual.widgets import DataTable

    from cockpit.ui.plugins import load_panels

    ctx = demo_ctx(tmp_path, lang)
    ctx.panels = load_panels()
    app = CockpitApp(ctx=ctx, start_step=step)
    async with app.run_test(size=size) as pilot:
        for _ in range(3):
            await app.workers.wait_for_complete()
            await pilot.pause()
        cut = []
        for widget in app.screen.query("*"):
            parent = widget.parent
            if not (widget.display and widget.region.width) or not isinstance(parent, Widget):
                continue
            if isinstance(parent, DataTable) or not parent.region.width:
                continue
            if widget.region.right > parent.region.right:
                cut.append(("past its box", widget.id or type(widget).__name__))
            if isinstance(widget, Input):
                room = widget.content_region.width
                shown = widget.value or widget.placeholder
                from rich.cells import cell_len

                if cell_len(shown) >= room:
                    cut.append(("text cut", widget.id, shown, room))
        assert cut == [], cut
        assert _cut_buttons(app) == []
        if size[0] == 80:
            assert _tables_not_fitting(app) == []


WIDER_THAN_80: dict[str, int] = {"dd-table": 5, "gpu-table": 8}
"""The tables whose columns after the first few (what the verdict rests on) may go past the
right edge at 80 columns: C's signals past the verdict (their layer, window max, instant
and trend), the GPU panel's past the ECC errors (the SM clock, the links, the pod and the
model). The highlighted row is then read whole in the pane under the table."""


def _tables_not_fitting(app: CockpitApp) -> list[tuple[str | None, str, object]]:
    """The tables of the step wider than the screen lets them be: scrolling sideways, or
    a cell wider than its column (cut) on a row that does not wrap."""
    from rich.cells import cell_len
    from textual.widgets import DataTable

    bad: list[tuple[str | None, str, object]] = []
    for table in app.screen.query(DataTable):
        if not (table.display and table.region.width and table.row_count):
            continue
        kept = WIDER_THAN_80.get(table.id or "")
        columns = table.ordered_columns
        if kept is None:
            if table.max_scroll_x > 0:
                bad.append((table.id, "scrolls sideways", table.virtual_size.width))
        elif kept:
            used = sum(c.get_render_width(table) for c in columns[:kept])
            if used > table.scrollable_content_region.width:
                bad.append((table.id, "first columns past the edge", used))
            detail = app.screen.query_one(f"#{table.id}-detail")
            if table.max_scroll_x > 0 and not detail.display:
                bad.append((table.id, "past the edge, its row not shown whole", used))
        for j, column in enumerate(columns[: kept or None]):
            room = column.get_render_width(table) - 2 * table.cell_padding
            if cell_len(str(column.label)) > room * table.header_height:
                bad.append((table.id, "heading cut", str(column.label)))
            for i in range(table.row_count):
                cell = str(table.get_row_at(i)[j])
                if table.ordered_rows[i].height == 1 and cell_len(cell) > room:
                    bad.append((table.id, "cell cut", cell))
    return bad


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_e_cohort_table_fits_80_columns_with_its_marks_in_sight(tmp_path, lang):
    """E's cohort table at 80×24: the signal's name (16 characters a line at the least) and
    the values wrap so that every column (the values, the "◀ outlier" mark) is inside the
    table, none past its right edge."""
    ctx = demo_ctx(tmp_path, lang)
    app = CockpitApp(ctx=ctx, start_step="E")
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(3):
            await app.workers.wait_for_complete()
            await pilot.pause()
        field = app.screen.query_one("#cohort-suspect", Input)
        field.value = "vllm-qwen25-72b-83e43e1c66-ebbbl"
        field.focus()
        await pilot.press("enter")
        for _ in range(5):
            await app.workers.wait_for_complete()
            await pilot.pause()
        table = app.screen.query_one("#cohort-table")
        assert table.row_count > 10
        assert table.virtual_size.width <= table.scrollable_content_region.width
        # The names are whole, on more lines: the first row is taller than one line.
        assert any(row.height > 1 for row in table.rows.values())
        # The signal's name keeps 16 characters a line, the other values wrapping too.
        signal = table.ordered_columns[0]
        assert signal.get_render_width(table) - 2 * table.cell_padding >= 16


@pytest.mark.parametrize("branch", ["release", "single", "shared", ""])
async def test_back_from_e_and_g_goes_to_the_step_before_whatever_the_branch(tmp_path, branch):
    """Alt+Left on E (after D answered "the whole release", too) goes back to D, and on G
    to the branch's step, never failing for want of a predecessor."""
    from cockpit.flow import Branch

    ctx = demo_ctx(tmp_path, "en")
    ctx.session.set_branch(Branch(branch) if branch else "")
    app = CockpitApp(ctx=ctx, start_step="E")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("alt+left")
        await pilot.pause()
        assert app.current_step() == "D"
        app.goto("G")
        await pilot.pause()
        await pilot.press("alt+left")
        await pilot.pause()
        assert app.current_step() == ("F" if branch == "shared" else "E")


def _cut_buttons(app: CockpitApp) -> list[tuple[str | None, str, int]]:
    """The buttons on screen whose label is wider than the button."""
    from rich.cells import cell_len
    from textual.widgets import Button

    return [
        (b.id, str(b.label), b.content_region.width)
        for b in app.screen.query(Button)
        if b.display and b.region.width and cell_len(str(b.label)) > b.content_region.width
    ]


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_d_branch_buttons_fit_their_labels_once_a_branch_is_chosen(tmp_path, lang, size):
    """After a branch is chosen on D, its buttons say "Chosen …: go on" and "Change to …":
    back on D each button is as wide as its new label, none cut at its end."""
    from textual.widgets import Button

    ctx = demo_ctx(tmp_path, lang)
    app = CockpitApp(ctx=ctx, start_step="D")
    async with app.run_test(size=size) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert _cut_buttons(app) == []
        app.screen.query_one("#branch-single", Button).press()
        await pilot.pause()
        app.goto("D")
        await app.workers.wait_for_complete()
        await pilot.pause()
        labels = [
            str(app.screen.query_one(f"#branch-{n}", Button).label) for n in ("single", "shared")
        ]
        assert labels == [t("flow.branch_single_again", lang), t("flow.branch_shared_switch", lang)]
        assert _cut_buttons(app) == []
