"""Applying an extraction to a real store: records, supersession, links, reinforcement."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentctx.core import config
from agentctx.extract.apply import Target, apply, handover_key, normalize, plan
from agentctx.extract.request import Extraction
from agentctx.store import Store, graph, records, sessions
from agentctx.store import projects as proj
from agentctx.store.models import GLOBAL_PROJECT, Draft
from agentctx.store.selection import Selection
from tests.conftest import SHARED
from tests.extract.builders import extraction


@pytest.fixture
def pid(store: Store, project_dir: Path) -> str:
    """The test project's id (created on first sight)."""
    return proj.resolve(store, str(project_dir)).project.id


def _target(pid: str, session: str = "sess-1", **options: Any) -> Target:
    options.setdefault("worktree", "/work/app")
    return Target(pid, session, project_root="/work/app", **options)


def _run(store: Store, result: dict[str, Any], target: Target, embedder: Any = None) -> Any:
    sessions.ensure(store, target.session_id, target.project_id)
    actions = plan(store, Extraction.model_validate(result), target, embedder)
    return actions, apply(store, actions, target)


def _decision(what: str, supersedes: str | None = None, why: str = "because") -> dict[str, Any]:
    return {"what": what, "rationale": why, "supersedes": supersedes, "confidence": "explicit"}


def _preference(rule: str, confidence: str = "inferred", scope: str = "global") -> dict[str, Any]:
    return {"category": "style", "rule": rule, "confidence": confidence, "scope": scope}


def test_every_field_becomes_records_linked_to_the_session(store: Store, pid: str) -> None:
    result = extraction(
        decisions=[_decision("Use gRPC instead of REST for the internal API", why="streaming")],
        conventions=[{"scope": "module", "convention": "Handlers never import the ORM",
                      "applies_to": ["src/api/", "/work/app/src/jobs"], "supersedes": None,
                      "confidence": "inferred"}],
        gotchas=[{"pattern": "Tests hang without await on the db fixture",
                  "why_it_matters": "The pool never opens."}],
        preferences=[_preference("Prefer small commits", "explicit", "project")],
        active_work={"current_task": "Retry in fetch_user()", "blockers": ["flaky mock"],
                     "next_steps": ["fix the mock", "add a test"], "open_questions": []})
    actions, applied = _run(store, result, _target(pid))
    assert [a.kind for a in actions] == ["add", "add", "add", "add", "handover"]
    assert applied.changes == 5
    by_type = {r.type: r for r in applied.written}
    decision = by_type["decision"]
    assert (decision.title, decision.body) == ("Use gRPC instead of REST for the internal API",
                                               "streaming")
    assert decision.source == "llm_extraction" and decision.session_id == "sess-1"
    assert decision.confidence == "explicit" and decision.project_id == pid
    assert by_type["convention"].confidence == "inferred"
    assert {(n.kind, n.name) for n, _rel in graph.entities_of(store, by_type["convention"].id)} \
        == {("module", "src/api"), ("module", "src/jobs")}
    assert by_type["discovery"].body == "The pool never opens."
    assert by_type["preference"].scope == "project" and by_type["preference"].project_id == pid
    handover = by_type["handover"]
    assert handover.key == handover_key("/work/app")
    assert "Blockers:\n- flaky mock" in handover.body and "- add a test" in handover.body
    for record in applied.written:
        assert any(e.rel_type == "derives_from" and e.to_id == "sess-1"
                   for e in graph.edges_of(store, record.id))


def test_the_same_content_twice_adds_nothing(store: Store, pid: str) -> None:
    result = extraction(decisions=[_decision("Use gRPC for internal calls")],
                        preferences=[_preference("Prefer tabs over spaces")],
                        gotchas=[{"pattern": "Port 5432 is taken by a local Postgres",
                                  "why_it_matters": "Stop it first."}],
                        active_work={"current_task": "Migrating", "blockers": [],
                                     "next_steps": [], "open_questions": []})
    _run(store, result, _target(pid))
    before = len(records.list_records(store, Selection(state="all")))
    changes_before = store.change_counter()
    actions, applied = _run(store, result, _target(pid))
    assert applied.changes == 0
    assert {a.kind for a in actions} == {"duplicate"}
    assert len(records.list_records(store, Selection(state="all"))) == before
    assert store.change_counter() == changes_before
    # case, punctuation and spacing do not make a new fact
    again = extraction(decisions=[_decision("use  gRPC for internal calls.")])
    assert _run(store, again, _target(pid, "sess-2"))[1].changes == 0


