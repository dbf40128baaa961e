"""stop and session-end: detached background work, the dirty handshake, finish-session."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from agentctx.core import background
from agentctx.hooks.session_end import finish_args
from agentctx.store import Store, projects, records, sessions
from agentctx.store.selection import Selection
from tests.conftest import run_cli
from tests.hooks.conftest import SESSION, at, payloads, run_hook
from tests.support.messages_standin import Reply, StandInRequest


def _wait_for(path: Path, needle: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            text = path.read_text(encoding="utf-8", errors="replace")
            if needle in text:
                return text
        time.sleep(0.2)
    raise AssertionError(f"{needle!r} never appeared in {path}")


def test_stop_spawns_the_extraction_child(app: Path, tmp_path: Path,
                                          isolated_home: Path) -> None:
    transcript = tmp_path / "session.jsonl"
    transcript.write_text('{"type": "user", "message": {"role": "user", "content": "hi"}}\n',
                          encoding="utf-8")
    stop = at(payloads("Stop")[0], app, transcript_path=str(transcript))
    started = time.monotonic()
    assert run_hook("stop", stop).stdout == ""
    assert time.monotonic() - started < 30
    # The detached child is the real `agentctx extract`; without an API key it makes no call
    # and says so in its log, which proves it ran with this session's arguments.
    _wait_for(isolated_home / "logs" / "extract.log", SESSION[:8])
    with Store.open() as db:
        session = sessions.get(db, SESSION)
        assert session is not None and session.transcript_path == str(transcript)


def test_stop_marks_the_session_dirty_while_extraction_runs(app: Path,
                                                            isolated_home: Path) -> None:
    stop = at(payloads("Stop")[0], app)
    with background.exclusive(f"extract-{SESSION}") as held:
        assert held
        run_hook("stop", stop)
        with Store.open() as db:
            assert sessions.take_dirty(db, SESSION) is True
            assert sessions.take_dirty(db, SESSION) is False
    assert not (isolated_home / "logs" / "extract.log").exists()


def test_stop_does_nothing_with_llm_off(app: Path, isolated_home: Path) -> None:
    run_hook("stop", at(payloads("Stop")[0], app), env={"AGENTCTX_LLM": "off"})
    assert not (isolated_home / "logs" / "extract.log").exists()
    with Store.open() as db:
        assert sessions.get(db, SESSION) is None


def test_session_end_ends_the_session_and_spawns_finish(app: Path, isolated_home: Path) -> None:
    run_hook("session-start", at(payloads("SessionStart")[0], app))
    end = at(payloads("SessionEnd")[0], app)
    assert run_hook("session-end", end, env={"AGENTCTX_LLM": "off",
                                             "AGENTCTX_EMBEDDINGS": "off"}).stdout == ""
    with Store.open() as db:
        session = sessions.get(db, SESSION)
        assert session is not None and session.ended_at is not None
    log = _wait_for(isolated_home / "logs" / "finish-session.log", "agentctx consolidate")
    assert "agentctx extract" not in log  # llm off: no extraction step


def test_finish_args() -> None:
    assert finish_args("s1", "p1", "/t.jsonl") == [
        "finish-session", "--session-id", "s1", "--project", "p1", "--transcript", "/t.jsonl"]
    assert finish_args("s1", "p1", None) == ["finish-session", "--session-id", "s1",
                                             "--project", "p1"]


def test_finish_session_runs_both_steps_and_logs_failures(app: Path, tmp_path: Path,
                                                          hook_log: Callable[[], list[str]],
                                                          ) -> None:
    with Store.open() as db:
        pid = projects.resolve(db, str(app)).project.id
    missing = tmp_path / "gone.jsonl"
    done = run_cli("finish-session", "--session-id", SESSION, "--project", pid,
                   "--transcript", str(missing), env={"AGENTCTX_EMBEDDINGS": "off"})
    assert done.returncode == 0, done.stderr
    assert "agentctx extract started" in done.stdout
    assert "agentctx consolidate started" in done.stdout
    # extract refuses a missing transcript: one hook-log line names the step that failed.
    assert any("agentctx extract exited with" in line for line in hook_log())


def test_finish_session_is_single_per_session(app: Path) -> None:
    with background.exclusive(f"finish-{SESSION}") as held:
        assert held
        done = run_cli("finish-session", "--session-id", SESSION, "--project", "p")
    assert done.returncode == 0 and "already running" in done.stdout



# ------------------------------------------------------------------ the children's sys.path

# Common names a project may have at its root, imported by the children but not by a hook.
_PLANTED = ("logging", "secrets")


def _plant_modules(folder: Path, marker: Path) -> None:
    """Project files named like standard modules that leave ``marker`` when imported."""
    for name in _PLANTED:
        (folder / f"{name}.py").write_text(
            "import os\n"
            f"with open({str(marker)!r}, 'a') as _f:\n"
            f"    _f.write({name!r} + ' imported by ' + str(os.getpid()) + '\\n')\n",
            encoding="utf-8")


def _conversation(path: Path, cwd: Path) -> Path:
    from tests.extract.builders import TranscriptWriter, conversation

    writer = TranscriptWriter(path, session_id=SESSION, cwd=str(cwd))
    conversation(writer, 3)
    return writer.save()


def _decided(request: StandInRequest) -> Reply:
    from tests.extract.builders import extraction
    from tests.support.messages_standin import json_reply

    return json_reply(extraction(decisions=[{
        "what": "Use gRPC for the internal API", "rationale": "REST was too slow",
        "supersedes": None, "confidence": "explicit"}]))


def test_the_extraction_child_never_imports_the_projects_files(app: Path, tmp_path: Path,
                                                                isolated_home: Path) -> None:
    from tests.support.messages_standin import MessagesStandIn

    marker = tmp_path / "imported.txt"
    _plant_modules(app, marker)
    transcript = _conversation(tmp_path / "session.jsonl", app)
    stop = at(payloads("Stop")[0], app, transcript_path=str(transcript))
    with MessagesStandIn(_decided) as standin:
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": standin.base_url,
               "AGENTCTX_EXTRACT_MIN_NEW_TOKENS": "0", "AGENTCTX_EMBEDDINGS": "off",
               "PYTHONPATH": str(app)}  # direnv-style: the project on PYTHONPATH too
        run_hook("stop", stop, cwd=app, env=env, launcher=True)  # as Claude Code runs it
        log = _wait_for(isolated_home / "logs" / "extract.log", f"session={SESSION}")
        deadline = time.monotonic() + 60
        while "extracted:" not in log and "failed" not in log and time.monotonic() < deadline:
            time.sleep(0.2)
            log = (isolated_home / "logs" / "extract.log").read_text(encoding="utf-8")
        assert len(standin.message_requests()) == 1
    assert not marker.exists(), marker.read_text(encoding="utf-8")
    assert "extracted: 1 new decision" in log, log
    with Store.open() as db:
        pid = projects.resolve(db, str(app)).project.id
        titles = [r.title for r in records.list_records(db,
                                                        Selection(project_id=pid,
                                                                  types=("decision",)))]
    assert titles == ["Use gRPC for the internal API"]


def test_the_finishing_child_and_its_steps_never_import_the_projects_files(
        app: Path, tmp_path: Path, isolated_home: Path) -> None:
    from tests.support.messages_standin import MessagesStandIn

    marker = tmp_path / "imported.txt"
    _plant_modules(app, marker)
    transcript = _conversation(tmp_path / "session.jsonl", app)
    end = at(payloads("SessionEnd")[0], app, transcript_path=str(transcript))
    with MessagesStandIn(_decided) as standin:
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": standin.base_url,
               "AGENTCTX_EMBEDDINGS": "off", "PYTHONPATH": str(app),
               "PYTHONSTARTUP": str(app / "logging.py")}
        run_hook("session-end", end, cwd=app, env=env, launcher=True)
        log = _wait_for(isolated_home / "logs" / "finish-session.log", "agentctx consolidate ")
        deadline = time.monotonic() + 60
        while not any(word in log for word in ("consolidate done", "consolidate exited")) and \
                time.monotonic() < deadline:
            time.sleep(0.2)
            log = (isolated_home / "logs" / "finish-session.log").read_text(encoding="utf-8")
        assert len(standin.message_requests()) == 1
    assert not marker.exists(), marker.read_text(encoding="utf-8")
    assert "agentctx extract done" in log and "agentctx consolidate done" in log, log
