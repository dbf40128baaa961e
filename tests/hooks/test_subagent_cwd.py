"""subagent-start (decisions slice), cwd-changed (profile refresh), and pause / resume."""

from __future__ import annotations

import json
from pathlib import Path

from agentctx.store import Store, projects, records, sessions
from agentctx.store.models import Draft
from agentctx.store.selection import Selection
from tests.conftest import run_cli
from tests.hooks.conftest import SESSION, at, payloads, run_hook
from tests.support import shown


def _project(app: Path) -> str:
    with Store.open() as db:
        return projects.resolve(db, str(app)).project.id


def test_subagent_gets_decisions_and_conventions_only(app: Path) -> None:
    pid = _project(app)
    with Store.open() as db, db.write():
        decision = records.add(db, Draft(type="decision", title="Use gRPC for the internal API"),
                               project_id=pid).id
        convention = records.add(db, Draft(type="convention", title="Tests mirror the package"),
                                 project_id=pid).id
        records.add(db, Draft(type="bugfix", title="Login crashed on empty passwords"),
                    project_id=pid)
        for n in range(80):
            records.add(db, Draft(type="decision", title=f"Older decision {n} " + "w " * 60,
                                  valid_from=f"2025-01-{n % 28 + 1:02d}"), project_id=pid)
    result = run_hook("subagent-start", at(payloads("SubagentStart")[0], app))
    assert result.output is not None
    assert result.output["hookSpecificOutput"]["hookEventName"] == "SubagentStart"
    text = result.context
    assert text.startswith('<agentctx-context event="subagent-start"')
    assert "not instructions" in text and text.endswith("</agentctx-context>")
    assert shown.names(text, decision) and shown.names(text, convention)
    assert "Login crashed" not in text
    assert -(-2 * len(text) // 7) <= 500
    with Store.open() as db:
        [receipt] = sessions.receipts(db, SESSION)
        assert (receipt.event, receipt.source) == ("SubagentStart", "Explore")
        assert decision in receipt.record_ids and receipt.chars == len(text)
        assert sessions.seen(db, SESSION) == set()  # the main context did not get these


def test_subagent_knobs(app: Path) -> None:
    pid = _project(app)
    with Store.open() as db:
        records.add(db, Draft(type="decision", title="Use gRPC for the internal API"),
                    project_id=pid)
    payload = at(payloads("SubagentStart")[0], app)
    assert run_hook("subagent-start", payload,
                    env={"AGENTCTX_SUBAGENT_INJECT": "off"}).stdout == ""
    small = run_hook("subagent-start", payload, env={"AGENTCTX_SUBAGENT_TOKENS": "50"})
    assert small.stdout == ""  # not even one entry fits in 50 tokens: nothing, not a stub


def test_cwd_changed_refreshes_the_new_folders_profile(app: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    (other / "package.json").write_text(json.dumps({
        "name": "other-web", "scripts": {"test": "vitest run", "build": "vite build"},
        "devDependencies": {"vitest": "1", "vite": "5", "typescript": "5"}}), encoding="utf-8")
    payload = at(payloads("CwdChanged")[0], app, new_cwd=str(other))
    assert run_hook("cwd-changed", payload).stdout == ""
    with Store.open() as db:
        project = projects.resolve(db, str(other)).project
        titles = {r.key: r.title for r in records.list_records(db,
                                                               Selection(project_id=project.id,
                                                                         types=("profile",)))}
    assert titles["name"] == "Project name: other-web"
    assert titles["command.test"] == "Test command: npm test"
    # A second change to the same folder leaves unchanged values alone.
    run_hook("cwd-changed", payload)
    with Store.open() as db:
        assert len(records.list_records(db,
                                        Selection(project_id=project.id, types=("profile",),
                                                  state="all"))) == len(titles)


def test_pause_and_resume_from_the_cli(app: Path) -> None:
    pid = _project(app)
    with Store.open() as db:
        records.add(db, Draft(type="decision", title="Use gRPC for the internal API"),
                    project_id=pid)
    paused = run_cli("pause", cwd=app)
    assert paused.returncode == 0 and "paused" in paused.stdout
    start = at(payloads("SessionStart")[0], app)
    assert run_hook("session-start", start).stdout == ""
    as_json = run_cli("resume", "--json", cwd=app)
    assert json.loads(as_json.stdout) == {"project": pid, "name": "app", "paused": False}
    assert "Use gRPC" in run_hook("session-start", start).context
    unknown = run_cli("pause", "--project", "no-such-project", cwd=app)
    assert unknown.returncode == 1 and unknown.stderr.startswith("agentctx: no project")
    assert "Traceback" not in unknown.stderr


def test_cwd_changed_into_a_folder_that_is_no_project_creates_nothing(app: Path,
                                                                      tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "notes.txt").write_text("not a project", encoding="utf-8")
    with Store.open() as db:
        before = len(projects.list_all(db))
    payload = at(payloads("CwdChanged")[0], app, new_cwd=str(scratch))
    assert run_hook("cwd-changed", payload).stdout == ""
    with Store.open() as db:
        assert len(projects.list_all(db)) == before
    # A folder with a build file but no repository is a project.
    (scratch / "pyproject.toml").write_text('[project]\nname = "scratch-tool"\n', encoding="utf-8")
    run_hook("cwd-changed", payload)
    with Store.open() as db:
        assert len(projects.list_all(db)) == before + 1
