"""A one-field form (as-of date, and the like): enter accepts, escape cancels."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from agentctx.tui.widgets.keybar import KeyBar


class AskScreen(ModalScreen[str | None]):
    """Asks for one value; dismisses with the text (``""`` clears) or ``None`` when cancelled.
    ``check`` returns an error message for a value it refuses (the form then stays open)."""

    DEFAULT_CSS = """
    AskScreen { align: center middle; }
    AskScreen > Vertical { width: 64; max-width: 100%; height: auto; border: thick $accent;
                           background: $surface; padding: 1 2; }
    AskScreen #error { color: $error; height: auto; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, question: str, value: str = "", placeholder: str = "",
                 check: Callable[[str], str | None] | None = None) -> None:
        super().__init__()
        self.question = question
        self.value = value
        self.placeholder = placeholder
        self.check = check

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question)
            yield Input(self.value, placeholder=self.placeholder, id="answer")
            yield Static("", id="error")
        yield KeyBar(tail=())  # the dialog's own keys

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        problem = self.check(text) if (self.check and text) else None
        if problem:
            self.query_one("#error", Static).update(problem)
            return
        self.dismiss(text)

    def action_cancel(self) -> None:
        """Close without an answer."""
        self.dismiss(None)
