"""Recording plan of the scenario playbooks: each playbook's automated checks fetch their
own signals (:func:`cockpit.collect.playbooks.collect_playbook_data`), so ``cockpit
record`` runs the same collection for every playbook and ``--replay``/``--demo`` can answer
them offline. Registered under the ``cockpit.plans`` entry-point group (see pyproject)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cockpit.context import AppContext


async def record_playbooks(ctx: AppContext, start: datetime, end: datetime) -> None:
    """Collect the data of all six playbooks for the service in scope (failures are kept
    in each playbook's ``missing``, and recorded, never raised)."""
    from cockpit.analysis.playbooks.spec import PLAYBOOK_IDS
    from cockpit.collect.playbooks import collect_playbook_data

    for playbook_id in PLAYBOOK_IDS:
        await collect_playbook_data(ctx, playbook_id)
