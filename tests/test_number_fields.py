"""A field that takes a number (I's hold period, in minutes) never turns a sentence into
one: a key that is no digit is refused with a notice saying what the field takes and
where words go, the digits typed with it are refused too, and a number outside the range
is refused, said with the range, never replaced by the nearest one allowed."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from cockpit.app import CockpitApp
from cockpit.session import HOLD_TARGET
from testkit import make_ctx
from tests.test_one_value_fields import _tab_into, on_hold_field

# Every field that takes a number, on the step that shows it: (step, field id, its value).
NUMBER_FIELDS = [("I", "hold", "15")]


def _notices(app) -> list[str]:
    return [str(n.message) for n in app._notifications]


def _kept_unchanged(ctx) -> bool:
    return not [h for h in ctx.session.incident.history if h.target == HOLD_TARGET]


@pytest.mark.parametrize(("step", "fid", "value"), NUMBER_FIELDS)
@pytest.mark.parametrize("sentence", ["Cordoned node 10 at 7:93", "10 pods drained", "1h"])
async def test_a_sentence_typed_into_a_number_field_changes_nothing_and_says_so(
    tmp_path, step, fid, value, sentence
):
    ctx = make_ctx(tmp_path, lang="en")
    app = CockpitApp(ctx=ctx, start_step=step)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        field = app.screen.query_one(f"#{fid}", Input)
        await _tab_into(app, pilot, field)
        app.clear_notifications()
        await pilot.press(*sentence)
        await pilot.pause()
        assert field.value == value
        said = [m for m in _notices(app) if "takes a number of minutes" in m]
        assert len(said) == 1, _notices(app)
        assert "Hold (minutes)" in said[0] and "(1–1440)" in said[0], said
        assert f"it stays {value}" in said[0] and "Words go in a field for text" in said[0]
        assert "the next one is “Root cause (technical)”" in said[0], said
        await pilot.press("tab")
        await pilot.pause()
        assert _kept_unchanged(ctx)


@pytest.mark.parametrize("typed", ["10793", "0"])
async def test_a_number_out_of_range_is_refused_with_the_range_never_clamped(tmp_path, typed):
    async with on_hold_field(tmp_path) as (ctx, app, pilot, hold):
        await pilot.press(*typed)
        await pilot.pause()
        assert hold.value == typed
        app.clear_notifications()
        await pilot.press("tab")
        await pilot.pause()
        assert ctx.session.incident.recovery.hold_minutes == 15 and _kept_unchanged(ctx)
        assert hold.value == "15"
        said = _notices(app)
        assert any("takes 1–1440 minutes" in m and f"“{typed}”" in m for m in said), said
        assert not any("1440 min" in m and "checking" in m for m in said), said


async def test_enter_with_a_hold_out_of_range_checks_nothing(tmp_path):
    async with on_hold_field(tmp_path) as (ctx, app, pilot, _hold):
        await pilot.press(*"5000", "enter")
        await pilot.pause()
        assert ctx.session.incident.recovery.checked_at is None
        assert ctx.session.incident.recovery.hold_minutes == 15
        said = _notices(app)
        assert any("takes 1–1440 minutes" in m and "“5000”" in m for m in said), said


async def test_the_number_field_notices_are_chinese_on_a_chinese_screen(tmp_path):
    """The refused key and the out-of-range notices in zh: the field and the next text
    field by their Chinese labels, no English words but the typed text."""
    import re

    async with on_hold_field(tmp_path, lang="zh") as (_ctx, app, pilot, hold):
        app.clear_notifications()
        await pilot.press(*"np")
        await pilot.pause()
        [said] = [m for m in _notices(app) if "只接受数字" in m]
        assert "分钟" in said and "（1–1440 分钟）" in said and "仍为 15" in said, said
        assert "文字请写在文字字段里" in said, said
        rest = said.replace("“n”", "")
        assert not re.search(r"[A-Za-z]{2,}", rest), said
        await pilot.pause(hold.RUN_GAP_S + 0.2)  # a new run of keys, not the refused one
        await pilot.press("end", "backspace", "backspace")
        await pilot.press(*"5000", "tab")
        await pilot.pause()
        [out] = [m for m in _notices(app) if "须为 1–1440 分钟" in m]
        assert "“5000”不在其中" in out and "仍为 15" in out, out
        assert not re.search(r"[A-Za-z]{2,}", out), out


async def test_a_number_typed_after_a_refused_sentence_still_replaces_the_value(tmp_path):
    """The refused run counts for nothing: ``10`` typed after it gives ``10``, never
    ``1510`` (the first key after focus arrives replaces the value, README)."""
    async with on_hold_field(tmp_path) as (ctx, _app, pilot, hold):
        await pilot.press(*"Xid 79 on node 3")
        await pilot.pause(hold.RUN_GAP_S + 0.2)
        assert hold.value == "15"
        await pilot.press(*"10")
        await pilot.pause()
        assert hold.value == "10"
        await pilot.press("tab")
        await pilot.pause()
        assert ctx.session.incident.recovery.hold_minutes == 10


async def test_an_emptied_hold_says_it_was_left_empty(tmp_path):
    """Backspaced to nothing and left: the hold stays, said as an empty field (never
    "“” is outside the range")."""
    async with on_hold_field(tmp_path) as (ctx, app, pilot, hold):
        await pilot.press("end", "backspace", "backspace")
        app.clear_notifications()
        await pilot.press("tab")
        await pilot.pause()
        assert ctx.session.incident.recovery.hold_minutes == 15 and hold.value == "15"
        said = _notices(app)
        assert any("left empty" in m and "stays 15" in m for m in said), said
        assert not any("“”" in m for m in said), said
