"""Test isolation: every test gets its own agentctx home and HOME in a temporary folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentctx.ml.embedder import EmbeddingModel, forget_loaded, load_model
from agentctx.store import Store
from tests.support import tiny_model
from tests.support.cli import run_cli, run_process

__all__ = ["REPO", "SHARED", "run_cli", "run_process"]

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory,
                  monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh ``AGENTCTX_HOME`` (and ``HOME``) per test; no ``AGENTCTX_*`` leaks in."""
    base = tmp_path_factory.mktemp("home")
    for key in list(os.environ):
        if key.startswith("AGENTCTX_") or key in ("CLAUDE_CONFIG_DIR", "CLAUDE_PROJECT_DIR",
                                                  "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(base))
    monkeypatch.setenv("AGENTCTX_HOME", str(base / ".agentctx"))
    yield base / ".agentctx"


@pytest.fixture
def store(isolated_home: Path) -> Iterator[Store]:
    """An open store in the isolated home."""
    db = Store.open()
    try:
        yield db
    finally:
        db.close()


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    """A git-looking project folder with an origin remote (no git binary needed)."""
    root = tmp_path / "app"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text(
        '[core]\n\tbare = false\n[remote "origin"]\n\turl = git@github.com:acme/app.git\n'
        '\tfetch = +refs/heads/*:refs/remotes/origin/*\n', encoding="utf-8")
    (root / "src").mkdir()
    return root


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``slow`` (full sizes) run only when selected: ``pytest -m slow``."""
    if "slow" in str(config.getoption("markexpr") or "").replace("not slow", ""):
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny test model saved once per test session (model2vec folder layout)."""
    return tiny_model.build(tmp_path_factory.mktemp("models") / "tiny")


@pytest.fixture
def tiny(tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[EmbeddingModel]:
    """The tiny model, configured as ``embed_model`` and loaded through the real loader."""
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", str(tiny_model_dir))
    model = load_model()
    assert model is not None
    yield model
    forget_loaded()
