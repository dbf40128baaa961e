"""The store and the team file in step, on real SQLite files and a real git repository."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from agentctx import team
from agentctx.store import Store, records, teamstate
from agentctx.store import projects as proj
from agentctx.store.models import Draft, Project
from agentctx.store.selection import Selection
from agentctx.team.teamfile import parse, render
from tests.support.gitrepo import git

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


@pytest.fixture
def alice(store: Store) -> Store:
    """The first teammate's store: the open store of the isolated home."""
    return store


@pytest.fixture
def bob(tmp_path: Path) -> Iterator[Store]:
    db = Store.open(tmp_path / "bob" / "agentctx.db")
    try:
        yield db
    finally:
        db.close()


def project_of(db: Store, folder: Path) -> Project:
    return proj.resolve(db, str(folder)).project


def add(db: Store, project: Project, type_: str, title: str, body: str = "", **kw: object) -> str:
    draft = Draft(type=type_, title=title, body=body, confidence="explicit", **kw)  # type: ignore[arg-type]
    return records.add(db, draft, project_id=project.id).id


def _retitled(text: str, start: str, title: str) -> str:
    """The team file ``text`` with the block whose title starts with ``start`` retitled (a
    well-formed file a teammate's agentctx could have written)."""
    blocks = [replace(b, title=title) if b.title.startswith(start) else b
              for b in parse(text).blocks]
    assert any(b.title == title for b in blocks)
    return render("shop", blocks)


def team_file(folder: Path) -> Path:
    return folder / ".agentctx" / "context.md"


def test_the_file_shares_decisions_conventions_and_discoveries_only(alice: Store,
                                                                    repo: Path) -> None:
    shop = project_of(alice, repo)
    old = add(alice, shop, "decision", "REST between services")
    new = records.supersede(alice, old, Draft(type="", title="gRPC between services",
                                              body="Latency."), "REST was too chatty",
                            actor="cli").id
    add(alice, shop, "convention", "Tests mirror the package")
    add(alice, shop, "discovery", "The cache warms at 9am")
    add(alice, shop, "bugfix", "Fixed the retry loop")
    add(alice, shop, "handover", "Working state: half done", key="handover:x")
    records.add(alice, Draft(type="preference", title="Prefers tabs", scope="global"),
                project_id="global")
    result = team.turn_on(alice, shop, repo)
    assert result.written and result.path == str(team_file(repo))
    text = team_file(repo).read_text(encoding="utf-8")
    for title in ("gRPC between services", "Tests mirror the package", "The cache warms"):
        assert f"### {title}" in text
    for title in ("retry loop", "half done", "Prefers tabs"):
        assert title not in text
    assert f"- `{old}` " in text and "because: REST was too chatty" in text
    assert f"<!-- agentctx:end {new} -->" in text and f"<!-- agentctx:end {old} -->" not in text
    assert ".agentctx/context.md merge=union" in (repo / ".gitattributes").read_text()


def test_store_to_file_to_a_new_store_renders_the_same_file(alice: Store, bob: Store,
                                                           repo: Path) -> None:
    shop = project_of(alice, repo)
    first = add(alice, shop, "decision", "Use Postgres", "Because of JSONB.\n\nHistory:\nx",
                key="db")
    records.supersede(alice, first, Draft(type="", title="Use Postgres 16", body="Upgrade."),
                      "16 is supported", actor="cli")
    pinned = add(alice, shop, "convention", "Tabs, not spaces", pinned=True)
    records.update(alice, pinned, body="Tabs everywhere.\r\nReally.", actor="cli")
    team.turn_on(alice, shop, repo)
    text = team_file(repo).read_bytes().decode("utf-8")  # read_text would drop the \r

    bob_shop = project_of(bob, repo)
    assert bob_shop.id == shop.id
    report = team.import_file(bob, bob_shop, team_file(repo))
    assert len(report.added) == 2 and report.conflicts == ()
    assert team.reconcile.render_project(bob, bob_shop) == text
    copy = records.get(bob, pinned)
    assert copy.source == "import" and copy.body.endswith("\r\nReally.")
    # A teammate's pin and confidence are theirs: the copy arrives unpinned and inferred.
    assert not copy.pinned and copy.confidence == "inferred"
    assert teamstate.revisions(bob, [pinned]) == {pinned: 2}
    assert records.get(bob, first).superseded_by is not None  # the history came along

    again = team.import_file(bob, bob_shop, team_file(repo))
    assert again.changes == 0 and again.unchanged == 2


