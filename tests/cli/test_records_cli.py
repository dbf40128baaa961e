"""The record commands, run in process (``tests.support.cli.run_cli``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli


def record(project_dir: Path, *args: str) -> dict[str, object]:
    result = run_cli("record", *args, "--json", cwd=project_dir)
    assert result.returncode == 0, result.stderr
    data: dict[str, object] = json.loads(result.stdout)
    return data


def test_record_search_show_supersede_history(project_dir: Path) -> None:
    first = record(project_dir, "decision", "Internal API is REST", "--body", "JSON over HTTP",
                   "--file", "src/api.py")
    listing = run_cli("search", "internal api", "--json", cwd=project_dir)
    hits = json.loads(listing.stdout)
    assert [h["id"] for h in hits] == [first["id"]]
    short = hits[0]["short_id"]
    shown = run_cli("show", short, cwd=project_dir)
    assert "JSON over HTTP" in shown.stdout and "file:src/api.py" in shown.stdout
    sup = run_cli("supersede", short, "--body", "gRPC with protobuf", "--title",
                  "Internal API is gRPC", "--why", "REST was too slow", cwd=project_dir)
    assert sup.returncode == 0, sup.stderr
    chain = json.loads(run_cli("history", str(first["id"]), "--json", cwd=project_dir).stdout)
    assert [c["title"] for c in chain] == ["Internal API is REST", "Internal API is gRPC"]
    assert chain[0]["rationale"] == "REST was too slow"
    text = run_cli("history", str(first["id"]), cwd=project_dir).stdout
    assert "REST was too slow" in text
    # The successor may share the 8-character prefix (ids made in the same quarter second): after
    # the supersede the full id names the old version.
    old = json.loads(run_cli("show", str(first["id"]), "--json", cwd=project_dir).stdout)
    assert old["files"] == ["src/api.py"]
    assert old["superseded_by_link"]["title"] == "Internal API is gRPC"
    assert old["superseded_by_link"]["rationale"] == "REST was too slow"
    assert "superseded:" in run_cli("show", str(first["id"]), cwd=project_dir).stdout
    current = json.loads(run_cli("list", "--json", cwd=project_dir).stdout)
    assert [c["title"] for c in current] == ["Internal API is gRPC"]


def test_body_from_stdin_and_edit_with_flags(project_dir: Path) -> None:
    made = record(project_dir, "discovery", "Locks are session scoped", "--body", "-")
    assert made["body"] == ""
    made = json.loads(run_cli("record", "discovery", "Pool", "--body", "-", "--json",
                              cwd=project_dir, stdin="release locks first\n").stdout)
    assert made["body"] == "release locks first"
    edited = run_cli("edit", str(made["id"]), "--body", "release advisory locks first",
                     cwd=project_dir)
    assert edited.returncode == 0
    shown = json.loads(run_cli("show", str(made["id"]), "--json", cwd=project_dir).stdout)
    assert shown["body"] == "release advisory locks first"
    assert shown["edits"][0]["old_value"] == "release locks first"


def test_edit_in_editor(project_dir: Path, tmp_path: Path) -> None:
    made = record(project_dir, "convention", "Handlers stay thin")
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/Handlers stay thin/Handlers stay very thin/' \"$1\"\n"
                      "echo 'parse, call a service, map errors' >> \"$1\"\n", encoding="utf-8")
    editor.chmod(0o755)
    result = run_cli("edit", str(made["id"]), cwd=project_dir, env={"EDITOR": str(editor)})
    assert result.returncode == 0, result.stderr
    shown = json.loads(run_cli("show", str(made["id"]), "--json", cwd=project_dir).stdout)
    assert shown["title"] == "Handlers stay very thin"
    assert shown["body"] == "parse, call a service, map errors"


def test_pin_and_forget(project_dir: Path) -> None:
    made = record(project_dir, "decision", "Money is integer cents")
    assert run_cli("pin", str(made["id"]), cwd=project_dir).returncode == 0
    pinned = json.loads(run_cli("list", "--pinned", "--json", cwd=project_dir).stdout)
    assert [p["id"] for p in pinned] == [made["id"]]
    refused = run_cli("forget", str(made["id"]), cwd=project_dir, stdin="n\n")
    assert refused.returncode == 1
    assert run_cli("forget", str(made["id"]), "--yes", cwd=project_dir).returncode == 0
    gone = run_cli("show", str(made["id"]), cwd=project_dir)
    assert gone.returncode == 1 and "no record has id" in gone.stderr


def test_errors_are_one_line_without_traceback(project_dir: Path) -> None:
    cases = [
        ("show", "01ZZZZZZZZZZ"),
        ("record", "idea", "x"),
        ("record", "decision", "big", "--body", "x" * 8001),
        ("supersede", "01ZZZZZZZZZZ", "--why", "x", "--body", "y"),
        ("supersede", "01ZZZZZZZZZZ", "--why", "x"),
        ("list", "--as-of", "yesterday-ish"),
        ("config", "set", "prompt_tokens", "99999"),
        ("projects", "merge", "nope", "nada", "--yes"),
    ]
    for args in cases:
        result = run_cli(*args, cwd=project_dir)
        assert result.returncode != 0, args
        assert "Traceback" not in result.stderr, args
        lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
        assert lines and lines[-1].startswith(("agentctx:", "Error", "│", "╰", "Usage")), args


def test_status_and_export(project_dir: Path) -> None:
    record(project_dir, "decision", "Use gRPC", "--body", "protobuf")
    status = json.loads(run_cli("status", "--json", cwd=project_dir).stdout)
    assert status["records"]["decision"]["current"] == 1
    assert status["project"]["name"] == "app"
    text = run_cli("status", cwd=project_dir).stdout
    assert "1 current" in text
    exported = run_cli("export", cwd=project_dir).stdout
    assert exported.startswith("# agentctx context — app") and "### Use gRPC" in exported


def test_config_commands(project_dir: Path) -> None:
    assert run_cli("config", "set", "llm", "off").stdout.strip() == "llm = off"
    assert run_cli("config", "get", "llm").stdout.strip() == "off"
    listed = json.loads(run_cli("config", "list", "--json").stdout)
    assert {"key": "llm", "value": False, "source": "file"}.items() <= next(
        k for k in listed if k["key"] == "llm").items()
    assert run_cli("config", "get", "llm", env={"AGENTCTX_LLM": "on"}).stdout.strip() == "on"
    assert run_cli("config", "unset", "llm").returncode == 0


def test_search_fuses_vectors_once_consolidated(project_dir: Path,
                                                tmp_path_factory: pytest.TempPathFactory,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Before consolidation the search is keyword only; after it, a record that shares no word
    with the query but its topic is found through the model's query side file."""
    from tests.support import tiny_model

    folder = tiny_model.build_wordpiece(tmp_path_factory.mktemp("models") / "wordpiece")
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", str(folder))
    cache = record(project_dir, "decision", "Sessions are cached in redis", "--body",
                   "ttl of one hour; eviction is lru")
    record(project_dir, "decision", "Deploy with docker to staging")
    before = json.loads(run_cli("search", "memory cache", "--json", cwd=project_dir).stdout)
    assert [h["mode"] for h in before] == ["keyword"]
    assert run_cli("consolidate", cwd=project_dir).returncode == 0
    # "memory" is in no record; the vector side brings the redis record for it.
    found = json.loads(run_cli("search", "memory", "--json", cwd=project_dir).stdout)
    assert found and found[0]["id"] == cache["id"] and found[0]["mode"] == "hybrid"
    keyword = json.loads(run_cli("search", "memory", "--keyword", "--json",
                                 cwd=project_dir).stdout)
    assert keyword == []


def test_an_error_line_never_repeats_a_secret(project_dir: Path) -> None:
    token = "ghp_" + "Qx7" * 12
    done = run_cli("show", token, cwd=project_dir)
    assert done.returncode != 0 and done.stderr.startswith("agentctx: ")
    assert token not in done.stderr and "[REDACTED:github-token]" in done.stderr


def test_search_honours_the_search_knob(project_dir: Path) -> None:
    record(project_dir, "decision", "Internal API is gRPC", "--body", "protobuf")
    pinned = record(project_dir, "convention", "Money is integer cents", "--pin")
    found = json.loads(run_cli("search", "grpc", "--keyword", "--json", cwd=project_dir).stdout)
    assert [h["title"] for h in found] == ["Internal API is gRPC"]
    only_pinned = run_cli("search", "grpc", "--keyword", "--json", cwd=project_dir,
                          env={"AGENTCTX_SEARCH": "pinned"})
    assert [h["id"] for h in json.loads(only_pinned.stdout)] == [pinned["id"]]
