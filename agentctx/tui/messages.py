"""Messages the panes send each other through the App."""

from __future__ import annotations

from textual.message import Message


class ProjectChosen(Message):
    """A project became the active one of every pane."""

    def __init__(self, project_id: str) -> None:
        super().__init__()
        self.project_id = project_id


class ShowChain(Message):
    """Open the chains pane on the supersession chain through a record."""

    def __init__(self, record_id: str) -> None:
        super().__init__()
        self.record_id = record_id


class Wrote(Message):
    """A pane wrote to the store: the status line counts again."""
