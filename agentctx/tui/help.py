"""The help screen (``?``): the keys of the pane on screen, one line each, then the app's keys
on one line, then the other panes' keys below (scroll) — all generated from the action tables."""

from __future__ import annotations

import textwrap
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from agentctx.tui.actions import Action, help_rows
from agentctx.tui.editing import RecordEditing
from agentctx.tui.pane import Pane
from agentctx.tui.registry import PANES
from agentctx.tui.widgets.keybar import KEY_STYLE, KeyBar

FORM_KEYS = (("^s", "save"), ("esc", "cancel"), ("tab", "next field"))


def _rows(text: Text, rows: list[tuple[str, str]], key_width: int, width: int) -> None:
    """One row per key: the key right-aligned, what it does wrapped under itself (a hanging
    indent, so the keys stay a column a reader can scan)."""
    room = max(20, width - key_width - 2)
    for key, does in rows:
        lines = textwrap.wrap(does, room) or [""]
        text.append(f" {key:>{key_width}} ", style=KEY_STYLE)
        text.append(lines[0] + "\n")
        for line in lines[1:]:
            text.append(" " * (key_width + 2) + line + "\n")


def help_text(current: type[Pane], app_actions: tuple[Action, ...],
              width: int = 1000) -> Text:
    """The help, ``width`` columns wide: the keys of the pane on screen, the app's keys on one
    line, then every other pane's keys."""
    spec = current.spec()
    text = Text()
    text.append(f"{spec.key} {spec.name}\n", style="bold")
    rows = help_rows(current.ACTIONS)
    if issubclass(current, RecordEditing):
        rows.append(("forms", " · ".join(f"{k} {d}" for k, d in FORM_KEYS)))
    _rows(text, rows, max((len(k) for k, _ in rows), default=1), width)
    text.append("\nEverywhere ", style="bold")
    everywhere = [("1-8", "panes"), *((a.keys, a.title.lower()) for a in app_actions)]
    for key, does in everywhere:
        text.append(f" {key} ", style=KEY_STYLE)
        text.append(does)
    text.append("\n")
    for other in PANES:
        if other.name == spec.name:
            continue
        cls = other.load()
        text.append(f"\n{other.key} {other.name}\n", style="bold")
        others = help_rows(cls.ACTIONS)
        _rows(text, others, max((len(k) for k, _ in others), default=1), width)
    return text


class HelpScreen(ModalScreen[None]):
    """The keys; ``escape``, ``q`` or ``?`` close it."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 100; max-width: 100%; height: 1fr; max-height: 100%;
                                  border: round $accent; background: $surface;
                                  padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "close", "Close")]

    def __init__(self, current: Pane, app_actions: tuple[Action, ...]) -> None:
        super().__init__()
        self.current = current
        self.app_actions = app_actions

    def compose(self) -> ComposeResult:
        with VerticalScroll() as box:
            box.border_title = "keys (scroll for the other panes)"
            # The box is at most 100 columns; less its border, padding and scrollbar.
            width = min(100, self.app.size.width or 80) - 6
            yield Static(help_text(type(self.current), self.app_actions, width),
                         id="help-text")
        yield KeyBar(tail=())

    def action_close(self) -> None:
        """Close the help."""
        self.dismiss(None)
