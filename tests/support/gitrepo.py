"""Real git repositories for tests, with a private git configuration (``repo`` fixture)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run the real ``git`` in ``cwd`` (the isolated HOME holds its configuration)."""
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60,
                          check=False)
    if check:
        assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done


@pytest.fixture
def repo(tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh git repository with one commit, a remote URL and a git identity of its own."""
    home = Path(os.environ["HOME"])
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Test Author\n\temail = author@example.invalid\n"
        "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n", encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    root = tmp_path / "shop"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "remote", "add", "origin", "git@github.com:acme/shop.git")
    (root / "README.md").write_text("# shop\n", encoding="utf-8")
    git(root, "add", "README.md")
    git(root, "commit", "-q", "-m", "start")
    return root