def test_supersedes_a_listed_decision_and_ignores_bad_ids(store: Store, pid: str) -> None:
    old = records.add(store, Draft(type="decision", title="Store uploads on local disk"),
                      project_id=pid)
    other = proj.resolve(store, "/").project.id
    foreign = records.add(store, Draft(type="decision", title="Other project's choice"),
                          project_id=other)
    pref = records.add(store, Draft(type="preference", title="Short functions"), project_id=pid)
    result = extraction(decisions=[
        _decision("Store uploads in S3", records.short_ids(store, [old.id])[old.id],
                  why="two app servers now"),
        _decision("Use boto3", "01NOSUCHID0000"),
        _decision("Use one bucket", foreign.id),
        _decision("Name buckets by env", pref.id),
        _decision("Retry uploads twice", old.id),  # already claimed by the first item
    ])
    actions, applied = _run(store, result, _target(pid))
    assert [a.kind for a in actions] == ["supersede", "add", "add", "add", "add"]
    assert "ignored" in actions[1].note
    successor = applied.written[0]
    history = records.history(store, old.id)
    assert [r.id for r in history] == [old.id, successor.id]
    assert records.get(store, old.id).superseded_by == successor.id
    assert records.supersession_note(store, successor.id, old.id) == "two app servers now"
    assert records.get(store, foreign.id).current and records.get(store, pref.id).current


def test_handover_supersedes_the_previous_one_of_its_worktree(store: Store, pid: str) -> None:
    work = {"current_task": "Step one", "blockers": [], "next_steps": [], "open_questions": []}
    first = _run(store, extraction(active_work=work), _target(pid))[1].written[0]
    second = _run(store, extraction(active_work=dict(work, current_task="Step two")),
                  _target(pid, "sess-2"))[1].written[0]
    assert records.get(store, first.id).superseded_by == second.id
    elsewhere = _run(store, extraction(active_work=work),
                     _target(pid, "sess-3", worktree="/work/app-feature"))[1].written[0]
    assert records.get(store, second.id).current and elsewhere.key != second.key
    # a backfilled, older handover never replaces the newer one
    old = _run(store, extraction(active_work=dict(work, current_task="Ancient")),
               _target(pid, "sess-0", valid_from="2020-01-01T00:00:00Z"))[0]
    assert [a.kind for a in old] == ["skip"]
    assert records.get(store, second.id).current
    # flush_ok writes nothing at all, even beside a stray entry
    flushed = extraction(flush_ok=True, decisions=[_decision("Say hello")], active_work=work)
    assert plan(store, Extraction.model_validate(flushed), _target(pid)) == []


def test_bugfix_stubs_of_the_session_are_enriched_once(store: Store, pid: str) -> None:
    sessions.ensure(store, "sess-1", pid)
    stub = records.add(store, Draft(type="bugfix", title="pytest: ImportError in api/users.py",
                                    source="hook_observation", session_id="sess-1"),
                       project_id=pid)
    foreign = records.add(store, Draft(type="bugfix", title="other session's error",
                                       source="hook_observation", session_id="sess-9"),
                          project_id=pid)
    short = records.short_ids(store, [stub.id])[stub.id]
    note = {"stub_id": short, "cause": "A circular import.", "fix": "Moved the import."}
    result = extraction(bugfixes=[note, dict(note, stub_id=foreign.id), dict(note, stub_id="zz")])
    actions, applied = _run(store, result, _target(pid))
    assert [a.kind for a in actions] == ["enrich", "skip", "skip"]
    enriched = records.get(store, stub.id)
    assert enriched.body == "Cause: A circular import.\nFix: Moved the import."
    assert enriched.id == stub.id and applied.enriched[0].id == stub.id
    assert records.get(store, foreign.id).body == ""
    assert next(a.kind for a in _run(store, result, _target(pid))[0]) == "duplicate"


def test_global_preferences_reinforce_across_distinct_sessions(store: Store, pid: str) -> None:
    rule = "Prefer arrow functions over function declarations"
    created = _run(store, extraction(preferences=[_preference(rule)]), _target(pid, "s1"))
    record = created[1].written[0]
    assert (record.project_id, record.confidence, record.reinforce_count) == (
        GLOBAL_PROJECT, "inferred", 0)
    # the same session again counts once
    again = _run(store, extraction(preferences=[_preference(rule)]), _target(pid, "s1"))
    assert [a.kind for a in again[0]] == ["duplicate"]
    # a second session, same normalized text: +1, still inferred (2 of 3 sessions)
    second = _run(store, extraction(preferences=[_preference(rule.lower() + ".")]),
                  _target(pid, "s2"))
    assert [a.kind for a in second[0]] == ["reinforce"]
    assert records.get(store, record.id).reinforce_count == 1
    assert records.get(store, record.id).confidence == "inferred"
    # a third session, reworded: FTS similarity finds it; three sessions make it reinforced
    third = _run(store, extraction(preferences=[
        _preference("Prefers arrow functions over function declarations")]), _target(pid, "s3"))
    assert [a.kind for a in third[0]] == ["reinforce"]
    now = records.get(store, record.id)
    assert (now.reinforce_count, now.confidence) == (2, "reinforced")
    assert len(records.list_records(store,
                                    Selection(project_id=GLOBAL_PROJECT,
                                              types=("preference",)))) == 1


