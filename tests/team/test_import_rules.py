"""What an import takes from a teammate's file, and what it never takes."""

from __future__ import annotations

import json
from pathlib import Path

from agentctx import team
from agentctx.store import Store, records, teamstate
from agentctx.store import projects as proj
from agentctx.store.models import Draft, Project
from agentctx.team.teamfile import Block, PastVersion, render

OTHER = "01ARZ3NDEKTSV4RRFFQ69G5FAA"
PAST = "01ARZ3NDEKTSV4RRFFQ69G5FB0"


def _shop(db: Store, repo: Path) -> Project:
    return proj.resolve(db, str(repo)).project


def _good() -> Block:
    return Block(OTHER, "convention", "Run pytest -q", "From the root.",
                 "2026-01-02T00:00:00.000Z")


def test_a_block_with_the_id_of_a_personal_record_never_overwrites_it(
        store: Store, repo: Path) -> None:
    shop = _shop(store, repo)
    mine = records.add(store, Draft(type="preference", title="I like short answers",
                                    body="mine"), project_id=shop.id)
    handover = records.add(store, Draft(type="handover", title="Working on auth", body="wip",
                                        key="handover:a"), project_id=shop.id)
    forged = [Block(mine.id, "decision", "Use tabs", "Hostile text.", mine.valid_from,
                    revision=50),
              Block(handover.id, "convention", "Push to main", "", handover.valid_from,
                    revision=9),
              Block("01ARZ3NDEKTSV4RRFFQ69G5FCC", "decision", "Chain", "", mine.valid_from,
                    history=(PastVersion(mine.id, "x", mine.valid_from,
                                         "2026-01-01T00:00:00.000Z"),)),
              _good()]
    report = team.import_text(store, shop, render("shop", forged), "context.md")
    assert {c.id for c in report.conflicts} == {mine.id, handover.id}
    assert all("personal" in c.reason for c in report.conflicts)
    kept = records.get(store, mine.id)
    assert (kept.type, kept.title, kept.body, kept.pinned, kept.current) == (
        "preference", "I like short answers", "mine", False, True)
    assert records.get(store, handover.id).title == "Working on auth"
    assert OTHER in report.added  # the honest block still came in


def test_a_block_of_another_type_does_not_change_a_shared_record(store: Store,
                                                                 repo: Path) -> None:
    shop = _shop(store, repo)
    decision = records.add(store, Draft(type="decision", title="Use gRPC"), project_id=shop.id)
    report = team.import_text(store, shop, render("shop", [
        Block(decision.id, "discovery", "Use REST", "", decision.valid_from, revision=5)]), "f")
    assert report.conflicts and records.get(store, decision.id).title == "Use gRPC"


def _claiming(line: str) -> str:
    """A block's opening line claiming an explicit, pinned record (as format 1 could)."""
    if not line.startswith("<!-- agentctx:record "):
        return line
    fields = json.loads(line[len("<!-- agentctx:record "):-len(" -->")])
    fields.update(confidence="explicit", pinned=True)
    return f"<!-- agentctx:record {json.dumps(fields, sort_keys=True)} -->"


def test_imported_records_arrive_unpinned_and_inferred(store: Store, repo: Path,
                                                       tmp_path: Path) -> None:
    shop = _shop(store, repo)
    text = "\n".join(_claiming(line) for line in render("shop", [_good()]).split("\n"))
    report = team.import_text(store, shop, text, "context.md")
    copy = records.get(store, report.added[0])
    assert not copy.pinned and copy.confidence == "inferred"


def test_a_future_valid_from_is_refused_and_names_its_line(store: Store, repo: Path) -> None:
    shop = _shop(store, repo)
    future = Block("01ARZ3NDEKTSV4RRFFQ69G5FAV", "decision", "Always first", "",
                   "2999-01-01T00:00:00.000Z")
    text = render("shop", [future, _good()])
    report = team.import_text(store, shop, text, "context.md")
    (error,) = report.errors
    line = next(i for i, t in enumerate(text.splitlines(), 1) if future.id in t)
    assert error.startswith(f"line {line}:") and "in the future" in error
    assert report.added == (OTHER,)


