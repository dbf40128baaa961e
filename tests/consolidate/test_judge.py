"""Merging near-duplicates on the model's word, against a loopback Messages API."""

from __future__ import annotations

import json
from pathlib import Path

from agentctx.store import Store, ledger
from agentctx.store import projects as proj
from agentctx.store import records as rec
from tests.conftest import run_cli
from tests.support.messages_standin import (
    MessagesStandIn,
    Reply,
    StandInRequest,
    error_reply,
    json_reply,
)

BODY = "Every hook reads the session digest before the prompt."


def _pair(project_dir: Path, isolated_home: Path) -> tuple[str, str, str]:
    with Store.open(isolated_home / "agentctx.db") as db:
        project_id = proj.resolve(db, str(project_dir)).project.id
    ids = []
    for valid_from, body in (("2026-01-01", BODY), ("2026-03-01", BODY + " Again.")):
        made = run_cli("record", "decision", "Hook reads the session digest", "--body", body,
                       "--valid-from", valid_from, "--json", cwd=project_dir)
        assert made.returncode == 0, made.stderr
        ids.append(json.loads(made.stdout)["id"])
    return project_id, ids[0], ids[1]


def test_confirmed_pair_is_merged_and_the_call_is_in_the_ledger(
        project_dir: Path, isolated_home: Path, tiny_model_dir: Path) -> None:
    project_id, older, newer = _pair(project_dir, isolated_home)

    def script(request: StandInRequest) -> Reply:
        return json_reply({"same": True, "reason": "Both say hooks read the digest first."})

    with MessagesStandIn(script) as standin:
        env = {"AGENTCTX_EMBED_MODEL": str(tiny_model_dir), "ANTHROPIC_API_KEY": "test-key",
               "ANTHROPIC_BASE_URL": standin.base_url}
        result = run_cli("consolidate", "--json", cwd=project_dir, env=env)
        assert result.returncode == 0, result.stderr
        report = json.loads(result.stdout)
        assert report["merged"] == 1 and report["near_duplicates"] == 1
        sent = standin.message_requests()[0].body
        assert sent["model"] == "claude-haiku-4-5" and sent["temperature"] == 0.0
        assert "Hook reads the session digest" in json.dumps(sent["messages"])
    with Store.open(isolated_home / "agentctx.db") as db:
        assert rec.get(db, older).superseded_by == newer and rec.get(db, newer).current
        note = rec.supersession_note(db, newer, older)
        assert note is not None and "Both say hooks read the digest first." in note
        calls = db.rows("SELECT purpose, project_id, ok FROM llm_calls")
        assert [tuple(c) for c in calls] == [("merge", project_id, 1)]
        assert ledger.totals(db).calls == 1


def test_distinct_or_failed_answers_change_nothing(project_dir: Path, isolated_home: Path,
                                                   tiny_model_dir: Path) -> None:
    _project, older, newer = _pair(project_dir, isolated_home)
    replies = iter([error_reply(400, "invalid_request_error", "bad request"),
                    json_reply({"same": False, "reason": "Different hooks."})])

    with MessagesStandIn(lambda request: next(replies)) as standin:
        env = {"AGENTCTX_EMBED_MODEL": str(tiny_model_dir), "ANTHROPIC_API_KEY": "test-key",
               "ANTHROPIC_BASE_URL": standin.base_url}
        failed = json.loads(run_cli("consolidate", "--json", cwd=project_dir, env=env).stdout)
        assert failed["merged"] == 0 and failed["judged_distinct"] == 0
        distinct = json.loads(run_cli("consolidate", "--json", cwd=project_dir, env=env).stdout)
        assert distinct["judged_distinct"] == 1
        third = json.loads(run_cli("consolidate", "--json", cwd=project_dir, env=env).stdout)
        assert third["judged_distinct"] == 0 and len(standin.message_requests()) == 2
    with Store.open(isolated_home / "agentctx.db") as db:
        assert rec.get(db, older).current and rec.get(db, newer).current
        assert db.scalar("SELECT count(*) FROM llm_calls WHERE purpose = 'merge'") == 1
    status = run_cli("status", "--json", cwd=project_dir)
    assert json.loads(status.stdout).get("merge_candidates", []) == []


def test_without_an_api_key_pairs_stay_candidates(project_dir: Path, isolated_home: Path,
                                                  tiny_model_dir: Path) -> None:
    _project, older, newer = _pair(project_dir, isolated_home)
    env = {"AGENTCTX_EMBED_MODEL": str(tiny_model_dir)}
    report = json.loads(run_cli("consolidate", "--json", cwd=project_dir, env=env).stdout)
    assert report["near_duplicates"] == 1 and report["merged"] == 0
    status = json.loads(run_cli("status", "--json", cwd=project_dir).stdout)
    listed = status["merge_candidates"]
    assert [(c["older_id"], c["newer_id"]) for c in listed] == [(older, newer)]
