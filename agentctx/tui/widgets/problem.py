"""The screen shown instead of the panes when the store cannot be read."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Center, Middle
from textual.screen import Screen
from textual.widgets import Footer, Static

from agentctx.tui.widgets.keybar import KeyBar


class ProblemScreen(Screen[None]):
    """What is wrong with the store, and what to do; ``q`` quits."""

    DEFAULT_CSS = """
    ProblemScreen { align: center middle; }
    ProblemScreen #problem { width: 70; max-width: 100%; border: round $error; padding: 1 2; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "app.quit", "Quit"), Binding("escape", "app.quit", "Quit", show=False)]

    def __init__(self, message: str) -> None:
        super().__init__()
        self.message = message

    def compose(self) -> ComposeResult:
        with Middle(), Center():
            yield Static(f"[b]agentctx cannot open the store[/b]\n\n{self.message}",
                         id="problem", markup=True)
        yield Footer()
        yield KeyBar(tail=())  # the dialog's own keys
