"""GPU state panel (steps C and E): per-GPU table with colour thresholds, history
sparklines, the "why this GPU looks bad" line, the cohort across the node's GPUs, Xid
events (also put on the incident timeline) and a paste box that decodes dmesg text.

Source: local NVML when this host has it (``ctx.sources.gpu``); otherwise — or when the
driver is not loaded — dcgm-exporter series through the metrics source for the node in
``ctx.gpu_node`` (when none is given: the node of a GPU that stopped reporting
in the window, else the worst-looking node). With DCGM, a GPU of the node that reported
earlier in the window and is silent now is shown lost, with its last values, and the Xid
codes the window's history saw are listed (:mod:`cockpit.analysis.history`). The panel
always says which one it shows.
"""

from __future__ import annotations

import collections
import contextlib
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.widgets import Button, Collapsible, Select, Static, TextArea

from cockpit.analysis.gpu_health import Level, cohort_view, why_gpu
from cockpit.analysis.gpu_text import (
    HEADERS,
    SPARK_METRICS,
    cohort_lines,
    gpu_row,
    legend,
    shared_tops,
    sparkline,
    xid_lines,
)
from cockpit.analysis.xid import explain_xid_text, xid_event_text
from cockpit.collect.gpu_plans import (
    add_window_losses,
    picked_note_key,
    silent_gpu_node,
    window_history,
    worst_node,
)
from cockpit.context import AppContext
from cockpit.i18n import in_both, t
from cockpit.incident import TimelineKind
from cockpit.models.gpu import GpuNodeSnapshot, XidEvent
from cockpit.models.messages import Msg
from cockpit.sources.base import ErrorKind, SourceError
from cockpit.sources.dcgm import HISTORY_SPAN_S, HISTORY_STEP_S, DcgmSource
from cockpit.ui.panel import Panel
from cockpit.ui.row_detail import with_detail
from cockpit.ui.select import LocalSelect
from cockpit.ui.table import PlainTable

TABLE_COLUMNS = (
    "gpu",
    "state",
    "util",
    "memory",
    "temp",
    "power",
    "clocks",
    "ecc",
    "sm_clock",
    "pcie",
    "nvlink",
    "pod",
    "name",
)
"""The table's columns (all of :data:`cockpit.analysis.gpu_text.COLUMNS`), the verdict
and the readings it rests on first (up to the ECC errors, :data:`VERDICT_COLUMNS`): on an
80-column terminal they are on screen without scrolling sideways, the clock reasons
wrapping; the SM clock, the links, the pod and the model name follow (the cursor's GPU is
then read whole under the table, :mod:`cockpit.ui.row_detail`)."""

VERDICT_COLUMNS = TABLE_COLUMNS.index("ecc") + 1

LEVEL_STYLE = {
    Level.OK: "",
    Level.INFO: "",
    Level.UNKNOWN: "dim",
    Level.WARN: "bold yellow",
    Level.BAD: "bold red",
    Level.LOST: "bold white on red",
}

NODES_EVERY_S = 60.0
"""How often the list of nodes with GPUs (the node switcher) is read again."""

NVML_RETRY_S = 30.0
"""After NVML was found unusable (driver not loaded), try it again this often."""

