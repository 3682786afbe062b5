"""Shared parts of the metrics views (C, D, F): a widget that fetches in a worker and
shows loading / classified errors in place, and a text sparkline for table cells."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Static

from cockpit.context import AppContext
from cockpit.i18n import spark_floor, t
from cockpit.sources.base import ErrorKind, SourceError, SourceFailure
from cockpit.ui.keys import localize_bindings
from cockpit.ui.worker_errors import ContainsWorkerErrors

BARS = "▁▂▃▄▅▆▇█"


def spark_text(values: list[float], width: int = 16) -> str:
    """A text sparkline of ``values`` resampled to ``width`` cells (max per cell), the bars
    from :func:`cockpit.i18n.spark_floor` to the highest cell (A's golden rows, C's and F's tables)."""
    if not values:
        return ""
    n = len(values)
    cells = []
    for i in range(min(width, n)):
        lo, hi = (
            i * n // min(width, n),
            max((i + 1) * n // min(width, n), i * n // min(width, n) + 1),
        )
        cells.append(max(values[lo:hi]))
    vmin, vmax = spark_floor(min(cells)), max(cells)
    span = vmax - vmin
    if span <= 0:
        return BARS[0] * len(cells)
    return "".join(
        BARS[min(len(BARS) - 1, int((v - vmin) / span * (len(BARS) - 1) + 0.5))] for v in cells
    )


class MetricsView(ContainsWorkerErrors, Vertical):
    """Fetches ``load(refresh)`` in an exclusive worker; subclasses render the result
    (first ``load_early(refresh)``'s partial one, when they have one: it is ``early``
    until the whole result is ``data``).

    Errors are shown in place with their class (never as empty data); the last good data
    stays on screen.
    """

    DEFAULT_CSS = """
    MetricsView { height: auto; }
    MetricsView > .mv-status { color: $text-muted; height: auto; }
    MetricsView > .mv-status.-error { color: $error; }
    MetricsView .mv-head { color: $text-muted; height: auto; }
    MetricsView .section { text-style: bold; margin: 1 0 0 0; color: $accent; }
    """

    BINDINGS: ClassVar[list[Any]] = [Binding("alt+r", "refresh", "Refresh", priority=True)]
    TIMEOUT: ClassVar[float] = 90.0

    def __init__(self, ctx: AppContext, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ctx = ctx
        localize_bindings(self, ctx.lang)
        self.data: Any = None
        self.early: Any = None
        self.failure: SourceFailure | None = None

    @property
    def lang(self) -> str:
        """UI language."""
        return self.ctx.lang

    def compose(self) -> ComposeResult:
        yield Static(t("metrics.view.loading", self.lang), classes="mv-status", markup=False)
        yield from self.compose_body()

    def compose_body(self) -> ComposeResult:
        """Child widgets."""
        yield from ()

    def on_mount(self) -> None:
        if self.ctx.sources.metrics is None:
            reason = self.ctx.sources.missing_text(
                "metrics", self.lang, t("panel.not_configured", self.lang)
            )
            self._status(t("metrics.view.no_metrics", self.lang, reason=reason), error=True)
            return
        self.start(False)

    def start(self, refresh: bool) -> None:
        """Fetch (again)."""

        async def job() -> None:
            await self._run(refresh)

        # A coroutine *function*: nothing is created (or left un-awaited) if the app exits
        # before the worker starts.
        self.run_worker(job, exclusive=True, group=f"mv-{id(self)}", exit_on_error=False)  # type: ignore[arg-type]

    def action_refresh(self) -> None:
        """Re-run the queries, said."""
        from cockpit.ui.focus import widget_name

        self.start(True)
        names = widget_name(self, self.lang)
        self.notify(t("panel.refreshing", self.lang, names=names), markup=False)

    async def load(self, refresh: bool) -> Any:
        """Fetch the data (no UI calls). Raise :class:`SourceError` on failure."""
        raise NotImplementedError

    def show(self, data: Any) -> None:
        """Render ``data`` (no I/O)."""

    async def load_early(self, refresh: bool) -> Any:
        """A first, partial result to show while :meth:`load` still runs (``None``: none).
        Raise :class:`SourceError` on failure."""
        return None

    def early_note(self) -> str:
        """The status line under a partial result: what is still being read."""
        return t("metrics.view.loading", self.lang)

    @property
    def displayed(self) -> Any:
        """What is on screen: the partial result while the rest is read, else ``data``."""
        return self.early if self.early is not None else self.data

    async def _load_all(self, refresh: bool) -> Any:
        early = await self.load_early(refresh)
        if early is not None:
            self.early, self.failure = early, None
            self._status(self.early_note(), error=False)
            self.show(early)
        return await self.load(refresh)

    async def _run(self, refresh: bool) -> None:
        try:
            data = await asyncio.wait_for(self._load_all(refresh), timeout=self.TIMEOUT)
        except SourceError as exc:
            self._fail(exc.failure)
            return
        except TimeoutError:
            self._fail(
                SourceFailure(
                    source="prometheus", kind=ErrorKind.TIMEOUT, message=f"> {self.TIMEOUT:.0f} s"
                )
            )
            return
        self.data, self.early, self.failure = data, None, None
        self._status("", error=False)
        self.show(data)

    def _fail(self, failure: SourceFailure) -> None:
        self.failure = failure
        text = f"⚠ {t(f'error.{failure.kind.value}', self.lang)}: {failure.message}"
        if hint := failure.hint_in(self.lang):
            text += f"\n  {hint}"
        self._status(text, error=True)

    def show_worker_error(self, text: str) -> None:
        """An unexpected failure of the fetch, on the view's status line."""
        self._status(f"⚠ {text}", error=True)

    def _status(self, text: str, error: bool) -> None:
        st = self.query_one(".mv-status", Static)
        st.update(text)
        st.display = bool(text)
        st.set_class(error, "-error")
