"""The App: panes switched by number keys, a status line, help and the command palette.

Thin on purpose: each pane lives in its own module and reads the store itself; the App owns the
one :class:`~agentctx.store.Store` connection (through :class:`AppState`), polls
``Store.data_version`` for writes from other processes (hooks, extraction) and tells the panes.
:func:`make_app` builds it with injected state for tests; :func:`run_tui` is ``agentctx tui``.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from datetime import datetime
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.css.query import NoMatches
from textual.screen import ModalScreen
from textual.widgets import ContentSwitcher, Input, Static, TextArea

from agentctx.core import config
from agentctx.store import Store, StoreError
from agentctx.store import projects as proj
from agentctx.tui.actions import APP_ACTIONS, bindings
from agentctx.tui.appstate import AppState, guarded
from agentctx.tui.cells import home_path, parse_now, plural
from agentctx.tui.messages import ProjectChosen, ShowChain, Wrote
from agentctx.tui.pane import Pane
from agentctx.tui.registry import CHAINS, FIRST, PANES, spec
from agentctx.tui.widgets.keybar import KeyBar

if TYPE_CHECKING:
    from textual.command import Provider

HERE = Path(__file__).resolve().parent
NOW_ENV = "AGENTCTX_NOW"


def _commands() -> type[Provider]:
    """The palette's provider, imported when the palette first opens."""
    from agentctx.tui.commands import AgentctxCommands  # late: the palette loads on first use

    return AgentctxCommands


class TabBar(Static):
    """The pane names with their keys; the one on screen highlighted."""

    def __init__(self) -> None:
        super().__init__(id="tabbar")
        self.active = FIRST

    def render(self) -> Text:
        text = Text(" ", no_wrap=True, overflow="ellipsis")
        for pane in PANES:
            text.append(f"{pane.key} {pane.name}",
                        style="reverse bold" if self.active == pane.pane_id else "")
            text.append(" ")
        return text


class StatusLine(Static):
    """Project, record count, store path and vector backend."""


