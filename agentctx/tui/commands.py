"""The command palette (``ctrl+p``): every action once, with its key — the focused pane's
first, then the app's, the panes, and the other panes' actions (the pane is shown first, then
the action runs on it)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, NamedTuple, Protocol, runtime_checkable

from textual.command import DiscoveryHit, Hit, Hits, Provider

from agentctx.tui.actions import APP_ACTIONS, palette_entries
from agentctx.tui.registry import PANES


@runtime_checkable
class Host(Protocol):
    """What the palette needs of the App: the pane on screen, a way to show another one, and
    Textual's ``run_action``."""

    @property
    def current_pane(self) -> str:
        """The id of the pane on screen."""

    def show_pane(self, pane_id: str) -> Awaitable[object]:
        """Put a pane on screen."""

    def run_action(self, action: str, default_namespace: Any = None) -> Awaitable[bool]:
        """Run an action (on ``default_namespace``)."""


class Command(NamedTuple):
    """One palette entry."""

    name: str
    help: str
    run: Callable[[], Any]


def commands(app: Host) -> list[Command]:
    """The palette's entries, in the order it lists them."""
    found: list[Command] = []
    listed: set[str] = set()
    current = next(s for s in PANES if s.pane_id == app.current_pane)
    for action in palette_entries(current.load().ACTIONS):
        listed.add(action.action)
        found.append(Command(f"{action.title} ({action.keys})", action.help,
                             partial(_run_on_pane, app, current.pane_id, action.action)))
    for action in palette_entries(APP_ACTIONS):
        found.append(Command(f"{action.title} ({action.keys})", action.help,
                             partial(app.run_action, action.action)))
    for spec in PANES:
        found.append(Command(f"Go to {spec.name} ({spec.key})", f"Show the {spec.name} pane",
                             partial(app.show_pane, spec.pane_id)))
    for spec in PANES:
        if spec is current:
            continue
        for action in palette_entries(spec.load().ACTIONS):
            if action.action in listed:
                continue  # the same action on another pane: listed once
            listed.add(action.action)
            found.append(Command(f"{spec.name}: {action.title} ({spec.key} {action.keys})",
                                 action.help,
                                 partial(_run_on_pane, app, spec.pane_id, action.action)))
    return found


class AgentctxCommands(Provider):
    """The entries of :func:`commands`."""

    def _commands(self) -> list[Command]:
        app = self.app
        assert isinstance(app, Host)
        return commands(app)

    async def discover(self) -> Hits:
        for command in self._commands():
            yield DiscoveryHit(command.name, command.run, help=command.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in self._commands():
            score = matcher.match(command.name)
            if score > 0:
                yield Hit(score, matcher.highlight(command.name), command.run,
                          help=command.help)


async def _run_on_pane(app: Host, pane_id: str, action: str) -> None:
    pane = await app.show_pane(pane_id)
    await app.run_action(action, pane)
