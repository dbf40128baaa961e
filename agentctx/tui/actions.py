"""One table of actions per pane (and one for the app): the key bindings, the help rows and the
command palette's entries are all generated from it, so a key is written down once.

An :class:`Action` names its key (Textual's key name: ``slash``, ``plus``, ``n``), the action it
runs, a short label for the footer, a name and a line of help for the help screen and the palette.
"""

from __future__ import annotations

from typing import NamedTuple

from textual.binding import Binding

# How a key is written for a person (the footer, the help, the palette).
KEY_NAMES = {"slash": "/", "plus": "+", "minus": "-", "question_mark": "?", "escape": "esc",
             "ctrl+s": "^s", "ctrl+p": "^p", "space": "space", "enter": "enter", "tab": "tab"}


def key_display(key: str) -> str:
    """``slash`` → ``/``, ``escape,q`` → ``esc/q``."""
    return "/".join(KEY_NAMES.get(k, k) for k in key.split(","))


class Action(NamedTuple):
    """One thing a pane does on a key.

    ``footer``: shown in the key bar when the pane has focus; ``palette``: offered in the
    command palette; ``bound``: ``False`` for a key a widget handles itself (listed in the help
    only, such as ``tab`` between tables).
    """

    key: str
    action: str
    label: str
    help: str
    name: str = ""
    footer: bool = True
    palette: bool = True
    priority: bool = False
    bound: bool = True

    @property
    def title(self) -> str:
        """The palette's name for it."""
        return self.name or self.label

    @property
    def keys(self) -> str:
        """The key as a person reads it."""
        return key_display(self.key)


def bindings(actions: tuple[Action, ...]) -> list[Binding]:
    """The Textual bindings of an action table."""
    return [Binding(a.key, a.action, a.label, show=a.footer, priority=a.priority)
            for a in actions if a.bound]


def help_rows(actions: tuple[Action, ...]) -> list[tuple[str, str]]:
    """``(key, what it does)`` for every action of a table."""
    return [(a.keys, a.help) for a in actions]


def palette_entries(actions: tuple[Action, ...]) -> list[Action]:
    """The actions of a table the palette offers."""
    return [a for a in actions if a.palette and a.bound]


# The app's own keys (the panes' keys 1-8 come from the registry).
APP_ACTIONS = (
    Action("r", "refresh_pane", "Refresh", "read the pane on screen from the store again",
           "Refresh", footer=False),
    Action("w", "web", "Web", "start the local web view (its address shows in the status "
           "line; it stops on quit)", "Web view", footer=False),
    Action("question_mark", "help", "Help", "the keys of the pane on screen (all of them "
           "below)", "Help", footer=False),
    Action("ctrl+p", "command_palette", "Palette", "command palette: every action, with its "
           "key", footer=False, palette=False, bound=False),
    Action("escape", "leave", "Back", "leave a field, close a panel or dialog", footer=False,
           palette=False),
    Action("q", "quit", "Quit", "quit", footer=False),
)
