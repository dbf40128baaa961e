"""The App: panes switched by number keys, a status line, help and the command palette.

Thin on purpose: each pane lives in its own module and reads the store itself; the App owns the
one :class:`~agentctx.store.Store` connection (through :class:`AppState`), polls
``Store.data_version`` for writes from other processes (hooks, extraction) and tells the panes.
:func:`make_app` builds it with injected state for tests; :func:`run_tui` is ``agentctx tui``.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path, PurePath
from typing import ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import ContentSwitcher, Footer, Static

from agentctx import config
from agentctx.store import Store, StoreError
from agentctx.store import records as rec
from agentctx.tui.appstate import AppState
from agentctx.tui.cells import home_path, parse_now
from agentctx.tui.chains_pane import ChainsPane
from agentctx.tui.commands import AgentctxCommands
from agentctx.tui.drift_pane import DriftPane
from agentctx.tui.help import HelpScreen
from agentctx.tui.live_pane import LivePane
from agentctx.tui.messages import ProjectChosen, ShowChain
from agentctx.tui.pane import Pane
from agentctx.tui.preview_pane import PreviewPane
from agentctx.tui.profile_pane import ProfilePane
from agentctx.tui.projects_pane import ProjectsPane
from agentctx.tui.records_pane import RecordsPane
from agentctx.tui.sessions_pane import SessionsPane
from agentctx.tui.widgets.problem import ProblemScreen

HERE = Path(__file__).resolve().parent
NOW_ENV = "AGENTCTX_NOW"
PANES: tuple[type[Pane], ...] = (ProjectsPane, RecordsPane, ChainsPane, ProfilePane,
                                 SessionsPane, LivePane, DriftPane, PreviewPane)


class TabBar(Static):
    """The pane names with their keys; the one on screen highlighted."""

    def __init__(self) -> None:
        super().__init__(id="tabbar")
        self.active = PANES[1].PANE_ID

    def render(self) -> Text:
        text = Text(" ", no_wrap=True, overflow="ellipsis")
        for pane in PANES:
            text.append(f"{pane.KEY} {pane.PANE_NAME}",
                        style="reverse bold" if self.active == pane.PANE_ID else "")
            text.append(" ")
        return text


class StatusLine(Static):
    """Project, record count, store path and vector backend."""


class AgentctxApp(App[None]):
    """agentctx's context browser."""

    TITLE = "agentctx"
    CSS_PATH: ClassVar[list[str | PurePath]] = [
        HERE / "agentctx.tcss", *(HERE / f"{pane.__module__.rsplit('.', 1)[-1]}.tcss"
                                  for pane in PANES)]
    COMMANDS = App.COMMANDS | {AgentctxCommands}
    ENABLE_COMMAND_PALETTE = True
    BINDINGS: ClassVar[list[BindingType]] = [
        *(Binding(pane.KEY, f"show_pane('{pane.PANE_ID}')", pane.PANE_NAME, show=False)
          for pane in PANES),
        Binding("r", "refresh_pane", "Refresh", show=False),
        Binding("question_mark", "help", "Help"),
        Binding("q", "quit", "Quit"),
        Binding("escape", "leave", "Back", show=False),
    ]

    def __init__(self, state: AppState | None, *, problem: str | None = None,
                 poll_ms: int = 1000) -> None:
        super().__init__()
        self._state = state
        self.problem = problem
        self.poll_ms = poll_ms
        self.current_pane = PANES[1].PANE_ID
        self._data_version = -1
        self._backend = "…"

    @property
    def state(self) -> AppState:
        """The shared state (only when the store opened)."""
        assert self._state is not None
        return self._state

    def compose(self) -> ComposeResult:
        if self._state is None:
            return
        yield TabBar()
        with ContentSwitcher(initial=self.current_pane, id="panes"):
            for pane in PANES:
                yield pane(id=pane.PANE_ID)
        yield StatusLine(id="status")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        if self._state is None:
            self.push_screen(ProblemScreen(self.problem or "the store could not be opened"))
            return
        self._data_version = self.state.db.data_version()
        self.show_pane(self.current_pane)
        self.set_interval(self.poll_ms / 1000, self.poll_store)
        self.call_after_refresh(self._find_backend)

    def on_unmount(self) -> None:
        if self._state is not None:
            self._state.db.close()

    # ---------------------------------------------------------------- panes

    def pane(self, pane_id: str) -> Pane:
        """The pane with this id."""
        return self.query_one(f"#{pane_id}", Pane)

    @property
    def panes(self) -> list[Pane]:
        """Every pane, in key order."""
        return [self.pane(p.PANE_ID) for p in PANES]

    def show_pane(self, pane_id: str) -> None:
        """Put a pane on screen, read it, and focus its main widget."""
        self.current_pane = pane_id
        self.query_one("#panes", ContentSwitcher).current = pane_id
        bar = self.query_one(TabBar)
        bar.active = pane_id
        bar.refresh()
        pane = self.pane(pane_id)
        pane.reload()
        pane.focus_main()
        self.update_status()

    def action_show_pane(self, pane_id: str) -> None:
        """Switch to a pane (keys 1-8)."""
        self.show_pane(pane_id)

    def action_refresh_pane(self) -> None:
        """Read the pane on screen from the store again (``r``)."""
        self.pane(self.current_pane).reload()
        self.update_status()
        self.notify("refreshed", timeout=1.5)

    def action_help(self) -> None:
        """Open the help screen (``?``)."""
        self.push_screen(HelpScreen(self.pane(self.current_pane)))

    def action_leave(self) -> None:
        """``escape`` where nothing else took it: back to the pane's main widget."""
        self.pane(self.current_pane).focus_main()

    def on_project_chosen(self, message: ProjectChosen) -> None:
        from agentctx.store import projects as proj

        self.state.project = proj.get(self.state.db, message.project_id)
        for pane in self.panes:
            pane.project_changed()
        self.update_status()
        self.notify(f"project: {self.state.project.name}", timeout=2)

    def on_show_chain(self, message: ShowChain) -> None:
        self.show_pane(ChainsPane.PANE_ID)
        self.query_one(ChainsPane).show_chain_of(message.record_id)

    # ---------------------------------------------------------------- store

    def poll_store(self) -> None:
        """Every ``tui_poll_ms``: one ``PRAGMA data_version``; the panes read only when another
        process committed since the last look."""
        try:
            version = self.state.db.data_version()
        except StoreError as exc:
            self.notify(str(exc), severity="error")
            return
        except Exception as exc:  # a locked or damaged file: say so, keep the app up
            self.notify(f"cannot read the store: {exc}", severity="error")
            return
        if version == self._data_version:
            return
        self._data_version = version
        for pane in self.panes:
            pane.store_changed()
        self.update_status()

    def _find_backend(self) -> None:
        from agentctx.store import vectors

        try:
            self._backend = vectors.backend(self.state.db)[0]
        except Exception:  # the status line is informative only
            self._backend = "unknown"
        self.update_status()

    def update_status(self) -> None:
        """Project, its current records, the store file and the vector backend."""
        state = self.state
        project = state.project
        if project is None:
            where = "no project yet"
        else:
            count = rec.count_records(state.db, project_id=project.id)
            where = f"{project.name} · {count:,} records"
        self.query_one(StatusLine).update(
            Text(f" {where} · {home_path(state.db_path)} · vectors: {self._backend}",
                 no_wrap=True, overflow="ellipsis"))


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
