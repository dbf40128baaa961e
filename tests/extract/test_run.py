"""Whole extraction runs against a real store, with the API behind httpx2.MockTransport."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx2
import pytest

from agentctx.core import background, config
from agentctx.extract import request, tiers
from agentctx.extract.run import CAP_META_KEY, Request, run
from agentctx.store import Store, ledger, records, sessions
from agentctx.store import projects as proj
from agentctx.store.models import Draft
from agentctx.store.selection import Selection
from tests.extract.builders import FakeAPI, TranscriptWriter, api_message, conversation, extraction

SECRET = "ghp_" + "a1B2c3D4e5" * 4

DECIDED = extraction(
    decisions=[{"what": "Use gRPC instead of REST for the internal API",
                "rationale": "The developer wants streaming.", "supersedes": None,
                "confidence": "explicit"}],
    active_work={"current_task": "Writing the proto files", "blockers": [],
                 "next_steps": ["Generate the stubs"], "open_questions": []})


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    """An API key in the environment (the mock transport never sends it anywhere)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-for-the-mock-transport")


@pytest.fixture
def writer(tmp_path: Path, project_dir: Path) -> TranscriptWriter:
    """A transcript of a session run in the test project."""
    writer = TranscriptWriter(tmp_path / "claude" / "session.jsonl", cwd=str(project_dir),
                              session_id="5c2d8e41-1111-4222-8333-944455556666")
    writer.user("We decided to use gRPC instead of REST for the internal API. "
                f"My token is {SECRET}, keep it out of the notes.")
    writer.assistant("Noted. I'll write the proto files.",
                     tools=[("Write", {"file_path": str(project_dir / "api.proto"),
                                       "content": "syntax = 'proto3';"})], results=["ok"])
    writer.save()
    return writer


def _open() -> Store:
    return Store.open()


def _session(db: Store, writer: TranscriptWriter) -> Any:
    return sessions.get(db, writer.session_id)


def test_a_run_sends_the_redacted_slice_and_writes_records_and_ledger(
        key: None, writer: TranscriptWriter, project_dir: Path) -> None:
    api = FakeAPI(lambda body: api_message(body, DECIDED, usage={
        "input_tokens": 700, "output_tokens": 250, "cache_creation_input_tokens": 6000,
        "cache_read_input_tokens": 0}))
    outcome = run(Request(writer.session_id, str(writer.path)), http_client=api.client())
    assert outcome.status == "extracted", outcome.reason
    (body,) = api.bodies
    assert body["model"] == "claude-haiku-4-5"
    assert body["system"][0]["cache_control"]["type"] == "ephemeral"
    assert body["system"][0]["text"] == request.system_prefix()
    assert body["output_config"]["format"]["schema"] == request.output_schema()
    sent = FakeAPI.user_text(body)
    assert "We decided to use gRPC instead of REST for the internal API." in sent
    assert "→ Write(" in sent
    assert SECRET not in json.dumps(body) and "[REDACTED:github-token]" in sent
    with _open() as db:
        pid = proj.resolve(db, str(project_dir)).project.id
        titles = {r.type: r.title for r in records.list_records(db, Selection(project_id=pid))}
        assert titles["decision"] == "Use gRPC instead of REST for the internal API"
        assert titles["handover"] == "Handover: Writing the proto files"
        session = _session(db, writer)
        assert session.project_id == pid
        usd = (700 * 1 + 250 * 5 + 6000 * 2) / 1e6
        assert session.extraction_cost_usd == pytest.approx(usd)
        totals = ledger.totals(db, session_id=writer.session_id)
        assert (totals.calls, totals.input_tokens, totals.cache_write_tokens) == (1, 700, 6000)
        assert sessions.extract_offset(db, writer.session_id) == writer.path.stat().st_size
        assert session.meta["extract_last"]["status"] == "extracted"
    log = (config.home() / "logs" / "extract.log").read_text(encoding="utf-8")
    assert "extracted: 1 new decision, 1 handover" in log


