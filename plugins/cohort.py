"""Healthy-cohort panel (step E): the suspect pod, node or GPU against its cohort.

Seed 000 ("隔离对比健康实例"; 先收集: 健康对照组): the cohort is chosen automatically —
other replicas of the same deployment and revision, other GPUs on the same node, the
previous revision — and stated; the user can change it. Suspect vs cohort median for every
golden signal and DCGM field, outliers highlighted.

The suspect field takes a pod, a node, ``node/N`` (a GPU by index), a GPU UUID (or its
start) or a revision (ReplicaSet, hash or version), resolved against the window's
inventory (:mod:`cockpit.analysis.history`), which it offers to pick from (completion and
a summary line); entities are named the way every screen names them.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.suggester import SuggestFromList
from textual.widgets import DataTable, Input, Static

from cockpit.analysis.cohort import (
    CohortComparison,
    CohortKind,
    CohortRow,
    available_kinds,
    median_text,
    suspect_text,
)
from cockpit.analysis.history import WindowInventory
from cockpit.context import AppContext
from cockpit.i18n import catalog, fmt_number, fmt_value, in_both, t
from cockpit.incident import Evidence
from cockpit.models.messages import signal_label, signal_names, unit_text
from cockpit.ui.fields import TextInput
from cockpit.ui.panel import Panel
from cockpit.ui.table import PlainTable


def service_text(r: CohortRow, unit: str, lang: str) -> str:
    """Step C's service-wide value of a row's key in E's number format; a quantile in its
    histogram's top or lowest bucket as C says it (the bound it is at least, or at most:
    ``≤ 300 ms, lowest bucket``, never the interpolated ``297 ms``), and a verdict that
    rests on the window as C's row reads it (``in the window: Xid 79 (13:40:00)``, never 0)."""
    m = r.service_msg
    if m is not None and (
        m.key in ("evidence.value.lower_bound", "evidence.value.upper_bound")
        or m.key.startswith("metrics.window.")
    ):
        return m.text(lang)
    return fmt_value(r.service, unit) if r.service is not None else ""


def example_gpu(inv: WindowInventory, suspect: tuple[str, str] | None) -> str:
    """The ``node/index`` a suspect field's hint gives as an example: the suspect's GPU
    (the GPU compared, or the one its pod held) when there is one, else a GPU a pod held
    in the window, never an idle one; ``""`` when no GPU of the window has a node."""
    if suspect is not None:
        name, kind = suspect
        g = inv.gpus.get(name) if kind == "gpu" else inv.gpu_of(name) if kind == "pod" else None
        if g is not None and g.node and g.index:
            return f"{g.node}/{g.index}"
    busy = [g for g in inv.gpus.values() if g.node and g.index and g.pods]
    if busy:
        g = min(busy, key=lambda g: (g.node, g.index.zfill(4)))
        return f"{g.node}/{g.index}"
    return ""


def pick_text(inv: WindowInventory, suspect: tuple[str, str] | None, lang: str) -> str:
    """The suspect field's hint: what the window holds, an example GPU (see
    :func:`example_gpu`), and the revisions only when there are several to compare (one
    revision is no rollout, and naming it reads as one)."""
    several = len(inv.revisions) > 1
    return t(
        "metrics.cohort.pick" if several else "metrics.cohort.pick_one_revision",
        lang,
        pods=len(inv.pods),
        nodes=len(inv.nodes),
        gpus=len(inv.gpus),
        revisions=", ".join(inv.revision_name(r) for r in sorted(inv.revisions)),
        example=example_gpu(inv, suspect) or "-",
    )


