"""``agentctx team``, ``import``, ``export --format`` and ``init --team`` run in process."""

from __future__ import annotations

import json
from pathlib import Path

from agentctx.store import Store, records
from agentctx.store import projects as proj
from agentctx.store.models import Draft
from tests.conftest import run_cli
from tests.support.gitrepo import git


def _record(cwd: Path, type_: str, title: str) -> str:
    done = run_cli("record", type_, title, "--json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["id"])


def test_team_on_keeps_the_file_after_every_cli_write(repo: Path) -> None:
    first = _record(repo, "decision", "Use gRPC")
    done = run_cli("team", "on", cwd=repo)
    assert done.returncode == 0, done.stderr
    path = repo / ".agentctx" / "context.md"
    assert first in path.read_text(encoding="utf-8")
    assert (repo / ".gitattributes").read_text().count("merge=union") == 1
    assert run_cli("team", "on", cwd=repo).returncode == 0  # twice: one line still
    assert (repo / ".gitattributes").read_text().count("merge=union") == 1

    second = _record(repo, "convention", "Tabs")
    assert second in path.read_text(encoding="utf-8")
    assert run_cli("edit", second, "--title", "Tabs, always", cwd=repo).returncode == 0
    assert "### Tabs, always" in path.read_text(encoding="utf-8")
    done = run_cli("supersede", first, "--why", "too heavy", "--body", "JSON over HTTP",
                   cwd=repo)
    assert done.returncode == 0, done.stderr
    text = path.read_text(encoding="utf-8")
    assert f"- `{first}` " in text and "because: too heavy" in text
    status = run_cli("team", "status", "--json", cwd=repo)
    assert status.returncode == 0 and json.loads(status.stdout)["state"] == "in step"
    overview = run_cli("status", cwd=repo)
    assert f"team     in step: {path}" in overview.stdout, overview.stdout

    with Store.open() as db:  # a write behind the CLI's back: the file is out of step
        project = proj.resolve(db, str(repo)).project
        records.add(db, Draft(type="discovery", title="Found later"), project_id=project.id)
    behind = run_cli("team", "status", cwd=repo)
    assert behind.returncode == 1 and behind.stdout.startswith("behind:")
    assert run_cli("team", "sync", cwd=repo).returncode == 0
    assert run_cli("team", "status", cwd=repo).returncode == 0

    assert run_cli("team", "off", cwd=repo).returncode == 0
    _record(repo, "decision", "After off")
    assert "After off" not in path.read_text(encoding="utf-8")


def test_init_team_is_refused_outside_a_repository(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    done = run_cli("init", "--team", "--yes", cwd=plain)
    assert done.returncode == 1 and "git repository" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (plain / ".agentctx").exists()
    assert run_cli("team", "on", cwd=plain).returncode == 1


def test_init_team_turns_the_file_on(repo: Path) -> None:
    done = run_cli("init", "--team", "--yes", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert (repo / ".agentctx" / "context.md").exists()
    assert "merge=union" in (repo / ".gitattributes").read_text()


def test_import_reports_and_a_malformed_file_names_the_line(repo: Path, tmp_path: Path) -> None:
    _record(repo, "decision", "Shared decision")
    assert run_cli("team", "on", cwd=repo).returncode == 0
    path = repo / ".agentctx" / "context.md"
    text = path.read_text(encoding="utf-8")
    (repo / "src").mkdir()
    again = run_cli("import", "--json", cwd=repo / "src")  # the worktree's file, idempotent
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["changes"] == 0
    broken = tmp_path / "broken.md"
    broken.write_text(text.replace("### Shared decision", "Shared decision"), encoding="utf-8")
    done = run_cli("import", str(broken), cwd=repo)
    line = text.splitlines().index("### Shared decision") + 1
    assert done.returncode == 1 and f"malformed block, left out: line {line}:" in done.stdout
    assert "Traceback" not in done.stderr
    odd = tmp_path / "context.txt"
    odd.write_text(text, encoding="utf-8")
    assert "--format" in run_cli("import", str(odd), cwd=repo).stderr
    assert run_cli("import", str(odd), "--format", "md", cwd=repo).returncode == 0


def test_export_jsonl_and_import_restore_a_store(repo: Path, tmp_path: Path) -> None:
    rid = _record(repo, "decision", "Back me up")
    backup = tmp_path / "backup.jsonl"
    done = run_cli("export", "--format", "jsonl", "--out", str(backup), cwd=repo)
    assert done.returncode == 0, done.stderr
    assert backup.stat().st_mode & 0o077 == 0  # private: it holds the whole store
    fresh = {"AGENTCTX_HOME": str(tmp_path / "restored")}
    restored = run_cli("import", str(backup), cwd=repo, env=fresh)
    assert restored.returncode == 0, restored.stderr
    shown = run_cli("show", rid, "--json", cwd=repo, env=fresh)
    assert shown.returncode == 0 and "Back me up" in shown.stdout
    assert "0 rows added" in run_cli("import", str(backup), cwd=repo, env=fresh).stdout
    md = run_cli("export", cwd=repo)
    assert md.returncode == 0 and "# agentctx context" in md.stdout
    assert run_cli("export", "--format", "xml", cwd=repo).returncode == 1
    git(repo, "status")  # the repository is untouched by an export
