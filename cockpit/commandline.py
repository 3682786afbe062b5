"""Commands cockpit prints for the user to copy: every name in them shell-quoted.

A pod, node or namespace name comes from the cluster (or a paste, or a bundle) and a
command line built from it is pasted into a shell by someone under pressure: a name
holding ``;``, a space, ``$(…)`` or a quote must stay one argument. Every command cockpit
prints (kubectl lines of ``pending`` and the scheduling panel, F2's mitigations, the
playbooks' commands, ``doctor``'s permission hints) builds its values with :func:`arg`
(``shlex.quote``, so ordinary names print unchanged) and its ``-n`` flag with
:func:`namespace_flag`.
"""

from __future__ import annotations

import re
import shlex

_PLACEHOLDER = re.compile(r"<[A-Za-z][A-Za-z0-9_-]*>")


def arg(value: str, placeholder: str = "") -> str:
    """``value`` as one shell word.

    Args:
        value: A name from outside (may be empty).
        placeholder: Shown as ``<placeholder>`` when ``value`` is empty, for the user to
            fill (cockpit's own placeholders such as ``<pod>`` are kept as they are).

    Returns:
        ``shlex.quote(value)`` (``vllm-0`` stays ``vllm-0``; ``a b`` becomes ``'a b'``).
    """
    if not value:
        return f"<{placeholder}>" if placeholder else "''"
    if _PLACEHOLDER.fullmatch(value):
        return value
    return shlex.quote(value)


def namespace_flag(namespace: str) -> str:
    """`` -n NAMESPACE`` (quoted), or ``""`` for no namespace."""
    return f" -n {arg(namespace)}" if namespace else ""


def fill(template: str, **values: str) -> str:
    """A command template of cockpit's own (``kubectl -n <namespace> …``) with each known
    ``<name>`` placeholder replaced by its quoted value; unknown or empty ones stay for the
    user to fill."""
    for name, value in values.items():
        if value:
            template = template.replace(f"<{name}>", arg(value))
    return template