def test_a_supersession_in_the_file_is_made_locally(alice: Store, bob: Store,
                                                    repo: Path) -> None:
    shop = project_of(alice, repo)
    old = add(alice, shop, "decision", "Deploy on Fridays")
    team.turn_on(alice, shop, repo)
    team.import_file(bob, project_of(bob, repo), team_file(repo))
    new = records.supersede(alice, old, Draft(type="", title="Never deploy on Fridays"),
                            "an outage", actor="cli").id
    team.sync(alice, shop, repo)
    report = team.import_file(bob, project_of(bob, repo), team_file(repo))
    assert report.added == (new,) and report.superseded == (old,)
    assert records.get(bob, old).superseded_by == new
    assert records.supersession_note(bob, new, old) == "an outage"


def test_revisions_decide_and_a_higher_local_revision_is_a_conflict(alice: Store, bob: Store,
                                                                   repo: Path) -> None:
    shop = project_of(alice, repo)
    rid = add(alice, shop, "convention", "Run pytest -q")
    team.turn_on(alice, shop, repo)
    bob_shop = project_of(bob, repo)
    team.import_file(bob, bob_shop, team_file(repo))

    records.update(alice, rid, body="From the root.", actor="cli")  # rev 2 in the file
    team.sync(alice, shop, repo)
    taken = team.import_file(bob, bob_shop, team_file(repo))
    assert taken.updated == (rid,) and records.get(bob, rid).body == "From the root."
    assert teamstate.revisions(bob, [rid]) == {rid: 2}

    records.update(bob, rid, body="Bob's words.", actor="cli")
    records.update(bob, rid, body="Bob's words, again.", actor="cli")  # bob at rev 4
    records.update(alice, rid, body="Alice's words.", actor="cli")  # alice at rev 3
    team.sync(alice, shop, repo)
    kept = team.import_file(bob, bob_shop, team_file(repo))
    assert kept.updated == () and [c.id for c in kept.conflicts] == [rid]
    assert kept.conflicts[0].local_revision == 4 and kept.conflicts[0].file_revision == 3
    assert records.get(bob, rid).body == "Bob's words, again."

    records.update(alice, rid, body="Alice again.",
                   actor="cli")  # alice at rev 4 too: same rev, other text
    team.sync(alice, shop, repo)
    same = team.import_file(bob, bob_shop, team_file(repo))
    assert "same revision" in same.conflicts[0].reason
    assert records.get(bob, rid).body == "Bob's words, again."


def test_nothing_absent_from_the_file_is_deleted(alice: Store, bob: Store, repo: Path) -> None:
    shop = project_of(alice, repo)
    add(alice, shop, "decision", "Shared one")
    team.turn_on(alice, shop, repo)
    bob_shop = project_of(bob, repo)
    mine = add(bob, bob_shop, "decision", "Bob's own decision")
    team.import_file(bob, bob_shop, team_file(repo))
    assert records.get(bob, mine).current


def test_a_malformed_or_invalid_block_is_left_out_and_the_others_are_read(
        alice: Store, bob: Store, repo: Path) -> None:
    shop = project_of(alice, repo)
    add(alice, shop, "decision", "First")
    add(alice, shop, "decision", "Second")
    team.turn_on(alice, shop, repo)
    text = team_file(repo).read_text(encoding="utf-8")
    bob_shop = project_of(bob, repo)
    broken = text.replace("### Second", "Second")
    report = team.import_text(bob, bob_shop, broken, "context.md")
    assert report.errors == (f"line {broken.splitlines().index('Second') + 1}: expected the "
                             "record's title ('### <title>')",)
    assert [records.get(bob, r).title for r in report.added] == ["First"]
    too_long = _retitled(text, "Second", "x" * 400)
    report = team.import_text(bob, bob_shop, too_long, "context.md")
    assert len(report.errors) == 1 and "title is 400 characters" in report.errors[0]
    assert report.errors[0].startswith(f"line {too_long.splitlines().index('### ' + 'x' * 400)}:")
    assert records.count_records(bob, Selection(project_id=bob_shop.id)) == 1


def test_forget_is_local_and_an_import_never_brings_a_forgotten_record_back(
        alice: Store, repo: Path) -> None:
    shop = project_of(alice, repo)
    rid = add(alice, shop, "decision", "A mistake")
    team.turn_on(alice, shop, repo)
    records.forget(alice, rid, actor="cli")
    result = team.sync(alice, shop, repo)
    assert result.imported is not None and result.imported.skipped_forgotten == (rid,)
    assert result.written and rid not in team_file(repo).read_text(encoding="utf-8")


def test_no_secret_reaches_the_file_and_an_imported_secret_is_redacted(
        alice: Store, bob: Store, repo: Path) -> None:
    shop = project_of(alice, repo)
    add(alice, shop, "decision", f"Token {SECRET}", f"export GITHUB_TOKEN={SECRET}")
    team.turn_on(alice, shop, repo)
    assert SECRET not in team_file(repo).read_text(encoding="utf-8")
    smuggled = _retitled(team_file(repo).read_text(encoding="utf-8"), "Token [REDACTED",
                         f"{SECRET} Token")
    bob_shop = project_of(bob, repo)
    report = team.import_text(bob, bob_shop, smuggled, "context.md")
    assert SECRET not in records.get(bob, report.added[0]).title


