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


SCOPE_PLACEHOLDERS = ("namespace", "deployment", "pod")
"""The placeholders of cockpit's own command templates that name the service's scope
(``kubectl rollout undo deployment/<deployment> -n <namespace>``)."""


def unfilled(text: str) -> list[str]:
    """The scope placeholders (:data:`SCOPE_PLACEHOLDERS`) still in ``text``, in that order."""
    return [name for name in SCOPE_PLACEHOLDERS if f"<{name}>" in text]


def unfilled_words(names: list[str], lang: str) -> list[str]:
    """For each placeholder left in the commands, why it is and how to fill it, in ``lang``
    (``<deployment>``: no deployment configured: --deployment or ``[service] deployment``);
    empty when none is left."""
    from cockpit.i18n import t

    if not names:
        return []
    return [t("commands.unfilled", lang)] + [
        "  " + t(f"commands.unfilled.{name}", lang) for name in names
    ]


def fill_scope(text: str, lang: str, *, namespace: str = "", deployment: str = "") -> str:
    """``text`` with the service's namespace and deployment put in its commands (see
    :func:`fill`) and, after it, a line in words for each scope placeholder left, so that an
    unfilled ``<deployment>`` is never mistaken for a name."""
    filled = fill(text, namespace=namespace, deployment=deployment)
    words = unfilled_words(unfilled(filled), lang)
    if not words:
        return filled
    return filled.rstrip("\n") + "\n\n" + "\n".join(words) + "\n"
