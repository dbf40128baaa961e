"""The records pane's filter form (``f``): types, confidences, pinned, superseded."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, RadioButton, RadioSet, SelectionList, Static

from agentctx.store.models import CONFIDENCES, RECORD_TYPES
from agentctx.tui.listing import STATES, Filters
from agentctx.tui.widgets.keybar import KeyBar


class FilterScreen(ModalScreen[Filters | None]):
    """Choose the filters; ``enter``/Apply keeps them, ``escape`` cancels."""

    DEFAULT_CSS = """
    FilterScreen { align: center middle; }
    FilterScreen > Vertical { width: 72; max-width: 100%; height: auto; max-height: 100%;
                              border: thick $accent; background: $surface; padding: 0 1; }
    FilterScreen Horizontal { height: auto; }
    FilterScreen SelectionList { width: 1fr; height: auto; max-height: 9; }
    FilterScreen RadioSet { width: 1fr; }
    FilterScreen #filter-buttons { align-horizontal: right; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel"),
                                             Binding("ctrl+s", "apply", "Apply")]

    def __init__(self, current: Filters) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Filter records (space toggles, ctrl+s applies)")
            with Horizontal():
                yield SelectionList[str](*((t, t, t in self.current.types) for t in RECORD_TYPES),
                                         id="types")
                yield SelectionList[str](*((c, c, c in self.current.confidences)
                                           for c in CONFIDENCES), id="confidences")
            with Horizontal():
                with RadioSet(id="state"):
                    for state in STATES:
                        yield RadioButton(state, value=state == self.current.state)
                yield Checkbox("pinned only", self.current.pinned_only, id="pinned")
            with Horizontal(id="filter-buttons"):
                yield Button("Clear", id="clear")
                yield Button("Apply", id="apply", variant="primary")
        yield KeyBar(tail=())  # the dialog's own keys

    def chosen(self) -> Filters:
        """The filters as the form shows them."""
        radio = self.query_one(RadioSet)
        index = radio.pressed_index if radio.pressed_index >= 0 else 0
        return Filters(tuple(self.query_one("#types", SelectionList).selected),
                       tuple(self.query_one("#confidences", SelectionList).selected),
                       self.query_one(Checkbox).value, STATES[index])

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(Filters() if event.button.id == "clear" else self.chosen())

    def action_apply(self) -> None:
        """Keep the filters."""
        self.dismiss(self.chosen())

    def action_cancel(self) -> None:
        """Leave the filters as they were."""
        self.dismiss(None)