class AgentctxApp(App[None]):
    """agentctx's context browser."""

    TITLE = "agentctx"
    CSS_PATH: ClassVar[list[str | PurePath]] = [HERE / "agentctx.tcss"]
    # Ours only (no system commands): each action once, with its key.
    COMMANDS: ClassVar[set[type[Provider] | Callable[[], type[Provider]]]] = {_commands}
    ENABLE_COMMAND_PALETTE = True
    BINDINGS: ClassVar[list[BindingType]] = [
        # Priority: the App switches panes before it reads the next key, so a key typed right
        # after a number reaches the new pane (not the one it leaves); see check_action.
        *(Binding(pane.key, f"show_pane('{pane.pane_id}')", pane.name, show=False,
                  priority=True) for pane in PANES),
        *bindings(APP_ACTIONS),
    ]

    def __init__(self, state: AppState | None, *, problem: str | None = None,
                 poll_ms: int = 1000) -> None:
        super().__init__()
        self._state = state
        self.problem = problem
        self.poll_ms = poll_ms
        self._data_version = -1
        self._backend = "…"
        self.web_url: str | None = None
        self._stop_web: Callable[[], None] | None = None

    @property
    def state(self) -> AppState:
        """The shared state (only when the store opened)."""
        assert self._state is not None
        return self._state

    @property
    def current_pane(self) -> str:
        """The id of the pane on screen."""
        return self._state.current_pane if self._state is not None else FIRST

    def compose(self) -> ComposeResult:
        if self._state is None:
            return
        yield TabBar()
        with ContentSwitcher(initial=self.current_pane, id="panes"):
            yield spec(FIRST).load()(self.state, id=FIRST)
        yield StatusLine(id="status")
        yield KeyBar(id="keybar")

    def on_mount(self) -> None:
        if self._state is None:
            from agentctx.tui.widgets.problem import ProblemScreen  # late: 2 ms, on a problem

            self.push_screen(ProblemScreen(self.problem or "the store could not be opened"))
            return
        self._data_version = self.state.db.data_version()
        self._shown(self.pane(self.current_pane))
        self.set_interval(self.poll_ms / 1000, self.poll_store)
        from agentctx.store.stats import has_embeddings  # late: after the first paint

        if not has_embeddings(self.state.db):
            self._backend_found("none")  # no embeddings yet: nothing to load to know that
        else:
            self.call_after_refresh(self.find_backend)

    def on_resize(self) -> None:
        if self._state is not None:
            self.update_status()

    def on_unmount(self) -> None:
        if self._stop_web is not None:
            self._stop_web()
            self._stop_web = None
        if self._state is not None:
            self._state.close()

    # ---------------------------------------------------------------- panes

    def pane(self, pane_id: str) -> Pane:
        """The pane with this id (mounted: see :meth:`show_pane`)."""
        return self.query_one(f"#{pane_id}", Pane)

    @property
    def panes(self) -> list[Pane]:
        """The panes shown so far (a pane is mounted when it is first shown)."""
        return list(self.query_one("#panes", ContentSwitcher).query_children(Pane))

    async def show_pane(self, pane_id: str) -> Pane:
        """Put a pane on screen (mounting it the first time), read it, focus its main widget."""
        switcher = self.query_one("#panes", ContentSwitcher)
        if not switcher.query_children(f"#{pane_id}"):
            await switcher.mount(spec(pane_id).load()(self.state, id=pane_id))
        self.state.current_pane = pane_id
        switcher.current = pane_id
        bar = self.query_one(TabBar)
        bar.active = pane_id
        bar.refresh()
        pane = self.pane(pane_id)
        self._shown(pane)
        return pane

    def _shown(self, pane: Pane) -> None:
        self.guarded(pane.reload)
        pane.focus_main()
        self.call_after_refresh(self.guarded, self.update_status)

    def guarded(self, read: Callable[[], None]) -> None:
        """Run a read of the store; a locked or damaged store becomes a notification, never a
        traceback (the app stays up and ``r`` tries again)."""
        guarded(read, self.notify)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """A number key switches panes unless a field takes it as text or a dialog is open."""
        if action == "show_pane":
            return (self._state is not None and not isinstance(self.screen, ModalScreen)
                    and not isinstance(self.screen.focused, Input | TextArea))
        return True

    async def action_show_pane(self, pane_id: str) -> None:
        """Switch to a pane (keys 1-8)."""
        await self.show_pane(pane_id)

    def action_refresh_pane(self) -> None:
        """Read the pane on screen from the store again (``r``)."""
        self.guarded(self.pane(self.current_pane).reload)
        self.guarded(self.update_status)
        self.notify("refreshed", timeout=1.5)

    def action_web(self) -> None:
        """Start the local web view on this store (``w``); it stops when the app exits."""
        if self.web_url is None:
            from agentctx.web.server import WebError, start  # late: 15 ms, on w

            project = self.state.project
            try:
                launched = start(self.state.home, project.id if project else None, None)
            except (WebError, OSError) as exc:
                self.notify(f"cannot start the web view: {exc}", severity="error", timeout=6)
                return
            self.web_url, self._stop_web = launched.url, launched.stop
        self.notify(f"web view: {self.web_url} (stops when you quit)", timeout=8)
        self.update_status()

    def action_help(self) -> None:
        """Open the help screen (``?``)."""
        from agentctx.tui.help import HelpScreen  # late: help loads on first use

        self.push_screen(HelpScreen(self.pane(self.current_pane), APP_ACTIONS))

    def action_leave(self) -> None:
        """``escape`` where nothing else took it: out of a field (to the pane's table), else
        back to the pane's main widget."""
        pane = self.pane(self.current_pane)
        if isinstance(self.screen.focused, Input):
            pane.leave_field()
        else:
            pane.focus_main()

    def on_project_chosen(self, message: ProjectChosen) -> None:
        self.state.project = proj.get(self.state.db, message.project_id)
        for pane in self.panes:
            self.guarded(pane.project_changed)
        self.guarded(self.update_status)
        self.notify(f"project: {self.state.project.name}", timeout=2)

    async def on_show_chain(self, message: ShowChain) -> None:
        pane = await self.show_pane(CHAINS)
        pane.jump_to(message.record_id)

    def on_wrote(self, message: Wrote) -> None:
        self.guarded(self.update_status)

    # ---------------------------------------------------------------- store

    def poll_store(self) -> None:
        """Every ``tui_poll_ms``: one ``PRAGMA data_version``; the panes read only when another
        process committed since the last look."""
        try:
            version = self.state.db.data_version()
        except sqlite3.Error as exc:
            self.notify(f"cannot read the store: {exc}", severity="error")
            return
        if version == self._data_version:
            return
        try:
            panes = self.panes
        except NoMatches:  # the app is closing: its panes are already gone
            return
        self._data_version = version
        for pane in panes:
            self.guarded(pane.store_changed)
        self.guarded(self.update_status)

    @work(thread=True, group="backend")
    def find_backend(self) -> None:
        """Which vector backend the store uses, for the status line (in a thread: it may load
        sqlite-vec and numpy, which the first paint need not wait for)."""
        from agentctx.store import vectors  # late: after the first paint

        try:
            with self.state.worker_store() as db:
                backend = vectors.backend(db)[0]
        except Exception:  # the status line is informative only
            backend = "unknown"
        self.call_from_thread(self._backend_found, backend)

    def _backend_found(self, backend: str) -> None:
        self._backend = backend
        self.update_status()

    def update_status(self) -> None:
        """Project, its current records, the store file and the vector backend."""
        state = self.state
        project = state.project
        if project is None:
            where = "no project yet"
        else:
            where = f"{project.name} · {plural(state.current_count(), 'record')}"
        tail = f" · vectors: {self._backend}" + (f" · web {self.web_url}" if self.web_url else "")
        head = f" {where} · "
        room = (self.size.width or 80) - len(head) - len(tail)
        path = home_path(state.db_path)
        if len(path) > room:  # keep the file's name and the end of its folder
            path = "…" + path[len(path) - max(8, room - 1):]
        self.query_one(StatusLine).update(Text(head + path + tail, no_wrap=True,
                                               overflow="ellipsis"))


