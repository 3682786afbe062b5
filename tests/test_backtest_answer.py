"""The back-test's answer says on which side of the impact start the alert fires, as the
panel does, names it as the panel does, and is added under the user's own text."""

from __future__ import annotations

import pytest

from cockpit.analysis.backtest import Candidate, CandidateResult
from cockpit.i18n import t
from cockpit.plugins.backtest import answer_text, when_text, with_answer


def _best(lead_s: float, before_detection_s: float | None) -> CandidateResult:
    return CandidateResult(
        candidate=Candidate(id="p99_over_baseline", expr="p99 > 25315.5", summary="P99"),
        status="lead" if lead_s >= 0 else "late",
        lead_s=lead_s,
        before_detection_s=before_detection_s,
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_alert_after_the_impact_start_is_said_to_fire_after_it(lang: str) -> None:
    late = _best(-120, 300)
    when = when_text(late, lang)
    assert when.startswith(t("metrics.backtest.when_after", lang, minutes=2))
    assert t("metrics.backtest.when_detect", lang, minutes=5) in when
    answer = answer_text(late, lang)
    assert when in answer and "-2" not in answer
    assert t("metrics.backtest.candidate.p99_over_baseline", lang) in answer
    assert "p99_over_baseline" not in answer and "p99 > 25315.5" in answer
    early = when_text(_best(180, None), lang)
    assert early == t("metrics.backtest.when_before", lang, minutes=3)


def test_the_answer_is_added_under_what_was_written_once() -> None:
    assert with_answer("", "A") == "A"
    assert with_answer("my note\n", "A") == "my note\nA"
    assert with_answer("my note\nA", "A") == "my note\nA"
