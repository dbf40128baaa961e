"""The command palette (``ctrl+p``): every pane, and every pane's actions."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from agentctx.tui.app import AgentctxApp


class AgentctxCommands(Provider):
    """"Go to <pane>" for each pane, the app's actions, and the actions each pane lists in its
    ``PALETTE`` (the pane is shown first, then the action runs on it)."""

    def _commands(self) -> list[tuple[str, str, object]]:
        from agentctx.tui.app import AgentctxApp
        from agentctx.tui.registry import PANES

        app = self.app
        assert isinstance(app, AgentctxApp)
        found: list[tuple[str, str, object]] = []
        for spec in PANES:
            found.append((f"Go to {spec.name} ({spec.key})", f"Show the {spec.name} pane",
                          partial(app.show_pane, spec.pane_id)))
        found += [("Refresh (r)", "Read the pane on screen from the store again",
                   app.action_refresh_pane),
                  ("Help (?)", "Every key of every pane", app.action_help),
                  ("Web view (w)", "Start the local web view on this store",
                   app.action_web),
                  ("Quit (q)", "Leave agentctx", app.exit)]
        for spec in PANES:
            for action in spec.load().PALETTE:
                found.append((f"{spec.name}: {action.name}", action.help,
                              partial(_run_on_pane, app, spec.pane_id, action.action)))
        return found

    async def discover(self) -> Hits:
        for name, help_text, callback in self._commands():
            yield DiscoveryHit(name, callback, help=help_text)  # type: ignore[arg-type]

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback,  # type: ignore[arg-type]
                          help=help_text)


async def _run_on_pane(app: AgentctxApp, pane_id: str, action: str) -> None:
    pane = await app.show_pane(pane_id)
    await app.run_action(action, pane)
