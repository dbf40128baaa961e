"""``agentctx consolidate`` and ``agentctx profile`` through the real command."""

from __future__ import annotations

import json
from pathlib import Path

from agentctx.store import Store
from agentctx.store import records as rec
from tests.conftest import run_cli


def _record(project_dir: Path, *args: str) -> dict[str, object]:
    result = run_cli("record", *args, "--json", cwd=project_dir)
    assert result.returncode == 0, result.stderr
    data: dict[str, object] = json.loads(result.stdout)
    return data


def test_consolidate_command_reports_what_it_did(project_dir: Path, tiny_model_dir: Path) -> None:
    env = {"AGENTCTX_EMBED_MODEL": str(tiny_model_dir)}
    _record(project_dir, "decision", "Use sqlite for storage", "--body", "WAL mode")
    _record(project_dir, "preference", "Prefers pytest fixtures", "--scope", "global")
    result = run_cli("consolidate", cwd=project_dir, env=env)
    assert result.returncode == 0, result.stderr
    assert "2 records embedded" in result.stdout and "digests     1 rebuilt" in result.stdout
    assert "embedded 2/2" in result.stderr  # progress goes to stderr
    data = json.loads(run_cli("consolidate", "--json", cwd=project_dir, env=env).stdout)
    assert data["embedded"] == 0 and data["model"] == str(tiny_model_dir.resolve())
    assert data["backend"] in ("vec0", "numpy") and data["stopped"] is None
    off = run_cli("consolidate", "--no-embeddings", cwd=project_dir, env=env)
    assert off.returncode == 0 and "off (--no-embeddings)" in off.stdout
    scoped = run_cli("consolidate", "--project", "app", "--json", cwd=project_dir, env=env)
    assert json.loads(scoped.stdout)["digests"] == 1
    unknown = run_cli("consolidate", "--project", "nope", cwd=project_dir, env=env)
    assert unknown.returncode != 0 and "no project 'nope'" in unknown.stderr
    assert "Traceback" not in unknown.stderr


def test_consolidate_without_a_model_keeps_working(project_dir: Path) -> None:
    _record(project_dir, "decision", "Use sqlite for storage")
    result = run_cli("consolidate", cwd=project_dir,
                     env={"AGENTCTX_EMBED_MODEL": "acme/not-downloaded",
                          "HF_ENDPOINT": "http://127.0.0.1:9"})
    assert result.returncode == 0, result.stderr
    assert "full-text search only" in result.stdout
    assert result.stderr.count("embeddings unavailable") == 1


def test_profile_show_edit_and_clear(project_dir: Path, isolated_home: Path,
                                     tmp_path: Path) -> None:
    strong = _record(project_dir, "preference", "Prefers tabs", "--scope", "global")
    weak = _record(project_dir, "preference", "Writes tests first", "--scope", "global",
                   "--confidence", "inferred")
    local = _record(project_dir, "decision", "Use sqlite")
    shown = run_cli("profile", "show", cwd=project_dir)
    assert shown.returncode == 0
    every, _, relevant = shown.stdout.partition("Only when relevant")
    assert "Prefers tabs" in every and "Writes tests first" in relevant
    listed = json.loads(run_cli("profile", "show", "--json", cwd=project_dir).stdout)
    assert {e["id"]: e["in_every_digest"] for e in listed} == {strong["id"]: True,
                                                                weak["id"]: False}
    promoted = run_cli("profile", "edit", str(weak["id"])[:10], "--confidence", "explicit",
                       cwd=project_dir)
    assert promoted.returncode == 0 and "in every digest" in promoted.stdout
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/Prefers tabs/Prefers tabs over spaces/' \"$1\"\n",
                      encoding="utf-8")
    editor.chmod(0o755)
    edited = run_cli("profile", "edit", str(strong["id"]), cwd=project_dir,
                     env={"EDITOR": str(editor)})
    assert edited.returncode == 0, edited.stderr
    wrong = run_cli("profile", "edit", str(local["id"]), "--title", "x", cwd=project_dir)
    assert wrong.returncode == 1 and "not a developer-profile preference" in wrong.stderr
    refused = run_cli("profile", "clear", str(strong["id"]), cwd=project_dir)
    assert refused.returncode == 1 and "--yes" in refused.stderr
    cleared = run_cli("profile", "clear", str(strong["id"]), "--yes", "--why", "switched to "
                      "spaces", cwd=project_dir)
    assert cleared.returncode == 0, cleared.stderr
    after = json.loads(run_cli("profile", "show", "--json", cwd=project_dir).stdout)
    assert [e["id"] for e in after] == [weak["id"]]
    everything = json.loads(run_cli("profile", "show", "--all", "--json",
                                    cwd=project_dir).stdout)
    retired = next(e for e in everything if e["id"] == strong["id"])
    assert not retired["current"] and retired["superseded_by"] is None
    again = run_cli("profile", "clear", str(strong["id"]), "--yes", cwd=project_dir)
    assert again.returncode == 1 and "already retired" in again.stderr
    with Store.open(isolated_home / "agentctx.db") as db:
        record = rec.get(db, str(strong["id"]))
        assert record.title == "Prefers tabs over spaces" and not record.current
        trail = [(row[0], row[2]) for row in rec.edits_of(db, record.id)]
        assert ("retired", "switched to spaces") in trail and trail[0][0] == "title"
        assert [r.id for r in rec.history(db, record.id)] == [record.id]
