"""post-tool (PostToolUse, PostToolUseFailure): files, bugfix stubs, test runs, git events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentctx.hooks.post_tool import (
    error_line,
    is_test_command,
    named_test_files,
    segments,
    signature,
)
from agentctx.store import Store, graph, projects, records, sessions
from agentctx.store.models import Record
from agentctx.store.selection import Selection
from tests.hooks.conftest import SESSION, at, payloads, run_hook


def _bash(app: Path, command: str, stdout: str = "", stderr: str = "",
          session: str = SESSION) -> dict[str, Any]:
    payload = at(payloads("PostToolUse")[1], app, session_id=session)
    payload["tool_input"] = {"command": command, "description": "run"}
    payload["tool_response"] = {"stdout": stdout, "stderr": stderr, "interrupted": False,
                                "isImage": False, "noOutputExpected": False}
    return payload


def _failure(app: Path, command: str, error: str) -> dict[str, Any]:
    payload = at(payloads("PostToolUseFailure")[0], app)
    payload["tool_input"] = {"command": command, "description": "run"}
    payload["error"] = error
    return payload


def _meta(key: str) -> list[Any]:
    with Store.open() as db:
        session = sessions.get(db, SESSION)
    assert session is not None
    value = session.meta.get(key, [])
    assert isinstance(value, list)
    return value


def _bugfixes() -> list[Record]:
    with Store.open() as db:
        return records.list_records(db, Selection(types=("bugfix",)))


def test_real_write_payload_links_the_file_to_the_session(app: Path) -> None:
    run_hook("post-tool", at(payloads("PostToolUse")[0], app))
    with Store.open() as db:
        assert graph.files_touched(db, SESSION) == ["notes.txt"]
        pid = projects.resolve(db, str(app)).project.id
        nodes = db.rows("SELECT kind, name FROM nodes WHERE project_id = ?", (pid,))
        assert [tuple(n) for n in nodes] == [("file", "notes.txt")]


def test_edits_give_one_entity_per_session_and_file(app: Path) -> None:
    base = at(payloads("PostToolUse")[0], app)
    for tool, key, path in [("Edit", "file_path", f"{app}/src/api.py"),
                            ("MultiEdit", "file_path", f"{app}/src/api.py"),
                            ("Write", "file_path", "src/new.py"),
                            ("NotebookEdit", "notebook_path", f"{app}/nb/explore.ipynb"),
                            ("Edit", "file_path", "/etc/outside.conf")]:
        run_hook("post-tool", {**base, "tool_name": tool, "tool_input": {key: path}})
    run_hook("post-tool", {**base, "tool_name": "Edit", "tool_input": {"file_path": "x.py"},
                           "session_id": "another"})
    with Store.open() as db:
        assert graph.files_touched(db, SESSION) == [
            "src/api.py", "src/new.py", "nb/explore.ipynb", "/etc/outside.conf"]
        assert graph.files_touched(db, "another") == ["x.py"]


def test_real_bash_payload_with_handled_error_text_is_not_a_failure(app: Path) -> None:
    """2.1.328's Bash payload: `ls` failed but the command ended with `echo done` (exit 0)."""
    run_hook("post-tool", at(payloads("PostToolUse")[1], app))
    assert _bugfixes() == []


def test_failing_command_gives_one_bugfix_stub_per_signature(app: Path) -> None:
    error = "Exit code 2\nsrc/api.ts(12,7): error TS2322: Type 'string' is not assignable."
    for _ in range(3):
        run_hook("post-tool", _failure(app, "npm run build", error))
    run_hook("post-tool", _failure(app, "NODE_ENV=prod npm run build --verbose", error))
    run_hook("post-tool", _bash(app, "python manage.py migrate",
                                stderr="Traceback (most recent call last):\n  File x\n"
                                       "django.db.utils.OperationalError: no such table: users"))
    stubs = _bugfixes()
    assert sorted(r.title for r in stubs) == [
        "npm run build failed: src/api.ts(12,7): error TS2322: Type 'string' is not assignable.",
        "python manage.py migrate failed: django.db.utils.OperationalError: no such table: "
        "users"]
    assert all(r.body == "" and r.source == "hook_observation" and r.session_id == SESSION
               and r.confidence == "inferred" for r in stubs)


def test_interrupted_call_is_ignored(app: Path) -> None:
    run_hook("post-tool", at(payloads("PostToolUseFailure")[2], app))
    assert _bugfixes() == []


