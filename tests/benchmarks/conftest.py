"""Shared helpers of the benchmark tests."""

from __future__ import annotations

import pytest


def wants_slow(config: pytest.Config) -> bool:
    """Whether the run selected slow tests explicitly (``-m slow``)."""
    return "slow" in str(config.getoption("markexpr") or "").replace("not slow", "")