def test_only_new_content_is_sent_with_a_context_lead_in(
        key: None, writer: TranscriptWriter) -> None:
    api = FakeAPI(lambda body: api_message(body, DECIDED))
    run(Request(writer.session_id, str(writer.path)), http_client=api.client())
    nothing = run(Request(writer.session_id, str(writer.path)), http_client=api.client())
    assert nothing.status == "nothing-new" and len(api.bodies) == 1
    count = len(writer.lines)
    writer.user("Also, the gateway should translate REST to gRPC for old clients.")
    writer.append_saved(count)
    second = run(Request(writer.session_id, str(writer.path)), http_client=api.client())
    assert second.status == "extracted"
    text = FakeAPI.user_text(api.bodies[1])
    context, new = text.split("NEW IN THIS SESSION", 1)
    assert "ALREADY PROCESSED (context only)" in context and "proto files" in context
    assert "gateway should translate" in new and "We decided" not in new
    with _open() as db:  # the same decision again is no duplicate
        assert len(records.list_records(db, Selection(types=("decision",)))) == 1


def test_small_deltas_wait_for_min_new_tokens(key: None, writer: TranscriptWriter) -> None:
    api = FakeAPI(lambda body: api_message(body, DECIDED))
    outcome = run(Request(writer.session_id, str(writer.path), min_new_tokens=3000),
                  http_client=api.client())
    assert outcome.status == "skipped" and "waiting for 3,000" in outcome.reason
    assert api.bodies == []
    with _open() as db:
        assert sessions.extract_offset(db, writer.session_id) == 0


def test_no_key_means_one_log_line_no_call_no_offset(
        writer: TranscriptWriter, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "  ")
    api = FakeAPI(lambda body: api_message(body, DECIDED))
    outcome = run(Request(writer.session_id, str(writer.path)), http_client=api.client())
    assert outcome.status == "skipped" and "ANTHROPIC_API_KEY" in outcome.reason
    assert api.bodies == []
    lines = (config.home() / "logs" / "extract.log").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 and "no ANTHROPIC_API_KEY" in lines[0]
    with _open() as db:
        assert sessions.extract_offset(db, writer.session_id) == 0
        assert records.list_records(db, Selection()) == []