def test_failing_test_run_outcome_files_and_stub(app: Path) -> None:
    run_hook("post-tool", at(payloads("PostToolUseFailure")[0], app))  # pytest, 1 failed
    tests = _meta("tests")
    assert len(tests) == 1
    assert tests[0]["outcome"] == "fail" and tests[0]["command"] == "pytest -q tests/test_api.py"
    assert tests[0]["files"] == ["tests/test_api.py"]
    assert tests[0]["summary"] == "1 failed, 3 passed in 0.31s"
    [stub] = _bugfixes()
    assert stub.title == ("pytest tests/test_api.py failed: FAILED tests/test_api.py::test_login "
                          "- AssertionError: assert 500 == 200")
    with Store.open() as db:
        linked = graph.entities_of(db, stub.id)
        assert [(node.name, rel) for node, rel in linked] == [("tests/test_api.py", "tests")]
        edges = db.rows("SELECT rel_type FROM edges WHERE from_id = ?", (SESSION,))
        assert [e[0] for e in edges] == ["tested"]


@pytest.mark.parametrize(("command", "stdout", "outcome"), [
    ("pytest -q", "....\n4 passed in 0.12s", "pass"),
    ("cd web && npm test", "Tests:       1 failed, 9 passed, 10 total", "fail"),
    ("go test ./...", "ok  \texample.com/app\t0.01s", "pass"),
    ("cargo test", "test result: FAILED. 3 passed; 1 failed", "fail"),
    ("yarn test src/button.test.tsx", " PASS  src/button.test.tsx", "pass"),
    ("uv run pytest tests/test_x.py::test_y", "1 passed", "pass"),
])
def test_test_runs_are_recorded(app: Path, command: str, stdout: str, outcome: str) -> None:
    run_hook("post-tool", _bash(app, command, stdout=stdout))
    [run] = _meta("tests")
    assert run["outcome"] == outcome
    assert bool(_bugfixes()) == (outcome == "fail")


def test_git_events_go_to_session_meta(app: Path) -> None:
    run_hook("post-tool", _bash(app, "git checkout -b feature/login"))
    run_hook("post-tool", _bash(app, 'git add -A && git commit -m "Add login retry"',
                                stdout="[feature/login 3f2a9c1] Add login retry\n 1 file changed"))
    run_hook("post-tool", _bash(app, "git switch main"))
    run_hook("post-tool", _bash(app, "git merge --no-ff feature/login"))
    run_hook("post-tool", _bash(app, "git status"))
    events = _meta("git")
    assert [e["op"] for e in events] == ["checkout", "commit", "switch", "merge"]
    assert events[0]["branch"] == "feature/login" and events[0]["created"] is True
    assert (events[1]["branch"], events[1]["sha"], events[1]["message"]) == (
        "feature/login", "3f2a9c1", "Add login retry")
    assert events[2]["branch"] == "main" and events[3]["branch"] == "feature/login"
    assert all(e["ok"] for e in events)


def test_secrets_are_redacted_before_storing(app: Path) -> None:
    key = "AKIA" + "ABCDEFGHIJKLMNOP"
    token = "ghp_" + "Zz09" * 10
    run_hook("post-tool", _bash(app, f"AWS_ACCESS_KEY_ID={key} pytest --token {token}",
                                stdout=f"FAILED tests/test_s3.py::test_upload - {token}\n"
                                       "1 failed"))
    run_hook("post-tool", _bash(app, f'git commit -m "rotate {token}"'))
    with Store.open() as db:
        dump = " ".join(str(tuple(row)) for table in ("sessions", "records", "nodes", "edges")
                        for row in db.rows(f"SELECT * FROM {table}"))
    assert key not in dump and token not in dump
    assert "[REDACTED:github-token]" in dump


TOKEN = "ghp_" + "Qx7" * 12


def test_file_names_are_redacted_and_bounded(app: Path, isolated_home: Path) -> None:
    base = at(payloads("PostToolUse")[0], app)
    run_hook("post-tool", {**base, "tool_input": {"file_path": f"{app}/keys/{TOKEN}.txt"}})
    run_hook("post-tool", {**base, "tool_input": {"file_path": f"{app}/{'d' * 200_000}.txt"}})
    run_hook("post-tool", _bash(app, f"pytest tests/{TOKEN}_test.py",
                                stdout=f"FAILED tests/{TOKEN}_test.py::test_a - boom\n1 failed"))
    with Store.open() as db:
        names = [row[0] for row in db.rows("SELECT name FROM nodes")]
        dump = " ".join(str(tuple(row)) for table in ("sessions", "records", "nodes", "edges")
                        for row in db.rows(f"SELECT * FROM {table}"))
    assert sorted(names) == ["keys/[REDACTED:github-token].txt",
                             "tests/[REDACTED:github-token]_test.py"]
    assert TOKEN not in dump
    assert _meta("tests")[0]["files"] == ["tests/[REDACTED:github-token]_test.py"]
    assert (isolated_home / "agentctx.db").stat().st_size < 1_000_000
    log = (isolated_home / "logs" / "hooks.log").read_text(encoding="utf-8")
    assert "file name is 200" in log and "the limit is 4096" in log