def test_a_block_also_named_in_another_history_does_not_stop_the_import(
        store: Store, repo: Path) -> None:
    """A union merge of "superseded by Y" and "edited" leaves X both as a block and in Y's
    history; neither aborts the import."""
    shop = _shop(store, repo)
    old = Block(PAST, "decision", "Deploy on Fridays", "", "2025-01-01T00:00:00.000Z")
    new = Block("01ARZ3NDEKTSV4RRFFQ69G5FCC", "decision", "Never on Fridays", "",
                "2026-01-01T00:00:00.000Z",
                history=(PastVersion(PAST, "Deploy on Fridays", "2025-01-01T00:00:00.000Z",
                                     "2026-01-01T00:00:00.000Z", "an outage"),))
    report = team.import_text(store, shop, render("shop", [old, new, _good()]), "context.md")
    assert report.errors == () and OTHER in report.added
    assert records.get(store, PAST).superseded_by == new.id


def test_import_keeps_trailing_whitespace_so_nothing_conflicts_later(
        store: Store, repo: Path) -> None:
    shop = _shop(store, repo)
    teamstate.enable(store, shop.id)
    spaced = Block(OTHER, "convention", "Indent with tabs", "Tabs.  \n\n",
                   "2026-01-02T00:00:00.000Z")
    text = render("shop", [spaced])
    (repo / team.TEAM_FILE).parent.mkdir()
    (repo / team.TEAM_FILE).write_bytes(text.encode())
    first = team.import_file(store, shop, repo / team.TEAM_FILE)
    assert first.added == (OTHER,) and records.get(store, OTHER).body == "Tabs.  \n\n"
    assert team.status(store, shop, repo).conflicts == ()
    again = team.sync(store, shop, repo)
    assert again.imported is not None and again.imported.conflicts == ()
    assert (repo / team.TEAM_FILE).read_text() == text  # nothing to rewrite


def test_sync_imports_the_good_blocks_and_leaves_a_file_with_a_bad_one(
        store: Store, repo: Path) -> None:
    shop = _shop(store, repo)
    teamstate.enable(store, shop.id)
    bad = Block("01ARZ3NDEKTSV4RRFFQ69G5FAV", "decision", "Huge", "", "2026-01-02T00:00:00.000Z",
                revision=10**26)
    text = render("shop", [bad, _good()])
    (repo / team.TEAM_FILE).parent.mkdir()
    (repo / team.TEAM_FILE).write_text(text)
    result = team.sync(store, shop, repo)
    assert result.problem and "malformed" in result.problem and "line" in result.problem
    assert not result.written and (repo / team.TEAM_FILE).read_text() == text
    assert records.get(store, OTHER).title == "Run pytest -q"
    state = team.status(store, shop, repo)
    assert state.state == "malformed" and state.errors and "larger than" in state.errors[0]


def test_one_past_version_in_two_histories_does_not_stop_the_import(store: Store,
                                                                     repo: Path) -> None:
    shop = _shop(store, repo)
    past = PastVersion(PAST, "Deploy on Fridays", "2025-01-01T00:00:00.000Z",
                       "2026-01-01T00:00:00.000Z")
    first = Block("01ARZ3NDEKTSV4RRFFQ69G5FCC", "decision", "Never on Fridays", "",
                  "2026-01-01T00:00:00.000Z", history=(past,))
    second = Block("01ARZ3NDEKTSV4RRFFQ69G5FDD", "decision", "Only on Mondays", "",
                   "2026-01-01T00:00:00.000Z", history=(past,))
    report = team.import_text(store, shop, render("shop", [first, second, _good()]), "f")
    assert set(report.added) == {first.id, second.id, OTHER} and report.errors == ()
    assert records.get(store, PAST).superseded_by in (first.id, second.id)
