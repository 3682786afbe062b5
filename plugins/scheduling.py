"""Pod scheduling panel (step E): why the service's pods are Pending, node by node.

Shows the newest FailedScheduling message parsed into reason classes with counts, the
findings (device plugin, taints, quota, priority, gangs), the per-node table with GPU
nodes first, and the handbook's commands (seed 000, 场景五) ready to copy.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from cockpit.context import AppContext
from cockpit.i18n import fmt_number, t
from cockpit.timeparse import fmt_iso_text
from cockpit.ui.panel import Panel
from cockpit.ui.row_detail import with_detail
from cockpit.ui.select import EndOptionList
from cockpit.ui.table import PlainTable


def _n(v: float | None) -> str:
    return "?" if v is None else fmt_number(v, 6)


NODE_COLUMNS = ("node", "blockers", "state", "gpu", "taints", "labels", "cpu", "mem", "plugin")
"""The nodes table's columns: why a node takes no pending pod first (its blockers, state,
GPUs and blocking taints), then the selector's labels, CPU, memory and device plugin."""


class SchedulingPanel(Panel):
    """Per-node explanation of Pending pods, with commands to copy."""

    PANEL_ID = "scheduling"
    TITLE: ClassVar[dict[str, str]] = {
        "zh": "Pod 调度（Pending）",
        "en": "Pod scheduling (Pending)",
    }
    STEPS = ("E",)
    SOURCES = ("kube",)
    POLL_INTERVAL = 30.0
    FETCH_TIMEOUT = 60.0

    BINDINGS: ClassVar[list[Any]] = [
        Binding("alt+c", "copy_command", "Copy command", priority=True)
    ]

    DEFAULT_CSS = """
    SchedulingPanel .sched--summary { height: auto; }
    SchedulingPanel DataTable { height: auto; max-height: 20; }
    SchedulingPanel OptionList { height: auto; max-height: 12; }
    """

    def __init__(self, ctx: AppContext, pod: str | None = None, **kwargs: Any) -> None:
        super().__init__(ctx, **kwargs)
        self.pod = pod
        self.commands: list[str] = []

    async def fetch(self, ctx: AppContext) -> Any:
        from cockpit.collect.kube_gather import gather_pending

        ns = None
        if ctx.session is not None and ctx.session.incident.service.namespace:
            ns = ctx.session.incident.service.namespace
        elif ctx.settings.service.namespace:
            ns = ctx.settings.service.namespace
        return await gather_pending(ctx.sources.kube, self.pod, ns)

    def on_mount(self) -> None:
        super().on_mount()
        if self.missing_sources():
            # Nothing to list or copy without a cluster: only the reason stays.
            for w in self.query(".sched--body"):
                w.display = False

    def compose_body(self) -> ComposeResult:
        yield Static("", classes="sched--summary sched--body", markup=False)
        yield from with_detail(
            PlainTable(
                id="sched-nodes", zebra_stripes=True, cursor_type="row", classes="sched--body"
            ),
            self.lang,
        )
        # A label: it names the list of commands under it (its Tab stop).
        yield Label(t("kube.panel.commands", self.lang), classes="sched--cmd-title sched--body")
        yield EndOptionList(id="sched-commands", classes="sched--body")

    def render_data(self, data: Any) -> None:
        lang = self.lang
        summary = self.query_one(".sched--summary", Static)
        table = self.query_one("#sched-nodes", PlainTable)
        opts = self.query_one("#sched-commands", OptionList)
        lines: list[str] = []
        if not data.analyses:
            lines.append(t("kube.panel.no_pending", lang, scope=data.scope))
        for a in data.analyses:
            req = ", ".join(
                f"{k}={_n(v / 2**30) + 'Gi' if k in ('memory', 'ephemeral-storage') else _n(v)}"
                for k, v in sorted(a.requests.items())
            )
            lines.append(
                t(
                    "kube.panel.pod",
                    lang,
                    ns=a.namespace,
                    pod=a.pod,
                    scheduler=a.scheduler,
                    requests=req,
                )
            )
            if a.message is not None:
                lines.append(
                    "  "
                    + t(
                        "kube.panel.message_from",
                        lang,
                        source=a.message_source,
                        at=fmt_iso_text(a.message_at) if a.message_at else "?",
                    )
                )
            for f in a.findings:
                mark = {"problem": "✗", "warn": "!", "info": "·"}.get(f.severity, "·")
                lines.append(f"  {mark} {f.text(lang)}")
            for q in a.quotas:
                lines.append(
                    f"  {t('kube.panel.quota', lang)} {q.quota}: {q.resource} {q.used}/{q.hard}{' ✗' if q.exceeded else ''}"
                )
            if a.rows_omitted:
                lines.append("  " + t("kube.panel.rows_omitted", lang, n=a.rows_omitted))
            lines.append(
                t("kube.panel.checklist", lang) + ": " + "; ".join(t(k, lang) for k in a.checklist)
            )
        for fl in data.failures:
            lines.append(
                "⚠ "
                + t(
                    "kube.panel.partial",
                    lang,
                    what=f"{t('error.' + fl.kind.value, lang)}: {fl.message}",
                )
            )
            if fl.hint:
                lines.append("  " + fl.hint)
        summary.update("\n".join(lines))
        table.clear(columns=True)
        # Why a node takes no pod first (its blockers, its state, its GPUs, its taints): at
        # 80 columns those fit, the node and the blockers wrapping; the rest follow, the
        # cursor's node read whole under the table.
        table.add_columns(*(t(f"kube.col.{c}", lang) for c in NODE_COLUMNS))
        shown: list[tuple[tuple[str, ...], str | None]] = []
        first = data.analyses[0] if data.analyses else None
        if first is not None:
            for section, rows in (
                (
                    t("kube.panel.gpu_nodes", lang, count=first.gpu_nodes),
                    [r for r in first.rows if r.gpu_node],
                ),
                (
                    t("kube.panel.cpu_nodes_short", lang, count=first.cpu_nodes),
                    [r for r in first.rows if not r.gpu_node],
                ),
            ):
                if not rows:
                    continue
                shown.append(((f"— {section}", *[""] * (len(NODE_COLUMNS) - 1)), None))
                for r in rows[:200]:
                    state = []
                    if r.cordoned:
                        state.append(t("kube.state.cordoned", lang))
                    if r.ready is False:
                        state.append(t("kube.state.not_ready", lang))
                    if r.gpu_unhealthy:
                        state.append(t("kube.state.unhealthy_gpus", lang, n=_n(r.gpu_unhealthy)))
                    cells = {
                        "node": r.name,
                        "gpu": f"{_n(r.gpu_capacity)}/{_n(r.gpu_allocatable)}/{_n(r.gpu_requested)}"
                        if r.gpu_node
                        else "-",
                        "cpu": f"{_n(r.cpu_allocatable)}/{_n(r.cpu_requested)}",
                        "mem": f"{_n(round(r.mem_allocatable_gib, 1) if r.mem_allocatable_gib is not None else None)}/"
                        f"{_n(round(r.mem_requested_gib, 1) if r.mem_requested_gib is not None else None)}",
                        "taints": ", ".join(r.taints_blocking) or "-",
                        "labels": t(
                            "kube.value.yes" if r.selector_match else "kube.value.no", lang
                        ),
                        "state": ", ".join(state) or t("kube.state.ready", lang),
                        "plugin": t(f"kube.plugin.{r.device_plugin.replace('/', '')}", lang),
                        "blockers": ", ".join(t(f"kube.blocker.{b}", lang) for b in r.blockers)
                        or "✓",
                    }
                    shown.append((tuple(cells[c] for c in NODE_COLUMNS), None))
        wraps = tuple(NODE_COLUMNS.index(c) for c in ("node", "blockers", "gpu", "taints"))
        table.add_rows_fitted(shown, wrap=wraps, keep=NODE_COLUMNS.index("taints") + 1)
        self.commands = list(dict.fromkeys(c for a in data.analyses for c in a.commands))
        opts.clear_options()
        opts.add_options([Option(Text(c)) for c in self.commands])

    def copy(self, index: int) -> str | None:
        """Copy command ``index`` to the clipboard (OSC 52); returns it."""
        if not 0 <= index < len(self.commands):
            self.notify(t("kube.panel.nothing_to_copy", self.lang), markup=False)
            return None
        cmd = self.commands[index]
        self.app.copy_to_clipboard(cmd)
        self.notify(t("kube.panel.copied", self.lang, cmd=cmd), markup=False)
        return cmd

    def action_copy_command(self) -> None:
        opts = self.query_one("#sched-commands", OptionList)
        self.copy(opts.highlighted if opts.highlighted is not None else 0)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.copy(event.option_index)
