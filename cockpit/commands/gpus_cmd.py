"""``cockpit gpus [--once] [--json] [--node NODE]``: per-GPU state with decoded reasons.

Like ``nvitop --once``, plus the clock-event reasons in words, the "why this GPU looks
bad" line and the cohort outliers. Local NVML by default; with ``--node`` (or when NVML is
not usable here) dcgm-exporter series for that node from the configured Prometheus.
Without ``--once``, on a terminal and without ``--at``, the view refreshes every second
until Ctrl-C (:func:`refreshes_once`).

Exit status: 0 all GPUs OK, 1 some GPU needs attention (warn/bad/lost), 2 no source.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from cockpit.analysis.gpu_health import GpuVerdict, Level, cohort_view, why_gpu
from cockpit.analysis.gpu_text import (
    COLUMNS,
    HEADERS,
    cohort_lines,
    gpu_row,
    legend,
    xid_lines,
)
from cockpit.commands._argtypes import add_at, positive_seconds
from cockpit.models.gpu import GpuNodeSnapshot, XidEvent
from cockpit.neutral import json_text, write_control


def register(subparsers: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Add the ``gpus`` subcommand."""
    p = subparsers.add_parser(
        "gpus",
        parents=parents,
        help="per-GPU state (NVML here, or DCGM for --node) with decoded reasons",
        description="Per-GPU state like nvitop --once, with clock-event reasons, "
        "why-lines and the cohort view.",
        epilog="Exit status: 0 every GPU OK; 1 some GPU needs attention (WARN, BAD or "
        "LOST); 2 no GPU source.",
    )
    p.add_argument(
        "--once",
        action="store_true",
        help="print one snapshot and exit (always so with --at or when not on a terminal)",
    )
    p.add_argument("--json", action="store_true", help="print JSON (snapshot + verdicts)")
    p.add_argument(
        "--node", metavar="NODE", help="read dcgm-exporter series for NODE via Prometheus"
    )
    add_at(p, "evaluation time for DCGM series (UTC, e.g. 2026-11-29T21:00; default now)")
    p.add_argument(
        "--interval", type=positive_seconds, default=1.0, help="refresh interval in seconds"
    )
    p.set_defaults(func=run)


def render_text(
    snap: GpuNodeSnapshot,
    verdicts: list[GpuVerdict],
    lang: str,
    notes: list[str],
    xids: list[XidEvent] | None = None,
) -> str:
    """The plain-text view: source line, table, why-lines, the cohort and the Xid events
    (the GPU panel's sections, by the same functions)."""
    from cockpit.i18n import t

    if snap.source == "nvml":
        head = t("gpu.source_nvml", lang, node=snap.node or "?", driver=snap.driver_version or "?")
    else:
        head = t("gpu.source_dcgm", lang, node=snap.node or "?")
    lines = [head, *notes, *(f"! {w}" for w in snap.warnings_in(lang))]
    cohort = cohort_view(snap.gpus)
    headers = HEADERS.get(lang, HEADERS["en"])
    rows = [[headers[c] for c in COLUMNS]]
    for g, v in zip(snap.gpus, verdicts, strict=True):
        r = gpu_row(g, v, cohort, lang)
        rows.append([r.cells[c].text for c in COLUMNS])
    widths = [max(_width(row[i]) for row in rows) for i in range(len(COLUMNS))]
    for row in rows:
        lines.append("  ".join(_pad(cell, w) for cell, w in zip(row, widths, strict=True)).rstrip())
    lines.append(legend(verdicts, lang))
    lines.append("")
    lines.append(t("gpu.why", lang) + ":")
    lines.extend(f"  GPU {v.index}: {v.line}" for v in verdicts)
    lines.append("")
    lines.append(t("gpu.cohort", lang) + ":")
    lines.extend(f"  {line}" for line in cohort_lines(snap.gpus, cohort, lang)[0])
    lines.append("")
    lines.extend(xid_lines(xids or [], lang))
    for g in snap.gpus:
        for p in g.processes or []:
            mem = f"{p.used_memory.value:.0f} MiB" if p.used_memory.ok else "N/A"
            pod = p.pod_uid or p.pod_note or ""
            lines.append(f"  GPU {g.index} pid {p.pid} {p.name or '?'} {mem} {pod}")
    return "\n".join(lines) + "\n"


def _width(s: str) -> int:
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in s)


def _pad(s: str, w: int) -> str:
    return s + " " * (w - _width(s))


