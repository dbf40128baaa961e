"""The help screen (``?``): every pane's keys, the pane on screen first."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

if TYPE_CHECKING:
    from agentctx.tui.pane import Pane

GLOBAL_KEYS = (
    ("1-8", "switch pane (Projects, Records, Chains, Profile, Sessions, Live, Drift, Preview)"),
    ("r", "refresh the pane from the store"),
    ("w", "start the local web view (its address shows in the status line; it stops on quit)"),
    ("?", "this help"),
    ("ctrl+p", "command palette: every pane and action"),
    ("escape", "leave a field, close a panel or dialog"),
    ("q", "quit"),
)


def keys_of(pane: type[Pane] | Pane) -> list[tuple[str, str]]:
    """The keys a pane (and the widgets it declares them on) answers to, with their help."""
    found = []
    for binding in getattr(pane, "HELP_KEYS", ()):
        found.append(binding)
    return found


def help_markdown(current: Pane) -> str:
    """The help text: global keys, then the pane on screen, then the others."""
    from agentctx.tui.registry import PANES

    lines = ["# agentctx keys", "", "| key | does |", "|---|---|"]
    lines += [f"| `{k}` | {d} |" for k, d in GLOBAL_KEYS]
    classes = [spec.load() for spec in PANES]
    ordered = [type(current), *(p for p in classes if p is not type(current))]
    for pane in ordered:
        keys = keys_of(pane)
        if not keys:
            continue
        lines += ["", f"## {pane.KEY} {pane.PANE_NAME}", "", "| key | does |", "|---|---|"]
        lines += [f"| `{k}` | {d} |" for k, d in keys]
    return "\n".join(lines)


class HelpScreen(ModalScreen[None]):
    """Keys of the whole app; ``escape``, ``q`` or ``?`` close it."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90; max-width: 100%; height: 90%;
                                  border: round $accent; background: $surface; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "close", "Close")]

    def __init__(self, current: Pane) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Markdown(help_markdown(self.current))

    def action_close(self) -> None:
        """Close the help."""
        self.dismiss(None)
