"""The CLI's writes go through the use-case layer: a supersede keeps the predecessor's files,
refuses an empty body, is stored and audited as ``cli`` and brings the team file in step once;
forgetting a successor says which record is current again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentctx import team
from agentctx.cli import run_cli as cli_main
from agentctx.store import Store, graph
from agentctx.store import records as rec
from tests.conftest import run_cli
from tests.support.teamsync_spy import count_team_syncs


def invoke(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """The CLI in this process (so a spy sees its calls); its output, after a clean exit."""
    try:
        cli_main(list(args))
    except SystemExit as exc:
        assert exc.code in (0, None), capsys.readouterr()
    return capsys.readouterr().out


def test_supersede_keeps_the_files_is_stored_as_cli_and_syncs_the_team_file_once(
        repo: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(repo)
    invoke(capsys, "team", "on")
    old = json.loads(invoke(capsys, "record", "decision", "Use REST", "--body", "JSON",
                            "--file", "src/api.py", "--json"))
    syncs = count_team_syncs(monkeypatch)
    new = json.loads(invoke(capsys, "supersede", old["id"], "--why", "too slow", "--body",
                            "protobuf in proto/", "--title", "Use gRPC", "--json"))
    assert syncs == [str(repo)]
    with Store.open() as db:
        assert [link.node.name for link in graph.entities_of(db, new["id"])] == ["src/api.py"]
        assert rec.get(db, new["id"]).source == "cli"
        assert [e.actor for e in rec.edits_of(db, old["id"])] == ["cli"]
    assert "### Use gRPC" in (repo / team.TEAM_FILE).read_text(encoding="utf-8")


def test_supersede_refuses_an_empty_body_in_one_line(project_dir: Path) -> None:
    made = json.loads(run_cli("record", "decision", "Use REST", "--body", "JSON", "--json",
                              cwd=project_dir).stdout)
    refused = run_cli("supersede", made["id"], "--why", "x", "--body", "", cwd=project_dir)
    assert refused.returncode == 1
    assert refused.stderr.strip() == ("agentctx: the successor's body is required: say what "
                                      "holds now")
    shown = json.loads(run_cli("show", made["id"], "--json", cwd=project_dir).stdout)
    assert shown["superseded_by"] is None


def test_forgetting_a_successor_asks_first_naming_the_record_current_again(
        project_dir: Path) -> None:
    old = json.loads(run_cli("record", "decision", "Use REST", "--body", "JSON", "--json",
                             cwd=project_dir).stdout)
    new = json.loads(run_cli("supersede", old["id"], "--why", "speed", "--body", "protobuf",
                             "--title", "Use gRPC", "--json", cwd=project_dir).stdout)
    asked = run_cli("forget", new["id"], cwd=project_dir, stdin="n\n")
    assert asked.returncode == 1 and "nothing forgotten" in asked.stderr
    assert f"Current again: {old['id']} (decision: 'Use REST')." in asked.stdout
    done = run_cli("forget", new["id"], "--yes", cwd=project_dir)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"forgot {new['id']}",
                                        f"Current again: {old['id']} (decision: 'Use REST')."]
    shown = json.loads(run_cli("show", old["id"], "--json", cwd=project_dir).stdout)
    assert shown["current"] is True and shown["superseded_at"] is None