async def _snapshot(
    args: argparse.Namespace, lang: str
) -> tuple[GpuNodeSnapshot, list[str], list[XidEvent]]:
    """One snapshot, its notes and the Xid events the window saw on its node: local NVML
    unless ``--node``; else DCGM through the metrics source.

    Sources come from :mod:`cockpit.wiring`, so ``--demo``/``--replay`` answer from the
    bundle and ``--at`` freezes the evaluation time, as in the TUI.
    """
    from cockpit.collect.gpu_plans import (
        add_window_losses,
        picked_note_key,
        silent_gpu_node,
        window_history,
        worst_node,
    )
    from cockpit.i18n import t
    from cockpit.sources.base import ErrorKind, SourceError
    from cockpit.sources.dcgm import DcgmSource
    from cockpit.wiring import BootError, build_context

    try:
        ctx = build_context(args, with_session=False)
    except BootError as exc:
        raise SourceError.of("gpu", ErrorKind.NOT_CONFIGURED, str(exc)) from exc
    notes: list[str] = []
    try:
        nvml_reason = ""
        gpu = ctx.sources.gpu
        if not args.node and gpu is not None:
            try:
                return await gpu.snapshot(), notes, []
            except SourceError as exc:
                if exc.kind is ErrorKind.TIMEOUT:
                    raise
                nvml_reason = exc.failure.message
        elif not args.node:
            nvml_reason = ctx.sources.missing_text("gpu", lang)
        if nvml_reason:
            notes.append(t("gpu.nvml_unavailable", lang, reason=nvml_reason))
        metrics = ctx.sources.metrics
        if metrics is None:
            reasons = "; ".join(
                r for r in (nvml_reason, ctx.sources.missing_text("metrics", lang)) if r
            )
            raise SourceError.of(
                "dcgm", ErrorKind.NOT_CONFIGURED, t("gpu.no_source", lang, reasons=reasons)
            )
        at = ctx.clock.now()
        dcgm = DcgmSource(metrics, clock=ctx.clock.now)
        # The GPU panel's computation: GPUs that went silent in the window are lost.
        hist = await window_history(ctx)
        node = args.node
        if not node and (silent := silent_gpu_node(hist)):
            node = silent
            notes.append(t("gpu.node_silent", lang, node=node))
        if not node:
            nodes = await dcgm.nodes(at)
            if not nodes:
                raise SourceError.of("dcgm", ErrorKind.NOT_FOUND, t("gpu.no_node", lang))
            if len(nodes) > 1:
                snap = await worst_node(dcgm, nodes, at)
                if snap is not None:
                    key = picked_note_key(snap)
                    notes.append(t(key, lang, node=snap.node or "?", count=len(nodes)))
                    return snap, notes, []
            node = nodes[0]
        snap = await dcgm.node_snapshot(str(node), at)
        absent, xids = add_window_losses(snap, hist, str(node))
        notes += [m.text(lang) for m in absent]
        return snap, notes, xids
    finally:
        await ctx.sources.close()


def refreshes_once(args: argparse.Namespace, terminal: bool) -> bool:
    """Whether ``gpus`` prints one snapshot and exits: with ``--once`` or ``--json``, with
    ``--at`` (a moment in the past reads the same every time) and when its output is not a
    terminal (a pipe or a file gets no screen-clearing codes); otherwise the view
    refreshes every ``--interval`` seconds until Ctrl-C."""
    return bool(args.once or args.json or getattr(args, "at", None) or not terminal)


def run(args: argparse.Namespace) -> int:
    """Run the command; returns the exit status."""
    from cockpit.i18n import default_lang
    from cockpit.sources.base import SourceError

    lang = getattr(args, "lang", None) or default_lang()
    once = refreshes_once(args, sys.stdout.isatty())

    async def one() -> tuple[GpuNodeSnapshot, list[GpuVerdict], list[str], list[XidEvent]]:
        snap, notes, xids = await _snapshot(args, lang)
        verdicts = [why_gpu(g, snap.gpus, xids=xids, lang=lang) for g in snap.gpus]
        return snap, verdicts, notes, xids

    try:
        while True:
            try:
                snap, verdicts, notes, xids = asyncio.run(one())
            except SourceError as exc:
                f = exc.failure
                print(
                    f"{f.source}: {f.kind.value}: {f.message}"
                    + (f"\n  {hint}" if (hint := f.hint_in(lang)) else ""),
                    file=sys.stderr,
                )
                return 2
            if args.json:
                import json

                doc = {
                    "snapshot": snap.model_dump(mode="json"),
                    "verdicts": [v.model_dump(mode="json") for v in verdicts],
                    "notes": notes,
                    "xids": [x.model_dump(mode="json") for x in xids],
                }
                sys.stdout.write(json_text(json.dumps(doc, ensure_ascii=False, indent=2)) + "\n")
            else:
                if not once:
                    write_control("\x1b[H\x1b[2J")
                sys.stdout.write(render_text(snap, verdicts, lang, notes, xids))
            sys.stdout.flush()
            if once:
                break
            import time

            time.sleep(max(0.2, args.interval))
    except KeyboardInterrupt:
        return 130
    bad = any(v.level not in (Level.OK, Level.INFO) for v in verdicts)
    return 1 if bad else 0
