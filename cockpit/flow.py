"""The handbook's troubleshooting flowchart as data.

Source: seed ``000_98f0f2273dcebb14.txt`` ("通用流程")::

    A[确认影响与时间线] --> B[检查最近变更] --> C[从 SLI 分层下钻] --> D{单实例 / 单节点?}
    D -- 是 --> E[隔离对比健康实例];  D -- 否 --> F[检查共享依赖与负载]
    E --> G[提出可证伪假设];  F --> G;  G --> H[一次改变一个变量] --> I[验证恢复并记录]

Screens ask :func:`next_steps` for where to go; the user may jump anywhere and the
incident records the path taken.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class StepId(StrEnum):
    """Flowchart nodes, keyed by the handbook's letters."""

    A = "A"
    B = "B"
    C = "C"
    D = "D"
    E = "E"
    F = "F"
    G = "G"
    H = "H"
    I = "I"  # noqa: E741 - the handbook's letter


class Branch(StrEnum):
    """The answer at the decision node D (single instance / single node?). A release (every
    replica of one revision, :func:`cockpit.analysis.blast_radius.with_release`) is its own
    answer: it goes to E, which compares the revision with the previous one."""

    SINGLE = "single"  # 是 -> E
    SHARED = "shared"  # 否 -> F
    RELEASE = "release"  # every replica of one revision: E compares it with the previous one


@dataclass(frozen=True)
class Step:
    """One node of the flowchart.

    Attributes:
        id: The handbook's letter.
        slug: Stable identifier used in files, screens and key bindings.
        title_zh: The handbook's own wording.
        title_en: English title.
        decision: True for the diamond (D).
    """

    id: StepId
    slug: str
    title_zh: str
    title_en: str
    decision: bool = False

    def title(self, lang: str) -> str:
        """Title in ``lang`` (``zh`` or ``en``)."""
        return self.title_zh if lang == "zh" else self.title_en


STEPS: tuple[Step, ...] = (
    Step(StepId.A, "impact", "确认影响与时间线", "Impact & timeline"),
    Step(StepId.B, "changes", "检查最近变更", "Recent changes"),
    Step(StepId.C, "drilldown", "从 SLI 分层下钻", "SLI drilldown"),
    Step(StepId.D, "scope", "单实例 / 单节点?", "Single instance / node?", decision=True),
    Step(StepId.E, "isolate", "隔离对比健康实例", "Isolate vs healthy cohort"),
    Step(StepId.F, "shared", "检查共享依赖与负载", "Shared dependencies & load"),
    Step(StepId.G, "hypotheses", "提出可证伪假设", "Falsifiable hypotheses"),
    Step(StepId.H, "experiments", "一次改变一个变量", "Change one variable"),
    Step(StepId.I, "verify", "验证恢复并记录", "Verify recovery & record"),
)

BY_ID: dict[StepId, Step] = {s.id: s for s in STEPS}

EDGES: tuple[tuple[StepId, StepId, Branch | None], ...] = (
    (StepId.A, StepId.B, None),
    (StepId.B, StepId.C, None),
    (StepId.C, StepId.D, None),
    (StepId.D, StepId.E, Branch.SINGLE),
    (StepId.D, StepId.F, Branch.SHARED),
    (StepId.D, StepId.E, Branch.RELEASE),
    (StepId.E, StepId.G, None),
    (StepId.F, StepId.G, None),
    (StepId.G, StepId.H, None),
    (StepId.H, StepId.I, None),
)


def step(step_id: StepId | str) -> Step:
    """The step with this letter. Raises ``KeyError`` for an unknown letter."""
    return BY_ID[StepId(step_id)]


def next_steps(current: StepId | str, branch: Branch | None = None) -> list[Step]:
    """Successors of ``current``.

    At the decision node D, ``branch`` picks E or F; without it both are returned
    (E first). Every other node has exactly one successor, except I, which has none.
    """
    cur = StepId(current)
    out: list[Step] = []
    for src, dst, label in EDGES:
        if (
            src is cur
            and (branch is None or label is None or label is branch)
            and BY_ID[dst] not in out
        ):
            out.append(BY_ID[dst])
    return out


def previous_steps(current: StepId | str) -> list[Step]:
    """Predecessors of ``current``, each once (G has two: E and F; E has one, D, though
    two of D's branches lead to it)."""
    cur = StepId(current)
    out: list[Step] = []
    for src, dst, _ in EDGES:
        if dst is cur and BY_ID[src] not in out:
            out.append(BY_ID[src])
    return out


def recommended_next(current: StepId | str, branch: Branch | None) -> Step | None:
    """The single step the UI's "next" key goes to; ``None`` at I or at D undecided."""
    nxt = next_steps(current, branch)
    if len(nxt) == 1:
        return nxt[0]
    return None
