from cockpit.flow import STEPS, Branch, StepId, next_steps, previous_steps, recommended_next, step


def test_handbook_order_and_titles():
    assert [s.id.value for s in STEPS] == list("ABCDEFGHI")
    assert step("A").title_zh == "确认影响与时间线"
    assert step("D").decision and not step("C").decision


def test_branch_at_d():
    assert [s.id for s in next_steps("D", Branch.SINGLE)] == [StepId.E]
    assert [s.id for s in next_steps("D", Branch.SHARED)] == [StepId.F]
    assert [s.id for s in next_steps("D")] == [StepId.E, StepId.F]
    assert recommended_next("D", None) is None
    assert recommended_next("D", Branch.SHARED).id is StepId.F


def test_linear_edges_and_ends():
    assert recommended_next("A", None).id is StepId.B
    assert recommended_next("E", None).id is StepId.G
    assert recommended_next("F", None).id is StepId.G
    assert next_steps("I") == []
    assert {s.id for s in previous_steps("G")} == {StepId.E, StepId.F}
    assert previous_steps("A") == []


def test_each_previous_step_is_listed_once():
    """E is reached from D by two branches (single, release): its one predecessor is D."""
    assert [s.id for s in previous_steps("E")] == [StepId.D]
    for s in STEPS:
        ids = [p.id for p in previous_steps(s.id)]
        assert len(ids) == len(set(ids)), s.id