class CohortPanel(Panel):
    """Suspect vs healthy cohort, signal by signal."""

    PANEL_ID = "cohort"
    TITLE: ClassVar[dict[str, str]] = {"zh": "健康对照组", "en": "Healthy cohort"}
    STEPS = ("E",)
    SOURCES = ("metrics",)
    POLL_INTERVAL = None
    FETCH_TIMEOUT = 90.0

    DEFAULT_CSS = """
    CohortPanel #cohort-def { height: auto; text-style: bold; }
    CohortPanel #cohort-out { height: auto; color: $error; }
    CohortPanel #cohort-table { height: auto; max-height: 30; }
    CohortPanel #cohort-suspect { width: 1fr; max-width: 84; }
    CohortPanel #cohort-pick { height: auto; }
    """

    BINDINGS: ClassVar[list[Any]] = [
        Binding("alt+c", "cycle_cohort", "Cohort", priority=True),
        Binding("alt+p", "pin", "Pin", priority=True),
    ]

    def __init__(self, ctx: AppContext, **kwargs: Any) -> None:
        super().__init__(ctx, **kwargs)
        self.kind: CohortKind | None = None
        self.suspect: tuple[str, str] | None = None
        self.inventory: WindowInventory | None = None

    def compose_body(self) -> ComposeResult:
        suspect = TextInput(
            placeholder=t("metrics.cohort.suspect_hint", self.lang),
            id="cohort-suspect",
            compact=True,
        )
        suspect.cursor_blink = False  # a steady cursor: calmer over ssh, stable in snapshots
        yield suspect
        yield Static("", id="cohort-pick", classes="hint", markup=False)
        yield Static("", id="cohort-def", markup=False)
        yield Static("", id="cohort-out", markup=False)
        yield PlainTable(id="cohort-table", cursor_type="row", zebra_stripes=True)
        yield Static(t("metrics.cohort.kind_help", self.lang), classes="hint")

    def on_mount(self) -> None:
        lang = self.lang
        self.query_one("#cohort-table", DataTable).add_columns(
            t("metrics.golden.col_signal", lang),
            t("metrics.cohort.col_suspect", lang),
            t("metrics.cohort.col_median", lang),
            "n",
            t("metrics.cohort.col_ratio", lang),
            t("metrics.cohort.col_service", lang),
            "",
        )
        super().on_mount()

    async def fetch(self, ctx: AppContext) -> CohortComparison | None:
        from cockpit.collect import steps
        from cockpit.collect.cache import screen_window
        from cockpit.collect.history import collect_history
        from cockpit.sources.base import SourceError

        window = screen_window(ctx)
        try:
            self.inventory = (await collect_history(ctx, window)).inventory
        except SourceError:
            self.inventory = None  # the field still takes names; they are not resolved
        return await steps.cohort(ctx, window, self.suspect, self.kind)

    def display_name(self, name: str, kind: str) -> str:
        """``name`` the way every screen names it (the raw name when the inventory does
        not know it)."""
        return self.inventory.name_of(name, kind) if self.inventory is not None else name

    def _offer_inventory(self, suspect: tuple[str, str] | None) -> None:
        """Complete the suspect field from the inventory and say what it holds (its
        example: ``suspect``'s GPU, see :func:`example_gpu`)."""
        inv = self.inventory
        pick = self.query_one("#cohort-pick", Static)
        pick.display = inv is not None and bool(inv.pods or inv.gpus)
        if inv is None or not pick.display:
            return
        self.query_one("#cohort-suspect", Input).suggester = SuggestFromList(
            inv.candidates(), case_sensitive=False
        )
        pick.update(pick_text(inv, suspect or self.suspect, self.lang))

    def render_data(self, data: CohortComparison | None) -> None:
        lang = self.lang
        self._say_cycled(data)
        table = self.query_one("#cohort-table", PlainTable)
        table.clear()
        self._offer_inventory(
            (data.cohort.suspect, data.cohort.suspect_kind) if data is not None else None
        )
        if data is None:
            session = self.ctx.session
            shared = session is not None and session.incident.scope_branch == "shared"
            # D answered "shared": there is no suspect to find, not one still to decide
            key = "metrics.cohort.shared" if shared else "metrics.cohort.no_suspect"
            self.query_one("#cohort-def", Static).update(t(key, lang))
            self.query_one("#cohort-out", Static).update("")
            return
        c = data.cohort
        inv = self.inventory
        gone = inv.gpus.get(c.suspect) if inv is not None else None
        silent = ""
        if inv is not None and gone is not None and inv.is_silent(gone):
            from cockpit.analysis.history import silent_gpu_msg

            silent = silent_gpu_msg(inv, gone).text(lang)  # absent now, not unknown
        if not any(r.suspect is not None or r.window is not None for r in data.rows):
            # A name no series carries (a typo, a pod of another service): said, not shown
            # as a cohort of "?" against nothing.
            text = silent or t("metrics.cohort.not_found", lang, suspect=c.suspect)
            self.query_one("#cohort-def", Static).update(text)
            self.query_one("#cohort-out", Static).update("")
            return
        self.kind = c.kind
        self.suspect = (c.suspect, c.suspect_kind)
        inp = self.query_one("#cohort-suspect", Input)
        if not inp.value:
            inp.value = c.suspect
        self.query_one("#cohort-def", Static).update(
            f"{t(f'evidence.suspect_kind.{c.suspect_kind}', lang)} "
            f"{self.display_name(c.suspect, c.suspect_kind)} · "
            + t("metrics.text.cohort", lang, definition=c.definition(lang))
            + (f"\n{silent}" if silent else "")
        )
        restarts = (
            f" · {data.restarts.msg().text(lang)}" if data.restarts and data.restarts.n else ""
        )
        self.query_one("#cohort-out", Static).update(
            t(
                data.heading_key,
                lang,
                suspect=self.display_name(c.suspect, c.suspect_kind),
                names=signal_names(*data.outliers).text(lang) or "-",
            )
            + restarts
        )
        # a release is judged before and after by C's thresholds; a cohort by how far
        # the suspect stands from its peers (another question, said so)
        mark = "anomalous" if c.suspect_kind == "revision" else "outlier"
        rows: list[tuple[tuple[str, ...], str]] = []
        for r in data.rows:
            if r.suspect is None and r.cohort_median is None:
                continue
            # one replica's (or GPU's) value, named so: never C's service-wide label
            name = r.label(lang)
            unit = unit_text(r.unit, lang)  # restarts, pods, changes in the language
            # with the window's history: an Xid seen, a series that stopped (never "—")
            mine = suspect_text(r, lang)
            rows.append(
                (
                    (
                        name,
                        mine,
                        median_text(r, lang),
                        str(r.cohort_n),
                        f"×{r.ratio:.2f}" if r.ratio is not None else "",
                        # step C's service-wide value of the same signal, as C shows it
                        service_text(r, unit, lang),
                        f"◀ {t(f'metrics.cohort.{mark}', lang)}"
                        if r.outlier
                        else f"◀ {t('metrics.cohort.changed', lang)}"
                        if r.changed
                        else "",
                    ),
                    r.key,
                )
            )
        # At 80 columns the signal's name (16 characters at the least), the suspect's value
        # and C's wrap so that the cohort's median, the ratio and the mark stay in sight.
        table.add_rows_fitted(rows, wrap=(0, 1, 5), minimum=(16, 8, 8))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """A suspect typed by the user: resolved against the window's inventory (a pod, a
        node, ``node/N``, a UUID or its start, a revision: compared with the previous
        revision, from the history when its pods are gone); otherwise GPU-… is a GPU, a known node a node,
        else a pod. An empty field goes back to the suspect found at step D. A resolved
        suspect is shared (``ctx.metrics.picked``: F2 fills its commands from it)."""
        if event.input.id != "cohort-suspect":
            return
        event.stop()
        name = event.value.strip()
        if not name:
            # Back to the suspect the flow found (step D), as on first entry.
            self.ctx.metrics.picked = None
            self.suspect = None
            self.kind = None
            self.refresh_data()
            return
        resolved = self.inventory.resolve(name) if self.inventory is not None else None
        cohort_kind: CohortKind | None = None
        picked = resolved
        if resolved is not None:
            kind, name = resolved
            if kind == "revision":
                cohort_kind = "previous_revision"
        else:
            kind = "gpu" if name.startswith("GPU-") or "/gpu" in name else "pod"
            data = self.data
            if data is not None:
                nodes = {v for v in [data.cohort.suspect] if data.cohort.suspect_kind == "node"}
                if name in nodes:
                    kind = "node"
        self.suspect = (name, kind)
        if picked is not None:
            self.ctx.metrics.picked = (picked[1], picked[0])
        self.kind = cohort_kind
        self.refresh_data()

    def action_cycle_cohort(self) -> None:
        """Switch to the next cohort kind for this suspect and say which; with no suspect
        yet, or one that has a single cohort (a release: the revision it replaced), say
        why nothing switched."""
        lang = self.lang
        if self.suspect is None:
            self.notify(t("metrics.cohort.cycle_no_suspect", lang), markup=False)
            return
        name, suspect_kind = self.suspect
        who = self.display_name(name, suspect_kind)
        kinds = [k for k in available_kinds(suspect_kind) if k != "custom"]
        cur = self.kind if self.kind in kinds else kinds[0]
        if len(kinds) < 2:
            key = f"metrics.cohort.cycle_only_{suspect_kind}"
            key = key if key in catalog() else "metrics.cohort.cycle_only"
            kind = t(f"metrics.cohort.kind.{cur}", lang)
            self.notify(t(key, lang, suspect=who, kind=kind), markup=False)
            return
        self.kind = kinds[(kinds.index(cur) + 1) % len(kinds)]
        # said once the comparison it switched to has loaded: an empty cohort (a pod whose
        # revision replaced none) is said empty, never "now compared with" nothing
        self._cycled = (who, self.kind)
        self.refresh_data()

    _cycled: tuple[str, str] | None = None
    """The suspect's name and the cohort kind Alt+C switched to, until its data loads."""

    def _say_cycled(self, data: CohortComparison | None) -> None:
        """The notice of an Alt+C switch, from the comparison it loaded."""
        if self._cycled is None:
            return
        (who, kind_id), self._cycled = self._cycled, None
        lang = self.lang
        kind = t(f"metrics.cohort.kind.{kind_id}", lang)
        if data is not None and data.cohort.kind != kind_id:
            # none of that kind in the window (a pod whose revision replaced none): the
            # panel stays on the cohort it could build, and says so
            actual = t(f"metrics.cohort.kind.{data.cohort.kind}", lang)
            text = t("metrics.cohort.cycled_none", lang, suspect=who, kind=kind, actual=actual)
        else:
            empty = data is not None and data.empty
            key = "metrics.cohort.cycled_empty" if empty else "metrics.cohort.cycled"
            text = t(key, lang, suspect=who, kind=kind)
        self.notify(text, markup=False)

    def _pin_label(self, data: CohortComparison, row: CohortRow, lang: str) -> str:
        """A cohort pin's label: the suspect as every screen names it and the signal's
        human name (``gpu-node-b GPU 2 (GPU-49f3…) GPU temperature``), never its key."""
        who = self.display_name(data.cohort.suspect, data.cohort.suspect_kind)
        return f"{who} {signal_label(row.key, lang)}"

    def action_pin(self) -> None:
        """Pin the selected row (suspect vs cohort median) as evidence."""
        data = self.data
        table = self.query_one("#cohort-table", DataTable)
        row = None
        if data is not None and self.ctx.session is not None and table.row_count:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
            row = next((r for r in data.rows if r.key == key), None)
        if row is not None and row.suspect is None and row.window is None:
            row = None  # a row that shows no reading has nothing to pin
        if data is None or self.ctx.session is None or row is None:
            self.notify(t("metrics.golden.nothing_to_pin", self.lang), markup=False)
            return
        # the row's reading as it shows it: a number, or the window's history in words
        # (an Xid seen in the window, a series that stopped) when that is what it reads
        words = row.window is not None
        ev = self.ctx.session.pin(
            Evidence(
                label=self._pin_label(data, row, self.lang),
                label_i18n=in_both(lambda lang: self._pin_label(data, row, lang)),
                value=suspect_text(row, self.lang) if words else fmt_number(row.suspect or 0.0),
                value_i18n=in_both(lambda lang: suspect_text(row, lang)) if words else {},
                unit="" if words else row.unit,
                at=self.ctx.clock.now(),
                query=row.query,
                source="prometheus",
                step="E",
                what=row.signal,
                note=t(
                    "evidence.cohort_pin_note",
                    self.lang,
                    median=median_text(row, self.lang),
                    definition=data.cohort.definition(self.lang),
                ),
                note_i18n=in_both(
                    lambda lang: t(
                        "evidence.cohort_pin_note",
                        lang,
                        median=median_text(row, lang),
                        definition=data.cohort.definition(lang),
                    )
                ),
            )
        )
        self.notify(t("metrics.golden.pinned", self.lang, label=ev.label), markup=False)
