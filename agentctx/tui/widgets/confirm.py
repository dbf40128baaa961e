"""A yes/no dialog: nothing is written until the user says yes."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from agentctx.tui.widgets.keybar import KeyBar


class ConfirmScreen(ModalScreen[bool]):
    """Asks a question; dismisses with ``True`` on ``y``/Yes, ``False`` on ``n``/``escape``."""

    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical { width: 64; max-width: 100%; height: auto; border: thick $warning;
                               background: $surface; padding: 1 2; }
    ConfirmScreen #buttons { height: auto; align-horizontal: right; margin-top: 1; }
    ConfirmScreen Button { margin-left: 2; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes"), Binding("n", "answer(False)", "No"),
        Binding("escape", "answer(False)", "Cancel")]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question, id="question")
            with Horizontal(id="buttons"):
                yield Button("No", id="no")
                yield Button("Yes", id="yes", variant="warning")
        yield KeyBar(tail=())  # the dialog's own keys

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        """Close the dialog with the answer."""
        self.dismiss(answer)
