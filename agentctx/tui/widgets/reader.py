"""A dialog that shows one text in full (Markdown), scrolled; ``escape`` or ``q`` closes it."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

from agentctx.tui.widgets.keybar import KeyBar


class ReaderScreen(ModalScreen[None]):
    """One text in full."""

    DEFAULT_CSS = """
    ReaderScreen { align: center middle; }
    ReaderScreen > VerticalScroll { width: 100; max-width: 100%; height: auto;
                                    max-height: 90%; border: round $accent;
                                    background: $surface; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,enter", "close", "Close")]

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Markdown(self.text)
        yield KeyBar(tail=())  # the dialog's own keys

    def action_close(self) -> None:
        """Close the dialog."""
        self.dismiss(None)