def test_llm_off_makes_no_call(key: None, writer: TranscriptWriter,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    config.set_value("llm", "off")
    api = FakeAPI(lambda body: api_message(body, DECIDED))
    outcome = run(Request(writer.session_id, str(writer.path)), http_client=api.client())
    assert outcome.status == "skipped" and "llm is off" in outcome.reason
    assert api.bodies == []


def test_the_cost_cap_stops_calls_and_says_so(key: None, writer: TranscriptWriter,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTX_LLM_COST_CAP_USD", "0.001")
    api = FakeAPI(lambda body: api_message(body, DECIDED))
    outcome = run(Request(writer.session_id, str(writer.path)), http_client=api.client())
    assert outcome.status == "skipped" and "cost cap reached" in outcome.reason
    assert api.bodies == []
    with _open() as db:
        meta = _session(db, writer).meta
        assert meta[CAP_META_KEY]["cap_usd"] == 0.001
        assert sessions.extract_offset(db, writer.session_id) == 0
    monkeypatch.setenv("AGENTCTX_LLM_COST_CAP_USD", "0.25")  # raised: it runs, the note clears
    assert run(Request(writer.session_id, str(writer.path)),
               http_client=api.client()).status == "extracted"
    with _open() as db:
        assert _session(db, writer).meta[CAP_META_KEY] is None


def test_api_errors_are_retried_once_logged_and_leave_the_offset(
        key: None, writer: TranscriptWriter) -> None:
    api = FakeAPI(lambda body: httpx2.Response(529, json={"type": "error", "error": {
        "type": "overloaded_error", "message": "Overloaded"}}))
    outcome = run(Request(writer.session_id, str(writer.path)), http_client=api.client())
    assert outcome.status == "failed" and "529" in outcome.reason
    assert len(api.bodies) == 2
    with _open() as db:
        assert sessions.extract_offset(db, writer.session_id) == 0
        assert _session(db, writer).meta["extract_last"]["status"] == "failed"
    log = (config.home() / "logs" / "extract.log").read_text(encoding="utf-8")
    assert "failed: API error 529: Overloaded" in log


def test_a_running_extraction_marks_the_session_dirty_and_goes_again(
        key: None, writer: TranscriptWriter) -> None:
    """The Stop hook's handshake: a second run while one holds the lock is not lost."""
    appended: list[int] = []

    def script(body: dict[str, Any]) -> Any:
        if not appended:  # a new turn lands while the first call is in flight
            appended.append(len(writer.lines))
            writer.user("One more thing: the proto files live in proto/.")
            writer.append_saved(appended[0])
            busy = run(Request(writer.session_id, str(writer.path)))
            assert busy.status == "busy"
        return api_message(body, DECIDED)

    api = FakeAPI(script)
    outcome = run(Request(writer.session_id, str(writer.path)), http_client=api.client())
    assert outcome.status == "extracted"
    assert len(api.bodies) == 2
    assert "proto files live in proto/" in FakeAPI.user_text(api.bodies[1])
    with _open() as db:
        assert sessions.extract_offset(db, writer.session_id) == writer.path.stat().st_size
        assert not sessions.take_dirty(db, writer.session_id)
    assert not background.is_locked(f"extract-{writer.session_id}")


def test_records_go_to_the_project_the_hooks_saw(key: None, writer: TranscriptWriter,
                                                 tmp_path: Path) -> None:
    with _open() as db:
        other = proj.resolve(db, str(tmp_path / "elsewhere")).project.id
        sessions.ensure(db, writer.session_id, other)
    api = FakeAPI(lambda body: api_message(body, DECIDED))
    run(Request(writer.session_id, str(writer.path)), http_client=api.client())
    with _open() as db:
        assert {r.project_id for r in records.list_records(db, Selection())} == {other}


def test_bugfix_stubs_and_active_records_are_listed_for_the_model(
        key: None, writer: TranscriptWriter, project_dir: Path) -> None:
    with _open() as db:
        pid = proj.resolve(db, str(project_dir)).project.id
        sessions.ensure(db, writer.session_id, pid)
        old = records.add(db, Draft(type="decision", title="Use REST for the internal API"),
                          project_id=pid)
        stub = records.add(db, Draft(type="bugfix", title="ls: cannot access /nonexistent",
                                     source="hook_observation", session_id=writer.session_id),
                           project_id=pid)
        short = records.short_ids(db, [old.id, stub.id])

    def script(body: dict[str, Any]) -> Any:
        listed = body["system"][1]["text"]
        old_match = re.search(r"(\w+) - decision - Use REST", listed)
        stub_match = re.search(r"(\w+) - bugfix - ls: cannot", listed)
        assert old_match is not None and stub_match is not None
        old_id, stub_id = old_match.group(1), stub_match.group(1)
        result = json.loads(json.dumps(DECIDED))
        result["decisions"][0]["supersedes"] = old_id
        result["bugfixes"] = [{"stub_id": stub_id, "cause": "Wrong path.", "fix": "Fixed it."}]
        return api_message(body, result)

    api = FakeAPI(script)
    assert run(Request(writer.session_id, str(writer.path)),
               http_client=api.client()).status == "extracted"
    listed = api.bodies[0]["system"][1]["text"]
    assert f"{short[old.id]} - decision - Use REST for the internal API" in listed
    with _open() as db:
        assert not records.get(db, old.id).current
        assert records.get(db, stub.id).body == "Cause: Wrong path.\nFix: Fixed it."


def test_a_long_session_is_map_reduced_with_the_cache_written_first(
        key: None, tmp_path: Path, project_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTX_LLM_COST_CAP_USD", "1.0")
    writer = TranscriptWriter(tmp_path / "long.jsonl", cwd=str(project_dir))
    conversation(writer, 400)
    writer.save()
    order: list[str] = []

    def script(body: dict[str, Any]) -> Any:
        text = FakeAPI.user_text(body)
        if text.startswith("Below are the extraction results"):
            order.append("synthesis")
            return api_message(body, DECIDED)
        part = re.search(r"part (\d+) of (\d+)", text)
        assert part, text[:200]
        order.append(part.group(1))
        return api_message(body, extraction(gotchas=[{
            "pattern": f"Gotcha of part {part.group(1)}", "why_it_matters": "x"}]))

    api = FakeAPI(script)
    outcome = run(Request(writer.session_id, str(writer.path)), http_client=api.client())
    assert outcome.status == "extracted", outcome.reason
    assert outcome.tier is not None and outcome.tier.tier == 3
    parts = len(outcome.tier.slices)
    assert order[0] == "1" and order[-1] == "synthesis"
    assert sorted(order[1:-1], key=int) == [str(n) for n in range(2, parts + 1)]
    synthesis = FakeAPI.user_text(api.bodies[-1])
    assert all(f"Gotcha of part {n}" in synthesis for n in range(1, parts + 1))
    assert all(b["system"][0]["text"] == request.system_prefix() for b in api.bodies)
    with _open() as db:
        purposes = [row[0] for row in db.rows("SELECT purpose FROM llm_calls ORDER BY id")]
    assert purposes == ["extract-map"] * parts + ["extract-synthesis"]
    assert all(len(FakeAPI.user_text(b)) <= tiers.CHUNK_TOKENS * 3.5 + 400
               for b in api.bodies[:-1])


def test_dry_run_calls_but_writes_nothing(key: None, writer: TranscriptWriter,
                                          project_dir: Path) -> None:
    with _open() as db:
        pid = proj.resolve(db, str(project_dir)).project.id
        records.add(db, Draft(type="decision", title="Use REST for the internal API"),
                    project_id=pid)
    db_file = config.db_path()
    before = db_file.read_bytes()
    api = FakeAPI(lambda body: api_message(body, DECIDED))
    outcome = run(Request(writer.session_id, str(writer.path), dry_run=True),
                  http_client=api.client())
    assert outcome.status == "planned" and len(api.bodies) == 1
    assert [a.kind for a in outcome.actions] == ["add", "handover"]
    assert outcome.usd > 0
    with _open() as db:
        assert sessions.get(db, writer.session_id) is None
        assert ledger.totals(db).calls == 0
        titles = [r.title for r in records.list_records(db, Selection())]
        assert titles == ["Use REST for the internal API"]
    assert db_file.read_bytes() == before


def test_dry_run_without_a_store_creates_none(key: None, writer: TranscriptWriter) -> None:
    api = FakeAPI(lambda body: api_message(body, DECIDED))
    outcome = run(Request(writer.session_id, str(writer.path), dry_run=True),
                  http_client=api.client())
    assert outcome.status == "planned" and len(outcome.actions) == 2
    assert not config.db_path().exists()


def test_bad_input_fails_with_one_reason_and_no_traceback(tmp_path: Path) -> None:
    outcome = run(Request("s", str(tmp_path / "missing.jsonl")))
    assert outcome.status == "failed" and "no transcript" in outcome.reason
    assert run(Request("unknown-session")).status == "failed"
    log = (config.home() / "logs" / "extract.log").read_text(encoding="utf-8")
    assert "Traceback" not in log and len(log.splitlines()) == 2


def test_past_the_cap_a_long_session_falls_back_to_head_and_tail(
        key: None, tmp_path: Path, project_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTX_LLM_COST_CAP_USD", "0.05")
    writer = TranscriptWriter(tmp_path / "long.jsonl", cwd=str(project_dir))
    conversation(writer, 400)
    writer.save()
    api = FakeAPI(lambda body: api_message(body, DECIDED))
    outcome = run(Request(writer.session_id, str(writer.path)), http_client=api.client())
    assert outcome.status == "extracted", outcome.reason
    assert outcome.tier is not None and outcome.tier.tier == 2 and len(api.bodies) == 1
    sent = FakeAPI.user_text(api.bodies[0])
    assert "Turn 0:" in sent and "Turn 399:" in sent and "omitted" in sent
    assert "cost cap: map-reduce needs" in (config.home() / "logs" / "extract.log").read_text(
        encoding="utf-8")


def test_a_mark_left_just_before_the_lock_is_released_is_not_left_for_later(
        key: None, writer: TranscriptWriter, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Stop that finds the lock held right after the run's last dirty check still gets its
    turn extracted by this run, once the lock is released."""

    real_take = sessions.take_dirty
    landed: list[int] = []
    api = FakeAPI(lambda body: api_message(body, DECIDED))

    def take_dirty(db: Store, session_id: str) -> bool:
        found = real_take(db, session_id)
        if not found and api.bodies and not landed and \
                background.is_locked(f"extract-{session_id}"):
            # the last check inside the lock said "clean"; now a new turn and its Stop land
            landed.append(len(writer.lines))
            writer.user("Also: invoice numbers restart every January.")
            writer.append_saved(landed[0])
            sessions.mark_dirty(db, session_id)
        return found

    monkeypatch.setattr(sessions, "take_dirty", take_dirty)  # the module extraction calls
    outcome = run(Request(writer.session_id, str(writer.path)), http_client=api.client())
    assert outcome.status == "extracted"
    assert len(api.bodies) == 2
    assert "restart every January" in FakeAPI.user_text(api.bodies[1])
    with _open() as db:
        assert not sessions.is_dirty(db, writer.session_id)
        assert sessions.extract_offset(db, writer.session_id) == writer.path.stat().st_size
