"""cockpit's own plain output, pasted back (F6): ``cockpit gpus``, ``pending``, ``changes``
and ``analyze`` are recognised in either language and read into facts that can be pinned
one by one — a GPU that is not OK, a layer's verdict, a Pending pod's first problem, a
change in the window.

Pure: text in, facts out. The shapes read are those the commands print
(:mod:`cockpit.commands.gpus_cmd`, ``analyze_cmd``, ``pending_cmd``, ``changes_cmd``),
their words taken from the same catalogue (:mod:`cockpit.i18n`) and table headers
(:mod:`cockpit.analysis.gpu_text`), so a change of wording there changes what is read here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from cockpit.analysis.gpu_text import HEADERS, STATE_WORDS
from cockpit.i18n import LANGS, t

MAX_FACTS = 20
"""Facts read from one paste at most (a cluster-wide ``changes`` list can be long)."""


@dataclass(frozen=True)
class OutputFact:
    """One thing the output says.

    Attributes:
        subject: What it is about (``GPU 0 (gpu-node-a1)``, ``Serving``, a pod, a change's
            time and kind), as printed.
        value: What the output says of it (``WARN``, ``anomalous``, the problem, the change).
        line: The 1-based line it was read from.
    """

    subject: str
    value: str
    line: int


@dataclass
class CockpitOutput:
    """A paste recognised as a cockpit command's output.

    Attributes:
        command: ``gpus``, ``pending``, ``changes`` or ``analyze``.
        facts: What it says, in the order printed (at most :data:`MAX_FACTS`).
    """

    command: str
    facts: list[OutputFact] = field(default_factory=list)


def _words(key: str) -> set[str]:
    """A message in every language (its text before any ``{placeholder}``)."""
    return {t(key, lang).split("{")[0].strip() for lang in LANGS}


def _gpus(lines: list[str]) -> CockpitOutput | None:
    header = None
    for i, line in enumerate(lines):
        cells = line.split()
        for lang in LANGS:
            h = HEADERS[lang]
            if cells[:1] == [h["gpu"]] and h["util"] in line and line.rstrip().endswith(h["state"]):
                header = i
        if header is not None:
            break
    if header is None:
        return None
    node = ""
    for line in lines[:header]:
        # The source line: "(node gpu-7)" / "（节点 gpu-7）" or "(gpu-7, driver …)".
        m = re.search(r"[(（](?:node |节点 |本机 NVML（)?([\w.:-]+)[)）,，]", line)
        if m:
            node = m.group(1)
            break
    out = CockpitOutput("gpus")
    ok_words = {STATE_WORDS[lang][k] for lang in LANGS for k in ("ok", "info", "partial")}
    states = {w for lang in LANGS for w in STATE_WORDS[lang].values()}
    ok = 0
    for j, line in enumerate(lines[header + 1 :], header + 2):
        cells = line.split()
        if not cells or not cells[0].isdigit() or cells[-1] not in states:
            if out.facts or ok:
                break
            continue
        if cells[-1] in ok_words:
            ok += 1
            continue
        where = f" ({node})" if node else ""
        out.facts.append(OutputFact(f"GPU {cells[0]}{where}", cells[-1], j))
    if not out.facts:
        where = f" ({node})" if node else ""
        out.facts.append(OutputFact(f"GPU × {ok}{where}", sorted(ok_words)[0], header + 1))
    return out


def _analyze(lines: list[str]) -> CockpitOutput | None:
    heading = _words("metrics.text.layers")
    start = next((i for i, line in enumerate(lines) if line.strip() in heading), None)
    if start is None:
        return None
    layers = {t(f"metrics.layer.{k}", lang) for k in _LAYERS for lang in LANGS}
    out = CockpitOutput("analyze")
    for j, line in enumerate(lines[start + 1 :], start + 2):
        if line and not line.startswith(" "):
            break
        m = re.match(r"^  (\S[^:：]*)[:：]\s*(.+)$", line)
        if m and m.group(1) in layers:
            out.facts.append(OutputFact(m.group(1), m.group(2).strip(), j))
    return out if out.facts else None


_LAYERS = ("access", "serving", "runtime", "hardware", "infrastructure")


def _pending(lines: list[str]) -> CockpitOutput | None:
    none = _words("kube.panel.no_pending")
    pod_head = _words("kube.panel.pod")
    out = CockpitOutput("pending")
    pod = ""
    for j, line in enumerate(lines, 1):
        text = line.strip()
        if any(text.startswith(w) for w in none if w):
            out.facts.append(OutputFact("Pending", text, j))
        elif text.startswith("== ") and any(text[3:].startswith(w) for w in pod_head if w):
            m = re.search(r"([\w.-]+/[\w.-]+)", text)
            pod = m.group(1) if m else text[3:]
        elif pod and text.startswith("✗ "):
            out.facts.append(OutputFact(pod, text[2:], j))
            pod = ""
    return out if out.facts else None


_WHEN = r"\d{4}-\d\d-\d\d[T ][\d:.]+(?:Z|[+-]\d\d:\d\d)"
_CHANGE_HEAD = re.compile(rf"^\S+ .*\s{_WHEN} → {_WHEN}$")
"""The header of ``cockpit changes`` (its window as every command writes a time, or as
ISO 8601 in an older paste)."""
_CHANGE_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ|time unknown)  \[([\w-]+)\] (.+)$")


def _changes(lines: list[str]) -> CockpitOutput | None:
    if not lines or not _CHANGE_HEAD.match(lines[0].strip()):
        return None
    none = _words("kube.changes.none")
    out = CockpitOutput("changes")
    for j, line in enumerate(lines[1:], 2):
        m = _CHANGE_LINE.match(line.strip())
        if m:
            out.facts.append(OutputFact(f"{m.group(1)} [{m.group(2)}]", m.group(3), j))
        elif any(line.strip().startswith(w) for w in none if w):
            out.facts.append(OutputFact(lines[0].split("  ")[0], line.strip(), j))
    return out if out.facts else None


def read_cockpit_output(text: str) -> CockpitOutput | None:
    """``text`` read as the output of a cockpit command, or ``None`` when it is not one.

    Args:
        text: The paste, any size (only its lines are scanned, each once).

    Returns:
        The command and its facts (at most :data:`MAX_FACTS`), or ``None``.
    """
    lines = text.replace("\r\n", "\n").split("\n")
    for reader in (_gpus, _analyze, _pending, _changes):
        found = reader(lines)
        if found is not None:
            found.facts = found.facts[:MAX_FACTS]
            return found
    return None