HISTORY_POINTS = int(HISTORY_SPAN_S // HISTORY_STEP_S) + 1
"""Samples kept per GPU and metric for the sparklines: the half hour DCGM's history reads
(61 at a 30 s step), one sample per step; polls in between update the newest sample."""

SPARK_CELLS = 12
"""Cells per sparkline: the whole kept history is compressed into them (mean per cell,
see :func:`cockpit.analysis.gpu_text.sparkline`), so a cell is 2.5 min of the half hour."""


@dataclass
class GpuPanelData:
    """What one fetch returns."""

    snapshot: GpuNodeSnapshot
    notes: list[str] = field(default_factory=list)
    xids: list[XidEvent] = field(default_factory=list)
    past: dict[str, dict[str, list[float | None]]] | None = None
    """DCGM: the node's last half hour, read once per node to start the sparklines."""
    past_at: datetime | None = None
    """When ``past`` ends (its newest sample)."""
    absent: list[Msg] = field(default_factory=list)
    """DCGM: the node's GPUs that stopped reporting in the window (shown lost)."""
    nodes: list[str] = field(default_factory=list)
    """DCGM: every node with GPUs in the metrics, for the node switcher (empty: NVML)."""


class GpuPanel(Panel):
    """Per-GPU state from NVML (local) or DCGM (Prometheus)."""

    DEFAULT_CSS = """
    GpuPanel #gpu-table { height: auto; max-height: 14; }
    GpuPanel .gpu--line { height: auto; }
    GpuPanel #gpu-source { color: $text-muted; }
    GpuPanel #gpu-paste-text { height: 6; }
    """

    PANEL_ID: ClassVar[str] = "gpu"
    TITLE: ClassVar[dict[str, str]] = {"zh": "GPU 状态", "en": "GPU state"}
    STEPS: ClassVar[tuple[str, ...]] = ("C", "E")
    SOURCES: ClassVar[tuple[str, ...]] = ()
    """NVML or, failing that, DCGM through ``metrics``: checked in :meth:`fetch`."""
    POLL_INTERVAL: ClassVar[float | None] = 1.0
    FETCH_TIMEOUT: ClassVar[float] = 10.0

    def __init__(self, ctx: AppContext, **kwargs: Any) -> None:
        super().__init__(ctx, **kwargs)
        self._nvml_error: str | None = None
        self._nvml_failed_at = 0.0
        self._xids: collections.deque[XidEvent] = collections.deque(maxlen=50)
        self._history: dict[str, dict[str, collections.deque[float | None]]] = {}
        self._step_at: dict[str, datetime] = {}  # per GPU: when its newest sample's step began
        self._auto_node = ""  # the node picked when none was chosen (see fetch)
        self._past_node = ""  # the node whose recent past started the sparklines
        self._last_at: Any = None
        self._auto_note = ""
        self._gpu_nodes: list[str] = []
        self._gpu_nodes_listed: list[str] = []  # what the node switcher offers now
        self._gpu_nodes_read = -NODES_EVERY_S  # monotonic time of the last read of the list

    # -- fetch (no UI) -----------------------------------------------------------------
    async def fetch(self, ctx: AppContext) -> GpuPanelData:
        notes: list[str] = []
        gpu = ctx.sources.gpu
        retry = time.monotonic() - self._nvml_failed_at > NVML_RETRY_S
        if gpu is not None and (self._nvml_error is None or retry):
            try:
                snap = await gpu.snapshot()
            except SourceError as exc:
                if exc.kind not in (
                    ErrorKind.UNAVAILABLE,
                    ErrorKind.NOT_CONFIGURED,
                    ErrorKind.ACCESS_DENIED,
                ):
                    raise
                self._nvml_error = exc.failure.message
                self._nvml_failed_at = time.monotonic()
            else:
                self._nvml_error = None
                events: list[XidEvent] = []
                if hasattr(gpu, "xid_events"):
                    # A replayed bundle may hold no Xid calls; that is not a failure.
                    with contextlib.suppress(SourceError):
                        events = await gpu.xid_events()
                self.record_xid_events(events)
                return GpuPanelData(snapshot=snap, notes=notes, xids=list(self._xids))
        reason = self._nvml_error or ctx.sources.missing_text("gpu", self.lang)
        if reason:
            notes.append(t("gpu.nvml_unavailable", self.lang, reason=reason))
        metrics = ctx.sources.metrics
        if metrics is None:
            reasons = (
                "; ".join(
                    f"{k}: {ctx.sources.missing_text(k, self.lang)}" for k in ctx.sources.missing
                )
                or "-"
            )
            raise SourceError.of(
                "gpu",
                ErrorKind.NOT_CONFIGURED,
                t("gpu.no_source", self.lang, reasons=reasons),
                hint=self._nvml_error or "",
            )
        dcgm = DcgmSource(metrics, clock=ctx.clock.now)
        hist = await window_history(ctx)
        node = ctx.gpu_node or self._auto_node
        if not node and (silent := silent_gpu_node(hist)):
            node = self._auto_node = silent
            self._auto_note = t("gpu.node_silent", self.lang, node=node)
        if time.monotonic() - self._gpu_nodes_read >= NODES_EVERY_S:
            self._gpu_nodes = await dcgm.nodes()
            self._gpu_nodes_read = time.monotonic()
        if not node:
            nodes = self._gpu_nodes
            if not nodes:
                raise SourceError.of("dcgm", ErrorKind.NOT_FOUND, t("gpu.no_node", self.lang))
            node = nodes[0]
            if len(nodes) > 1:
                # Picked once (every node is read for it); later polls read this node only.
                worst = await worst_node(dcgm, nodes, ctx.clock.now())
                node = (worst.node if worst else None) or node
                key = picked_note_key(worst)
                self._auto_note = t(key, self.lang, node=node, count=len(nodes))
            self._auto_node = str(node)
        if self._auto_note and not ctx.gpu_node:
            notes.append(self._auto_note)
        snap = await dcgm.node_snapshot(str(node))
        absent, seen = add_window_losses(snap, hist, str(node))
        xids = list(self._xids) + seen
        past = None
        past_at = ctx.clock.now()
        if self._past_node != str(node):
            # The sparklines start with the node's recent past instead of one point per
            # poll from now on (and show it at all when the clock is frozen: --at, replay).
            self._past_node = str(node)
            try:
                past = await dcgm.history(str(node), SPARK_METRICS, past_at)
            except SourceError:
                past = {}  # history is a help, not a requirement: the polls still fill it
        return GpuPanelData(
            snapshot=snap,
            notes=notes,
            xids=xids,
            past=past,
            past_at=past_at,
            absent=absent,
            nodes=list(self._gpu_nodes),
        )

    def record_xid_events(self, events: list[XidEvent]) -> None:
        """Keep Xid events and put each on the incident timeline (kind ``xid``)."""
        for ev in events:
            self._xids.append(ev)
            session = self.ctx.session
            if session is not None:
                said = in_both(
                    lambda lang, ev=ev: xid_event_text(ev.xid, ev.gpu_index, ev.pci_bus_id, lang)
                )
                session.add_timeline(
                    ev.at, said[self.lang], TimelineKind.XID, source=ev.source, text_i18n=said
                )

    # -- widgets -----------------------------------------------------------------------
    def compose_body(self) -> ComposeResult:
        yield Static("", id="gpu-source", classes="gpu--line", markup=False)
        nodes = LocalSelect([], prompt=t("gpu.node_pick", self.lang), id="gpu-node")
        nodes.display = False  # shown once DCGM lists the nodes (never for local NVML)
        yield nodes
        table = PlainTable(id="gpu-table", zebra_stripes=True, cursor_type="none")
        headers = HEADERS.get(self.lang, HEADERS["en"])
        for col in TABLE_COLUMNS:
            table.add_column(headers[col], key=col)
        yield from with_detail(table, self.lang)
        yield Static(t("gpu.legend", self.lang), id="gpu-legend", classes="gpu--line")
        yield Static("", id="gpu-why", classes="gpu--line", markup=False)
        yield Static("", id="gpu-cohort", classes="gpu--line", markup=False)
        yield Static("", id="gpu-history", classes="gpu--line", markup=False)
        yield Static("", id="gpu-xids", classes="gpu--line", markup=False)
        with Collapsible(title=t("gpu.paste", self.lang), collapsed=True, id="gpu-paste"):
            yield TextArea("", id="gpu-paste-text", soft_wrap=True)
            yield Button(t("gpu.explain", self.lang), id="gpu-explain")
            yield Static("", id="gpu-explain-out", classes="gpu--line", markup=False)

    # -- render (no I/O) ---------------------------------------------------------------
    def render_data(self, data: GpuPanelData) -> None:
        snap = data.snapshot
        lang = self.lang
        self._remember(snap, data.past, data.past_at)
        if snap.source == "nvml":
            src = t(
                "gpu.source_nvml", lang, node=snap.node or "?", driver=snap.driver_version or "?"
            )
        else:
            src = t("gpu.source_dcgm", lang, node=snap.node or "?")
        head = Text(src, style="bold")
        for note in [*data.notes, *snap.warnings_in(self.lang)]:
            head.append("\n⚠ " + note, style="yellow")
        lost = sum(1 for g in snap.gpus if g.lost)
        if lost:
            head.append("\n" + t("gpu.lost_count", lang, n=lost), style="bold red")
        self.query_one("#gpu-source", Static).update(head)
        self._show_nodes(data.nodes, snap.node or "")

        cohort = cohort_view(snap.gpus)
        verdicts = [
            why_gpu(g, snap.gpus, cohort=cohort, xids=data.xids, lang=lang) for g in snap.gpus
        ]
        with self.app.batch_update():
            self._render_all(snap, verdicts, cohort, data, lang)

    def _render_all(
        self,
        snap: GpuNodeSnapshot,
        verdicts: list[Any],
        cohort: Any,
        data: GpuPanelData,
        lang: str,
    ) -> None:
        table = self.query_one("#gpu-table", PlainTable)
        keys = [str(g.index) for g in snap.gpus]
        # Rows whose clock reasons wrap are fitted again: a new reading may need more lines.
        in_place = [str(k.value) for k in table.rows] == keys and not table.wrapping
        if not in_place:
            table.clear()
        rows = []
        for g, v in zip(snap.gpus, verdicts, strict=True):
            row = gpu_row(g, v, cohort, lang)
            cells = []
            for col in TABLE_COLUMNS:
                c = row.cells[col]
                style = "dim" if c.missing and c.level is Level.OK else LEVEL_STYLE[c.level]
                if col == "state" and c.level in (Level.OK, Level.INFO):
                    style = "green"
                cells.append(Text(c.text, style=style))
            if in_place:
                # Update in place: no flicker, the scroll position and widths stay.
                for col, cell in zip(TABLE_COLUMNS, cells, strict=True):
                    table.update_cell(str(g.index), col, cell, update_width=True)
            else:
                rows.append((tuple(cells), str(g.index)))
        if not in_place:
            table.add_rows_fitted(rows, wrap=TABLE_COLUMNS.index("clocks"), keep=VERDICT_COLUMNS)
        self.query_one("#gpu-legend", Static).update(legend(verdicts, lang))

        why = Text()
        why.append(t("gpu.why", lang) + "\n", style="bold")
        for v in verdicts:
            why.append(f"GPU {v.index}: ", style="bold")
            # partial: healthy on what was read only, never drawn as plainly healthy
            why.append(v.line + "\n", style="" if v.partial else LEVEL_STYLE[v.level] or "green")
        for m in data.absent:
            why.append("⚠ " + m.text(lang) + "\n", style="bold red")
        self.query_one("#gpu-why", Static).update(why)

        co = Text()
        co.append(t("gpu.cohort", lang) + ("：" if lang == "zh" else ": "), style="bold")
        lines, stands_out = cohort_lines(snap.gpus, cohort, lang)
        co.append(lines[0], style="bold yellow" if stands_out else "green")
        for line in lines[1:]:
            outlier_line = bool(cohort.outliers) and not line.startswith(" ")
            co.append("\n" + line, style="bold yellow" if outlier_line else "")
        self.query_one("#gpu-cohort", Static).update(co)

        hist = [t("gpu.history", lang, minutes=HISTORY_SPAN_S / 60)]
        kept = {g.index: self._history.get(self._key(g.index, g.uuid), {}) for g in snap.gpus}
        # one scale per metric across the node's GPUs: bars compare GPUs, not only moments
        tops = shared_tops(kept.values())
        for g in snap.gpus:
            h = kept[g.index]
            sparks = " ".join(
                f"{sparkline(list(h.get(m, [])), SPARK_CELLS, tops.get(m)):<{SPARK_CELLS}}"
                for m in SPARK_METRICS
            )
            hist.append(f"GPU {g.index}: {sparks}")
        self.query_one("#gpu-history", Static).update("\n".join(hist))

        xl = xid_lines(data.xids, lang)
        self.query_one("#gpu-xids", Static).update("\n".join(xl))

    def _show_nodes(self, nodes: list[str], current: str) -> None:
        """The node switcher: every node with GPUs, the one shown selected."""
        select = self.query_one("#gpu-node", Select)
        select.display = bool(nodes)
        if not nodes:
            return
        options = [(Text(n), n) for n in nodes]
        if self._gpu_nodes_listed != nodes:
            self._gpu_nodes_listed = list(nodes)
            with select.prevent(Select.Changed):
                select.set_options(options)
        if current in nodes and select.value != current:
            with select.prevent(Select.Changed):
                select.value = current

    @on(Select.Changed, "#gpu-node")
    def _node_chosen(self, event: Select.Changed) -> None:
        """Show the chosen node's GPUs (and say so, so the switch is never silent)."""
        node = event.value
        if not isinstance(node, str) or node == self.ctx.gpu_node:
            return
        self.ctx.gpu_node = node
        self.notify(t("gpu.node_switched", self.lang, node=node), markup=False)
        self.refresh_data()

    @staticmethod
    def _key(index: int, uuid: str | None) -> str:
        return uuid or f"#{index}"

    def _remember(
        self,
        snap: GpuNodeSnapshot,
        past: dict[str, Any] | None = None,
        past_at: datetime | None = None,
    ) -> None:
        """Keep one sample per GPU and metric every :data:`HISTORY_STEP_S` seconds (the
        step of DCGM's history): a poll within the newest sample's step replaces it, so the
        kept samples stay evenly spaced and span the half hour whatever the poll rate."""
        if past:
            self._history = {
                key: {
                    m: collections.deque(values, maxlen=HISTORY_POINTS)
                    for m, values in attrs.items()
                }
                for key, attrs in past.items()
            }
            self._step_at = dict.fromkeys(past, past_at) if past_at is not None else {}
        if snap.at == self._last_at:
            return  # a frozen clock (--at, replay) polls the same instant again
        self._last_at = snap.at
        step = timedelta(seconds=HISTORY_STEP_S)
        for g in snap.gpus:
            key = self._key(g.index, g.uuid)
            h = self._history.setdefault(key, {})
            began = self._step_at.get(key)
            same_step = began is not None and snap.at - began < step
            if not same_step:
                self._step_at[key] = snap.at
            for m in SPARK_METRICS:
                r = getattr(g, m)
                value = r.value if r.ok else None
                d = h.setdefault(m, collections.deque(maxlen=HISTORY_POINTS))
                if same_step and d:
                    d[-1] = value
                else:
                    d.append(value)

    @on(Button.Pressed, "#gpu-explain")
    def _explain(self) -> None:
        text = self.query_one("#gpu-paste-text", TextArea).text
        res = explain_xid_text(text, self.lang)
        out: list[str] = []
        if not res.found:
            out.append(t("gpu.nothing_found", self.lang))
        for rep in res.gpus:
            out.append(f"{rep.pci}: {rep.verdict_text}")
            for g in rep.groups:
                extra = f" (+{sum(g.followons.values())} follow-on)" if g.followons else ""
                out.append(f"  Xid {g.xid} ×{g.count}{extra}: {g.info.name} — {g.reason}")
                out.extend(f"    - {a}" for a in g.actions)
        out.extend(res.findings)
        if res.node_action:
            out.append(t("gpu.node_action", self.lang, text=res.node_action))
        self.query_one("#gpu-explain-out", Static).update("\n".join(out))
