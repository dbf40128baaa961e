"""Writing a proposal never goes through a planted link, a device, a FIFO or outside the project."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentctx.drift.propose import FileChange
from agentctx.drift.writer import Changed, write
from tests.conftest import run_cli

# Run in a child with its address space capped, so a read of /dev/zero fails in seconds (a
# MemoryError) instead of filling the machine's memory.
CAPPED_WRITE = """
import resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from agentctx.drift.propose import FileChange
from agentctx.drift.writer import Changed, write
target = Path(sys.argv[1])
try:
    write([FileChange(target, "CLAUDE.md", None, "# new\\n")], Path(sys.argv[2]))
except Changed as exc:
    print("refused:", exc)
"""


def test_a_link_planted_at_a_temp_name_is_not_written_through(tmp_path: Path) -> None:
    project, outside = tmp_path / "app", tmp_path / "elsewhere.txt"
    project.mkdir()
    outside.write_text("someone else's file\n", encoding="utf-8")
    claude = project / "CLAUDE.md"
    claude.write_text("# app\n", encoding="utf-8")
    # The name the writer used to pick for its temporary file (predictable from the pid).
    planted = project / f".CLAUDE.md.agentctx-{os.getpid()}.tmp"
    planted.symlink_to(outside)
    write([FileChange(claude, "CLAUDE.md", "# app\n", "# app\n\nnew line\n")],
          tmp_path / "backup")
    assert outside.read_text(encoding="utf-8") == "someone else's file\n"
    assert claude.read_text(encoding="utf-8") == "# app\n\nnew line\n"
    assert not claude.is_symlink() and planted.is_symlink()
    assert sorted(p.name for p in project.iterdir()) == sorted([claude.name, planted.name])


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "outside"])
def test_a_target_that_is_no_regular_file_of_the_project_is_refused_unread(
        tmp_path: Path, kind: str) -> None:
    project = tmp_path / "app"
    project.mkdir()
    claude = project / "CLAUDE.md"
    outside = tmp_path / "notes.md"
    if kind == "dev-zero":
        claude.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(claude)
    else:
        outside.write_text("", encoding="utf-8")
        claude.symlink_to(outside)
    done = subprocess.run([sys.executable, "-c", CAPPED_WRITE, str(claude),
                           str(tmp_path / "backup")],
                          capture_output=True, text=True, timeout=20)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("refused:") and len(done.stdout.splitlines()) == 1
    assert not (tmp_path / "backup").exists()
    if kind == "outside":
        assert outside.read_text(encoding="utf-8") == ""
    assert sorted(p.name for p in project.iterdir()) == ["CLAUDE.md"]


def test_a_new_file_written_in_place_is_a_regular_file(tmp_path: Path) -> None:
    target = tmp_path / "CLAUDE.md"
    done = write([FileChange(target, "CLAUDE.md", None, "# new\n")], tmp_path / "backup")
    assert done.created == ("CLAUDE.md",) and target.read_text(encoding="utf-8") == "# new\n"
    assert target.stat().st_mode & 0o777 == 0o644 & ~_umask()
    with pytest.raises(Changed):
        write([FileChange(target, "CLAUDE.md", None, "# again\n")], tmp_path / "backup2")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_sync_apply_refuses_a_claude_md_linked_to_dev_zero(project_dir: Path) -> None:
    done = run_cli("record", "decision", "Store money as integer cents", "--json",
                   cwd=project_dir)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["id"]
    (project_dir / "CLAUDE.md").symlink_to("/dev/zero")
    applied = run_cli("sync", "--apply", "--yes", cwd=project_dir)
    assert applied.returncode == 1
    assert len(applied.stderr.strip().splitlines()) == 1, applied.stderr
    assert "symbolic link" in applied.stderr and "Traceback" not in applied.stderr
    assert os.readlink(project_dir / "CLAUDE.md") == "/dev/zero"
