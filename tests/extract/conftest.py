"""Extraction tests: no real waiting between a failed call and its one retry."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def no_retry_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    """The retry itself is under test, not the pause before it."""
    monkeypatch.setattr("agentctx.ml.llm.RETRY_PAUSE_S", 0.0)
