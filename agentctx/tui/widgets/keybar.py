"""The key bar at the bottom: the keys of the focused pane (and the app's), one line of text.

Textual's ``Footer`` draws a widget per key, which costs a tenth of a second at start-up; this
draws the same keys as one ``Text`` and redraws when the screen's bindings change (focus moves,
a pane enables or hides an action).
"""

from __future__ import annotations

from rich.text import Text
from textual.screen import Screen
from textual.widgets import Static

KEY_STYLE = "bold #ffa62b"
PALETTE_HINT = "^p palette"


class KeyBar(Static):
    """``key Description`` for every shown, enabled binding of the focus chain."""

    DEFAULT_CSS = "KeyBar { height: 1; background: $panel; }"

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._changed)

    def _changed(self, screen: Screen[object]) -> None:
        self.refresh()

    def render(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        seen: set[str] = set()
        app_keys: list[tuple[str, str]] = []
        for active in self.screen.active_bindings.values():
            binding = active.binding
            if not binding.show or not active.enabled or binding.action in seen:
                continue
            seen.add(binding.action)
            item = (self.app.get_key_display(binding), binding.description)
            if active.node is self.app:
                app_keys.append(item)
            else:
                text.append(f" {item[0]} ", style=KEY_STYLE)
                text.append(item[1])
        for key, description in app_keys:
            text.append(f" {key} ", style=KEY_STYLE)
            text.append(description)
        room = (self.size.width or 80) - len(PALETTE_HINT) - 2
        if text.cell_len <= room:
            text.append(" " * (room - text.cell_len + 1))
            text.append(" ^p", style=KEY_STYLE)
            text.append(" palette")
        return text
