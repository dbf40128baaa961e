"""The panes, by key, without importing them: each pane's module loads when it is first shown
(start-up pays only for the records pane). The only copy of each pane's id, name and key."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from agentctx.tui.pane import Pane


class PaneSpec(NamedTuple):
    """A pane's id, name and key, and where its class lives."""

    pane_id: str
    name: str
    key: str
    module: str
    class_name: str

    def load(self) -> type[Pane]:
        """The pane's class (importing its module)."""
        cls: type[Pane] = getattr(import_module(f"agentctx.tui.{self.module}"), self.class_name)
        return cls


PANES: tuple[PaneSpec, ...] = (
    PaneSpec("projects", "Projects", "1", "projects_pane", "ProjectsPane"),
    PaneSpec("records", "Records", "2", "records_pane", "RecordsPane"),
    PaneSpec("chains", "Chains", "3", "chains_pane", "ChainsPane"),
    PaneSpec("profile", "Profile", "4", "profile_pane", "ProfilePane"),
    PaneSpec("sessions", "Sessions", "5", "sessions_pane", "SessionsPane"),
    PaneSpec("live", "Live", "6", "live_pane", "LivePane"),
    PaneSpec("drift", "Drift", "7", "drift_pane", "DriftPane"),
    PaneSpec("preview", "Preview", "8", "preview_pane", "PreviewPane"),
)
FIRST = "records"  # the pane on screen when the browser opens
CHAINS = "chains"  # the pane a record's chain opens in (c)


def spec_of(module: str, class_name: str) -> PaneSpec:
    """The spec of the pane class ``class_name`` of ``module`` (a pane's own id, name, key)."""
    return next(p for p in PANES if f"agentctx.tui.{p.module}" == module
                and p.class_name == class_name)


def spec(pane_id: str) -> PaneSpec:
    """The spec of the pane ``pane_id``."""
    return next(p for p in PANES if p.pane_id == pane_id)
