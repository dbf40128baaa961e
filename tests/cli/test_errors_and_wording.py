"""The CLI as a newcomer meets it: ordinary input errors are one line and exit 1 (never
"unexpected error") and change nothing; help names values by what they are; recording in a
folder agentctx has not seen says which project it made; counts read as English."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentctx.store import Store
from agentctx.store import records as rec
from tests.support.cli import Ran, invoke


def one_line(ran: Ran) -> str:
    """The single error line of a refused command (exit 1, nothing on stdout)."""
    assert ran.code == 1, ran
    assert ran.err.count("\n") == 1 and ran.err.startswith("agentctx: "), ran.err
    assert "unexpected" not in ran.err
    return ran.err


@pytest.fixture
def in_project(project_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(project_dir)
    return project_dir


@pytest.mark.parametrize("args, option", [
    (("record", "decision", "Use X", "--valid-from", "yesterday"), "--valid-from"),
    (("list", "--as-of", "notadate"), "--as-of"),
    (("search", "anything", "--as-of", "last tuesday"), "--as-of"),
])
def test_a_date_that_is_not_one_is_one_line_and_writes_nothing(
        in_project: Path, args: tuple[str, ...], option: str) -> None:
    said = one_line(invoke(*args))
    assert option in said and "not an ISO date" in said and "2026-04-01" in said
    with Store.open() as db:
        assert rec.count_records(db) == 0


def test_supersede_with_a_bad_date_changes_nothing(in_project: Path) -> None:
    recorded = invoke("record", "decision", "Use X", "--json")
    assert recorded.code == 0, recorded
    with Store.open() as db:
        [old] = rec.list_records(db)
    said = one_line(invoke("supersede", old.id, "--why", "moved", "--body", "Y",
                           "--valid-from", "soon"))
    assert "--valid-from" in said
    with Store.open() as db:
        assert rec.get(db, old.id).current and rec.count_records(db) == 1


def test_export_to_a_folder_that_is_not_there_is_one_line(in_project: Path) -> None:
    said = one_line(invoke("export", "-o", "/no/such/dir/x.md"))
    assert "/no/such/dir/x.md" in said and "No such file" in said


def test_an_empty_search_and_an_empty_preview_agree(in_project: Path) -> None:
    assert "empty" in one_line(invoke("search", ""))
    assert "empty" in one_line(invoke("preview", "  "))


COMMANDS = ("record", "list", "search", "show", "edit", "supersede", "pin", "unpin", "history",
            "forget", "status", "export", "demo", "tui", "init", "uninstall", "doctor",
            "pause", "resume", "preview", "consolidate", "extract", "sync", "import", "web",
            "why", "projects merge", "config get", "config set", "profile show",
            "profile edit", "profile clear", "team on", "team sync", "bench coding")


@pytest.mark.parametrize("command", COMMANDS)
def test_help_names_values_not_python_types(command: str) -> None:
    ran = invoke(*command.split(), "--help")
    assert ran.code == 0, ran
    assert not re.search(r"<(str|int|list|float|path|bool)[^>]*>|\{[a-z_]+\}", ran.out), ran.out


def test_help_of_record_reads(in_project: Path) -> None:
    out = invoke("record", "--help").out
    assert "Usage: " in out and out.split("\n")[0].endswith("record [OPTIONS] TYPE TITLE")
    assert "--valid-from DATE" in out and "-p, --project PROJECT" in out
    assert invoke("show", "--help").out.split("\n")[0].endswith("show [OPTIONS] ID")


def test_recording_in_a_new_folder_says_which_project_it_made(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "scratch"
    folder.mkdir()
    monkeypatch.chdir(folder)
    first = invoke("record", "decision", "Use X")
    assert first.code == 0, first
    assert "in scratch" in first.out
    assert f"new project scratch for {folder}" in first.err
    assert "no git repository here" in first.err
    again = invoke("record", "decision", "Use Y")
    assert again.code == 0 and again.err == "", again


def test_recording_in_a_repository_names_the_project_without_the_warning(
        in_project: Path) -> None:
    first = invoke("record", "decision", "Use X")
    assert "new project app" in first.err and "no git repository" not in first.err


def test_counts_read_as_english(in_project: Path) -> None:
    assert invoke("record", "decision", "Use X").code == 0
    listed = invoke("projects").out
    assert " 1 record " in listed and "1 records" not in listed
    status = invoke("status").out
    assert "0 calls" in status and "1 current" in status
