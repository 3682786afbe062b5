"""The panel plugin base class.

A panel declares what it is and where it appears, fetches in a worker (no UI calls), and
renders (no I/O)::

    class GpuPanel(Panel):
        PANEL_ID = "gpu"
        TITLE = {"zh": "GPU 状态", "en": "GPU state"}
        STEPS = ("C", "E")
        SOURCES = ("gpu",)          # names of :class:`cockpit.sources.base.Sources` fields
        POLL_INTERVAL = 1.0         # seconds; None = fetch once (and on refresh)

        async def fetch(self, ctx): ...          # returns data; raise SourceError on failure
        def compose_body(self): yield DataTable() # child widgets
        def render_data(self, data): ...          # update the children from data

The base class runs ``fetch`` in an exclusive worker with a timeout, re-arms the poll timer
only after the previous poll finished (polls never overlap, and back off on error), pauses
while the panel is not visible, keeps the last good data, shows its age when stale and the
error in place (the panel gets the CSS class ``-stale`` while it shows data a failed fetch
could not replace). Register panels under the entry-point group ``cockpit.panels``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static

from cockpit.context import AppContext
from cockpit.i18n import t
from cockpit.sources.base import ErrorKind, SourceError, SourceFailure
from cockpit.ui.keys import localize_bindings
from cockpit.ui.worker_errors import ContainsWorkerErrors


class Panel(ContainsWorkerErrors, Vertical):
    """Base class of every panel (built-in or third-party)."""

    DEFAULT_CSS = """
    Panel {
        height: auto;
        border: round $primary 40%;
        padding: 0 1;
        margin: 0 0 1 0;
    }
    Panel > .panel--status { color: $text-muted; height: auto; }
    Panel > .panel--status.-error { color: $error; }
    Panel > .panel--status.-stale { color: $warning; }
    """

    PANEL_ID: ClassVar[str] = ""
    """Stable identifier (entry-point name)."""
    TITLE: ClassVar[dict[str, str]] = {"zh": "", "en": ""}
    """Title in both languages."""
    STEPS: ClassVar[tuple[str, ...]] = ()
    """Flowchart steps (letters) the panel appears on."""
    SOURCES: ClassVar[tuple[str, ...]] = ()
    """Sources it needs; when one is missing the panel says so instead of fetching."""
    POLL_INTERVAL: ClassVar[float | None] = None
    """Seconds between polls; ``None`` fetches once (and on ``refresh_data``)."""
    FETCH_TIMEOUT: ClassVar[float] = 30.0
    """Upper bound on one ``fetch`` in seconds."""
    MAX_BACKOFF: ClassVar[float] = 60.0
    """Longest delay between polls after repeated errors, in seconds."""

    class Fetched(Message):
        """Posted after a successful fetch (``data`` is what ``fetch`` returned)."""

        def __init__(self, panel: Panel, data: Any) -> None:
            super().__init__()
            self.panel = panel
            self.data = data

    class Failed(Message):
        """Posted after a failed fetch."""

        def __init__(self, panel: Panel, failure: SourceFailure) -> None:
            super().__init__()
            self.panel = panel
            self.failure = failure

    def __init__(self, ctx: AppContext, **kwargs: Any) -> None:
        kwargs.setdefault("id", f"panel-{self.PANEL_ID}" if self.PANEL_ID else None)
        super().__init__(**kwargs)
        self.ctx = ctx
        localize_bindings(self, ctx.lang)
        self.data: Any = None
        """Last good data (kept across failures)."""
        self.fetched_at: float | None = None
        """Monotonic time of the last good fetch."""
        self.failure: SourceFailure | None = None
        """The last failure, cleared by the next success."""
        self.refresh_requested = False
        """True from :meth:`refresh_data` until ``fetch`` reads it (and sets it back): the
        user asked to fetch again, so results shared through ``cockpit.collect.cache``
        should be fetched anew, not reused."""
        self._errors_in_row = 0
        self._timer: Any = None

    # -- to implement -----------------------------------------------------------------
    async def fetch(self, ctx: AppContext) -> Any:
        """Fetch the panel's data. No UI calls. Raise :class:`SourceError` on failure."""
        raise NotImplementedError

    def compose_body(self) -> ComposeResult:
        """Child widgets under the title/status line."""
        yield from ()

    def render_data(self, data: Any) -> None:
        """Update the children from ``data``. No I/O."""

    # -- machinery --------------------------------------------------------------------
    @property
    def lang(self) -> str:
        """UI language."""
        return self.ctx.lang

    def title_text(self) -> str:
        """Title in the UI language."""
        return self.TITLE.get(self.lang) or self.TITLE.get("en", self.PANEL_ID)

    def compose(self) -> ComposeResult:
        self.border_title = self.title_text()
        yield Static(t("panel.loading", self.lang), classes="panel--status", markup=False)
        yield from self.compose_body()

    def missing_sources(self) -> list[str]:
        """Names of required sources this run lacks."""
        return [s for s in self.SOURCES if not self.ctx.sources.has(s)]

    def on_mount(self) -> None:
        if not self._show_missing():
            self._start()

    def _show_missing(self) -> bool:
        """Say which required sources are missing, in place of the data; True if any is."""
        missing = self.missing_sources()
        if not missing:
            return False
        reasons = "; ".join(
            f"{name}: {self.ctx.sources.missing_text(name, self.lang, t('panel.not_configured', self.lang))}"
            for name in missing
        )
        self._set_status(t("panel.not_available", self.lang, sources=reasons), "-error")
        return True

    def refresh_data(self) -> None:
        """Fetch again now (F5, a panel's own refresh key): cancels a pending fetch and
        sets :attr:`refresh_requested`. A panel whose sources are missing says so again
        instead of fetching (``fetch`` may assume its sources exist)."""
        if self._show_missing():
            return
        from cockpit.collect.cache import forget_answers

        forget_answers(self.ctx)  # asked to fetch again: the server, not kept answers
        self.refresh_requested = True
        self._start()

    def _start(self) -> None:
        """Start a fetch now (cancels a pending one)."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        # A callable, not a coroutine object: a cancelled pending worker then leaves no
        # "coroutine was never awaited" behind. (Textual types the callable as returning
        # Coroutine[None, None, T].)
        self.run_worker(
            self._poll,  # type: ignore[arg-type]
            exclusive=True,
            group=f"panel-{self.PANEL_ID}",
            exit_on_error=False,
        )

    async def _poll(self) -> None:
        try:
            data = await asyncio.wait_for(self.fetch(self.ctx), timeout=self.FETCH_TIMEOUT)
        except SourceError as exc:
            self._on_failure(exc.failure)
        except TimeoutError:
            self._on_failure(
                SourceFailure(
                    source=",".join(self.SOURCES) or self.PANEL_ID,
                    kind=ErrorKind.TIMEOUT,
                    message=t("panel.fetch_timeout", self.lang, seconds=self.FETCH_TIMEOUT),
                )
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a plugin bug must not take the app down
            self._on_failure(
                SourceFailure(
                    source=self.PANEL_ID,
                    kind=ErrorKind.BAD_DATA,
                    message=f"{type(exc).__name__}: {exc}",
                )
            )
        else:
            self._on_success(data)
        self._arm()

    def _arm(self) -> None:
        if self.POLL_INTERVAL is None or not self.is_mounted:
            return
        delay = self.POLL_INTERVAL * (2 ** min(self._errors_in_row, 6))
        delay = min(delay, max(self.MAX_BACKOFF, self.POLL_INTERVAL))
        self._timer = self.set_timer(delay, self._tick)

    def _tick(self) -> None:
        self._timer = None
        # Skip work while hidden (another screen or a modal covers us); check again later.
        if not self.visible_now():
            self._timer = self.set_timer(self.POLL_INTERVAL or 1.0, self._tick)
            return
        # A callable, not a coroutine object: a cancelled pending worker then leaves no
        # "coroutine was never awaited" behind. (Textual types the callable as returning
        # Coroutine[None, None, T].)
        self.run_worker(
            self._poll,  # type: ignore[arg-type]
            exclusive=True,
            group=f"panel-{self.PANEL_ID}",
            exit_on_error=False,
        )

    def visible_now(self) -> bool:
        """True when the panel's screen is the active one and the panel is displayed."""
        try:
            return self.screen is self.app.screen and self.display
        except Exception:
            return False

    def _on_success(self, data: Any) -> None:
        self.data = data
        self.fetched_at = time.monotonic()
        self.failure = None
        self._errors_in_row = 0
        self.remove_class("-stale")
        self._set_status("", "")
        self.render_data(data)
        self.post_message(self.Fetched(self, data))

    def _on_failure(self, failure: SourceFailure) -> None:
        self.failure = failure
        self._errors_in_row += 1
        title = t(f"error.{failure.kind.value}", self.lang)
        text = f"⚠ {title}: {failure.message}"
        if hint := failure.hint_in(self.lang):
            text += f"\n  {hint}"
        if self.data is not None and self.fetched_at is not None:
            age = int(time.monotonic() - self.fetched_at)
            text += "\n  " + t("panel.stale", self.lang, age=age)
        # The last good data stays on screen, marked: it is not what the source says now.
        self.set_class(self.data is not None, "-stale")
        self._set_status(text, "-error")
        self.post_message(self.Failed(self, failure))

    def show_worker_error(self, text: str) -> None:
        """An unexpected failure outside :meth:`fetch` (its own errors are failures of
        the source), on the panel's status line."""
        self._set_status(f"⚠ {text}", "-error")

    def _set_status(self, text: str, cls: str) -> None:
        try:
            status = self.query_one(".panel--status", Static)
        except Exception:
            return
        status.update(text)
        status.display = bool(text)
        status.set_class(cls == "-error", "-error")
        status.set_class(cls == "-stale", "-stale")
