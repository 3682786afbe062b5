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
