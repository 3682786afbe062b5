"""D's question names every answer its verdict can give: when every replica of one
revision is worse, "the whole release" is asked and has its button, in both languages,
and at 160×48 no "Change to …" label is cut."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len

from cockpit.app import CockpitApp
from testkit import settle


def _text(widget: Any) -> str:
    return str(widget.render())


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_d_asks_single_the_whole_release_or_shared(
    prometheus_scenario: Any, tmp_path: Path, lang: str
) -> None:
    from cockpit.flow import Branch
    from cockpit.i18n import t
    from tests.test_metric_history import ctx_for

    srv = prometheus_scenario("bad_release")
    ctx = ctx_for(srv, tmp_path, srv.scenario.scope["deployment"])
    ctx.lang = lang
    app = CockpitApp(ctx=ctx, start_step="D")
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = app.screen
        release = screen.query_one("#branch-release")
        assert release.display
        whole = "the whole release" if lang == "en" else "整个发布"
        assert whole in _text(screen.query_one("#branch-state")).lower()
        assert whole in str(release.label).lower()
        # the other two are answers to a three-way question, not "Yes" / "No"
        for name in ("single", "shared"):
            label = str(screen.query_one(f"#branch-{name}").label)
            assert not label.startswith(("Yes", "No", "是", "否")), label
        # accepting the verdict answers "the whole release" and offers it next
        screen.query_one("#scope-accept").press()
        await settle(pilot)
        assert ctx.session.incident.scope_branch == Branch.RELEASE
        assert app.focused is release
        # every "Change to …" label is whole at 160×48
        for name in ("single", "shared"):
            button = screen.query_one(f"#branch-{name}")
            label = str(button.label)
            assert label == t(f"flow.branch_{name}_switch", lang)
            assert button.content_region.width >= cell_len(label), (label, button.content_region)
            assert label in str(button.render()), label
        assert str(release.label) == t("flow.branch_release_again", lang)
        # and choosing another answer changes it, the release offered back by name
        screen.query_one("#branch-shared").press()
        await settle(pilot)
        assert ctx.session.incident.scope_branch == Branch.SHARED
    await ctx.sources.close()
