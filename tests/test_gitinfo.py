"""Project identity: remote normalization, worktrees, plain folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctx.core.gitinfo import find_repo, identify, normalize_remote
from tests.support import special_files


@pytest.mark.parametrize("url", [
    "git@github.com:a/b.git", "https://github.com/a/b", "https://github.com/a/b.git/",
    "ssh://git@GitHub.com/a/b.git", "https://user:secret@github.com/a/b", "git://github.com/a/b",
    "ssh://git@github.com:22/a/b", "github.com:a/b",
])
def test_remote_spellings_of_one_repository_are_one_project(url: str) -> None:
    assert normalize_remote(url) == "github.com/a/b"


def test_paths_keep_their_case_and_ports_that_matter() -> None:
    assert normalize_remote("https://GitLab.example.com:8443/Team/Repo.git") == \
        "gitlab.example.com:8443/Team/Repo"
    assert normalize_remote("/srv/git/repo.git") == "/srv/git/repo"


def test_origin_wins_then_first_remote_by_name(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text(
        '[remote "zeta"]\n\turl = https://example.com/z/z\n'
        '[remote "alpha"]\n\turl = https://example.com/a/a\n', encoding="utf-8")
    assert find_repo(tmp_path).remote == "example.com/a/a"  # type: ignore[union-attr]
    (tmp_path / ".git" / "config").write_text(
        '[remote "alpha"]\n\turl = https://example.com/a/a\n'
        '[remote "origin"]\n\turl = git@example.com:o/o.git\n', encoding="utf-8")
    assert find_repo(tmp_path).remote == "example.com/o/o"  # type: ignore[union-attr]


def test_no_remote_uses_the_main_root_and_outside_git_the_folder(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    inner = repo / "pkg"
    inner.mkdir()
    assert identify(inner).id == identify(repo).id
    assert identify(repo).remote is None
    loose = tmp_path / "loose"
    loose.mkdir()
    assert identify(loose).root == str(loose.resolve())
    assert identify(loose).id != identify(repo).id


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("name", "kind"), [(".git", "fifo"), (".git", "huge"),
                                            (".git/config", "fifo"), (".git/config", "huge"),
                                            (".git/config", "dev-zero"),
                                            (".git/commondir", "fifo")])
def test_special_git_files_never_block_and_are_read_little(name: str, kind: str,
                                                           tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text('[remote "origin"]\n\turl = git@h.com:a/b.git\n',
                                              encoding="utf-8")
    special_files.replace(tmp_path / name, kind)
    before = special_files.bytes_read()
    with special_files.limited_memory():
        found = identify(tmp_path)
    assert special_files.bytes_read() - before < 2_000_000
    assert found.worktree == str(tmp_path.resolve())
    assert found.remote == (None if name != ".git/commondir" else "h.com/a/b")


@pytest.mark.parametrize(("name", "content"), [(".git/commondir", b"\x00\x01binary\xff"),
                                               (".git", b"gitdir: /tmp/\x00nul\n"),
                                               (".git/commondir", b"[" * 100_000),
                                               (".git", b"gitdir: " + b"[" * 100_000)])
def test_git_files_holding_nul_bytes_or_huge_names_are_not_a_crash(name: str, content: bytes,
                                                     tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    special_files.remove(tmp_path / name)
    (tmp_path / name).write_bytes(content)
    found = identify(tmp_path)
    assert found.worktree == str(tmp_path.resolve())
    assert found.root == str(tmp_path.resolve())
