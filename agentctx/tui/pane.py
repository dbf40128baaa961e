"""The base of every pane: a title line, the project it shows, and how it refreshes."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.binding import BindingType
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Static

from agentctx.tui.actions import Action, bindings
from agentctx.tui.appstate import guarded
from agentctx.tui.cells import ellipsize
from agentctx.tui.registry import PaneSpec, spec_of

if TYPE_CHECKING:
    from agentctx.tui.appstate import AppState


class PaneTitle(Static):
    """A pane's first line: what it shows, cut with "…" to the width it has."""

    def __init__(self, text: str = "", **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._text = text

    def set_text(self, text: str) -> None:
        """Show ``text`` (ellipsized to the widget's width when drawn)."""
        self._text = text
        self.refresh()

    def render(self) -> Text:
        width = self.size.width or 80
        return Text(ellipsize(self._text, width), no_wrap=True)


class Pane(Vertical):
    """One pane of the browser. Subclasses set ``ACTIONS`` (their keys), build their widgets,
    and implement :meth:`reload` (read the store again); the registry holds each pane's id,
    name and key. A pane is made with the browser's :class:`AppState` (the store, the active
    project, the pane on screen) and never reaches for the App.

    A pane's styles are the ``.tcss`` file beside its module, read when the class is defined,
    so the App parses a pane's styles only once the pane is first shown.
    """

    SCOPED_CSS = False  # the .tcss rules name the pane themselves

    def __init_subclass__(cls, **kwargs: object) -> None:
        if "ACTIONS" in cls.__dict__:  # before Textual merges the class's bindings
            cls.BINDINGS = list[BindingType](bindings(cls.ACTIONS))
        super().__init_subclass__(**kwargs)  # type: ignore[arg-type]
        module = sys.modules[cls.__module__].__file__
        if module:
            styles = Path(module).with_suffix(".tcss")
            if styles.is_file():
                cls.DEFAULT_CSS = styles.read_text(encoding="utf-8")

    # The pane's keys: its bindings, its help rows and its palette entries.
    ACTIONS: ClassVar[tuple[Action, ...]] = ()

    @classmethod
    def spec(cls) -> PaneSpec:
        """The pane's id, name and key, as the registry holds them."""
        return spec_of(cls.__module__, cls.__name__)

    def __init__(self, state: AppState, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.state = state

    def guarded(self, read: Callable[[], object]) -> None:
        """Run a read of the store; a locked or damaged store becomes a notification."""
        guarded(read, self.notify)

    def layout_width(self) -> int:
        """The width the pane's columns share (its own, else its container's before the first
        layout), remembered so a resize to another width lays the pane out again."""
        parent = self.parent
        width = (self.size.width or (parent.size.width if isinstance(parent, Widget) else 0)
                 or 80)
        self._laid_out_width = width
        return width

    def on_resize(self) -> None:
        if self.is_active and self.size.width != getattr(self, "_laid_out_width", 0):
            self.guarded(self.relayout)

    def relayout(self) -> None:
        """Size the pane's columns to a new width (by default: read it again)."""
        self.reload()

    def jump_to(self, record_id: str) -> None:
        """Show what this pane has for ``record_id`` (the chains pane: its chain)."""

    def reload(self) -> None:
        """Read what the pane shows from the store again."""

    def project_changed(self) -> None:
        """The active project changed; reload when on screen (a switch reloads the others)."""
        if self.is_active:
            self.reload()

    def store_changed(self) -> None:
        """Another process wrote to the store; by default, reload when visible."""
        if self.display and self.is_active:
            self.reload()

    @property
    def is_active(self) -> bool:
        """Whether this pane is the one on screen."""
        return self.state.current_pane == self.spec().pane_id

    def leave_field(self) -> None:
        """``escape`` in a field: focus the pane's table or tree (the field keeps its text)."""
        for widget in self.query("DataTable, Tree").results():
            if widget.display and widget.focusable:
                self.screen.set_focus(widget)
                return
        self.screen.set_focus(None)

    def focus_main(self) -> None:
        """Focus the pane's main widget (its table or tree)."""
        for widget in self.query("DataTable, Tree, Input").results():
            if widget.display and widget.focusable:
                self.screen.set_focus(widget)
                return