def make_app(*, home: Path | None = None, project: str | None = None, now: datetime | None = None,
             poll_ms: int | None = None) -> AgentctxApp:
    """The browser over the store in ``home`` (default: ``AGENTCTX_HOME``), on ``project``
    (id, id prefix or name; default: the current folder's project, else the most recently
    active one), with the clock fixed at ``now`` (default: ``AGENTCTX_NOW`` when set) and the
    store polled every ``poll_ms`` (default: the ``tui_poll_ms`` knob).

    Never raises for a missing, damaged, locked or too-new store: the app then opens on a
    screen that says what is wrong.
    """
    try:
        cfg = config.Config.load()
        interval = poll_ms if poll_ms is not None else cfg.get_int("tui_poll_ms")
        now = now or parse_now(os.environ.get(NOW_ENV))
    except (config.ConfigError, ValueError) as exc:
        return AgentctxApp(None, problem=str(exc))
    folder = home or config.home()
    path = folder / config.DB_NAME
    if not path.exists():
        return AgentctxApp(None, problem=f"no agentctx store at {home_path(path)} yet — run "
                                         "`agentctx init`, then use Claude Code "
                                         "(or try `agentctx demo`)", poll_ms=interval)
    try:
        db = Store.open(path, busy_timeout_ms=cfg.get_int("busy_timeout_ms"))
    except StoreError as exc:
        return AgentctxApp(None, problem=str(exc), poll_ms=interval)
    state = AppState(db, folder, now=now, cfg=cfg)
    try:
        state.choose_default_project(project, os.getcwd())
    except StoreError as exc:
        db.close()
        return AgentctxApp(None, problem=str(exc), poll_ms=interval)
    except Exception as exc:  # a damaged file shows when read, not when opened
        db.close()
        return AgentctxApp(None, problem=f"cannot read {home_path(path)}: {exc}",
                           poll_ms=interval)
    return AgentctxApp(state, poll_ms=interval)


def run_tui(*, project: str | None = None, home: Path | None = None) -> None:
    """Run the browser full-screen until the user quits (``agentctx tui``)."""
    make_app(home=home, project=project).run()
