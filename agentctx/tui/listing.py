"""What the records pane lists: the filters the filter form sets."""

from __future__ import annotations

from agentctx.core.lean import NamedTuple

STATES = ("current", "all", "superseded")


class Filters(NamedTuple):
    """What the records table lists: empty tuples mean every type / confidence."""

    types: tuple[str, ...] = ()
    confidences: tuple[str, ...] = ()
    pinned_only: bool = False
    state: str = "current"  # current | all | superseded

    def describe(self) -> str:
        """A short summary for the pane's title ("" when nothing is filtered)."""
        parts = []
        if self.types:
            parts.append("+".join(self.types))
        if self.confidences:
            parts.append("+".join(self.confidences))
        if self.pinned_only:
            parts.append("pinned")
        if self.state != "current":
            parts.append(f"{self.state}")
        return ", ".join(parts)
