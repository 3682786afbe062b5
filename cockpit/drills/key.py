"""A drill's answer key: what a correct diagnosis of the recorded incident concludes.

The key is data (``key.json`` beside the drill's bundle, see :mod:`cockpit.drills.catalogue`)
and is shown nowhere but on the scorecard: ``cockpit drill --list`` prints only
:meth:`AnswerKey.listing` (title, difficulty, what it teaches).

Every field is checked on load (unknown keys forbidden, times aware), so a misspelt key,
a layer or cause that does not exist or a path through a step the flowchart lacks fails
when the catalogue is read, never half-way through a scorecard.

Raises (:meth:`AnswerKey.model_validate_json`):
    pydantic.ValidationError: the key does not match this schema.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator, model_validator

from cockpit.flow import Branch, StepId
from cockpit.knowledge.catalogues import cause_classes
from cockpit.models.signals import Layer

DRILL_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
"""What a drill id may look like: it names a directory and is typed on the command line."""

SuspectKind = Literal["pod", "node", "gpu", "revision", "service", "gateway"]
"""What a suspect can be (the kinds of :class:`cockpit.analysis.conclusion.Suspect` that
a trainee picks from a bundle's inventory)."""

Difficulty = Literal["easy", "medium", "hard"]


class _Key(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Text(_Key):
    """A text in both languages (both required, non-empty)."""

    zh: str = Field(min_length=1)
    en: str = Field(min_length=1)

    def text(self, lang: str) -> str:
        """The text in ``lang`` (``zh``, else English)."""
        return self.zh if lang == "zh" else self.en


class KeySuspect(_Key):
    """An entity a correct diagnosis names.

    Attributes:
        kind: pod / node / gpu / revision / service / gateway.
        name: The name as Kubernetes and the metrics give it (pod ``vllm-…-rp2gj``,
            node ``gpu-node-b``, revision ``vllm-qwen-7d9f…`` or ``4 → 5``, service = the
            Deployment/StatefulSet, gateway = the ingress); for a GPU its node and index
            (``gpu-node-b/0``).
        uuid: A GPU's UUID (``GPU-5568…``), which decides a GPU answer when given.
    """

    kind: SuspectKind
    name: str = Field(min_length=1)
    uuid: str = ""

    def matches(self, kind: str, name: str, uuid: str = "") -> bool:
        """Whether an answer (``kind``, ``name``, ``uuid``) names this entity: the same
        kind and, for a GPU with a UUID on both sides, the same UUID; else the same name."""
        if kind != self.kind:
            return False
        if self.kind == "gpu" and self.uuid and uuid:
            return uuid == self.uuid
        return name == self.name


PANELS = frozenset(
    {
        "golden_signals",
        "timeline",
        "changes",
        "k8s_timeline",
        "drilldown",
        "scope",
        "cohort",
        "gpu",
        "scheduling",
        "shared",
        "hypotheses",
        "experiments",
        "recovery",
        "playbook",
        "layered_logs",
        "backtest",
        "step",
    }
)
"""The panels and sections a key may point at (each has a human name, ``drill.panel.<id>``):
the panels' entry-point names (``golden_signals``, ``cohort``, ``gpu``, ``scheduling``,
``k8s_timeline``, ``layered_logs``, ``backtest``), the sections of the steps' own screens (A's
``timeline``, B's ``changes``, C's ``drilldown``, D's ``scope``, F's ``shared``, G's
``hypotheses``, H's ``experiments``, I's ``recovery``), F7's ``playbook``, and ``step``
for the step as a whole."""


class Where(_Key):
    """Where on screen a piece of evidence is: the flowchart step and a panel or section
    of that step's screen (one of :data:`PANELS`)."""

    step: StepId
    panel: str

    @field_validator("panel")
    @classmethod
    def _known_panel(cls, v: str) -> str:
        if v not in PANELS:
            raise ValueError(f"panel {v!r} is not one of {sorted(PANELS)}")
        return v


class DecisiveEvidence(_Key):
    """An observation that decides the diagnosis.

    Attributes:
        what: A canonical signal id (``runtime.fragmentation``, see
            :data:`cockpit.models.signals.SIGNALS`) or an evidence kind (``xid``,
            ``rollout``, ``failed_scheduling``, ``oom``, ``nccl_timeout``…: the kind of a
            pasted or layered-log finding); a pinned piece of evidence with the same
            ``what`` counts as this one.
        where: Where on screen it is shown.
        text: What it shows and why it decides, zh/en (shown on the scorecard only).
    """

    what: str = Field(min_length=1)
    where: Where
    text: Text


class AnswerKey(_Key):
    """The answer key of one drill.

    Attributes:
        id: The drill's id (its directory name; :data:`DRILL_ID`).
        title: zh/en title (no spoilers: listed by ``cockpit drill --list``).
        difficulty: easy / medium / hard.
        teaches: What the drill teaches, zh/en (no spoilers).
        primary_layer: Where the anomaly was introduced (a layer of step C).
        scope: The answer at step D: one instance/node (``single``) or shared (``shared``).
        suspects: The entities a correct diagnosis names (at least one); an answer naming
            any one of them is right.
        cause_class: A cause id of ``cockpit/knowledge/causes.toml``.
        impact_start: When the impact began (aware; stored and compared in UTC).
        detected_at: When it was detected (the first alert; aware, UTC), not before
            ``impact_start``.
        decisive_evidence: The observations that decide the diagnosis (at least one).
        expert_path: The steps an expert visits, in order (starts at A).
    """

    id: str
    title: Text
    difficulty: Difficulty
    teaches: Text
    primary_layer: Layer
    scope: Branch
    suspects: list[KeySuspect] = Field(min_length=1)
    cause_class: str
    impact_start: AwareDatetime
    detected_at: AwareDatetime
    decisive_evidence: list[DecisiveEvidence] = Field(min_length=1)
    expert_path: list[StepId] = Field(min_length=1)

    @field_validator("id")
    @classmethod
    def _id_shape(cls, v: str) -> str:
        if not DRILL_ID.match(v) or v == "score":
            raise ValueError(f"drill id {v!r} must match {DRILL_ID.pattern} and not be 'score'")
        return v

    @field_validator("cause_class")
    @classmethod
    def _known_cause(cls, v: str) -> str:
        if v not in cause_classes():
            raise ValueError(f"cause_class {v!r} is not in causes.toml")
        return v

    @field_validator("expert_path")
    @classmethod
    def _path_starts_at_a(cls, v: list[StepId]) -> list[StepId]:
        if v[0] is not StepId.A:
            raise ValueError("expert_path starts at step A")
        return v

    @field_validator("impact_start", "detected_at")
    @classmethod
    def _in_utc(cls, v: datetime) -> datetime:
        return v.astimezone(UTC)

    @model_validator(mode="after")
    def _times_ordered(self) -> AnswerKey:
        if self.detected_at < self.impact_start:
            raise ValueError("detected_at is before impact_start")
        return self

    def listing(self, lang: str) -> dict[str, str]:
        """What ``cockpit drill --list`` may show (no spoilers): id, title, difficulty
        and what it teaches, in ``lang``."""
        return {
            "id": self.id,
            "title": self.title.text(lang),
            "difficulty": self.difficulty,
            "teaches": self.teaches.text(lang),
        }