def test_edits_bump_the_revision_only_when_the_file_would_change(alice: Store,
                                                                repo: Path) -> None:
    shop = project_of(alice, repo)
    rid = add(alice, shop, "decision", "Version one")
    records.update(alice, rid, reinforce_count=3, actor="cli")
    assert teamstate.revisions(alice, [rid]) == {rid: 1}
    records.update(alice, rid, title="Version two", actor="cli")
    records.update(alice, rid, confidence="inferred",
                   actor="cli")  # each teammate's own: not in the file
    records.update(alice, rid, pinned=True, actor="cli")
    assert teamstate.revisions(alice, [rid]) == {rid: 2}


def test_the_file_is_rewritten_only_when_its_content_changes(alice: Store, repo: Path) -> None:
    shop = project_of(alice, repo)
    add(alice, shop, "decision", "Keep it")
    team.turn_on(alice, shop, repo)
    path = team_file(repo)
    stamp = path.stat().st_mtime_ns
    add(alice, shop, "handover", "Working state", key="handover:a")
    assert team.sync(alice, shop, repo).written is False
    assert path.stat().st_mtime_ns == stamp
    add(alice, shop, "discovery", "New finding")
    assert team.sync(alice, shop, repo).written is True


def test_status_says_off_missing_in_step_behind_to_import_and_malformed(
        alice: Store, bob: Store, repo: Path) -> None:
    shop = project_of(alice, repo)
    assert team.status(alice, shop, repo).state == "off"
    teamstate.enable(alice, shop.id)
    assert team.status(alice, shop, repo).state == "missing"
    add(alice, shop, "decision", "One")
    team.sync(alice, shop, repo)
    state = team.status(alice, shop, repo)
    assert state.in_step and state.state == "in step"
    add(alice, shop, "decision", "Two")
    assert team.status(alice, shop, repo).state == "behind"
    bob_shop = project_of(bob, repo)
    teamstate.enable(bob, bob_shop.id)
    waiting = team.status(bob, bob_shop, repo)
    assert waiting.state == "to import" and waiting.to_import == 1
    team_file(repo).write_text("<!-- agentctx:end X -->\n", encoding="utf-8")
    broken = team.status(alice, shop, repo)
    assert broken.state == "malformed" and "line 1" in broken.detail
    result = team.sync(alice, shop, repo)  # a malformed file is never overwritten
    assert result.problem and not result.written
    assert team_file(repo).read_text(encoding="utf-8") == "<!-- agentctx:end X -->\n"


def test_a_write_keeps_the_file_of_its_own_worktree(alice: Store, repo: Path,
                                                    tmp_path: Path) -> None:
    other = tmp_path / "shop-feature"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(other))
    shop = project_of(alice, repo)
    assert project_of(alice, other).id == shop.id
    team.turn_on(alice, shop, repo)
    add(alice, shop, "decision", "Written from the feature worktree")
    result = team.after_write(alice, shop, other)
    assert result is not None and result.path == str(team_file(other))
    assert "feature worktree" in team_file(other).read_text(encoding="utf-8")
    assert "feature worktree" not in team_file(repo).read_text(encoding="utf-8")
    assert team.status(alice, shop, repo).state == "behind"
    # A folder of no repository: the project's root is the one kept.
    assert team.file_for(shop, tmp_path) == team_file(repo)


def test_two_supersessions_since_the_last_import_close_the_local_chain(
        alice: Store, bob: Store, repo: Path) -> None:
    shop = project_of(alice, repo)
    first = add(alice, shop, "decision", "Python 3.10")
    team.turn_on(alice, shop, repo)
    bob_shop = project_of(bob, repo)
    team.import_file(bob, bob_shop, team_file(repo))
    second = records.supersede(alice, first, Draft(type="", title="Python 3.11"), "EOL",
                               actor="cli").id
    third = records.supersede(alice, second, Draft(type="", title="Python 3.12"), "speed",
                              actor="cli").id
    team.sync(alice, shop, repo)
    report = team.import_file(bob, bob_shop, team_file(repo))
    assert report.added == (third,) and report.superseded == (first,)
    assert records.get(bob, first).superseded_by == third
    assert records.get(bob, second).superseded_by == third and not records.get(bob, second).current
    listed = records.list_records(bob, Selection(project_id=bob_shop.id))
    assert [r.title for r in listed] == ["Python 3.12"]
