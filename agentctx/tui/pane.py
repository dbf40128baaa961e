"""The base of every pane: a title line, the project it shows, and how it refreshes."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.binding import BindingType
from textual.containers import Vertical
from textual.widgets import Static

from agentctx.tui.actions import Action, bindings
from agentctx.tui.cells import ellipsize
from agentctx.tui.registry import PaneSpec, spec_of

if TYPE_CHECKING:
    from agentctx.tui.app import AgentctxApp
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
    """One pane of the browser. Subclasses set ``PANE_ID``, ``PANE_NAME`` and ``KEY``, build
    their widgets, and implement :meth:`reload` (read the store again).

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

    @property
    def state(self) -> AppState:
        """The app's shared state."""
        return self.agentctx_app.state

    @property
    def agentctx_app(self) -> AgentctxApp:
        """The app, typed."""
        from agentctx.tui.app import AgentctxApp  # late: tui.app imports this module

        app = self.app
        assert isinstance(app, AgentctxApp)
        return app

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
        return self.agentctx_app.current_pane == self.spec().pane_id

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