def test_an_explicit_statement_reinforces_at_once(store: Store, pid: str) -> None:
    rule = "Keep commit subjects under 50 characters"
    record = _run(store, extraction(preferences=[_preference(rule)]),
                  _target(pid, "s1"))[1].written[0]
    _run(store, extraction(preferences=[_preference(rule, "explicit")]), _target(pid, "s2"))
    assert records.get(store, record.id).confidence == "reinforced"


def test_unrelated_or_merely_overlapping_preferences_stay_apart(store: Store, pid: str) -> None:
    _run(store, extraction(preferences=[_preference(
        "When writing Python use type hints, dataclasses, pathlib and f-strings, never "
        "os.path or percent formatting")]), _target(pid, "s1"))
    result = extraction(preferences=[_preference("Use tabs for indentation"),
                                     _preference("Use dataclasses")])
    actions, _applied = _run(store, result, _target(pid, "s2"))
    assert [a.kind for a in actions] == ["add", "add"]
    assert len(records.list_records(store,
                                    Selection(project_id=GLOBAL_PROJECT,
                                              types=("preference",)))) == 3


def test_embeddings_match_a_paraphrase_that_text_search_misses(
        store: Store, pid: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the real distilled model, cosine >= 0.92 reinforces; without it, a new record."""
    folder = SHARED / "models" / "minilm-static-256"
    if not folder.is_dir():
        pytest.skip("the shared embedding model is not available")
    pytest.importorskip("agentctx.ml.embedder")
    from agentctx.extract.run import _embedder

    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", str(folder))
    model = _embedder(config.Config.load())
    assert model is not None
    original = "Prefer arrow functions over function declarations"
    paraphrase = "Use arrow functions instead of function declarations"
    record = _run(store, extraction(preferences=[_preference(original)]),
                  _target(pid, "s1"))[1].written[0]
    without = plan(store, Extraction.model_validate(extraction(preferences=[
        _preference(paraphrase)])), _target(pid, "s2"))
    assert [a.kind for a in without] == ["add"]
    with_model = _run(store, extraction(preferences=[_preference(paraphrase)]),
                      _target(pid, "s2"), embedder=model)[0]
    assert [(a.kind, a.record_id) for a in with_model] == [("reinforce", record.id)]


def test_normalize_ignores_case_accents_and_punctuation() -> None:
    assert normalize("  Use gRPC — NOT REST! ") == normalize("use grpc not rest")
    assert normalize("Café") == normalize("cafe")


def test_a_cleared_preference_is_not_relearned_unless_stated_explicitly(
        store: Store, pid: str) -> None:
    from agentctx.store import upkeep

    rule = "Prefer arrow functions over function declarations"
    record = _run(store, extraction(preferences=[_preference(rule)]),
                  _target(pid, "s1"))[1].written[0]
    upkeep.retire(store, record.id, "we use function declarations now", actor="cli")
    # inferred again, same words or reworded: skipped, pointing at the cleared record
    for session, said in (("s2", rule), ("s3", "Prefers arrow functions over function "
                                               "declarations")):
        actions, applied = _run(store, extraction(preferences=[_preference(said)]),
                                _target(pid, session))
        assert [(a.kind, a.record_id) for a in actions] == [("skip", record.id)]
        assert applied.changes == 0
    assert records.list_records(store,
                                Selection(project_id=GLOBAL_PROJECT, types=("preference",))) == []
    # an unrelated inferred preference is still learned
    other = _run(store, extraction(preferences=[_preference("Use tabs for indentation")]),
                 _target(pid, "s4"))
    assert [a.kind for a in other[0]] == ["add"]
    # the developer states it explicitly: it comes back as a new record
    back = _run(store, extraction(preferences=[_preference(rule, "explicit")]),
                _target(pid, "s5"))
    assert [a.kind for a in back[0]] == ["add"]
    assert back[1].written[0].id != record.id
