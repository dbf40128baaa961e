"""The key bar at the bottom: the keys of the focused pane (or of the dialog on screen), one line
of text, with the app's ``? help``, ``^p palette`` and ``q quit`` always at its end.

Textual's ``Footer`` draws a widget per key, which costs a tenth of a second at start-up; this
draws the same keys as one ``Text`` and redraws when the screen's bindings change (focus moves,
a pane enables or hides an action). When the pane's keys do not fit, they are cut with "…"
before the app's keys are: every key stays reachable from the help (``?``) and the palette.
"""

from __future__ import annotations

from rich.text import Text
from textual.screen import Screen
from textual.widgets import Static

KEY_STYLE = "bold #ffa62b"
# The keys every screen of the app answers to, always shown at the end of the bar.
APP_TAIL = (("?", "help"), ("^p", "palette"), ("q", "quit"))


class KeyBar(Static):
    """``key Description`` for every shown, enabled binding of the focus chain (the app's own
    bindings left to ``tail``)."""

    DEFAULT_CSS = "KeyBar { height: 1; background: $panel; dock: bottom; }"

    def __init__(self, *, tail: tuple[tuple[str, str], ...] = APP_TAIL,
                 **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.tail = tail

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._changed)

    def _changed(self, screen: Screen[object]) -> None:
        self.refresh()

    def keys(self) -> list[tuple[str, str]]:
        """The focused widget's (and its pane's) shown keys, in order, each action once."""
        found: list[tuple[str, str]] = []
        seen: set[str] = set()
        for active in self.screen.active_bindings.values():
            binding = active.binding
            if (not binding.show or not active.enabled or binding.action in seen
                    or active.node is self.app):
                continue
            seen.add(binding.action)
            found.append((self.app.get_key_display(binding), binding.description))
        return found

    def render(self) -> Text:
        width = self.size.width or 80
        tail = Text(no_wrap=True)
        for key, description in self.tail:
            tail.append(f" {key} ", style=KEY_STYLE)
            tail.append(description)
        head = Text(no_wrap=True, overflow="ellipsis")
        room = width - tail.cell_len - 1
        for key, description in self.keys():
            item = Text(no_wrap=True)
            item.append(f" {key} ", style=KEY_STYLE)
            item.append(description)
            if head.cell_len + item.cell_len > room - 2:
                head.append(" …")
                break
            head.append_text(item)
        head.append(" " * max(1, width - head.cell_len - tail.cell_len))
        head.append_text(tail)
        head.truncate(width)
        return head
