"""Shared helpers of the benchmark tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny real model2vec model folder (hand-made vectors), built once per test session."""
    from tests.consolidate.tiny_model import build

    return build(tmp_path_factory.mktemp("tiny-model"))


def wants_slow(config: pytest.Config) -> bool:
    """Whether the run selected slow tests explicitly (``-m slow``)."""
    return "slow" in str(config.getoption("markexpr") or "").replace("not slow", "")
