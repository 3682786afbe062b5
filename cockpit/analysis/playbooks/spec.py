"""The playbook checklists, loaded from ``cockpit/knowledge/playbooks/<id>.toml``.

Each file carries the handbook's checklist for one scenario (seed 000, 场景一–六) in zh
(the seed's own words) and en; every item is ``auto`` (with the id of its check function)
or ``ask`` (the user answers).
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources

from pydantic import BaseModel, Field

PLAYBOOK_IDS = ("cuda_oom", "nccl_hang", "low_util", "ttft_spike", "pod_pending", "bad_rollout")


class Text(BaseModel):
    """A string in both languages."""

    zh: str = ""
    en: str = ""

    def get(self, lang: str) -> str:
        """The text in ``lang`` (falls back to the other language)."""
        return (self.zh or self.en) if lang == "zh" else (self.en or self.zh)


class PlaybookItem(BaseModel):
    """One checklist item.

    Attributes:
        id: Item id, unique within the playbook.
        mode: ``auto`` (checked by ``check``) or ``ask`` (the user answers).
        check: Check function id (see :data:`cockpit.analysis.playbooks.run.CHECKS`).
        zh / en: The item's words.
        commands: Commands to copy (read-only or for a human to run).
    """

    id: str
    mode: str
    check: str = ""
    zh: str
    en: str
    commands: list[str] = Field(default_factory=list)

    def text(self, lang: str) -> str:
        """The item in ``lang``."""
        return self.zh if lang == "zh" else self.en


class Playbook(BaseModel):
    """One scenario's checklist."""

    id: str
    order: int
    seed: str
    title: Text
    intro: Text
    closing: Text = Field(default_factory=Text)
    commands: list[str] = Field(default_factory=list)
    items: list[PlaybookItem]


@cache
def load_playbook(playbook_id: str) -> Playbook:
    """The playbook ``playbook_id``.

    Raises:
        KeyError: unknown id.
    """
    if playbook_id not in PLAYBOOK_IDS:
        raise KeyError(playbook_id)
    root = resources.files("cockpit.knowledge") / "playbooks" / f"{playbook_id}.toml"
    return Playbook.model_validate(tomllib.loads(root.read_text(encoding="utf-8")))


def all_playbooks() -> list[Playbook]:
    """The six playbooks in the handbook's order."""
    return sorted((load_playbook(i) for i in PLAYBOOK_IDS), key=lambda p: p.order)
