"""The command palette (``ctrl+p``): every action once, with its key — the focused pane's
first, then the app's, the panes, and the other panes' actions (the pane is shown first, then
the action runs on it)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple

from textual.command import DiscoveryHit, Hit, Hits, Provider

from agentctx.tui.actions import palette_entries
from agentctx.tui.registry import PANES

if TYPE_CHECKING:
    from agentctx.tui.app import AgentctxApp


class Command(NamedTuple):
    """One palette entry."""

    name: str
    help: str
    run: Callable[[], Any]


def commands(app: AgentctxApp) -> list[Command]:
    """The palette's entries, in the order it lists them."""
    from agentctx.tui.app import APP_ACTIONS  # late: tui.app imports this module

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
        from agentctx.tui.app import AgentctxApp  # late: tui.app imports this module

        app = self.app
        assert isinstance(app, AgentctxApp)
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


async def _run_on_pane(app: AgentctxApp, pane_id: str, action: str) -> None:
    pane = await app.show_pane(pane_id)
    await app.run_action(action, pane)
