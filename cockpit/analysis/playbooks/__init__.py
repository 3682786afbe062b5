"""Scenario playbooks: the handbook's six checklists (seed 000, 场景一–六) with pure checks.

``spec`` loads the checklists from ``cockpit/knowledge/playbooks/*.toml``; ``data`` is the
already-fetched input (``cockpit.collect.playbooks`` fills it from the sources); the
``*_checks`` modules hold one pure function per automated item; ``run`` ties them together.
"""