def _under_home(home: Path) -> bytes:
    """Every byte under the home: the store, its WAL, logs and anything else kept there."""
    return b"".join(path.read_bytes() for path in sorted(home.rglob("*")) if path.is_file())


@pytest.mark.parametrize("command", [
    "redis-cli -u redis://:{pw}@cache.internal:6379 ping",
    "curl -u deploy:{pw} https://ci.example.com/api",
    "mysql -h db -u root -p{pw} shop",
    "gcloud auth activate --key '{{\"private_key_id\": \"{pw}\"}}'",
])
def test_a_secret_in_the_command_is_gone_where_the_output_repeats_it(
        app: Path, isolated_home: Path, command: str) -> None:
    pw = "Hq4vN8sLw2Tz7Kd9"
    run_hook("post-tool", _failure(app, command.format(pw=pw),
                                   f"Exit code 1\nerror: auth failed for {pw}"))
    [stub] = _bugfixes()
    assert "auth failed for [REDACTED:" in stub.title, stub.title
    with Store.open() as db:
        db.execute("PRAGMA wal_checkpoint(PASSIVE)")
    assert pw.encode() not in _under_home(isolated_home)


def test_file_link_names_are_redacted_whole(app: Path, isolated_home: Path) -> None:
    aws = "wJalrXUtnFEMI/K7MDENG//bPxRfiCYEXAMPLEKE"  # normpath would fold its "//"
    sendgrid = "SG." + "Ab3dEf6hIj9lMn2pQr5tUv" + "." + "Wx8zAb1dEf4hJk"  # cut to 40 characters
    assert len(sendgrid) == 40 and len(aws) == 40
    base = at(payloads("PostToolUse")[0], app)
    run_hook("post-tool", {**base, "tool_input": {"file_path": f"{app}/cfg/{aws}"}})
    run_hook("post-tool", {**base, "tool_input": {"file_path": f"{app}/keys/{sendgrid}"}})
    with Store.open() as db:
        names = sorted(row[0] for row in db.rows("SELECT name FROM nodes"))
    assert names == ["cfg/[REDACTED:aws-secret-key]", "keys/[REDACTED:sendgrid-key]"]
    home = _under_home(isolated_home)
    for piece in (aws[:12], aws[-12:], sendgrid[3:25], sendgrid[-12:]):
        assert piece.encode() not in home


def test_other_tools_and_paused_projects_capture_nothing(app: Path) -> None:
    run_hook("post-tool", at(payloads("PostToolUse")[2], app))  # an MCP tool call
    with Store.open() as db:
        assert db.scalar("SELECT count(*) FROM nodes") == 0
        projects.set_paused(db, projects.resolve(db, str(app)).project.id, True)
    run_hook("post-tool", at(payloads("PostToolUse")[0], app))
    run_hook("post-tool", _failure(app, "make", "Exit code 2\nerror: no rule"))
    with Store.open() as db:
        assert db.scalar("SELECT count(*) FROM nodes") == 0
    assert _bugfixes() == []


def test_command_parsing() -> None:
    assert segments("FOO=1 sudo pytest -x && git push | tee log; echo ok") == [
        ["pytest", "-x"], ["git", "push"], ["tee", "log"], ["echo", "ok"]]
    assert signature("cd app && NODE_ENV=test npm run build -- --watch") == "npm run build"
    assert signature("python -m pytest -q tests/test_a.py::test_b") == (
        "python pytest tests/test_a.py::test_b")
    assert is_test_command(["python", "-m", "pytest"]) and is_test_command(["npm", "test"])
    assert is_test_command(["./gradlew", "test"]) and not is_test_command(["npm", "install"])
    assert not is_test_command(["pytestify"])
    assert named_test_files(["pytest", "tests/test_a.py::test_b", "-k", "x", "web/a.spec.ts"],
                      "FAILED tests/unit/test_c.py::test_d - boom") == [
        "tests/test_a.py", "web/a.spec.ts", "tests/unit/test_c.py"]
    assert error_line("Exit code 1\nsome noise\nValueError: bad input\n") == (
        "ValueError: bad input")
    assert error_line("Exit code 127\nbash: foo: command not found") == (
        "bash: foo: command not found")
